/*
 * mpich-multichannel: ch4:tcp CVARs, initialization and finalization.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include "mpidu_bc.h"

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
        rendezvous. At most 16777216. An unexpected eager message larger than
        MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE is held in a buffer of its own size until
        a receive matches it.

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
        Seconds after which a peer that cannot be reached fails the requests that depend on
        it with an MPI error; keepalive finds a silent peer on an idle connection within
        about as long. Default 30. Must be 1 or more.

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
    if (MPIDI_TCP_parse_port_range(MPIR_CVAR_CH4_TCP_PORT_RANGE, &g->port_lo, &g->port_hi))
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                             "MPIR_CVAR_CH4_TCP_PORT_RANGE (lo:hi)", MPIR_CVAR_CH4_TCP_PORT_RANGE);
    g->sndbuf = MPIR_CVAR_CH4_TCP_SNDBUF_SIZE;
    g->rcvbuf = MPIR_CVAR_CH4_TCP_RCVBUF_SIZE;
    g->nodelay = MPIR_CVAR_CH4_TCP_NODELAY;
    g->timeout = MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_TCP_init_local(int *tag_bits)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    mpi_errno = check_cvars();
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_ERR_CHKANDJUMP(MPIDI_global.n_vcis != 1, mpi_errno, MPI_ERR_OTHER, "**tcp_vcis");
    g->rank = MPIR_Process.rank;
    g->size = MPIR_Process.size;
    g->listen_fd = -1;
    g->addrs = MPL_calloc(g->size, sizeof(*g->addrs), MPL_MEM_ADDRESS);
    g->vc = MPL_calloc(g->size, sizeof(*g->vc), MPL_MEM_ADDRESS);
    g->dead_err = MPL_calloc(g->size, sizeof(*g->dead_err), MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDJUMP(!g->addrs || !g->vc || !g->dead_err, mpi_errno, MPI_ERR_OTHER, "**nomem");

    g->epfd = epoll_create1(EPOLL_CLOEXEC);
    MPIR_ERR_CHKANDJUMP1(g->epfd < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_epoll", "**tcp_epoll %d",
                         errno);
    mpi_errno = MPIDI_TCP_sock_listen();
    MPIR_ERR_CHECK(mpi_errno);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL };
    epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->listen_fd, &ev);
    g->addrs[g->rank] = g->me;

    if (MPIR_CVAR_DEBUG_SUMMARY && g->rank == 0) {
        char addr[64];
        printf("==== ch4:tcp ====\nrank 0 listens on %s (%s)\neager limit: %ld bytes\n"
               "socket buffers: snd %d rcv %d (0 = kernel autotuning)\nTCP_NODELAY: %d\n"
               "connect timeout: %d s\n=================\n",
               MPIDI_TCP_addr_str(&g->me, addr, sizeof(addr)), g->ifname,
               (long) MPIDI_TCP_eager_max, g->sndbuf, g->rcvbuf, g->nodelay, g->timeout);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Every rank's listening address, through PMI. */
int MPIDI_TCP_init_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    void *table = NULL;
    int len = sizeof(MPIDI_TCP_bc_t);

    mpi_errno = MPIDU_bc_table_create(MPIR_Process.rank, MPIR_Process.size,
                                      MPIR_Process.node_map, &MPIDI_TCP_global.me,
                                      sizeof(MPIDI_TCP_bc_t), TRUE, FALSE, &table, &len);
    MPIR_ERR_CHECK(mpi_errno);
    memcpy(MPIDI_TCP_global.addrs, table, MPIR_Process.size * sizeof(MPIDI_TCP_bc_t));
    mpi_errno = MPIDU_bc_table_destroy();
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_TCP_post_init(void)
{
    return MPI_SUCCESS;
}

/* Messages still queued, counted in entries. */
static long queued(void)
{
    long n = 0;
    for (MPIDI_TCP_conn_t * c = MPIDI_TCP_global.conns; c; c = c->next)
        for (MPIDI_TCP_sendq_t * e = c->sq_head; e; e = e->next)
            n++;
    return n;
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
        int outq = 0;
        if (!c->self_rx && c->peer != MPIDI_TCP_global.rank &&
            ioctl(c->fd, SIOCOUTQ, &outq) == 0)
            busy += outq;
    }
    return busy;
}

/* Progress until busy() is 0; gives up only after MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT
 * seconds in which it did not go down (a slow peer delays, a stuck one does not hang). */
static int drain(long (*busy) (void))
{
    int mpi_errno = MPI_SUCCESS, made;
    long last = busy(), now_busy;
    double deadline = MPIDI_TCP_now() + MPIDI_TCP_global.timeout;

    while ((now_busy = busy()) > 0 && MPIDI_TCP_now() < deadline) {
        if (now_busy < last) {
            last = now_busy;
            deadline = MPIDI_TCP_now() + MPIDI_TCP_global.timeout;
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
    close(g->listen_fd);
    close(g->epfd);
    MPL_free(g->addrs);
    MPL_free(g->vc);
    MPL_free(g->dead_err);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
