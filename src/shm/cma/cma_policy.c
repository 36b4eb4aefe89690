/*
 * mpich-multichannel: CMA decisions that need no MPICH (see cma_policy.h).
 */
#include "cma_policy.h"


/* Bytes of iov reachable from pos within max_iov nonempty entries. */
static size_t reachable(const struct iovec *iov, int niov, MPIDI_CMA_pos_t pos, int max_iov)
{
    size_t sum = 0;
    for (int i = pos.idx, k = 0; i < niov && k < max_iov; i++) {
        size_t len = iov[i].iov_len - (i == pos.idx ? pos.off : 0);
        if (len) {
            sum += len;
            k++;
        }
    }
    return sum;
}

static int fill(const struct iovec *iov, int niov, MPIDI_CMA_pos_t pos, size_t bytes,
                struct iovec *out)
{
    int k = 0;
    for (int i = pos.idx; i < niov && bytes; i++) {
        size_t off = i == pos.idx ? pos.off : 0;
        size_t len = iov[i].iov_len - off;
        if (len == 0)
            continue;
        if (len > bytes)
            len = bytes;
        out[k].iov_base = (char *) iov[i].iov_base + off;
        out[k++].iov_len = len;
        bytes -= len;
    }
    return k;
}

size_t MPIDI_CMA_batch(const struct iovec *local, int nlocal, MPIDI_CMA_pos_t lpos,
                       const struct iovec *remote, int nremote, MPIDI_CMA_pos_t rpos,
                       int max_iov, size_t max_bytes,
                       struct iovec *lout, int *nl, struct iovec *rout, int *nr)
{
    size_t n = reachable(local, nlocal, lpos, max_iov);
    size_t r = reachable(remote, nremote, rpos, max_iov);
    if (r < n)
        n = r;
    if (max_bytes < n)
        n = max_bytes;
    *nl = n ? fill(local, nlocal, lpos, n, lout) : 0;
    *nr = n ? fill(remote, nremote, rpos, n, rout) : 0;
    return n;
}

void MPIDI_CMA_advance(const struct iovec *iov, int niov, MPIDI_CMA_pos_t * pos, size_t n)
{
    while (pos->idx < niov) {
        size_t left = iov[pos->idx].iov_len - pos->off;
        if (n < left) {
            pos->off += n;
            return;
        }
        n -= left;
        pos->idx++;
        pos->off = 0;
    }
}

MPIDI_CMA_avail_t MPIDI_CMA_availability(int enable, int ptrace_scope, int cap_sys_ptrace,
                                         int same_userns, int probe_errno)
{
    if (!enable)
        return MPIDI_CMA_OFF;
    /* 1 (restricted) is lifted by PR_SET_PTRACER_ANY; 2 (admin-only) needs
     * CAP_SYS_PTRACE; 3 forbids attaching altogether */
    if (ptrace_scope >= 3 || (ptrace_scope == 2 && !cap_sys_ptrace))
        return MPIDI_CMA_YAMA;
    if (!same_userns)
        return MPIDI_CMA_USERNS;
    if (probe_errno)
        return MPIDI_CMA_PROBE;
    return MPIDI_CMA_OK;
}

const char *MPIDI_CMA_avail_str(MPIDI_CMA_avail_t why)
{
    switch (why) {
        case MPIDI_CMA_OK:
            return "available";
        case MPIDI_CMA_OFF:
            return "disabled by MPIR_CVAR_CH4_CMA_ENABLE=0";
        case MPIDI_CMA_YAMA:
            return "kernel.yama.ptrace_scope forbids it (set it to 0 or 1)";
        case MPIDI_CMA_USERNS:
            return "a local rank is in another user namespace";
        case MPIDI_CMA_PROBE:
            return "a test read of a local rank's memory failed";
    }
    return "unknown";
}

size_t MPIDI_CMA_split_point(size_t bytes, size_t threshold, int contig)
{
    if (threshold == 0 || bytes < threshold || !contig || bytes < 2)
        return 0;
    if (bytes < 2 * MPIDI_CMA_PAGE)
        return bytes / 2;
    return (bytes / 2) & ~((size_t) MPIDI_CMA_PAGE - 1);
}
