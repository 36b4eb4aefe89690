/*
 * mpich-multichannel: the layout and the choice of the exchange collectives
 * (doc/shm.md, *Small collectives by exchange*).  Plain C, no MPICH: unit-tested
 * by test/unit/test_exch.c.
 *
 * Every rank of a communicator on one node owns MPIDI_EXCH_DEPTH buffers in
 * one shared segment, used by turns (operation s in buffer s mod DEPTH).  A
 * buffer is a 64-bit sequence word, the size of the data in bytes (and an
 * error mark) and then the data, so the first 48 bytes share the word's
 * cache line.  A rank writes its data and their size, then stores the operation's sequence
 * number with release order; the others wait for that number with acquire
 * loads, then read.  A buffer is written again
 * (operation s + DEPTH) only once every rank has left operation s, so ranks
 * run at most DEPTH - 1 operations ahead of each other (doc/shm.md).
 */
#ifndef EXCH_LAYOUT_H_INCLUDED
#define EXCH_LAYOUT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define MPIDI_EXCH_LINE 64
/* more ranks than this use MPICH's own algorithms: each rank reads every
 * other rank's buffer, which a tree beats beyond a few ranks */
#define MPIDI_EXCH_MAX_RANKS 8
/* buffers per rank: back-to-back bcasts and reduces pipeline this deep */
#define MPIDI_EXCH_DEPTH 8
/* the largest MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE, and its default (-1) */
#define MPIDI_EXCH_SIZE_LIMIT 65536
#define MPIDI_EXCH_SIZE_DEFAULT 2048
#define MPIDI_EXCH_EINVAL_SIZE 1

typedef struct {
    size_t max_bytes;           /* data a buffer holds */
    size_t buf_bytes;           /* a buffer: the word and the data, whole lines */
    size_t total;               /* the segment: MPIDI_EXCH_DEPTH buffers per rank */
} MPIDI_EXCH_layout_t;

/* The largest payload from the CVAR's value: -1 the default, 0 off, else at
 * most MPIDI_EXCH_SIZE_LIMIT.  Returns MPIDI_EXCH_EINVAL_SIZE otherwise. */
int MPIDI_EXCH_max_size(int cvar, size_t * max_bytes);

/* The segment of nranks ranks for payloads of up to max_bytes. */
void MPIDI_EXCH_layout(int nranks, size_t max_bytes, MPIDI_EXCH_layout_t * l);

/* Whether an operation of nranks ranks and bytes of payload goes by
 * exchange (a barrier has 0 bytes). */
static inline int MPIDI_EXCH_applies(int nranks, size_t bytes, size_t max_bytes)
{
    return max_bytes > 0 && nranks >= 2 && nranks <= MPIDI_EXCH_MAX_RANKS && bytes <= max_bytes;
}

/* Where rank's buffer for operation seq starts in the segment. */
static inline size_t MPIDI_EXCH_offset(const MPIDI_EXCH_layout_t * l, int rank, uint64_t seq)
{
    return ((size_t) rank * MPIDI_EXCH_DEPTH + (size_t) (seq % MPIDI_EXCH_DEPTH)) * l->buf_bytes;
}

/* A buffer's size word follows its sequence word, and the data follow both.
 * The size word's top bit says that the rank came with an error of an earlier
 * step of the collective (ch4's composition), which its readers report. */
#define MPIDI_EXCH_SIZE_OFFSET sizeof(uint64_t)
#define MPIDI_EXCH_FAILED ((uint64_t) 1 << 63)
#define MPIDI_EXCH_DATA_OFFSET (2 * sizeof(uint64_t))

#endif /* EXCH_LAYOUT_H_INCLUDED */
