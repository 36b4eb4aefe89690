/*
 * mpich-multichannel: fast boxes, their layout and the single-producer
 * single-consumer protocol of one box.  Plain C, no MPICH headers: the posix
 * glue (fbox_post.h), the unit tests (test/unit/test_fbox.c) and the tuner
 * (tune/mc_tune_probe.c, for the CVARs' defaults) include it.
 *
 * A node's region holds an inbox per local rank: a line with the count of
 * boxes senders have claimed in it, then max_peers boxes.  A box belongs to
 * one sender (which claims it on its first message to that receiver) and is
 * read by the inbox's rank only.  A box is a line the receiver writes (how
 * far it has read, how many queue messages of the sender it has taken), a
 * line the sender writes once (who it is), then a ring of `size` bytes.
 *
 * Records start on 16 bytes (MPIDI_FBOX_REC_ALIGN): an 8-byte header (a mark,
 * the payload's length + 1, stored last with release order; the 4 bytes of
 * MPICH's posix message header that carry anything), then the payload.  An
 * 8-byte message with MPIDIG's 48-byte header takes 64 bytes, one cache line
 * when records of that size follow each other: the receiver's one miss on the
 * mark brings the whole message (with a 16-byte header it took 80 bytes, and
 * most messages two lines: the profile of the message rate had the second
 * miss, in MPIDIG's handler, at a fifth of its time).  The slot after the
 * newest record holds a zero mark, stored before that record is published, so
 * the receiver never takes what an earlier lap left there (a header, or
 * payload bytes) for a new record.  A record that does not fit before the
 * ring's end goes to its start, and the slot where it would have gone says so
 * (MPIDI_FBOX_WRAP), published after it.
 * A plain eager send (MPIDIG's SEND, no flags, no error bits, at most
 * MPIDI_FBOX_COMPACT_MAX data bytes) goes as a compact record: the mark says
 * so (MPIDI_FBOX_COMPACT), the header's second word holds the context id, the
 * payload the source rank and tag, then the data; the receiver rebuilds
 * MPIDIG's header.  An 8-byte message then takes 32 bytes, two per line: the
 * message rate is bound by the lines the sender writes and the receiver
 * reads (doc/shm.md).  Up to 112 data bytes a compact record fits two lines,
 * where a full record of 64 data bytes took two and the zero mark after it
 * a third: 64 B one-way latency 0.88 x.
 * Only the claim is an atomic read-modify-write; the data path is loads,
 * stores and one release store per message on each side.
 */
#ifndef FBOX_RING_H_INCLUDED
#define FBOX_RING_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define MPIDI_FBOX_LINE 64
#define MPIDI_FBOX_REC_ALIGN 16
#define MPIDI_FBOX_WRAP UINT32_MAX
#define MPIDI_FBOX_COMPACT 0x80000000u  /* mark bit: a compact record */
#define MPIDI_FBOX_COMPACT_MAX 112      /* data bytes: a compact record fits two lines */

/* the measured defaults (doc/shm.md) */
#define MPIDI_FBOX_SIZE_DEFAULT 16384
#define MPIDI_FBOX_MAX_PEERS_DEFAULT 32
#define MPIDI_FBOX_MAX_MSG_DEFAULT 1024
/* what a box size may be: a power of two in this range */
#define MPIDI_FBOX_SIZE_MIN 512
#define MPIDI_FBOX_SIZE_MAX (16 << 20)

typedef struct {
    /* written by the receiver */
    _Alignas(MPIDI_FBOX_LINE) uint64_t tail;    /* bytes of the ring consumed */
    uint64_t iq_seen;           /* the owner's queue messages taken */
    /* written by the sender, once */
    _Alignas(MPIDI_FBOX_LINE) uint32_t owner;   /* the sender's local rank + 1; 0 = free */
    _Alignas(MPIDI_FBOX_LINE) unsigned char ring[];
} MPIDI_FBOX_box_t;

typedef struct {
    _Alignas(MPIDI_FBOX_LINE) uint32_t claimed; /* boxes handed out, may pass max_peers */
} MPIDI_FBOX_inbox_t;

typedef struct {
    uint32_t mark;              /* 0 = not yet; MPIDI_FBOX_WRAP; else payload bytes + 1,
                                 * with MPIDI_FBOX_COMPACT for a compact record */
    uint32_t msg_hdr;           /* MPICH's posix message header but its unused word;
                                 * a compact record: the context id */
} MPIDI_FBOX_rec_t;

/* the payload of a compact record, before its data */
typedef struct {
    int32_t src_rank;
    int32_t tag;
} MPIDI_FBOX_compact_t;

#define MPIDI_FBOX_PAYLOAD(rec_) ((unsigned char *) (rec_) + sizeof(MPIDI_FBOX_rec_t))
#define MPIDI_FBOX_LEN(rec_) ((size_t) ((rec_)->mark & ~MPIDI_FBOX_COMPACT) - 1)
#define MPIDI_FBOX_IS_COMPACT(rec_) (((rec_)->mark & MPIDI_FBOX_COMPACT) != 0)

/* The sender's side of one peer's box (private memory). */
typedef enum {
    MPIDI_FBOX_UNCLAIMED = 0,
    MPIDI_FBOX_CLAIMED,
    MPIDI_FBOX_NONE             /* the peer's inbox had no box left */
} MPIDI_FBOX_claim_t;

typedef struct {
    MPIDI_FBOX_box_t *box;
    uint64_t head;              /* bytes of the ring published */
    uint64_t tail;              /* the receiver's tail as last read */
    uint64_t iq_sent;           /* messages to this peer through MPICH's queue */
    uint64_t iq_seen;           /* box->iq_seen as last read */
    MPIDI_FBOX_claim_t state;
    /* set by MPIDI_FBOX_tx_begin for MPIDI_FBOX_tx_publish */
    MPIDI_FBOX_rec_t *wrap;     /* the slot that says "go to the start", or NULL */
    uint64_t next_head;
} MPIDI_FBOX_tx_t;

/* The receiver's side of one box (private memory). */
typedef struct {
    MPIDI_FBOX_box_t *box;
    uint64_t tail;              /* bytes of the ring taken */
    int taken;                  /* records taken, not yet released */
    int src;                    /* the sender's local rank */
} MPIDI_FBOX_rx_t;

typedef struct {
    size_t size;                /* ring bytes per box; 0 = fast boxes off */
    int max_peers;              /* boxes per inbox */
    size_t max_msg;             /* largest message (data bytes) a rank sends through a box */
} MPIDI_FBOX_config_t;

/* Which CVAR MPIDI_FBOX_configure found invalid (0 = all valid). */
enum {
    MPIDI_FBOX_EINVAL_SIZE = 1,
    MPIDI_FBOX_EINVAL_MAX_PEERS,
    MPIDI_FBOX_EINVAL_MAX_MSG
};

/* The CVARs' values (-1 = the default) resolved for a node of nlocal ranks:
 * size 0 or a power of two in [MPIDI_FBOX_SIZE_MIN, MPIDI_FBOX_SIZE_MAX];
 * max_peers 0 (no boxes) or more, capped at nlocal - 1; max_msg at most a
 * quarter of the size, so that a box holds several of the largest. */
int MPIDI_FBOX_configure(int size, int max_peers, int max_msg, int nlocal,
                         MPIDI_FBOX_config_t * out);

/* bytes a record of `payload` bytes takes in the ring */
static inline size_t MPIDI_FBOX_rec_bytes(size_t payload)
{
    return (sizeof(MPIDI_FBOX_rec_t) + payload + MPIDI_FBOX_REC_ALIGN - 1) &
        ~(size_t) (MPIDI_FBOX_REC_ALIGN - 1);
}

static inline size_t MPIDI_FBOX_box_bytes(size_t size)
{
    return sizeof(MPIDI_FBOX_box_t) + size;
}

static inline size_t MPIDI_FBOX_inbox_bytes(const MPIDI_FBOX_config_t * c)
{
    return sizeof(MPIDI_FBOX_inbox_t) + (size_t) c->max_peers * MPIDI_FBOX_box_bytes(c->size);
}

/* the shared memory of a node of nlocal ranks */
static inline size_t MPIDI_FBOX_region_bytes(const MPIDI_FBOX_config_t * c, int nlocal)
{
    return (size_t) nlocal * MPIDI_FBOX_inbox_bytes(c);
}

static inline MPIDI_FBOX_inbox_t *MPIDI_FBOX_inbox(void *region, const MPIDI_FBOX_config_t * c,
                                                   int rank)
{
    return (MPIDI_FBOX_inbox_t *) ((char *) region + (size_t) rank * MPIDI_FBOX_inbox_bytes(c));
}

static inline MPIDI_FBOX_box_t *MPIDI_FBOX_box(MPIDI_FBOX_inbox_t * in,
                                               const MPIDI_FBOX_config_t * c, int i)
{
    return (MPIDI_FBOX_box_t *) ((char *) in + sizeof(MPIDI_FBOX_inbox_t) +
                                 (size_t) i * MPIDI_FBOX_box_bytes(c->size));
}

/* The sender `me` claims a box of the inbox `in`: tx is CLAIMED, or NONE when
 * every box there has its sender. */
void MPIDI_FBOX_claim(MPIDI_FBOX_tx_t * tx, MPIDI_FBOX_inbox_t * in,
                      const MPIDI_FBOX_config_t * c, int me);

/* Boxes of inbox `in` claimed since the receiver last looked, from rx[*n] on
 * (rx holds c->max_peers): each one found is added and *n counted up; a box
 * whose sender has not yet said who it is stops the search until next time. */
int MPIDI_FBOX_discover(MPIDI_FBOX_inbox_t * in, const MPIDI_FBOX_config_t * c,
                        MPIDI_FBOX_rx_t * rx, int *n);

/* Whether the sender may use its box: every message it sent the peer through
 * MPICH's queue has been taken, so none is overtaken by a box message. */
static inline int MPIDI_FBOX_tx_ordered(MPIDI_FBOX_tx_t * tx)
{
    if (tx->iq_sent == tx->iq_seen)
        return 1;
    tx->iq_seen = __atomic_load_n(&tx->box->iq_seen, __ATOMIC_ACQUIRE);
    return tx->iq_sent == tx->iq_seen;
}

/* Room for a record of `payload` bytes: the record's header (the payload
 * follows it), or NULL when the receiver has not yet freed enough of the
 * ring.  Writes the zero length that ends the ring after that record. */
static inline MPIDI_FBOX_rec_t *MPIDI_FBOX_tx_begin(MPIDI_FBOX_tx_t * tx, size_t size,
                                                    size_t payload)
{
    size_t rec = MPIDI_FBOX_rec_bytes(payload);
    size_t at = (size_t) (tx->head & (size - 1)), skip = 0, need;

    if (at + rec > size)
        skip = size - at;
    need = skip + rec + MPIDI_FBOX_REC_ALIGN;   /* the record and the slot after it */
    if (tx->head + need - tx->tail > size) {
        tx->tail = __atomic_load_n(&tx->box->tail, __ATOMIC_ACQUIRE);
        if (tx->head + need - tx->tail > size)
            return NULL;
    }
    unsigned char *ring = tx->box->ring;
    size_t pos = skip ? 0 : at;
    ((MPIDI_FBOX_rec_t *) (ring + ((pos + rec) & (size - 1))))->mark = 0;
    tx->wrap = skip ? (MPIDI_FBOX_rec_t *) (ring + at) : NULL;
    tx->next_head = tx->head + skip + rec;
    return (MPIDI_FBOX_rec_t *) (ring + pos);
}

/* Publishes the record MPIDI_FBOX_tx_begin gave, its payload and msg_hdr
 * written (compact: 0 or MPIDI_FBOX_COMPACT): the receiver may take it from
 * now on. */
static inline void MPIDI_FBOX_tx_publish(MPIDI_FBOX_tx_t * tx, MPIDI_FBOX_rec_t * r,
                                         uint32_t payload, uint32_t compact)
{
    __atomic_store_n(&r->mark, (payload + 1) | compact, __ATOMIC_RELEASE);
    if (tx->wrap)
        __atomic_store_n(&tx->wrap->mark, MPIDI_FBOX_WRAP, __ATOMIC_RELEASE);
    tx->head = tx->next_head;
}

/* The oldest record the sender has published and the receiver not yet
 * consumed, or NULL. */
static inline MPIDI_FBOX_rec_t *MPIDI_FBOX_rx_peek(MPIDI_FBOX_rx_t * rx, size_t size)
{
    unsigned char *ring = rx->box->ring;
    size_t at = (size_t) (rx->tail & (size - 1));
    MPIDI_FBOX_rec_t *r = (MPIDI_FBOX_rec_t *) (ring + at);
    uint32_t mark = __atomic_load_n(&r->mark, __ATOMIC_ACQUIRE);

    if (mark == 0)
        return NULL;
    if (mark == MPIDI_FBOX_WRAP) {
        /* the record at the start was published before this mark: the
         * acquire above made it visible */
        rx->tail += size - at;
        r = (MPIDI_FBOX_rec_t *) ring;
    }
    return r;
}

/* Takes the record MPIDI_FBOX_rx_peek gave: the next peek gives the one after
 * it.  A record is taken before its handler runs, and a handler may take
 * more (MPICH makes progress inside some), so the sender gets the space back
 * only when every record taken has been released. */
static inline void MPIDI_FBOX_rx_take(MPIDI_FBOX_rx_t * rx, const MPIDI_FBOX_rec_t * r)
{
    rx->tail += MPIDI_FBOX_rec_bytes(MPIDI_FBOX_LEN(r));
    rx->taken++;
}

/* The receiver is done with a record it took. */
static inline void MPIDI_FBOX_rx_release(MPIDI_FBOX_rx_t * rx)
{
    if (--rx->taken == 0)
        __atomic_store_n(&rx->box->tail, rx->tail, __ATOMIC_RELEASE);
}

#endif /* FBOX_RING_H_INCLUDED */
