/*
 * Two threads of each rank communicate at once under MPI_THREAD_MULTIPLE, one
 * with a rank on its own node (shared memory) and one with a rank on another
 * node (the netmod), so progress passes of both threads run concurrently
 * through the arbiter.  Every message's bytes are checked; afterwards the
 * arbiter's counters must still be consistent (see doc/arbiter.md, Thread
 * safety).  Needs 4 ranks on 2 hosts.
 */
#include "mmc_test.h"
#include <pthread.h>

#define ITERS 300

typedef struct {
    int peer;
    MPI_Comm comm;
    int initiator;
} pair_t;

static void *exchange(void *arg)
{
    const pair_t *p = arg;
    size_t max = 1 << 18;
    unsigned char *buf = malloc(max);
    for (int i = 0; i < ITERS; i++) {
        size_t size = (size_t) 1 << (i % 19);   /* 1 B .. 256 KiB */
        int tag = i % 1000;
        if (p->initiator) {
            mmc_fill(buf, size, tag, 0);
            MPI_Send(buf, (int) size, MPI_BYTE, p->peer, tag, p->comm);
            MPI_Recv(buf, (int) size, MPI_BYTE, p->peer, tag, p->comm, MPI_STATUS_IGNORE);
            mmc_check(buf, size, tag, 1, "reply");
        } else {
            MPI_Recv(buf, (int) size, MPI_BYTE, p->peer, tag, p->comm, MPI_STATUS_IGNORE);
            mmc_check(buf, size, tag, 0, "request");
            mmc_fill(buf, size, tag, 1);
            MPI_Send(buf, (int) size, MPI_BYTE, p->peer, tag, p->comm);
        }
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE) {
        MMC_ERR("MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        return mmc_finish();
    }
    if (size != 4) {
        MMC_ERR("needs 4 ranks (2 hosts x 2)\n");
        return mmc_finish();
    }
    /* each rank's node, named by its lowest rank (MPI_COMM_TYPE_SHARED) */
    int node[4], leader, r;
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node_comm);
    MPI_Comm_free(&node_comm);
    MPI_Allgather(&leader, 1, MPI_INT, node, 1, MPI_INT, MPI_COMM_WORLD);
    int mate = -1, remote = -1;
    for (r = 0; r < 4; r++) {
        if (r != rank && node[r] == node[rank])
            mate = r;
    }
    /* the remote partner: the rank on the other node with my index there */
    int idx = rank == node[rank] ? 0 : 1, seen = 0;
    for (r = 0; r < 4; r++) {
        if (node[r] != node[rank] && seen++ == idx)
            remote = r;
    }
    if (mate < 0 || remote < 0) {
        MMC_ERR("rank %d: needs 2 ranks on each of 2 nodes\n", rank);
        return mmc_finish();
    }
    pair_t pairs[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &pairs[0].comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &pairs[1].comm);
    pairs[0].peer = mate;
    pairs[0].initiator = rank < mate;
    pairs[1].peer = remote;
    pairs[1].initiator = rank < remote;

    long long shm0 = mmc_pvar_counter("ch4_poll_shm_polls");
    long long nm0 = mmc_pvar_counter("ch4_poll_nm_polls");
    long long sk0 = mmc_pvar_counter("ch4_poll_nm_skipped");
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, exchange, &pairs[t]);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    long long shm = mmc_pvar_counter("ch4_poll_shm_polls") - shm0;
    long long nm = mmc_pvar_counter("ch4_poll_nm_polls") - nm0;
    long long sk = mmc_pvar_counter("ch4_poll_nm_skipped") - sk0;
    if (rank == 0)
        printf("rank 0: shm polls %lld, netmod polls %lld, skipped %lld\n", shm, nm, sk);
    /* counts may lose an increment to a concurrent pass, never run away */
    if (shm <= 0 || nm <= 0 || nm + sk > shm + shm / 100 || nm + sk < shm - shm / 100)
        MMC_ERR("rank %d: inconsistent counters: shm polls %lld, netmod polls %lld + skipped "
                "%lld\n", rank, shm, nm, sk);
    MPI_Comm_free(&pairs[0].comm);
    MPI_Comm_free(&pairs[1].comm);
    return mmc_finish();
}
