/*
 * Connects that give up, accepts that come late or give up (run with
 * MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT=3; 1 with "many").  The world splits
 * into acceptors (world ranks below size / 2; "parity": the even ones) and
 * connectors (the rest); the acceptors' root is their first rank, the
 * connectors' their last, so a root need not be a group's rank 0.
 *
 *   dyn_late [parity]
 *     1. the acceptors' root opens a port; the connectors connect and,
 *        nobody accepting, must each get MPI_ERR_PORT within the timeout
 *        (a few seconds of margin);
 *     2. (5.0 on) the acceptors then accept: the connect's message may still
 *        be there, and its answer goes to connectors that have left.  The
 *        accept fails (the connector never answers) or not; either way
 *        nothing of it may reach the connectors' memory: they poll with a
 *        guard pattern over the stack where their connect's frames were,
 *        and check it afterwards (5.0's ch4:ucx left its receive, with its
 *        completion flag, posted there).  The accept has 5.0's info key
 *        timeout; 4.x accepts without one (an accept with no connect to take
 *        waits for good) and leaves this step out;
 *     3. the root closes the port and opens another (ports' tags are
 *        reused): both groups join through it, every pair exchanges checked
 *        messages, and an allreduce and a merge run over the result.
 *        Nothing of the connect given up may take the new one's place
 *        (4.0.2's ch4:ofi left its receive posted on the returned stack,
 *        where the new answer went).
 *   dyn_late withdraw   (5.0, ch4:tcp; at least 2 connectors)
 *     The accept (info timeout 2 s) takes the connect, then gives up while
 *     the connectors' root waits for a member that comes 6 s late; the
 *     connect (info timeout 60 s) must then fail at once with MPI_ERR_PORT,
 *     told that the accept was withdrawn, not after its own 60 s.  Step 3
 *     follows.
 *   dyn_late many
 *     70 connects given up in a row on one port (more than ch4:tcp keeps
 *     given-up links for, and more than a port queues), each after the
 *     timeout and none refused at once; step 3 follows.
 */
#include "mmc_test.h"
#include <string.h>
#include <unistd.h>

#define PORT_LEN 1024
#define GUARD (128 * 1024)
#define MANY 70

static int rank, size, parity, acceptor, wa, wb;        /* wa, wb: the roots' world ranks */
static MPI_Comm group;          /* this process's side */

static int is_acceptor(int r)
{
    return parity ? r % 2 == 0 : r < size / 2;
}

static void open_port(char *port)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "port_name_size", "1024");       /* 5.0's ch4:ucx needs more than 256 */
    MPI_Open_port(info, port);
    MPI_Info_free(&info);
}

/* The acceptors' root opens a port and tells the connectors' root its name
 * (tag: the step's) */
static void share_port(char *port, int tag)
{
    if (rank == wa) {
        open_port(port);
        MPI_Send(port, PORT_LEN, MPI_CHAR, wb, tag, MPI_COMM_WORLD);
    } else if (rank == wb)
        MPI_Recv(port, PORT_LEN, MPI_CHAR, wa, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static MPI_Info timeout_info(const char *seconds)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "timeout", seconds);
    return info;
}

static int group_root(void)
{
    int gs;
    MPI_Comm_size(group, &gs);
    return acceptor ? 0 : gs - 1;
}

/* A connect that must fail with MPI_ERR_PORT after between lo and hi
 * seconds; MPI_INFO_NULL: the timeout of the CVAR. */
static void connect_fails(const char *port, MPI_Info info, double lo, double hi, const char *why)
{
    MPI_Comm c;
    double t = MPI_Wtime();
    int err = MPI_Comm_connect(port, info, group_root(), group, &c);
    int cls = 0;
    t = MPI_Wtime() - t;
    MPI_Error_class(err, &cls);
    if (err == MPI_SUCCESS)
        MMC_ERR("rank %d: a connect %s succeeded\n", rank, why);
    else if (cls != MPI_ERR_PORT)
        MMC_ERR("rank %d: the connect %s failed with class %d, not MPI_ERR_PORT\n", rank, why,
                cls);
    else if (t < lo || t > hi)
        MMC_ERR("rank %d: the connect %s failed after %.1f s, not within %.1f-%.0f s\n", rank,
                why, t, lo, hi);
    else if (rank == wb)
        printf("rank %d: the connect %s failed after %.1f s: MPI_ERR_PORT\n", rank, why, t);
}

/* step 2 on a connector: polls (MPI_Iprobe) until the accept is over, a
 * pattern over the stack below the caller's frame */
static void guarded_poll(void)
{
    volatile unsigned char guard[GUARD];
    for (int i = 0; i < GUARD; i++)
        guard[i] = 0xa5;
    int flag = 0;
    while (!flag)
        MPI_Iprobe(wa, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    int bad = 0, first = -1;
    for (int i = 0; i < GUARD; i++)
        if (guard[i] != 0xa5 && bad++ == 0)
            first = i;
    if (bad)
        MMC_ERR("rank %d: %d bytes of the stack changed while the late accept ran (first at "
                "%d bytes below the guard's top)\n", rank, bad, GUARD - first);
    else if (rank == wb)
        printf("rank %d: the late answer left the stack alone\n", rank);
}

/* step 2 on an acceptor; returns whether the accept failed */
static int late_accept(const char *port, const char *seconds)
{
    MPI_Comm c;
    MPI_Info info = timeout_info(seconds);
    int err = MPI_Comm_accept(port, info, group_root(), group, &c), cls = 0;
    MPI_Info_free(&info);
    MPI_Error_class(err, &cls);
    if (err == MPI_SUCCESS)
        MPI_Comm_free(&c);
    if (rank == wa)
        printf("rank %d: the late accept %s, class %d\n", rank,
               err == MPI_SUCCESS ? "succeeded" : "failed", cls);
    return err != MPI_SUCCESS;
}

/* the connectors' slow member comes this late in "withdraw" */
#define LATE 6

static int first_connector(void)
{
    int i = 0;
    while (is_acceptor(i))
        i++;
    return i;
}

/* "withdraw": the accept gives up in the middle of the exchange */
static void withdraw(char *port)
{
    share_port(port, 0);
    if (acceptor) {
        if (!late_accept(port, "2"))
            MMC_ERR("rank %d: an accept whose connector never exchanged succeeded\n", rank);
        if (rank == wa)
            MPI_Close_port(port);
    } else {
        MPI_Info info = timeout_info("60");
        if (rank == first_connector())
            sleep(LATE);
        connect_fails(port, info, 0, LATE + 20, "whose accept gave up");
        MPI_Info_free(&info);
    }
}

/* step 1, at the stack depth of guarded_poll, then step 2 */
static void give_up(char *port, int many)
{
    share_port(port, 0);
    if (acceptor) {
        MPI_Barrier(MPI_COMM_WORLD);    /* the connects are over */
        if (MPICH_NUMVERSION >= 50000000 && !many)
            late_accept(port, "3");
        if (rank == wa) {
            MPI_Close_port(port);
            for (int i = 0; i < size; i++)
                if (!is_acceptor(i))
                    MPI_Send(NULL, 0, MPI_BYTE, i, 2, MPI_COMM_WORLD);
        }
    } else {
        for (int i = 0; i < (many ? MANY : 1); i++)
            connect_fails(port, MPI_INFO_NULL, many ? 0.7 : 2.5, 30, "nobody accepted");
        MPI_Barrier(MPI_COMM_WORLD);
        if (MPICH_NUMVERSION >= 50000000 && !many)
            guarded_poll();
        MPI_Recv(NULL, 0, MPI_BYTE, wa, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* step 3: a new port, a connect that is accepted */
static void join(char *port)
{
    MPI_Comm c;
    int rs, gr, lr;
    MPI_Comm_set_errhandler(group, MPI_ERRORS_ARE_FATAL);
    share_port(port, 3);
    if (acceptor) {
        MPI_Comm_accept(port, MPI_INFO_NULL, group_root(), group, &c);
        if (rank == wa)
            MPI_Close_port(port);
    } else
        MPI_Comm_connect(port, MPI_INFO_NULL, group_root(), group, &c);
    MPI_Comm_remote_size(c, &rs);
    MPI_Comm_rank(c, &lr);
    MPI_Comm_size(group, &gr);
    if (rs != size - gr)
        MMC_ERR("rank %d: the new intercommunicator has %d remote processes, not %d\n", rank,
                rs, size - gr);

    /* every pair, both ways: tags carry the sender's rank in its group */
    unsigned char (*out)[5000] = malloc(5000), (*in)[5000] = malloc((size_t) rs * 5000);
    MPI_Request *req = malloc(2 * (size_t) rs * sizeof(*req));
    mmc_fill(out[0], 5000, 7 + lr, acceptor);
    for (int i = 0; i < rs; i++) {
        MPI_Irecv(in[i], 5000, MPI_BYTE, i, 7 + i, c, &req[i]);
        MPI_Isend(out[0], 5000, MPI_BYTE, i, 7 + lr, c, &req[rs + i]);
    }
    MPI_Waitall(2 * rs, req, MPI_STATUSES_IGNORE);
    size_t bad = 0;
    for (int i = 0; i < rs; i++)
        bad += mmc_check(in[i], 5000, 7 + i, !acceptor, "joined through a new port");

    /* the sum of the other side's world ranks */
    long mine = rank, sum = 0, want = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
    for (int i = 0; i < size; i++)
        if (is_acceptor(i) != acceptor)
            want += i;
    if (sum != want)
        MMC_ERR("rank %d: allreduce over the new intercommunicator gave %ld, not %ld\n", rank,
                sum, want);
    else if (!bad)
        printf("rank %d: joined through a new port\n", rank);
    mmc_merged_check(c, !acceptor);
    free(out);
    free(in);
    free(req);
    MPI_Comm_disconnect(&c);
}

int main(int argc, char **argv)
{
    char port[PORT_LEN] = "";
    const char *mode = argc > 1 ? argv[1] : "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parity = strcmp(mode, "parity") == 0;
    if (!parity && *mode && strcmp(mode, "withdraw") && strcmp(mode, "many")) {
        if (rank == 0)
            MMC_ERR("dyn_late: no mode '%s' (parity, withdraw, many)\n", mode);
        return mmc_finish();
    }
    if (size < 2 || (strcmp(mode, "withdraw") == 0 && size < 3)) {
        if (rank == 0)
            MMC_ERR("dyn_late runs on 2 ranks or more (withdraw: 3)\n");
        return mmc_finish();
    }
    acceptor = is_acceptor(rank);
    int n_acc = 0;
    wa = 0;
    for (int i = 0; i < size; i++) {
        if (is_acceptor(i))
            n_acc++;
        else
            wb = i;
    }
    MPI_Comm_split(MPI_COMM_WORLD, acceptor, 0, &group);
    MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
    if (rank == 0)
        printf("dyn_late %s: %d acceptors, %d connectors, roots %d and %d\n",
               *mode ? mode : "halves", n_acc, size - n_acc, wa, wb);

    if (strcmp(mode, "withdraw") == 0)
        withdraw(port);
    else
        give_up(port, strcmp(mode, "many") == 0);
    join(port);
    MPI_Comm_free(&group);
    return mmc_finish();
}
