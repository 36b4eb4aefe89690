/*
 * mpich-multichannel: fast boxes in front of MPICH's posix eager queue
 * (iqueue).  The overlay calls these from iqueue's own send, receive and
 * commit (src/shm/fbox/overlay.hooks); the box protocol is fbox_ring.h, the
 * design doc/shm.md.
 *
 * A small message to a local peer goes into the box this rank claimed in the
 * peer's inbox; what does not fit (too large, the box full, no box left at
 * the peer) goes through iqueue as before.  MPI's order per pair holds across
 * the two: a sender uses its box only once the receiver has taken every
 * message it sent through iqueue (the receiver counts them into the box's
 * iq_seen), and a receiver that takes an iqueue message from a sender whose
 * box still holds older messages delivers those first (the iqueue message
 * waits in `stash`).
 */
#ifndef FBOX_POST_H_INCLUDED
#define FBOX_POST_H_INCLUDED

#include "fbox_ring.h"
#include "fbox_direct.h"
#include "mmc_compat.h"
#include "ch4_poll.h"

/* box messages in a row before iqueue is looked at first once */
#define MPIDI_FBOX_STREAK 16

/* Whether a message took the box, and why not. */
typedef enum {
    MPIDI_FBOX_SENT = 0,
    MPIDI_FBOX_SKIP,            /* not for a box: boxes off, a pipelined message */
    MPIDI_FBOX_LARGE,           /* more data than FASTBOX_MAX_MSG */
    MPIDI_FBOX_NOBOX,           /* the peer's inbox had no box left */
    MPIDI_FBOX_ORDER,           /* queue messages to the peer not yet taken */
    MPIDI_FBOX_FULL,            /* no room in the box */
    MPIDI_FBOX_RESULTS
} MPIDI_FBOX_result_t;

/* a compact record's message as MPIDIG's send wrote it, the data after the header */
typedef struct {
    MPIDIG_hdr_t hdr;
    unsigned char data[MPIDI_FBOX_COMPACT_MAX];
} MPIDI_FBOX_compact_msg_t;

/* What the posix layer reads of a box record outside the ring while it
 * handles it: the record's posix header whole, and a compact record's MPIDIG
 * header rebuilt with the data after it.  One per record in use: a handler
 * may make progress (MPICH 4.1+ probes a communicator it frees inside one,
 * when the request the handler completes held its last reference), and so
 * take records inside the handling of others. */
typedef struct {
    uint64_t msg_hdr;
    MPIDI_FBOX_compact_msg_t compact;
} MPIDI_FBOX_held_t;

typedef struct {
    int on;                     /* this node's ranks have inboxes */
    int sending;                /* this rank sends through boxes (its own CVARs) */
    MPIDI_FBOX_config_t cfg;    /* the node's layout; max_msg is this rank's */
    void *region;
    int me;                     /* local rank */
    MPIDI_FBOX_inbox_t *inbox;  /* this rank's */
    MPIDI_FBOX_tx_t *tx;        /* [num_local]: the box this rank claimed at each peer */
    MPIDI_FBOX_rx_t *rx;        /* [max_peers]: the boxes of this rank's inbox found */
    int nrx;
    int next;                   /* the box looked at first */
    int streak;
    MPIDI_FBOX_rx_t *last;      /* the box of the record taken last, for MPIDI_FBOX_more */
    int *rx_of;                 /* [num_local]: index in rx of a sender's box, or -1 */
    uint64_t *iq_taken;         /* [num_local]: iqueue messages taken from each sender */
    int stashed;
    MPIDI_POSIX_eager_recv_transaction_t stash;
    MPIDI_FBOX_held_t **held;   /* [nheld], the one of depth d for the d-th record in use */
    int nheld;
    int depth;                  /* box records in use */
    /* MPI_T performance variables (category CH4_FASTBOX) */
    unsigned long long msgs, bytes;
    unsigned long long direct;  /* records received straight into their receive */
    unsigned long long fallback[MPIDI_FBOX_RESULTS];    /* by MPIDI_FBOX_result_t */
    int initialized;            /* 5.0 may bootstrap more than one communicator */
    size_t region_bytes;
} MPIDI_FBOX_global_t;

extern MPIDI_FBOX_global_t MPIDI_FBOX_global;

/* node_comm: 5.0's node communicator of the communicator being bootstrapped;
 * NULL on 4.x, where the node is MPI_Init's (MMC_node_bcast) */
int MPIDI_FBOX_init(MPIR_Comm * node_comm);
int MPIDI_FBOX_finalize(void);
/* boxes claimed in this rank's inbox since it last looked */
void MPIDI_FBOX_found(void);
/* one more MPIDI_FBOX_held_t than ever in use before */
int MPIDI_FBOX_hold_more(void);

/* MPIDI_FBOX_COMPACT when the message is a plain eager send whose MPIDIG
 * header the receiver can rebuild from the source rank, tag and context id
 * (fbox_ring.h), else 0 */
MPL_STATIC_INLINE_PREFIX uint32_t MPIDI_FBOX_compact_kind(const MPIDI_POSIX_am_header_t *
                                                          msg_hdr, const void *am_hdr,
                                                          MPI_Aint am_hdr_sz, size_t data_sz)
{
    const MPIDIG_hdr_t *h = am_hdr;

    if (msg_hdr->handler_id != MPIDIG_SEND || msg_hdr->am_type != MPIDI_POSIX_AM_TYPE__SHORT ||
        am_hdr_sz != sizeof(MPIDIG_hdr_t) || data_sz > MPIDI_FBOX_COMPACT_MAX)
        return 0;
    if (h->flags != MPIDIG_AM_SEND_FLAGS_NONE || h->error_bits != MMC_ERR_NONE ||
        h->rndv_hdr_sz != 0 || h->data_sz != (MPI_Aint) data_sz)
        return 0;
    return MPIDI_FBOX_COMPACT;
}

/* Puts a whole message into the peer's box, or says why not. */
MPL_STATIC_INLINE_PREFIX MPIDI_FBOX_result_t MPIDI_FBOX_try(int grank,
                                                            MPIDI_POSIX_am_header_t * msg_hdr,
                                                            const void *am_hdr,
                                                            MPI_Aint am_hdr_sz, const void *buf,
                                                            MPI_Aint count, MPI_Datatype datatype,
                                                            MPI_Aint * bytes_sent)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;

    /* a pipelined message's segments stay together in iqueue */
    if (!g->sending || !am_hdr || msg_hdr->am_type == MPIDI_POSIX_AM_TYPE__PIPELINE)
        return MPIDI_FBOX_SKIP;

    int peer = MMC_LOCAL_RANK_OF(grank);
    MPIDI_FBOX_tx_t *tx = &g->tx[peer];
    int contig = 1;
    size_t data_sz = 0;
    MPI_Aint true_lb = 0;
    if (bytes_sent)
        MPIDI_Datatype_check_contig_size_lb(datatype, count, contig, data_sz, true_lb);
    if (data_sz > g->cfg.max_msg)
        return MPIDI_FBOX_LARGE;
    if (unlikely(tx->state != MPIDI_FBOX_CLAIMED)) {
        if (tx->state == MPIDI_FBOX_UNCLAIMED)
            MPIDI_FBOX_claim(tx, MPIDI_FBOX_inbox(g->region, &g->cfg, peer), &g->cfg, g->me);
        if (tx->state != MPIDI_FBOX_CLAIMED)
            return MPIDI_FBOX_NOBOX;
    }
    if (!MPIDI_FBOX_tx_ordered(tx))
        return MPIDI_FBOX_ORDER;

    uint32_t compact = MPIDI_FBOX_compact_kind(msg_hdr, am_hdr, am_hdr_sz, data_sz);
    size_t hdr_sz = compact ? sizeof(MPIDI_FBOX_compact_t) :
        MPL_ROUND_UP_ALIGN(am_hdr_sz, MAX_ALIGNMENT);
    MPIDI_FBOX_rec_t *r = MPIDI_FBOX_tx_begin(tx, g->cfg.size, hdr_sz + data_sz);
    if (!r)
        return MPIDI_FBOX_FULL;
    unsigned char *p = MPIDI_FBOX_PAYLOAD(r);
    if (compact) {
        const MPIDIG_hdr_t *h = am_hdr;
        MPIDI_FBOX_compact_t c = { .src_rank = h->src_rank, .tag = h->tag };
        memcpy(p, &c, sizeof(c));
        r->msg_hdr = h->context_id;
    } else {
        MPIDI_POSIX_am_header_t mh = *msg_hdr;
        mh.am_hdr_sz = hdr_sz;  /* the data starts aligned, as in an iqueue cell */
        memcpy(&r->msg_hdr, &mh, sizeof(r->msg_hdr));
        memcpy(p, am_hdr, am_hdr_sz);
    }
    if (data_sz) {
        if (contig) {
            memcpy(p + hdr_sz, (const char *) buf + true_lb, data_sz);
        } else {
            MPI_Aint packed;
            MMC_TYPEREP_PACK(buf, count, datatype, 0, p + hdr_sz, data_sz, &packed);
        }
    }
    MPIDI_FBOX_tx_publish(tx, r, (uint32_t) (hdr_sz + data_sz), compact);

    g->msgs++;
    g->bytes += data_sz;
    if (bytes_sent)
        *bytes_sent = data_sz;
    return MPIDI_FBOX_SENT;
}

/* iqueue's send: 1 when the box took the message; a message left to iqueue
 * is counted by why. */
MPL_STATIC_INLINE_PREFIX int MPIDI_FBOX_send(int grank, MPIDI_POSIX_am_header_t * msg_hdr,
                                             const void *am_hdr, MPI_Aint am_hdr_sz,
                                             const void *buf, MPI_Aint count,
                                             MPI_Datatype datatype, MPI_Aint * bytes_sent)
{
    MPIDI_FBOX_result_t res = MPIDI_FBOX_try(grank, msg_hdr, am_hdr, am_hdr_sz, buf, count,
                                             datatype, bytes_sent);
    if (res == MPIDI_FBOX_SENT) {
        MPIDI_POLL_SENT_LOCAL(MMC_LOCAL_RANK_OF(grank));
        return 1;
    }
    MPIDI_FBOX_global.fallback[res]++;
    return 0;
}

/* MPICH 4.0 creates and completes a request for every send; 4.1+ sends an
 * eager message the posix layer takes at once with the pre-completed request
 * (posix_send.h), and a box is such a layer.  On 4.0 the overlay asks this
 * first: a whole message in the box, with the header MPIDIG's send would
 * have written (no sender request to name: nothing answers an eager,
 * non-synchronous send), needs no request either.  0: MPIDIG's send, which
 * offers the message to the box again and counts why it did not fit. */
MPL_STATIC_INLINE_PREFIX int MPIDI_FBOX_isend_lw(const void *buf, MPI_Aint count,
                                                 MPI_Datatype datatype, int rank, int tag,
                                                 MPIR_Comm * comm, int context_offset,
                                                 int src_vsi, int dst_vsi,
                                                 MPIR_Request ** request)
{
    /* boxes are vsi 0's; a postponed message of it goes first */
    if (*request || src_vsi || dst_vsi || MMC_POSIX_PER_VCI(0).postponed_queue)
        return 0;
    MPIDI_POSIX_am_header_t msg_hdr = {
        .handler_id = MPIDIG_SEND,
        .am_type = MPIDI_POSIX_AM_TYPE__SHORT,
        .am_hdr_sz = sizeof(MPIDIG_hdr_t)
    };
    MPIDIG_hdr_t am_hdr = {
        .src_rank = comm->rank,
        .tag = tag,
        .context_id = comm->context_id + context_offset,
        .error_bits = MMC_ERR_NONE,
        .flags = MPIDIG_AM_SEND_FLAGS_NONE,
        .sreq_ptr = NULL,
        .rndv_hdr_sz = 0
    };
    MPIDI_Datatype_check_size(datatype, count, am_hdr.data_sz);
    MPI_Aint sent;
    int done, grank = MMC_GRANK(rank, comm);
    MPID_THREAD_CS_ENTER(VCI, MMC_VCI_LOCK(0));
    done = MPIDI_FBOX_try(grank, &msg_hdr, &am_hdr, sizeof(am_hdr),
                          buf, count, datatype, &sent) == MPIDI_FBOX_SENT;
    MPID_THREAD_CS_EXIT(VCI, MMC_VCI_LOCK(0));
    if (done) {
        MPIDI_POLL_SENT_LOCAL(MMC_LOCAL_RANK_OF(grank));
        *request = MPIR_Request_create_complete(MPIR_REQUEST_KIND__SEND);
    }
    return done;
}

/* iqueue took a cell for grank's local rank */
MPL_STATIC_INLINE_PREFIX void MPIDI_FBOX_queued(int grank)
{
    if (MPIDI_FBOX_global.on)
        MPIDI_FBOX_global.tx[MMC_LOCAL_RANK_OF(grank)].iq_sent++;
}

/* A box record as the posix layer takes an iqueue cell; the commit finds the
 * box again from the tagged pointer (cells are aligned, so bit 0 is free).
 * The caller made sure a held_t of this depth exists. */
MPL_STATIC_INLINE_PREFIX void MPIDI_FBOX_take(MPIDI_POSIX_eager_recv_transaction_t * t,
                                              MPIDI_FBOX_rx_t * rx, MPIDI_FBOX_rec_t * r)
{
    /* a record holds the header but its last word, which MPICH leaves unused */
    _Static_assert(offsetof(MPIDI_POSIX_am_header_t, unused) == sizeof(r->msg_hdr) &&
                   sizeof(MPIDI_POSIX_am_header_t) == sizeof(((MPIDI_FBOX_held_t *) 0)->msg_hdr),
                   "MPICH's posix message header is not the one fast boxes know");
    /* the posix layer finds the data am_hdr_sz bytes after MPIDIG's header */
    _Static_assert(offsetof(MPIDI_FBOX_compact_msg_t, data) == sizeof(MPIDIG_hdr_t)
                   && sizeof(MMC_context_id_t) <= sizeof(r->msg_hdr),
                   "MPIDIG's header is not the one compact records know");
    MPIDI_FBOX_held_t *held = MPIDI_FBOX_global.held[MPIDI_FBOX_global.depth++];
    held->msg_hdr = 0;
    if (MPIDI_FBOX_IS_COMPACT(r)) {
        /* MPIDIG's header as the sender's MPIDIG_SEND wrote it, the data after it */
        const MPIDI_FBOX_compact_t *c = (const MPIDI_FBOX_compact_t *) MPIDI_FBOX_PAYLOAD(r);
        size_t data_sz = MPIDI_FBOX_LEN(r) - sizeof(*c);
        MPIDI_POSIX_am_header_t mh = {
            .handler_id = MPIDIG_SEND,
            .am_type = MPIDI_POSIX_AM_TYPE__SHORT,
            .am_hdr_sz = sizeof(MPIDIG_hdr_t)
        };
        MPIDIG_hdr_t *h = &held->compact.hdr;
        h->src_rank = c->src_rank;
        h->tag = c->tag;
        h->context_id = (MMC_context_id_t) r->msg_hdr;
        h->error_bits = MMC_ERR_NONE;
        h->flags = MPIDIG_AM_SEND_FLAGS_NONE;
        h->sreq_ptr = NULL;
        h->data_sz = (MPI_Aint) data_sz;
        h->rndv_hdr_sz = 0;
        memcpy(held->compact.data, c + 1, data_sz);
        memcpy(&held->msg_hdr, &mh, sizeof(r->msg_hdr));
        t->payload = &held->compact;
        t->payload_sz = sizeof(MPIDIG_hdr_t) + data_sz;
    } else {
        memcpy(&held->msg_hdr, &r->msg_hdr, sizeof(r->msg_hdr));
        t->payload = MPIDI_FBOX_PAYLOAD(r);
        t->payload_sz = MPIDI_FBOX_LEN(r);
    }
    t->msg_hdr = (MPIDI_POSIX_am_header_t *) &held->msg_hdr;
    t->src_local_rank = rx->src;
    t->MMC_EAGER_SRC_VCI = 0;
    t->MMC_EAGER_DST_VCI = 0;
    t->transport.iqueue.pointer_to_cell = (void *) ((uintptr_t) rx | 1);
    MPIDI_FBOX_rx_take(rx, r);
}

/* An iqueue message of src is handed to the posix layer: the sender may use
 * its box again once it has seen all of them taken. */
MPL_STATIC_INLINE_PREFIX void MPIDI_FBOX_queue_taken(int src)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    uint64_t n = ++g->iq_taken[src];
    if (g->rx_of[src] >= 0)
        __atomic_store_n(&g->rx[g->rx_of[src]].box->iq_seen, n, __ATOMIC_RELEASE);
}

/* A record rx gave: a compact one straight into the posted receive it
 * matches (MPIDI_FBOX_DELIVERED), else taken for the posix layer
 * (MPIDI_POSIX_OK).  Taken before the receive completes and released after:
 * completing it may make progress (a freed communicator's last reference). */
MPL_STATIC_INLINE_PREFIX int MPIDI_FBOX_hand(MPIDI_POSIX_eager_recv_transaction_t * t,
                                             MPIDI_FBOX_rx_t * rx, MPIDI_FBOX_rec_t * r)
{
    if (MPIDI_FBOX_IS_COMPACT(r)) {
        const MPIDI_FBOX_compact_t *c = (const MPIDI_FBOX_compact_t *) MPIDI_FBOX_PAYLOAD(r);
        size_t data_sz = MPIDI_FBOX_LEN(r) - sizeof(*c);
        void *dst;
        MPIR_Request *q = MPIDI_FBOX_direct_match(c, (MMC_context_id_t) r->msg_hdr, data_sz, &dst);
        if (q) {
            MPIDI_FBOX_rx_take(rx, r);
            MPIDI_FBOX_direct(q, c, dst, data_sz);
            MPIDI_FBOX_rx_release(rx);
            MPIDI_FBOX_global.direct++;
            return MPIDI_FBOX_DELIVERED;
        }
    }
    MPIDI_FBOX_take(t, rx, r);
    return MPIDI_POSIX_OK;
}

/* The next message of the boxes, or of the stashed iqueue message's sender
 * (whose box messages are older than it): 1 with iqueue's result in *ret
 * (or MPIDI_FBOX_DELIVERED); 0 lets iqueue look. */
MPL_STATIC_INLINE_PREFIX int MPIDI_FBOX_recv_begin(MPIDI_POSIX_eager_recv_transaction_t * t,
                                                   int *ret)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    MPIDI_FBOX_rec_t *r;

    if (!g->on)
        return 0;
    /* a record this call or iqueue's (MPIDI_FBOX_queue_arrived) takes needs a
     * held_t; without memory for one, nothing is taken this time */
    if (unlikely(g->depth == g->nheld) && MPIDI_FBOX_hold_more() != MPI_SUCCESS) {
        *ret = MPIDI_POSIX_NOK;
        return 1;
    }
    if (unlikely(g->stashed)) {
        MPIDI_FBOX_rx_t *rx = &g->rx[g->rx_of[g->stash.src_local_rank]];
        r = MPIDI_FBOX_rx_peek(rx, g->cfg.size);
        if (r) {
            *ret = MPIDI_FBOX_hand(t, rx, r);
        } else {
            *t = g->stash;
            g->stashed = 0;
            MPIDI_FBOX_queue_taken(t->src_local_rank);
            *ret = MPIDI_POSIX_OK;
        }
        return 1;
    }
    if (unlikely(g->nrx < g->cfg.max_peers &&
                 __atomic_load_n(&g->inbox->claimed, __ATOMIC_RELAXED) > (uint32_t) g->nrx))
        MPIDI_FBOX_found();
    if (g->streak >= MPIDI_FBOX_STREAK) {
        g->streak = 0;
        return 0;
    }
    for (int k = 0, i = g->next; k < g->nrx; k++, i = i + 1 == g->nrx ? 0 : i + 1) {
        r = MPIDI_FBOX_rx_peek(&g->rx[i], g->cfg.size);
        if (r) {
            g->next = i + 1 == g->nrx ? 0 : i + 1;
            g->streak++;
            g->last = &g->rx[i];
            *ret = MPIDI_FBOX_hand(t, &g->rx[i], r);
            return 1;
        }
    }
    g->streak = 0;
    return 0;
}

/* iqueue dequeued a cell (in t): its sender's older box messages go first. */
MPL_STATIC_INLINE_PREFIX void MPIDI_FBOX_queue_arrived(MPIDI_POSIX_eager_recv_transaction_t * t)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    int src = t->src_local_rank;

    if (!g->on)
        return;
    g->streak = 0;
    if (g->rx_of[src] < 0 && g->nrx < g->cfg.max_peers)
        MPIDI_FBOX_found();     /* a claim made before this message was queued */
    if (g->rx_of[src] >= 0) {
        MPIDI_FBOX_rx_t *rx = &g->rx[g->rx_of[src]];
        MPIDI_FBOX_rec_t *r = MPIDI_FBOX_rx_peek(rx, g->cfg.size);
        if (r) {
            g->stash = *t;
            g->stashed = 1;
            MPIDI_FBOX_take(t, rx, r);
            return;
        }
    }
    MPIDI_FBOX_queue_taken(src);
}

/* The posix layer is done with a transaction; 1 when it was a box record. */
MPL_STATIC_INLINE_PREFIX int MPIDI_FBOX_recv_commit(void *cell)
{
    if (!((uintptr_t) cell & 1))
        return 0;
    MPIDI_FBOX_rx_release((MPIDI_FBOX_rx_t *) ((uintptr_t) cell & ~(uintptr_t) 1));
    MPIDI_FBOX_global.depth--;
    return 1;
}

/* After the posix layer took a box record: whether the next record of that
 * box is already published, so that the same progress call takes it; the
 * round-robin then starts at that box.  The next line is looked at only
 * while receives are posted (a window of them, as in a message-rate burst):
 * after a ping-pong's receive, nothing is posted, and fetching a line the
 * sender may still be writing would cost the next message its latency.  The
 * streak bounds a call's records, as it bounds the boxes' turn against
 * iqueue. */
MPL_STATIC_INLINE_PREFIX int MPIDI_FBOX_more(void)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    MPIDI_FBOX_rx_t *rx = g->last;

    g->last = NULL;
    if (!rx)
        return 0;
    size_t at = (size_t) (rx->tail & (g->cfg.size - 1));
    if ((at & (MPIDI_FBOX_LINE - 1)) == 0 && !MPIDI_FBOX_POSTED)
        return 0;
    uint32_t mark = __atomic_load_n(&((MPIDI_FBOX_rec_t *) (rx->box->ring + at))->mark,
                                    __ATOMIC_ACQUIRE);
    if (mark == 0 || mark == MPIDI_FBOX_WRAP)
        return 0;
    g->next = (int) (rx - g->rx);
    return 1;
}

#endif /* FBOX_POST_H_INCLUDED */
