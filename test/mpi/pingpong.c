/*
 * Ping-pong with byte checks between rank 0 and its intra-node partner, and
 * between rank 0 and a rank on another node, across the eager/rendezvous
 * sizes.  Ranks not in the active pair wait without busy-polling.
 */
#include "mmc_test.h"

static const size_t sizes[] = { 0, 1, 8, 1000, 4096, 16384, 65536, 131072, 300000,
    1 << 20, 4 << 20
};

#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ITERS 3

static void pingpong(int rank, int a, int b, unsigned char *sbuf, unsigned char *rbuf,
                     const char *what)
{
    for (size_t s = 0; s < NSIZES; s++) {
        for (int it = 0; it < ITERS; it++) {
            int tag = (int) (s * ITERS + it);
            if (rank == a) {
                mmc_fill(sbuf, sizes[s], tag, a);
                MPI_Send(sbuf, (int) sizes[s], MPI_BYTE, b, tag, MPI_COMM_WORLD);
                memset(rbuf, 0xee, sizes[s]);
                MPI_Status st;
                MPI_Recv(rbuf, (int) sizes[s], MPI_BYTE, b, tag, MPI_COMM_WORLD, &st);
                int n;
                MPI_Get_count(&st, MPI_BYTE, &n);
                if ((size_t) n != sizes[s])
                    MMC_ERR("%s: pong of %zu bytes has count %d\n", what, sizes[s], n);
                mmc_check(rbuf, sizes[s], tag, b, what);
            } else if (rank == b) {
                memset(rbuf, 0xee, sizes[s]);
                MPI_Recv(rbuf, (int) sizes[s], MPI_BYTE, a, tag, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                mmc_check(rbuf, sizes[s], tag, a, what);
                mmc_fill(sbuf, sizes[s], tag, b);
                MPI_Send(sbuf, (int) sizes[s], MPI_BYTE, a, tag, MPI_COMM_WORLD);
            }
        }
    }
    mmc_barrier(MPI_COMM_WORLD, rank != a && rank != b);
}

int main(int argc, char **argv)
{
    int rank, size, intra, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mmc_partners(&intra, &inter);
    if (intra < 0 || inter < 0) {
        if (rank == 0)
            MMC_ERR("pingpong needs ranks on two nodes with two on rank 0's node\n");
    } else {
        unsigned char *sbuf = malloc(sizes[NSIZES - 1]);
        unsigned char *rbuf = malloc(sizes[NSIZES - 1]);
        pingpong(rank, 0, intra, sbuf, rbuf, "intra-node");
        pingpong(rank, 0, inter, sbuf, rbuf, "inter-node");
        free(sbuf);
        free(rbuf);
    }
    return mmc_finish();
}
