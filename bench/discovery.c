/*
 * Message discovery time (after Liu et al.'s multi-channel polling study):
 * rank 0 (root) and a shared-memory peer on one node, a network peer on
 * another.  The peers take turns sending bursts of B 4-byte messages to the
 * root, which receives with MPI_ANY_SOURCE and acknowledges each one.  A
 * message carries its send time; discovery time is the time from the send
 * call to the root's receive returning (one clock for all simulated hosts).
 * A peer sends each message GAP us after the previous acknowledgement, so
 * the message lands while the root is in its polling loop rather than while it
 * is still posting the receive (which would measure posting, not discovery).
 * Only the root and the peer whose burst it is poll; the other waits idle.
 * Means are over all messages but the slowest 2% of each channel: on a
 * 2-core machine those are the ones that waited for the scheduler.
 *
 *   discovery B [rounds [GAP]]    prints: burst=B shm_us=X nm_us=Y mean_us=Z
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
    int rank, intra, inter;
    int burst = argc > 1 ? atoi(argv[1]) : 100;
    int rounds = argc > 2 ? atoi(argv[2]) : 40;
    double gap = argc > 3 ? atof(argv[3]) : 10;
    bench_init(&argc, &argv, "discovery", &rank, &intra, &inter);
    double *samples[2] = { malloc(sizeof(double) * rounds * burst),
        malloc(sizeof(double) * rounds * burst)
    };
    int count[2] = { 0, 0 };
    int ack = 0;
    for (int r = 0; r < rounds; r++) {
        int k = r % 2, peer = k == 0 ? intra : inter;
        if (rank == 0) {
            MPI_Send(&ack, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);        /* your turn */
            for (int i = 0; i < burst; i++) {
                double stamp;
                MPI_Status st;
                MPI_Recv(&stamp, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
                double t = mmc_now_us() - stamp;
                if (st.MPI_SOURCE != peer) {
                    fprintf(stderr, "discovery: message from %d during %d's burst\n",
                            st.MPI_SOURCE, peer);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                MPI_Send(&ack, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
                if (r >= 2)     /* the first two bursts warm both channels up */
                    samples[k][count[k]++] = t;
            }
        } else if (rank == peer) {
            MPI_Request req;
            MPI_Irecv(&ack, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req);
            mmc_idle_wait(&req);
            for (int i = 0; i < burst; i++) {
                double stamp = mmc_now_us() + gap;
                while (mmc_now_us() < stamp);
                MPI_Send(&stamp, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
                MPI_Recv(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
    if (rank == 0) {
        double sum[2];
        int kept[2];
        for (int k = 0; k < 2; k++) {
            kept[k] = count[k] - count[k] / 50;
            sum[k] = bench_sum_smallest(samples[k], count[k], kept[k]);
        }
        printf("burst=%d shm_us=%.3f nm_us=%.3f mean_us=%.3f\n", burst, sum[0] / kept[0],
               sum[1] / kept[1], (sum[0] + sum[1]) / (kept[0] + kept[1]));
    }
    free(samples[0]);
    free(samples[1]);
    mmc_barrier(MPI_COMM_WORLD, rank != 0);
    MPI_Finalize();
    return 0;
}
