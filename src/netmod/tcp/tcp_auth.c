/*
 * mpich-multichannel: ch4:tcp's proof of membership (see tcp_auth.h).
 */
#include "tcp_auth.h"

#include <sodium.h>

_Static_assert(MPIDI_TCP_KEY_SIZE == crypto_auth_KEYBYTES, "key size is crypto_auth's");
_Static_assert(MPIDI_TCP_MAC_SIZE == crypto_auth_BYTES, "MAC size is crypto_auth's");

/* what a MAC covers: a label, then every number and both nonces, in wire order */
#define TRANSCRIPT_SIZE (16 + 4 * 4 + 2 * MPIDI_TCP_NONCE_SIZE)

static void transcript(uint8_t * t, const char *label, uint32_t verdict,
                       const MPIDI_TCP_hello_t * m, const uint8_t * nonce_l)
{
    memset(t, 0, 16);
    memcpy(t, label, strlen(label));
    MPIDI_TCP_put32(t + 16, verdict);
    MPIDI_TCP_put32(t + 20, m->rank);
    MPIDI_TCP_put32(t + 24, m->size);
    MPIDI_TCP_put32(t + 28, m->dest);
    memcpy(t + 32, nonce_l, MPIDI_TCP_NONCE_SIZE);
    memcpy(t + 32 + MPIDI_TCP_NONCE_SIZE, m->nonce, MPIDI_TCP_NONCE_SIZE);
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

void MPIDI_TCP_auth_hello(MPIDI_TCP_hello_t * m, const uint8_t * key, uint32_t rank,
                          uint32_t size, uint32_t dest, const uint8_t * nonce_l)
{
    uint8_t t[TRANSCRIPT_SIZE];
    m->rank = rank;
    m->size = size;
    m->dest = dest;
    randombytes_buf(m->nonce, sizeof(m->nonce));
    transcript(t, "mmct2 hello", 0, m, nonce_l);
    crypto_auth(m->mac, t, sizeof(t), key);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_hello_check(const MPIDI_TCP_hello_t * m, const uint8_t * key,
                                               const uint8_t * nonce_l)
{
    uint8_t t[TRANSCRIPT_SIZE];
    transcript(t, "mmct2 hello", 0, m, nonce_l);
    return crypto_auth_verify(m->mac, t, sizeof(t), key) == 0 ? MPIDI_TCP_HDR_OK :
        MPIDI_TCP_HELLO_EPROOF;
}

void MPIDI_TCP_auth_reply(uint8_t * mac, const uint8_t * key, MPIDI_TCP_opcode_t verdict,
                          const MPIDI_TCP_hello_t * m, const uint8_t * nonce_l)
{
    uint8_t t[TRANSCRIPT_SIZE];
    transcript(t, "mmct2 reply", (uint32_t) verdict, m, nonce_l);
    crypto_auth(mac, t, sizeof(t), key);
}

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_reply_check(const uint8_t * mac, const uint8_t * key,
                                               MPIDI_TCP_opcode_t verdict,
                                               const MPIDI_TCP_hello_t * m,
                                               const uint8_t * nonce_l)
{
    uint8_t t[TRANSCRIPT_SIZE];
    transcript(t, "mmct2 reply", (uint32_t) verdict, m, nonce_l);
    return crypto_auth_verify(mac, t, sizeof(t), key) == 0 ? MPIDI_TCP_HDR_OK :
        MPIDI_TCP_HELLO_EPROOF;
}
