/*
 * mpich-multichannel: whether a connected peer is still there.
 *
 * The transport decides, never how long the peer computes: its kernel
 * acknowledges data and keepalive probes whatever the process does.  A
 * connection is stalled while TCP retransmits unacknowledged data or sends
 * probes (zero-window or keepalive) that go unanswered (TCP_INFO's
 * tcpi_retransmits, tcpi_probes); a peer whose stalled connection has had no
 * acknowledgement for MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT seconds
 * (tcpi_last_ack_recv) is gone.  Keepalive (probes from half the timeout,
 * four of them) makes an idle connection show the same.
 *
 * TCP_USER_TIMEOUT would be simpler but Linux applies it to a zero window
 * too: it kills the connection to a live rank that does not read for that
 * long (bench/zero-window.py: 2 s USER_TIMEOUT, receiver alive and not
 * reading, the connection died with ETIMEDOUT after 2-3 s).  A zero-window probe that the
 * peer answers resets tcpi_probes, so a busy peer never looks stalled here.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <netinet/tcp.h>
#include <sys/socket.h>

/* seconds between TCP_INFO checks of every established connection */
#define LIVENESS_PERIOD 1.0

/* A connected socket: keepalive within the outage bound, and TCP_NODELAY */
void MPIDI_TCP_liveness_setup(int fd)
{
    int t = MPIDI_TCP_global.outage;
    int one = 1, idle = MPL_MAX(1, t / 2), intvl = MPL_MAX(1, t / 8), cnt = 4;

    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    if (MPIDI_TCP_global.nodelay)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int gone(int fd, int outage)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return 0;
    return MPIDI_TCP_peer_gone(ti.tcpi_retransmits, ti.tcpi_probes, ti.tcpi_last_ack_recv, outage);
}

void MPIDI_TCP_liveness_check(double now)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    if (now < g->next_liveness)
        return;
    g->next_liveness = now + LIVENESS_PERIOD;
    for (MPIDI_TCP_conn_t * c = g->conns, *next; c; c = next) {
        next = c->next;
        /* a connect in flight is CONNECT_TIMEOUT's; a stranger's has its own deadline */
        if (c->fd < 0 || c->peer < 0 || c->peer == g->rank ||
            c->state == MPIDI_TCP_CONN_CONNECTING || c->state == MPIDI_TCP_CONN_UNPROVEN)
            continue;
        if (gone(c->fd, g->outage)) {
            char what[128];
            snprintf(what, sizeof(what), "its host acknowledged nothing for %d s "
                     "(MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT)", g->outage);
            MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, what, 0));
            next = g->conns;    /* the list changed */
        }
    }
}
