/*
 * MPI_BOTTOM with absolute addresses: a struct type whose displacements are
 * the addresses of two separately allocated arrays (ints and doubles), sent
 * from MPI_BOTTOM around a ring and received both from MPI_BOTTOM into
 * another pair of arrays and into a plain buffer of the same signature, at
 * sizes for a fast box, MPICH's queue, ch4:tcp's rendezvous and CMA
 * (buffers are never at offset 0 of the type: CMA, the boxes and ch4:tcp must
 * not take the buffer pointer for the data's address).  Every element is
 * checked, and the words around each array keep their fill.
 */
#include "mmc_test.h"

#define GUARD 8

static MPI_Datatype absolute(int *ints, double *dbls, int n)
{
    MPI_Datatype t;
    int bl[2] = { n, n };
    MPI_Aint d[2];
    MPI_Datatype ty[2] = { MPI_INT, MPI_DOUBLE };
    MPI_Get_address(ints, &d[0]);
    MPI_Get_address(dbls, &d[1]);
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    static const int ns[] = { 4, 7000, 400000 };

    for (int k = 0; k < 3; k++) {
        int n = ns[k];
        /* the arrays inside guards of -1 */
        int *si = malloc((n + 2 * GUARD) * sizeof(int)), *ri = malloc((n + 2 * GUARD) * sizeof(int));
        double *sd = malloc((n + 2 * GUARD) * sizeof(double));
        double *rd = malloc((n + 2 * GUARD) * sizeof(double));
        for (int i = 0; i < n + 2 * GUARD; i++) {
            si[i] = ri[i] = -1;
            sd[i] = rd[i] = -1.0;
        }
        for (int i = 0; i < n; i++) {
            si[GUARD + i] = rank * 1000003 + i;
            sd[GUARD + i] = rank + i * 0.5;
        }
        MPI_Datatype st = absolute(si + GUARD, sd + GUARD, n);
        MPI_Datatype rt = absolute(ri + GUARD, rd + GUARD, n);

        for (int into_plain = 0; into_plain < 2; into_plain++) {
            /* the plain receive: n ints then n doubles, packed tight */
            size_t plain_len = (size_t) n * (sizeof(int) + sizeof(double));
            unsigned char *plain = malloc(plain_len);
            MPI_Datatype pt;
            {
                int bl[2] = { n, n };
                MPI_Aint d[2] = { 0, (MPI_Aint) (n * sizeof(int)) };
                MPI_Datatype ty[2] = { MPI_INT, MPI_DOUBLE };
                MPI_Type_create_struct(2, bl, d, ty, &pt);
                MPI_Type_commit(&pt);
            }
            MPI_Request req[2];
            if (into_plain)
                MPI_Irecv(plain, 1, pt, prev, k, MPI_COMM_WORLD, &req[0]);
            else
                MPI_Irecv(MPI_BOTTOM, 1, rt, prev, k, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(MPI_BOTTOM, 1, st, next, k, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);

            int bad = 0;
            for (int i = 0; i < n && !bad; i++) {
                int gi;
                double gd;
                if (into_plain) {
                    memcpy(&gi, plain + i * sizeof(int), sizeof(int));
                    memcpy(&gd, plain + n * sizeof(int) + i * sizeof(double), sizeof(double));
                } else {
                    gi = ri[GUARD + i];
                    gd = rd[GUARD + i];
                }
                if (gi != prev * 1000003 + i || gd != prev + i * 0.5) {
                    MMC_ERR("MPI_BOTTOM %d elements%s: element %d is (%d, %g) from %d\n", n,
                            into_plain ? " into a plain buffer" : "", i, gi, gd, prev);
                    bad = 1;
                }
            }
            for (int g = 0; g < GUARD && !into_plain; g++)
                if (ri[g] != -1 || ri[GUARD + n + g] != -1 || rd[g] != -1.0 ||
                    rd[GUARD + n + g] != -1.0) {
                    MMC_ERR("MPI_BOTTOM %d elements: a guard word was written\n", n);
                    break;
                }
            /* the next round receives into the arrays again */
            for (int i = 0; i < n; i++) {
                ri[GUARD + i] = -1;
                rd[GUARD + i] = -1.0;
            }
            MPI_Type_free(&pt);
            free(plain);
        }
        MPI_Type_free(&st);
        MPI_Type_free(&rt);
        free(si);
        free(ri);
        free(sd);
        free(rd);
    }
    return mmc_finish();
}
