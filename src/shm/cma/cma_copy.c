/*
 * mpich-multichannel: the one copy of a CMA message, between this process
 * and another, with process_vm_readv (the receiver) or process_vm_writev (the
 * sender's part of a split message): see cma_post.h.
 */
#include "mpidimpl.h"
#include "cma_post.h"
#include "cma_policy.h"

#include <sys/uio.h>

/* windows of iovecs per side and the batch built from them */
static struct iovec lwin[MPIDI_CMA_IOV_MAX], rwin[MPIDI_CMA_IOV_MAX];
static struct iovec lbat[MPIDI_CMA_IOV_MAX], rbat[MPIDI_CMA_IOV_MAX];

int MPIDI_CMA_copy(int write, pid_t pid, const void *rbuf, MPI_Aint rcount, MPI_Datatype rtype,
                   const void *lbuf, MPI_Aint lcount, MPI_Datatype ltype, size_t to, size_t *done)
{
    const MPIDI_CMA_pos_t start = { 0, 0 };
    while (*done < to) {
        MPI_Aint nl, lbytes, nr, rbytes;
        size_t want = MPL_MIN(to - *done, MPIDI_CMA_BATCH_MAX);
        MPIR_Typerep_to_iov(lbuf, lcount, ltype, *done, lwin, MPIDI_CMA_IOV_MAX, want, &nl,
                            &lbytes);
        MPIR_Typerep_to_iov(rbuf, rcount, rtype, *done, rwin, MPIDI_CMA_IOV_MAX, lbytes, &nr,
                            &rbytes);
        int kl, kr;
        size_t n = MPIDI_CMA_batch(lwin, (int) nl, start, rwin, (int) nr, start, MPIDI_CMA_IOV_MAX,
                                   want, lbat, &kl, rbat, &kr);
        if (n == 0)
            return EIO;
        ssize_t got = write ? process_vm_writev(pid, lbat, kl, rbat, kr, 0) :
            process_vm_readv(pid, lbat, kl, rbat, kr, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? errno : EIO;
        *done += (size_t) got;
    }
    return 0;
}
