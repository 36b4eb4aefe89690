/*
 * mpich-multichannel: ch4:tcp's handshake (the protocol layer).
 *
 * The listener challenges every connection it accepts with a fresh nonce;
 * the initiator answers with a HELLO proving it holds the listener's key; the
 * listener's verdict proves the same back (tcp_auth.h).  Only then is the
 * connection the peer's (MPIDI_TCP_conn_adopt).  When two ranks connect to
 * each other at the same time, both keep the connection the lower rank
 * initiated (MPIDI_TCP_keep_incoming): the lower rank answers the other HELLO
 * with HELLO_NAK and the higher rank adopts the incoming connection.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

/* The listener accepted a connection (tcp_accept.c): it speaks first. */
void MPIDI_TCP_hs_accepted(MPIDI_TCP_conn_t * c)
{
    uint8_t body[MPIDI_TCP_CHALLENGE_SIZE];
    MPIDI_TCP_auth_random(c->nonce_l, sizeof(c->nonce_l));
    MPIDI_TCP_challenge_encode(body, c->nonce_l);
    MPIDI_TCP_conn_ctl(c, MPIDI_TCP_OP_CHALLENGE, body, sizeof(body));
    MPIDI_TCP_flush(c);
}

/* The process at a rank's address is not that rank (or not of this job). */
static int auth_error(int rank, const char *what)
{
    char addr[64];
    MPIDI_TCP_addr_str(MPIDI_TCP_ADDR(rank), addr, sizeof(addr));
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPIX_ERR_PROC_FAILED, "**tcp_auth", "**tcp_auth %d %s %s", rank,
                                addr, what);
}

/* The listener's verdict on a proven HELLO, then close unless adopted. */
static void verdict(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op)
{
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_auth_reply(mac, MPIDI_TCP_global.me.key, op, &c->hello, c->nonce_l);
    MPIDI_TCP_conn_ctl(c, op, mac, sizeof(mac));
    if (op != MPIDI_TCP_OP_HELLO_ACK) {
        c->close_after_ctl = 1;
        c->peer = -1;
        MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_CLOSED);
    }
    MPIDI_TCP_flush(c);
}

/* Listener: a stranger's handshake (herr: what was wrong with it, or
 * MPIDI_TCP_HDR_OK and why there was nothing to prove). */
static void refuse(MPIDI_TCP_conn_t * c, MPIDI_TCP_hdr_err_t herr, const char *why)
{
    MPIDI_TCP_refused(&c->remote, herr != MPIDI_TCP_HDR_OK ? MPIDI_TCP_hdr_strerror(herr) : why);
    MPIDI_TCP_conn_free(c);
}

/* Listener: a HELLO on a connection we challenged. */
static void on_hello(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_hello_decode(body, (uint32_t) g->size,
                                                      (uint32_t) g->rank, &c->hello);
    if (herr == MPIDI_TCP_HDR_OK)
        herr = MPIDI_TCP_auth_hello_check(&c->hello, g->me.key, c->nonce_l);
    if (herr != MPIDI_TCP_HDR_OK) {
        refuse(c, herr, NULL);
        return;
    }
    /* proven: a rank of this job */
    int peer = (int) c->hello.rank;
    MPIDI_TCP_conn_t *old = g->vc[peer];
    if (g->dead_err[peer]) {
        verdict(c, MPIDI_TCP_OP_HELLO_DEAD);
        return;
    }
    if (old && !(old->outgoing && MPIDI_TCP_conn_is_pending(old->state) &&
                 MPIDI_TCP_keep_incoming(g->rank, peer, 1))) {
        verdict(c, MPIDI_TCP_OP_HELLO_NAK);     /* we keep our own connection to the peer */
        return;
    }
    MPIDI_TCP_conn_adopt(c, peer);
    verdict(c, MPIDI_TCP_OP_HELLO_ACK);
}

/* Listener: a PORT_HELLO.  No process opens a port until dynamic processes
 * land (doc/tcp-dynamic.md): refused as a stranger's. */
static void on_port_hello(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_port_hello_t m;
    refuse(c, MPIDI_TCP_port_hello_decode(body, &m),
           "a connect to a port this process has not opened");
}

/* Listener: a DYN_HELLO, which only a process of a job this one has
 * connected to may send: none yet (see on_port_hello). */
static void on_dyn_hello(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_dyn_hello_t m;
    refuse(c, MPIDI_TCP_dyn_hello_decode(body, &m),
           "a hello from a process of a job this process is not connected to");
}

/* Initiator: the listener's challenge; our answer proves we hold its key. */
static void on_challenge(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    uint8_t out[MPIDI_TCP_HELLO_SIZE];

    if (MPIDI_TCP_challenge_decode(body, c->nonce_l) != MPIDI_TCP_HDR_OK) {
        MPIDI_TCP_conn_fail(c, auth_error(c->peer, "it does not speak this protocol "
                                          "(another program at that address?)"));
        return;
    }
    MPIDI_TCP_auth_hello(&c->hello, g->cards[c->peer].key, (uint32_t) g->rank,
                         (uint32_t) g->size, (uint32_t) c->peer, c->nonce_l);
    MPIDI_TCP_hello_encode(out, &c->hello);
    MPIDI_TCP_conn_ctl(c, MPIDI_TCP_OP_HELLO, out, sizeof(out));
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_HELLO_SENT);
    MPIDI_TCP_flush(c);
}

/* Initiator: the listener's verdict, which must prove it holds its key. */
static void on_verdict(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * mac)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_opcode_t op = (MPIDI_TCP_opcode_t) h->opcode;

    if (MPIDI_TCP_auth_reply_check(mac, g->cards[c->peer].key, op, &c->hello, c->nonce_l)) {
        MPIDI_TCP_conn_fail(c, auth_error(c->peer, "its answer is not signed with that "
                                          "rank's key"));
        return;
    }
    switch (op) {
        case MPIDI_TCP_OP_HELLO_ACK:
            MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_ESTABLISHED);
            c->retries = 0;
            MPIDI_TCP_flush(c);
            break;
        case MPIDI_TCP_OP_HELLO_NAK:
            MPIDI_TCP_conn_yield(c);
            break;
        default:
            MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, "it has declared this rank "
                                                        "failed", 0));
            break;
    }
}

typedef void (*hs_handler_t) (MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h,
                              const uint8_t * body);

static const hs_handler_t hs_handlers[MPIDI_TCP_OP_MAX] = {
    [MPIDI_TCP_OP_CHALLENGE] = on_challenge,
    [MPIDI_TCP_OP_HELLO] = on_hello,
    [MPIDI_TCP_OP_PORT_HELLO] = on_port_hello,
    [MPIDI_TCP_OP_DYN_HELLO] = on_dyn_hello,
    [MPIDI_TCP_OP_HELLO_ACK] = on_verdict,
    [MPIDI_TCP_OP_HELLO_NAK] = on_verdict,
    [MPIDI_TCP_OP_HELLO_DEAD] = on_verdict,
};

/* A whole handshake message, its opcode valid and allowed in c's state
 * (tcp_rx.c). */
int MPIDI_TCP_handshake(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    hs_handlers[h->opcode] (c, h, body);
    return MPI_SUCCESS;
}
