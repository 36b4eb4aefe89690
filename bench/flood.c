/*
 * Time to solution of all-to-all traffic, the kind that floods a node with
 * more ranks than cores (MPICH's pt2pt/sendflood): in each of ROUNDS rounds
 * every rank posts a receive from every other rank, sends SIZE bytes to each
 * (Isend), and waits for all of it.  Plain MPI, no project headers, so stock
 * MPICH and Open MPI build it as it is:
 *
 *   flood SIZE ROUNDS
 *
 * Rank 0 prints "np=N size=S rounds=R time_s=T check=ok"; every received
 * message of the first and the last round is checked byte by byte (a pattern
 * of sender, receiver and round), and a wrong byte aborts the job.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(int src, int dst, int round, size_t i)
{
    return (unsigned char) (i * 7 + (size_t) src * 31 + (size_t) dst * 13 + (size_t) round * 5);
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: flood SIZE ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t size = strtoul(argv[1], NULL, 0);
    int rounds = atoi(argv[2]);
    unsigned char *sbuf = malloc(size * np), *rbuf = malloc(size * np);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * np);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        int check = r == 0 || r == rounds - 1, n = 0;
        for (int p = 0; p < np; p++)
            if (p != rank)
                MPI_Irecv(rbuf + p * size, (int) size, MPI_BYTE, p, r, MPI_COMM_WORLD, &reqs[n++]);
        for (int p = 0; p < np; p++) {
            if (p == rank)
                continue;
            if (check)
                for (size_t i = 0; i < size; i++)
                    sbuf[p * size + i] = pattern(rank, p, r, i);
            MPI_Isend(sbuf + p * size, (int) size, MPI_BYTE, p, r, MPI_COMM_WORLD, &reqs[n++]);
        }
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        for (int p = 0; check && p < np; p++) {
            for (size_t i = 0; p != rank && i < size; i++) {
                if (rbuf[p * size + i] != pattern(p, rank, r, i)) {
                    fprintf(stderr, "rank %d: round %d from %d: byte %zu wrong\n", rank, r, p, i);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("np=%d size=%zu rounds=%d time_s=%.4f check=ok\n", np, size, rounds, t);
    free(sbuf);
    free(rbuf);
    free(reqs);
    MPI_Finalize();
    return 0;
}
