/*
 * mpich-multichannel: ch4:tcp's proof that both ends of a connection belong
 * to the job.
 *
 * Every rank draws a random key at MPI_Init and publishes it only in its
 * business card, which travels through PMI, never over a ch4:tcp socket.  A
 * connection is a challenge-response over the listener's key K:
 *
 *   listener -> initiator  CHALLENGE  nonce_l                (fresh, random)
 *   initiator -> listener  HELLO      i, n, l, nonce_i, MAC_K("hello" i n l nonce_l nonce_i)
 *   listener -> initiator  verdict    MAC_K("reply" verdict i n l nonce_l nonce_i)
 *
 * The listener's fresh nonce makes a captured HELLO worthless on any other
 * connection; the initiator's makes a captured verdict worthless; the labels
 * keep one side's MAC from serving as the other's.  The MAC is libsodium's
 * crypto_auth (HMAC-SHA-512-256), checked in constant time; keys and nonces
 * come from randombytes_buf (getrandom).  Plain C and libsodium, no MPICH:
 * unit-tested in test/unit/test_tcp.c.
 */
#ifndef TCP_AUTH_H_INCLUDED
#define TCP_AUTH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "tcp_proto.h"

#define MPIDI_TCP_KEY_SIZE 32

/* 0 once libsodium is ready, -1 when it cannot be initialized. */
int MPIDI_TCP_auth_init(void);

/* Overwrites secrets in a way the compiler cannot drop. */
void MPIDI_TCP_auth_wipe(void *p, size_t n);

/* Fills buf with n bytes from the kernel's random generator. */
void MPIDI_TCP_auth_random(uint8_t * buf, size_t n);

/* Fills a HELLO from rank to dest (world size n) in answer to nonce_l: a
 * fresh nonce_i and the MAC under dest's key. */
void MPIDI_TCP_auth_hello(MPIDI_TCP_hello_t * m, const uint8_t * key, uint32_t rank,
                          uint32_t size, uint32_t dest, const uint8_t * nonce_l);

/* MPIDI_TCP_HDR_OK when a decoded HELLO proves its sender holds key (ours)
 * and answers our nonce_l; MPIDI_TCP_HELLO_EPROOF otherwise. */
MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_hello_check(const MPIDI_TCP_hello_t * m, const uint8_t * key,
                                               const uint8_t * nonce_l);

/* The listener's verdict (MPIDI_TCP_OP_HELLO_ACK, _NAK or _DEAD) on a HELLO,
 * as the MAC that makes up its body. */
void MPIDI_TCP_auth_reply(uint8_t * mac, const uint8_t * key, MPIDI_TCP_opcode_t verdict,
                          const MPIDI_TCP_hello_t * m, const uint8_t * nonce_l);

/* MPIDI_TCP_HDR_OK when a verdict received for the HELLO we sent comes from
 * the holder of key; MPIDI_TCP_HELLO_EPROOF otherwise. */
MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_reply_check(const uint8_t * mac, const uint8_t * key,
                                               MPIDI_TCP_opcode_t verdict,
                                               const MPIDI_TCP_hello_t * m,
                                               const uint8_t * nonce_l);

#endif /* TCP_AUTH_H_INCLUDED */
