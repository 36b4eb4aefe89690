/*
 * mpich-multichannel: the CMA single-copy path as an IPC type of ch4's shared
 * memory (doc/cma.md).  The sender announces a large message with MPICH's IPC
 * rendezvous (its pid and buffer address); the receiver, once matched, reads
 * the bytes with process_vm_readv straight into the posted buffer and
 * acknowledges.  A read the kernel refuses turns that message into MPIDIG's
 * ordinary rendezvous through the copy path (MPIDIG_do_cts), so it is
 * delivered all the same.
 *
 * A large message into a contiguous receive buffer is split
 * (MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD): the receiver asks the sender, who
 * waits in progress, to write the second part with process_vm_writev
 * (WRITE), reads the first part meanwhile, and acknowledges once the sender
 * said its part is written (WRITTEN); if either part was refused, the whole
 * message goes through the copy path.
 */
#ifndef CMA_POST_H_INCLUDED
#define CMA_POST_H_INCLUDED

#include "ipc_types.h"

typedef struct {
    int enabled;                /* MPIR_CVAR_CH4_CMA_ENABLE and the checks at init */
    int ptracer_any;            /* we set PR_SET_PTRACER_ANY (Yama scope 1) */
    int32_t pid;
    size_t threshold;           /* smallest message sent with CMA */
    size_t split_threshold;     /* smallest message split, 0 = none */
    int split_handler;          /* the AM handler of WRITE and WRITTEN */
    uint8_t *ok;                /* per world rank: a local rank CMA reads worked with */
    unsigned long long msgs, bytes, fallbacks, splits;  /* pvars */
} MPIDI_CMA_global_t;

extern MPIDI_CMA_global_t MPIDI_CMA_global;

int MPIDI_CMA_init_local(void);
int MPIDI_CMA_init_world(void);
int MPIDI_CMA_mpi_finalize_hook(void);
/* The receiver's side, once matched: the message is read (and acknowledged
 * by ipc_p2p.h), or *deferred: finished later by MPIDI_CMA_written or by
 * MPIDIG's rendezvous. */
int MPIDI_CMA_handle_lmt_recv(MPIDI_IPC_hdr * ipc_hdr, MPIR_Request * rreq, MPIR_Request * sreq,
                              size_t recv_data_sz, int *deferred);
int MPIDI_CMA_write_part(const MPIDI_CMA_split_hdr_t * hdr);
int MPIDI_CMA_written(const MPIDI_CMA_split_hdr_t * hdr);

/* Copies bytes [*done, to) of a message between the remote process pid
 * (buffer rbuf, rcount, rtype in its address space) and the local buffer:
 * reads it, or writes it when write is set.  Returns 0, or the errno of a
 * call that failed or could not progress (*done then says how far it got). */
int MPIDI_CMA_copy(int write, pid_t pid, const void *rbuf, MPI_Aint rcount, MPI_Datatype rtype,
                   const void *lbuf, MPI_Aint lcount, MPI_Datatype ltype, size_t to, size_t *done);

/* Chooses CMA for a message of data_sz bytes to rank when no other IPC type
 * took it.  The size test is ours: MPICH 4.1+ no longer compares the size
 * with the threshold in its shared send path. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CMA_get_ipc_attr(const void *addr, size_t data_sz, int rank,
                                                     MPIR_Comm * comm,
                                                     MPIDI_IPCI_ipc_attr_t * attr)
{
    if (attr->ipc_type != MPIDI_IPCI_TYPE__NONE || !MPIDI_CMA_global.enabled ||
        attr->gpu_attr.type == MPL_GPU_POINTER_DEV || data_sz < MPIDI_CMA_global.threshold)
        return;
    int lpid = MPIDIU_rank_to_lpid(rank, comm);
    if (lpid < 0 || !MPIDI_CMA_global.ok[lpid])
        return;
    attr->ipc_type = MPIDI_IPCI_TYPE__CMA;
    attr->ipc_handle.cma.addr = (uint64_t) (uintptr_t) addr;
    attr->ipc_handle.cma.pid = MPIDI_CMA_global.pid;
    attr->threshold.send_lmt_sz = MPIDI_CMA_global.threshold;
}

#endif /* CMA_POST_H_INCLUDED */
