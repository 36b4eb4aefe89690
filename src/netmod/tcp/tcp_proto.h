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
 * A HELLO carries a 16-byte body (magic, world rank, world size, reserved)
 * as its payload.  The header is validated completely (version first, then
 * the opcode, then every size against the opcode's limits) before anything is
 * dispatched, so a malformed or foreign stream is refused, never indexed.
 *
 * Plain C: no MPICH headers, unit-tested in test/unit/test_tcp.c.
 */
#ifndef TCP_PROTO_H_INCLUDED
#define TCP_PROTO_H_INCLUDED

#include <stdint.h>
#include <string.h>

#define MPIDI_TCP_PROTO_VERSION 1
#define MPIDI_TCP_HDR_SIZE      16
#define MPIDI_TCP_HELLO_SIZE    16
#define MPIDI_TCP_HELLO_MAGIC   0x4d4d4354u     /* "MMCT" */
/* largest MPIDIG header carried inline: RMA sends a flattened datatype in the
 * header when it fits, as payload when it does not */
#define MPIDI_TCP_AM_HDR_MAX    8192
/* sizes above 2^62 are corrupt streams, not messages */
#define MPIDI_TCP_PAYLOAD_MAX   (UINT64_C(1) << 62)

typedef enum {
    MPIDI_TCP_OP_HELLO = 1,     /* initiator -> acceptor: who I am */
    MPIDI_TCP_OP_HELLO_ACK,     /* acceptor keeps this connection */
    MPIDI_TCP_OP_HELLO_NAK,     /* acceptor keeps its own connection to us instead */
    MPIDI_TCP_OP_AM,    /* an MPIDIG active message */
    MPIDI_TCP_OP_CLOSE, /* orderly shutdown: nothing follows */
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
    uint32_t magic;
    uint32_t rank;
    uint32_t size;
    uint32_t reserved;
} MPIDI_TCP_hello_t;

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
    if (h->opcode < MPIDI_TCP_OP_HELLO || h->opcode >= MPIDI_TCP_OP_MAX)
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
    if (h->payload_sz != (h->opcode == MPIDI_TCP_OP_HELLO ? MPIDI_TCP_HELLO_SIZE : 0))
        return MPIDI_TCP_HDR_EPAYLOAD;
    return MPIDI_TCP_HDR_OK;
}

static inline void MPIDI_TCP_hello_encode(uint8_t * buf, const MPIDI_TCP_hello_t * m)
{
    MPIDI_TCP_put32(buf, m->magic);
    MPIDI_TCP_put32(buf + 4, m->rank);
    MPIDI_TCP_put32(buf + 8, m->size);
    MPIDI_TCP_put32(buf + 12, m->reserved);
}

/* A HELLO must come from a rank of this job: same world size, a rank in it. */
static inline MPIDI_TCP_hdr_err_t MPIDI_TCP_hello_decode(const uint8_t * buf, uint32_t world_size,
                                                         MPIDI_TCP_hello_t * m)
{
    m->magic = MPIDI_TCP_get32(buf);
    m->rank = MPIDI_TCP_get32(buf + 4);
    m->size = MPIDI_TCP_get32(buf + 8);
    m->reserved = MPIDI_TCP_get32(buf + 12);
    if (m->magic != MPIDI_TCP_HELLO_MAGIC)
        return MPIDI_TCP_HELLO_EMAGIC;
    if (m->size != world_size || m->rank >= world_size)
        return MPIDI_TCP_HELLO_ERANK;
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
            return "not an mpich-multichannel hello";
        case MPIDI_TCP_HELLO_ERANK:
            return "hello from a rank outside this job";
    }
    return "unknown error";
}

#endif /* TCP_PROTO_H_INCLUDED */
