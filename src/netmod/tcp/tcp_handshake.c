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
 *
 * A process of another job proves itself instead with a port's secret
 * (PORT_HELLO: MPI_Comm_connect's root) or with the keys of the pair's public
 * keys (DYN_HELLO: any other pair of two connected jobs), tcp_auth.h; there
 * a port's connection wins a crossing, else the one the process with the
 * lower public key initiated.
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
    char name[96];
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPIX_ERR_PROC_FAILED, "**tcp_auth", "**tcp_auth %s %s",
                                MPIDI_TCP_peer_str(rank, name, sizeof(name)), what);
}

static int is_ack(MPIDI_TCP_opcode_t op)
{
    return op == MPIDI_TCP_OP_HELLO_ACK || op == MPIDI_TCP_OP_PORT_ACK ||
        op == MPIDI_TCP_OP_DYN_ACK;
}

/* The listener's verdict on a proven hello (mac: its proof, NULL for a
 * PORT_NAK, which grants nothing), then close unless adopted. */
static void verdict(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op, const uint8_t * mac)
{
    static const uint8_t none[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_conn_ctl(c, op, mac ? mac : none, MPIDI_TCP_MAC_SIZE);
    if (!is_ack(op)) {
        c->close_after_ctl = 1;
        c->peer = -1;
        MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_CLOSED);
    }
    MPIDI_TCP_flush(c);
}

static void hello_verdict(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op)
{
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_auth_reply(mac, MPIDI_TCP_global.me.key, op, &c->hs_msg.hello, c->nonce_l);
    verdict(c, op, mac);
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
    MPIDI_TCP_hello_t *m = &c->hs_msg.hello;
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_hello_decode(body, (uint32_t) g->size,
                                                      (uint32_t) g->rank, m);
    if (herr == MPIDI_TCP_HDR_OK)
        herr = MPIDI_TCP_auth_hello_check(m, g->me.key, c->nonce_l);
    if (herr != MPIDI_TCP_HDR_OK) {
        refuse(c, herr, NULL);
        return;
    }
    /* proven: a rank of this job */
    int peer = (int) m->rank;
    MPIDI_TCP_conn_t *old = g->vc[peer];
    c->hs_op = MPIDI_TCP_OP_HELLO;
    memcpy(c->nonce_i, m->nonce, sizeof(c->nonce_i));
    if (g->dead_err[peer]) {
        hello_verdict(c, MPIDI_TCP_OP_HELLO_DEAD);
        return;
    }
    if (old && !(old->outgoing && MPIDI_TCP_conn_is_pending(old->state) &&
                 MPIDI_TCP_keep_incoming(g->rank, peer, 1))) {
        hello_verdict(c, MPIDI_TCP_OP_HELLO_NAK);       /* we keep our own connection to the peer */
        return;
    }
    MPIDI_TCP_conn_adopt(c, peer);
    hello_verdict(c, MPIDI_TCP_OP_HELLO_ACK);
}

/* Listener: a PORT_HELLO, MPI_Comm_connect's root proving it was told the
 * name of a port open here.  A closed port, a wrong proof or a process of
 * another MPICH gets PORT_NAK, which grants nothing, and its connect fails at
 * once instead of retrying. */
static void on_port_hello(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_port_hello_t *m = &c->hs_msg.port;
    const uint8_t *secret;
    uint8_t mine[MPIDI_TCP_UPID_SIZE], mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_upid_t u;
    int peer;

    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_port_hello_decode(body, m);
    if (herr != MPIDI_TCP_HDR_OK) {
        refuse(c, herr, NULL);
        return;
    }
    c->hs_op = MPIDI_TCP_OP_PORT_HELLO;
    if (!MPIDI_TCP_port_admit(m->tag, &secret)) {
        MPIDI_TCP_refused(&c->remote, "a connect to a port this process has not opened");
        verdict(c, MPIDI_TCP_OP_PORT_NAK, NULL);
        return;
    }
    MPIDI_TCP_upid_of(g->rank, mine);
    herr = MPIDI_TCP_auth_port_hello_check(m, secret, mine, c->nonce_l);
    if (herr == MPIDI_TCP_HDR_OK)
        herr = MPIDI_TCP_upid_decode(m->upid, sizeof(m->upid), MPICH_NUMVERSION, &u);
    if (herr != MPIDI_TCP_HDR_OK) {
        MPIDI_TCP_refused(&c->remote, MPIDI_TCP_hdr_strerror(herr));
        verdict(c, MPIDI_TCP_OP_PORT_NAK, NULL);
        return;
    }
    if (MPIDI_TCP_dyn_peer_add(m->upid, sizeof(m->upid), &peer) || peer < g->size) {
        refuse(c, MPIDI_TCP_HDR_OK, "a connect to a port from a process of this job, "
               "or out of memory");
        return;
    }
    MPIDI_TCP_conn_t *old = g->vc[peer];
    memcpy(c->nonce_i, m->nonce, sizeof(c->nonce_i));
    if (g->dead_err[peer] || (old && !(old->outgoing && MPIDI_TCP_conn_is_pending(old->state)))) {
        verdict(c, MPIDI_TCP_OP_PORT_NAK, NULL);
        return;
    }
    MPIDI_TCP_conn_adopt(c, peer);
    MPIDI_TCP_auth_port_reply(mac, secret, MPIDI_TCP_OP_PORT_ACK, m, mine, c->nonce_l);
    verdict(c, MPIDI_TCP_OP_PORT_ACK, mac);
}

/* Listener: a DYN_HELLO, from a process of a job this one is connected to,
 * whose public key it learnt over a proven connection. */
static void on_dyn_hello(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_dyn_hello_t *m = &c->hs_msg.dyn;
    uint8_t mac[MPIDI_TCP_MAC_SIZE];
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_dyn_hello_decode(body, m);
    int peer = herr == MPIDI_TCP_HDR_OK ? MPIDI_TCP_peer_of_upid(m->upid) : -1;

    if (herr != MPIDI_TCP_HDR_OK) {
        refuse(c, herr, NULL);
        return;
    }
    /* a process this one does not know yet is refused without a warning: a
     * new intercommunicator's other side may dial before this rank has
     * learnt of it, and dials again */
    if (peer < 0) {
        MPIDI_TCP_conn_free(c);
        return;
    }
    if (peer < g->size || memcmp(m->pk, g->me.pk, sizeof(m->pk)) || MPIDI_TCP_dyn_keys(peer)) {
        refuse(c, MPIDI_TCP_HDR_OK,
               "a hello from a rank of this job, to another key, or with a bad key");
        return;
    }
    herr = MPIDI_TCP_auth_dyn_hello_check(m, g->dyn[peer - g->size].rx, c->nonce_l);
    if (herr != MPIDI_TCP_HDR_OK) {
        refuse(c, herr, NULL);
        return;
    }
    MPIDI_TCP_opcode_t op = MPIDI_TCP_OP_DYN_ACK;
    MPIDI_TCP_conn_t *old = g->vc[peer];
    c->hs_op = MPIDI_TCP_OP_DYN_HELLO;
    memcpy(c->nonce_i, m->nonce, sizeof(c->nonce_i));
    if (g->dead_err[peer])
        op = MPIDI_TCP_OP_DYN_DEAD;
    else if (old && !(old->outgoing && MPIDI_TCP_conn_is_pending(old->state) &&
                      !MPIDI_TCP_dial_secret(peer, NULL) &&
                      memcmp(g->cards[peer].pk, g->me.pk, sizeof(g->me.pk)) < 0))
        op = MPIDI_TCP_OP_DYN_NAK;
    else
        MPIDI_TCP_conn_adopt(c, peer);
    MPIDI_TCP_auth_dyn_reply(mac, g->dyn[peer - g->size].tx, op, m, c->nonce_l);
    verdict(c, op, mac);
}

/* Initiator: the listener's challenge; our answer proves we hold its key,
 * were told its port's secret, or hold the private key of our upid. */
static void on_challenge(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    uint8_t out[MPIDI_TCP_HS_BODY_MAX], mine[MPIDI_TCP_UPID_SIZE], theirs[MPIDI_TCP_UPID_SIZE];
    const uint8_t *secret;
    uint32_t tag;

    if (MPIDI_TCP_challenge_decode(body, c->nonce_l) != MPIDI_TCP_HDR_OK) {
        MPIDI_TCP_conn_fail(c, auth_error(c->peer, "it does not speak this protocol "
                                          "(another program at that address?)"));
        return;
    }
    if (c->peer < g->size) {
        MPIDI_TCP_hello_t *m = &c->hs_msg.hello;
        c->hs_op = MPIDI_TCP_OP_HELLO;
        MPIDI_TCP_auth_hello(m, g->cards[c->peer].key, (uint32_t) g->rank, (uint32_t) g->size,
                             (uint32_t) c->peer, c->nonce_l);
        MPIDI_TCP_hello_encode(out, m);
        memcpy(c->nonce_i, m->nonce, sizeof(c->nonce_i));
    } else {
        MPIDI_TCP_upid_of(g->rank, mine);
        MPIDI_TCP_upid_of(c->peer, theirs);
        if ((secret = MPIDI_TCP_dial_secret(c->peer, &tag)) != NULL) {
            MPIDI_TCP_port_hello_t *m = &c->hs_msg.port;
            c->hs_op = MPIDI_TCP_OP_PORT_HELLO;
            MPIDI_TCP_auth_port_hello(m, secret, tag, mine, theirs, c->nonce_l);
            MPIDI_TCP_port_hello_encode(out, m);
            memcpy(c->nonce_i, m->nonce, sizeof(c->nonce_i));
        } else if (MPIDI_TCP_dyn_keys(c->peer) == 0) {
            MPIDI_TCP_dyn_hello_t *m = &c->hs_msg.dyn;
            c->hs_op = MPIDI_TCP_OP_DYN_HELLO;
            MPIDI_TCP_auth_dyn_hello(m, g->dyn[c->peer - g->size].tx, mine,
                                     g->cards[c->peer].pk, c->nonce_l);
            MPIDI_TCP_dyn_hello_encode(out, m);
            memcpy(c->nonce_i, m->nonce, sizeof(c->nonce_i));
        } else {
            MPIDI_TCP_conn_fail(c, auth_error(c->peer, "its public key is not usable"));
            return;
        }
    }
    MPIDI_TCP_conn_ctl(c, c->hs_op, out, MPIDI_TCP_body_size(c->hs_op));
    MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_HELLO_SENT);
    MPIDI_TCP_flush(c);
}

/* The hello a verdict answers, and whether its proof holds. */
static int verdict_proven(MPIDI_TCP_conn_t * c, MPIDI_TCP_opcode_t op, const uint8_t * mac)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    uint8_t theirs[MPIDI_TCP_UPID_SIZE];
    const uint8_t *secret;

    switch (op) {
        case MPIDI_TCP_OP_HELLO_ACK:
        case MPIDI_TCP_OP_HELLO_NAK:
        case MPIDI_TCP_OP_HELLO_DEAD:
            return c->hs_op == MPIDI_TCP_OP_HELLO &&
                MPIDI_TCP_auth_reply_check(mac, g->cards[c->peer].key, op, &c->hs_msg.hello,
                                           c->nonce_l) == MPIDI_TCP_HDR_OK;
        case MPIDI_TCP_OP_PORT_ACK:
            MPIDI_TCP_upid_of(c->peer, theirs);
            return c->hs_op == MPIDI_TCP_OP_PORT_HELLO &&
                (secret = MPIDI_TCP_dial_secret_of(c->peer, c->hs_msg.port.tag)) != NULL &&
                MPIDI_TCP_auth_port_reply_check(mac, secret, op, &c->hs_msg.port, theirs,
                                                c->nonce_l) == MPIDI_TCP_HDR_OK;
        case MPIDI_TCP_OP_PORT_NAK:
            return c->hs_op == MPIDI_TCP_OP_PORT_HELLO;
        default:
            return c->hs_op == MPIDI_TCP_OP_DYN_HELLO &&
                MPIDI_TCP_auth_dyn_reply_check(mac, g->dyn[c->peer - g->size].rx, op,
                                               &c->hs_msg.dyn, c->nonce_l) == MPIDI_TCP_HDR_OK;
    }
}

/* Initiator: the listener's verdict, which must prove it holds its key (or
 * the port's secret, or its upid's private key). */
static void on_verdict(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * mac)
{
    MPIDI_TCP_opcode_t op = (MPIDI_TCP_opcode_t) h->opcode;

    if (!verdict_proven(c, op, mac)) {
        MPIDI_TCP_conn_fail(c, auth_error(c->peer, "its answer is not signed with that "
                                          "process's key"));
        return;
    }
    switch (op) {
        case MPIDI_TCP_OP_HELLO_ACK:
        case MPIDI_TCP_OP_PORT_ACK:
        case MPIDI_TCP_OP_DYN_ACK:
            MPIDI_TCP_conn_set_state(c, MPIDI_TCP_CONN_ESTABLISHED);
            c->retries = 0;
            MPIDI_TCP_flush(c);
            break;
        case MPIDI_TCP_OP_HELLO_NAK:
        case MPIDI_TCP_OP_DYN_NAK:
            MPIDI_TCP_conn_yield(c);
            break;
        case MPIDI_TCP_OP_PORT_NAK:
            /* the port is closed (or of another MPICH): the connect fails, the
             * process does not */
            MPIDI_TCP_dial_refused(c->peer);
            MPIDI_TCP_sendq_fail(c, MPI_ERR_PORT);
            MPIDI_TCP_conn_free(c);
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
    [MPIDI_TCP_OP_PORT_ACK] = on_verdict,
    [MPIDI_TCP_OP_PORT_NAK] = on_verdict,
    [MPIDI_TCP_OP_DYN_ACK] = on_verdict,
    [MPIDI_TCP_OP_DYN_NAK] = on_verdict,
    [MPIDI_TCP_OP_DYN_DEAD] = on_verdict,
};

/* A whole handshake message, its opcode valid and allowed in c's state
 * (tcp_rx.c). */
int MPIDI_TCP_handshake(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, const uint8_t * body)
{
    hs_handlers[h->opcode] (c, h, body);
    return MPI_SUCCESS;
}
