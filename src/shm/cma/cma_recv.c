/*
 * mpich-multichannel: the receiver's side of a CMA message (see cma_post.h).
 */
#include "mpidimpl.h"
#include "mpidch4r.h"
#include "mmc_compat.h"
#include "cma_post.h"
#include "cma_policy.h"
#include "mpidig_pt2pt_callbacks.h"

/* the receiver's record of a split message, until the sender says how its
 * part went */
typedef struct {
    MPIR_Request *rreq, *sreq;
    size_t bytes;
    int err;                    /* of the receiver's own read */
} split_rec_t;

/* A read refused (EPERM, ESRCH, EFAULT, ENOSYS, ...) or stuck: MPIDIG's own
 * rendezvous asks the sender for the data, which comes through shared memory
 * into the same receive buffer and completes both requests. */
static int fall_back(MPIR_Request * rreq)
{
    MPIDI_CMA_global.fallbacks++;
    return MPIDIG_do_cts(rreq);
}

/* what ipc_p2p.h does after a copy, for a message finished later */
static int complete(MPIR_Request * rreq, MPIR_Request * sreq)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_IPC_ack_t ack = {.ipc_type = MPIDI_IPCI_TYPE__CMA,.req_ptr = sreq };
    CH4_CALL(am_send_hdr(MMC_RECV_SOURCE(rreq), rreq->comm, MPIDI_IPC_ACK,
                         &ack, sizeof(ack), MPIDIG_REQUEST(rreq, req->local_vci),
                         MPIDIG_REQUEST(rreq, req->remote_vci)), 1, mpi_errno);
    MPIR_ERR_CHECK(mpi_errno);
    MMC_IPC_RECV_COMPLETE(rreq);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Asks the sender to write bytes [split, bytes) into the contiguous receive
 * buffer; NULL (then the receiver reads it all) when out of memory. */
static split_rec_t *start_split(MPIR_Request * rreq, MPIR_Request * sreq, size_t split,
                                size_t bytes, MPI_Aint true_lb, int *mpi_errno)
{
    split_rec_t *rec = MPL_malloc(sizeof(*rec), MPL_MEM_OTHER);
    if (!rec)
        return NULL;
    *rec = (split_rec_t) {.rreq = rreq,.sreq = sreq,.bytes = bytes };
    MPIDI_CMA_split_hdr_t hdr = {.op = MPIDI_CMA_WRITE,.pid = MPIDI_CMA_global.pid,
        .sreq = sreq,.rec = rec,.from = split,.to = bytes,
        .raddr = (uint64_t) (uintptr_t) ((char *) MPIDIG_REQUEST(rreq, buffer) + true_lb)
    };
    CH4_CALL(am_send_hdr(MMC_RECV_SOURCE(rreq), rreq->comm,
                         MPIDI_CMA_global.split_handler, &hdr, sizeof(hdr),
                         MPIDIG_REQUEST(rreq, req->local_vci), MPIDIG_REQUEST(rreq,
                                                                             req->remote_vci)),
             1, *mpi_errno);
    if (*mpi_errno != MPI_SUCCESS) {
        MPL_free(rec);          /* nothing in flight: the caller fails the message */
        return NULL;
    }
    return rec;
}

/* Whether BYTES end on a basic element of a receive type of one basic type
 * (several: not known here).  CMA copies bytes; only an unpack notices an
 * element the message cuts, which the standard makes MPI_ERR_TYPE. */
static bool whole_elements(const MPIR_Datatype * dt, size_t bytes)
{
    return dt->builtin_element_size > 0 && bytes % (size_t) dt->builtin_element_size == 0;
}

int MPIDI_CMA_recv(MPIDI_IPC_hdr * ipc_hdr, MPIR_Request * rreq, size_t recv_data_sz,
                   bool need_pack, bool *deferred)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *sreq = MPIDIG_REQUEST(rreq, req->rreq.peer_req_ptr);
    MPIR_Datatype *dt = NULL, *rdt;
    const void *rbuf = (const void *) (uintptr_t) ipc_hdr->ipc_handle.cma.addr;
    MPI_Aint rcount = (MPI_Aint) recv_data_sz, true_lb;
    MPI_Datatype rtype = MPI_BYTE;
    size_t done = 0, dsz;
    int contig;

    *deferred = false;
    MPIDI_Datatype_get_info(MPIDIG_REQUEST(rreq, count), MPIDIG_REQUEST(rreq, datatype), contig,
                            dsz, rdt, true_lb);
    if (need_pack || (!contig && recv_data_sz < dsz && !whole_elements(rdt, recv_data_sz))) {
        /* device memory, which process_vm_readv cannot reach, or a
         * noncontiguous receive filled part way, where only an unpack fails
         * a cut element: MPIDIG's rendezvous copies it (not a refused read:
         * not counted) */
        mpi_errno = MPIDIG_do_cts(rreq);
        *deferred = (mpi_errno == MPI_SUCCESS);
        return mpi_errno;
    }
    if (!ipc_hdr->is_contig) {
        /* the sender's datatype came flattened behind the header */
        dt = (MPIR_Datatype *) MPIR_Handle_obj_alloc(&MPIR_Datatype_mem);
        MPIR_ERR_CHKANDJUMP(!dt, mpi_errno, MPI_ERR_OTHER, "**nomem");
        mpi_errno = MPIR_Typerep_unflatten(dt, ipc_hdr + 1);
        MPIR_ERR_CHECK(mpi_errno);
        rcount = ipc_hdr->count;
        rtype = dt->handle;
    }
    size_t split = MPIDI_CMA_split_point(recv_data_sz, MPIDI_CMA_global.split_threshold,
                                         contig && ipc_hdr->is_contig);
    split_rec_t *rec = split ? start_split(rreq, sreq, split, recv_data_sz, true_lb,
                                           &mpi_errno) : NULL;
    MPIR_ERR_CHECK(mpi_errno);
    int err = MPIDI_CMA_copy(0, ipc_hdr->ipc_handle.cma.pid, rbuf, rcount, rtype,
                             MPIDIG_REQUEST(rreq, buffer), MPIDIG_REQUEST(rreq, count),
                             MPIDIG_REQUEST(rreq, datatype), rec ? split : recv_data_sz, &done);
    if (rec) {
        /* finished when the sender's WRITTEN arrives (MPIDI_CMA_written) */
        rec->err = err;
        *deferred = true;
    } else if (err == 0) {
        MPIDI_CMA_global.msgs++;
        MPIDI_CMA_global.bytes += done;
    } else {
        /* deferred once the CTS is out; if it is not, MPICH's IPC receive
         * acknowledges and completes the receive with the error */
        mpi_errno = fall_back(rreq);
        *deferred = (mpi_errno == MPI_SUCCESS);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    if (dt)
        MPIR_Datatype_free(dt);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_CMA_written(const MPIDI_CMA_split_hdr_t * hdr)
{
    int mpi_errno;
    split_rec_t *rec = hdr->rec;
    if (rec->err == 0 && hdr->err == 0) {
        MPIDI_CMA_global.msgs++;
        MPIDI_CMA_global.splits++;
        MPIDI_CMA_global.bytes += rec->bytes;
        mpi_errno = complete(rec->rreq, rec->sreq);
    } else {
        /* either part refused: the whole message again, through the copy path;
         * MPICH drops an AM handler's error, so one that cannot ask for the
         * copy path finishes both requests with it */
        mpi_errno = fall_back(rec->rreq);
        if (mpi_errno != MPI_SUCCESS) {
            rec->rreq->status.MPI_ERROR = mpi_errno;
            mpi_errno = complete(rec->rreq, rec->sreq);
        }
    }
    MPL_free(rec);
    return mpi_errno;
}
