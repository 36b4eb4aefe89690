/*
 * mpich-multichannel: a compact box record straight into the receive it
 * matches.  A plain eager message (a compact record, fbox_ring.h) whose
 * first match in MPIDIG's posted queue is the queue's head, a contiguous
 * receive with room for it and no any-source partner, is copied from the
 * ring into the user's buffer and its receive completed here, as MPIDIG's
 * SEND handler completes a matched eager receive.  This skips the header
 * rebuilt for the posix layer, the copy into it, the handler called through
 * MPIDIG's table and the datatype engine: where the message rate goes
 * (doc/shm.md, *A compact record straight into its receive*).  Anything
 * else, an unexpected message above all, takes the posix layer's path.
 *
 * Only the head is looked at: it is MPIDIG's first match whenever it
 * matches, and a message that matches a later receive costs one comparison
 * more, not a second search of the queue.
 */
#ifndef FBOX_DIRECT_H_INCLUDED
#define FBOX_DIRECT_H_INCLUDED

#include "fbox_ring.h"
#include "mmc_compat.h"

/* recv_begin's result for a record delivered here: nothing for the posix
 * layer to handle, but progress made and a message arrived */
#define MPIDI_FBOX_DELIVERED (MPIDI_POSIX_NOK + 1)

/* MPIDIG's posted receives the boxes' messages match: boxes are VCI 0's, and
 * so is every receive of a one-VCI build */
#define MPIDI_FBOX_POSTED (MPIDI_global.per_vci[0].posted_list)

/* The receive a compact record goes to, with where its data goes, or NULL. */
MPL_STATIC_INLINE_PREFIX MPIR_Request *MPIDI_FBOX_direct_match(const MPIDI_FBOX_compact_t * c,
                                                               MMC_context_id_t ctx,
                                                               size_t data_sz, void **dst)
{
    MPIR_Request *q = MPIDI_FBOX_POSTED;
    int contig;
    size_t room;
    MPI_Aint lb;

    if (!q || !MMC_POSTED_MATCH(c->src_rank, c->tag, ctx, q) || MMC_ANYSRC_PARTNER(q))
        return NULL;
    MPIDI_Datatype_check_contig_size_lb(MPIDIG_REQUEST(q, datatype), MPIDIG_REQUEST(q, count),
                                        contig, room, lb);
    /* a truncated message gets MPIDIG's error */
    if (!contig || data_sz > room)
        return NULL;
    *dst = (char *) MPIDIG_REQUEST(q, buffer) + lb;
    return q;
}

/* The record's data into q, which MPIDI_FBOX_direct_match gave, and q
 * complete: what MPIDIG does for a matched eager message with no flags. */
MPL_STATIC_INLINE_PREFIX void MPIDI_FBOX_direct(MPIR_Request * q, const MPIDI_FBOX_compact_t * c,
                                                void *dst, size_t data_sz)
{
    DL_DELETE(MPIDI_FBOX_POSTED, q);
    MPIDIG_PVAR_QUEUE_COUNTER_INC(MPIDIG_PT2PT_POSTED);
    MPIDIG_PVAR_QUEUE_LEVEL_DEC(MPIDIG_PT2PT_POSTED);
    MMC_RECV_MATCHED(q, c->src_rank, c->tag);
    MPIDI_REQUEST(q, is_local) = 1;
    q->status.MPI_ERROR = MPI_SUCCESS;
    MPIR_STATUS_SET_COUNT(q->status, data_sz);
    memcpy(dst, c + 1, data_sz);
    MPIR_Datatype_release_if_not_builtin(MPIDIG_REQUEST(q, datatype));
    MPID_Request_complete(q);
}

#endif /* FBOX_DIRECT_H_INCLUDED */
