/*
 * MPI_Comm_spawn and MPI_Comm_spawn_multiple on ch4:tcp (run on 2 hosts x 1
 * rank): the parents spawn one child, then two more with spawn_multiple, one
 * on each host (the "host" info key); every parent and child exchange
 * checked messages over the intercommunicator, then over the merged one
 * a ring and an allreduce; all disconnect, the children finalize first.
 *
 * tcp_spawn kill: the parents spawn one child on the second host, exchange a
 * checked round with it, and the child kills itself (SIGKILL); a receive
 * from it must fail in each parent with MPIX_ERR_PROC_FAILED, within 30 s,
 * and the parents go on (run it with mpiexec -disable-auto-cleanup).
 *
 * tcp_spawn die: the parents spawn one child on the second host that exits
 * before MPI_Init; the spawn must fail with MPI_ERR_SPAWN within the connect
 * timeout, errcodes saying so, and the parents go on.
 *
 * tcp_spawn self: every parent at once spawns four children with
 * spawn_multiple from MPI_COMM_SELF (four commands), for several rounds; each
 * parent exchanges checked messages with its own children only (hydra 4.0
 * mixed the commands of concurrent spawns: children of one parent dialled
 * another, and a parent waited in the spawn for good).
 *
 * tcp_spawn size: a spawn with 2000 arguments, and one with an argument of
 * 70000 bytes, fail with MPI_ERR_SPAWN at the root and an error elsewhere
 * (they ended the job: MPICH's PMI client asserted, hydra's proxy quit); then
 * a spawn of 400 arguments of 50 bytes arrives whole in the child.
 *
 * tcp_spawn refused: where the launcher cannot spawn (srun --mpi=pmix: 4.0.2
 * has no PMIx spawn, Slurm 22.05 no PMIx_Spawn), a spawn of one child fails with MPI_ERR_SPAWN at the root and
 * an error elsewhere, naming why, and the parents go on.
 */
#include "mmc_test.h"
#include <signal.h>
#include <unistd.h>

#define TAG 17

static int rank;

/* host I (1 or 2) as the launcher names it: mmc-hI under hydra, the Slurm
 * node nI under srun (run-tests sets MMC_HOST_PREFIX=n) */
static const char *host(int i)
{
    static char name[2][64];
    const char *prefix = getenv("MMC_HOST_PREFIX");
    snprintf(name[i - 1], sizeof name[0], "%s%d", prefix ? prefix : "mmc-h", i);
    return name[i - 1];
}

/* every rank sends every remote rank a message it can check, both ways */
static void exchange(MPI_Comm inter, int round)
{
    int rsize, me;
    unsigned char out[3000], in[3000];

    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &me);
    for (int r = 0; r < rsize; r++) {
        size_t len = 1000 * (size_t) round + 7;  /* eager at round 1, larger at 2 */
        mmc_fill(out, len, TAG + round, me);
        memset(in, 0, len);
        MPI_Sendrecv(out, (int) len, MPI_BYTE, r, TAG + round, in, (int) len, MPI_BYTE, r,
                     TAG + round, inter, MPI_STATUS_IGNORE);
        mmc_check(in, len, TAG + round, r, "intercommunicator");
    }
}

/* the parents' own world is whole after a child's death */
static void world_whole(void)
{
    int other = 1 - rank;
    unsigned char out[5000], in[5000];
    mmc_fill(out, sizeof(out), 5, rank);
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, other, 5, in, sizeof(in), MPI_BYTE, other, 5,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mmc_check(in, sizeof(in), 5, other, "the world after a failed spawn");
}

/* A child that dies after the spawn fails what depends on it, nothing else. */
static int spawn_kill(char *cmd)
{
    MPI_Comm inter;
    MPI_Info info;
    int errs[1], cls, len;
    char *args[] = { "1", "kill", NULL }, msg[MPI_MAX_ERROR_STRING], c;

    MPI_Info_create(&info);
    MPI_Info_set(info, "host", host(2));
    int err = MPI_Comm_spawn(cmd, args, 1, info, 0, MPI_COMM_WORLD, &inter, errs);
    MPI_Info_free(&info);
    if (err != MPI_SUCCESS || errs[0] != MPI_SUCCESS) {
        MMC_ERR("rank %d: MPI_Comm_spawn failed\n", rank);
        return mmc_finish();
    }
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    exchange(inter, 1);
    double t0 = MPI_Wtime();
    err = MPI_Recv(&c, 1, MPI_CHAR, 0, 99, inter, MPI_STATUS_IGNORE);
    double t = MPI_Wtime() - t0;
    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: a receive from the killed child succeeded\n", rank);
    } else {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
        if (t > 30)
            MMC_ERR("rank %d: the receive from the killed child failed only after %.1f s\n",
                    rank, t);
        if (cls != MPIX_ERR_PROC_FAILED)
            MMC_ERR("rank %d: the receive from the killed child failed with class %d, "
                    "not MPIX_ERR_PROC_FAILED\n", rank, cls);
        printf("rank %d: receive from the killed child failed after %.1f s (class %d): %s\n",
               rank, t, cls, msg);
    }
    world_whole();
    return mmc_finish();
}

/* A child that exits before MPI_Init fails the spawn within the connect
 * timeout (MPI_ERR_SPAWN, errcodes set), and the parents go on. */
static int spawn_die(char *cmd)
{
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Info info;
    int errs[1] = { MPI_SUCCESS }, cls, len;
    char *args[] = { "1", "die", NULL }, msg[MPI_MAX_ERROR_STRING];

    MPI_Info_create(&info);
    MPI_Info_set(info, "host", host(2));
    double t0 = MPI_Wtime();
    int err = MPI_Comm_spawn(cmd, args, 1, info, 0, MPI_COMM_WORLD, &inter, errs);
    double t = MPI_Wtime() - t0;
    MPI_Info_free(&info);
    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: the spawn of a child that exits before MPI_Init succeeded\n", rank);
    } else {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
        if (cls != MPI_ERR_SPAWN)
            MMC_ERR("rank %d: the spawn failed with class %d, not MPI_ERR_SPAWN\n", rank, cls);
        if (errs[0] == MPI_SUCCESS)
            MMC_ERR("rank %d: the failed spawn left errcodes[0] MPI_SUCCESS\n", rank);
        if (t > 60)
            MMC_ERR("rank %d: the spawn failed only after %.1f s\n", rank, t);
        printf("rank %d: the spawn failed after %.1f s (class %d): %s\n", rank, t, cls, msg);
    }
    world_whole();
    return mmc_finish();
}

#define SIZE_ARGS 400
#define SIZE_ARGLEN 50

/* the argument i of the spawn that fits */
static void size_arg(char *buf, int i)
{
    int n = snprintf(buf, SIZE_ARGLEN + 1, "%d:", i);
    for (int k = n; k < SIZE_ARGLEN; k++)
        buf[k] = (char) ('a' + (i * 7 + k) % 26);
    buf[SIZE_ARGLEN] = '\0';
}

/* the child's side: its arguments after "1 size" are the ones sent */
static void size_child_check(int argc, char **argv)
{
    char want[SIZE_ARGLEN + 1];
    if (argc != 3 + SIZE_ARGS)
        MMC_ERR("child: %d arguments, not %d\n", argc - 1, 2 + SIZE_ARGS);
    for (int i = 0; i < SIZE_ARGS && 3 + i < argc; i++) {
        size_arg(want, i);
        if (strcmp(argv[3 + i], want) != 0) {
            MMC_ERR("child: argument %d is '%s', not '%s'\n", 3 + i, argv[3 + i], want);
            break;
        }
    }
}

/* a spawn too large for the PMI message fails at every parent */
static void spawn_refused(char *cmd, char **args, const char *what)
{
    MPI_Comm inter = MPI_COMM_NULL;
    int errs[1], cls, len;
    char msg[MPI_MAX_ERROR_STRING];
    int err = MPI_Comm_spawn(cmd, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: the spawn with %s succeeded\n", rank, what);
        MPI_Comm_disconnect(&inter);
        return;
    }
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    if (rank == 0 && cls != MPI_ERR_SPAWN)
        MMC_ERR("rank 0: the spawn with %s failed with class %d, not MPI_ERR_SPAWN\n", what, cls);
    printf("rank %d: the spawn with %s failed (class %d): %s\n", rank, what, cls, msg);
}

static int spawn_size(char *cmd)
{
    static char *many[2001], big[70001], bufs[SIZE_ARGS][SIZE_ARGLEN + 1];
    char *one[2] = { big, NULL }, *fits[SIZE_ARGS + 3] = { "1", "size" };

    for (int i = 0; i < 2000; i++)
        many[i] = "x";
    memset(big, 'y', sizeof(big) - 1);
    spawn_refused(cmd, many, "2000 arguments");
    spawn_refused(cmd, one, "an argument of 70000 bytes");
    world_whole();

    for (int i = 0; i < SIZE_ARGS; i++) {
        size_arg(bufs[i], i);
        fits[2 + i] = bufs[i];
    }
    MPI_Comm inter;
    int errs[1];
    int err = MPI_Comm_spawn(cmd, fits, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    if (err != MPI_SUCCESS || errs[0] != MPI_SUCCESS) {
        MMC_ERR("rank %d: the spawn of %d arguments failed\n", rank, SIZE_ARGS + 2);
        return mmc_finish();
    }
    exchange(inter, 1);
    mmc_merged_check(inter, 0);
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("size: %d arguments of %d bytes carried, checked messages\n", SIZE_ARGS,
               SIZE_ARGLEN);
    return mmc_finish();
}

#define SELF_ROUNDS 4
#define SELF_CMDS 4

/* Concurrent spawns: each parent's children are its own.  The parents start
 * each round together, so their commands reach hydra at once. */
static int spawn_self(char *cmd)
{
    char *cmds[SELF_CMDS], *args[] = { "1", NULL }, **argvs[SELF_CMDS];
    int np[SELF_CMDS], errs[SELF_CMDS];
    MPI_Info infos[SELF_CMDS];
    for (int i = 0; i < SELF_CMDS; i++) {
        cmds[i] = cmd;
        argvs[i] = args;
        np[i] = 1;
        infos[i] = MPI_INFO_NULL;
    }

    for (int round = 0; round < SELF_ROUNDS; round++) {
        MPI_Comm inter;
        MPI_Barrier(MPI_COMM_WORLD);
        int err = MPI_Comm_spawn_multiple(SELF_CMDS, cmds, argvs, np, infos, 0, MPI_COMM_SELF,
                                          &inter, errs);
        if (err != MPI_SUCCESS) {
            MMC_ERR("rank %d: MPI_Comm_spawn_multiple from MPI_COMM_SELF failed\n", rank);
            break;
        }
        exchange(inter, 1);
        mmc_merged_check(inter, 0);
        MPI_Comm_disconnect(&inter);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("self: %d rounds, every parent spawning %d children at once\n", SELF_ROUNDS,
               SELF_CMDS);
    return mmc_finish();
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int errs[3];

    if (argc > 2 && strcmp(argv[2], "die") == 0)
        _exit(3);       /* a child that never joins */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        /* a child: rounds as its parents do */
        int round = argc > 1 ? atoi(argv[1]) : 0;
        if (argc > 2 && strcmp(argv[2], "size") == 0)
            size_child_check(argc, argv);
        exchange(parent, round);
        if (argc > 2 && strcmp(argv[2], "kill") == 0)
            raise(SIGKILL);
        mmc_merged_check(parent, 1);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return mmc_errs != 0;
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1 && strcmp(argv[1], "kill") == 0)
        return spawn_kill(argv[0]);
    if (argc > 1 && strcmp(argv[1], "die") == 0)
        return spawn_die(argv[0]);
    if (argc > 1 && strcmp(argv[1], "self") == 0)
        return spawn_self(argv[0]);
    if (argc > 1 && strcmp(argv[1], "size") == 0)
        return spawn_size(argv[0]);
    char *args1[] = { "1", NULL };
    if (argc > 1 && strcmp(argv[1], "refused") == 0) {
        spawn_refused(argv[0], args1, "one child");
        world_whole();
        return mmc_finish();
    }
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
        MPI_Info_set(infos[i], "host", host(i ? 1 : 2));
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
        printf("spawn_multiple: 2 children on %s and %s, checked messages, merged "
               "ring and allreduce\n", host(2), host(1));
    return mmc_finish();
}
