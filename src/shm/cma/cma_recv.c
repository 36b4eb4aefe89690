/*
 * mpich-multichannel: the receiver's side of a CMA message (see cma_post.h).
 */
#include "mpidimpl.h"
#include "cma_post.h"
#include "cma_policy.h"
#include "mpidig_pt2pt_callbacks.h"

#include <sys/uio.h>

/* windows of iovecs per side and the batch built from them */
static struct iovec lwin[MPIDI_CMA_IOV_MAX], rwin[MPIDI_CMA_IOV_MAX];
static struct iovec lbat[MPIDI_CMA_IOV_MAX], rbat[MPIDI_CMA_IOV_MAX];

/* Reads bytes [done, total) of the sender's data into the receive buffer, one
 * window of iovecs a side at a time.  Returns 0, or the errno of a read that
 * failed or could not progress (done then says how far it got). */
static int read_all(pid_t pid, const void *rbuf, MPI_Aint rcount, MPI_Datatype rtype,
                    void *lbuf, MPI_Aint lcount, MPI_Datatype ltype, size_t total, size_t *done)
{
    const MPIDI_CMA_pos_t start = { 0, 0 };
    while (*done < total) {
        MPI_Aint nl, lbytes, nr, rbytes;
        size_t want = MPL_MIN(total - *done, MPIDI_CMA_BATCH_MAX);
        MPIR_Typerep_to_iov(lbuf, lcount, ltype, *done, lwin, MPIDI_CMA_IOV_MAX, want, &nl, &lbytes);
        MPIR_Typerep_to_iov(rbuf, rcount, rtype, *done, rwin, MPIDI_CMA_IOV_MAX, lbytes, &nr,
                            &rbytes);
        int kl, kr;
        size_t n = MPIDI_CMA_batch(lwin, (int) nl, start, rwin, (int) nr, start, MPIDI_CMA_IOV_MAX,
                                   want, lbat, &kl, rbat, &kr);
        if (n == 0)
            return EIO;
        ssize_t got = process_vm_readv(pid, lbat, kl, rbat, kr, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? errno : EIO;
        *done += (size_t) got;
    }
    return 0;
}

int MPIDI_CMA_handle_lmt_recv(MPIDI_IPC_hdr * ipc_hdr, MPIR_Request * rreq, size_t recv_data_sz,
                              int *fallback)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Datatype *dt = NULL;
    const void *rbuf = (const void *) (uintptr_t) ipc_hdr->ipc_handle.cma.addr;
    MPI_Aint rcount = (MPI_Aint) recv_data_sz;
    MPI_Datatype rtype = MPI_BYTE;
    size_t done = 0;

    *fallback = 0;
    if (!ipc_hdr->is_contig) {
        /* the sender's datatype came flattened behind the header */
        dt = (MPIR_Datatype *) MPIR_Handle_obj_alloc(&MPIR_Datatype_mem);
        MPIR_ERR_CHKANDJUMP(!dt, mpi_errno, MPI_ERR_OTHER, "**nomem");
        mpi_errno = MPIR_Typerep_unflatten(dt, ipc_hdr + 1);
        MPIR_ERR_CHECK(mpi_errno);
        rcount = ipc_hdr->count;
        rtype = dt->handle;
    }
    int err = read_all(ipc_hdr->ipc_handle.cma.pid, rbuf, rcount, rtype,
                       MPIDIG_REQUEST(rreq, buffer), MPIDIG_REQUEST(rreq, count),
                       MPIDIG_REQUEST(rreq, datatype), recv_data_sz, &done);
    if (err == 0) {
        MPIDI_CMA_global.msgs++;
        MPIDI_CMA_global.bytes += done;
        goto fn_exit;
    }
    /* refused (EPERM, ESRCH, EFAULT, ENOSYS, ...) or stuck: MPIDIG's own rendezvous
     * asks the sender for the data, which comes through shared memory into
     * the same receive buffer */
    MPIDI_CMA_global.fallbacks++;
    *fallback = 1;
    mpi_errno = MPIDIG_do_cts(rreq);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    if (dt)
        MPIR_Datatype_free(dt);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
