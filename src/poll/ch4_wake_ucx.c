/*
 * mpich-multichannel: ch4:ucx in the wait that sleeps.  UCX's worker gives an
 * event fd (ucp_worker_get_efd) that poll(2) watches beside the wake socket
 * (ch4_wake.c); ucp_worker_arm, last before each sleep, makes it report what
 * arrives from then on, or says that events already wait.  The fd needs
 * UCP_FEATURE_WAKEUP, which leaves out of UCX's choice every transport that
 * cannot wake a worker: it is asked for only where waits sleep (sleep, or auto
 * oversubscribed), so a job that spins keeps UCX's usual transports.
 */
#include "mpidimpl.h"
#include "ch4_poll.h"
#include "ch4_wake_ucx.h"

static ucp_worker_h woken_worker;

static int arm(void)
{
    /* UCS_ERR_BUSY: events wait; the wait polls again */
    return ucp_worker_arm(woken_worker) == UCS_OK;
}

uint64_t MPIDI_POLL_ucx_features(void)
{
    return MPIDI_POLL_global.sleep ? UCP_FEATURE_WAKEUP : 0;
}

void MPIDI_POLL_ucx_worker(ucp_worker_h worker, int vci)
{
    int fd;
    if (!MPIDI_POLL_global.sleep)
        return;
    /* one fd per wait: worker 0's alone would sleep through what another VCI receives */
    if (vci != 0) {
        MPIDI_POLL_nm_no_fd("ch4:ucx opened a second worker (more VCIs), which one fd cannot watch");
        return;
    }
    if (ucp_worker_get_efd(worker, &fd) != UCS_OK) {
        MPIDI_POLL_nm_no_fd("ch4:ucx's worker gives no event fd");
        return;
    }
    woken_worker = worker;
    MPIDI_POLL_nm_arm = arm;
    MPIDI_POLL_global.nm_fd = fd;
}
