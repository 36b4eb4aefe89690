/*
 * mpich-multichannel: the sender's part of a split CMA message (see
 * cma_post.h): asked by the receiver, the sender, waiting on its send
 * request, writes the second part of the message into the receive buffer
 * with process_vm_writev while the receiver reads the first, then says how
 * that went.  The send request completes with the receiver's IPC ack, as
 * for any CMA message.
 */
#include "mpidimpl.h"
#include "mpidch4r.h"
#include "cma_post.h"

int MPIDI_CMA_write_part(const MPIDI_CMA_split_hdr_t * in)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Request *sreq = in->sreq;
    size_t done = in->from;

    /* the receive buffer is contiguous: byte i of the message goes to raddr + i */
    int err = MPIDI_CMA_copy(1, in->pid, (const void *) (uintptr_t) in->raddr, (MPI_Aint) in->to,
                             MPI_BYTE, MPIDIG_REQUEST(sreq, buffer), MPIDIG_REQUEST(sreq, count),
                             MPIDIG_REQUEST(sreq, datatype), in->to, &done);
    MPIDI_CMA_split_hdr_t out = {.op = MPIDI_CMA_WRITTEN,.err = err,.rec = in->rec };
    CH4_CALL(am_send_hdr(MPIDIG_REQUEST(sreq, u.send.dest), sreq->comm,
                         MPIDI_CMA_global.split_handler, &out, sizeof(out),
                         MPIDIG_REQUEST(sreq, req->local_vci), MPIDIG_REQUEST(sreq,
                                                                             req->remote_vci)),
             1, mpi_errno);
    return mpi_errno;
}
