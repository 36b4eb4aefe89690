/*
 * mpich-multichannel: ch4:tcp types embedded in MPICH's objects (included by
 * ch4's netmodpre.h).  ch4:tcp keeps its state in MPIDI_TCP_global, so the
 * per-object parts are empty.
 */
#ifndef TCP_PRE_H_INCLUDED
#define TCP_PRE_H_INCLUDED

typedef struct {
    int dummy;
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

typedef struct {
    int dummy;
} MPIDI_TCP_addr_t;

typedef struct {
    int dummy;
} MPIDI_TCP_part_t;

/* Called from MPID_Init before MPIDIG_am_init (an overlay hook): validates
 * the ch4:tcp CVARs and sizes MPICH's unexpected-message buffers to the
 * eager limit. */
int MPIDI_TCP_pre_init(void);

#endif /* TCP_PRE_H_INCLUDED */
