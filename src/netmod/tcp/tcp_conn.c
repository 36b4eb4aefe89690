/*
 * mpich-multichannel: ch4:tcp connections.
 *
 * A rank connects to a peer on its first send and says who it is with a
 * HELLO; the acceptor answers HELLO_ACK and both use that socket.  When two
 * ranks connect to each other at the same time, both keep the connection
 * the lower rank initiated (MPIDI_TCP_keep_incoming): the lower rank answers
 * the other HELLO with HELLO_NAK, the higher rank adopts the incoming
 * connection and moves its queued sends onto it.  Nothing but HELLO is sent
 * before the answer, so moving a queue never reorders or duplicates data.
 *
 * A peer that closes without CLOSE, resets, fails keepalive, or cannot be
 * reached within MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT seconds is dead: every
 * send queued to it, every send waiting for its CTS or SSEND_ACK, the
 * receive in progress from it and every receive posted for it complete with
 * MPIX_ERR_PROC_FAILED; other peers are not affected.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>

static int is_pending(MPIDI_TCP_conn_state_t st)
{
    return st <= MPIDI_TCP_CONN_ACCEPTED;
}

static void set_state(MPIDI_TCP_conn_t * c, MPIDI_TCP_conn_state_t st)
{
    MPIDI_TCP_global.n_pending += is_pending(st) - is_pending(c->state);
    c->state = st;
}

static MPIDI_TCP_conn_t *conn_new(int fd, int peer, MPIDI_TCP_conn_state_t st, int outgoing)
{
    MPIDI_TCP_conn_t *c = MPL_calloc(1, sizeof(*c), MPL_MEM_BUFFER);
    MPIR_Assert(c);
    c->rbuf = MPL_malloc(MPIDI_TCP_RBUF_SIZE, MPL_MEM_BUFFER);
    MPIR_Assert(c->rbuf);
    c->fd = fd;
    c->readahead = MPIDI_TCP_READAHEAD;
    c->peer = peer;
    c->outgoing = outgoing;
    c->state = MPIDI_TCP_CONN_CLOSED;
    set_state(c, st);
    c->deadline = MPIDI_TCP_now() + MPIDI_TCP_global.timeout;
    c->next = MPIDI_TCP_global.conns;
    MPIDI_TCP_global.conns = c;

    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c };
    if (st == MPIDI_TCP_CONN_CONNECTING)
        ev.events |= EPOLLOUT;
    c->events = ev.events;
    epoll_ctl(MPIDI_TCP_global.epfd, EPOLL_CTL_ADD, fd, &ev);
    return c;
}

void MPIDI_TCP_conn_events(MPIDI_TCP_conn_t * c, uint32_t events)
{
    if (c->fd < 0 || c->events == events)
        return;
    struct epoll_event ev = {.events = events, .data.ptr = c };
    epoll_ctl(MPIDI_TCP_global.epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->events = events;
}

static void conn_close_fd(MPIDI_TCP_conn_t * c)
{
    if (c->fd >= 0) {
        epoll_ctl(MPIDI_TCP_global.epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
}

/* Closes a connection now; its memory waits for MPIDI_TCP_reap(), since an
 * event of the same epoll_wait or a caller up the stack may still name it. */
void MPIDI_TCP_conn_free(MPIDI_TCP_conn_t * c)
{
    if (c->zombie)
        return;
    MPIDI_TCP_conn_t **p = &MPIDI_TCP_global.conns;
    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
    set_state(c, MPIDI_TCP_CONN_CLOSED);
    MPIDI_TCP_set_writing(c, 0);
    conn_close_fd(c);
    if (c->peer >= 0 && MPIDI_TCP_global.vc[c->peer] == c)
        MPIDI_TCP_global.vc[c->peer] = NULL;
    MPIR_Assert(c->sq_head == NULL && c->awaits == NULL);
    c->zombie = 1;
    c->next = MPIDI_TCP_global.zombies;
    MPIDI_TCP_global.zombies = c;
}

void MPIDI_TCP_reap(void)
{
    while (MPIDI_TCP_global.zombies) {
        MPIDI_TCP_conn_t *c = MPIDI_TCP_global.zombies;
        MPIDI_TCP_global.zombies = c->next;
        MPL_free(c->rbuf);
        MPL_free(c);
    }
}

int MPIDI_TCP_peer_error(int rank, const char *what, int sys_errno)
{
    char addr[64], why[160];
    MPIDI_TCP_addr_str(&MPIDI_TCP_global.addrs[rank], addr, sizeof(addr));
    snprintf(why, sizeof(why), "%s%s%s", what, sys_errno ? ": " : "",
             sys_errno ? strerror(sys_errno) : "");
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPIX_ERR_PROC_FAILED, "**tcp_peer", "**tcp_peer %d %s %s",
                                rank, addr, why);
}

void MPIDI_TCP_conn_ctl(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op, const uint8_t * body,
                        size_t body_len)
{
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION, .opcode = op,
        .payload_sz = body_len
    };
    MPIR_Assert(c->ctl_off == c->ctl_len && body_len <= MPIDI_TCP_HELLO_SIZE);
    MPIDI_TCP_hdr_encode(c->ctl, &h);
    if (body_len)
        memcpy(c->ctl + MPIDI_TCP_HDR_SIZE, body, body_len);
    c->ctl_len = MPIDI_TCP_HDR_SIZE + body_len;
    c->ctl_off = 0;
    if (op == MPIDI_TCP_OP_CLOSE)
        c->sent_close = 1;
}

/* The local rank's own messages go through a socketpair: one end is the
 * connection we send on, the other one we receive from. */
static int self_connect(MPIDI_TCP_conn_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    int sv[2];
    int me = MPIDI_TCP_global.rank;

    int rc = socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv);
    MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_socket", "**tcp_socket %d",
                         errno);
    MPIDI_TCP_conn_t *tx = conn_new(sv[0], me, MPIDI_TCP_CONN_ESTABLISHED, 1);
    MPIDI_TCP_conn_t *rx = conn_new(sv[1], me, MPIDI_TCP_CONN_ESTABLISHED, 0);
    rx->self_rx = 1;
    MPIDI_TCP_global.vc[me] = tx;
    *out = tx;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int start_connect(int rank, MPIDI_TCP_conn_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    struct sockaddr_in sa;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr = MPIDI_TCP_global.addrs[rank].ip;
    sa.sin_port = MPIDI_TCP_global.addrs[rank].port;

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    MPIR_ERR_CHKANDJUMP1(fd < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_socket", "**tcp_socket %d",
                         errno);
    mpi_errno = MPIDI_TCP_sock_setup(fd, 0);
    if (mpi_errno) {
        close(fd);
        goto fn_fail;
    }
    int rc;
    do {
        rc = connect(fd, (struct sockaddr *) &sa, sizeof(sa));
    } while (rc < 0 && errno == EINTR);
    if (rc < 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        mpi_errno = MPIDI_TCP_peer_error(rank, "connect", err);
        MPIDI_TCP_global.dead_err[rank] = mpi_errno;
        MPIDI_TCP_global.n_dead++;
        goto fn_fail;
    }
    MPIDI_TCP_conn_t *c = conn_new(fd, rank, MPIDI_TCP_CONN_CONNECTING, 1);
    c->remote = sa;
    MPIDI_TCP_global.vc[rank] = c;
    *out = c;
    if (rc == 0)
        mpi_errno = MPIDI_TCP_conn_connected(c);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_TCP_conn_get(int rank, MPIDI_TCP_conn_t ** conn)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_conn_t *c;

    if (rank < 0 || rank >= MPIDI_TCP_global.size) {
        MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**tcp_nodynamic");
        return mpi_errno;
    }
    if (MPIDI_TCP_global.dead_err[rank])
        return MPIDI_TCP_global.dead_err[rank];
    c = MPIDI_TCP_global.vc[rank];
    if (c == NULL)
        return rank == MPIDI_TCP_global.rank ? self_connect(conn) : start_connect(rank, conn);
    if (c->got_close)
        return MPIDI_TCP_peer_error(rank, "the peer has called MPI_Finalize", 0);
    *conn = c;
    return MPI_SUCCESS;
}

int MPIDI_TCP_conn_connected(MPIDI_TCP_conn_t * c)
{
    int err = 0;
    socklen_t len = sizeof(err);
    uint8_t body[MPIDI_TCP_HELLO_SIZE];
    MPIDI_TCP_hello_t hello = {.magic = MPIDI_TCP_HELLO_MAGIC,
        .rank = (uint32_t) MPIDI_TCP_global.rank, .size = (uint32_t) MPIDI_TCP_global.size
    };

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, "connect", err));
        return MPI_SUCCESS;
    }
    MPIDI_TCP_sock_established(c->fd);
    MPIDI_TCP_hello_encode(body, &hello);
    MPIDI_TCP_conn_ctl(c, MPIDI_TCP_OP_HELLO, body, sizeof(body));
    set_state(c, MPIDI_TCP_CONN_HELLO_SENT);
    return MPIDI_TCP_flush(c);
}

int MPIDI_TCP_conn_accept(void)
{
    int mpi_errno = MPI_SUCCESS;

    for (;;) {
        struct sockaddr_in sa;
        socklen_t len = sizeof(sa);
        int fd = accept4(MPIDI_TCP_global.listen_fd, (struct sockaddr *) &sa, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**tcp_accept", "**tcp_accept %d",
                                 errno);
        }
        MPIDI_TCP_sock_established(fd);
        MPIDI_TCP_conn_t *c = conn_new(fd, -1, MPIDI_TCP_CONN_ACCEPTED, 0);
        c->remote = sa;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Moves what was queued on a connection that lost a simultaneous connect. */
static void take_queue(MPIDI_TCP_conn_t * to, MPIDI_TCP_conn_t * from)
{
    to->sq_head = from->sq_head;
    to->sq_tail = from->sq_tail;
    to->awaits = from->awaits;
    from->sq_head = from->sq_tail = NULL;
    from->awaits = NULL;
}

static void refuse(MPIDI_TCP_conn_t * c, const char *why)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &c->remote.sin_addr, ip, sizeof(ip));
    fprintf(stderr, "ch4:tcp warning: rank %d refused a connection from %s:%d: %s\n",
            MPIDI_TCP_global.rank, ip, ntohs(c->remote.sin_port), why);
}

/* HELLO on an accepted connection.  Returns 1 when the connection was closed. */
int MPIDI_TCP_conn_hello(MPIDI_TCP_conn_t * c, const uint8_t * body)
{
    MPIDI_TCP_hello_t hello;
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_hello_decode(body, (uint32_t) MPIDI_TCP_global.size,
                                                      &hello);
    int me = MPIDI_TCP_global.rank;

    if (herr != MPIDI_TCP_HDR_OK || (int) hello.rank == me) {
        refuse(c, herr ? MPIDI_TCP_hdr_strerror(herr) : "a hello claiming our own rank");
        MPIDI_TCP_conn_free(c);
        return 1;
    }
    int peer = (int) hello.rank;
    MPIDI_TCP_conn_t *old = MPIDI_TCP_global.vc[peer];
    c->peer = peer;
    if (old && !(old->outgoing && is_pending(old->state) && MPIDI_TCP_keep_incoming(me, peer, 1))) {
        /* we keep our own connection to the peer */
        MPIDI_TCP_conn_ctl(c, MPIDI_TCP_OP_HELLO_NAK, NULL, 0);
        c->close_after_ctl = 1;
        c->peer = -1;
        set_state(c, MPIDI_TCP_CONN_CLOSED);
        MPIDI_TCP_flush(c);
        return 0;
    }
    if (MPIDI_TCP_global.dead_err[peer]) {
        MPIDI_TCP_conn_free(c);
        return 1;
    }
    if (old) {
        take_queue(c, old);
        MPIDI_TCP_conn_free(old);
    }
    MPIDI_TCP_global.vc[peer] = c;
    set_state(c, MPIDI_TCP_CONN_ESTABLISHED);
    MPIDI_TCP_conn_ctl(c, MPIDI_TCP_OP_HELLO_ACK, NULL, 0);
    MPIDI_TCP_flush(c);
    return 0;
}

/* HELLO_ACK or HELLO_NAK on a connection we initiated.  Returns 1 when the
 * connection's socket was closed. */
int MPIDI_TCP_conn_hello_reply(MPIDI_TCP_conn_t * c, int ack)
{
    if (ack) {
        set_state(c, MPIDI_TCP_CONN_ESTABLISHED);
        MPIDI_TCP_flush(c);
        return 0;
    }
    /* the peer keeps the connection it initiated to us: our sends wait for it */
    set_state(c, MPIDI_TCP_CONN_REFUSED);
    c->deadline = MPIDI_TCP_now() + MPIDI_TCP_global.timeout;
    conn_close_fd(c);
    return 1;
}

static void fail_awaits(MPIDI_TCP_conn_t * c, int err)
{
    while (c->awaits) {
        MPIDI_TCP_await_t *a = c->awaits;
        c->awaits = a->next;
        a->sreq->status.MPI_ERROR = err;
        if (a->handler_id == MPIDIG_SEND_CTS)
            MPIDIG_global.origin_cbs[MPIDIG_SEND_DATA] (a->sreq);
        else
            MPID_Request_complete(a->sreq);
        MPL_free(a);
    }
}

void MPIDI_TCP_conn_fail(MPIDI_TCP_conn_t * c, int err)
{
    int peer = c->peer;

    if (peer < 0 || MPIDI_TCP_global.vc[peer] != c || c->got_close) {
        /* not a connection anything depends on */
        if (peer >= 0 && MPIDI_TCP_global.vc[peer] == c)
            MPIDI_TCP_global.vc[peer] = NULL;
        c->peer = -1;
        MPIDI_TCP_sendq_fail(c, err);
        MPIDI_TCP_conn_free(c);
        return;
    }
    MPIDI_TCP_global.dead_err[peer] = err;
    MPIDI_TCP_global.n_dead++;
    MPIDI_TCP_sendq_fail(c, err);
    fail_awaits(c, err);
    MPIDI_TCP_rx_abort(c, err);
    MPIDI_TCP_conn_free(c);
    MPIDI_TCP_sweep_posted(0);
}

/* Receives posted for a dead peer complete with its error; called on each
 * failure and periodically, for receives posted later.  A receive from a
 * peer we have no connection to starts one (probe_unconnected): a peer that
 * died refuses it, an unreachable one times out, so the receive fails too. */
void MPIDI_TCP_sweep_posted(int probe_unconnected)
{
    for (int vci = 0; vci < MPIDI_global.n_vcis; vci++) {
        MPIR_Request *r, *tmp;
        DL_FOREACH_SAFE(MPIDI_global.per_vci[vci].posted_list, r, tmp) {
            int src = MPIDIG_REQUEST(r, u.recv.source);
            if (src == MPI_ANY_SOURCE || r->comm == NULL)
                continue;
#ifndef MPIDI_CH4_DIRECT_NETMOD
            if (MPIDI_REQUEST(r, is_local))
                continue;
#endif
            int lpid = MPIDIU_rank_to_lpid(src, r->comm);
            if (lpid < 0 || lpid >= MPIDI_TCP_global.size)
                continue;
            if (probe_unconnected && !MPIDI_TCP_global.vc[lpid] &&
                !MPIDI_TCP_global.dead_err[lpid]) {
                MPIDI_TCP_conn_t *c;
                MPIDI_TCP_conn_get(lpid, &c);
            }
            if (!MPIDI_TCP_global.dead_err[lpid])
                continue;
            MPIDIG_delete_posted(r, &MPIDI_global.per_vci[vci].posted_list);
            MPIR_Datatype_release_if_not_builtin(MPIDIG_REQUEST(r, datatype));
            r->status.MPI_ERROR = MPIDI_TCP_global.dead_err[lpid];
            MPIR_STATUS_SET_COUNT(r->status, 0);
            MPID_Request_complete(r);
        }
    }
}

/* Connections not established within CONNECT_TIMEOUT: the peer is
 * unreachable (or a stranger connected and said nothing). */
void MPIDI_TCP_check_timers(void)
{
    double now = MPIDI_TCP_now();
    MPIDI_TCP_conn_t *c = MPIDI_TCP_global.conns, *next;

    for (; c; c = next) {
        next = c->next;
        if (!is_pending(c->state) || now < c->deadline)
            continue;
        if (c->outgoing) {
            char what[64];
            snprintf(what, sizeof(what), "no connection within %d s "
                     "(MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT)", MPIDI_TCP_global.timeout);
            MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, what, 0));
            next = MPIDI_TCP_global.conns;      /* the list changed */
        } else {
            MPIDI_TCP_conn_free(c);
            next = MPIDI_TCP_global.conns;
        }
    }
}
