/*
 * mpich-multichannel: ch4:tcp's proof of membership (see tcp_auth.h).
 */
#include "tcp_auth.h"

#include <sodium.h>

_Static_assert(MPIDI_TCP_KEY_SIZE == crypto_auth_KEYBYTES, "key size is crypto_auth's");
_Static_assert(MPIDI_TCP_MAC_SIZE == crypto_auth_BYTES, "MAC size is crypto_auth's");
_Static_assert(MPIDI_TCP_SECRET_SIZE == crypto_auth_KEYBYTES, "a port's secret is a MAC key");
_Static_assert(MPIDI_TCP_PK_SIZE == crypto_kx_PUBLICKEYBYTES, "pk size is crypto_kx's");
_Static_assert(MPIDI_TCP_SK_SIZE == crypto_kx_SECRETKEYBYTES, "sk size is crypto_kx's");
_Static_assert(MPIDI_TCP_KEY_SIZE == crypto_kx_SESSIONKEYBYTES, "a session key is a MAC key");

/* What a MAC covers: a label of 16 bytes (zero-padded), then fixed-size
 * parts in wire order.  crypto_auth is HMAC-SHA-512-256, computed here in
 * steps so that the parts need not be copied together. */
typedef struct {
    const void *p;
    size_t n;
} part_t;

static void mac_parts(uint8_t * mac, const uint8_t * key, const char *label,
                      const part_t * parts, int n)
{
    crypto_auth_hmacsha512256_state st;
    uint8_t l[16] = { 0 };
    memcpy(l, label, strlen(label));
    crypto_auth_hmacsha512256_init(&st, key, MPIDI_TCP_KEY_SIZE);
    crypto_auth_hmacsha512256_update(&st, l, sizeof(l));
    for (int i = 0; i < n; i++)
        crypto_auth_hmacsha512256_update(&st, parts[i].p, parts[i].n);
    crypto_auth_hmacsha512256_final(&st, mac);
    sodium_memzero(&st, sizeof(st));
}

/* a received MAC against the one computed here, in constant time */
static MPIDI_TCP_hdr_err_t same(uint8_t * want, const uint8_t * got)
{
    int ok = crypto_verify_32(want, got) == 0;
    sodium_memzero(want, MPIDI_TCP_MAC_SIZE);
    return ok ? MPIDI_TCP_HDR_OK : MPIDI_TCP_HELLO_EPROOF;
}

/* a verdict and up to three numbers, little-endian */
static void numbers(uint8_t * b, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3)
{
    MPIDI_TCP_put32(b, v0);
    MPIDI_TCP_put32(b + 4, v1);
    MPIDI_TCP_put32(b + 8, v2);
    MPIDI_TCP_put32(b + 12, v3);
}

int MPIDI_TCP_auth_init(void)
{
    return sodium_init() < 0 ? -1 : 0;
}

void MPIDI_TCP_auth_wipe(void *p, size_t n)
{
    sodium_memzero(p, n);
}

void MPIDI_TCP_auth_random(uint8_t * buf, size_t n)
{
    randombytes_buf(buf, n);
}

/* ---- ranks of one job: HELLO under the listener's key ---- */

static void hello_mac(uint8_t * mac, const uint8_t * key, const char *label, uint32_t verdict,
                      const MPIDI_TCP_hello_t * m, const uint8_t * nonce_l)
{
    uint8_t num[16];
    numbers(num, verdict, m->rank, m->size, m->dest);
    part_t parts[] = { {num, sizeof(num)}, {nonce_l, MPIDI_TCP_NONCE_SIZE},
    {m->nonce, MPIDI_TCP_NONCE_SIZE}
    };
    mac_parts(mac, key, label, parts, 3);
}

void MPIDI_TCP_auth_hello(MPIDI_TCP_hello_t * m, const uint8_t * key, uint32_t rank,
                          uint32_t size, uint32_t dest, const uint8_t * nonce_l)
{
    m->rank = rank;
    m->size = size;
    m->dest = dest;
    randombytes_buf(m->nonce, sizeof(m->nonce));
    hello_mac(m->mac, key, "mmct2 hello", 0, m, nonce_l);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_hello_check(const MPIDI_TCP_hello_t * m, const uint8_t * key,
                                               const uint8_t * nonce_l)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    hello_mac(want, key, "mmct2 hello", 0, m, nonce_l);
    return same(want, m->mac);
}

void MPIDI_TCP_auth_reply(uint8_t * mac, const uint8_t * key, MPIDI_TCP_opcode_t verdict,
                          const MPIDI_TCP_hello_t * m, const uint8_t * nonce_l)
{
    hello_mac(mac, key, "mmct2 reply", (uint32_t) verdict, m, nonce_l);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_reply_check(const uint8_t * mac, const uint8_t * key,
                                               MPIDI_TCP_opcode_t verdict,
                                               const MPIDI_TCP_hello_t * m,
                                               const uint8_t * nonce_l)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    hello_mac(want, key, "mmct2 reply", (uint32_t) verdict, m, nonce_l);
    return same(want, mac);
}

/* ---- a port: PORT_HELLO under the port's secret ---- */

static void port_mac(uint8_t * mac, const uint8_t * secret, const char *label, uint32_t verdict,
                     const MPIDI_TCP_port_hello_t * m, const uint8_t * upid_a,
                     const uint8_t * nonce_l)
{
    uint8_t num[16];
    numbers(num, verdict, m->tag, 0, 0);
    part_t parts[] = { {num, sizeof(num)}, {m->upid, MPIDI_TCP_UPID_SIZE},
    {upid_a, MPIDI_TCP_UPID_SIZE}, {nonce_l, MPIDI_TCP_NONCE_SIZE},
    {m->nonce, MPIDI_TCP_NONCE_SIZE}
    };
    mac_parts(mac, secret, label, parts, 5);
}

void MPIDI_TCP_auth_port_hello(MPIDI_TCP_port_hello_t * m, const uint8_t * secret, uint32_t tag,
                               const uint8_t * upid_c, const uint8_t * upid_a,
                               const uint8_t * nonce_l)
{
    m->tag = tag;
    memcpy(m->upid, upid_c, MPIDI_TCP_UPID_SIZE);
    randombytes_buf(m->nonce, sizeof(m->nonce));
    port_mac(m->mac, secret, "mmct2 phello", 0, m, upid_a, nonce_l);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_port_hello_check(const MPIDI_TCP_port_hello_t * m,
                                                    const uint8_t * secret,
                                                    const uint8_t * upid_a,
                                                    const uint8_t * nonce_l)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    port_mac(want, secret, "mmct2 phello", 0, m, upid_a, nonce_l);
    return same(want, m->mac);
}

void MPIDI_TCP_auth_port_reply(uint8_t * mac, const uint8_t * secret, uint32_t verdict,
                               const MPIDI_TCP_port_hello_t * m, const uint8_t * upid_a,
                               const uint8_t * nonce_l)
{
    port_mac(mac, secret, "mmct2 preply", verdict, m, upid_a, nonce_l);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_port_reply_check(const uint8_t * mac, const uint8_t * secret,
                                                    uint32_t verdict,
                                                    const MPIDI_TCP_port_hello_t * m,
                                                    const uint8_t * upid_a,
                                                    const uint8_t * nonce_l)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    port_mac(want, secret, "mmct2 preply", verdict, m, upid_a, nonce_l);
    return same(want, mac);
}

/* ---- two processes of different jobs: DYN_HELLO under their pair's keys ---- */

void MPIDI_TCP_auth_kx_keypair(uint8_t * pk, uint8_t * sk)
{
    crypto_kx_keypair(pk, sk);
}

int MPIDI_TCP_auth_kx_keys(uint8_t * rx, uint8_t * tx, const uint8_t * pk, const uint8_t * sk,
                           const uint8_t * peer_pk)
{
    int order = memcmp(pk, peer_pk, MPIDI_TCP_PK_SIZE);
    if (order == 0)
        return -1;
    /* the roles follow the keys, not who connects: one pair of keys per pair */
    return order < 0 ? crypto_kx_client_session_keys(rx, tx, pk, sk, peer_pk) :
        crypto_kx_server_session_keys(rx, tx, pk, sk, peer_pk);
}

static void dyn_mac(uint8_t * mac, const uint8_t * key, const char *label, uint32_t verdict,
                    const MPIDI_TCP_dyn_hello_t * m, const uint8_t * nonce_l)
{
    uint8_t num[16];
    numbers(num, verdict, 0, 0, 0);
    part_t parts[] = { {num, sizeof(num)}, {m->upid, MPIDI_TCP_UPID_SIZE},
    {m->pk, MPIDI_TCP_PK_SIZE}, {nonce_l, MPIDI_TCP_NONCE_SIZE},
    {m->nonce, MPIDI_TCP_NONCE_SIZE}
    };
    mac_parts(mac, key, label, parts, 5);
}

void MPIDI_TCP_auth_dyn_hello(MPIDI_TCP_dyn_hello_t * m, const uint8_t * tx,
                              const uint8_t * upid_x, const uint8_t * pk_y,
                              const uint8_t * nonce_l)
{
    memcpy(m->upid, upid_x, MPIDI_TCP_UPID_SIZE);
    memcpy(m->pk, pk_y, MPIDI_TCP_PK_SIZE);
    randombytes_buf(m->nonce, sizeof(m->nonce));
    dyn_mac(m->mac, tx, "mmct2 dhello", 0, m, nonce_l);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_dyn_hello_check(const MPIDI_TCP_dyn_hello_t * m,
                                                   const uint8_t * rx, const uint8_t * nonce_l)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    dyn_mac(want, rx, "mmct2 dhello", 0, m, nonce_l);
    return same(want, m->mac);
}

void MPIDI_TCP_auth_dyn_reply(uint8_t * mac, const uint8_t * tx, uint32_t verdict,
                              const MPIDI_TCP_dyn_hello_t * m, const uint8_t * nonce_l)
{
    dyn_mac(mac, tx, "mmct2 dreply", verdict, m, nonce_l);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_dyn_reply_check(const uint8_t * mac, const uint8_t * rx,
                                                   uint32_t verdict,
                                                   const MPIDI_TCP_dyn_hello_t * m,
                                                   const uint8_t * nonce_l)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    dyn_mac(want, rx, "mmct2 dreply", verdict, m, nonce_l);
    return same(want, mac);
}

/* ---- ch4's dynamic_send between the roots: DYN_MSG under the port's secret ---- */

static void msg_mac(uint8_t * mac, const MPIDI_TCP_dyn_msg_t * m, const uint8_t * secret,
                    const uint8_t * nonce_l, const uint8_t * nonce_i)
{
    uint8_t num[16];
    numbers(num, m->kind, m->tag, m->len, 0);
    part_t parts[] = { {num, sizeof(num)}, {m->data, m->len}, {nonce_l, MPIDI_TCP_NONCE_SIZE},
    {nonce_i, MPIDI_TCP_NONCE_SIZE}
    };
    mac_parts(mac, secret, "mmct2 dmsg", parts, 4);
}

void MPIDI_TCP_auth_dyn_msg(MPIDI_TCP_dyn_msg_t * m, const uint8_t * secret,
                            const uint8_t * nonce_l, const uint8_t * nonce_i)
{
    msg_mac(m->mac, m, secret, nonce_l, nonce_i);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_dyn_msg_check(const MPIDI_TCP_dyn_msg_t * m,
                                                 const uint8_t * secret, const uint8_t * nonce_l,
                                                 const uint8_t * nonce_i)
{
    uint8_t want[MPIDI_TCP_MAC_SIZE];
    msg_mac(want, m, secret, nonce_l, nonce_i);
    return same(want, m->mac);
}
