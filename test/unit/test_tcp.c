/*
 * Unit tests of ch4:tcp's wire format, handshake proof and decisions
 * (src/netmod/tcp/tcp_proto.h, tcp_auth.[ch], tcp_policy.[ch]).  No MPICH needed.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "tcp_proto.h"
#include "tcp_auth.h"
#include "tcp_policy.h"
#include "unit.h"
#include <sodium.h>

static MPIDI_TCP_hdr_t am_hdr(uint8_t handler, uint16_t am_sz, uint64_t payload)
{
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION, .opcode = MPIDI_TCP_OP_AM,
        .handler_id = handler, .src_vci = 3, .dst_vci = 4, .am_hdr_sz = am_sz,
        .payload_sz = payload
    };
    return h;
}

static void test_hdr_roundtrip(void)
{
    uint8_t buf[MPIDI_TCP_HDR_SIZE];
    MPIDI_TCP_hdr_t h = am_hdr(7, 200, (UINT64_C(5) << 31) + 17), d;   /* > 2 GiB */
    MPIDI_TCP_hdr_encode(buf, &h);
    CHECK(buf[0] == MPIDI_TCP_PROTO_VERSION && buf[1] == MPIDI_TCP_OP_AM);
    CHECK(buf[8] == 17 && buf[11] == 0x80 && buf[12] == 0x2);     /* little-endian */
    CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) == MPIDI_TCP_HDR_OK);
    CHECK(d.handler_id == 7 && d.src_vci == 3 && d.dst_vci == 4 && d.am_hdr_sz == 200);
    CHECK(d.payload_sz == (UINT64_C(5) << 31) + 17);
}

static MPIDI_TCP_hdr_err_t decode_modified(int byte, uint8_t value)
{
    uint8_t buf[MPIDI_TCP_HDR_SIZE];
    MPIDI_TCP_hdr_t h = am_hdr(1, 40, 100), d;
    MPIDI_TCP_hdr_encode(buf, &h);
    buf[byte] = value;
    return MPIDI_TCP_hdr_decode(buf, 64, &d);
}

static void test_hdr_rejects(void)
{
    CHECK(decode_modified(0, 0) == MPIDI_TCP_HDR_EVERSION);
    CHECK(decode_modified(0, 'G') == MPIDI_TCP_HDR_EVERSION);   /* "GET / HTTP" */
    CHECK(decode_modified(1, 0) == MPIDI_TCP_HDR_EOPCODE);
    CHECK(decode_modified(1, MPIDI_TCP_OP_MAX) == MPIDI_TCP_HDR_EOPCODE);
    CHECK(decode_modified(1, 255) == MPIDI_TCP_HDR_EOPCODE);
    CHECK(decode_modified(2, 64) == MPIDI_TCP_HDR_EHANDLER);
    CHECK(decode_modified(3, 1) == MPIDI_TCP_HDR_EFLAGS);
    CHECK(decode_modified(7, 0xff) == MPIDI_TCP_HDR_EAMHDR);    /* am_hdr_sz 65320 */
    CHECK(decode_modified(15, 0x80) == MPIDI_TCP_HDR_EPAYLOAD); /* payload >= 2^63 */
    CHECK(decode_modified(2, 63) == MPIDI_TCP_HDR_OK);
}

static void test_control_opcodes(void)
{
    uint8_t buf[MPIDI_TCP_HDR_SIZE];
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION, .opcode = MPIDI_TCP_OP_HELLO,
        .payload_sz = MPIDI_TCP_HELLO_SIZE
    }, d;
    MPIDI_TCP_hdr_encode(buf, &h);
    CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) == MPIDI_TCP_HDR_OK);
    h.payload_sz = 4096;        /* a hello never carries more than its body */
    MPIDI_TCP_hdr_encode(buf, &h);
    CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) == MPIDI_TCP_HDR_EPAYLOAD);
    h.opcode = MPIDI_TCP_OP_CLOSE;
    h.payload_sz = 0;
    h.am_hdr_sz = 8;
    MPIDI_TCP_hdr_encode(buf, &h);
    CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) == MPIDI_TCP_HDR_EAMHDR);
    h.am_hdr_sz = 0;
    h.handler_id = 2;
    MPIDI_TCP_hdr_encode(buf, &h);
    CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) == MPIDI_TCP_HDR_EHANDLER);
    /* every handshake body fits the connection's buffer, each exactly */
    h.handler_id = 0;
    for (int op = MPIDI_TCP_OP_CHALLENGE; op < MPIDI_TCP_OP_MAX; op++) {
        uint64_t body = MPIDI_TCP_body_size((MPIDI_TCP_opcode_t) op);
        if (op == MPIDI_TCP_OP_AM || op == MPIDI_TCP_OP_CLOSE || op == MPIDI_TCP_OP_DYN_MSG)
            continue;
        CHECK(body > 0 && body <= MPIDI_TCP_HS_BODY_MAX);
        h.opcode = (uint8_t) op;
        h.payload_sz = body + 1;
        MPIDI_TCP_hdr_encode(buf, &h);
        CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) == MPIDI_TCP_HDR_EPAYLOAD);
    }
    CHECK(MPIDI_TCP_body_size(MPIDI_TCP_OP_PORT_HELLO) == MPIDI_TCP_PORT_HELLO_SIZE &&
          MPIDI_TCP_body_size(MPIDI_TCP_OP_DYN_HELLO) == MPIDI_TCP_DYN_HELLO_SIZE);
    /* DYN_MSG: within its bounds only */
    h.opcode = MPIDI_TCP_OP_DYN_MSG;
    uint64_t most = MPIDI_TCP_DYN_MSG_MIN + MPIDI_TCP_DYN_DATA_MAX;
    uint64_t sizes[] = { MPIDI_TCP_DYN_MSG_MIN - 1, MPIDI_TCP_DYN_MSG_MIN, most, most + 1,
        UINT64_C(1) << 40
    };
    for (int i = 0; i < 5; i++) {
        h.payload_sz = sizes[i];
        MPIDI_TCP_hdr_encode(buf, &h);
        CHECK(MPIDI_TCP_hdr_decode(buf, 64, &d) ==
              (i == 1 || i == 2 ? MPIDI_TCP_HDR_OK : MPIDI_TCP_HDR_EPAYLOAD));
    }
}

static void test_handshake_encoding(void)
{
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE], got[MPIDI_TCP_NONCE_SIZE];
    uint8_t buf[MPIDI_TCP_HELLO_SIZE];
    for (int i = 0; i < MPIDI_TCP_NONCE_SIZE; i++)
        nonce[i] = (uint8_t) (i * 7 + 1);
    MPIDI_TCP_challenge_encode(buf, nonce);
    CHECK(MPIDI_TCP_challenge_decode(buf, got) == MPIDI_TCP_HDR_OK);
    CHECK(memcmp(got, nonce, sizeof(nonce)) == 0);
    buf[0] ^= 1;        /* anything else at a rank's address */
    CHECK(MPIDI_TCP_challenge_decode(buf, got) == MPIDI_TCP_HELLO_EMAGIC);

    MPIDI_TCP_hello_t m = {.rank = 3, .size = 4, .dest = 1 }, d;
    memcpy(m.nonce, nonce, sizeof(nonce));
    memset(m.mac, 0xab, sizeof(m.mac));
    MPIDI_TCP_hello_encode(buf, &m);
    CHECK(MPIDI_TCP_hello_decode(buf, 4, 1, &d) == MPIDI_TCP_HDR_OK);
    CHECK(d.rank == 3 && d.size == 4 && d.dest == 1 && memcmp(d.nonce, nonce, sizeof(nonce)) == 0
          && d.mac[31] == 0xab);
    CHECK(MPIDI_TCP_hello_decode(buf, 8, 1, &d) == MPIDI_TCP_HELLO_ERANK);  /* another job */
    CHECK(MPIDI_TCP_hello_decode(buf, 4, 2, &d) == MPIDI_TCP_HELLO_EDEST);  /* meant for rank 1 */
    CHECK(MPIDI_TCP_hello_decode(buf, 4, 3, &d) == MPIDI_TCP_HELLO_ERANK);  /* claims our rank */
    m.rank = 4;
    MPIDI_TCP_hello_encode(buf, &m);
    CHECK(MPIDI_TCP_hello_decode(buf, 4, 1, &d) == MPIDI_TCP_HELLO_ERANK);
    buf[0] ^= 1;
    CHECK(MPIDI_TCP_hello_decode(buf, 4, 1, &d) == MPIDI_TCP_HELLO_EMAGIC);
    CHECK(strcmp(MPIDI_TCP_hdr_strerror(MPIDI_TCP_HELLO_EPROOF), "unknown error") != 0);
    CHECK(MPIDI_TCP_HELLO_SIZE <= MPIDI_TCP_HS_BODY_MAX &&
          MPIDI_TCP_CHALLENGE_SIZE <= MPIDI_TCP_HS_BODY_MAX);
}

/* Both sides of one handshake, as the wire carries it (the HELLO encoded
 * and decoded in between). */
static void handshake(const uint8_t * key_used, MPIDI_TCP_hello_t * sent,
                      MPIDI_TCP_hello_t * recvd, uint8_t * nonce_l)
{
    uint8_t buf[MPIDI_TCP_HELLO_SIZE];
    MPIDI_TCP_auth_random(nonce_l, MPIDI_TCP_NONCE_SIZE);
    MPIDI_TCP_auth_hello(sent, key_used, 2, 4, 0, nonce_l);
    MPIDI_TCP_hello_encode(buf, sent);
    MPIDI_TCP_hello_decode(buf, 4, 0, recvd);
}

static void test_proof(void)
{
    uint8_t key[MPIDI_TCP_KEY_SIZE], other[MPIDI_TCP_KEY_SIZE], nonce_l[MPIDI_TCP_NONCE_SIZE];
    uint8_t nonce2[MPIDI_TCP_NONCE_SIZE], mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_hello_t sent, recvd, tampered;

    CHECK(MPIDI_TCP_auth_init() == 0);
    MPIDI_TCP_auth_random(key, sizeof(key));
    MPIDI_TCP_auth_random(other, sizeof(other));
    CHECK(memcmp(key, other, sizeof(key)) != 0);

    /* accept: the initiator holds the listener's key */
    handshake(key, &sent, &recvd, nonce_l);
    CHECK(MPIDI_TCP_auth_hello_check(&recvd, key, nonce_l) == MPIDI_TCP_HDR_OK);
    /* the listener's verdict proves its key back, for this HELLO only */
    MPIDI_TCP_auth_reply(mac, key, MPIDI_TCP_OP_HELLO_ACK, &recvd, nonce_l);
    CHECK(MPIDI_TCP_auth_reply_check(mac, key, MPIDI_TCP_OP_HELLO_ACK, &sent, nonce_l) == 0);
    CHECK(MPIDI_TCP_auth_reply_check(mac, key, MPIDI_TCP_OP_HELLO_NAK, &sent, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);      /* a verdict cannot be turned into another */
    CHECK(MPIDI_TCP_auth_reply_check(mac, other, MPIDI_TCP_OP_HELLO_ACK, &sent, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);

    /* reject: a stranger without the key */
    handshake(other, &sent, &recvd, nonce_l);
    CHECK(MPIDI_TCP_auth_hello_check(&recvd, key, nonce_l) == MPIDI_TCP_HELLO_EPROOF);

    /* reject: any number changed after the MAC (rank, size, dest, nonce) */
    handshake(key, &sent, &recvd, nonce_l);
    uint32_t *fields[] = { &tampered.rank, &tampered.size, &tampered.dest };
    for (int i = 0; i < 3; i++) {
        tampered = recvd;
        *fields[i] ^= 1;
        CHECK(MPIDI_TCP_auth_hello_check(&tampered, key, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    }
    tampered = recvd;
    tampered.nonce[5] ^= 0x10;
    CHECK(MPIDI_TCP_auth_hello_check(&tampered, key, nonce_l) == MPIDI_TCP_HELLO_EPROOF);

    /* replay: a captured HELLO answers only the challenge it was made for */
    MPIDI_TCP_auth_random(nonce2, sizeof(nonce2));
    CHECK(MPIDI_TCP_auth_hello_check(&recvd, key, nonce2) == MPIDI_TCP_HELLO_EPROOF);
    /* and a captured verdict only the HELLO (initiator's nonce) it answered */
    MPIDI_TCP_auth_reply(mac, key, MPIDI_TCP_OP_HELLO_ACK, &recvd, nonce_l);
    MPIDI_TCP_hello_t next;
    MPIDI_TCP_auth_hello(&next, key, 2, 4, 0, nonce_l);
    CHECK(MPIDI_TCP_auth_reply_check(mac, key, MPIDI_TCP_OP_HELLO_ACK, &next, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);
    /* reflection: the HELLO's MAC is no verdict, whatever the opcode */
    for (int op = MPIDI_TCP_OP_HELLO_ACK; op <= MPIDI_TCP_OP_HELLO_DEAD; op++)
        CHECK(MPIDI_TCP_auth_reply_check(sent.mac, key, op, &sent, nonce_l) ==
              MPIDI_TCP_HELLO_EPROOF);
    /* two HELLOs for the same challenge differ (fresh initiator nonce) */
    CHECK(memcmp(next.nonce, sent.nonce, sizeof(next.nonce)) != 0);
}

/* The HELLO's MAC is crypto_auth over the bytes the protocol has always
 * covered: the label, then verdict, rank, size, dest (LE32), nonce_l, nonce_i. */
static void test_hello_known_answer(void)
{
    uint8_t key[MPIDI_TCP_KEY_SIZE], nonce_l[MPIDI_TCP_NONCE_SIZE], t[16 + 16 + 64];
    uint8_t want[MPIDI_TCP_MAC_SIZE], mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_hello_t m;
    MPIDI_TCP_auth_random(key, sizeof(key));
    MPIDI_TCP_auth_random(nonce_l, sizeof(nonce_l));
    MPIDI_TCP_auth_hello(&m, key, 2, 4, 0, nonce_l);
    MPIDI_TCP_auth_reply(mac, key, MPIDI_TCP_OP_HELLO_NAK, &m, nonce_l);
    for (int reply = 0; reply < 2; reply++) {
        memset(t, 0, sizeof(t));
        strcpy((char *) t, reply ? "mmct2 reply" : "mmct2 hello");
        MPIDI_TCP_put32(t + 16, reply ? MPIDI_TCP_OP_HELLO_NAK : 0);
        MPIDI_TCP_put32(t + 20, 2);
        MPIDI_TCP_put32(t + 24, 4);
        MPIDI_TCP_put32(t + 28, 0);
        memcpy(t + 32, nonce_l, 32);
        memcpy(t + 64, m.nonce, 32);
        crypto_auth(want, t, sizeof(t), key);
        CHECK(memcmp(want, reply ? mac : m.mac, sizeof(want)) == 0);
    }
}

static MPIDI_TCP_upid_t some_upid(uint8_t fill)
{
    MPIDI_TCP_upid_t u = {.ip = htonl(0x0ae70002), .port = htons(40123),
        .eager_max = 2 << 20, .mpich_version = 40201300
    };
    memset(u.pk, fill, sizeof(u.pk));
    return u;
}

static void test_upid(void)
{
    uint8_t buf[MPIDI_TCP_UPID_SIZE + 1];
    MPIDI_TCP_upid_t u = some_upid(0x5a), d;
    MPIDI_TCP_upid_encode(buf, &u);
    CHECK(MPIDI_TCP_upid_decode(buf, MPIDI_TCP_UPID_SIZE, 40201300, &d) == MPIDI_TCP_HDR_OK);
    CHECK(d.ip == u.ip && d.port == u.port && d.eager_max == u.eager_max);
    CHECK(d.mpich_version == u.mpich_version && memcmp(d.pk, u.pk, sizeof(d.pk)) == 0);
    CHECK(buf[0] == MPIDI_TCP_PROTO_VERSION && buf[2] == 40123 >> 8);  /* port as on the wire */
    /* refused: a size the peer chose, another protocol or MPICH, no address */
    CHECK(MPIDI_TCP_upid_decode(buf, 47, 40201300, &d) == MPIDI_TCP_UPID_ESIZE);
    CHECK(MPIDI_TCP_upid_decode(buf, 49, 40201300, &d) == MPIDI_TCP_UPID_ESIZE);
    CHECK(MPIDI_TCP_upid_decode(buf, 0, 40201300, &d) == MPIDI_TCP_UPID_ESIZE);
    CHECK(MPIDI_TCP_upid_decode(buf, 48, 40002300, &d) == MPIDI_TCP_UPID_EMPICH);
    buf[1] = 1;
    CHECK(MPIDI_TCP_upid_decode(buf, 48, 40201300, &d) == MPIDI_TCP_UPID_EVERSION);
    buf[1] = 0;
    buf[0]++;
    CHECK(MPIDI_TCP_upid_decode(buf, 48, 40201300, &d) == MPIDI_TCP_UPID_EVERSION);
    u.port = 0;
    MPIDI_TCP_upid_encode(buf, &u);
    CHECK(MPIDI_TCP_upid_decode(buf, 48, 40201300, &d) == MPIDI_TCP_UPID_EADDR);
}

/* The record a port name carries after its owner's upid. */
static void test_port_rec(void)
{
    uint8_t s[MPIDI_TCP_SECRET_SIZE], got[MPIDI_TCP_SECRET_SIZE], buf[MPIDI_TCP_PORT_REC_SIZE];
    uint32_t tag = 0;

    MPIDI_TCP_auth_random(s, sizeof(s));
    MPIDI_TCP_port_rec_encode(buf, 0x01020304, s);
    CHECK(MPIDI_TCP_port_rec_decode(buf, &tag, got) == MPIDI_TCP_HDR_OK);
    CHECK(tag == 0x01020304 && memcmp(got, s, sizeof(s)) == 0);
    CHECK(buf[0] == 'P' && buf[4] == 4);        /* tag little-endian */
    /* refused: not a port record, another protocol version, reserved bytes */
    for (int i = 0; i < 4; i++) {
        buf[i] ^= 0x40;
        CHECK(MPIDI_TCP_port_rec_decode(buf, &tag, got) == MPIDI_TCP_PORT_EREC);
        buf[i] ^= 0x40;
    }
}

/* A port's handshake, as the wire carries it: the secret opens it, for the
 * process that opened the port, once per challenge. */
static void test_port_proof(void)
{
    uint8_t s[MPIDI_TCP_SECRET_SIZE], other[MPIDI_TCP_SECRET_SIZE], nonce_l[32], nonce2[32];
    uint8_t upid_c[MPIDI_TCP_UPID_SIZE], upid_a[MPIDI_TCP_UPID_SIZE], upid_b[MPIDI_TCP_UPID_SIZE];
    uint8_t buf[MPIDI_TCP_PORT_HELLO_SIZE], mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_upid_t u = some_upid(1);
    MPIDI_TCP_port_hello_t sent, recvd, t;

    MPIDI_TCP_upid_encode(upid_c, &u);
    u = some_upid(2);
    MPIDI_TCP_upid_encode(upid_a, &u);
    u = some_upid(3);
    MPIDI_TCP_upid_encode(upid_b, &u);
    MPIDI_TCP_auth_random(s, sizeof(s));
    MPIDI_TCP_auth_random(other, sizeof(other));
    MPIDI_TCP_auth_random(nonce_l, sizeof(nonce_l));
    MPIDI_TCP_auth_random(nonce2, sizeof(nonce2));

    MPIDI_TCP_auth_port_hello(&sent, s, 7, upid_c, upid_a, nonce_l);
    MPIDI_TCP_port_hello_encode(buf, &sent);
    CHECK(MPIDI_TCP_port_hello_decode(buf, &recvd) == MPIDI_TCP_HDR_OK);
    CHECK(recvd.tag == 7 && memcmp(recvd.upid, upid_c, sizeof(upid_c)) == 0);
    CHECK(MPIDI_TCP_auth_port_hello_check(&recvd, s, upid_a, nonce_l) == MPIDI_TCP_HDR_OK);
    /* refused: without the secret, for another process, another challenge */
    CHECK(MPIDI_TCP_auth_port_hello_check(&recvd, other, upid_a, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_port_hello_check(&recvd, s, upid_b, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_port_hello_check(&recvd, s, upid_a, nonce2) == MPIDI_TCP_HELLO_EPROOF);
    /* refused: any field changed after the MAC */
    t = recvd;
    t.tag = 8;
    CHECK(MPIDI_TCP_auth_port_hello_check(&t, s, upid_a, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    for (int i = 0; i < MPIDI_TCP_UPID_SIZE; i += 11) {
        t = recvd;
        t.upid[i] ^= 4;
        CHECK(MPIDI_TCP_auth_port_hello_check(&t, s, upid_a, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    }
    t = recvd;
    t.nonce[31] ^= 1;
    CHECK(MPIDI_TCP_auth_port_hello_check(&t, s, upid_a, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    buf[0] ^= 1;
    CHECK(MPIDI_TCP_port_hello_decode(buf, &t) == MPIDI_TCP_HELLO_EMAGIC);
    /* the verdict proves the secret back, for this hello and verdict only */
    MPIDI_TCP_auth_port_reply(mac, s, 1, &recvd, upid_a, nonce_l);
    CHECK(MPIDI_TCP_auth_port_reply_check(mac, s, 1, &sent, upid_a, nonce_l) == 0);
    CHECK(MPIDI_TCP_auth_port_reply_check(mac, s, 2, &sent, upid_a, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_port_reply_check(mac, other, 1, &sent, upid_a, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_port_reply_check(sent.mac, s, 0, &sent, upid_a, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);      /* reflection */
    MPIDI_TCP_auth_port_hello(&t, s, 7, upid_c, upid_a, nonce_l);
    CHECK(MPIDI_TCP_auth_port_reply_check(mac, s, 1, &t, upid_a, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);      /* a verdict for another hello */
}

/* Two processes of different jobs: each derives the pair's keys from its own
 * key pair and the other's public key, and only they can. */
static void test_dyn_proof(void)
{
    uint8_t pk_x[32], sk_x[32], pk_y[32], sk_y[32], pk_z[32], sk_z[32];
    uint8_t rx_x[32], tx_x[32], rx_y[32], tx_y[32], rx_z[32], tx_z[32];
    uint8_t upid_x[MPIDI_TCP_UPID_SIZE], nonce_l[32], nonce2[32], mac[32];
    uint8_t buf[MPIDI_TCP_DYN_HELLO_SIZE];
    MPIDI_TCP_upid_t u = some_upid(0);
    MPIDI_TCP_dyn_hello_t sent, recvd, t;

    MPIDI_TCP_auth_kx_keypair(pk_x, sk_x);
    MPIDI_TCP_auth_kx_keypair(pk_y, sk_y);
    MPIDI_TCP_auth_kx_keypair(pk_z, sk_z);
    memcpy(u.pk, pk_x, 32);
    MPIDI_TCP_upid_encode(upid_x, &u);
    MPIDI_TCP_auth_random(nonce_l, sizeof(nonce_l));
    MPIDI_TCP_auth_random(nonce2, sizeof(nonce2));

    CHECK(MPIDI_TCP_auth_kx_keys(rx_x, tx_x, pk_x, sk_x, pk_y) == 0);
    CHECK(MPIDI_TCP_auth_kx_keys(rx_y, tx_y, pk_y, sk_y, pk_x) == 0);
    CHECK(memcmp(tx_x, rx_y, 32) == 0 && memcmp(tx_y, rx_x, 32) == 0);
    CHECK(memcmp(tx_x, rx_x, 32) != 0);
    CHECK(MPIDI_TCP_auth_kx_keys(rx_z, tx_z, pk_x, sk_x, pk_x) == -1);  /* ourselves */
    uint8_t zero[32] = { 0 };
    CHECK(MPIDI_TCP_auth_kx_keys(rx_z, tx_z, pk_x, sk_x, zero) == -1);  /* not a key */
    /* z knows both public keys but neither private one: its keys are others */
    CHECK(MPIDI_TCP_auth_kx_keys(rx_z, tx_z, pk_z, sk_z, pk_x) == 0);

    MPIDI_TCP_auth_dyn_hello(&sent, tx_x, upid_x, pk_y, nonce_l);
    MPIDI_TCP_dyn_hello_encode(buf, &sent);
    CHECK(MPIDI_TCP_dyn_hello_decode(buf, &recvd) == MPIDI_TCP_HDR_OK);
    CHECK(memcmp(recvd.upid, upid_x, sizeof(upid_x)) == 0 && memcmp(recvd.pk, pk_y, 32) == 0);
    CHECK(MPIDI_TCP_auth_dyn_hello_check(&recvd, rx_y, nonce_l) == MPIDI_TCP_HDR_OK);
    CHECK(MPIDI_TCP_auth_dyn_hello_check(&recvd, rx_z, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_dyn_hello_check(&recvd, tx_y, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_dyn_hello_check(&recvd, rx_y, nonce2) == MPIDI_TCP_HELLO_EPROOF);
    for (int i = 0; i < MPIDI_TCP_UPID_SIZE; i += 7) {
        t = recvd;
        t.upid[i] ^= 0x80;
        CHECK(MPIDI_TCP_auth_dyn_hello_check(&t, rx_y, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    }
    t = recvd;
    t.pk[0] ^= 1;
    CHECK(MPIDI_TCP_auth_dyn_hello_check(&t, rx_y, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    /* y's verdict, under its tx, is x's to check with rx, not to reflect */
    MPIDI_TCP_auth_dyn_reply(mac, tx_y, 1, &recvd, nonce_l);
    CHECK(MPIDI_TCP_auth_dyn_reply_check(mac, rx_x, 1, &sent, nonce_l) == MPIDI_TCP_HDR_OK);
    CHECK(MPIDI_TCP_auth_dyn_reply_check(mac, rx_x, 2, &sent, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_dyn_reply_check(mac, rx_z, 1, &sent, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_dyn_reply_check(sent.mac, rx_x, 0, &sent, nonce_l) ==
          MPIDI_TCP_HELLO_EPROOF);
    MPIDI_TCP_auth_dyn_reply(mac, tx_x, 1, &recvd, nonce_l);      /* x's own key reflected */
    CHECK(MPIDI_TCP_auth_dyn_reply_check(mac, rx_x, 1, &sent, nonce_l) == MPIDI_TCP_HELLO_EPROOF);
}

/* ch4's dynamic_send between the roots: whole, under the port's secret, on
 * the connection it was made for, in the direction it was made for. */
static void test_dyn_msg(void)
{
    uint8_t s[MPIDI_TCP_SECRET_SIZE], other[MPIDI_TCP_SECRET_SIZE], nl[32], ni[32], n2[32];
    uint8_t buf[MPIDI_TCP_DYN_MSG_MIN + MPIDI_TCP_DYN_DATA_MAX];
    MPIDI_TCP_dyn_msg_t m = {.tag = 3, .kind = MPIDI_TCP_DYN_CONNECT, .len = 60 }, d, t;

    MPIDI_TCP_auth_random(s, sizeof(s));
    MPIDI_TCP_auth_random(other, sizeof(other));
    MPIDI_TCP_auth_random(nl, sizeof(nl));
    MPIDI_TCP_auth_random(ni, sizeof(ni));
    MPIDI_TCP_auth_random(n2, sizeof(n2));
    for (int i = 0; i < m.len; i++)
        m.data[i] = (uint8_t) (i * 3);
    MPIDI_TCP_auth_dyn_msg(&m, s, nl, ni);
    size_t n = MPIDI_TCP_dyn_msg_encode(buf, &m);
    CHECK(n == MPIDI_TCP_DYN_MSG_MIN + 60);
    CHECK(MPIDI_TCP_dyn_msg_decode(buf, n, &d) == MPIDI_TCP_HDR_OK);
    CHECK(d.tag == 3 && d.kind == MPIDI_TCP_DYN_CONNECT && d.len == 60 &&
          memcmp(d.data, m.data, 60) == 0);
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&d, s, nl, ni) == MPIDI_TCP_HDR_OK);
    /* refused: without the secret, on another connection, reflected */
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&d, other, nl, ni) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&d, s, n2, ni) == MPIDI_TCP_HELLO_EPROOF);
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&d, s, ni, nl) == MPIDI_TCP_HELLO_EPROOF);
    /* refused: any field changed after the MAC */
    t = d;
    t.tag = 4;
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&t, s, nl, ni) == MPIDI_TCP_HELLO_EPROOF);
    t = d;
    t.kind = MPIDI_TCP_DYN_REPLY;
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&t, s, nl, ni) == MPIDI_TCP_HELLO_EPROOF);
    t = d;
    t.len = 59;         /* truncated */
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&t, s, nl, ni) == MPIDI_TCP_HELLO_EPROOF);
    t = d;
    t.data[59] ^= 0x10;
    CHECK(MPIDI_TCP_auth_dyn_msg_check(&t, s, nl, ni) == MPIDI_TCP_HELLO_EPROOF);
    /* malformed bodies */
    CHECK(MPIDI_TCP_dyn_msg_decode(buf, n - 1, &t) == MPIDI_TCP_DYN_ELEN);
    CHECK(MPIDI_TCP_dyn_msg_decode(buf, n + 1, &t) == MPIDI_TCP_DYN_ELEN);
    buf[6] = 0xff;      /* len 0x..ff: beyond the body and the largest */
    CHECK(MPIDI_TCP_dyn_msg_decode(buf, n, &t) == MPIDI_TCP_DYN_ELEN);
    buf[6] = 60;
    buf[7] = 1;         /* len 316 */
    CHECK(MPIDI_TCP_dyn_msg_decode(buf, MPIDI_TCP_DYN_MSG_MIN + 316, &t) == MPIDI_TCP_DYN_ELEN);
    buf[7] = 0;
    buf[5] = 1;
    CHECK(MPIDI_TCP_dyn_msg_decode(buf, n, &t) == MPIDI_TCP_DYN_EKIND);
    buf[5] = 0;
    for (int k = 0; k < 256; k++) {
        buf[4] = (uint8_t) k;
        MPIDI_TCP_hdr_err_t e = MPIDI_TCP_dyn_msg_decode(buf, n, &t);
        CHECK(e == (k >= MPIDI_TCP_DYN_CONNECT && k < MPIDI_TCP_DYN_KIND_MAX ?
                    MPIDI_TCP_HDR_OK : MPIDI_TCP_DYN_EKIND));
    }
    /* an empty message is well formed */
    m.len = 0;
    MPIDI_TCP_auth_dyn_msg(&m, s, nl, ni);
    n = MPIDI_TCP_dyn_msg_encode(buf, &m);
    CHECK(n == MPIDI_TCP_DYN_MSG_MIN && MPIDI_TCP_dyn_msg_decode(buf, n, &d) == MPIDI_TCP_HDR_OK &&
          MPIDI_TCP_auth_dyn_msg_check(&d, s, nl, ni) == MPIDI_TCP_HDR_OK);
    CHECK(strcmp(MPIDI_TCP_hdr_strerror(MPIDI_TCP_DYN_ELEN), "unknown error") != 0);
}

static void test_port_range(void)
{
    int lo, hi;
    CHECK(MPIDI_TCP_parse_port_range("", &lo, &hi) == 0 && lo == 0 && hi == 0);
    CHECK(MPIDI_TCP_parse_port_range(NULL, &lo, &hi) == 0 && lo == 0);
    CHECK(MPIDI_TCP_parse_port_range("5000:5100", &lo, &hi) == 0 && lo == 5000 && hi == 5100);
    CHECK(MPIDI_TCP_parse_port_range("7:7", &lo, &hi) == 0 && lo == 7 && hi == 7);
    const char *bad[] = { "5000", "5000-5100", "5100:5000", "0:10", "1:65536", ":10", "10:",
        "a:b", "10:20:30", " 10:20", "10:20 ", "-1:5", "123456:123457", NULL
    };
    for (int i = 0; bad[i]; i++) {
        int rc = MPIDI_TCP_parse_port_range(bad[i], &lo, &hi);
        if (rc != -1)
            printf("    accepted bad port range '%s'\n", bad[i]);
        CHECK(rc == -1);
    }
}

static void test_eager_and_buffers(void)
{
    CHECK(MPIDI_TCP_eager_limit(-1) == MPIDI_TCP_EAGER_DEFAULT);
    CHECK(MPIDI_TCP_eager_limit(0) == 0);
    CHECK(MPIDI_TCP_eager_limit(1048576) == 1048576);
    CHECK(MPIDI_TCP_eager_limit(-2) == -1);
    CHECK(MPIDI_TCP_eager_limit(MPIDI_TCP_EAGER_MAX + 1L) == -1);
    CHECK(MPIDI_TCP_check_bufsize(0) == 0 && MPIDI_TCP_check_bufsize(4096) == 0);
    CHECK(MPIDI_TCP_check_bufsize(-1) == -1 && MPIDI_TCP_check_bufsize(-4096) == -1);
    /* Linux doubles what it grants: asking 4 MiB under a 4 MiB cap reports 8 MiB */
    CHECK(!MPIDI_TCP_bufsize_short(4 << 20, 8 << 20));
    CHECK(MPIDI_TCP_bufsize_short(16 << 20, 8 << 20));          /* capped at wmem_max */
    CHECK(!MPIDI_TCP_bufsize_short(0, 0));
    CHECK(MPIDI_TCP_bufsize_short(4096, 4608));                 /* minimum raised? no: less */
    CHECK(!MPIDI_TCP_bufsize_short(4096, 8192));
}

static MPIDI_TCP_iface_t ifc(const char *name, const char *ip, unsigned flags)
{
    MPIDI_TCP_iface_t i;
    memset(&i, 0, sizeof(i));
    strncpy(i.name, name, sizeof(i.name) - 1);
    i.addr = inet_addr(ip);
    i.flags = flags;
    return i;
}

static void test_pick_iface(void)
{
    const unsigned UP = MPIDI_TCP_IF_UP;
    MPIDI_TCP_iface_t ifs[] = {
        ifc("lo", "127.0.0.1", UP | MPIDI_TCP_IF_LOOPBACK),
        ifc("docker0", "172.17.0.1", UP),
        ifc("tun0", "10.8.0.6", UP | MPIDI_TCP_IF_PTP),
        ifc("wg0", "10.9.0.2", UP),
        ifc("eth0", "192.168.1.5", UP),
        ifc("ib0", "10.10.0.5", UP),
        ifc("eth1", "192.168.2.5", 0),
    };
    int n = sizeof(ifs) / sizeof(ifs[0]);
    CHECK(MPIDI_TCP_pick_iface(ifs, n, "", 0, NULL, 0) == 4);   /* first real one */
    CHECK(MPIDI_TCP_pick_iface(ifs, n, NULL, 0, "ib0", 0) == 5);        /* default route */
    CHECK(MPIDI_TCP_pick_iface(ifs, n, NULL, 0, "tun0", 0) == 4);       /* VPN default route */
    CHECK(MPIDI_TCP_pick_iface(ifs, n, NULL, inet_addr("10.10.0.5"), "eth0", 0) == 5);
    CHECK(MPIDI_TCP_pick_iface(ifs, n, NULL, inet_addr("127.0.1.1"), NULL, 0) == 4);
    CHECK(MPIDI_TCP_pick_iface(ifs, n, "docker0", 0, NULL, 0) == 1);   /* the user's word */
    CHECK(MPIDI_TCP_pick_iface(ifs, n, "eth7", 0, NULL, 0) == -1);
    CHECK(MPIDI_TCP_pick_iface(ifs, 4, NULL, 0, NULL, 0) == -1);       /* only local-only */
    CHECK(MPIDI_TCP_pick_iface(ifs, 4, NULL, 0, NULL, 1) == 0);        /* one node: loopback */
}

static void test_keep_incoming(void)
{
    CHECK(MPIDI_TCP_keep_incoming(3, 5, 0));
    CHECK(MPIDI_TCP_keep_incoming(5, 3, 0));
    /* both connected: the lower rank's connection survives on both sides */
    CHECK(MPIDI_TCP_keep_incoming(5, 3, 1));
    CHECK(!MPIDI_TCP_keep_incoming(3, 5, 1));
}

static void test_rx_mode(void)
{
    CHECK(MPIDI_TCP_rx_mode(100, 0, 0) == MPIDI_TCP_RX_SYNC);
    CHECK(MPIDI_TCP_rx_mode(100, 50, 50) == MPIDI_TCP_RX_SYNC);
    CHECK(MPIDI_TCP_rx_mode(100, 500, 10) == MPIDI_TCP_RX_MORE);
    CHECK(MPIDI_TCP_rx_mode(100, MPIDI_TCP_READAHEAD - 100, 0) == MPIDI_TCP_RX_MORE);
    CHECK(MPIDI_TCP_rx_mode(100, MPIDI_TCP_READAHEAD - 99, 0) == MPIDI_TCP_RX_ASYNC);
    CHECK(MPIDI_TCP_rx_mode(100, UINT64_C(1) << 32, 1000) == MPIDI_TCP_RX_ASYNC);
}

static void test_iov_advance(void)
{
    char a[10], b[20], c[5];
    struct iovec v[4] = { {a, 10}, {b, 20}, {NULL, 0}, {c, 5} }, *p = v;
    int n = MPIDI_TCP_iov_advance(&p, 4, 4);
    CHECK(n == 4 && p == v && p->iov_base == a + 4 && p->iov_len == 6);
    n = MPIDI_TCP_iov_advance(&p, n, 6);
    CHECK(n == 3 && p == v + 1 && p->iov_len == 20);
    n = MPIDI_TCP_iov_advance(&p, n, 20);       /* skips the empty entry too */
    CHECK(n == 1 && p == v + 3 && p->iov_len == 5);
    n = MPIDI_TCP_iov_advance(&p, n, 5);
    CHECK(n == 0);
}

/* A byte stream of headers cut at every possible point decodes the same:
 * the receive side keeps partial headers across reads. */
static void test_hdr_any_split(void)
{
    uint8_t stream[3 * MPIDI_TCP_HDR_SIZE];
    for (int i = 0; i < 3; i++) {
        MPIDI_TCP_hdr_t h = am_hdr((uint8_t) i, (uint16_t) (i * 10), (uint64_t) i * 1000);
        MPIDI_TCP_hdr_encode(stream + i * MPIDI_TCP_HDR_SIZE, &h);
    }
    for (size_t cut = 1; cut < sizeof(stream); cut++) {
        uint8_t acc[sizeof(stream)];
        size_t have = 0, off = 0;
        int got = 0;
        /* feed in pieces of `cut` bytes, decode whenever a header is complete */
        while (off < sizeof(stream)) {
            size_t n = sizeof(stream) - off < cut ? sizeof(stream) - off : cut;
            memcpy(acc + have, stream + off, n);
            have += n;
            off += n;
            while (have >= MPIDI_TCP_HDR_SIZE) {
                MPIDI_TCP_hdr_t d;
                CHECK(MPIDI_TCP_hdr_decode(acc, 64, &d) == MPIDI_TCP_HDR_OK);
                CHECK(d.handler_id == got && d.payload_sz == (uint64_t) got * 1000);
                got++;
                memmove(acc, acc + MPIDI_TCP_HDR_SIZE, have - MPIDI_TCP_HDR_SIZE);
                have -= MPIDI_TCP_HDR_SIZE;
            }
        }
        CHECK(got == 3);
    }
}

static void test_retry_and_liveness(void)
{
    CHECK(MPIDI_TCP_retry_delay(1) < 0.01);     /* the first retry: at once */
    CHECK(MPIDI_TCP_retry_delay(2) == 0.01 && MPIDI_TCP_retry_delay(3) == 0.02);
    CHECK(MPIDI_TCP_retry_delay(8) == 0.64 && MPIDI_TCP_retry_delay(9) == 1.0);
    CHECK(MPIDI_TCP_retry_delay(1000) == 1.0);
    /* a busy peer: zero window probed and answered (probes 0), however long */
    CHECK(!MPIDI_TCP_peer_gone(0, 0, 3600 * 1000, 10));
    /* an outage: retransmitting or probing, silent for the bound */
    CHECK(!MPIDI_TCP_peer_gone(3, 0, 9999, 10));
    CHECK(MPIDI_TCP_peer_gone(3, 0, 10000, 10));
    CHECK(MPIDI_TCP_peer_gone(0, 2, 12000, 10));
    CHECK(!MPIDI_TCP_peer_gone(0, 1, 500, 10));
}

int main(void)
{
    run("header encode/decode round trip, 64-bit payload", test_hdr_roundtrip);
    run("malformed headers refused before dispatch", test_hdr_rejects);
    run("control opcodes carry exactly their body", test_control_opcodes);
    run("handshake bodies: challenge, hello numbers of this job only", test_handshake_encoding);
    run("proof of membership: accept, reject, tamper, replay, reflection", test_proof);
    run("HELLO's MAC covers the bytes it always did", test_hello_known_answer);
    run("upid: 48 bytes, refused at another size, protocol or MPICH version", test_upid);
    run("port proof: the secret, for the process that opened it, once per challenge",
        test_port_proof);
    run("dynamic pair proof: keys only the two processes derive, tamper, reflection",
        test_dyn_proof);
    run("dynamic_send frame: bounds, kinds, the port's secret, this connection only",
        test_dyn_msg);
    run("port name record: tag and secret, nothing else", test_port_rec);
    run("port range parsing", test_port_range);
    run("eager limit and socket buffer values", test_eager_and_buffers);
    run("published interface choice", test_pick_iface);
    run("simultaneous connect keeps the lower rank's connection", test_keep_incoming);
    run("receive mode by payload size", test_rx_mode);
    run("reconnect backoff, peer gone only when TCP waits in vain", test_retry_and_liveness);
    run("iovec advance", test_iov_advance);
    run("headers split at any byte", test_hdr_any_split);
    return unit_summary();
}
