/* Built with Debian's own MPICH (mpicc.mpich, linked to libmpich.so.12), run
 * on ours with LD_LIBRARY_PATH=PREFIX/lib alone: the library that answers
 * is this install's (MPI_Get_library_version names its prefix, MMC_PREFIX),
 * and a ring of ints and of MPI_DOUBLE_INT pairs arrives whole. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, nprocs, errs = 0, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    const char *prefix = getenv("MMC_PREFIX");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Get_library_version(version, &len);
    if (!prefix || !strstr(version, prefix)) {
        printf("rank %d: not this install's library (%s): %.200s\n", rank,
               prefix ? prefix : "MMC_PREFIX unset", version);
        errs++;
    }
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    enum { N = 3000 };
    static int out[N], in[N];
    static struct { double d; int i; } pout[N], pin[N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * N + i;
        pout[i].d = rank + i / 4.0;
        pout[i].i = -i;
    }
    MPI_Sendrecv(out, N, MPI_INT, right, 0, in, N, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(pout, N, MPI_DOUBLE_INT, right, 1, pin, N, MPI_DOUBLE_INT, left, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++) {
        if (in[i] != left * N + i || pin[i].d != left + i / 4.0 || pin[i].i != -i) {
            printf("rank %d: element %d from rank %d is wrong\n", rank, i, left);
            errs++;
            break;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return 0;
}
