/*
 * Ping-pong latency from rank 0 to its intra-node partner and to a partner
 * on another node, in one job with both kinds of traffic: blocks of
 * intra-node and inter-node ping-pongs alternate, so the polling arbiter
 * sees mixed traffic; with several sizes, each block runs each size in turn
 * (a NetPIPE-style curve).  Latency = round trip / 2 (NetPIPE), the median
 * over blocks of each block's mean.  Only the two ranks of the current block
 * poll; the others wait idle (mmc_idle_wait) for their next block.
 *
 *   latency [blocks [iters [size,size,...]]]    (default 20 2000 8)
 *   prints: intra_SIZE_us=X inter_SIZE_us=Y ... for each size
 *
 * The first and the last round trip of each block check the reply's bytes.
 */
#include "bench_common.h"

#define WARMUP 20
#define MAXSIZES 16

static unsigned char pat(int i, size_t k)
{
    return (unsigned char) (i * 11 + k * 3);
}

static double block(int rank, int peer, size_t size, int iters, int first_tag)
{
    static unsigned char buf[1 << 20];
    double t0 = 0;
    for (int i = 0; i < WARMUP + iters; i++) {
        if (i == WARMUP)
            t0 = mmc_now_us();
        int check = i == 0 || i == WARMUP + iters - 1;
        if (rank == 0) {
            MPI_Send(buf, (int) size, MPI_BYTE, peer, first_tag, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, first_tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (size_t k = 0; check && k < size; k++) {
                if (buf[k] != pat(i, k)) {
                    fprintf(stderr, "latency: size %zu round trip %d: byte %zu wrong\n", size, i,
                            k);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        } else {
            MPI_Request req;
            MPI_Irecv(buf, (int) size, MPI_BYTE, 0, first_tag, MPI_COMM_WORLD, &req);
            if (i == 0)
                mmc_idle_wait(&req);  /* our block starts when rank 0 says so */
            else
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            for (size_t k = 0; check && k < size; k++)
                buf[k] = pat(i, k);
            MPI_Send(buf, (int) size, MPI_BYTE, 0, first_tag, MPI_COMM_WORLD);
        }
    }
    return (mmc_now_us() - t0) / iters / 2;
}

int main(int argc, char **argv)
{
    int rank, intra, inter, nsizes = 0;
    size_t sizes[MAXSIZES];
    int blocks = argc > 1 ? atoi(argv[1]) : 20;
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    for (char *s = argc > 3 ? argv[3] : "8"; *s && nsizes < MAXSIZES; s += *s == ',') {
        sizes[nsizes] = strtoul(s, &s, 0);
        if (sizes[nsizes] < 1 || sizes[nsizes] > 1 << 20) {
            fprintf(stderr, "latency: sizes from 1 byte to 1 MiB\n");
            return 2;
        }
        nsizes++;
    }
    bench_init(&argc, &argv, "latency", &rank, &intra, &inter);
    double *lat = malloc(sizeof(double) * blocks * nsizes * 2);
    for (int b = 0; b < blocks; b++) {
        for (int z = 0; z < nsizes; z++) {
            for (int k = 0; k < 2; k++) {
                int peer = k == 0 ? intra : inter;
                if (rank == 0 || rank == peer)
                    lat[(z * 2 + k) * blocks + b] =
                        block(rank, rank == 0 ? peer : 0, sizes[z], iters,
                              (b * nsizes + z) * 2 + k);
            }
        }
    }
    if (rank == 0) {
        for (int z = 0; z < nsizes; z++)
            printf("intra_%zu_us=%.3f inter_%zu_us=%.3f ", sizes[z],
                   bench_median(lat + z * 2 * blocks, blocks), sizes[z],
                   bench_median(lat + (z * 2 + 1) * blocks, blocks));
        printf("\n");
    }
    mmc_barrier(MPI_COMM_WORLD, rank != 0);
    free(lat);
    MPI_Finalize();
    return 0;
}
