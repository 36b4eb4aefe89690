/*
 * mpich-multichannel: ch4:ofi in the wait that sleeps.  A completion queue
 * opened with FI_WAIT_FD gives an fd (fi_control FI_GETWAIT) that poll(2)
 * watches beside the wake socket (ch4_wake.c); fi_trywait, last before each
 * sleep, says whether the fd will report what comes next or completions
 * already wait.  libfabric's tcp (and rxm over it) puts its sockets in that
 * fd's set.  A wait fd costs the provider a signal per completion, so it is
 * asked for only where waits sleep (sleep, or auto oversubscribed); a
 * provider without one leaves the waits to yield, saying so.
 */
#include "mpidimpl.h"
#include "ch4_poll.h"
#include "ch4_wake_ofi.h"

static struct fid_fabric *woken_fabric;
static struct fid_cq *woken_cq;

static int arm(void)
{
    struct fid *fids[1] = { &woken_cq->fid };
    int ret = fi_trywait(woken_fabric, fids, 1);
    /* -FI_EAGAIN: completions wait; the wait polls again */
    if (ret != FI_SUCCESS && ret != -FI_EAGAIN)
        MPIDI_POLL_nm_no_fd("ch4:ofi's provider cannot say whether its completion queue's "
                            "fd will report (fi_trywait)");
    return ret == FI_SUCCESS;
}

enum fi_wait_obj MPIDI_POLL_ofi_cq_wait(struct fid_domain *domain, struct fi_cq_attr *attr)
{
    if (!MPIDI_POLL_global.sleep || woken_cq)
        return attr->wait_obj;
    /* a provider refuses a wait object it lacks when the queue opens, which
     * MPICH would take as fatal: try it on a queue of its own first */
    struct fi_cq_attr probe = *attr;
    struct fid_cq *cq;
    probe.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(domain, &probe, &cq, NULL) != FI_SUCCESS)
        return attr->wait_obj;
    fi_close(&cq->fid);
    return FI_WAIT_FD;
}

void MPIDI_POLL_ofi_cq(struct fid_fabric *fabric, struct fid_cq *cq)
{
    int fd;
    if (!MPIDI_POLL_global.sleep)
        return;
    /* one fd for the wait: a second queue would go unwatched */
    if (woken_cq) {
        MPIDI_POLL_nm_no_fd("ch4:ofi opened a second completion queue (more VCIs or NICs), "
                            "which one fd cannot watch");
        return;
    }
    if (fi_control(&cq->fid, FI_GETWAIT, &fd) != FI_SUCCESS) {
        MPIDI_POLL_nm_no_fd("ch4:ofi's provider gives its completion queue no wait fd");
        return;
    }
    woken_fabric = fabric;
    woken_cq = cq;
    MPIDI_POLL_nm_arm = arm;
    MPIDI_POLL_global.nm_fd = fd;
}
