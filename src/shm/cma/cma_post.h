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
#include "mmc_compat.h"

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
/* Which local ranks CMA reads work with, found once in MPI_Init: comm is the
 * world being set up (5.0), NULL for MPI_Init's local ranks (4.x). */
int MPIDI_CMA_comm_bootstrap(MPIR_Comm * comm);
int MPIDI_CMA_mpi_finalize_hook(void);
/* The receiver's side, once matched: the message is read (and MPICH's IPC
 * receive acknowledges and completes it), or *deferred: finished later by
 * MPIDI_CMA_written or by MPIDIG's rendezvous, as is a message into a buffer
 * CMA cannot reach (need_pack: device memory). */
int MPIDI_CMA_recv(MPIDI_IPC_hdr * ipc_hdr, MPIR_Request * rreq, size_t recv_data_sz,
                   bool need_pack, bool *deferred);
int MPIDI_CMA_write_part(const MPIDI_CMA_split_hdr_t * hdr);
int MPIDI_CMA_written(const MPIDI_CMA_split_hdr_t * hdr);

/* Copies bytes [*done, to) of a message between the remote process pid
 * (buffer rbuf, rcount, rtype in its address space) and the local buffer:
 * reads it, or writes it when write is set.  Returns 0, or the errno of a
 * call that failed or could not progress (*done then says how far it got). */
int MPIDI_CMA_copy(int write, pid_t pid, const void *rbuf, MPI_Aint rcount, MPI_Datatype rtype,
                   const void *lbuf, MPI_Aint lcount, MPI_Datatype ltype, size_t to, size_t *done);

MPL_STATIC_INLINE_PREFIX bool MPIDI_CMA_peer_ok(int rank, MPIR_Comm * comm)
{
    int grank = MMC_GRANK(rank, comm);
    return grank >= 0 && MPIDI_CMA_global.ok[grank];
}

#if MMC_CH4_BOOTSTRAP_COMM
/* 5.0: MPICH's IPC send asks each IPC type in turn (ipc_p2p.h): CMA takes a
 * message of at least our threshold (-1 in the CVAR is 1 MiB there), and
 * MPIDI_CMA_check_peer, which the overlay calls right after, drops it again
 * when CMA does not work with that peer.  Our copy windows its iovecs, so a
 * datatype of many blocks is no reason to refuse. */
MPL_STATIC_INLINE_PREFIX int MPIDI_CMA_get_ipc_attr(const void *buf, MPI_Aint count,
                                                    MPI_Datatype datatype,
                                                    MPIDI_IPCI_ipc_attr_t * attr)
{
    MPI_Aint data_sz;
    attr->ipc_type = MPIDI_IPCI_TYPE__NONE;
    if (!MPIDI_CMA_global.enabled)
        return MPI_SUCCESS;
    MPIDI_Datatype_check_size(datatype, count, data_sz);
    if ((size_t) data_sz >= MPIDI_CMA_global.threshold) {
        attr->ipc_type = MPIDI_IPCI_TYPE__CMA;
        attr->u.cma = (MPIDI_CMA_ipc_attr_t) {.buf = buf,.count = count,.datatype = datatype };
    }
    return MPI_SUCCESS;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CMA_check_peer(int rank, MPIR_Comm * comm,
                                                   MPIDI_IPCI_ipc_attr_t * attr)
{
    if (attr->ipc_type == MPIDI_IPCI_TYPE__CMA && !MPIDI_CMA_peer_ok(rank, comm))
        attr->ipc_type = MPIDI_IPCI_TYPE__NONE;
}

/* the receiver reads a contiguous message from its first byte, a
 * noncontiguous one with the sender's flattened datatype from buf */
MPL_STATIC_INLINE_PREFIX void MPIDI_CMA_fill_ipc_handle(MPIDI_IPCI_ipc_attr_t * attr,
                                                        MPIDI_IPCI_ipc_handle_t * handle)
{
    int contig;
    MPI_Aint true_lb;
    MPIDI_Datatype_check_contig_lb(attr->u.cma.datatype, contig, true_lb);
    handle->cma.addr = (uint64_t) (uintptr_t) ((const char *) attr->u.cma.buf +
                                               (contig ? true_lb : 0));
    handle->cma.pid = MPIDI_CMA_global.pid;
}
#else
/* 4.x: chooses CMA for a message of data_sz bytes to rank when no other IPC
 * type took it.  The size test is ours: MPICH 4.1+ no longer compares the
 * size with the threshold in its shared send path. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CMA_get_ipc_attr(const void *addr, size_t data_sz, int rank,
                                                     MPIR_Comm * comm,
                                                     MPIDI_IPCI_ipc_attr_t * attr)
{
    if (attr->ipc_type != MPIDI_IPCI_TYPE__NONE || !MPIDI_CMA_global.enabled ||
        attr->gpu_attr.type == MPL_GPU_POINTER_DEV || data_sz < MPIDI_CMA_global.threshold ||
        !MPIDI_CMA_peer_ok(rank, comm))
        return;
    attr->ipc_type = MPIDI_IPCI_TYPE__CMA;
    attr->ipc_handle.cma.addr = (uint64_t) (uintptr_t) addr;
    attr->ipc_handle.cma.pid = MPIDI_CMA_global.pid;
    attr->threshold.send_lmt_sz = MPIDI_CMA_global.threshold;
}
#endif

#endif /* CMA_POST_H_INCLUDED */
