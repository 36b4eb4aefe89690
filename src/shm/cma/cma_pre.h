/*
 * mpich-multichannel: the CMA IPC type's handle, carried in the IPC
 * rendezvous header (MPIDI_IPC_hdr) from sender to receiver.
 */
#ifndef CMA_PRE_H_INCLUDED
#define CMA_PRE_H_INCLUDED

#include <stdint.h>

typedef struct MPIDI_CMA_ipc_handle {
    uint64_t addr;              /* the send buffer in the sender's address space */
    int32_t pid;                /* the sender */
} MPIDI_CMA_ipc_handle_t;

#endif /* CMA_PRE_H_INCLUDED */
