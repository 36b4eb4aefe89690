/*
 * mpich-multichannel: ch4:tcp connections.
 *
 * A rank connects to a peer on its first send.  A connection is the peer's
 * only once the handshake (tcp_handshake.c) has proven both ends: until that
 * point it costs no buffers, changes nothing of the peer's real connection,
 * and an accepted one that says nothing valid is closed after
 * MPIDI_TCP_UNPROVEN_TIME (tcp_accept.c).  A connection that lost a
 * simultaneous connect hands its queued sends to the one adopted; nothing but
 * HELLO is sent before the verdict, so moving a queue never reorders or
 * duplicates.
 *
 * Liveness.  MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT bounds only TCP's own
 * handshake.  Once the kernel has connected, a peer that is outside MPI is
 * waited for as long as it takes; a connection closed before the verdict (a
 * listener that dropped it while we were away, or under a flood of strangers)
 * is opened again with a backoff.  A connected peer is gone when its host
 * stops acknowledging (tcp_liveness.c), resets, or closes without CLOSE:
 * every send queued to it, every send waiting for its CTS or SSEND_ACK,
 * every receive waiting for its data and every receive posted for it complete
 * with MPIX_ERR_PROC_FAILED; other peers are not affected.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>

/* The per-peer tables, for the world's n processes; processes of other jobs
 * are appended (MPIDI_TCP_peer_add). */
int MPIDI_TCP_peers_init(int n)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    g->cards = MPL_calloc(n, sizeof(*g->cards), MPL_MEM_ADDRESS);
    g->vc = MPL_calloc(n, sizeof(*g->vc), MPL_MEM_ADDRESS);
    g->dead_err = MPL_calloc(n, sizeof(*g->dead_err), MPL_MEM_ADDRESS);
    if (!g->cards || !g->vc || !g->dead_err)
        return MPI_ERR_OTHER;
    g->n_peers = g->peer_cap = n;
    return MPI_SUCCESS;
}

static int grow(void **p, size_t old_n, size_t new_n, size_t elem)
{
    char *q = MPL_realloc(*p, new_n * elem, MPL_MEM_ADDRESS);
    if (q == NULL)
        return -1;
    memset(q + old_n * elem, 0, (new_n - old_n) * elem);
    *p = q;
    return 0;
}

/* A new peer (a process of another job), none of whose tables says anything
 * yet; they double when full. */
int MPIDI_TCP_peer_add(int *peer)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    if (g->n_peers == g->peer_cap) {
        int cap = g->peer_cap * 2;
        if (grow((void **) &g->cards, g->peer_cap, cap, sizeof(*g->cards)) ||
            grow((void **) &g->vc, g->peer_cap, cap, sizeof(*g->vc)) ||
            grow((void **) &g->dead_err, g->peer_cap, cap, sizeof(*g->dead_err)) ||
            grow((void **) &g->dyn, g->peer_cap - g->size, cap - g->size, sizeof(*g->dyn)))
            return MPI_ERR_OTHER;
        g->peer_cap = cap;
    }
    *peer = g->n_peers++;
    g->dyn[*peer - g->size].avtid = -1;
    return MPI_SUCCESS;
}

void MPIDI_TCP_conn_set_state(MPIDI_TCP_conn_t * c, MPIDI_TCP_conn_state_t st)
{
    MPIDI_TCP_global.n_pending += MPIDI_TCP_conn_is_pending(st) - MPIDI_TCP_conn_is_pending(c->state);
    MPIDI_TCP_global.n_unproven += (st == MPIDI_TCP_CONN_UNPROVEN) -
        (c->state == MPIDI_TCP_CONN_UNPROVEN);
    c->state = st;
}

static void watch(MPIDI_TCP_conn_t * c)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c };
    if (c->state == MPIDI_TCP_CONN_CONNECTING)
        ev.events |= EPOLLOUT;
    c->events = ev.events;
    epoll_ctl(MPIDI_TCP_global.epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

/* No buffers: the read-ahead buffer comes with the first read once established.
 * fd -1: a connect not yet opened (open_connect watches it). */
MPIDI_TCP_conn_t *MPIDI_TCP_conn_new(int fd, int peer, MPIDI_TCP_conn_state_t st, int outgoing)
{
    MPIDI_TCP_conn_t *c = MPL_calloc(1, sizeof(*c), MPL_MEM_BUFFER);
    if (c == NULL)
        return NULL;
    c->fd = fd;
    c->readahead = MPIDI_TCP_READAHEAD;
    c->peer = peer;
    c->outgoing = outgoing;
    c->state = MPIDI_TCP_CONN_CLOSED;
    MPIDI_TCP_conn_set_state(c, st);
    c->next = MPIDI_TCP_global.conns;
    MPIDI_TCP_global.conns = c;
    if (fd >= 0)
        watch(c);
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
    c->ctl_off = c->ctl_len = 0;
    c->hs_len = 0;
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
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_CLOSED);
    MPIDI_TCP_set_writing(c, 0);
    conn_close_fd(c);
    if (c->peer >= 0 && MPIDI_TCP_global.vc[c->peer] == c)
        MPIDI_TCP_global.vc[c->peer] = NULL;
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

/* A peer as errors name it: "rank 3 (10.0.0.2:40001)", or for a process of
 * another job, which has no rank here, "a process of another job (...)". */
const char *MPIDI_TCP_peer_str(int peer, char *buf, size_t len)
{
    char addr[64];
    MPIDI_TCP_addr_str(MPIDI_TCP_ADDR(peer), addr, sizeof(addr));
    if (peer < MPIDI_TCP_global.size)
        snprintf(buf, len, "rank %d (%s)", peer, addr);
    else
        snprintf(buf, len, "a process of another job (%s)", addr);
    return buf;
}

int MPIDI_TCP_peer_error(int peer, const char *what, int sys_errno)
{
    char name[96], why[200];
    snprintf(why, sizeof(why), "%s%s%s", what, sys_errno ? ": " : "",
             sys_errno ? strerror(sys_errno) : "");
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPIX_ERR_PROC_FAILED, "**tcp_peer", "**tcp_peer %s %s",
                                MPIDI_TCP_peer_str(peer, name, sizeof(name)), why);
}

void MPIDI_TCP_conn_ctl(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op, const uint8_t * body,
                        size_t body_len)
{
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION, .opcode = op,
        .payload_sz = body_len
    };
    MPIR_Assert(c->ctl_off == c->ctl_len && body_len <= MPIDI_TCP_HS_BODY_MAX);
    MPIDI_TCP_hdr_encode(c->ctl, &h);
    if (body_len)
        memcpy(c->ctl + MPIDI_TCP_HDR_SIZE, body, body_len);
    c->ctl_len = MPIDI_TCP_HDR_SIZE + body_len;
    c->ctl_off = 0;
    if (op == MPIDI_TCP_OP_CLOSE)
        c->sent_close = 1;
}

/* rank's listening address */
static void sockaddr_of(int rank, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_addr = MPIDI_TCP_ADDR(rank)->ip;
    sa->sin_port = MPIDI_TCP_ADDR(rank)->port;
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
    MPIDI_TCP_conn_t *tx = MPIDI_TCP_conn_new(sv[0], me, MPIDI_TCP_CONN_ESTABLISHED, 1);
    MPIDI_TCP_conn_t *rx = MPIDI_TCP_conn_new(sv[1], me, MPIDI_TCP_CONN_ESTABLISHED, 0);
    MPIR_ERR_CHKANDJUMP(!tx || !rx, mpi_errno, MPI_ERR_OTHER, "**nomem");
    rx->self_rx = 1;
    /* a warning about either end names this process's own address */
    sockaddr_of(me, &tx->remote);
    rx->remote = tx->remote;
    MPIDI_TCP_global.vc[me] = tx;
    *out = tx;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A nonblocking connect to peer's address on a new socket (c->fd). */
static int open_connect(MPIDI_TCP_conn_t * c, int peer)
{
    int mpi_errno = MPI_SUCCESS;
    struct sockaddr_in sa;
    char name[96];

    sockaddr_of(peer, &sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE))
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**tcp_nofile", "**tcp_nofile %s",
                             MPIDI_TCP_peer_str(peer, name, sizeof(name)));
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
        mpi_errno = MPIDI_TCP_peer_error(peer, "connect", err);
        goto fn_fail;
    }
    c->fd = fd;
    c->remote = sa;
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_CONNECTING);
    c->deadline = MPIDI_TCP_now() + MPIDI_TCP_global.timeout;
    watch(c);
    if (rc == 0)
        MPIDI_TCP_conn_connected(c);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int start_connect(int peer, MPIDI_TCP_conn_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_conn_t *c = MPIDI_TCP_conn_new(-1, peer, MPIDI_TCP_CONN_CLOSED, 1);

    MPIR_ERR_CHKANDJUMP(c == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = open_connect(c, peer);
    if (mpi_errno) {
        MPIDI_TCP_conn_free(c);
        if (MPIR_ERR_GET_CLASS(mpi_errno) == MPIX_ERR_PROC_FAILED) {
            MPIDI_TCP_global.dead_err[peer] = mpi_errno;
            MPIDI_TCP_global.n_dead++;
        }
        goto fn_fail;
    }
    MPIDI_TCP_global.vc[peer] = c;
    *out = c;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A connection closed before its verdict, or refused in favour of the
 * peer's: a new socket to the same peer, keeping the queued sends. */
static void reconnect(MPIDI_TCP_conn_t * c)
{
    int mpi_errno = open_connect(c, c->peer);
    if (mpi_errno)
        MPIDI_TCP_conn_fail(c, mpi_errno);
}

int MPIDI_TCP_conn_get(int rank, MPIDI_TCP_conn_t ** conn)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_conn_t *c;

    if (rank < 0 || rank >= MPIDI_TCP_global.n_peers) {
        MPIR_ERR_SET(mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION, "**tcp_nodynamic");
        return mpi_errno;
    }
    if (MPIDI_TCP_global.dead_err[rank])
        return MPIDI_TCP_global.dead_err[rank];
    c = MPIDI_TCP_global.vc[rank];
    if (c == NULL)
        return rank == MPIDI_TCP_global.rank ? self_connect(conn) : start_connect(rank, conn);
    *conn = c;
    return MPI_SUCCESS;
}

/* The kernel finished (or failed) TCP's handshake; the listener speaks first. */
void MPIDI_TCP_conn_connected(MPIDI_TCP_conn_t * c)
{
    int err = 0;
    socklen_t len = sizeof(err);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, "connect", err));
        return;
    }
    MPIDI_TCP_liveness_setup(c->fd);
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_AWAIT_CHALLENGE);
    c->deadline = 0;
    MPIDI_TCP_conn_events(c, EPOLLIN);
}

/* A proven incoming connection becomes peer's: what was queued on the
 * connection it replaces (ours, which lost a simultaneous connect) moves
 * onto it, in order. */
void MPIDI_TCP_conn_adopt(MPIDI_TCP_conn_t * c, int peer)
{
    MPIDI_TCP_conn_t *old = MPIDI_TCP_global.vc[peer];
    if (old) {
        c->sq_head = old->sq_head;
        c->sq_tail = old->sq_tail;
        c->awaits = old->awaits;
        old->sq_head = old->sq_tail = NULL;
        old->awaits = NULL;
        MPIDI_TCP_conn_free(old);
    }
    c->peer = peer;
    MPIDI_TCP_global.vc[peer] = c;
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_ESTABLISHED);
    c->deadline = 0;
}

/* The peer keeps the connection it initiated to us: ours closes, our sends
 * wait for theirs; should it never come, we connect again. */
void MPIDI_TCP_conn_yield(MPIDI_TCP_conn_t * c)
{
    conn_close_fd(c);
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_REFUSED);
    c->deadline = MPIDI_TCP_now() + MPIDI_TCP_global.timeout;
}

/* The connection ended: end of stream, a reset, a failed read or write. */
void MPIDI_TCP_conn_lost(MPIDI_TCP_conn_t * c, const char *what, int sys_errno)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    if (c->peer < 0) {
        MPIDI_TCP_conn_free(c);
        return;
    }
    if (c->got_close) {
        /* sends still queued to a peer that finalized fail, they are not dropped */
        MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, "the peer has called MPI_Finalize",
                                                    0));
        return;
    }
    if (c->outgoing && MPIDI_TCP_conn_is_pending(c->state) && !g->finalizing) {
        /* before the verdict: the listener may have dropped us while we were
         * away, or for a flood of strangers; a peer that is gone refuses the
         * next connect */
        double now = MPIDI_TCP_now();
        if (c->retries++ == 0)
            c->retry_since = now;
        if (now - c->retry_since > g->outage) {
            char why[128];
            snprintf(why, sizeof(why), "it closed %d connections before completing the "
                     "handshake in %d s", c->retries, g->outage);
            MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, why, sys_errno));
            return;
        }
        /* reconnected by MPIDI_TCP_check_timers: this call's epoll events may
         * still name the connection */
        conn_close_fd(c);
        MPIDI_TCP_set_writing(c, 0);
        MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_BACKOFF);
        c->deadline = now + MPIDI_TCP_retry_delay(c->retries);
        return;
    }
    MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, sys_errno ? what :
                                                "connection closed before MPI_Finalize",
                                                sys_errno));
}

/* Fails everything that depends on the connection's peer (when it is the
 * peer's chosen connection) and closes it. */
void MPIDI_TCP_conn_fail(MPIDI_TCP_conn_t * c, int err)
{
    int peer = c->peer;
    int chosen = peer >= 0 && MPIDI_TCP_global.vc[peer] == c;

    if (chosen && !MPIDI_TCP_global.dead_err[peer]) {
        MPIDI_TCP_global.dead_err[peer] = err;
        MPIDI_TCP_global.n_dead++;
    }
    MPIDI_TCP_sendq_fail(c, err);
    MPIDI_TCP_global.ops->failing(c, err);
    MPIDI_TCP_conn_free(c);
    if (chosen)
        MPIDI_TCP_global.ops->peer_died();
}

/* Deadlines of connections not yet established: TCP's handshake
 * (CONNECT_TIMEOUT), a stranger's time to prove itself, the next attempt
 * after a close or a refusal. */
void MPIDI_TCP_check_timers(double now)
{
    MPIDI_TCP_conn_t *c = MPIDI_TCP_global.conns, *next;

    for (; c; c = next) {
        next = c->next;
        if (!MPIDI_TCP_conn_is_pending(c->state) || c->deadline == 0 || now < c->deadline)
            continue;
        switch (c->state) {
            case MPIDI_TCP_CONN_CONNECTING:{
                    char what[80];
                    snprintf(what, sizeof(what), "no connection within %d s "
                             "(MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT)", MPIDI_TCP_global.timeout);
                    MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, what, 0));
                    break;
                }
            case MPIDI_TCP_CONN_UNPROVEN:
                MPIDI_TCP_refused(&c->remote, "no proof of membership in time");
                MPIDI_TCP_conn_free(c);
                break;
            default:   /* BACKOFF, REFUSED */
                reconnect(c);
                break;
        }
        next = MPIDI_TCP_global.conns;  /* the list may have changed */
    }
}
