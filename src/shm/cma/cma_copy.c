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

/* The iovecs of bytes [off, all) of a buffer.  A contiguous one is computed
 * here: the dataloop engine (MPICH 4.2.1 can be built with it) neither stops
 * nor starts inside a basic element, so the split's byte ranges could not go
 * through it; a noncontiguous one is asked for whole (the batch stops at the
 * byte wanted). */
static MPI_Aint window(const void *buf, MPI_Aint count, MPI_Datatype type, size_t off,
                       struct iovec *win)
{
    int contig;
    size_t size;
    MPIR_Datatype *dtp;
    MPI_Aint true_lb, n, bytes;
    MPIDI_Datatype_get_info(count, type, contig, size, dtp, true_lb);
    if (off >= size)
        return 0;
    if (contig) {
        win[0].iov_base = (char *) buf + true_lb + off;
        win[0].iov_len = size - off;
        return 1;
    }
    MPIR_Typerep_to_iov(buf, count, type, (MPI_Aint) off, win, MPIDI_CMA_IOV_MAX,
                        (MPI_Aint) (size - off), &n, &bytes);
    return n;
}

int MPIDI_CMA_copy(int write, pid_t pid, const void *rbuf, MPI_Aint rcount, MPI_Datatype rtype,
                   const void *lbuf, MPI_Aint lcount, MPI_Datatype ltype, size_t to, size_t *done)
{
    const MPIDI_CMA_pos_t start = { 0, 0 };
    while (*done < to) {
        size_t want = MPL_MIN(to - *done, MPIDI_CMA_BATCH_MAX);
        MPI_Aint nl = window(lbuf, lcount, ltype, *done, lwin);
        MPI_Aint nr = window(rbuf, rcount, rtype, *done, rwin);
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
