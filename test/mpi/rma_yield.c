/*
 * The yield in MPICH's RMA synchronization loops (MPIDIU_PROGRESS_WHILE,
 * which polls both channels outside MPIDI_PROGRESS): every rank runs rounds
 * of a passive-target epoch with no other blocking call between them,
 * MPI_Win_lock_all, MPI_Fetch_and_op adding 1 to the next rank's counter,
 * MPI_Win_unlock_all, so every wait of the loop is one of RMA's.  Each fetch
 * must return the round; each counter must end at the number of rounds.
 *   arg on:  the ranks together yielded in the loop (ranks outnumber CPUs;
 *            before 2026-12-06 those loops never yielded, and each
 *            lock_all of 3 ranks on 2 CPUs waited a time slice)
 *   arg off: no rank yielded (auto with a CPU for each rank)
 * The second argument is the number of rounds.  A third, barrier, ends each
 * round with MPI_Barrier: a rank then spins on the barrier's shared-memory
 * flag while its predecessor's lock and fetch-and-op wait for its progress,
 * and the spin makes progress passes (MPIDI_POLL_FLAG_PASS_YIELDS; before
 * 2026-12-06 only MPICH's pass every few thousand loads, 4 ranks on 2 CPUs
 * 438 us an epoch against 66 since): with on, the ranks together made such
 * passes; with off, none.
 */
#include "mmc_test.h"

int main(int argc, char **argv)
{
    int rank, size;
    long long *mine, one = 1, prev;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int on = argc > 1 && strcmp(argv[1], "on") == 0;
    int n = argc > 2 ? atoi(argv[2]) : 500, next = (rank + 1) % size;
    int barrier = argc > 3 && strcmp(argv[3], "barrier") == 0;

    MPI_Win_allocate(sizeof(*mine), sizeof(*mine), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *mine = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    long long y0 = mmc_pvar_counter("ch4_poll_yields");
    long long p0 = mmc_pvar_counter("ch4_poll_flag_passes");
    if (y0 < 0 || p0 < 0)
        MMC_ERR("rank %d: no ch4_poll_yields or ch4_poll_flag_passes pvar\n", rank);
    for (int r = 0; r < n; r++) {
        MPI_Win_lock_all(0, win);
        MPI_Fetch_and_op(&one, &prev, MPI_LONG_LONG, next, 0, MPI_SUM, win);
        MPI_Win_unlock_all(win);
        /* only this rank's predecessor adds to `next`'s counter, once a round */
        if (prev != r) {
            MMC_ERR("rank %d round %d: fetch-and-op returned %lld\n", rank, r, prev);
            break;
        }
        if (barrier)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    long long yields = mmc_pvar_counter("ch4_poll_yields") - y0;
    long long passes = mmc_pvar_counter("ch4_poll_flag_passes") - p0;

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    if (*mine != n)
        MMC_ERR("rank %d: its counter is %lld after %d rounds\n", rank, *mine, n);
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);

    char what[80];
    snprintf(what, sizeof(what), "%d ranks, %d passive-target epochs%s", size, n,
             barrier ? " and barriers" : "");
    mmc_count_report(yields, on, what, "yields", "RMA synchronization");
    if (barrier)
        mmc_count_report(passes, on, what, "progress passes", "the barrier's flag spins");
    return mmc_finish();
}
