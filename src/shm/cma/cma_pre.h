/*
 * mpich-multichannel: what the CMA IPC type sends: its handle, carried in the
 * IPC rendezvous header (MPIDI_IPC_hdr) from sender to receiver, and the
 * messages of a split.
 */
#ifndef CMA_PRE_H_INCLUDED
#define CMA_PRE_H_INCLUDED

#include <stdint.h>

typedef struct MPIDI_CMA_ipc_handle {
    uint64_t addr;              /* the send buffer in the sender's address space */
    int32_t pid;                /* the sender */
} MPIDI_CMA_ipc_handle_t;

/* 5.0: the sender's buffer, from choosing CMA to filling in the handle */
typedef struct MPIDI_CMA_ipc_attr {
    const void *buf;
    MPI_Aint count;
    MPI_Datatype datatype;
} MPIDI_CMA_ipc_attr_t;

/* The two messages of a split (cma_post.h), one AM handler: the receiver asks
 * the sender to write a part (WRITE), the sender answers (WRITTEN). */
enum {
    MPIDI_CMA_WRITE = 1,
    MPIDI_CMA_WRITTEN
};

typedef struct MPIDI_CMA_split_hdr {
    uint8_t op;
    int32_t err;                /* WRITTEN: 0, or the errno of the sender's write */
    int32_t pid;                /* WRITE: the receiver */
    void *sreq;                 /* WRITE: the send request, from the IPC header */
    void *rec;                  /* the receiver's record of the message, echoed back */
    uint64_t raddr;             /* WRITE: the contiguous receive buffer */
    uint64_t from, to;          /* WRITE: the bytes of the message the sender writes */
} MPIDI_CMA_split_hdr_t;

#endif /* CMA_PRE_H_INCLUDED */
