/*
 * Unit tests of the fast boxes (src/shm/fbox/fbox_ring.[ch]): the CVARs'
 * values, claiming and finding boxes, and one box's ring driven by a sender
 * and a receiver, in turns and as two threads, every byte checked.  No MPICH
 * needed.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "fbox_ring.h"
#include "unit.h"

static void test_configure(void)
{
    MPIDI_FBOX_config_t c;

    CHECK(MPIDI_FBOX_configure(-1, -1, -1, 16, &c) == 0);
    CHECK(c.size == MPIDI_FBOX_SIZE_DEFAULT && c.max_peers == 15 &&
          c.max_msg == MPIDI_FBOX_MAX_MSG_DEFAULT);
    CHECK(MPIDI_FBOX_configure(-1, -1, -1, 64, &c) == 0 &&
          c.max_peers == MPIDI_FBOX_MAX_PEERS_DEFAULT);
    /* one rank on the node, or no boxes: off */
    CHECK(MPIDI_FBOX_configure(-1, -1, -1, 1, &c) == 0 && c.size == 0 && c.max_peers == 0);
    CHECK(MPIDI_FBOX_configure(-1, 0, -1, 8, &c) == 0 && c.size == 0);
    CHECK(MPIDI_FBOX_configure(0, -1, -1, 8, &c) == 0 && c.size == 0 && c.max_peers == 0);
    /* the default largest message fits a small box four times */
    CHECK(MPIDI_FBOX_configure(1024, -1, -1, 8, &c) == 0 && c.max_msg == 256);
    CHECK(MPIDI_FBOX_configure(65536, 4, 16384, 8, &c) == 0 && c.max_msg == 16384 &&
          c.max_peers == 4);
    CHECK(MPIDI_FBOX_configure(-1, -1, 0, 8, &c) == 0 && c.max_msg == 0);
    /* invalid: each names its CVAR */
    CHECK(MPIDI_FBOX_configure(-2, -1, -1, 8, &c) == MPIDI_FBOX_EINVAL_SIZE);
    CHECK(MPIDI_FBOX_configure(3000, -1, -1, 8, &c) == MPIDI_FBOX_EINVAL_SIZE);
    CHECK(MPIDI_FBOX_configure(256, -1, -1, 8, &c) == MPIDI_FBOX_EINVAL_SIZE);
    CHECK(MPIDI_FBOX_configure(1 << 25, -1, -1, 8, &c) == MPIDI_FBOX_EINVAL_SIZE);
    CHECK(MPIDI_FBOX_configure(-1, -2, -1, 8, &c) == MPIDI_FBOX_EINVAL_MAX_PEERS);
    CHECK(MPIDI_FBOX_configure(-1, -1, -2, 8, &c) == MPIDI_FBOX_EINVAL_MAX_MSG);
    CHECK(MPIDI_FBOX_configure(4096, -1, 1025, 8, &c) == MPIDI_FBOX_EINVAL_MAX_MSG);
    /* a single rank still has its values checked */
    CHECK(MPIDI_FBOX_configure(1000, -1, -1, 1, &c) == MPIDI_FBOX_EINVAL_SIZE);
}

static void *region_of(const MPIDI_FBOX_config_t * c, int nlocal)
{
    void *p = aligned_alloc(4096, MPIDI_FBOX_region_bytes(c, nlocal));
    memset(p, 0, MPIDI_FBOX_region_bytes(c, nlocal));
    return p;
}

/* senders claim boxes of one inbox; the receiver finds them in claim order */
static void test_claim(void)
{
    MPIDI_FBOX_config_t c;
    MPIDI_FBOX_configure(1024, 3, -1, 8, &c);
    CHECK(MPIDI_FBOX_region_bytes(&c, 8) == 8 * (64 + 3 * (128 + 1024)));
    void *region = region_of(&c, 8);
    MPIDI_FBOX_inbox_t *in = MPIDI_FBOX_inbox(region, &c, 5);
    MPIDI_FBOX_rx_t rx[3];
    MPIDI_FBOX_tx_t tx[8];
    int n = 0;

    memset(tx, 0, sizeof(tx));
    CHECK(MPIDI_FBOX_discover(in, &c, rx, &n) == 0 && n == 0);
    MPIDI_FBOX_claim(&tx[2], in, &c, 2);
    MPIDI_FBOX_claim(&tx[0], in, &c, 0);
    CHECK(tx[2].state == MPIDI_FBOX_CLAIMED && tx[0].state == MPIDI_FBOX_CLAIMED);
    CHECK(MPIDI_FBOX_discover(in, &c, rx, &n) == 2 && n == 2);
    CHECK(rx[0].src == 2 && rx[1].src == 0 && rx[0].box == tx[2].box && rx[1].box == tx[0].box);
    /* a claim whose owner is not yet written stops the search */
    in->claimed++;
    CHECK(MPIDI_FBOX_discover(in, &c, rx, &n) == 0 && n == 2);
    MPIDI_FBOX_box(in, &c, 2)->owner = 7 + 1;
    CHECK(MPIDI_FBOX_discover(in, &c, rx, &n) == 1 && n == 3 && rx[2].src == 7);
    /* no box left */
    MPIDI_FBOX_claim(&tx[6], in, &c, 6);
    CHECK(tx[6].state == MPIDI_FBOX_NONE);
    CHECK(MPIDI_FBOX_discover(in, &c, rx, &n) == 0 && n == 3);
    /* the boxes do not overlap the next inbox */
    CHECK((char *) MPIDI_FBOX_box(in, &c, 2) + MPIDI_FBOX_box_bytes(c.size) ==
          (char *) MPIDI_FBOX_inbox(region, &c, 6));
    free(region);
}

/* message i: its length and bytes, from a seed */
static size_t msg_len(unsigned i, size_t max)
{
    return (i * 2654435761u >> 7) % (max + 1);
}

static unsigned char msg_byte(unsigned i, size_t k)
{
    return (unsigned char) (i * 31 + k * 7 + 0xA5);
}

/* every third message a compact record */
static uint32_t msg_compact(unsigned i)
{
    return i % 3 ? 0 : MPIDI_FBOX_COMPACT;
}

static int send_one(MPIDI_FBOX_tx_t * tx, size_t size, unsigned i, size_t max)
{
    size_t len = msg_len(i, max);
    MPIDI_FBOX_rec_t *r = MPIDI_FBOX_tx_begin(tx, size, len);
    if (!r)
        return 0;
    for (size_t k = 0; k < len; k++)
        MPIDI_FBOX_PAYLOAD(r)[k] = msg_byte(i, k);
    r->msg_hdr = i;
    MPIDI_FBOX_tx_publish(tx, r, (uint32_t) len, msg_compact(i));
    return 1;
}

/* returns 1 when message i was there and intact, 0 when nothing, -1 when wrong */
static int recv_one(MPIDI_FBOX_rx_t * rx, size_t size, unsigned i, size_t max)
{
    MPIDI_FBOX_rec_t *r = MPIDI_FBOX_rx_peek(rx, size);
    if (!r)
        return 0;
    int ok = r->msg_hdr == i && MPIDI_FBOX_LEN(r) == msg_len(i, max) &&
        MPIDI_FBOX_IS_COMPACT(r) == (msg_compact(i) != 0);
    for (size_t k = 0; ok && k < MPIDI_FBOX_LEN(r); k++)
        ok = MPIDI_FBOX_PAYLOAD(r)[k] == msg_byte(i, k);
    MPIDI_FBOX_rx_take(rx, r);
    MPIDI_FBOX_rx_release(rx);
    return ok ? 1 : -1;
}

typedef struct {
    MPIDI_FBOX_box_t *box;
    size_t size, max;
    unsigned n;
    int bad;
} pair_t;

static void pair_init(pair_t * p, MPIDI_FBOX_tx_t * tx, MPIDI_FBOX_rx_t * rx, void **region,
                      size_t size, size_t max, unsigned n)
{
    MPIDI_FBOX_config_t c;
    MPIDI_FBOX_configure((int) size, 1, -1, 2, &c);
    *region = region_of(&c, 2);
    MPIDI_FBOX_inbox_t *in = MPIDI_FBOX_inbox(*region, &c, 1);
    memset(tx, 0, sizeof(*tx));
    MPIDI_FBOX_claim(tx, in, &c, 0);
    int k = 0;
    MPIDI_FBOX_discover(in, &c, rx, &k);
    *p = (pair_t) { tx->box, size, max, n, 0 };
}

/* in turns: the sender fills the box until it is full, the receiver takes a
 * few; wraps at every offset, full and freed space exercised */
static void test_turns(void)
{
    MPIDI_FBOX_tx_t tx;
    MPIDI_FBOX_rx_t rx;
    pair_t p;
    void *region;
    pair_init(&p, &tx, &rx, &region, 1024, 256, 20000);
    unsigned sent = 0, got = 0, fulls = 0, wraps = 0;
    uint64_t last_tail = 0;

    while (got < p.n) {
        while (sent < p.n && send_one(&tx, p.size, sent, p.max))
            sent++;
        if (sent < p.n)
            fulls++;
        /* nothing is published beyond the ring's room */
        CHECK(tx.head - rx.tail <= p.size);
        for (int k = 0; k < 1 + (int) (got % 3) && got < sent; k++) {
            int rc = recv_one(&rx, p.size, got, p.max);
            CHECK(rc == 1);
            if (rc != 1)
                goto out;
            got++;
            if ((rx.tail & (p.size - 1)) < (last_tail & (p.size - 1)))
                wraps++;
            last_tail = rx.tail;
        }
    }
    CHECK(recv_one(&rx, p.size, got, p.max) == 0);      /* empty */
  out:
    CHECK(got == p.n && fulls > 1000 && wraps > 1000);
    free(region);
}

/* payloads that look like lengths and wrap markers never read as records */
static void test_stale(void)
{
    MPIDI_FBOX_tx_t tx;
    MPIDI_FBOX_rx_t rx;
    pair_t p;
    void *region;
    pair_init(&p, &tx, &rx, &region, 512, 128, 0);
    for (unsigned i = 0; i < 5000; i++) {
        size_t len = 16 + (i * 37) % 113;
        MPIDI_FBOX_rec_t *r = MPIDI_FBOX_tx_begin(&tx, p.size, len);
        CHECK(r != NULL);
        if (!r)
            break;
        memset(MPIDI_FBOX_PAYLOAD(r), 0xFF, len);
        r->msg_hdr = i;
        MPIDI_FBOX_tx_publish(&tx, r, (uint32_t) len, 0);
        MPIDI_FBOX_rec_t *q = MPIDI_FBOX_rx_peek(&rx, p.size);
        CHECK(q == r && q->msg_hdr == i && MPIDI_FBOX_LEN(q) == len);
        MPIDI_FBOX_rx_take(&rx, q);
        MPIDI_FBOX_rx_release(&rx);
        CHECK(MPIDI_FBOX_rx_peek(&rx, p.size) == NULL);
    }
    free(region);
}

static void *sender(void *arg)
{
    pair_t *p = arg;
    MPIDI_FBOX_tx_t tx = { p->box, 0, 0, 0, 0, MPIDI_FBOX_CLAIMED, NULL, 0 };
    for (unsigned i = 0; i < p->n;) {
        if (send_one(&tx, p->size, i, p->max))
            i++;
        else
            sched_yield();      /* the receiver may share this core */
    }
    return NULL;
}

/* two threads: the receiver gets every message in order, every byte right */
static void test_threads(void)
{
    MPIDI_FBOX_tx_t tx;
    MPIDI_FBOX_rx_t rx;
    pair_t p;
    void *region;
    pthread_t t;
    pair_init(&p, &tx, &rx, &region, 4096, 1024, 300000);

    pthread_create(&t, NULL, sender, &p);
    for (unsigned got = 0; got < p.n;) {
        int rc = recv_one(&rx, p.size, got, p.max);
        if (rc < 0) {
            p.bad++;
            break;
        }
        if (rc == 0)
            sched_yield();
        got += rc;
    }
    if (p.bad)
        exit(unit_summary() + 1);       /* the sender would wait forever */
    pthread_join(t, NULL);
    CHECK(p.bad == 0);
    CHECK(MPIDI_FBOX_rx_peek(&rx, p.size) == NULL);
    free(region);
}

/* a compact record of an 8-byte message takes half a line, a full one (the
 * 48-byte MPIDIG header padded) a whole line; the largest compact one two */
static void test_compact(void)
{
    MPIDI_FBOX_tx_t tx;
    MPIDI_FBOX_rx_t rx;
    pair_t p;
    void *region;
    pair_init(&p, &tx, &rx, &region, 4096, 1024, 0);
    size_t compact = sizeof(MPIDI_FBOX_compact_t) + 8;
    CHECK(MPIDI_FBOX_rec_bytes(compact) == MPIDI_FBOX_LINE / 2);
    CHECK(MPIDI_FBOX_rec_bytes(48 + 8) == MPIDI_FBOX_LINE);
    CHECK(MPIDI_FBOX_rec_bytes(sizeof(MPIDI_FBOX_compact_t) + MPIDI_FBOX_COMPACT_MAX) ==
          2 * MPIDI_FBOX_LINE);
    for (unsigned i = 0; i < 4; i++) {
        MPIDI_FBOX_rec_t *r = MPIDI_FBOX_tx_begin(&tx, p.size, compact);
        CHECK(r != NULL && (unsigned char *) r == tx.box->ring + i * MPIDI_FBOX_LINE / 2);
        if (!r)
            break;
        r->msg_hdr = i;
        MPIDI_FBOX_tx_publish(&tx, r, (uint32_t) compact, MPIDI_FBOX_COMPACT);
        CHECK(r->mark != MPIDI_FBOX_WRAP);
    }
    for (unsigned i = 0; i < 4; i++) {
        MPIDI_FBOX_rec_t *q = MPIDI_FBOX_rx_peek(&rx, p.size);
        CHECK(q && q->msg_hdr == i && MPIDI_FBOX_IS_COMPACT(q) && MPIDI_FBOX_LEN(q) == compact);
        if (!q)
            break;
        MPIDI_FBOX_rx_take(&rx, q);
        MPIDI_FBOX_rx_release(&rx);
    }
    CHECK(rx.tail == 2 * MPIDI_FBOX_LINE && MPIDI_FBOX_rx_peek(&rx, p.size) == NULL);
    free(region);
}

/* records taken inside the handling of another (MPICH makes progress inside
 * some handlers): each peek gives the next record, never one already taken,
 * and the sender gets the space back only when the outermost is released */
static void test_nested(void)
{
    MPIDI_FBOX_tx_t tx;
    MPIDI_FBOX_rx_t rx;
    pair_t p;
    void *region;
    pair_init(&p, &tx, &rx, &region, 512, 128, 0);
    unsigned sent = 0;
    while (send_one(&tx, p.size, sent, p.max))
        sent++;
    CHECK(sent >= 3 && MPIDI_FBOX_tx_begin(&tx, p.size, 100) == NULL);
    MPIDI_FBOX_rec_t *a = MPIDI_FBOX_rx_peek(&rx, p.size);
    CHECK(a && a->msg_hdr == 0);
    if (!a)
        goto out;
    MPIDI_FBOX_rx_take(&rx, a);
    MPIDI_FBOX_rec_t *b = MPIDI_FBOX_rx_peek(&rx, p.size);
    CHECK(b && b != a && b->msg_hdr == 1);
    if (!b)
        goto out;
    MPIDI_FBOX_rx_take(&rx, b);
    MPIDI_FBOX_rx_release(&rx);
    /* the outer record is still in use: no room yet */
    CHECK(tx.box->tail == 0 && MPIDI_FBOX_tx_begin(&tx, p.size, 100) == NULL);
    MPIDI_FBOX_rx_release(&rx);
    CHECK(tx.box->tail == rx.tail && rx.tail > 0);
    /* the rest arrive once each, in order */
    for (unsigned i = 2; i < sent; i++)
        CHECK(recv_one(&rx, p.size, i, p.max) == 1);
    CHECK(MPIDI_FBOX_rx_peek(&rx, p.size) == NULL && rx.taken == 0);
  out:
    free(region);
}

/* the sender's order rule against MPICH's queue */
static void test_order(void)
{
    MPIDI_FBOX_box_t box;
    MPIDI_FBOX_tx_t tx = { &box, 0, 0, 0, 0, MPIDI_FBOX_CLAIMED, NULL, 0 };
    box.iq_seen = 0;
    CHECK(MPIDI_FBOX_tx_ordered(&tx));
    tx.iq_sent = 2;             /* two messages went through the queue */
    CHECK(!MPIDI_FBOX_tx_ordered(&tx));
    box.iq_seen = 1;
    CHECK(!MPIDI_FBOX_tx_ordered(&tx));
    box.iq_seen = 2;
    CHECK(MPIDI_FBOX_tx_ordered(&tx) && tx.iq_seen == 2);
}

int main(void)
{
    run("CVAR values: defaults, caps, invalid ones", test_configure);
    run("claiming boxes, finding them, none left", test_claim);
    run("one box in turns: 20000 messages, full and wrapping", test_turns);
    run("stale payloads never read as records", test_stale);
    run("one box, two threads: 300000 messages in order, bytes intact", test_threads);
    run("no box message overtakes the queue", test_order);
    run("compact records: two 8-byte messages per line", test_compact);
    run("records taken inside the handling of another, released in reverse", test_nested);
    return unit_summary();
}
