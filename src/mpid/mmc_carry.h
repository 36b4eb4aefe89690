/*
 * A message received in pieces into a noncontiguous type: MPICH's datatype
 * engine unpacks whole basic elements only, and a piece may end inside one
 * (a buffered send is packed bytes, cut into shared-memory cells wherever a
 * cell ends).  The bytes of the split element wait here until the next piece
 * completes it.  Plain C, no MPICH: the unpack is a callback
 * (test/unit/test_carry.c).
 */
#ifndef MMC_CARRY_H_INCLUDED
#define MMC_CARRY_H_INCLUDED

#include <stdint.h>
#include <string.h>

/* the largest basic element (long double _Complex) */
#define MMC_CARRY_ELEM_MAX 32

/* the bytes of a split element: 32 bytes in all, the room MPIDIG's receive
 * keeps for an iovec it uses only when the receive is not a datatype's */
typedef struct {
    unsigned char buf[MMC_CARRY_ELEM_MAX - 1];
    unsigned char len;
} MMC_carry_t;

/* Whether rest bytes left after an unpack of whole elements may be the first
 * bytes of a split element that the next piece completes: fewer than the
 * largest element has, and not at the message's end.  ch4:tcp's receive,
 * which keeps them in its read buffer, decides by it too. */
static inline int MMC_carry_fits(intptr_t rest, int last)
{
    return rest == 0 || (!last && rest < MMC_CARRY_ELEM_MAX);
}

/* unpacks len bytes that start at offset off of the message; returns how many
 * it took (whole elements only) */
typedef intptr_t(*MMC_unpack_fn) (void *ctx, const void *data, intptr_t len, intptr_t off);

/* One piece, the message's last when last is set; *off counts the bytes
 * unpacked so far.  Returns 0, or -1 when the bytes do not fill whole
 * elements: more left over than an element has, or anything at the end. */
static inline int MMC_carry_unpack(MMC_carry_t * c, const unsigned char *data, intptr_t len,
                                   int last, intptr_t * off, MMC_unpack_fn unpack, void *ctx)
{
    if (c->len) {
        /* the split element and enough of this piece to complete it */
        unsigned char joined[2 * MMC_CARRY_ELEM_MAX];
        intptr_t room = (intptr_t) sizeof(joined) - c->len, n = len < room ? len : room;
        memcpy(joined, c->buf, c->len);
        memcpy(joined + c->len, data, (size_t) n);
        intptr_t got = unpack(ctx, joined, c->len + n, *off);
        if (got < c->len) {
            /* a tiny piece that still does not complete the element */
            if (c->len + n < MMC_CARRY_ELEM_MAX && n == len && !last) {
                memcpy(c->buf + c->len, data, (size_t) n);
                c->len += (unsigned char) n;
                return 0;
            }
            return -1;
        }
        *off += got;
        data += got - c->len;
        len -= got - c->len;
        c->len = 0;
    }
    intptr_t got = unpack(ctx, data, len, *off);
    *off += got;
    intptr_t rest = len - got;
    if (!MMC_carry_fits(rest, last))
        return -1;
    if (rest == 0)
        return 0;
    memcpy(c->buf, data + got, (size_t) rest);
    c->len = (unsigned char) rest;
    return 0;
}

#endif /* MMC_CARRY_H_INCLUDED */
