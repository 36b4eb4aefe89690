/*
 * MPI_Comm_spawn and MPI_Comm_spawn_multiple on ch4:tcp (run on 2 hosts x 1
 * rank): the parents spawn one child, then two more with spawn_multiple, one
 * on each host (the "host" info key); every parent and child exchange
 * checked messages over the intercommunicator, then over the merged one
 * a ring and an allreduce; all disconnect, the children finalize first.
 */
#include "mmc_test.h"

#define TAG 17

static int rank;

/* every rank sends every remote rank a message it can check, both ways */
static void exchange(MPI_Comm inter, int round)
{
    int rsize;
    unsigned char out[3000], in[3000];

    MPI_Comm_remote_size(inter, &rsize);
    for (int r = 0; r < rsize; r++) {
        size_t len = 1000 * (size_t) round + 7;  /* eager at round 1, larger at 2 */
        mmc_fill(out, len, TAG + round, rank);
        memset(in, 0, len);
        MPI_Sendrecv(out, (int) len, MPI_BYTE, r, TAG + round, in, (int) len, MPI_BYTE, r,
                     TAG + round, inter, MPI_STATUS_IGNORE);
        mmc_check(in, len, TAG + round, r, "intercommunicator");
    }
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int errs[3];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        /* a child: rounds as its parents do */
        int round = argc > 1 ? atoi(argv[1]) : 0;
        exchange(parent, round);
        mmc_merged_check(parent, 1);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return mmc_errs != 0;
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *args1[] = { "1", NULL };
    int err = MPI_Comm_spawn(argv[0], args1, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    if (err != MPI_SUCCESS || errs[0] != MPI_SUCCESS) {
        MMC_ERR("rank %d: MPI_Comm_spawn failed\n", rank);
        return mmc_finish();
    }
    exchange(inter, 1);
    mmc_merged_check(inter, 0);
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("spawn: 1 child, checked messages, merged ring and allreduce\n");

    /* one child on each host */
    char *cmds[2] = { argv[0], argv[0] };
    char *args2[] = { "2", NULL };
    char **argvs[2] = { args2, args2 };
    int np[2] = { 1, 1 };
    MPI_Info infos[2];
    for (int i = 0; i < 2; i++) {
        MPI_Info_create(&infos[i]);
        MPI_Info_set(infos[i], "host", i ? "mmc-h1" : "mmc-h2");
    }
    err = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, errs);
    for (int i = 0; i < 2; i++)
        MPI_Info_free(&infos[i]);
    if (err != MPI_SUCCESS) {
        MMC_ERR("rank %d: MPI_Comm_spawn_multiple failed\n", rank);
        return mmc_finish();
    }
    exchange(inter, 2);
    mmc_merged_check(inter, 0);
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("spawn_multiple: 2 children on mmc-h2 and mmc-h1, checked messages, merged "
               "ring and allreduce\n");
    return mmc_finish();
}
