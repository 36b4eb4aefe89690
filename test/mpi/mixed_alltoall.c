/*
 * All-to-all traffic with random sizes (up to 200 KB, so both eager and
 * rendezvous paths of both channels), checked byte by byte: MPI_Alltoallv,
 * then every pair at once with MPI_Isend/MPI_Irecv/MPI_Waitall.  argv[1], when
 * given, is the number of rounds (default ROUNDS).
 */
#include "mmc_test.h"

#define ROUNDS 12
#define MAXSZ 200000

/* the same on every rank, so receivers know what senders chose */
static size_t msg_size(int round, int src, int dst)
{
    unsigned x = (unsigned) (round * 7919 + src * 104729 + dst * 1299709 + 12345);
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    switch (x % 4) {
        case 0:
            return x % 64;
        case 1:
            return x % 8192;
        default:
            return x % MAXSZ;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    unsigned char *sbuf = malloc((size_t) size * MAXSZ), *rbuf = malloc((size_t) size * MAXSZ);
    int *scount = malloc(sizeof(int) * size), *rcount = malloc(sizeof(int) * size);
    int *sdisp = malloc(sizeof(int) * size), *rdisp = malloc(sizeof(int) * size);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * size);
    int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS;

    for (int round = 0; round < rounds; round++) {
        for (int p = 0; p < size; p++) {
            scount[p] = (int) msg_size(round, rank, p);
            rcount[p] = (int) msg_size(round, p, rank);
            sdisp[p] = rdisp[p] = p * MAXSZ;
            mmc_fill(sbuf + sdisp[p], scount[p], round * size + p, rank);
        }
        memset(rbuf, 0xee, (size_t) size * MAXSZ);
        MPI_Alltoallv(sbuf, scount, sdisp, MPI_BYTE, rbuf, rcount, rdisp, MPI_BYTE,
                      MPI_COMM_WORLD);
        for (int p = 0; p < size; p++)
            mmc_check(rbuf + rdisp[p], rcount[p], round * size + rank, p, "alltoallv");

        memset(rbuf, 0xee, (size_t) size * MAXSZ);
        for (int p = 0; p < size; p++) {
            MPI_Irecv(rbuf + rdisp[p], rcount[p], MPI_BYTE, p, round, MPI_COMM_WORLD, &reqs[p]);
            MPI_Isend(sbuf + sdisp[p], scount[p], MPI_BYTE, p, round, MPI_COMM_WORLD,
                      &reqs[size + p]);
        }
        MPI_Waitall(2 * size, reqs, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; p++)
            mmc_check(rbuf + rdisp[p], rcount[p], round * size + rank, p, "isend/irecv");
    }
    free(sbuf);
    free(rbuf);
    free(scount);
    free(rcount);
    free(sdisp);
    free(rdisp);
    free(reqs);
    return mmc_finish();
}
