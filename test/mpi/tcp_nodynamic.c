/*
 * ch4:tcp does not serve MPICH 5.0's dynamic processes yet (4.x's: tcp_spawn,
 * tcp_port, tcp_join): every MPI call that needs them returns an error the
 * handler sees (class MPI_ERR_UNSUPPORTED_OPERATION where the netmod's own
 * error reaches the caller, saying what is missing), never an assertion, and
 * the job goes on: after each call the ranks pass checked bytes around a ring.
 */
#include "mmc_test.h"
#include <sys/socket.h>
#include <unistd.h>

#define MISSING "does not support dynamic processes"

static int rank, size;

/* err must be an error; with want_class >= 0 of that class and saying MISSING */
static void expect_error(const char *call, int err, int want_class)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;

    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: %s succeeded, expected an error\n", rank, call);
        return;
    }
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    if (want_class >= 0 && (cls != want_class || !strstr(msg, MISSING)))
        MMC_ERR("rank %d: %s: class %d, expected %d and \"%s\": %s\n", rank, call, cls,
                want_class, MISSING, msg);
    else if (rank == 0)
        printf("%s: error class %d: %s\n", call, cls, msg);
}

/* the job goes on: each rank sends its neighbour a message it can check */
static void ring(int round)
{
    unsigned char out[1000], in[1000];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    mmc_fill(out, sizeof(out), round, rank);
    memset(in, 0, sizeof(in));
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, next, round, in, sizeof(in), MPI_BYTE, prev, round,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mmc_check(in, sizeof(in), round, prev, "ring");
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter = MPI_COMM_NULL;
    int err, codes[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    ring(1);

    /* MPI_Open_port is the only place ch4:tcp could tell mpi4py and others no */
    err = MPI_Open_port(MPI_INFO_NULL, port);
    expect_error("MPI_Open_port", err, MPI_ERR_UNSUPPORTED_OPERATION);
    ring(2);

    /* the root carries the reason; the other ranks learn only that it failed */
    char *cmd = argv[0];
    err = MPI_Comm_spawn(cmd, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                         codes);
    expect_error("MPI_Comm_spawn", err, rank == 0 ? MPI_ERR_UNSUPPORTED_OPERATION : -1);
    if (inter != MPI_COMM_NULL)
        MMC_ERR("rank %d: MPI_Comm_spawn failed but gave an intercommunicator\n", rank);
    ring(3);

    char *cmds[2] = { cmd, cmd };
    int np[2] = { 1, 1 };
    MPI_Info infos[2] = { MPI_INFO_NULL, MPI_INFO_NULL };
    err = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, np, infos, size - 1, MPI_COMM_WORLD,
                                  &inter, MPI_ERRCODES_IGNORE);
    expect_error("MPI_Comm_spawn_multiple", err,
                 rank == size - 1 ? MPI_ERR_UNSUPPORTED_OPERATION : -1);
    ring(4);

    /* a port name in MPICH's syntax, as another MPI job would hand it over */
    err = MPI_Comm_connect("tag#0$connentry#0A0B0C0D$", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    expect_error("MPI_Comm_connect", err, MPI_ERR_UNSUPPORTED_OPERATION);
    err = MPI_Comm_accept("tag#0$connentry#0A0B0C0D$", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    expect_error("MPI_Comm_accept", err, MPI_ERR_UNSUPPORTED_OPERATION);
    ring(5);

    /* MPI_Comm_join over a socket pair of this process: no peer is waited for */
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        MMC_ERR("rank %d: socketpair failed\n", rank);
    } else {
        err = MPI_Comm_join(sv[0], &inter);
        expect_error("MPI_Comm_join", err, MPI_ERR_UNSUPPORTED_OPERATION);
        close(sv[0]);
        close(sv[1]);
    }
    ring(6);

    return mmc_finish();
}
