/*
 * The yield in MPICH's shared-memory collectives (MPIDI_POLL_FLAG_SPUN): all
 * ranks on one node run many small Allreduce, Bcast, Reduce (MPI_MINLOC on
 * MPI_DOUBLE_INT) and Barrier calls, on MPI_COMM_WORLD and on a split of it,
 * so that from the fifth call on they go through the release-gather flags.
 * Every result is checked.
 *   arg on:  the ranks together yielded in those spins (ranks outnumber CPUs)
 *   arg off: no rank yielded in them (auto with a CPU for each rank)
 * The second argument is the number of rounds.
 */
#include "mmc_test.h"

#define BCAST_SIZE 40

static void rounds(MPI_Comm comm, int n, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int r = 0; r < n; r++) {
        int root = r % size;
        long long in = (long long) rank * 7 + r, sum = -1;
        MPI_Allreduce(&in, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm);
        if (sum != 7LL * size * (size - 1) / 2 + (long long) size * r)
            MMC_ERR("%s round %d: rank %d: Allreduce sum %lld\n", what, r, rank, sum);

        unsigned char buf[BCAST_SIZE];
        if (rank == root)
            mmc_fill(buf, BCAST_SIZE, r, root);
        else
            memset(buf, 0, BCAST_SIZE);
        MPI_Bcast(buf, BCAST_SIZE, MPI_BYTE, root, comm);
        mmc_check(buf, BCAST_SIZE, r, root, what);

        /* the least value is on the rank after the root */
        struct { double d; int i; } loc = { (rank - root - 1 + size) % size + 0.5, rank }, min;
        min.d = -1;
        min.i = -1;
        MPI_Reduce(&loc, &min, 1, MPI_DOUBLE_INT, MPI_MINLOC, root, comm);
        if (rank == root && (min.d != 0.5 || min.i != (root + 1) % size))
            MMC_ERR("%s round %d: MINLOC at root %d gave (%g, %d)\n", what, r, root, min.d,
                    min.i);

        MPI_Barrier(comm);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm half;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int on = argc > 1 && strcmp(argv[1], "on") == 0;
    int n = argc > 2 ? atoi(argv[2]) : 500;

    long long y0 = mmc_pvar_counter("ch4_poll_flag_yields");
    if (y0 < 0)
        MMC_ERR("rank %d: no ch4_poll_flag_yields performance variable\n", rank);
    rounds(MPI_COMM_WORLD, n, "world");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    rounds(half, n, "split");
    MPI_Comm_free(&half);
    char what[80];
    snprintf(what, sizeof(what), "%d ranks, %d rounds on world and a split", size, n);
    mmc_count_report(mmc_pvar_counter("ch4_poll_flag_yields") - y0, on, what, "yields",
                     "collective spins");
    return mmc_finish();
}
