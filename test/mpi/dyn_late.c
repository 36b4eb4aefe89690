/*
 * A connect that gives up, then an accept that answers late (2 ranks, run
 * with MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT=3):
 *
 *   1. rank 0 opens a port; rank 1 connects and, nobody accepting, must get
 *      MPI_ERR_PORT within the timeout (a few seconds of margin);
 *   2. (5.0 on) rank 0 then accepts: the connect's message may still be
 *      there, and its answer goes to a connector that has left.  The accept
 *      fails (the connector never answers) or not; either way nothing of it
 *      may reach rank 1's memory: rank 1 polls with a guard pattern over the
 *      stack where its connect's frames were, and checks it afterwards
 *      (5.0's ch4:ucx left its receive, with its completion flag, posted
 *      there).
 *      The accept has 5.0's info key timeout; 4.x accepts without one (an
 *      accept with no connect to take waits for good) and leaves this step
 *      out;
 *   3. rank 0 closes the port and opens another (ports' tags are reused):
 *      both join through it and exchange checked messages.  Nothing of the
 *      connect given up may take the new one's place (4.0.2's ch4:ofi left
 *      its receive posted on the returned stack, where the new answer went).
 */
#include "mmc_test.h"

#define PORT_LEN 1024
#define GUARD (128 * 1024)

static int rank;

static void open_port(char *port)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "port_name_size", "1024");       /* 5.0's ch4:ucx needs more than 256 */
    MPI_Open_port(info, port);
    MPI_Info_free(&info);
}

/* step 1, at the stack depth of guarded_poll below */
static void give_up(const char *port)
{
    MPI_Comm c;
    double t = MPI_Wtime();
    int err = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c), cls = 0;
    t = MPI_Wtime() - t;
    MPI_Error_class(err, &cls);
    if (err == MPI_SUCCESS)
        MMC_ERR("rank 1: a connect nobody accepted succeeded\n");
    else if (cls != MPI_ERR_PORT)
        MMC_ERR("rank 1: the connect failed with class %d, not MPI_ERR_PORT\n", cls);
    else if (t < 2.5 || t > 30)
        MMC_ERR("rank 1: the connect gave up after %.1f s (timeout 3 s)\n", t);
    else
        printf("rank 1: the connect gave up after %.1f s: MPI_ERR_PORT\n", t);
}

/* step 2 on rank 1: polls (MPI_Iprobe) until rank 0's accept is over, a
 * pattern over the stack below the caller's frame */
static void guarded_poll(void)
{
    volatile unsigned char guard[GUARD];
    for (int i = 0; i < GUARD; i++)
        guard[i] = 0xa5;
    int flag = 0;
    while (!flag)
        MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    int bad = 0, first = -1;
    for (int i = 0; i < GUARD; i++)
        if (guard[i] != 0xa5 && bad++ == 0)
            first = i;
    if (bad)
        MMC_ERR("rank 1: %d bytes of the stack changed while the late accept ran (first at "
                "%d bytes below the guard's top)\n", bad, GUARD - first);
    else
        printf("rank 1: the late answer left the stack alone\n");
}

/* step 2 on rank 0, with 5.0's info key timeout (an accept's default is to
 * wait for good) */
static void late_accept(const char *port)
{
    MPI_Comm c;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "timeout", "3");
    int err = MPI_Comm_accept(port, info, 0, MPI_COMM_SELF, &c), cls;
    MPI_Info_free(&info);
    MPI_Error_class(err, &cls);
    if (err == MPI_SUCCESS) {
        printf("rank 0: the late accept succeeded\n");
        MPI_Comm_free(&c);
    } else
        printf("rank 0: the late accept failed, class %d\n", cls);
}

int main(int argc, char **argv)
{
    char port[PORT_LEN] = "";
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (size != 2) {
        if (rank == 0)
            MMC_ERR("dyn_late runs on 2 ranks\n");
        return mmc_finish();
    }

    if (rank == 0) {
        open_port(port);
        MPI_Send(port, PORT_LEN, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (MPICH_NUMVERSION >= 50000000)
            late_accept(port);
        MPI_Close_port(port);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    } else {
        MPI_Recv(port, PORT_LEN, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        give_up(port);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        if (MPICH_NUMVERSION >= 50000000)
            guarded_poll();
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    /* step 3: a new port, a connect that is accepted */
    MPI_Comm c;
    unsigned char out[5000], in[5000];
    if (rank == 0) {
        open_port(port);
        MPI_Send(port, PORT_LEN, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
        MPI_Close_port(port);
    } else {
        MPI_Recv(port, PORT_LEN, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
    }
    mmc_fill(out, sizeof(out), 7, rank);
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, 0, 7, in, sizeof(in), MPI_BYTE, 0, 7, c,
                 MPI_STATUS_IGNORE);
    if (!mmc_check(in, sizeof(in), 7, 1 - rank, "joined through a new port"))
        printf("rank %d: joined through a new port\n", rank);
    MPI_Comm_disconnect(&c);
    return mmc_finish();
}
