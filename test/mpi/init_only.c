/* MPI_Init and MPI_Finalize only: the runner starts it with invalid CVAR
 * values and expects MPI_Init to fail with a message naming the CVAR. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
