/*
 * The arbiter's yield (MPIR_CVAR_CH4_POLL_YIELD_AFTER): rank 0 waits for a
 * message from each other rank, sent after a pause, so its wait runs many
 * passes that find nothing; then every rank floods every other with
 * nonblocking messages.  Bytes are checked throughout.
 *   arg on:  rank 0 must have yielded while it waited for the late messages
 *   arg off: no rank may yield at all
 */
#include "mmc_test.h"

#define PAUSE_NS 50000000
#define SIZE 4096
#define ROUNDS 40

static void flood(int rank, int size)
{
    unsigned char *sbuf = malloc(SIZE), *rbuf = malloc((size_t) SIZE * size);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * size);
    for (int r = 0; r < ROUNDS; r++) {
        int n = 0;
        for (int p = 0; p < size; p++)
            if (p != rank)
                MPI_Irecv(rbuf + (size_t) p * SIZE, SIZE, MPI_BYTE, p, r, MPI_COMM_WORLD,
                          &reqs[n++]);
        mmc_fill(sbuf, SIZE, r, rank);
        for (int p = 0; p < size; p++)
            if (p != rank)
                MPI_Isend(sbuf, SIZE, MPI_BYTE, p, r, MPI_COMM_WORLD, &reqs[n++]);
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; p++)
            if (p != rank)
                mmc_check(rbuf + (size_t) p * SIZE, SIZE, r, p, "flood");
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
}

int main(int argc, char **argv)
{
    int rank, size;
    unsigned char buf[SIZE];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int on = argc > 1 && strcmp(argv[1], "on") == 0;

    long long y0 = mmc_pvar_counter("ch4_poll_yields");
    if (y0 < 0)
        MMC_ERR("rank %d: no ch4_poll_yields performance variable\n", rank);
    if (rank == 0) {
        for (int src = 1; src < size; src++) {
            MPI_Recv(buf, SIZE, MPI_BYTE, src, size, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_check(buf, SIZE, size, src, "late message");
        }
    } else {
        struct timespec ts = { 0, PAUSE_NS };
        nanosleep(&ts, NULL);
        mmc_fill(buf, SIZE, size, rank);
        MPI_Send(buf, SIZE, MPI_BYTE, 0, size, MPI_COMM_WORLD);
    }
    long long y1 = mmc_pvar_counter("ch4_poll_yields");
    flood(rank, size);
    long long y2 = mmc_pvar_counter("ch4_poll_yields");

    if (rank == 0)
        printf("rank 0: %lld yields waiting for late messages, %lld in the flood\n", y1 - y0,
               y2 - y1);
    if (on && rank == 0 && y1 - y0 <= 0)
        MMC_ERR("rank 0 waited %d ms for each late message without yielding\n", PAUSE_NS / 1000000);
    if (!on && y2 != y0)
        MMC_ERR("rank %d yielded %lld times with yielding off\n", rank, y2 - y0);
    return mmc_finish();
}
