/*
 * One-sided communication across nodes over ch4:tcp (MPIDIG active-message
 * RMA): put, get and accumulate of small and large regions (above the eager
 * limit and the read-ahead buffer), with fence and with passive-target
 * lock/unlock; every element checked.
 */
#include "mmc_test.h"

#define N (3 << 20) / 8         /* 3 MiB of doubles */

int main(int argc, char **argv)
{
    int rank, nprocs, intra, peer;
    double *base, *local;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    mmc_partners(&intra, &peer);
    if (peer < 0) {
        if (rank == 0)
            MMC_ERR("tcp_rma needs ranks on two nodes\n");
        return mmc_finish();
    }
    MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    local = malloc(N * sizeof(double));
    int counts[] = { 1, 1000, 20000, N };
    for (int c = 0; c < 4; c++) {
        int n = counts[c];
        for (int i = 0; i < N; i++)
            base[i] = -1.0;
        /* put with fence */
        MPI_Win_fence(0, win);
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                local[i] = i + 0.5 * c;
            MPI_Put(local, n, MPI_DOUBLE, peer, 0, n, MPI_DOUBLE, win);
        }
        MPI_Win_fence(0, win);
        if (rank == peer) {
            int bad = 0;
            for (int i = 0; i < n; i++)
                if (base[i] != i + 0.5 * c && !bad++)
                    MMC_ERR("put of %d: element %d is %g\n", n, i, base[i]);
            if (n < N && base[n] != -1.0)
                MMC_ERR("put of %d wrote past its end\n", n);
        }
        /* the target is done reading its window before the next epoch writes it */
        mmc_barrier(MPI_COMM_WORLD, rank != 0 && rank != peer);
        /* accumulate (sum) twice under a passive-target lock */
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                local[i] = 2.0 * i;
            MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
            MPI_Accumulate(local, n, MPI_DOUBLE, peer, 0, n, MPI_DOUBLE, MPI_SUM, win);
            MPI_Accumulate(local, n, MPI_DOUBLE, peer, 0, n, MPI_DOUBLE, MPI_SUM, win);
            MPI_Win_unlock(peer, win);
            /* get it back */
            for (int i = 0; i < n; i++)
                local[i] = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
            MPI_Get(local, n, MPI_DOUBLE, peer, 0, n, MPI_DOUBLE, win);
            MPI_Win_unlock(peer, win);
            int bad = 0;
            for (int i = 0; i < n; i++)
                if (local[i] != i + 0.5 * c + 4.0 * i && !bad++)
                    MMC_ERR("accumulate/get of %d: element %d is %g\n", n, i, local[i]);
        }
        mmc_barrier(MPI_COMM_WORLD, rank != 0 && rank != peer);
    }
    MPI_Win_free(&win);
    free(local);
    return mmc_finish();
}
