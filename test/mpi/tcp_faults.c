/*
 * ch4:tcp under faults; the scenario is argv[1].  Every MPI call that can
 * fail runs under MPI_ERRORS_RETURN and is timed: the test passes when the
 * error comes within MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT (plus slack), names
 * the peer, and the ranks that are still alive keep communicating.
 *
 *   kill        rank 0 sends 1 GiB to a rank on another node, which kills
 *               itself (SIGKILL) in the middle of the transfer; rank 0's send
 *               and a third rank's receive from it fail; rank 0 and the third
 *               rank then still exchange a message.  (mpiexec -disable-auto-cleanup)
 *               With MMC_EXPECT_SLEEP set (WAIT_MODE=sleep), the third rank's
 *               receive must have slept: a peer that dies while a rank sleeps
 *               is an error in time, not a hang.
 *   refused     the last rank finalizes and exits without ever talking to rank 0
 *               (no collective before: the ranks never connect); rank 0's first
 *               send to it fails fast (connection refused)
 *   finalized   a rank on another node finalizes; rank 0, which has talked to
 *               it, keeps polling, then sends to it: the send fails (the peer
 *               said CLOSE) instead of vanishing into a dead socket
 *   unreachable rank 0 sends to the last rank after running $MMC_CUT (the test
 *               list's command that drops its new connections to that rank's
 *               host; after MPI_Init, which on MPICH 4.1+ connects the nodes'
 *               first ranks): the send fails after the connect timeout
 *   garbage     a rank opens raw sockets to rank 0's listening port and writes
 *               an HTTP request, a header with an unknown opcode, a HELLO with
 *               a wrong magic, one from a rank outside the job, one without
 *               the key and one with a 1 TiB body (garbage-dynamic: a connect
 *               to a port rank 0 never opened, a hello of a process of
 *               another job, a port's verdict nobody asked for and a
 *               dynamic-process message before any proof; apart, as rank 0
 *               logs 8 refusals per 10 s): rank 0 sends nothing but
 *               its challenge, closes each, survives, and both still exchange
 *               messages (MPIR_CVAR_CH4_TCP_PORT_RANGE; rank 0 finds its port there)
 *   corrupt     rank 1's message to rank 0 leaves with a field broken
 *               (tcp_corrupt_preload.so, MMC_CORRUPT names the field): rank
 *               0's receive from rank 1 fails with an error naming it; its
 *               receive from rank 2 is not affected
 *   close-pending  rank 1 finalizes while rank 0 has eager sends queued and
 *               rendezvous sends waiting for it: they complete, those not
 *               delivered with an error naming rank 1; no hang, no assertion
 *   finalize-stuck  rank 0 finalizes with 32 MiB queued to a rank that does not
 *               receive: MPI_Finalize gives up after OUTAGE_TIMEOUT without
 *               progress and names that rank and what it did not acknowledge
 *   nomem       with every allocation failing (tcp_nomem_preload.so), rank 0's
 *               noncontiguous send, synchronous send and send behind a full
 *               socket to a rank on another node each fail with
 *               MPI_ERR_NO_MEM, nothing of them arrives, and each sent
 *               again afterwards arrives intact
 *   nomem-partial  the same for a 1 MiB send of which the socket took a part
 *               before the allocation failed: the send fails, the connection
 *               with it (the receiver's receive fails too); rank 0 and a third
 *               rank still exchange a message
 */
#include "mmc_test.h"
#include "tcp_raw.h"
#include <dlfcn.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

static int rank, nprocs, peer, timeout_s;

/* Checks that err is an error that came in time, and prints it. */
static void expect_error(int err, double t0, double limit, const char *what)
{
    double dt = (mmc_now_us() - t0) / 1e6;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: %s succeeded, expected an error\n", rank, what);
        return;
    }
    MPI_Error_string(err, msg, &len);
    printf("rank %d: %s failed after %.1f s: %s\n", rank, what, dt, msg);
    fflush(stdout);
    if (dt > limit)
        MMC_ERR("rank %d: %s took %.1f s to fail (limit %.1f s)\n", rank, what, dt, limit);
}

static void ping(int a, int b, int tag)
{
    unsigned char buf[4096];
    if (rank == a) {
        mmc_fill(buf, sizeof(buf), tag, a);
        if (MPI_Send(buf, sizeof(buf), MPI_BYTE, b, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
            MMC_ERR("rank %d: send to %d failed\n", a, b);
    } else if (rank == b) {
        memset(buf, 0, sizeof(buf));
        if (MPI_Recv(buf, sizeof(buf), MPI_BYTE, a, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE))
            MMC_ERR("rank %d: receive from %d failed\n", b, a);
        mmc_check(buf, sizeof(buf), tag, a, "after the fault");
    }
}

/* The survivors cannot use collectives: report to rank 0 point to point. */
static int survivors_finish(int dead)
{
    int errs = mmc_errs;
    if (rank == 0) {
        for (int r = 1; r < nprocs; r++) {
            int e = 0;
            if (r == dead)
                continue;
            MPI_Recv(&e, 1, MPI_INT, r, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    } else if (rank != dead) {
        MPI_Send(&errs, 1, MPI_INT, 0, 9999, MPI_COMM_WORLD);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

static int scenario_kill(void)
{
    size_t n = (size_t) 1 << 30;
    int third = -1;
    for (int r = 1; r < nprocs; r++)
        if (r != peer) {
            third = r;
            break;
        }
    unsigned char *buf = NULL;
    if (rank == 0 || rank == peer) {
        buf = malloc(n);
        memset(buf, 1, n);      /* before the clock starts */
    }
    mmc_barrier(MPI_COMM_WORLD, 0);
    if (rank == peer) {
        MPI_Request rq;
        int flag;
        MPI_Irecv(buf, (int) n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq);
        /* let part of the transfer happen, then die */
        double t0 = mmc_now_us();
        while (mmc_now_us() - t0 < 100000)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        if (flag)
            fprintf(stderr, "the transfer ended before the kill: make it larger\n");
        raise(SIGKILL);
    } else if (rank == 0) {
        double t0 = mmc_now_us();
        int err = MPI_Send(buf, (int) n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        expect_error(err, t0, timeout_s + 5, "send of 1 GiB to the killed rank");
        if ((mmc_now_us() - t0) / 1e6 < 0.05)
            MMC_ERR("the send failed before the transfer started\n");
    } else if (rank == third) {
        char c;
        long long s0 = mmc_pvar_counter("ch4_poll_sleeps");
        double t0 = mmc_now_us();
        int err = MPI_Recv(&c, 1, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect_error(err, t0, timeout_s + 5, "receive from the killed rank");
        long long slept = mmc_pvar_counter("ch4_poll_sleeps") - s0;
        if (getenv("MMC_EXPECT_SLEEP")) {
            printf("rank %d: the receive slept %lld times\n", rank, slept);
            if (s0 < 0 || slept <= 0)
                MMC_ERR("rank %d: the receive from the killed rank never slept\n", rank);
        }
    }
    free(buf);
    if (third >= 0)
        ping(0, third, 3);
    return survivors_finish(peer);
}

static int scenario_refused(int after_talking)
{
    if (rank == peer) {
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        int x = 42, flag;
        double t0 = mmc_now_us();
        /* the peer exits meanwhile; rank 0 keeps polling */
        while (mmc_now_us() - t0 < 2e6)
            MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        t0 = mmc_now_us();
        int err = MPI_Send(&x, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
        expect_error(err, t0, 2.0, after_talking ? "send to a rank that has finalized" :
                     "send to a rank whose port is closed");
    }
    return survivors_finish(peer);
}

static int scenario_unreachable(void)
{
    if (rank == 0) {
        int x = 42;
        const char *cut = getenv("MMC_CUT");
        if (!cut || system(cut) != 0)
            MMC_ERR("cannot cut the link: MMC_CUT=%s\n", cut ? cut : "(unset)");
        double t0 = mmc_now_us();
        MPI_Request rq;
        int err = MPI_Isend(&x, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq);
        if (err == MPI_SUCCESS)
            err = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        expect_error(err, t0, timeout_s + 3, "send to an unreachable rank");
        if ((mmc_now_us() - t0) / 1e6 < timeout_s - 1)
            MMC_ERR("the send failed before the connect timeout (%d s)\n", timeout_s);
    }
    /* the unreachable rank never hears from rank 0: it just finishes */
    if (rank == peer) {
        MPI_Finalize();
        return 0;
    }
    return survivors_finish(peer);
}

/* Writes data after the challenge; rank 0 must close the connection, after
 * nothing but (verdict, when not 0) that verdict, which grants nothing. */
static void send_garbage_verdict(const char *ip, int port, const void *data, size_t len,
                                 const char *what, int verdict)
{
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE], rest[64];
    int fd = raw_connect(ip, port);
    if (fd < 0) {
        MMC_ERR("garbage (%s): cannot connect to %s:%d\n", what, ip, port);
        return;
    }
    if (raw_challenge(fd, nonce, timeout_s + 5) != 0)
        MMC_ERR("garbage (%s): no challenge from rank 0\n", what);
    if (write(fd, data, len) != (ssize_t) len)
        MMC_ERR("garbage (%s): write failed\n", what);
    long n = raw_read_all(fd, rest, sizeof(rest), timeout_s + 10);
    long want = verdict ? MPIDI_TCP_HDR_SIZE + MPIDI_TCP_REPLY_SIZE : 0;
    int empty = 1;
    for (long i = MPIDI_TCP_HDR_SIZE; i < n; i++)
        empty &= rest[i] == 0;
    if (n != want || (verdict && (rest[1] != verdict || !empty)))
        MMC_ERR("garbage (%s): rank 0 %s\n", what, n < 0 ? "kept the connection" :
                "sent more than its challenge and verdict");
    else
        printf("garbage (%s): connection closed by rank 0%s\n", what,
               verdict ? " after an empty refusal" : "");
    close(fd);
}

static void send_garbage(const char *ip, int port, const void *data, size_t len, const char *what)
{
    send_garbage_verdict(ip, port, data, len, what, 0);
}

/* what a stranger might write: not our protocol, or not of this job */
static void garbage_foreign(const char *ip, int port)
{
    uint8_t b[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HELLO_SIZE];
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION,.opcode = 77 };
    const char *http = "GET / HTTP/1.0\r\n\r\n";
    send_garbage(ip, port, http, strlen(http), "an HTTP request");
    MPIDI_TCP_hdr_encode(b, &h);
    send_garbage(ip, port, b, MPIDI_TCP_HDR_SIZE, "unknown opcode");
    size_t len = raw_hello(b, 1, (uint32_t) nprocs, 0, 7);
    b[MPIDI_TCP_HDR_SIZE] ^= 0xff;
    send_garbage(ip, port, b, len, "a hello with a wrong magic");
    raw_hello(b, (uint32_t) nprocs + 3, (uint32_t) nprocs, 0, 7);
    send_garbage(ip, port, b, len, "a hello from outside the job");
    raw_hello(b, 1, (uint32_t) nprocs, 0, 7);
    send_garbage(ip, port, b, len, "a hello for rank 1 without the key");
    h.opcode = MPIDI_TCP_OP_HELLO;
    h.payload_sz = UINT64_C(1) << 40;
    MPIDI_TCP_hdr_encode(b, &h);
    send_garbage(ip, port, b, MPIDI_TCP_HDR_SIZE, "a hello with a 1 TiB body");
}

/* what a process of another job might write to a rank it has no business with */
static void garbage_dynamic(const char *ip, int port)
{
    uint8_t b[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_DYN_MSG_MIN + MPIDI_TCP_DYN_DATA_MAX];
    size_t len = raw_frame(b, MPIDI_TCP_OP_PORT_HELLO, MPIDI_TCP_PORT_HELLO_SIZE, 0);
    send_garbage_verdict(ip, port, b, len, "a connect to a port never opened",
                         MPIDI_TCP_OP_PORT_NAK);
    len = raw_frame(b, MPIDI_TCP_OP_DYN_HELLO, MPIDI_TCP_DYN_HELLO_SIZE, 9);
    send_garbage(ip, port, b, len, "a hello of a process of another job");
    len = raw_frame(b, MPIDI_TCP_OP_PORT_ACK, MPIDI_TCP_REPLY_SIZE, 3);
    send_garbage(ip, port, b, len, "a port's verdict nobody asked for");
    len = raw_frame(b, MPIDI_TCP_OP_DYN_MSG, MPIDI_TCP_DYN_MSG_MIN + 8, 0);
    send_garbage(ip, port, b, len, "a dynamic-process message before any proof");
}

static int scenario_garbage(void (*write_garbage) (const char *ip, int port))
{
    char ip[64];
    int port = 0;
    raw_my_ip(ip);
    MPI_Bcast(ip, sizeof(ip), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0 && !(port = raw_own_listen_port()))
        MMC_ERR("rank 0 listens on no port of MPIR_CVAR_CH4_TCP_PORT_RANGE\n");
    MPI_Bcast(&port, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == peer)
        write_garbage(ip, port);
    /* rank 0 polls meanwhile */
    mmc_barrier(MPI_COMM_WORLD, rank != 0 && rank != peer);
    ping(peer, 0, 5);
    ping(0, peer, 6);
    return mmc_finish();
}

/* Rank 1's message to rank 0 leaves broken (tcp_corrupt_preload.so): rank
 * 0's receive from rank 1 fails naming it, while its receive from rank 2,
 * waited for first, completes intact. */
static int scenario_corrupt(void)
{
    unsigned char buf[1000];
    if (nprocs != 3) {
        if (rank == 0)
            MMC_ERR("corrupt needs 3 ranks\n");
        return mmc_finish();
    }
    ping(1, 0, 1);      /* the connection is up and proven */
    if (rank == 0) {
        unsigned char good[1000];
        MPI_Request rq[2];
        MPI_Irecv(buf, sizeof(buf), MPI_BYTE, 1, 777, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(good, sizeof(good), MPI_BYTE, 2, 5, MPI_COMM_WORLD, &rq[1]);
        if (MPI_Wait(&rq[1], MPI_STATUS_IGNORE) != MPI_SUCCESS)
            MMC_ERR("rank 0: the receive from rank 2 got rank 1's error\n");
        mmc_check(good, sizeof(good), 5, 2, "beside the broken message");
        double t0 = mmc_now_us();
        expect_error(MPI_Wait(&rq[0], MPI_STATUS_IGNORE), t0, 10, "receive from rank 1");
    } else if (rank == 1) {
        mmc_fill(buf, sizeof(buf), 777, 1);
        MPI_Send(buf, sizeof(buf), MPI_BYTE, 0, 777, MPI_COMM_WORLD);
    } else {
        sleep(1);       /* rank 0 has seen the broken message */
        mmc_fill(buf, sizeof(buf), 5, 2);
        if (MPI_Send(buf, sizeof(buf), MPI_BYTE, 0, 5, MPI_COMM_WORLD) != MPI_SUCCESS)
            MMC_ERR("rank 2: send to rank 0 failed\n");
    }
    return survivors_finish(1);
}

/* Rank 0 finalizes with 32 MiB still queued to rank 1, which computes
 * without receiving for longer than MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT: rank 0's
 * MPI_Finalize gives up and names rank 1 and what it did not acknowledge. */
static int scenario_finalize_stuck(void)
{
    enum { N = 32, SZ = 1 << 20 };
    char *buf = malloc((size_t) N * SZ);
    memset(buf, 7, (size_t) N * SZ);
    mmc_barrier(MPI_COMM_WORLD, 0);
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            MPI_Request rq;
            MPI_Isend(buf + (size_t) i * SZ, SZ, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq);
            MPI_Request_free(&rq);
        }
        printf(" No Errors\n");     /* what is checked is what MPI_Finalize says */
        fflush(stdout);
    } else if (rank == peer) {
        sleep((unsigned) (3 * mmc_cvar_int("MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT", 120)));
    }
    MPI_Finalize();
    free(buf);
    return 0;
}

/* Rank 1 finalizes while rank 0 has sends pending to it: 16 eager messages of
 * 1 MiB (queued behind a full socket) and 4 rendezvous ones of 4 MiB (waiting
 * for a CTS).  Rank 0's sends complete, those that cannot be delivered with
 * an error naming rank 1: never dropped, never an assertion. */
static int scenario_close_pending(void)
{
    enum { NE = 16, NR = 4, ESZ = 1 << 20, RSZ = 4 << 20 };
    char *buf = malloc((size_t) NE * ESZ + (size_t) NR * RSZ);
    MPI_Request rq[NE + NR];
    MPI_Status st[NE + NR];
    memset(buf, 7, (size_t) NE * ESZ + (size_t) NR * RSZ);
    mmc_barrier(MPI_COMM_WORLD, 0);
    if (rank == 0) {
        for (int i = 0; i < NE + NR; i++)
            MPI_Isend(buf + (i < NE ? (size_t) i * ESZ : (size_t) NE * ESZ + (i - NE) * RSZ),
                      i < NE ? ESZ : RSZ, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[i]);
        double t0 = mmc_now_us();
        int err = MPI_Waitall(NE + NR, rq, st);
        if (err == MPI_ERR_IN_STATUS)
            for (int i = 0; i < NE + NR && err == MPI_ERR_IN_STATUS; i++)
                if (st[i].MPI_ERROR != MPI_SUCCESS)
                    err = st[i].MPI_ERROR;
        expect_error(err, t0, 30, "sends pending to a rank that finalized");
    } else if (rank == peer) {
        sleep(1);       /* rank 0's sends fill the sockets meanwhile */
    }
    free(buf);
    return survivors_finish(peer);
}

/* mmc_nomem(1) of tcp_nomem_preload.so: every allocation fails until (0) */
static void (*nomem)(int);

/* A send rank 0 starts while nothing can be allocated: an error in no time,
 * of class want_cls, and no request.  (MPICH formats an error's text in
 * memory it allocates, so the text is empty.) */
static void expect_nomem(int err, MPI_Request * rq, int want_cls, const char *what)
{
    int cls;
    expect_error(err, mmc_now_us(), 5, what);
    if (err == MPI_SUCCESS) {
        MPI_Wait(rq, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Error_class(err, &cls);
    if (cls != want_cls)
        MMC_ERR("rank 0: %s: error class %d, expected %d\n", what, cls, want_cls);
}

/* Rank 0's (synchronous) send to peer started while every allocation fails
 * must fail; sent again with memory back, it must go. */
static void nomem_then_send(const void *buf, int count, MPI_Datatype type, int tag, int sync,
                            const char *what)
{
    MPI_Request rq = MPI_REQUEST_NULL;
    nomem(1);
    int err = (sync ? MPI_Issend : MPI_Isend) (buf, count, type, peer, tag, MPI_COMM_WORLD, &rq);
    nomem(0);
    expect_nomem(err, &rq, MPI_ERR_NO_MEM, what);
    if ((sync ? MPI_Ssend : MPI_Send) (buf, count, type, peer, tag, MPI_COMM_WORLD))
        MMC_ERR("rank 0: %s: sent again with memory back, it failed\n", what);
}

/* Rank 0 sends, to the rank on the other node, three messages while every
 * allocation fails, each of which must fail with nothing sent, and each again
 * afterwards: a vector (100 KB, packed), a synchronous send (awaits the
 * peer's acknowledgement) and one behind 8 MiB the sleeping receiver has not
 * taken.  The receiver checks each arrives once, intact. */
static int scenario_nomem(void)
{
    enum { NV = 12500, SZ = 4096, NQ = 8, QSZ = 1 << 20 };
    double *v = calloc(2 * NV, sizeof(double));
    unsigned char *q = malloc((size_t) NQ * QSZ + SZ), *small = q + (size_t) NQ * QSZ;
    MPI_Datatype vec;
    MPI_Request qrq[NQ];
    MPI_Type_vector(NV, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        for (int i = 0; i < NV; i++)
            v[2 * i] = i + 0.5;
        nomem_then_send(v, 1, vec, 11, 0, "noncontiguous send without memory");
        mmc_fill(small, SZ, 12, 0);
        nomem_then_send(small, SZ, MPI_BYTE, 12, 1, "synchronous send without memory");

        /* the receiver sleeps: the sockets fill and the later sends queue */
        int done;
        for (int i = 0; i < NQ; i++) {
            mmc_fill(q + (size_t) i * QSZ, QSZ, 13, i);
            MPI_Isend(q + (size_t) i * QSZ, QSZ, MPI_BYTE, peer, 13, MPI_COMM_WORLD, &qrq[i]);
        }
        MPI_Testall(NQ, qrq, &done, MPI_STATUSES_IGNORE);
        if (done)
            MMC_ERR("rank 0: 8 MiB went into the sockets: make the queue longer\n");
        mmc_fill(small, SZ, 14, 0);
        nomem_then_send(small, SZ, MPI_BYTE, 14, 0, "queued send without memory");
        if (MPI_Waitall(NQ, qrq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            MMC_ERR("rank 0: the sends ahead of the queued one failed\n");
    } else if (rank == peer) {
        MPI_Status st;
        int n;
        if (MPI_Recv(v, 1, vec, 0, 11, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
            MMC_ERR("rank %d: the noncontiguous receive failed\n", rank);
        for (int i = 0; i < NV; i++)
            if (v[2 * i] != i + 0.5 || v[2 * i + 1] != 0) {
                MMC_ERR("rank %d: vector element %d is %g (hole %g)\n", rank, i, v[2 * i],
                        v[2 * i + 1]);
                break;
            }
        MPI_Recv(small, SZ, MPI_BYTE, 0, 12, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n != SZ || mmc_check(small, SZ, 12, 0, "synchronous send after the failure"))
            MMC_ERR("rank %d: synchronous send: %d bytes\n", rank, n);
        sleep(2);
        for (int i = 0; i < NQ; i++) {
            MPI_Recv(q + (size_t) i * QSZ, QSZ, MPI_BYTE, 0, 13, MPI_COMM_WORLD, &st);
            mmc_check(q + (size_t) i * QSZ, QSZ, 13, i, "the sends ahead of the queued one");
        }
        MPI_Recv(small, SZ, MPI_BYTE, 0, 14, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n != SZ || mmc_check(small, SZ, 14, 0, "queued send after the failure"))
            MMC_ERR("rank %d: queued send: %d bytes\n", rank, n);
    }
    /* on one connection, a failed send that left anything would come before
     * the barrier's message */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == peer) {
        int flag;
        MPI_Status st;
        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag)
            MMC_ERR("rank %d: a message with tag %d from a send that failed\n", rank, st.MPI_TAG);
    }
    MPI_Type_free(&vec);
    free(v);
    free(q);
    return mmc_finish();
}

/* Rank 0's 1 MiB send to a sleeping rank on another node fills the small
 * sockets (MPIR_CVAR_CH4_TCP_SNDBUF_SIZE, _RCVBUF_SIZE) part way when the
 * allocation of its queue entry fails: the send fails, and the connection,
 * whose stream holds half a message; the receiver's receive fails; rank 0 and
 * the third rank still talk. */
static int scenario_nomem_partial(void)
{
    enum { SZ = 1 << 20 };
    unsigned char *buf = malloc(SZ);
    if (nprocs != 3) {
        if (rank == 0)
            MMC_ERR("nomem-partial needs 3 ranks\n");
        return mmc_finish();
    }
    ping(0, peer, 1);   /* the connection is up and idle */
    if (rank == 0) {
        MPI_Request rq;
        mmc_fill(buf, SZ, 15, 0);
        nomem(1);
        int err = MPI_Isend(buf, SZ, MPI_BYTE, peer, 15, MPI_COMM_WORLD, &rq);
        nomem(0);
        expect_nomem(err, &rq, MPIX_ERR_PROC_FAILED, "1 MiB send part-written without memory");
        double t0 = mmc_now_us();
        expect_error(MPI_Send(buf, 16, MPI_BYTE, peer, 16, MPI_COMM_WORLD), t0, 5,
                     "later send on the failed connection");
    } else if (rank == peer) {
        sleep(2);
        double t0 = mmc_now_us();
        expect_error(MPI_Recv(buf, SZ, MPI_BYTE, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE), t0,
                     timeout_s + 5, "receive of the half-sent message");
        if (mmc_errs)
            printf(" Found %d errors\n", mmc_errs);
        fflush(stdout);
    }
    ping(0, 3 - peer, 2);
    free(buf);
    if (rank == peer) {
        MPI_Finalize();
        return 0;
    }
    return survivors_finish(peer);
}

int main(int argc, char **argv)
{
    int intra;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* "refused" and "unreachable" must not communicate before their send: their
     * peer is the last rank */
    if (argc > 1 && (!strcmp(argv[1], "refused") || !strcmp(argv[1], "unreachable")))
        peer = nprocs > 1 ? nprocs - 1 : -1;
    else
        mmc_partners(&intra, &peer);
    timeout_s = mmc_cvar_int("MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT", 30);
    if (peer < 0 || argc < 2) {
        if (rank == 0)
            MMC_ERR("usage: tcp_faults kill|refused|finalized|unreachable|garbage|corrupt|"
                    "close-pending|finalize-stuck|nomem|nomem-partial, on two nodes\n");
        return mmc_finish();
    }
    if (!strcmp(argv[1], "kill"))
        return scenario_kill();
    if (!strcmp(argv[1], "refused"))
        return scenario_refused(0);
    if (!strcmp(argv[1], "finalized"))
        return scenario_refused(1);
    if (!strcmp(argv[1], "unreachable"))
        return scenario_unreachable();
    if (!strcmp(argv[1], "garbage"))
        return scenario_garbage(garbage_foreign);
    if (!strcmp(argv[1], "garbage-dynamic"))
        return scenario_garbage(garbage_dynamic);
    if (!strcmp(argv[1], "corrupt"))
        return scenario_corrupt();
    if (!strcmp(argv[1], "finalize-stuck"))
        return scenario_finalize_stuck();
    if (!strcmp(argv[1], "close-pending"))
        return scenario_close_pending();
    if (!strncmp(argv[1], "nomem", 5)) {
        nomem = (void (*)(int)) dlsym(RTLD_DEFAULT, "mmc_nomem");
        if (!nomem) {
            MMC_ERR("nomem: run with LD_PRELOAD=tcp_nomem_preload.so\n");
            return mmc_finish();
        }
        return strcmp(argv[1], "nomem") ? scenario_nomem_partial() : scenario_nomem();
    }
    if (rank == 0)
        MMC_ERR("unknown scenario %s\n", argv[1]);
    return mmc_finish();
}
