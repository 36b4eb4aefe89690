/*
 * mpich-multichannel: ch4:tcp CVARs, initialization and finalization.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/sockios.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH4_TCP
      description : cvars that control the ch4:tcp netmod (TCP sockets)

cvars:
    - name        : MPIR_CVAR_CH4_TCP_SNDBUF_SIZE
      category    : CH4_TCP
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        SO_SNDBUF in bytes of every ch4:tcp connection, set before listen and connect.
        Default 0: leave the kernel's autotuning (net.ipv4.tcp_wmem). The kernel caps the
        size at net.core.wmem_max; when it grants less than 90% of the value, a warning
        names the sysctl to raise. Must be 0 or more.

    - name        : MPIR_CVAR_CH4_TCP_RCVBUF_SIZE
      category    : CH4_TCP
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        SO_RCVBUF in bytes of every ch4:tcp connection, set before listen and connect.
        Default 0: leave the kernel's autotuning (net.ipv4.tcp_rmem). The kernel caps the
        size at net.core.rmem_max; when it grants less than 90% of the value, a warning
        names the sysctl to raise. On a long link it must reach round-trip time x
        bandwidth. Must be 0 or more.

    - name        : MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE
      category    : CH4_TCP
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Largest message in bytes that ch4:tcp sends eagerly, with its header; a larger one
        waits for the receiver to match it (rendezvous, one extra round trip). Default -1:
        2097152 (2 MiB), chosen by measurement (doc/tcp.md). 0 sends every nonempty message by
        rendezvous. At most 16777216. An unexpected eager message larger than MPICH's pack
        buffers (MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE on MPICH 4.0, MPIR_CVAR_CH4_PACK_BUFFER_SIZE
        on 4.1 and later) is held in a buffer of its own size until a receive matches it.

    - name        : MPIR_CVAR_CH4_TCP_NODELAY
      category    : CH4_TCP
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Set TCP_NODELAY on every ch4:tcp connection, so small messages leave at once
        instead of waiting for Nagle's algorithm. Default true.

    - name        : MPIR_CVAR_CH4_TCP_IFNAME
      category    : CH4_TCP
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Network interface whose IPv4 address ch4:tcp listens on and publishes to the
        other ranks. Default "": the interface of the host name's address, else of the
        default route, else the first one that is up; never loopback (unless every rank
        is on one host), a point-to-point tunnel or a container bridge. An interface
        that does not exist stops MPI_Init with an error.

    - name        : MPIR_CVAR_CH4_TCP_PORT_RANGE
      category    : CH4_TCP
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Ports ch4:tcp may listen on, as "lo:hi" (1 <= lo <= hi <= 65535), e.g. for a
        firewall. Default "": any port the kernel picks.

    - name        : MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT
      category    : CH4_TCP
      type        : int
      default     : 30
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Seconds the network may take to complete TCP's own connection handshake to a
        peer (an address that does not answer) before that peer fails the requests that
        depend on it. Never a bound on how long a live peer may stay outside MPI: once the
        kernel has connected, ch4:tcp waits for the peer's proof of membership as long as
        it takes. Default 30. Must be 1 or more.

    - name        : MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT
      category    : CH4_TCP
      type        : int
      default     : 120
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Seconds a connected peer's host may stay silent at the TCP level (acknowledging
        neither data nor keepalive probes) before that peer fails the requests that depend
        on it. A network outage shorter than half of it heals with nothing lost (TCP's
        retransmission backoff can carry a longer one past it); a peer that is alive but
        outside MPI still acknowledges at the TCP level and is never timed out. Default
        120. Must be 2 or more.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_TCP_global_t MPIDI_TCP_global;
MPI_Aint MPIDI_TCP_eager_max;

static int cvar_error(const char *name, long value)
{
    char val[32];
    snprintf(val, sizeof(val), "%ld", value);
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s", name, val);
}

/* Every CVAR checked: an invalid value stops MPI_Init naming it. */
static int check_cvars(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    MPIDI_TCP_eager_max = MPIDI_TCP_eager_limit(MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE);
    if (MPIDI_TCP_eager_max < 0)
        return cvar_error("MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE",
                          MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE);
    if (MPIDI_TCP_check_bufsize(MPIR_CVAR_CH4_TCP_SNDBUF_SIZE))
        return cvar_error("MPIR_CVAR_CH4_TCP_SNDBUF_SIZE", MPIR_CVAR_CH4_TCP_SNDBUF_SIZE);
    if (MPIDI_TCP_check_bufsize(MPIR_CVAR_CH4_TCP_RCVBUF_SIZE))
        return cvar_error("MPIR_CVAR_CH4_TCP_RCVBUF_SIZE", MPIR_CVAR_CH4_TCP_RCVBUF_SIZE);
    if (MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT < 1)
        return cvar_error("MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT", MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT);
    if (MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT < 2)
        return cvar_error("MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT", MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT);
    if (MPIDI_TCP_parse_port_range(MPIR_CVAR_CH4_TCP_PORT_RANGE, &g->port_lo, &g->port_hi))
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                             "MPIR_CVAR_CH4_TCP_PORT_RANGE (lo:hi)", MPIR_CVAR_CH4_TCP_PORT_RANGE);
    g->sndbuf = MPIR_CVAR_CH4_TCP_SNDBUF_SIZE;
    g->rcvbuf = MPIR_CVAR_CH4_TCP_RCVBUF_SIZE;
    g->nodelay = MPIR_CVAR_CH4_TCP_NODELAY;
    g->timeout = MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT;
    g->outage = MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A rank may end up with a connection to every peer, plus the unproven ones
 * it is checking: raise the soft limit towards that, and say so when the hard
 * limit is lower. */
static void check_nofile(void)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    struct rlimit rl;
    rlim_t want = (rlim_t) g->size + g->unproven_max + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    if (rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < want && MPIR_Process.local_rank == 0)
        fprintf(stderr, "ch4:tcp warning: RLIMIT_NOFILE is %lu; a rank that talks to all %d "
                "peers needs up to %lu descriptors (one per peer, %d for connections being "
                "checked, 64 for the rest): raise it (ulimit -n) or a rank may run out\n",
                (unsigned long) rl.rlim_cur, g->size - 1, (unsigned long) want, g->unproven_max);
}

int MPIDI_TCP_init_local(int *tag_bits)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    mpi_errno = check_cvars();
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(MMC_N_TOTAL_VCIS != 1, mpi_errno, MPI_ERR_OTHER, "**tcp_vcis");
    MPIR_ERR_CHKANDJUMP(MPIDI_TCP_auth_init() != 0, mpi_errno, MPI_ERR_OTHER, "**tcp_crypto");
    static const MPIDI_TCP_conn_ops_t ops = {
        .sendq_refill = MPIDI_TCP_am_sendq_refill,
        .sendq_done = MPIDI_TCP_am_sendq_done,
        .failing = MPIDI_TCP_conn_failing,
        .peer_died = MPIDI_TCP_peer_died,
        .accepted = MPIDI_TCP_hs_accepted
    };
    g->ops = &ops;
    g->rank = MPIR_Process.rank;
    g->size = MPIR_Process.size;
    g->listen_fd = -1;
    MPIR_ERR_CHKANDJUMP(MPIDI_TCP_peers_init(g->size), mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = MPIDI_TCP_accept_init();
    MPIR_ERR_CHECK(mpi_errno);
    check_nofile();

    g->epfd = epoll_create1(EPOLL_CLOEXEC);
    MPIR_ERR_CHKANDJUMP1(g->epfd < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_epoll", "**tcp_epoll %d",
                         errno);
    mpi_errno = MPIDI_TCP_sock_listen();
    MPIR_ERR_CHECK(mpi_errno);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL };
    epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->listen_fd, &ev);
    /* the key proves connections to us; it leaves this process only through PMI */
    MPIDI_TCP_auth_random(g->me.key, sizeof(g->me.key));
    /* the public key other jobs' processes prove connections with (tcp_auth.h) */
    MPIDI_TCP_auth_kx_keypair(g->me.pk, g->kx_sk);
    g->me.eager_max = (uint32_t) MPIDI_TCP_eager_max;
    g->cards[g->rank] = g->me;
    /* the world's av entries name their peers (MPIDI_TCP_RANK_TO_PEER) */
    for (int i = 0; i < g->size; i++)
        MPIDI_global.avt_mgr.av_table0->table[i].netmod.tcp.peer_plus1 = i + 1;
    /* the arbiter skips the netmod while nothing is in flight (doc/arbiter.md) */
    MPIDI_POLL_global.nm_state = MPIDI_TCP_poll_state;
    /* ... and a wait that sleeps wakes when the epoll set has work */
    MPIDI_POLL_global.nm_fd = g->epfd;

    if (MPIR_CVAR_DEBUG_SUMMARY && g->rank == 0) {
        char addr[64];
        printf("==== ch4:tcp ====\nrank 0 listens on %s (%s)\neager limit: %ld bytes\n"
               "socket buffers: snd %d rcv %d (0 = kernel autotuning)\nTCP_NODELAY: %d\n"
               "connect timeout: %d s\noutage timeout: %d s\n=================\n",
               MPIDI_TCP_addr_str(&g->me.addr, addr, sizeof(addr)), g->ifname,
               (long) MPIDI_TCP_eager_max, g->sndbuf, g->rcvbuf, g->nodelay, g->timeout,
               g->outage);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Messages of c still queued, counted in entries. */
static long queued_msgs(MPIDI_TCP_conn_t * c)
{
    long n = 0;
    for (MPIDI_TCP_sendq_t * e = c->sq_head; e; e = e->next)
        n++;
    return n;
}

static long queued(void)
{
    long n = 0;
    for (MPIDI_TCP_conn_t * c = MPIDI_TCP_global.conns; c; c = c->next)
        n += queued_msgs(c);
    return n;
}

/* Bytes written to c's socket that its peer has not acknowledged. */
static int outq_bytes(MPIDI_TCP_conn_t * c)
{
    int outq = 0;
    if (c->fd < 0 || c->self_rx || c->peer == MPIDI_TCP_global.rank ||
        ioctl(c->fd, SIOCOUTQ, &outq) != 0)
        return 0;
    return outq;
}

/* Sends CLOSE where nothing else is left to send; returns the bytes written
 * but not yet acknowledged by the peers, plus 1 per CLOSE not yet written. */
static long unacked(void)
{
    long busy = 0;
    for (MPIDI_TCP_conn_t * c = MPIDI_TCP_global.conns, *next; c; c = next) {
        next = c->next;
        if (c->state != MPIDI_TCP_CONN_ESTABLISHED || c->sq_head)
            continue;
        if (!c->sent_close) {
            MPIDI_TCP_conn_ctl(c, MPIDI_TCP_OP_CLOSE, NULL, 0);
            MPIDI_TCP_flush(c);
        }
        if (c->zombie || c->fd < 0)
            continue;
        if (c->ctl_off < c->ctl_len) {
            busy++;
            continue;
        }
        if (!c->shut_wr) {
            shutdown(c->fd, SHUT_WR);
            c->shut_wr = 1;
        }
        /* closing with unacknowledged data could reset the connection and lose it */
        busy += outq_bytes(c);
    }
    return busy;
}

/* Progress until busy() is 0, or MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT seconds in
 * which it did not go down (a slow peer delays, a stuck one does not hang):
 * then each peer still owed data is named. */
static int drain(long (*busy) (void))
{
    int mpi_errno = MPI_SUCCESS, made;
    long last = busy(), now_busy;
    double deadline = MPIDI_TCP_now() + MPIDI_TCP_global.outage;

    while ((now_busy = busy()) > 0) {
        if (now_busy < last) {
            last = now_busy;
            deadline = MPIDI_TCP_now() + MPIDI_TCP_global.outage;
        }
        if (MPIDI_TCP_now() >= deadline) {
            for (MPIDI_TCP_conn_t * c = MPIDI_TCP_global.conns; c; c = c->next) {
                long msgs = queued_msgs(c);
                int bytes = outq_bytes(c);
                char addr[64];
                if (c->peer < 0 || (msgs == 0 && bytes == 0))
                    continue;
                fprintf(stderr, "ch4:tcp warning: rank %d: MPI_Finalize gave up after %d s "
                        "without progress: rank %d (%s) has not acknowledged %d bytes, "
                        "%ld messages not sent\n", MPIDI_TCP_global.rank,
                        MPIDI_TCP_global.outage, c->peer,
                        MPIDI_TCP_addr_str(MPIDI_TCP_ADDR(c->peer), addr, sizeof(addr)),
                        bytes, msgs);
            }
            break;
        }
        mpi_errno = MPIDI_TCP_progress(&made);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Everything queued goes out, then CLOSE on every connection, and each
 * socket is closed once the peer has acknowledged all of it. */
int MPIDI_TCP_mpi_finalize_hook(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    g->finalizing = 1;
    mpi_errno = drain(queued);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = drain(unacked);
    MPIR_ERR_CHECK(mpi_errno);
    while (g->conns) {
        MPIDI_TCP_conn_t *c = g->conns;
        MPIDI_TCP_sendq_fail(c, MPI_ERR_OTHER);
        while (c->awaits) {
            MPIDI_TCP_await_t *a = c->awaits;
            c->awaits = a->next;
            MPL_free(a);
        }
        MPIDI_TCP_conn_free(c);
    }
    MPIDI_TCP_reap();
    MPIDI_TCP_dyn_finalize();
    close(g->listen_fd);
    MPIDI_POLL_nm_gone();
    close(g->epfd);
    if (g->spare_fd >= 0)
        close(g->spare_fd);
    /* the keys prove membership in this job: not left in freed memory */
    MPIDI_TCP_auth_wipe(g->cards, g->n_peers * sizeof(*g->cards));
    MPIDI_TCP_auth_wipe(&g->me, sizeof(g->me));
    MPIDI_TCP_auth_wipe(g->kx_sk, sizeof(g->kx_sk));
    if (g->comm_map) {
        MPIDIU_map_destroy(g->comm_map);
        g->comm_map = NULL;
        g->last_comm = NULL;
    }
    MPL_free(g->cards);
    MPL_free(g->vc);
    MPL_free(g->dead_err);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
