/*
 * Unit tests of the exchange collectives' layout and choice
 * (src/shm/exch/exch_layout.h): the CVAR's values, buffers in whole cache
 * lines that never overlap, MPIDI_EXCH_DEPTH per rank used by turns, and which
 * operations apply.  No MPICH needed.
 */
#include "exch_layout.h"
#include "unit.h"

static void test_max_size(void)
{
    size_t m = 1;
    CHECK(MPIDI_EXCH_max_size(-1, &m) == 0 && m == MPIDI_EXCH_SIZE_DEFAULT);
    CHECK(MPIDI_EXCH_max_size(0, &m) == 0 && m == 0);
    CHECK(MPIDI_EXCH_max_size(8, &m) == 0 && m == 8);
    CHECK(MPIDI_EXCH_max_size(MPIDI_EXCH_SIZE_LIMIT, &m) == 0 && m == MPIDI_EXCH_SIZE_LIMIT);
    m = 7;
    CHECK(MPIDI_EXCH_max_size(MPIDI_EXCH_SIZE_LIMIT + 1, &m) == MPIDI_EXCH_EINVAL_SIZE && m == 7);
    CHECK(MPIDI_EXCH_max_size(-2, &m) == MPIDI_EXCH_EINVAL_SIZE && m == 7);
}

static void test_layout(void)
{
    static const size_t sizes[] = { 0, 1, 47, 48, 49, 4096, 65536 };
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (int n = 2; n <= MPIDI_EXCH_MAX_RANKS; n++) {
            MPIDI_EXCH_layout_t l;
            MPIDI_EXCH_layout(n, sizes[i], &l);
            CHECK(l.buf_bytes % MPIDI_EXCH_LINE == 0);
            CHECK(l.buf_bytes >= MPIDI_EXCH_DATA_OFFSET + sizes[i]);
            CHECK(l.buf_bytes < MPIDI_EXCH_DATA_OFFSET + sizes[i] + MPIDI_EXCH_LINE);
            CHECK(l.total == (size_t) n * MPIDI_EXCH_DEPTH * l.buf_bytes);
            for (int r = 0; r < n; r++)
                for (uint64_t s = 1; s <= 2 * MPIDI_EXCH_DEPTH; s++) {
                    size_t off = MPIDI_EXCH_offset(&l, r, s);
                    CHECK(off % MPIDI_EXCH_LINE == 0);
                    CHECK(off + l.buf_bytes <= l.total);
                    /* operations s and s + DEPTH share a buffer, those between have others */
                    CHECK(MPIDI_EXCH_offset(&l, r, s + MPIDI_EXCH_DEPTH) == off);
                    for (uint64_t d = 1; d < MPIDI_EXCH_DEPTH; d++)
                        CHECK(MPIDI_EXCH_offset(&l, r, s + d) != off);
                    /* no other rank's buffer */
                    for (int q = 0; q < n; q++)
                        if (q != r)
                            CHECK(MPIDI_EXCH_offset(&l, q, s) != off);
                }
        }
    }
    /* up to 48 bytes share the sequence and size words' line */
    MPIDI_EXCH_layout_t l;
    MPIDI_EXCH_layout(2, 48, &l);
    CHECK(l.buf_bytes == MPIDI_EXCH_LINE);
    MPIDI_EXCH_layout(2, 49, &l);
    CHECK(l.buf_bytes == 2 * MPIDI_EXCH_LINE);
}

static void test_applies(void)
{
    CHECK(MPIDI_EXCH_applies(2, 8, 4096));
    CHECK(MPIDI_EXCH_applies(2, 0, 4096));      /* a barrier */
    CHECK(MPIDI_EXCH_applies(MPIDI_EXCH_MAX_RANKS, 4096, 4096));
    CHECK(!MPIDI_EXCH_applies(MPIDI_EXCH_MAX_RANKS + 1, 8, 4096));
    CHECK(!MPIDI_EXCH_applies(1, 8, 4096));
    CHECK(!MPIDI_EXCH_applies(2, 4097, 4096));
    CHECK(!MPIDI_EXCH_applies(2, 0, 0));        /* off */
}

int main(void)
{
    run("exch: the CVAR's values", test_max_size);
    run("exch: buffers in whole lines, DEPTH per rank by turns, none shared", test_layout);
    run("exch: which operations go by exchange", test_applies);
    return unit_summary();
}
