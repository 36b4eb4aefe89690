/*
 * mpich-multichannel: ch4 glue of the wait that sleeps (poll_wake.h): the
 * node's region of wake lines, set up with the posix shared memory, and the
 * step each blocking wait takes after a pass that found nothing.
 */
#include "mpidimpl.h"
#include "ch4_poll.h"
#ifndef MPIDI_CH4_DIRECT_NETMOD
#include "../shm/posix/posix_impl.h"
#endif

/* the longest sleep: the bound on what cannot signal (MPICH's posix
 * release-gather collectives, a peer's failed wake socket, netmod timers)
 * and on the time an idle rank costs, one pass per timeout */
#define SLEEP_MAX_MS 10

MPIDI_POLL_wake_t MPIDI_POLL_wake = {.fd = -1 };
int (*MPIDI_POLL_nm_arm) (void);

static size_t region_bytes;

/* Sleep on is not possible here: the wait yields instead (an explicit
 * `sleep` says so once). */
static void no_sleep(const char *why)
{
    MPIDI_POLL_global.sleep = 0;
    /* the other ranks fall back alike (one netmod, one mode): no signals */
    MPIDI_POLL_wake.on = 0;
    if (MPIR_CVAR_CH4_POLL_WAIT_MODE == MPIR_CVAR_CH4_POLL_WAIT_MODE_sleep &&
        MPIR_Process.rank == 0)
        fprintf(stderr, "ch4 poll: MPIR_CVAR_CH4_POLL_WAIT_MODE=sleep: %s; waits yield "
                "instead\n", why);
    /* a YIELD_AFTER set by hand holds */
    if (MPIDI_POLL_global.yield_after == 0 && MPIR_CVAR_CH4_POLL_YIELD_AFTER == -1)
        MPIDI_POLL_global.yield_after = MPIDI_POLL_YIELD_AUTO;
}

int MPIDI_POLL_wake_init(MPIR_Comm * node_comm)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_POLL_wake_t *w = &MPIDI_POLL_wake;
    MPIDI_POLL_wake_line_t *lines = NULL;
    int nlocal = MPIR_Process.local_size;

    if (w->lines)
        goto fn_exit;
    /* every local rank joins the allocation, whatever its mode */
    if (nlocal > 1) {
        region_bytes = nlocal * sizeof(MPIDI_POLL_wake_line_t);
        mpi_errno = MMC_node_shm_alloc(node_comm, "wake", region_bytes, (void **) &lines);
        MPIR_ERR_CHECK(mpi_errno);
    }
    w->lines = lines;
    if (!MPIDI_POLL_global.sleep)
        goto fn_exit;
    /* 5.0 sets up shared memory after MPI_Init's first blocking waits, which
     * opened the socket (MPIDI_POLL_wait_idle) */
    int err = w->fd >= 0 ? 0 : MPIDI_POLL_wake_open(w, lines, MPIR_Process.local_rank);
    if (err) {
        no_sleep(strerror(err));
        goto fn_exit;
    }
    MPIDI_POLL_wake_publish(w, lines, MPIR_Process.local_rank);
    w->on = lines != NULL;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_POLL_wake_finalize(void)
{
    MPIDI_POLL_wake_t *w = &MPIDI_POLL_wake;
    int mpi_errno = MPI_SUCCESS;

    /* the waits of finalize's last steps spin */
    MPIDI_POLL_global.sleep = 0;
    MPIDI_POLL_wake_close(w);
    if (w->lines)
        mpi_errno = MMC_node_shm_free(w->lines, region_bytes);
    w->lines = NULL;
    return mpi_errno;
}

/* what the first wait says when nm_fd is -1 */
static const char *nm_no_fd = "the netmod has no fd to wait on";

void MPIDI_POLL_nm_no_fd(const char *why)
{
    MPIDI_POLL_global.nm_fd = -1;
    MPIDI_POLL_nm_arm = NULL;
    nm_no_fd = why;
}

void MPIDI_POLL_nm_gone(void)
{
    MPIDI_POLL_global.sleep = 0;
    MPIDI_POLL_nm_no_fd("the netmod is finalized");
}

/* A request completed by a call that moves no message (MPI_Grequest_complete
 * from another thread, inside the global critical section): no pass sees it,
 * so a thread asleep in a wait, perhaps for it, is woken.  The sleeper set
 * `sleeper` before it left the critical section: no wake-up is lost. */
void MPIDI_POLL_completed_elsewhere(void)
{
    if (__atomic_load_n(&MPIDI_POLL_wake.sleeper, __ATOMIC_ACQUIRE))
        MPIDI_POLL_wake_self(&MPIDI_POLL_wake);
}

/* The pass found nothing, but this wait does not sleep after all. */
static void stay_awake(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_wake_t * w)
{
    MPIDI_POLL_wake_disarm(w);
    a->armed = 0;
}

/* Whether only an arrival, or the netmod's fd, can end the wait.  ch4:tcp's
 * work in flight is all the epoll set's (connects, handshakes, bytes its
 * sockets have not taken, the rest of a message) or its timers'; the posix
 * layer's postponed sends wait for cells a receiver frees without a signal. */
static int only_arrivals(void)
{
#ifndef MPIDI_CH4_DIRECT_NETMOD
    if (MMC_POSIX_PER_VCI(0).postponed_queue)
        return 0;
#endif
    return !__atomic_load_n(&MPIDI_POLL_wake.sleeper, __ATOMIC_ACQUIRE);
}

void MPIDI_POLL_wait_idle(void)
{
    MPIDI_POLL_arbiter_t *a = &MPIDI_POLL_global;
    MPIDI_POLL_wake_t *w = &MPIDI_POLL_wake;

    /* a netmod that gives no fd to wait on (MPIDI_POLL_nm_no_fd says why) */
    if (unlikely(a->nm_fd < 0)) {
        no_sleep(nm_no_fd);
        return;
    }
    /* no shared memory set up (no local peer): the netmod alone wakes it */
    if (unlikely(w->fd < 0)) {
        int err = MPIDI_POLL_wake_open(w, NULL, 0);
        if (err) {
            no_sleep(strerror(err));
            return;
        }
    }
    unsigned long long seen = a->wait_seen;
    MPIDI_POLL_idle_t step = MPIDI_POLL_wait_done(a, only_arrivals());
    /* another thread asleep waits perhaps for what this pass found (whether
     * this thread was armed or not) */
    if (seen != a->wait_seen && __atomic_load_n(&w->sleeper, __ATOMIC_ACQUIRE))
        MPIDI_POLL_wake_self(w);
    switch (step) {
        case MPIDI_POLL_IDLE_ARM:
            MPIDI_POLL_wake_arm(w);
            return;
        case MPIDI_POLL_IDLE_DISARM:
            MPIDI_POLL_wake_disarm(w);
            return;
        case MPIDI_POLL_IDLE_SLEEP:
            break;
        default:
            return;
    }
    /* one thread sleeps at a time, outside the global critical section */
    if (__atomic_exchange_n(&w->sleeper, 1, __ATOMIC_ACQ_REL)) {
        stay_awake(a, w);
        return;
    }
    if (MPIDI_POLL_nm_arm && !MPIDI_POLL_nm_arm()) {
        __atomic_store_n(&w->sleeper, 0, __ATOMIC_RELEASE);
        stay_awake(a, w);
        return;
    }
    MPL_time_t t0, t1;
    MPL_wtime(&t0);
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    int signalled = MPIDI_POLL_wake_sleep(w, a->nm_fd, SLEEP_MAX_MS);
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    __atomic_store_n(&w->sleeper, 0, __ATOMIC_RELEASE);
    MPL_wtime(&t1);
    double s;
    MPL_wtime_diff(&t0, &t1, &s);
    MPIDI_POLL_woke(a, signalled, (unsigned long long) (s * 1e9));
}
