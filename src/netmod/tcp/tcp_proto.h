/*
 * mpich-multichannel: ch4:tcp wire format.
 *
 * Every message on a connection starts with a 16-byte header, encoded
 * little-endian byte by byte so ranks never depend on struct layout:
 *
 *   0  version     MPIDI_TCP_PROTO_VERSION
 *   1  opcode      MPIDI_TCP_opcode_t
 *   2  handler_id  MPIDIG handler of an AM message, 0 otherwise
 *   3  flags       reserved, 0
 *   4  src_vci
 *   5  dst_vci
 *   6  am_hdr_sz   bytes of MPIDIG header that follow (u16)
 *   8  payload_sz  bytes of payload after the MPIDIG header (u64)
 *
 * A connection is adopted only after a challenge-response in which both ends
 * prove they hold the listener's key (tcp_auth.h), which ranks learn only
 * through PMI.  Bodies, all of fixed size:
 *
 *   CHALLENGE  listener -> initiator, at accept: magic, reserved, nonce_l[32]
 *   HELLO      initiator: magic, its rank, world size, the rank it connects to,
 *              nonce_i[32], mac[32] (over both nonces and the three numbers)
 *   HELLO_ACK, HELLO_NAK, HELLO_DEAD   listener's verdict: mac[32] (over the
 *              verdict, both nonces and the numbers of the HELLO)
 *
 * Processes of two jobs (dynamic processes, doc/tcp-dynamic.md) answer the
 * same CHALLENGE with their own proofs:
 *
 *   PORT_HELLO initiator -> a port's owner: magic, tag, upid[48], nonce_i[32],
 *              mac[32] (under the port's secret)
 *   PORT_ACK, PORT_NAK   the owner's verdict: mac[32] (a NAK grants nothing:
 *              when the port is unknown its 32 bytes are zero)
 *   DYN_HELLO  initiator -> a process of the other job: magic, upid[48],
 *              pk[32] (the listener's, as known), nonce_i[32], mac[32]
 *   DYN_ACK, DYN_NAK, DYN_DEAD   the listener's verdict: mac[32]
 *   DYN_MSG    on an established connection, ch4's dynamic_send (and a
 *              piece of 5.0's dynamic_sendrecv, or a root's withdrawal
 *              from a connect it gave up): tag, kind,
 *              0, len (u16), data[len], mac[32] (under the port's secret,
 *              bound to the connection's two nonces); the only control
 *              body whose size varies, 40 to 40 + MPIDI_TCP_DYN_DATA_MAX
 *
 * The header is validated completely (version first, then the opcode, then
 * every size against the opcode's limits) before anything is dispatched, so
 * a malformed or foreign stream is refused, never indexed.
 *
 * Plain C: no MPICH headers, unit-tested in test/unit/test_tcp.c.
 */
#ifndef TCP_PROTO_H_INCLUDED
#define TCP_PROTO_H_INCLUDED

#include <stdint.h>
#include <string.h>

#define MPIDI_TCP_PROTO_VERSION 3
#define MPIDI_TCP_HDR_SIZE      16
#define MPIDI_TCP_MAGIC         0x4d4d4354u     /* "MMCT" */
#define MPIDI_TCP_NONCE_SIZE    32
#define MPIDI_TCP_MAC_SIZE      32
#define MPIDI_TCP_CHALLENGE_SIZE (8 + MPIDI_TCP_NONCE_SIZE)
#define MPIDI_TCP_HELLO_SIZE    (16 + MPIDI_TCP_NONCE_SIZE + MPIDI_TCP_MAC_SIZE)
#define MPIDI_TCP_REPLY_SIZE    MPIDI_TCP_MAC_SIZE
/* processes of other jobs (doc/tcp-dynamic.md): a upid, a port's secret, a
 * key-exchange public key */
#define MPIDI_TCP_UPID_SIZE     48
#define MPIDI_TCP_SECRET_SIZE   32
#define MPIDI_TCP_PK_SIZE       32
#define MPIDI_TCP_PORT_HELLO_SIZE (8 + MPIDI_TCP_UPID_SIZE + MPIDI_TCP_NONCE_SIZE + \
                                   MPIDI_TCP_MAC_SIZE)
#define MPIDI_TCP_DYN_HELLO_SIZE (4 + MPIDI_TCP_UPID_SIZE + MPIDI_TCP_PK_SIZE + \
                                  MPIDI_TCP_NONCE_SIZE + MPIDI_TCP_MAC_SIZE)
/* what a port name adds to its owner's upid: 'P', the protocol version, 0,
 * the port's tag, its secret (MPI_Open_port, tcp_dynamic.c) */
#define MPIDI_TCP_PORT_REC_SIZE (8 + MPIDI_TCP_SECRET_SIZE)
/* ch4's dynamic_send carries at most a context id, a length and an address
 * of MPI_MAX_PORT_NAME (256) bytes (ch4_spawn.c, 4.x and 5.0); more (5.0's
 * dynamic_sendrecv) goes in pieces of this size */
#define MPIDI_TCP_DYN_DATA_MAX  264
#define MPIDI_TCP_DYN_MSG_MIN   (8 + MPIDI_TCP_MAC_SIZE)
/* the largest handshake body (DYN_MSG is no handshake message) */
#define MPIDI_TCP_HS_BODY_MAX   MPIDI_TCP_DYN_HELLO_SIZE
/* largest MPIDIG header carried inline: RMA sends a flattened datatype in the
 * header when it fits, as payload when it does not */
#define MPIDI_TCP_AM_HDR_MAX    8192
/* sizes above 2^62 are corrupt streams, not messages */
#define MPIDI_TCP_PAYLOAD_MAX   (UINT64_C(1) << 62)

typedef enum {
    MPIDI_TCP_OP_CHALLENGE = 1, /* listener -> initiator: prove you hold my key */
    MPIDI_TCP_OP_HELLO,         /* initiator -> listener: who I am, and the proof */
    MPIDI_TCP_OP_HELLO_ACK,     /* listener keeps this connection (and proves itself) */
    MPIDI_TCP_OP_HELLO_NAK,     /* listener keeps its own connection to us instead */
    MPIDI_TCP_OP_HELLO_DEAD,    /* listener has declared the initiator failed */
    MPIDI_TCP_OP_AM,    /* an MPIDIG active message */
    MPIDI_TCP_OP_CLOSE, /* orderly shutdown: nothing follows */
    MPIDI_TCP_OP_PORT_HELLO,    /* initiator -> a port's owner: I was told the port's secret */
    MPIDI_TCP_OP_PORT_ACK,      /* the owner keeps this connection (and proves it holds the secret) */
    MPIDI_TCP_OP_PORT_NAK,      /* no such port, or a process of another MPICH version */
    MPIDI_TCP_OP_DYN_HELLO,     /* initiator -> a process of another job: our pair's proof */
    MPIDI_TCP_OP_DYN_ACK,
    MPIDI_TCP_OP_DYN_NAK,       /* the listener keeps its own connection to us instead */
    MPIDI_TCP_OP_DYN_DEAD,      /* the listener has declared the initiator failed */
    MPIDI_TCP_OP_DYN_MSG,       /* ch4's dynamic_send: a connect to a port, or its reply */
    MPIDI_TCP_OP_MAX
} MPIDI_TCP_opcode_t;

typedef struct {
    uint8_t version;
    uint8_t opcode;
    uint8_t handler_id;
    uint8_t flags;
    uint8_t src_vci;
    uint8_t dst_vci;
    uint16_t am_hdr_sz;
    uint64_t payload_sz;
} MPIDI_TCP_hdr_t;

typedef struct {
    uint32_t rank;              /* the initiator's world rank */
    uint32_t size;              /* world size */
    uint32_t dest;              /* the world rank it means to reach */
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE];
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
} MPIDI_TCP_hello_t;

/* A process's public address, what MPICH calls its upid: sent in clear to
 * other jobs (port names, MPI_Comm_connect's exchange), so it holds nothing
 * secret.  The MPICH version is in it because MPIDIG's handler ids and
 * headers differ between versions: two jobs of different versions get an
 * MPI error, never each other's frames. */
typedef struct {
    uint32_t ip;                /* IPv4, network byte order */
    uint16_t port;              /* network byte order */
    uint32_t eager_max;         /* the largest eager payload it sends */
    uint32_t mpich_version;     /* MPICH_NUMVERSION */
    uint8_t pk[MPIDI_TCP_PK_SIZE];      /* its key-exchange public key */
} MPIDI_TCP_upid_t;

/* The first message on a connection to a port (MPI_Comm_connect's root):
 * proves the initiator was told the port's secret. */
typedef struct {
    uint32_t tag;               /* the port's tag at the acceptor */
    uint8_t upid[MPIDI_TCP_UPID_SIZE];  /* the initiator's, encoded */
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE];
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
} MPIDI_TCP_port_hello_t;

/* The first message between two processes of different jobs once their roots
 * are connected: proves the initiator holds the private key of the upid it
 * names, to the holder of pk. */
typedef struct {
    uint8_t upid[MPIDI_TCP_UPID_SIZE];  /* the initiator's, encoded */
    uint8_t pk[MPIDI_TCP_PK_SIZE];      /* the listener's public key, as the initiator knows it */
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE];
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
} MPIDI_TCP_dyn_hello_t;

/* what a DYN_MSG is: a port's connect carries the connector's upid, the
 * owner's reply its context id (ch4_spawn.c, 4.x); on 5.0 the roots then
 * exchange their groups (ch4_comm.c) in DATA pieces */
typedef enum {
    MPIDI_TCP_DYN_CONNECT = 1,  /* to the owner of port tag */
    MPIDI_TCP_DYN_REPLY,        /* the owner's answer to a CONNECT on tag */
    MPIDI_TCP_DYN_REFUSED,      /* the owner's refusal: port closed, or too many connects queued */
    MPIDI_TCP_DYN_DATA,         /* a piece of the roots' exchange after a CONNECT on tag */
    MPIDI_TCP_DYN_WITHDRAWN,    /* either root to the other: it gave up the connect on tag */
    MPIDI_TCP_DYN_KIND_MAX
} MPIDI_TCP_dyn_kind_t;

/* the most the roots' exchange of 5.0 carries each way: a million processes
 * at 48 bytes of upid and 16 of the rest each */
#define MPIDI_TCP_DYN_XCHG_MAX  (64 << 20)

typedef struct {
    uint32_t tag;
    uint8_t kind;               /* MPIDI_TCP_dyn_kind_t */
    uint16_t len;
    uint8_t data[MPIDI_TCP_DYN_DATA_MAX];
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
} MPIDI_TCP_dyn_msg_t;

typedef enum {
    MPIDI_TCP_HDR_OK = 0,
    MPIDI_TCP_HDR_EVERSION,
    MPIDI_TCP_HDR_EOPCODE,
    MPIDI_TCP_HDR_EHANDLER,
    MPIDI_TCP_HDR_EAMHDR,
    MPIDI_TCP_HDR_EPAYLOAD,
    MPIDI_TCP_HDR_EFLAGS,
    MPIDI_TCP_HELLO_EMAGIC,
    MPIDI_TCP_HELLO_ERANK,
    MPIDI_TCP_HELLO_EDEST,
    MPIDI_TCP_HELLO_EPROOF,
    MPIDI_TCP_UPID_ESIZE,
    MPIDI_TCP_UPID_EVERSION,
    MPIDI_TCP_UPID_EMPICH,
    MPIDI_TCP_UPID_EADDR,
    MPIDI_TCP_DYN_EKIND,
    MPIDI_TCP_DYN_ELEN,
    MPIDI_TCP_PORT_EREC,
} MPIDI_TCP_hdr_err_t;

static inline void MPIDI_TCP_put16(uint8_t * p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static inline void MPIDI_TCP_put32(uint8_t * p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline void MPIDI_TCP_put64(uint8_t * p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint16_t MPIDI_TCP_get16(const uint8_t * p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}

static inline uint32_t MPIDI_TCP_get32(const uint8_t * p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t MPIDI_TCP_get64(const uint8_t * p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline void MPIDI_TCP_hdr_encode(uint8_t * buf, const MPIDI_TCP_hdr_t * h)
{
    buf[0] = h->version;
    buf[1] = h->opcode;
    buf[2] = h->handler_id;
    buf[3] = h->flags;
    buf[4] = h->src_vci;
    buf[5] = h->dst_vci;
    MPIDI_TCP_put16(buf + 6, h->am_hdr_sz);
    MPIDI_TCP_put64(buf + 8, h->payload_sz);
}

/* The fixed body size of a control opcode (DYN_MSG's varies: see
 * MPIDI_TCP_hdr_decode). */
static inline uint64_t MPIDI_TCP_body_size(MPIDI_TCP_opcode_t op)
{
    switch (op) {
        case MPIDI_TCP_OP_CHALLENGE:
            return MPIDI_TCP_CHALLENGE_SIZE;
        case MPIDI_TCP_OP_HELLO:
            return MPIDI_TCP_HELLO_SIZE;
        case MPIDI_TCP_OP_PORT_HELLO:
            return MPIDI_TCP_PORT_HELLO_SIZE;
        case MPIDI_TCP_OP_DYN_HELLO:
            return MPIDI_TCP_DYN_HELLO_SIZE;
        case MPIDI_TCP_OP_HELLO_ACK:
        case MPIDI_TCP_OP_HELLO_NAK:
        case MPIDI_TCP_OP_HELLO_DEAD:
        case MPIDI_TCP_OP_PORT_ACK:
        case MPIDI_TCP_OP_PORT_NAK:
        case MPIDI_TCP_OP_DYN_ACK:
        case MPIDI_TCP_OP_DYN_NAK:
        case MPIDI_TCP_OP_DYN_DEAD:
            return MPIDI_TCP_REPLY_SIZE;
        default:
            return 0;
    }
}

/* Decodes and validates; n_handlers bounds an AM's handler id. */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_hdr_decode(const uint8_t * buf, int n_handlers,
                                                       MPIDI_TCP_hdr_t * h)
{
    h->version = buf[0];
    h->opcode = buf[1];
    h->handler_id = buf[2];
    h->flags = buf[3];
    h->src_vci = buf[4];
    h->dst_vci = buf[5];
    h->am_hdr_sz = MPIDI_TCP_get16(buf + 6);
    h->payload_sz = MPIDI_TCP_get64(buf + 8);

    if (h->version != MPIDI_TCP_PROTO_VERSION)
        return MPIDI_TCP_HDR_EVERSION;
    if (h->opcode < MPIDI_TCP_OP_CHALLENGE || h->opcode >= MPIDI_TCP_OP_MAX)
        return MPIDI_TCP_HDR_EOPCODE;
    if (h->flags != 0)
        return MPIDI_TCP_HDR_EFLAGS;
    if (h->opcode == MPIDI_TCP_OP_AM) {
        if (h->handler_id >= n_handlers)
            return MPIDI_TCP_HDR_EHANDLER;
        if (h->am_hdr_sz > MPIDI_TCP_AM_HDR_MAX)
            return MPIDI_TCP_HDR_EAMHDR;
        if (h->payload_sz > MPIDI_TCP_PAYLOAD_MAX)
            return MPIDI_TCP_HDR_EPAYLOAD;
        return MPIDI_TCP_HDR_OK;
    }
    if (h->handler_id != 0)
        return MPIDI_TCP_HDR_EHANDLER;
    if (h->am_hdr_sz != 0)
        return MPIDI_TCP_HDR_EAMHDR;
    if (h->opcode == MPIDI_TCP_OP_DYN_MSG)
        return h->payload_sz >= MPIDI_TCP_DYN_MSG_MIN &&
            h->payload_sz <= MPIDI_TCP_DYN_MSG_MIN + MPIDI_TCP_DYN_DATA_MAX ?
            MPIDI_TCP_HDR_OK : MPIDI_TCP_HDR_EPAYLOAD;
    if (h->payload_sz != MPIDI_TCP_body_size((MPIDI_TCP_opcode_t) h->opcode))
        return MPIDI_TCP_HDR_EPAYLOAD;
    return MPIDI_TCP_HDR_OK;
}

static inline void MPIDI_TCP_challenge_encode(uint8_t * buf, const uint8_t * nonce)
{
    MPIDI_TCP_put32(buf, MPIDI_TCP_MAGIC);
    MPIDI_TCP_put32(buf + 4, 0);
    memcpy(buf + 8, nonce, MPIDI_TCP_NONCE_SIZE);
}

/* Anything but an mpich-multichannel listener of this protocol is refused. */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_challenge_decode(const uint8_t * buf, uint8_t * nonce)
{
    if (MPIDI_TCP_get32(buf) != MPIDI_TCP_MAGIC || MPIDI_TCP_get32(buf + 4) != 0)
        return MPIDI_TCP_HELLO_EMAGIC;
    memcpy(nonce, buf + 8, MPIDI_TCP_NONCE_SIZE);
    return MPIDI_TCP_HDR_OK;
}

static inline void MPIDI_TCP_hello_encode(uint8_t * buf, const MPIDI_TCP_hello_t * m)
{
    MPIDI_TCP_put32(buf, MPIDI_TCP_MAGIC);
    MPIDI_TCP_put32(buf + 4, m->rank);
    MPIDI_TCP_put32(buf + 8, m->size);
    MPIDI_TCP_put32(buf + 12, m->dest);
    memcpy(buf + 16, m->nonce, MPIDI_TCP_NONCE_SIZE);
    memcpy(buf + 16 + MPIDI_TCP_NONCE_SIZE, m->mac, MPIDI_TCP_MAC_SIZE);
}

/* The numbers of a HELLO must fit this job (same world size, another rank of
 * it, meant for rank me); the proof is checked by MPIDI_TCP_auth_hello_check. */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_hello_decode(const uint8_t * buf, uint32_t world_size,
                                                         uint32_t me, MPIDI_TCP_hello_t * m)
{
    m->rank = MPIDI_TCP_get32(buf + 4);
    m->size = MPIDI_TCP_get32(buf + 8);
    m->dest = MPIDI_TCP_get32(buf + 12);
    memcpy(m->nonce, buf + 16, MPIDI_TCP_NONCE_SIZE);
    memcpy(m->mac, buf + 16 + MPIDI_TCP_NONCE_SIZE, MPIDI_TCP_MAC_SIZE);
    if (MPIDI_TCP_get32(buf) != MPIDI_TCP_MAGIC)
        return MPIDI_TCP_HELLO_EMAGIC;
    if (m->size != world_size || m->rank >= world_size || m->rank == me)
        return MPIDI_TCP_HELLO_ERANK;
    if (m->dest != me)
        return MPIDI_TCP_HELLO_EDEST;
    return MPIDI_TCP_HDR_OK;
}

/* 48 bytes: version, flags (0), port and IPv4 as in the card, eager limit,
 * MPICH version, public key */
static inline void MPIDI_TCP_upid_encode(uint8_t * buf, const MPIDI_TCP_upid_t * u)
{
    buf[0] = MPIDI_TCP_PROTO_VERSION;
    buf[1] = 0;
    memcpy(buf + 2, &u->port, 2);
    memcpy(buf + 4, &u->ip, 4);
    MPIDI_TCP_put32(buf + 8, u->eager_max);
    MPIDI_TCP_put32(buf + 12, u->mpich_version);
    memcpy(buf + 16, u->pk, MPIDI_TCP_PK_SIZE);
}

/* A upid from another process (len: the size MPICH was told), for a process
 * of this MPICH version (mpich_version: ours). */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_upid_decode(const uint8_t * buf, size_t len,
                                                        uint32_t mpich_version,
                                                        MPIDI_TCP_upid_t * u)
{
    if (len != MPIDI_TCP_UPID_SIZE)
        return MPIDI_TCP_UPID_ESIZE;
    if (buf[0] != MPIDI_TCP_PROTO_VERSION || buf[1] != 0)
        return MPIDI_TCP_UPID_EVERSION;
    memcpy(&u->port, buf + 2, 2);
    memcpy(&u->ip, buf + 4, 4);
    u->eager_max = MPIDI_TCP_get32(buf + 8);
    u->mpich_version = MPIDI_TCP_get32(buf + 12);
    memcpy(u->pk, buf + 16, MPIDI_TCP_PK_SIZE);
    if (u->mpich_version != mpich_version)
        return MPIDI_TCP_UPID_EMPICH;
    if (u->ip == 0 || u->port == 0)
        return MPIDI_TCP_UPID_EADDR;
    return MPIDI_TCP_HDR_OK;
}

static inline void MPIDI_TCP_port_rec_encode(uint8_t * buf, uint32_t tag, const uint8_t * secret)
{
    buf[0] = 'P';
    buf[1] = MPIDI_TCP_PROTO_VERSION;
    MPIDI_TCP_put16(buf + 2, 0);
    MPIDI_TCP_put32(buf + 4, tag);
    memcpy(buf + 8, secret, MPIDI_TCP_SECRET_SIZE);
}

/* The record after the upid in a port name someone gave us. */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_port_rec_decode(const uint8_t * buf, uint32_t * tag,
                                                            uint8_t * secret)
{
    if (buf[0] != 'P' || buf[1] != MPIDI_TCP_PROTO_VERSION || buf[2] || buf[3])
        return MPIDI_TCP_PORT_EREC;
    *tag = MPIDI_TCP_get32(buf + 4);
    memcpy(secret, buf + 8, MPIDI_TCP_SECRET_SIZE);
    return MPIDI_TCP_HDR_OK;
}

static inline void MPIDI_TCP_port_hello_encode(uint8_t * buf, const MPIDI_TCP_port_hello_t * m)
{
    MPIDI_TCP_put32(buf, MPIDI_TCP_MAGIC);
    MPIDI_TCP_put32(buf + 4, m->tag);
    memcpy(buf + 8, m->upid, MPIDI_TCP_UPID_SIZE);
    memcpy(buf + 8 + MPIDI_TCP_UPID_SIZE, m->nonce, MPIDI_TCP_NONCE_SIZE);
    memcpy(buf + 8 + MPIDI_TCP_UPID_SIZE + MPIDI_TCP_NONCE_SIZE, m->mac, MPIDI_TCP_MAC_SIZE);
}

/* the upid inside is decoded, and the proof checked, by the caller */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_port_hello_decode(const uint8_t * buf,
                                                              MPIDI_TCP_port_hello_t * m)
{
    m->tag = MPIDI_TCP_get32(buf + 4);
    memcpy(m->upid, buf + 8, MPIDI_TCP_UPID_SIZE);
    memcpy(m->nonce, buf + 8 + MPIDI_TCP_UPID_SIZE, MPIDI_TCP_NONCE_SIZE);
    memcpy(m->mac, buf + 8 + MPIDI_TCP_UPID_SIZE + MPIDI_TCP_NONCE_SIZE, MPIDI_TCP_MAC_SIZE);
    return MPIDI_TCP_get32(buf) == MPIDI_TCP_MAGIC ? MPIDI_TCP_HDR_OK : MPIDI_TCP_HELLO_EMAGIC;
}

static inline void MPIDI_TCP_dyn_hello_encode(uint8_t * buf, const MPIDI_TCP_dyn_hello_t * m)
{
    uint8_t *p = buf + 4;
    MPIDI_TCP_put32(buf, MPIDI_TCP_MAGIC);
    memcpy(p, m->upid, MPIDI_TCP_UPID_SIZE);
    memcpy(p += MPIDI_TCP_UPID_SIZE, m->pk, MPIDI_TCP_PK_SIZE);
    memcpy(p += MPIDI_TCP_PK_SIZE, m->nonce, MPIDI_TCP_NONCE_SIZE);
    memcpy(p + MPIDI_TCP_NONCE_SIZE, m->mac, MPIDI_TCP_MAC_SIZE);
}

static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_dyn_hello_decode(const uint8_t * buf,
                                                             MPIDI_TCP_dyn_hello_t * m)
{
    const uint8_t *p = buf + 4;
    memcpy(m->upid, p, MPIDI_TCP_UPID_SIZE);
    memcpy(m->pk, p += MPIDI_TCP_UPID_SIZE, MPIDI_TCP_PK_SIZE);
    memcpy(m->nonce, p += MPIDI_TCP_PK_SIZE, MPIDI_TCP_NONCE_SIZE);
    memcpy(m->mac, p + MPIDI_TCP_NONCE_SIZE, MPIDI_TCP_MAC_SIZE);
    return MPIDI_TCP_get32(buf) == MPIDI_TCP_MAGIC ? MPIDI_TCP_HDR_OK : MPIDI_TCP_HELLO_EMAGIC;
}

/* A DYN_MSG's body: MPIDI_TCP_DYN_MSG_MIN + m->len bytes. */
static inline size_t MPIDI_TCP_dyn_msg_encode(uint8_t * buf, const MPIDI_TCP_dyn_msg_t * m)
{
    MPIDI_TCP_put32(buf, m->tag);
    buf[4] = m->kind;
    buf[5] = 0;
    MPIDI_TCP_put16(buf + 6, m->len);
    memcpy(buf + 8, m->data, m->len);
    memcpy(buf + 8 + m->len, m->mac, MPIDI_TCP_MAC_SIZE);
    return MPIDI_TCP_DYN_MSG_MIN + m->len;
}

/* body_len: the header's payload size, already within the opcode's bounds
 * (MPIDI_TCP_hdr_decode); the length inside must account for all of it.
 * The proof is checked by the caller. */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_dyn_msg_decode(const uint8_t * buf, size_t body_len,
                                                           MPIDI_TCP_dyn_msg_t * m)
{
    m->tag = MPIDI_TCP_get32(buf);
    m->kind = buf[4];
    m->len = MPIDI_TCP_get16(buf + 6);
    if (m->kind < MPIDI_TCP_DYN_CONNECT || m->kind >= MPIDI_TCP_DYN_KIND_MAX || buf[5] != 0)
        return MPIDI_TCP_DYN_EKIND;
    if (m->len > MPIDI_TCP_DYN_DATA_MAX || body_len != (size_t) MPIDI_TCP_DYN_MSG_MIN + m->len)
        return MPIDI_TCP_DYN_ELEN;
    memcpy(m->data, buf + 8, m->len);
    memcpy(m->mac, buf + 8 + m->len, MPIDI_TCP_MAC_SIZE);
    return MPIDI_TCP_HDR_OK;
}

static inline const char *MPIDI_TCP_hdr_strerror(MPIDI_TCP_hdr_err_t e)
{
    switch (e) {
        case MPIDI_TCP_HDR_OK:
            return "valid";
        case MPIDI_TCP_HDR_EVERSION:
            return "unknown protocol version";
        case MPIDI_TCP_HDR_EOPCODE:
            return "unknown opcode";
        case MPIDI_TCP_HDR_EHANDLER:
            return "invalid handler id";
        case MPIDI_TCP_HDR_EAMHDR:
            return "invalid header length";
        case MPIDI_TCP_HDR_EPAYLOAD:
            return "invalid payload length";
        case MPIDI_TCP_HDR_EFLAGS:
            return "reserved flags set";
        case MPIDI_TCP_HELLO_EMAGIC:
            return "not an mpich-multichannel handshake";
        case MPIDI_TCP_HELLO_ERANK:
            return "hello from a rank outside this job";
        case MPIDI_TCP_HELLO_EDEST:
            return "hello meant for another rank";
        case MPIDI_TCP_HELLO_EPROOF:
            return "no proof of membership in this job (wrong key or replayed handshake)";
        case MPIDI_TCP_UPID_ESIZE:
            return "a process address of another size than ch4:tcp's";
        case MPIDI_TCP_UPID_EVERSION:
            return "a process address of another ch4:tcp protocol version";
        case MPIDI_TCP_UPID_EMPICH:
            return "a process of another MPICH version";
        case MPIDI_TCP_UPID_EADDR:
            return "a process address without an IP address or port";
        case MPIDI_TCP_DYN_EKIND:
            return "a dynamic-process message of an unknown kind";
        case MPIDI_TCP_DYN_ELEN:
            return "a dynamic-process message whose length does not match its body";
        case MPIDI_TCP_PORT_EREC:
            return "a port name of another ch4:tcp protocol version, or not ch4:tcp's";
    }
    return "unknown error";
}

#endif /* TCP_PROTO_H_INCLUDED */
