/*
 * mpich-multichannel: ch4:tcp progress.
 *
 * One epoll_wait per call (no timeout) and, for each ready connection, a
 * bounded amount of reading (MPIDI_TCP_READ_BUDGET, tcp_rx.c) and writing
 * (what the socket takes), then the timers.  The number of messages
 * dispatched is reported to the polling arbiter.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <sys/epoll.h>

/* The only connection, when the job gives this rank a single peer: it is read
 * directly, sparing the epoll_wait that would precede each read (one system
 * call per message on the latency path, as a raw socket ping-pong has). */
static MPIDI_TCP_conn_t *solo(void)
{
    MPIDI_TCP_conn_t *c = MPIDI_TCP_global.conns;
    return c && c->next == NULL && c->state == MPIDI_TCP_CONN_ESTABLISHED &&
        !c->writing && MPIDI_TCP_global.n_pending == 0 ? c : NULL;
}

/* Everything epoll reports: new connections, connects completing, reads, EPOLLOUT. */
static int poll_events(void)
{
    int mpi_errno = MPI_SUCCESS;
    struct epoll_event ev[MPIDI_TCP_MAX_EVENTS];
    int n = epoll_wait(MPIDI_TCP_global.epfd, ev, MPIDI_TCP_MAX_EVENTS, 0);
    for (int i = 0; i < n && mpi_errno == MPI_SUCCESS; i++) {
        MPIDI_TCP_conn_t *c = ev[i].data.ptr;
        if (c == NULL) {
            MPIDI_TCP_accept();
            continue;
        }
        if (c->zombie)
            continue;
        if (c->state == MPIDI_TCP_CONN_CONNECTING) {
            MPIDI_TCP_conn_connected(c);
            continue;
        }
        if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            mpi_errno = MPIDI_TCP_conn_read(c);
        if (!c->zombie && (ev[i].events & EPOLLOUT))
            MPIDI_TCP_flush(c);
        if (!c->zombie && c->close_after_ctl && c->ctl_off == c->ctl_len)
            MPIDI_TCP_conn_free(c);
    }
    return mpi_errno;
}

/* For the polling arbiter (ch4_poll.h): whether anything is in flight.  A
 * job on one node reaches no rank through ch4:tcp; its port still takes
 * strangers, who make it busy until they are turned away. */
MPIDI_POLL_nm_state_t MPIDI_TCP_poll_state(void)
{
    const MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    if (g->n_pending || g->n_unproven || g->n_writing || g->n_awaits || g->n_rx_active ||
        g->finalizing)
        return MPIDI_POLL_NM_BUSY;
    /* processes of other jobs may call at any time, wherever they are */
    return MPIR_Process.num_nodes == 1 && g->n_peers == g->size && !g->ports ?
        MPIDI_POLL_NM_UNUSED : MPIDI_POLL_NM_QUIET;
}

int MPIDI_TCP_progress(int *made_progress)
{
    int mpi_errno;
    static unsigned calls;
    MPIDI_TCP_conn_t *only;

    MPIDI_TCP_global.n_arrived = MPIDI_TCP_global.n_read = 0;
    /* one call in 16 still asks epoll: the listener, errors, EPOLLOUT */
    if ((++calls & 15) && (only = solo()) != NULL)
        mpi_errno = MPIDI_TCP_conn_read(only);
    else
        mpi_errno = poll_events();
    if (MPIDI_TCP_global.n_writing)
        MPIDI_TCP_flush_all();
    /* timers: the clock is read on one call in 64 */
    double now;
    if ((calls & 63) == 0 && (now = MPIDI_TCP_now()) >= MPIDI_TCP_global.next_timer) {
        /* deadlines, liveness, and receives waiting on peers that may be gone */
        MPIDI_TCP_global.next_timer = now + MPIDI_TCP_TIMER_PERIOD;
        if (MPIDI_TCP_global.n_pending)
            MPIDI_TCP_check_timers(now);
        MPIDI_TCP_liveness_check(now);
        MPIDI_TCP_sweep_posted(1);
    }
    MPIDI_TCP_reap();
    if (MPIDI_TCP_global.n_arrived)
        MPIDI_POLL_ARRIVED(MPIDI_POLL_NM, MPIDI_TCP_global.n_arrived);
    else if (MPIDI_TCP_global.n_read)
        /* bytes of a message not yet whole: the wait is not idle */
        MPIDI_POLL_PROGRESSED();
    *made_progress = MPIDI_TCP_global.n_arrived > 0;
    return mpi_errno;
}
