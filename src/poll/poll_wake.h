/*
 * mpich-multichannel: waking a rank that sleeps in a blocking wait.
 *
 * Plain C, no MPICH headers: the ch4 glue (ch4_poll.c), the posix eager
 * send (through the overlay) and the unit tests (test/unit/test_poll_wake.c)
 * include it.
 *
 * A node's region holds one line per local rank: whether the rank is armed
 * (it will sleep unless a message comes) and the abstract address of its
 * wake socket, a Unix datagram socket that the sleeper polls together with
 * the netmod's fd.  The protocol is Dekker's, with a full fence on each side:
 *
 *   receiver: armed = 1; fence; poll every queue; nothing? poll(2) the fds
 *   sender:   write the message; fence; armed? swap it to 0; was 1? send a byte
 *
 * Either the receiver's last pass sees the message, or the sender sees the
 * arming and signals: no wake-up is lost.  The swap lets one sender of many
 * signal.  A sender pays the fence and one load of a line the receiver
 * writes only when it arms, and only where sleep is on (MPIDI_POLL_wake_t.on).
 * A datagram from anyone else on the host (abstract sockets have no
 * permissions) is only a spurious wake-up: its bytes are drained unread and
 * the wait polls again.
 */
#ifndef POLL_WAKE_H_INCLUDED
#define POLL_WAKE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define MPIDI_POLL_WAKE_ADDR_MAX 48

typedef struct {
    uint32_t armed;
    uint32_t addr_len;          /* of addr, 0: no socket (nobody can wake it) */
    char addr[MPIDI_POLL_WAKE_ADDR_MAX];        /* sun_path of its wake socket */
    char pad[64 - 8 - MPIDI_POLL_WAKE_ADDR_MAX];
} MPIDI_POLL_wake_line_t;

typedef struct {
    int on;                     /* senders signal: sleep is on */
    MPIDI_POLL_wake_line_t *lines;      /* the node's region, NULL with one local rank */
    int me;                     /* this rank's line */
    int fd;                     /* the wake socket, -1 before open */
    uint32_t addr_len;          /* its address */
    char addr[MPIDI_POLL_WAKE_ADDR_MAX];
    int sleeper;                /* a thread of this process sleeps */
    unsigned long long sent, received;  /* signals sent, datagrams drained */
} MPIDI_POLL_wake_t;

/* Binds this process' wake socket (an address the kernel chooses) and
 * publishes it in lines[me] (lines may be NULL: no local peers).  Returns 0
 * or an errno. */
int MPIDI_POLL_wake_open(MPIDI_POLL_wake_t * w, MPIDI_POLL_wake_line_t * lines, int me);
/* Publishes an open socket's address in lines[me] (the region came after
 * the socket: a blocking wait of MPI_Init opened it first). */
void MPIDI_POLL_wake_publish(MPIDI_POLL_wake_t * w, MPIDI_POLL_wake_line_t * lines, int me);
void MPIDI_POLL_wake_close(MPIDI_POLL_wake_t * w);

/* Sends one datagram to local rank `peer`'s socket (its address read from
 * the region, checked against its bounds). */
void MPIDI_POLL_wake_send(MPIDI_POLL_wake_t * w, int peer);

/* Wakes another thread of this process that sleeps. */
void MPIDI_POLL_wake_self(MPIDI_POLL_wake_t * w);

static inline void MPIDI_POLL_wake_arm(MPIDI_POLL_wake_t * w)
{
    if (w->lines)
        __atomic_store_n(&w->lines[w->me].armed, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void MPIDI_POLL_wake_disarm(MPIDI_POLL_wake_t * w)
{
    if (w->lines)
        __atomic_store_n(&w->lines[w->me].armed, 0, __ATOMIC_RELAXED);
}

/* After a message was made visible to local rank `peer`. */
static inline void MPIDI_POLL_wake_signal(MPIDI_POLL_wake_t * w, int peer)
{
    if (!w->on)
        return;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint32_t *armed = &w->lines[peer].armed;
    if (__atomic_load_n(armed, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(armed, 0, __ATOMIC_ACQ_REL))
        MPIDI_POLL_wake_send(w, peer);
}

/* Sleeps in poll(2) on the wake socket and nm_fd (-1: none) for at most
 * timeout_ms, then disarms and drains the socket; returns 1 when a datagram
 * or nm_fd ended it, 0 on the timeout (and on EINTR). */
int MPIDI_POLL_wake_sleep(MPIDI_POLL_wake_t * w, int nm_fd, int timeout_ms);

#endif /* POLL_WAKE_H_INCLUDED */
