/*
 * 8-byte ping-pong latency from rank 0 to its intra-node partner and to a
 * partner on another node, in one job with both kinds of traffic: blocks of
 * intra-node and inter-node ping-pongs alternate, so the polling arbiter
 * sees mixed traffic.  Latency = round trip / 2 (NetPIPE), the median over
 * blocks of each block's mean.  Only the two ranks of the current block
 * poll; the other waits idle for its next block.
 *
 *   latency [blocks [iters]]      prints: intra_us=X inter_us=Y
 */
#include "bench_common.h"

#define MSG 8
#define WARMUP 20

static double block(int rank, int peer, int iters, int first_tag)
{
    char buf[MSG] = { 0 };
    double t0 = 0;
    for (int i = 0; i < WARMUP + iters; i++) {
        if (i == WARMUP)
            t0 = mmc_now_us();
        if (rank == 0) {
            MPI_Send(buf, MSG, MPI_BYTE, peer, first_tag, MPI_COMM_WORLD);
            MPI_Recv(buf, MSG, MPI_BYTE, peer, first_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Request req;
            MPI_Irecv(buf, MSG, MPI_BYTE, 0, first_tag, MPI_COMM_WORLD, &req);
            if (i == 0)
                mmc_idle_wait(&req);  /* our block starts when rank 0 says so */
            else
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Send(buf, MSG, MPI_BYTE, 0, first_tag, MPI_COMM_WORLD);
        }
    }
    return (mmc_now_us() - t0) / iters / 2;
}

int main(int argc, char **argv)
{
    int rank, intra, inter;
    int blocks = argc > 1 ? atoi(argv[1]) : 20;
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    bench_init(&argc, &argv, "latency", &rank, &intra, &inter);
    double *lat[2] = { malloc(sizeof(double) * blocks), malloc(sizeof(double) * blocks) };
    for (int b = 0; b < blocks; b++) {
        for (int k = 0; k < 2; k++) {
            int peer = k == 0 ? intra : inter;
            if (rank == 0 || rank == peer)
                lat[k][b] = block(rank, rank == 0 ? peer : 0, iters, b * 2 + k);
        }
    }
    if (rank == 0)
        printf("intra_us=%.3f inter_us=%.3f\n", bench_median(lat[0], blocks),
               bench_median(lat[1], blocks));
    mmc_barrier(MPI_COMM_WORLD, rank != 0);
    free(lat[0]);
    free(lat[1]);
    MPI_Finalize();
    return 0;
}
