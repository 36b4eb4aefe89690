/*
 * mpich-multichannel: ch4:tcp internals shared by its source files (not by
 * the rest of MPICH, which sees tcp_impl.h only).
 *
 * One epoll set holds the listening socket and every connection.  A peer
 * (an index into the per-peer tables below, found through ch4's av entry:
 * MPIDI_TCP_RANK_TO_PEER; the world's ranks are 0..size-1) has at most one
 * chosen connection, MPIDI_TCP_global.vc[peer],
 * created lazily on the first send and adopted only once both ends proved
 * they belong to the job (tcp_auth.h).  Each connection has a send queue written
 * with writev and a resumable receive state: a read-ahead buffer in which
 * headers and small messages are assembled, and the payload of a large
 * message read straight into the request MPICH hands back.
 */
#ifndef TCP_TYPES_H_INCLUDED
#define TCP_TYPES_H_INCLUDED

#include "tcp_impl.h"
#include <netinet/in.h>
#include <sys/uio.h>
#include <time.h>
#include "tcp_proto.h"
#include "ch4_poll.h"
#include "tcp_auth.h"
#include "tcp_policy.h"

/* read-ahead buffer: holds one read-ahead plus the largest header */
#define MPIDI_TCP_RBUF_SIZE   (MPIDI_TCP_READAHEAD + MPIDI_TCP_HDR_SIZE + MPIDI_TCP_AM_HDR_MAX)
/* segment in which noncontiguous data is packed for sending */
#define MPIDI_TCP_PACK_SEG    65536
/* per progress call and connection: bytes read before yielding */
#define MPIDI_TCP_READ_BUDGET (4 * 1024 * 1024)
#define MPIDI_TCP_MAX_EVENTS  32
/* seconds between checks of deadlines and of receives from dead peers */
#define MPIDI_TCP_TIMER_PERIOD 0.2
/* seconds an accepted connection has to prove it belongs to the job */
#define MPIDI_TCP_UNPROVEN_TIME 5.0
/* connections accepted per progress call (bounded work under a flood) */
#define MPIDI_TCP_ACCEPT_BATCH 64

typedef enum {
    MPIDI_TCP_CONN_NONE,        /* no connection is: the state of opcodes valid in none */
    MPIDI_TCP_CONN_CONNECTING,  /* initiator: TCP connect in flight (CONNECT_TIMEOUT) */
    MPIDI_TCP_CONN_AWAIT_CHALLENGE,     /* initiator: connected, waits for the listener's nonce */
    MPIDI_TCP_CONN_HELLO_SENT,  /* initiator: proof sent, waits for the verdict */
    MPIDI_TCP_CONN_BACKOFF,     /* initiator: closed before a verdict, reconnects at retry_at */
    MPIDI_TCP_CONN_REFUSED,     /* initiator got HELLO_NAK: sends wait for the peer's connection */
    MPIDI_TCP_CONN_UNPROVEN,    /* listener: challenge sent, waits for a HELLO */
    MPIDI_TCP_CONN_ESTABLISHED,
    MPIDI_TCP_CONN_CLOSED,      /* orderly: both sides done, or the peer finalized */
    MPIDI_TCP_CONN_DEAD         /* failed: every request on it completed with an error */
} MPIDI_TCP_conn_state_t;

/* a reply only this peer may send, naming one of our requests: a CTS or
 * SSEND_ACK for a send, the data for a receive we sent a CTS for */
typedef struct MPIDI_TCP_await {
    struct MPIDI_TCP_await *next;
    MPIR_Request *req;
    int handler_id;             /* MPIDIG_SEND_CTS, MPIDIG_SSEND_ACK or MPIDIG_SEND_DATA */
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
    int peer;                   /* peer index; -1 until proven */
    MPIDI_TCP_conn_state_t state;
    int outgoing;               /* we connected */
    int self_rx;                /* receive end of the socketpair to ourselves */
    int zombie;                 /* closed; freed at the end of the progress call */
    int writing;                /* counted in MPIDI_TCP_global.n_writing */
    double deadline;            /* monotonic; 0 = none (see MPIDI_TCP_check_timers) */
    uint32_t events;            /* registered with epoll */
    struct sockaddr_in remote;
    /* handshake: both nonces (a DYN_MSG is bound to them), and the hello
     * sent or received: HELLO within the job, PORT_HELLO or DYN_HELLO with
     * a process of another one (hs_op) */
    uint8_t nonce_l[MPIDI_TCP_NONCE_SIZE];
    uint8_t nonce_i[MPIDI_TCP_NONCE_SIZE];
    MPIDI_TCP_opcode_t hs_op;
    union {
        MPIDI_TCP_hello_t hello;
        MPIDI_TCP_port_hello_t port;
        MPIDI_TCP_dyn_hello_t dyn;
    } hs_msg;
    uint8_t hs[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HS_BODY_MAX];     /* a handshake message arriving */
    size_t hs_len;
    int retries;                /* reconnects after a close before the verdict */
    double retry_since;
    /* control message (handshake, CLOSE) written before the queue */
    uint8_t ctl[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HS_BODY_MAX];
    size_t ctl_len, ctl_off;
    int close_after_ctl;        /* refused incoming connection: close once the verdict is out */
    int sent_close, got_close, shut_wr;
    MPIDI_TCP_sendq_t *sq_head, *sq_tail;
    MPIDI_TCP_await_t *awaits;
    /* receive, once established: the read-ahead buffer is allocated at the first read */
    uint8_t *rbuf;
    size_t r_head, r_tail;
    size_t readahead;           /* bytes the next read asks for (MPIDI_TCP_READAHEAD*) */
    size_t need;                /* bytes the message being assembled still lacks */
    uint64_t rx_left;           /* payload bytes of an async message still to read */
    MPIR_Request *rx_req;       /* its request, NULL to discard */
    char *rx_held;              /* or the buffer of an unexpected message ch4:tcp holds */
    size_t rx_carry;            /* bytes of a split element at rbuf's front (datatype receive) */
    int rx_active;
} MPIDI_TCP_conn_t;

/* a rank's listening address */
typedef struct {
    struct in_addr ip;
    uint16_t port;              /* network byte order */
    uint16_t pad;
} MPIDI_TCP_bc_t;

/* what a rank publishes through PMI, and nowhere else */
typedef struct {
    MPIDI_TCP_bc_t addr;
    uint32_t eager_max;         /* the largest eager payload it sends */
    uint32_t pad;
    uint8_t key[MPIDI_TCP_KEY_SIZE];    /* proves a connection to it (tcp_auth.h) */
    uint8_t pk[MPIDI_TCP_PK_SIZE];      /* its key-exchange public key (in its upid) */
} MPIDI_TCP_card_t;

/* What the connection layer asks of the protocol above it (tcp_init.c wires
 * tcp_am.c's and tcp_rx.c's), so that calls run one way: progress ->
 * protocol -> connection -> socket (doc/tcp.md, Source layout). */
typedef struct {
    /* an entry's bytes are all out: 1 when it has more (a packed segment in iov),
     * -1 when its payload cannot be produced */
    int (*sendq_refill)(MPIDI_TCP_sendq_t * e);
    /* an entry is written whole (MPI_SUCCESS) or given up (err): complete, free it */
    void (*sendq_done)(MPIDI_TCP_sendq_t * e, int err);
    /* a connection failed with err and is about to be freed (its queue failed first) */
    void (*failing)(MPIDI_TCP_conn_t * c, int err);
    /* the peer of a failed connection is now dead (MPIDI_TCP_global.dead_err) */
    void (*peer_died)(void);
    /* the listener accepted a connection: the handshake's first word */
    void (*accepted)(MPIDI_TCP_conn_t * c);
} MPIDI_TCP_conn_ops_t;

/* a process of another job (peer index >= the world's size) */
typedef struct {
    int avtid, lpid;            /* where ch4 last named it (4.x), avtid -1: nowhere */
    int keyed;                  /* rx and tx are the pair's MAC keys (tcp_auth.h) */
    uint8_t rx[MPIDI_TCP_KEY_SIZE], tx[MPIDI_TCP_KEY_SIZE];
} MPIDI_TCP_dyn_peer_t;

struct MPIDI_TCP_port;          /* tcp_dynamic.c */
struct MPIDI_TCP_link;
struct MPIDI_TCP_dmsg;

typedef struct {
    const MPIDI_TCP_conn_ops_t *ops;
    int epfd;
    int listen_fd;
    int spare_fd;               /* given up to accept-and-close when out of descriptors */
    MPIDI_TCP_card_t me;
    uint8_t kx_sk[MPIDI_TCP_SK_SIZE];   /* the private key of me.pk */
    char ifname[16];
    int rank, size;
    int n_peers, peer_cap;      /* the world's size, then processes of other jobs */
    MPIDI_TCP_dyn_peer_t *dyn;  /* per peer from the world's size on */
    MPIDI_TCP_card_t *cards;    /* per peer (another job's: no key) */
    MPIDI_TCP_conn_t **vc;      /* per peer: the chosen connection */
    void *comm_map;             /* recvcontext_id -> communicator (tcp_hooks.c) */
    uint64_t last_ctx;          /* the last one looked up */
    void *last_comm;
    int *dead_err;              /* per peer: error code once it failed */
    MPIDI_TCP_conn_t *conns;    /* every connection, including unproven ones */
    MPIDI_TCP_conn_t *zombies;  /* closed, still maybe named by this call's epoll events */
    int n_pending;              /* connections not yet established */
    int n_unproven, unproven_max;
    int n_writing;              /* connections with bytes the socket has not taken yet */
    int n_awaits;               /* CTS, SSEND_ACK and data awaited from peers */
    int n_rx_active;            /* connections in the middle of a message's payload */
    int n_arrived;              /* messages dispatched in this progress call */
    int n_read;                 /* reads that took bytes in this call (pieces of messages) */
    int n_dead;
    double next_timer, next_liveness;
    int finalizing;
    /* dynamic processes (tcp_dynamic.c): our open ports, our links to others'
     * ports and to the connects we answer, DYN_MSGs received and checked
     * that no dynamic_recv has taken yet */
    struct MPIDI_TCP_port *ports;
    struct MPIDI_TCP_link *links;
    struct MPIDI_TCP_dmsg *dmsgs;
    /* CVARs, validated (the eager limit is MPIDI_TCP_eager_max) */
    int sndbuf, rcvbuf, nodelay, timeout, outage;
    int port_lo, port_hi;
} MPIDI_TCP_global_t;

extern MPIDI_TCP_global_t MPIDI_TCP_global;

/* a connection not yet established: connecting, waiting to reconnect, or
 * in its handshake */
static inline int MPIDI_TCP_conn_is_pending(MPIDI_TCP_conn_state_t st)
{
    return st <= MPIDI_TCP_CONN_UNPROVEN;
}

/* deadlines: monotonic seconds, immune to clock steps */
static inline double MPIDI_TCP_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + t.tv_nsec * 1e-9;
}

#define MPIDI_TCP_ADDR(rank) (&MPIDI_TCP_global.cards[rank].addr)

/* tcp_sock.c */
int MPIDI_TCP_sock_setup(int fd, int is_listener);
int MPIDI_TCP_sock_listen(void);
int MPIDI_TCP_choose_address(struct in_addr *ip);
const char *MPIDI_TCP_addr_str(const MPIDI_TCP_bc_t * a, char *buf, size_t len);
const char *MPIDI_TCP_sockaddr_str(const struct sockaddr_in *sa, char *buf, size_t len);
void MPIDI_TCP_refused(const struct sockaddr_in *from, const char *why);

/* tcp_liveness.c */
void MPIDI_TCP_liveness_setup(int fd);
void MPIDI_TCP_liveness_check(double now);

/* tcp_accept.c */
int MPIDI_TCP_accept_init(void);
void MPIDI_TCP_accept(void);

/* tcp_conn.c */
const char *MPIDI_TCP_peer_str(int peer, char *buf, size_t len);
int MPIDI_TCP_peers_init(int n);
int MPIDI_TCP_peer_add(int *peer);
MPIDI_TCP_conn_t *MPIDI_TCP_conn_new(int fd, int peer, MPIDI_TCP_conn_state_t st, int outgoing);
void MPIDI_TCP_conn_set_state(MPIDI_TCP_conn_t * c, MPIDI_TCP_conn_state_t st);
int MPIDI_TCP_conn_get(int rank, MPIDI_TCP_conn_t ** conn);
void MPIDI_TCP_conn_connected(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_conn_adopt(MPIDI_TCP_conn_t * c, int peer);
void MPIDI_TCP_conn_yield(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_conn_lost(MPIDI_TCP_conn_t * c, const char *what, int sys_errno);
void MPIDI_TCP_conn_ctl(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op, const uint8_t * body,
                        size_t body_len);
void MPIDI_TCP_conn_events(MPIDI_TCP_conn_t * c, uint32_t events);
void MPIDI_TCP_conn_fail(MPIDI_TCP_conn_t * c, int err);
void MPIDI_TCP_conn_free(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_reap(void);
int MPIDI_TCP_peer_error(int peer, const char *what, int sys_errno);
void MPIDI_TCP_check_timers(double now);

/* tcp_sendq.c */
ssize_t MPIDI_TCP_sendv(int fd, const struct iovec *iov, int cnt);
void MPIDI_TCP_sendq_push(MPIDI_TCP_conn_t * c, MPIDI_TCP_sendq_t * e);
int MPIDI_TCP_flush(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_sendq_fail(MPIDI_TCP_conn_t * c, int err);
void MPIDI_TCP_set_writing(MPIDI_TCP_conn_t * c, int writing);
void MPIDI_TCP_flush_all(void);

/* tcp_am.c */
int MPIDI_TCP_am_sendq_refill(MPIDI_TCP_sendq_t * e);
void MPIDI_TCP_am_sendq_done(MPIDI_TCP_sendq_t * e, int err);
int MPIDI_TCP_await_take(MPIDI_TCP_conn_t * c, MPIR_Request * req, int handler_id);
void MPIDI_TCP_awaits_fail(MPIDI_TCP_conn_t * c, int err);

/* tcp_hooks.c */
void *MPIDI_TCP_comm_lookup(uint64_t recvcontext_id);

/* tcp_world.c */
int MPIDI_TCP_bootstrap(MPIR_Comm * comm);
void MPIDI_TCP_upid_of(int peer, uint8_t * upid);
void MPIDI_TCP_dyn_unplace(int peer);

/* tcp_dynamic.c */
int MPIDI_TCP_peer_of_upid(const uint8_t * upid);
int MPIDI_TCP_dyn_keys(int peer);
const uint8_t *MPIDI_TCP_dial_secret(int peer, uint32_t * tag);
const uint8_t *MPIDI_TCP_dial_secret_of(int peer, uint32_t tag);
int MPIDI_TCP_port_admit(uint32_t tag, const uint8_t ** secret);
void MPIDI_TCP_dial_refused(int peer);
int MPIDI_TCP_dyn_rx(MPIDI_TCP_conn_t * c, const uint8_t * body, size_t len);
int MPIDI_TCP_dyn_peer_add(const uint8_t * upid, size_t len, int *peer);
int MPIDI_TCP_port_named(int peer, const uint8_t * rec);
int MPIDI_TCP_dyn_send(int peer, int tag, const void *buf, int size, int timeout);
int MPIDI_TCP_dyn_recv(int tag, void *buf, int size, int timeout);
int MPIDI_TCP_dyn_sendrecv(int peer, int tag, const void *send_buf, int send_size,
                           void *recv_buf, int recv_size, int timeout);
void MPIDI_TCP_dyn_done(int peer, int tag, int failed);
void MPIDI_TCP_dyn_finalize(void);

/* tcp_verify.c */
const char *MPIDI_TCP_verify_am(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h,
                                const void *am_hdr);

/* tcp_handshake.c */
void MPIDI_TCP_hs_accepted(MPIDI_TCP_conn_t * c);
int MPIDI_TCP_handshake(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body);

/* tcp_rx.c */
int MPIDI_TCP_conn_read(MPIDI_TCP_conn_t * c);
void MPIDI_TCP_rx_abort(MPIDI_TCP_conn_t * c, int err);
void MPIDI_TCP_conn_failing(MPIDI_TCP_conn_t * c, int err);
void MPIDI_TCP_sweep_posted(int probe_unconnected);
void MPIDI_TCP_peer_died(void);
int MPIDI_TCP_protocol_error(MPIDI_TCP_conn_t * c, const char *why);

/* tcp_progress.c */
MPIDI_POLL_nm_state_t MPIDI_TCP_poll_state(void);

#endif /* TCP_TYPES_H_INCLUDED */
