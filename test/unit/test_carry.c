/*
 * Unit tests of the split-element carry of a message received in pieces
 * (src/mpid/mmc_carry.h): a fake datatype engine that unpacks whole
 * elements of E bytes into a strided layout, fed pieces cut anywhere; the
 * bytes of the layout are compared.  No MPICH needed.
 */
#include <stdlib.h>
#include "mmc_carry.h"
#include "unit.h"

#define STRIDE 48               /* bytes between elements in the layout: a hole after each */

typedef struct {
    int elem;                   /* E */
    intptr_t max_elems;
    unsigned char *dst;
} fake_type_t;

static intptr_t fake_unpack(void *ctx, const void *data, intptr_t len, intptr_t off)
{
    fake_type_t *t = ctx;
    intptr_t first = off / t->elem, n = len / t->elem;
    if (first + n > t->max_elems)
        n = t->max_elems - first;
    for (intptr_t i = 0; i < n; i++)
        memcpy(t->dst + (first + i) * STRIDE, (const unsigned char *) data + i * t->elem,
               (size_t) t->elem);
    return n * t->elem;
}

/* sends msg_len bytes in pieces of the sizes cycled from cuts; returns the
 * first nonzero result of MMC_carry_unpack (or 0) and checks the layout */
static int feed(int elem, intptr_t msg_len, const intptr_t *cuts, int ncuts, int *layout_ok)
{
    intptr_t nel = msg_len / elem + 1;
    unsigned char *src = malloc((size_t) msg_len), *dst = calloc((size_t) nel, STRIDE);
    for (intptr_t i = 0; i < msg_len; i++)
        src[i] = (unsigned char) (i * 7 + 3);
    fake_type_t t = { elem, nel, dst };
    MMC_carry_t c = {.len = 0 };
    intptr_t at = 0, off = 0;
    int rc = 0;
    for (int k = 0; at < msg_len && rc == 0; k++) {
        intptr_t n = cuts[k % ncuts];
        if (n > msg_len - at)
            n = msg_len - at;
        rc = MMC_carry_unpack(&c, src + at, n, at + n == msg_len, &off, fake_unpack, &t);
        at += n;
    }
    *layout_ok = 1;
    for (intptr_t e = 0; e < msg_len / elem && rc == 0; e++)
        for (int b = 0; b < STRIDE; b++) {
            unsigned char want = b < elem ? src[e * elem + b] : 0;
            if (dst[e * STRIDE + b] != want)
                *layout_ok = 0;
        }
    if (rc == 0 && off != msg_len)
        *layout_ok = 0;
    free(src);
    free(dst);
    return rc;
}

static void whole_pieces(void)
{
    intptr_t cuts[] = { 4096 };
    int ok;
    CHECK(feed(32, 32 * 1000, cuts, 1, &ok) == 0 && ok);
}

static void pieces_cut_inside_elements(void)
{
    /* the shared-memory queue's cells after a buffered send's header */
    intptr_t cuts[] = { 16320, 16344, 5 };
    int ok;
    for (int elem = 1; elem <= 32; elem *= 2) {
        CHECK(feed(elem, (intptr_t) elem * 5000, cuts, 3, &ok) == 0);
        CHECK(ok);
    }
}

static void one_byte_pieces(void)
{
    intptr_t cuts[] = { 1 };
    int ok;
    CHECK(feed(32, 32 * 9, cuts, 1, &ok) == 0 && ok);
    CHECK(feed(16, 16 * 9, cuts, 1, &ok) == 0 && ok);
}

static void pieces_shorter_than_the_carry(void)
{
    /* a split element, then pieces that each add a few bytes, then a large one */
    intptr_t cuts[] = { 45, 3, 2, 7, 1000 };
    int ok;
    CHECK(feed(32, 32 * 200, cuts, 5, &ok) == 0 && ok);
    CHECK(feed(12, 12 * 333, cuts, 5, &ok) == 0 && ok);
}

static void a_cut_element_at_the_end_is_a_mismatch(void)
{
    intptr_t cuts[] = { 100 };
    int ok;
    CHECK(feed(8, 8 * 100 + 5, cuts, 1, &ok) == -1);
    intptr_t one[] = { 13 };
    CHECK(feed(8, 13, one, 1, &ok) == -1);
}

static void more_left_than_an_element_is_a_mismatch(void)
{
    /* an engine that takes nothing: the bytes belong to no element of the type */
    fake_type_t t = { 100, 1, NULL };
    unsigned char data[200] = { 0 };
    MMC_carry_t c = {.len = 0 };
    intptr_t off = 0;
    CHECK(MMC_carry_unpack(&c, data, 40, 0, &off, fake_unpack, &t) == -1);
    c.len = 0;
    CHECK(MMC_carry_unpack(&c, data, 31, 0, &off, fake_unpack, &t) == 0 && c.len == 31);
    CHECK(MMC_carry_unpack(&c, data, 33, 0, &off, fake_unpack, &t) == -1);
    /* the rule alone, as ch4:tcp's receive asks it */
    CHECK(MMC_carry_fits(0, 1) && MMC_carry_fits(31, 0));
    CHECK(!MMC_carry_fits(32, 0) && !MMC_carry_fits(1, 1));
}

int main(void)
{
    run("whole pieces go straight through", whole_pieces);
    run("pieces cut inside elements of 1 to 32 bytes land whole", pieces_cut_inside_elements);
    run("pieces of one byte complete 16- and 32-byte elements", one_byte_pieces);
    run("pieces shorter than the carried element", pieces_shorter_than_the_carry);
    run("a cut element at the message's end is a mismatch", a_cut_element_at_the_end_is_a_mismatch);
    run("more left over than an element is a mismatch", more_left_than_an_element_is_a_mismatch);
    return unit_summary();
}
