/*
 * MPI_Win_test after the origin's MPI_Win_complete and a barrier.  Rank 0
 * is the origin, every other rank a target: each epoch the targets post,
 * MPI_Win_test must say false (rank 0 has not started), rank 0 puts a value
 * into each target's window and completes, and after a barrier each target's
 * MPI_Win_test must say true and the value be there.  Placed 1+2, rank 2's
 * barrier ends through shared memory while rank 0's COMPLETE comes through
 * the netmod: MPIDIG's test counted before it polled and the arbiter had
 * left the netmod unpolled, so the test said false and an application that
 * trusted it freed an open window (mpi4py's testStartCompletePostTest hung;
 * doc/mpich-fixes.md).  The origin turns round the ranks epoch by epoch, on
 * a window of MPI_COMM_WORLD and on one of a communicator with the ranks
 * reversed, so that every rank of every placement is origin and target.  A
 * false answer is then waited for, so that the epochs go on and the count
 * of false answers is reported.
 */
#include "mmc_test.h"

#define EPOCHS 300

/* EPOCHS epochs on a window of comm; returns the false answers after the barrier */
static int epochs(MPI_Comm comm, const char *name)
{
    int rank, size, late = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *cell;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &cell, &win);
    *cell = -1;
    MPI_Group all;
    MPI_Comm_group(comm, &all);
    MPI_Barrier(comm);

    for (int e = 0; e < EPOCHS; e++) {
        int o = e % size, flag;
        MPI_Group origin, targets;
        MPI_Group_incl(all, 1, &o, &origin);
        MPI_Group_excl(all, 1, &o, &targets);
        if (rank == o) {
            MPI_Barrier(comm);
            MPI_Win_start(targets, 0, win);
            for (int t = 0; t < size; t++) {
                int v = e * 1000 + t;
                if (t != o)
                    MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
            }
            MPI_Win_complete(win);
            MPI_Barrier(comm);
        } else {
            MPI_Win_post(origin, 0, win);
            MPI_Win_test(win, &flag);
            if (flag)
                MMC_ERR("%s, epoch %d, rank %d: MPI_Win_test true before the origin started\n",
                        name, e, rank);
            MPI_Barrier(comm);
            MPI_Barrier(comm);
            MPI_Win_test(win, &flag);
            if (!flag) {
                late++;
                MPI_Win_wait(win);
            }
            if (*cell != e * 1000 + rank)
                MMC_ERR("%s, epoch %d, rank %d: window holds %d, expected %d\n", name, e, rank,
                        *cell, e * 1000 + rank);
        }
        MPI_Group_free(&origin);
        MPI_Group_free(&targets);
    }
    MPI_Group_free(&all);
    MPI_Win_free(&win);
    return late;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MMC_ERR("needs 2 ranks or more\n");
        return mmc_finish();
    }
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    int late = epochs(MPI_COMM_WORLD, "world") + epochs(reversed, "reversed");
    if (late)
        MMC_ERR("rank %d: MPI_Win_test false after the origin's complete and a barrier in %d "
                "of %d epochs\n", rank, late, 2 * EPOCHS);
    MPI_Comm_free(&reversed);
    return mmc_finish();
}
