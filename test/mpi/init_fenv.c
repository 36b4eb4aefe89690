/*
 * MPI_Init and the calls after it leave the application's floating-point
 * exception flags as they were: hwloc's XML plugin (libhwloc-plugins, which
 * Slurm installs) divides by zero in libxml2 while MPI_Init loads the
 * topology, and a Fortran program's STOP then reports signalling exceptions.
 * Checked after MPI_Init and after a round of messages and a reduction of
 * finite values.
 */
#include "mmc_test.h"

#include <fenv.h>

static void check_flags(int rank, const char *when)
{
    int raised = fetestexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
    if (raised)
        MMC_ERR("rank %d: %s raised%s%s%s\n", rank, when,
                raised & FE_DIVBYZERO ? " FE_DIVBYZERO" : "",
                raised & FE_INVALID ? " FE_INVALID" : "", raised & FE_OVERFLOW ? " FE_OVERFLOW" : "");
}

int main(int argc, char **argv)
{
    int rank, size;
    feclearexcept(FE_ALL_EXCEPT);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_flags(rank, "MPI_Init");

    double x = rank + 0.5, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * size / 2.0)
        MMC_ERR("rank %d: sum %g, expected %g\n", rank, sum, size * size / 2.0);
    unsigned char buf[4096];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    mmc_fill(buf, sizeof(buf), 1, rank);
    MPI_Sendrecv_replace(buf, sizeof(buf), MPI_BYTE, next, 1, prev, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    mmc_check(buf, sizeof(buf), 1, prev, "ring");
    check_flags(rank, "the calls after MPI_Init");
    return mmc_finish();
}
