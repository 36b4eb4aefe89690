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
 * come from randombytes_buf (getrandom).
 *
 * Processes of two jobs (doc/tcp-dynamic.md) share no such key.  The root
 * that connects to a port proves it was told the port's secret S, which is
 * in the port name and nowhere else:
 *
 *   initiator -> listener  PORT_HELLO  tag, upid_c, nonce_i,
 *                                      MAC_S("phello" tag upid_c upid_a nonce_l nonce_i)
 *   listener -> initiator  verdict     MAC_S("preply" verdict tag upid_c upid_a nonce_l nonce_i)
 *
 * (upid_a: the listener's own upid, so a proof is only good for the process
 * that opened the port).  Over that proven connection the two jobs exchange
 * their upids, each holding its process's X25519 public key; any other pair
 * x, y of the two jobs then proves itself with the keys crypto_kx derives
 * for the pair (tx of one = rx of the other):
 *
 *   x -> y  DYN_HELLO  upid_x, pk_y, nonce_i, MAC_tx("dhello" upid_x pk_y nonce_l nonce_i)
 *   y -> x  verdict    MAC_tx("dreply" verdict upid_x pk_y nonce_l nonce_i)
 *
 * ch4's own messages between the two roots (dynamic_send: the connect and
 * its reply) travel as DYN_MSG, each under the port's secret and bound to
 * the connection it travels on (both nonces of that connection's handshake),
 * so that only a process told the port name can connect, also over a
 * connection proven earlier for another purpose:
 *
 *   DYN_MSG  tag, kind, data, MAC_S("dmsg" kind tag len data nonce_l nonce_i)
 *
 * Only public keys cross the wire.  Plain C and libsodium, no MPICH:
 * unit-tested in test/unit/test_tcp.c.
 */
#ifndef TCP_AUTH_H_INCLUDED
#define TCP_AUTH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "tcp_proto.h"

#define MPIDI_TCP_KEY_SIZE 32
#define MPIDI_TCP_SK_SIZE  32

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

/* PORT_HELLO to the process whose upid is upid_a, for its port tag with
 * secret, from the process whose upid is upid_c, in answer to nonce_l. */
void MPIDI_TCP_auth_port_hello(MPIDI_TCP_port_hello_t * m, const uint8_t * secret, uint32_t tag,
                               const uint8_t * upid_c, const uint8_t * upid_a,
                               const uint8_t * nonce_l);

/* MPIDI_TCP_HDR_OK when a PORT_HELLO proves its sender was told secret, was
 * meant for us (upid_a: ours) and answers our nonce_l. */
MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_port_hello_check(const MPIDI_TCP_port_hello_t * m,
                                                    const uint8_t * secret,
                                                    const uint8_t * upid_a,
                                                    const uint8_t * nonce_l);

/* The listener's verdict on a PORT_HELLO, as the MAC that makes up its body. */
void MPIDI_TCP_auth_port_reply(uint8_t * mac, const uint8_t * secret, uint32_t verdict,
                               const MPIDI_TCP_port_hello_t * m, const uint8_t * upid_a,
                               const uint8_t * nonce_l);

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_port_reply_check(const uint8_t * mac, const uint8_t * secret,
                                                    uint32_t verdict,
                                                    const MPIDI_TCP_port_hello_t * m,
                                                    const uint8_t * upid_a,
                                                    const uint8_t * nonce_l);

/* A fresh X25519 key pair (drawn at MPI_Init; pk goes into the upid). */
void MPIDI_TCP_auth_kx_keypair(uint8_t * pk, uint8_t * sk);

/* The MAC keys of the pair (us, peer): tx for what we send, rx for what we
 * receive; the peer's rx is our tx whichever of us connects.  -1 when
 * peer_pk is ours or not a usable public key. */
int MPIDI_TCP_auth_kx_keys(uint8_t * rx, uint8_t * tx, const uint8_t * pk, const uint8_t * sk,
                           const uint8_t * peer_pk);

/* DYN_HELLO from the process of upid_x to the holder of pk_y, under the
 * pair's tx, in answer to nonce_l. */
void MPIDI_TCP_auth_dyn_hello(MPIDI_TCP_dyn_hello_t * m, const uint8_t * tx,
                              const uint8_t * upid_x, const uint8_t * pk_y,
                              const uint8_t * nonce_l);

/* MPIDI_TCP_HDR_OK when a DYN_HELLO was made under the pair's key (rx: ours)
 * in answer to our nonce_l; whether m->pk is ours is the caller's check. */
MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_dyn_hello_check(const MPIDI_TCP_dyn_hello_t * m,
                                                   const uint8_t * rx, const uint8_t * nonce_l);

void MPIDI_TCP_auth_dyn_reply(uint8_t * mac, const uint8_t * tx, uint32_t verdict,
                              const MPIDI_TCP_dyn_hello_t * m, const uint8_t * nonce_l);

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_dyn_reply_check(const uint8_t * mac, const uint8_t * rx,
                                                   uint32_t verdict,
                                                   const MPIDI_TCP_dyn_hello_t * m,
                                                   const uint8_t * nonce_l);

/* A DYN_MSG's MAC under the port's secret, on the connection whose
 * handshake had nonce_l (the listener's) and nonce_i (the initiator's). */
void MPIDI_TCP_auth_dyn_msg(MPIDI_TCP_dyn_msg_t * m, const uint8_t * secret,
                            const uint8_t * nonce_l, const uint8_t * nonce_i);

MPIDI_TCP_hdr_err_t MPIDI_TCP_auth_dyn_msg_check(const MPIDI_TCP_dyn_msg_t * m,
                                                 const uint8_t * secret, const uint8_t * nonce_l,
                                                 const uint8_t * nonce_i);

#endif /* TCP_AUTH_H_INCLUDED */
