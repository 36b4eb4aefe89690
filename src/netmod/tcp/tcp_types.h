/*
 * mpich-multichannel: ch4:tcp internals shared by its source files (not by
 * the rest of MPICH, which sees tcp_impl.h only).
 *
 * One epoll set holds the listening socket and every connection.  A peer
 * (world rank) has at most one chosen connection, MPIDI_TCP_global.vc[rank],
 * created lazily on the first send.  Each connection has a send queue written
 * with writev and a resumable receive state: a read-ahead buffer in which
 * headers and small messages are assembled, and the payload of a large
 * message read straight into the request MPICH hands back.
 */
#ifndef TCP_TYPES_H_INCLUDED
#define TCP_TYPES_H_INCLUDED

#include "tcp_impl.h"
#include <netinet/in.h>
#include <sys/uio.h>
#include "tcp_proto.h"
#include "tcp_policy.h"

/* read-ahead buffer: holds one read-ahead plus the largest header */
#define MPIDI_TCP_RBUF_SIZE   (MPIDI_TCP_READAHEAD + MPIDI_TCP_HDR_SIZE + MPIDI_TCP_AM_HDR_MAX)
/* segment in which noncontiguous data is packed for sending */
#define MPIDI_TCP_PACK_SEG    65536
/* per progress call and connection: bytes read before yielding */
#define MPIDI_TCP_READ_BUDGET (4 * 1024 * 1024)
#define MPIDI_TCP_MAX_EVENTS  32
/* seconds between checks of connect deadlines and of receives from dead peers */
#define MPIDI_TCP_TIMER_PERIOD 0.2

typedef enum {
    MPIDI_TCP_CONN_CONNECTING,  /* nonblocking connect in flight */
    MPIDI_TCP_CONN_HELLO_SENT,  /* initiator waits for HELLO_ACK or HELLO_NAK */
    MPIDI_TCP_CONN_REFUSED,     /* initiator got HELLO_NAK: sends wait for the peer's connection */
    MPIDI_TCP_CONN_ACCEPTED,    /* acceptor waits for HELLO */
    MPIDI_TCP_CONN_ESTABLISHED,
    MPIDI_TCP_CONN_CLOSED,      /* orderly: both sides done, or the peer finalized */
    MPIDI_TCP_CONN_DEAD         /* failed: every request on it completed with an error */
} MPIDI_TCP_conn_state_t;

/* a send waiting for something only its peer can send (CTS or SSEND_ACK) */
typedef struct MPIDI_TCP_await {
    struct MPIDI_TCP_await *next;
    MPIR_Request *sreq;
    int handler_id;             /* MPIDIG_SEND_CTS or MPIDIG_SSEND_ACK */
} MPIDI_TCP_await_t;

typedef struct MPIDI_TCP_sendq {
    struct MPIDI_TCP_sendq *next;
    MPIR_Request *sreq;         /* completed by origin_cbs[handler_id]; NULL for a header */
    int handler_id;
    struct iovec iov[2];        /* [0] headers in hdr[], [1] payload or packed segment */
    struct iovec *iov_cur;
    int iov_cnt;
    /* noncontiguous payload, packed MPIDI_TCP_PACK_SEG bytes at a time */
    const void *buf;
    MPI_Aint count;
    MPI_Datatype datatype;
    MPI_Aint data_sz, packed;
    char *pack_buf;
    char hdr[];                 /* wire header + MPIDIG header */
} MPIDI_TCP_sendq_t;

typedef struct MPIDI_TCP_conn {
    struct MPIDI_TCP_conn *next;        /* MPIDI_TCP_global.conns */
    int fd;
    int peer;                   /* world rank; -1 until identified */
    MPIDI_TCP_conn_state_t state;
    int outgoing;               /* we connected */
    int self_rx;                /* receive end of the socketpair to ourselves */
    int zombie;                 /* closed; freed at the end of the progress call */
    int writing;                /* counted in MPIDI_TCP_global.n_writing */
    double deadline;            /* connect / handshake deadline */
    uint32_t events;            /* registered with epoll */
    struct sockaddr_in remote;
    /* control message (HELLO, ACK, NAK, CLOSE) written before the queue */
    uint8_t ctl[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HELLO_SIZE];
    size_t ctl_len, ctl_off;
    int close_after_ctl;        /* refused incoming connection: close once the NAK is out */
    int sent_close, got_close, shut_wr;
    MPIDI_TCP_sendq_t *sq_head, *sq_tail;
    MPIDI_TCP_await_t *awaits;
    /* receive */
    uint8_t *rbuf;
    size_t r_head, r_tail;
    size_t readahead;           /* bytes the next read asks for (MPIDI_TCP_READAHEAD*) */
    size_t need;                /* bytes the message being assembled still lacks */
    uint64_t rx_left;           /* payload bytes of an async message still to read */
    MPIR_Request *rx_req;       /* its request, NULL to discard */
    char *rx_held;              /* or the buffer of an unexpected message ch4:tcp holds */
    int rx_active;
} MPIDI_TCP_conn_t;

typedef struct {
    struct in_addr ip;
    uint16_t port;              /* network byte order */
    uint16_t pad;
} MPIDI_TCP_bc_t;

typedef struct {
    int epfd;
    int listen_fd;
    MPIDI_TCP_bc_t me;
    char ifname[16];
    int rank, size;
    MPIDI_TCP_bc_t *addrs;      /* per world rank */
    MPIDI_TCP_conn_t **vc;      /* per world rank: the chosen connection */
    int *dead_err;              /* per world rank: error code once it failed */
    MPIDI_TCP_conn_t *conns;    /* every connection, including unidentified ones */
    MPIDI_TCP_conn_t *zombies;  /* closed, still maybe named by this call's epoll events */
    int n_pending;              /* connections not yet established or accepted */
    int n_writing;              /* connections with bytes the socket has not taken yet */
    int n_dead;
    double next_timer;
    int finalizing;
    /* CVARs, validated (the eager limit is MPIDI_TCP_eager_max) */
    int sndbuf, rcvbuf, nodelay, timeout;
    int port_lo, port_hi;
} MPIDI_TCP_global_t;

extern MPIDI_TCP_global_t MPIDI_TCP_global;

static inline double MPIDI_TCP_now(void)
{
    MPL_time_t t;
    double d;
    MPL_wtime(&t);
    MPL_wtime_todouble(&t, &d);
    return d;
}

/* tcp_sock.c */
int MPIDI_TCP_sock_setup(int fd, int is_listener);
int MPIDI_TCP_sock_established(int fd);
int MPIDI_TCP_sock_listen(void);
int MPIDI_TCP_choose_address(struct in_addr *ip);
const char *MPIDI_TCP_addr_str(const MPIDI_TCP_bc_t * a, char *buf, size_t len);

/* tcp_conn.c */
int MPIDI_TCP_conn_get(int rank, MPIDI_TCP_conn_t ** conn);
int MPIDI_TCP_conn_accept(void);
int MPIDI_TCP_conn_connected(MPIDI_TCP_conn_t * c);
int MPIDI_TCP_conn_hello(MPIDI_TCP_conn_t * c, const uint8_t * body);
int MPIDI_TCP_conn_hello_reply(MPIDI_TCP_conn_t * c, int ack);
void MPIDI_TCP_conn_ctl(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op, const uint8_t * body,
                        size_t body_len);
void MPIDI_TCP_conn_events(MPIDI_TCP_conn_t * c, uint32_t events);
void MPIDI_TCP_conn_fail(MPIDI_TCP_conn_t * c, int err);
void MPIDI_TCP_conn_free(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_reap(void);
int MPIDI_TCP_peer_error(int rank, const char *what, int sys_errno);
void MPIDI_TCP_check_timers(void);
void MPIDI_TCP_sweep_posted(int probe_unconnected);

/* tcp_am.c */
int MPIDI_TCP_flush(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_sendq_fail(MPIDI_TCP_conn_t * c, int err);
void MPIDI_TCP_set_writing(MPIDI_TCP_conn_t * c, int writing);
void MPIDI_TCP_flush_all(void);
void MPIDI_TCP_await_done(MPIDI_TCP_conn_t * c, int handler_id, const void *am_hdr);

/* tcp_progress.c */
void MPIDI_TCP_rx_abort(MPIDI_TCP_conn_t * c, int err);

#endif /* TCP_TYPES_H_INCLUDED */
