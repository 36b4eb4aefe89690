/*
 * Connection set-up time of ch4:tcp per peer: rank 0 makes its first contact
 * with every other rank in turn (one rank per simulated host, so every peer
 * is across the network) and times that first round trip against the median
 * of 200 later ones.  Nothing communicates before (no collective): each first
 * round trip includes the connect and, since the trust handshake, the
 * challenge, the proof and the verdict.  Rank 0 prints, per peer,
 *   peer=P first_us=F steady_us=S setup_us=F-S check=ok
 * and the received byte is checked.
 */
#include "bench_common.h"

#define REPS 200

int main(int argc, char **argv)
{
    int rank, nprocs;
    char b = 0;
    double t[REPS];

    bench_start(&argc, &argv, &rank, &nprocs);
    for (int p = 1; p < nprocs; p++) {
        if (rank == 0) {
            double t0 = MPI_Wtime();
            b = (char) p;
            MPI_Send(&b, 1, MPI_CHAR, p, 0, MPI_COMM_WORLD);
            MPI_Recv(&b, 1, MPI_CHAR, p, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double first = (MPI_Wtime() - t0) * 1e6;
            int ok = b == (char) (p + 1);
            for (int r = 0; r < REPS; r++) {
                t0 = MPI_Wtime();
                MPI_Send(&b, 1, MPI_CHAR, p, 0, MPI_COMM_WORLD);
                MPI_Recv(&b, 1, MPI_CHAR, p, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t[r] = (MPI_Wtime() - t0) * 1e6;
            }
            double steady = bench_median(t, REPS);
            printf("peer=%d first_us=%.1f steady_us=%.1f setup_us=%.1f check=%s\n", p, first,
                   steady, first - steady, ok ? "ok" : "BAD_DATA");
            fflush(stdout);
        } else if (rank == p) {
            MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            b = (char) (b + 1);
            MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            for (int r = 0; r < REPS; r++) {
                MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
