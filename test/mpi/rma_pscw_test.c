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
 * doc/mpich-fixes.md).  A false answer is then waited for, so that the
 * epochs go on and the count of false answers is reported.
 */
#include "mmc_test.h"

#define EPOCHS 300

int main(int argc, char **argv)
{
    int rank, size, late = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MMC_ERR("needs 2 ranks or more\n");
        return mmc_finish();
    }

    int *cell;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &cell, &win);
    *cell = -1;
    MPI_Group world, origin, targets;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int zero = 0;
    MPI_Group_incl(world, 1, &zero, &origin);
    MPI_Group_excl(world, 1, &zero, &targets);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int e = 0; e < EPOCHS; e++) {
        int flag;
        if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_start(targets, 0, win);
            for (int t = 1; t < size; t++) {
                int v = e * 1000 + t;
                MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
            }
            MPI_Win_complete(win);
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            MPI_Win_post(origin, 0, win);
            MPI_Win_test(win, &flag);
            if (flag)
                MMC_ERR("epoch %d, rank %d: MPI_Win_test true before the origin started\n", e,
                        rank);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_test(win, &flag);
            if (!flag) {
                late++;
                MPI_Win_wait(win);
            }
            if (*cell != e * 1000 + rank)
                MMC_ERR("epoch %d, rank %d: window holds %d, expected %d\n", e, rank, *cell,
                        e * 1000 + rank);
        }
    }
    if (late)
        MMC_ERR("rank %d: MPI_Win_test false after the origin's complete and a barrier in %d "
                "of %d epochs\n", rank, late, EPOCHS);

    MPI_Group_free(&origin);
    MPI_Group_free(&targets);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    return mmc_finish();
}
