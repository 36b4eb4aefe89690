/*
 * mpich-multichannel: the CMA single-copy path as an IPC type of ch4's shared
 * memory (doc/cma.md).  The sender announces a large message with MPICH's IPC
 * rendezvous (its pid and buffer address); the receiver, once matched, reads
 * the bytes with process_vm_readv straight into the posted buffer and
 * acknowledges.  A read the kernel refuses turns that message into MPIDIG's
 * ordinary rendezvous through the copy path (MPIDIG_do_cts), so it is
 * delivered all the same.
 */
#ifndef CMA_POST_H_INCLUDED
#define CMA_POST_H_INCLUDED

#include "ipc_types.h"

typedef struct {
    int enabled;                /* MPIR_CVAR_CH4_CMA_ENABLE and the checks at init */
    int32_t pid;
    size_t threshold;           /* smallest message sent with CMA */
    uint8_t *ok;                /* per world rank: a local rank CMA reads worked with */
    unsigned long long msgs, bytes, fallbacks;  /* pvars */
} MPIDI_CMA_global_t;

extern MPIDI_CMA_global_t MPIDI_CMA_global;

int MPIDI_CMA_init_local(void);
int MPIDI_CMA_init_world(void);
int MPIDI_CMA_mpi_finalize_hook(void);
int MPIDI_CMA_handle_lmt_recv(MPIDI_IPC_hdr * ipc_hdr, MPIR_Request * rreq, size_t recv_data_sz,
                              int *fallback);

/* Chooses CMA for a message to rank when no other IPC type took it. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CMA_get_ipc_attr(const void *addr, int rank, MPIR_Comm * comm,
                                                     MPIDI_IPCI_ipc_attr_t * attr)
{
    if (attr->ipc_type != MPIDI_IPCI_TYPE__NONE || !MPIDI_CMA_global.enabled ||
        attr->gpu_attr.type == MPL_GPU_POINTER_DEV)
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
