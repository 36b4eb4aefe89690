/*
 * mpich-multichannel: ch4:tcp types embedded in MPICH's objects (included by
 * ch4's netmodpre.h).  ch4:tcp keeps its state in MPIDI_TCP_global; only
 * active-message requests carry some.
 */
#ifndef TCP_PRE_H_INCLUDED
#define TCP_PRE_H_INCLUDED

/* An unexpected eager message too large for MPICH's pack buffers is held by
 * ch4:tcp in a buffer of its exact size until a receive matches it. */
typedef struct {
    char *buf;
    int done;                   /* all of it has arrived (or the connection failed) */
    int matched;                /* a receive matched it before it was all here */
    int err;                    /* the connection failed on the way */
} MPIDI_TCP_am_request_t;

typedef struct {
    int dummy;
} MPIDI_TCP_request_t;

typedef struct {
    int dummy;
} MPIDI_TCP_comm_t;

typedef struct {
    int dummy;
} MPIDI_TCP_dt_t;

typedef struct {
    int dummy;
} MPIDI_TCP_op_t;

typedef struct {
    int dummy;
} MPIDI_TCP_win_t;

/* An av entry names ch4:tcp's peer: its index plus one (world rank r is
 * r + 1, written at init).  0, what ch4 zeroes a new entry to, names no
 * process ch4:tcp was told of, and a send to it fails (doc/tcp-dynamic.md). */
typedef struct {
    int peer_plus1;
} MPIDI_TCP_addr_t;

typedef struct {
    int dummy;
} MPIDI_TCP_part_t;

#endif /* TCP_PRE_H_INCLUDED */
