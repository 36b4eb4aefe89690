/*
 * mpich-multichannel: dynamic processes on ch4:tcp (doc/tcp-dynamic.md).
 *
 * MPICH's generic code does spawn, connect, accept and join over a few
 * netmod entries: a process's upid (tcp_proto.h: address and X25519 public
 * key, nothing secret), upids to ch4's addresses, and a blocking send and
 * receive by tag between the two roots (on 5.0 the CONNECT, then an
 * exchange of their groups both ways).  Trust comes from the port name: a
 * port is a tag and a fresh 256-bit secret, both in the name
 * (MPIDI_TCP_port_open, called by MPI_Open_port through the overlay), so
 * only a process that was told the name can connect (PORT_HELLO), and the
 * roots' messages (DYN_MSG) are each bound to the secret and to the
 * connection they travel on.  Every other pair of the two jobs proves
 * itself with the keys of its public keys (DYN_HELLO), which the roots
 * exchanged over their proven connection (ch4's exchange of upids).
 *
 * The rules of the roots' messages (tags are small per-process numbers that
 * a stranger could guess, the secret is not): a CONNECT only to a port open
 * here, with the secret's MAC, at most MPIDI_TCP_PORT_QUEUE_MAX waiting per
 * port; one REPLY or REFUSED only from the process we sent a CONNECT to on
 * that tag; a REPLY only to the process whose CONNECT we received, and only
 * naming itself; DATA only between the two, with the MAC, 64 MiB at most.
 * A root that gives up (a timeout, a failed exchange) says so (WITHDRAWN,
 * with the MAC): the other drops the CONNECT it has not accepted yet, or
 * fails its side of the exchange at once; what the other sent before it
 * learnt is dropped on arrival (a GONE link keeps the secret to check it).
 */
#include "mpidimpl.h"
#include "tcp_types.h"

/* connects waiting for MPI_Comm_accept on one port; more are refused */
#define MPIDI_TCP_PORT_QUEUE_MAX 64
/* connects given up whose late messages are recognised; the oldest go */
#define MPIDI_TCP_GONE_MAX 64

/* a port this process opened */
typedef struct MPIDI_TCP_port {
    struct MPIDI_TCP_port *next;
    uint32_t tag;
    int n_queued;               /* CONNECTs received, not yet taken by an accept */
    uint8_t secret[MPIDI_TCP_SECRET_SIZE];
} MPIDI_TCP_port_t;

/* what this process may send to (or expect from) a peer on a tag */
typedef enum {
    LINK_NAMED,                 /* a port name of the peer's was resolved: a CONNECT may go */
    LINK_DIALED,                /* our CONNECT went: its REPLY or REFUSED may come */
    LINK_OWED,                  /* we took the peer's CONNECT: our REPLY may go */
    LINK_GONE                   /* we gave up the connect: what still comes is dropped */
} link_kind_t;

typedef struct MPIDI_TCP_link {
    struct MPIDI_TCP_link *next;
    int peer;
    uint32_t tag;
    link_kind_t kind;
    int err;                    /* the port refused us before a connection was made */
    int answered;               /* DIALED: its one REPLY or REFUSED has come */
    int withdrawn;              /* the other root gave up (WITHDRAWN) */
    size_t rx_data;             /* bytes of the roots' exchange (DATA) received on it */
    uint8_t secret[MPIDI_TCP_SECRET_SIZE];
} MPIDI_TCP_link_t;

/* a DYN_MSG received and checked, until dynamic_recv takes it */
typedef struct MPIDI_TCP_dmsg {
    struct MPIDI_TCP_dmsg *next;
    int peer;
    uint32_t tag;
    int kind;
    uint16_t len;
    uint8_t data[MPIDI_TCP_DYN_DATA_MAX];
} MPIDI_TCP_dmsg_t;

/* an error of a peer's (it died, it broke the protocol) as the root's call sees it */
static int as_port_error(int err, int tag)
{
    return MPIR_Err_create_code(err, MPIR_ERR_RECOVERABLE, __func__, __LINE__, MPI_ERR_PORT,
                                "**tcp_port_peer", "**tcp_port_peer %d", tag);
}

static MPIDI_TCP_port_t *port_find(uint32_t tag)
{
    MPIDI_TCP_port_t *p = MPIDI_TCP_global.ports;
    while (p && p->tag != tag)
        p = p->next;
    return p;
}

static MPIDI_TCP_link_t *link_find(int peer, uint32_t tag, link_kind_t kind)
{
    for (MPIDI_TCP_link_t * l = MPIDI_TCP_global.links; l; l = l->next)
        if ((peer < 0 || l->peer == peer) && l->tag == tag && l->kind == kind)
            return l;
    return NULL;
}

/* the roots' link of a connect on 5.0: the connector's DIALED one, else
 * the acceptor's OWED one */
static MPIDI_TCP_link_t *roots_link(int peer, uint32_t tag)
{
    MPIDI_TCP_link_t *l = link_find(peer, tag, LINK_DIALED);
    return l ? l : link_find(peer, tag, LINK_OWED);
}

static MPIDI_TCP_link_t *link_add(int peer, uint32_t tag, link_kind_t kind,
                                  const uint8_t * secret)
{
    MPIDI_TCP_link_t *l = MPL_calloc(1, sizeof(*l), MPL_MEM_ADDRESS);
    if (l == NULL)
        return NULL;
    l->peer = peer;
    l->tag = tag;
    l->kind = kind;
    memcpy(l->secret, secret, sizeof(l->secret));
    l->next = MPIDI_TCP_global.links;
    MPIDI_TCP_global.links = l;
    return l;
}

#define KIND(k_) (1u << (k_))
#define ANSWERS (KIND(MPIDI_TCP_DYN_REPLY) | KIND(MPIDI_TCP_DYN_REFUSED))

/* The oldest message on tag of one of kinds (a bit per kind), from peer (-1:
 * any).  Kinds matter: a peer's port may have the tag of one of ours. */
static MPIDI_TCP_dmsg_t *dmsg_take(int peer, uint32_t tag, unsigned kinds)
{
    for (MPIDI_TCP_dmsg_t ** q = &MPIDI_TCP_global.dmsgs; *q; q = &(*q)->next) {
        MPIDI_TCP_dmsg_t *d = *q;
        if (d->tag == tag && (kinds & KIND(d->kind)) && (peer < 0 || d->peer == peer)) {
            *q = d->next;
            return d;
        }
    }
    return NULL;
}

/* The link goes, and with it what its peer sent of an exchange nobody takes
 * (a GONE link's went when it was given up). */
static void link_free(MPIDI_TCP_link_t * l)
{
    MPIDI_TCP_link_t **p = &MPIDI_TCP_global.links;
    MPIDI_TCP_dmsg_t *d;
    while (*p != l)
        p = &(*p)->next;
    *p = l->next;
    while (l->kind != LINK_GONE &&
           (d = dmsg_take(l->peer, l->tag, KIND(MPIDI_TCP_DYN_DATA))) != NULL)
        MPL_free(d);
    MPIDI_TCP_auth_wipe(l, sizeof(*l));
    MPL_free(l);
}

/* The port a connection to peer is for, if any: the handshake proves we
 * were told its secret (PORT_HELLO); NULL when none, so the pair's keys
 * prove it.  *tag (if asked) is the port's. */
const uint8_t *MPIDI_TCP_dial_secret(int peer, uint32_t * tag)
{
    for (MPIDI_TCP_link_t * l = MPIDI_TCP_global.links; l; l = l->next) {
        if (l->peer == peer && (l->kind == LINK_NAMED || l->kind == LINK_DIALED)) {
            if (tag)
                *tag = l->tag;
            return l->secret;
        }
    }
    return NULL;
}

/* The secret of our port link to peer on tag (the verdict on a PORT_HELLO). */
const uint8_t *MPIDI_TCP_dial_secret_of(int peer, uint32_t tag)
{
    MPIDI_TCP_link_t *l = link_find(peer, tag, LINK_NAMED);
    if (l == NULL)
        l = link_find(peer, tag, LINK_DIALED);
    return l ? l->secret : NULL;
}

/* The port's owner said no (PORT_NAK) before any connection was made: the
 * connects to peer fail, the peer itself does not. */
void MPIDI_TCP_dial_refused(int peer)
{
    for (MPIDI_TCP_link_t * l = MPIDI_TCP_global.links; l; l = l->next)
        if (l->peer == peer && (l->kind == LINK_NAMED || l->kind == LINK_DIALED))
            l->err = 1;
}

/* A PORT_HELLO for tag: the port's secret when it is open here. */
int MPIDI_TCP_port_admit(uint32_t tag, const uint8_t ** secret)
{
    MPIDI_TCP_port_t *p = port_find(tag);
    if (p == NULL)
        return 0;
    *secret = p->secret;
    return 1;
}

/* ---- peers: a process by its upid ---- */

/* A peer whose upid is this one; -1 when none is known.  The address is
 * compared first: it tells processes apart but for a forged upid, which the
 * key then refuses. */
int MPIDI_TCP_peer_of_upid(const uint8_t * upid)
{
    const MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_upid_t u;

    if (MPIDI_TCP_upid_decode(upid, MPIDI_TCP_UPID_SIZE, MPICH_NUMVERSION, &u) !=
        MPIDI_TCP_HDR_OK)
        return -1;
    for (int i = 0; i < g->n_peers; i++) {
        const MPIDI_TCP_card_t *c = &g->cards[i];
        if (c->addr.port == u.port && memcmp(&c->addr.ip, &u.ip, sizeof(u.ip)) == 0 &&
            c->eager_max == u.eager_max && memcmp(c->pk, u.pk, sizeof(u.pk)) == 0)
            return i;
    }
    return -1;
}

/* The pair's MAC keys with a process of another job, derived once. */
int MPIDI_TCP_dyn_keys(int peer)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_dyn_peer_t *d = &g->dyn[peer - g->size];
    if (!d->keyed && MPIDI_TCP_auth_kx_keys(d->rx, d->tx, g->me.pk, g->kx_sk,
                                            g->cards[peer].pk) == 0)
        d->keyed = 1;
    return d->keyed ? 0 : -1;
}

/* The peer for a upid another process sent us: a known one, else a new one.
 * A upid that cannot be a process of this MPICH still gets a peer, dead with
 * the reason, since MPICH 4.x ignores the error of its caller (so its sends
 * fail instead of reaching nothing). */
int MPIDI_TCP_dyn_peer_add(const uint8_t * upid, size_t len, int *peer)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_upid_t u;
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_upid_decode(upid, len, MPICH_NUMVERSION, &u);

    if (herr == MPIDI_TCP_HDR_OK && (*peer = MPIDI_TCP_peer_of_upid(upid)) >= 0)
        return MPI_SUCCESS;
    if (MPIDI_TCP_peer_add(peer))
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    MPIDI_TCP_card_t *c = &g->cards[*peer];
    if (herr != MPIDI_TCP_HDR_OK) {
        g->dead_err[*peer] = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
                                                  __LINE__, MPI_ERR_PORT, "**tcp_upid_bad",
                                                  "**tcp_upid_bad %s",
                                                  MPIDI_TCP_hdr_strerror(herr));
        g->n_dead++;
        return g->dead_err[*peer];
    }
    memcpy(&c->addr.ip, &u.ip, sizeof(u.ip));
    c->addr.port = u.port;
    c->eager_max = u.eager_max;
    memcpy(c->pk, u.pk, sizeof(c->pk));
    return MPI_SUCCESS;
}

/* A port name's record after its owner's upid (MPI_Comm_connect): a CONNECT
 * may go to peer on the port's tag, under its secret. */
int MPIDI_TCP_port_named(int peer, const uint8_t * rec)
{
    int mpi_errno = MPI_SUCCESS;
    uint32_t tag;
    uint8_t secret[MPIDI_TCP_SECRET_SIZE];
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_port_rec_decode(rec, &tag, secret);

    MPIR_ERR_CHKANDJUMP1(herr != MPIDI_TCP_HDR_OK, mpi_errno, MPI_ERR_PORT, "**tcp_port_name",
                         "**tcp_port_name %s", MPIDI_TCP_hdr_strerror(herr));
    MPIR_ERR_CHKANDJUMP(!link_add(peer, tag, LINK_NAMED, secret), mpi_errno, MPI_ERR_OTHER,
                        "**nomem");
  fn_exit:
    MPIDI_TCP_auth_wipe(secret, sizeof(secret));
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* ---- the roots' messages ---- */

/* Queues a DYN_MSG on an established connection; a refusal carries no MAC
 * (secret NULL): it grants nothing, and a port closed has no secret left. */
static void send_dmsg(MPIDI_TCP_conn_t * c, MPIDI_TCP_dyn_msg_t * m, const uint8_t * secret)
{
    uint8_t body[MPIDI_TCP_DYN_MSG_MIN + MPIDI_TCP_DYN_DATA_MAX];

    if (secret)
        MPIDI_TCP_auth_dyn_msg(m, secret, c->nonce_l, c->nonce_i);
    else
        memset(m->mac, 0, sizeof(m->mac));
    size_t n = MPIDI_TCP_dyn_msg_encode(body, m);
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION, .opcode = MPIDI_TCP_OP_DYN_MSG,
        .payload_sz = n
    };
    MPIDI_TCP_sendq_t *e = MPL_calloc(1, sizeof(*e) + MPIDI_TCP_HDR_SIZE + n, MPL_MEM_BUFFER);
    if (e == NULL) {
        MPIDI_TCP_conn_fail(c, MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
                                                    __LINE__, MPI_ERR_OTHER, "**nomem", 0));
        return;
    }
    MPIDI_TCP_hdr_encode((uint8_t *) e->hdr, &h);
    memcpy(e->hdr + MPIDI_TCP_HDR_SIZE, body, n);
    e->iov[0].iov_base = e->hdr;
    e->iov[0].iov_len = MPIDI_TCP_HDR_SIZE + n;
    e->iov_cur = e->iov;
    e->iov_cnt = 1;
    MPIDI_TCP_sendq_push(c, e);
    MPIDI_TCP_flush(c);
}

/* This side gives up the connect of link l (timed out, failed): the other
 * root is told if a connection to it is up, what it sent is dropped, and
 * the link stays (GONE) to recognise what it still sends (is_late). */
static void link_gone(MPIDI_TCP_link_t * l)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_conn_t *c = g->vc[l->peer];
    MPIDI_TCP_link_t *oldest = NULL;
    MPIDI_TCP_dmsg_t *d;
    int n = 0;

    if (c && c->state == MPIDI_TCP_CONN_ESTABLISHED) {
        MPIDI_TCP_dyn_msg_t m = {.tag = l->tag, .kind = MPIDI_TCP_DYN_WITHDRAWN };
        send_dmsg(c, &m, l->secret);
    }
    while ((d = dmsg_take(l->peer, l->tag, KIND(MPIDI_TCP_DYN_DATA) | ANSWERS)) != NULL)
        MPL_free(d);
    l->kind = LINK_GONE;
    for (MPIDI_TCP_link_t * k = g->links; k; k = k->next) {
        if (k->kind == LINK_GONE) {
            n++;
            oldest = k;         /* links are added at the front */
        }
    }
    if (n > MPIDI_TCP_GONE_MAX)
        link_free(oldest);
}

/* A message of a connect this side gave up, sent before the other root
 * learnt: a GONE link to its sender on its tag, and the MAC under that
 * link's secret (a refusal has none). */
static int is_late(const MPIDI_TCP_conn_t * c, const MPIDI_TCP_dyn_msg_t * m)
{
    for (MPIDI_TCP_link_t * l = MPIDI_TCP_global.links; l; l = l->next)
        if (l->kind == LINK_GONE && l->peer == c->peer && l->tag == m->tag &&
            (m->kind == MPIDI_TCP_DYN_REFUSED ||
             MPIDI_TCP_auth_dyn_msg_check(m, l->secret, c->nonce_l, c->nonce_i) ==
             MPIDI_TCP_HDR_OK))
            return 1;
    return 0;
}

/* ---- ports (MPI_Open_port and MPI_Close_port, through the overlay) ---- */

/* Appends the port's record (tag and a fresh secret) to the upid ch4 puts
 * in the port name. */
int MPIDI_TCP_port_open(int tag, char **addrname, int *addrname_size)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_port_t *p = MPL_calloc(1, sizeof(*p), MPL_MEM_ADDRESS);
    char *name = MPL_realloc(*addrname, *addrname_size + MPIDI_TCP_PORT_REC_SIZE,
                             MPL_MEM_ADDRESS);

    MPIR_ERR_CHKANDJUMP(!p || !name, mpi_errno, MPI_ERR_OTHER, "**nomem");
    *addrname = name;
    p->tag = (uint32_t) tag;
    MPIDI_TCP_auth_random(p->secret, sizeof(p->secret));
    MPIDI_TCP_port_rec_encode((uint8_t *) name + *addrname_size, p->tag, p->secret);
    *addrname_size += MPIDI_TCP_PORT_REC_SIZE;
    p->next = MPIDI_TCP_global.ports;
    MPIDI_TCP_global.ports = p;
    if ((ntohl(MPIDI_TCP_global.me.addr.ip.s_addr) >> 24) == 127)
        fprintf(stderr, "ch4:tcp warning: the port listens on loopback (every rank of this job "
                "is on one host): only processes of this host can connect to it\n");
  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(p);
    if (name)
        *addrname = name;
    goto fn_exit;
}

/* The port's secret is gone; connects still waiting for an accept are refused. */
void MPIDI_TCP_port_close(int tag)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_port_t **pp = &g->ports, *p;
    MPIDI_TCP_dmsg_t *d;

    while (*pp && (*pp)->tag != (uint32_t) tag)
        pp = &(*pp)->next;
    if ((p = *pp) == NULL)
        return;
    *pp = p->next;
    while ((d = dmsg_take(-1, p->tag, KIND(MPIDI_TCP_DYN_CONNECT))) != NULL) {
        MPIDI_TCP_link_t *l = link_find(d->peer, d->tag, LINK_OWED);
        if (l)
            link_free(l);
        MPIDI_TCP_dyn_msg_t m = {.tag = d->tag, .kind = MPIDI_TCP_DYN_REFUSED };
        if (g->vc[d->peer] && g->vc[d->peer]->state == MPIDI_TCP_CONN_ESTABLISHED)
            send_dmsg(g->vc[d->peer], &m, NULL);
        MPL_free(d);
    }
    MPIDI_TCP_auth_wipe(p, sizeof(*p));
    MPL_free(p);
}

/* why: what the refusal logs, NULL for none */
static void refuse_connect(MPIDI_TCP_conn_t * c, uint32_t tag, const char *why)
{
    MPIDI_TCP_dyn_msg_t r = {.tag = tag, .kind = MPIDI_TCP_DYN_REFUSED };
    if (why)
        MPIDI_TCP_refused(&c->remote, why);
    send_dmsg(c, &r, NULL);
}

/* The other root gave up the connect on m's tag.  Its CONNECT not accepted
 * yet goes, with the exchange it sent after it; an exchange under way fails
 * at once.  Nothing found: this side gave up too, or (4.x) its REPLY went
 * before; nothing to do. */
static int withdrawn(MPIDI_TCP_conn_t * c, const MPIDI_TCP_dyn_msg_t * m)
{
    MPIDI_TCP_link_t *l = roots_link(c->peer, m->tag);
    MPIDI_TCP_dmsg_t *d;

    if (l == NULL || is_late(c, m))
        return MPI_SUCCESS;
    if (MPIDI_TCP_auth_dyn_msg_check(m, l->secret, c->nonce_l, c->nonce_i))
        return MPIDI_TCP_protocol_error(c, "a withdrawal without the port's secret");
    if (l->kind == LINK_OWED &&
        (d = dmsg_take(c->peer, m->tag, KIND(MPIDI_TCP_DYN_CONNECT))) != NULL) {
        MPIDI_TCP_port_t *p = port_find(m->tag);
        if (p)
            p->n_queued--;
        MPL_free(d);
        link_free(l);
    } else
        l->withdrawn = 1;
    return MPI_SUCCESS;
}

/* A DYN_MSG on an established connection (tcp_rx.c). */
int MPIDI_TCP_dyn_rx(MPIDI_TCP_conn_t * c, const uint8_t * body, size_t len)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    MPIDI_TCP_dyn_msg_t m;
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_dyn_msg_decode(body, len, &m);

    if (herr != MPIDI_TCP_HDR_OK)
        return MPIDI_TCP_protocol_error(c, MPIDI_TCP_hdr_strerror(herr));
    if (m.kind == MPIDI_TCP_DYN_CONNECT) {
        MPIDI_TCP_port_t *p = port_find(m.tag);
        if (p == NULL) {
            /* a proven peer's connect to a port closed or never opened: an
             * application's error, which its MPI_Comm_connect returns as
             * MPI_ERR_PORT; nothing for the log of refused strangers */
            refuse_connect(c, m.tag, NULL);
            return MPI_SUCCESS;
        }
        if (MPIDI_TCP_auth_dyn_msg_check(&m, p->secret, c->nonce_l, c->nonce_i)) {
            refuse_connect(c, m.tag, "a connect without the port's secret");
            return MPI_SUCCESS;
        }
        if (p->n_queued >= MPIDI_TCP_PORT_QUEUE_MAX) {
            refuse_connect(c, m.tag, "a connect to a port with 64 connects waiting");
            return MPI_SUCCESS;
        }
        /* owed from now: on 5.0 the connector's exchange follows at once */
        if (!link_add(c->peer, m.tag, LINK_OWED, p->secret))
            return MPIDI_TCP_protocol_error(c, "out of memory for a dynamic-process message");
        p->n_queued++;
    } else if (m.kind == MPIDI_TCP_DYN_DATA) {
        /* between the roots of a connect, after the CONNECT (5.0) */
        MPIDI_TCP_link_t *l = roots_link(c->peer, m.tag);
        if (l == NULL || m.len == 0 ||
            MPIDI_TCP_auth_dyn_msg_check(&m, l->secret, c->nonce_l, c->nonce_i))
            return m.len && is_late(c, &m) ? MPI_SUCCESS :
                MPIDI_TCP_protocol_error(c, "a piece of an exchange without a connect, "
                                         "empty, or without the port's secret");
        l->rx_data += m.len;
        if (l->rx_data > 2 * sizeof(int) + MPIDI_TCP_DYN_XCHG_MAX)
            return MPIDI_TCP_protocol_error(c, "an exchange above 64 MiB");
    } else if (m.kind == MPIDI_TCP_DYN_WITHDRAWN) {
        return withdrawn(c, &m);
    } else {
        MPIDI_TCP_link_t *l = link_find(c->peer, m.tag, LINK_DIALED);
        int unsent = l == NULL || l->answered;
        int forged = !unsent && m.kind == MPIDI_TCP_DYN_REPLY &&
            MPIDI_TCP_auth_dyn_msg_check(&m, l->secret, c->nonce_l, c->nonce_i);
        if ((unsent || forged) && is_late(c, &m))
            return MPI_SUCCESS;
        if (unsent)
            return MPIDI_TCP_protocol_error(c, "an answer to a connect this process did "
                                            "not send, or a second one");
        if (forged)
            return MPIDI_TCP_protocol_error(c, "an answer to a connect without the port's "
                                            "secret");
        l->answered = 1;
    }
    MPIDI_TCP_dmsg_t *d = MPL_malloc(sizeof(*d), MPL_MEM_BUFFER);
    if (d == NULL)
        return MPIDI_TCP_protocol_error(c, "out of memory for a dynamic-process message");
    d->peer = c->peer;
    d->tag = m.tag;
    d->kind = m.kind;
    d->len = m.len;
    memcpy(d->data, m.data, m.len);
    /* in arrival order, so an accept takes the oldest connect */
    MPIDI_TCP_dmsg_t **q = &g->dmsgs;
    while (*q)
        q = &(*q)->next;
    d->next = NULL;
    *q = d;
    g->n_arrived++;
    return MPI_SUCCESS;
}

static double deadline_of(int timeout)
{
    return timeout > 0 ? MPIDI_TCP_now() + timeout : 0;
}

/* one pass of ch4's progress (the arbiter's, shared memory's too: the ranks
 * beside a root may be waiting on it) */
static int wait_once(double deadline, int tag)
{
    int mpi_errno = MPID_Progress_test(NULL);
    if (mpi_errno == MPI_SUCCESS && deadline && MPIDI_TCP_now() > deadline)
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_PORT, "**tcp_port_timeout",
                                         "**tcp_port_timeout %d", tag);
    return mpi_errno;
}

/* The proven connection to a link's peer, once there is one. */
static int link_conn(MPIDI_TCP_link_t * l, double deadline, MPIDI_TCP_conn_t ** c)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    for (;;) {
        MPIR_ERR_CHKANDJUMP1(l->err, mpi_errno, MPI_ERR_PORT, "**tcp_port_closed",
                             "**tcp_port_closed %d", (int) l->tag);
        MPIR_ERR_CHKANDJUMP1(l->withdrawn, mpi_errno, MPI_ERR_PORT, "**tcp_port_withdrawn",
                             "**tcp_port_withdrawn %d", (int) l->tag);
        if (g->dead_err[l->peer]) {
            mpi_errno = as_port_error(g->dead_err[l->peer], (int) l->tag);
            goto fn_fail;
        }
        mpi_errno = MPIDI_TCP_conn_get(l->peer, c);
        if (mpi_errno) {
            mpi_errno = as_port_error(mpi_errno, (int) l->tag);
            goto fn_fail;
        }
        if ((*c)->state == MPIDI_TCP_CONN_ESTABLISHED)
            break;
        mpi_errno = wait_once(deadline, (int) l->tag);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The blocking send between the roots of a connect (ch4's dynamic_send,
 * tcp_world.c): the connector's
 * CONNECT (its context id and upid) or the acceptor's REPLY (its context id),
 * once there is a proven connection to the other root. */
int MPIDI_TCP_dyn_send(int peer, int tag, const void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    double deadline = deadline_of(timeout);
    MPIDI_TCP_link_t *l = NULL;
    MPIDI_TCP_conn_t *c = NULL;
    int kind = MPIDI_TCP_DYN_CONNECT;

    MPIR_ERR_CHKANDJUMP1(peer < 0 || size < 0 || size > MPIDI_TCP_DYN_DATA_MAX, mpi_errno,
                         MPI_ERR_PORT, "**tcp_port_nolink", "**tcp_port_nolink %d", tag);
    l = link_find(peer, (uint32_t) tag, LINK_NAMED);
    if (l == NULL) {
        l = link_find(peer, (uint32_t) tag, LINK_OWED);
        kind = MPIDI_TCP_DYN_REPLY;
    }
    /* an acceptor answers only the process whose connect it took */
    MPIR_ERR_CHKANDJUMP1(l == NULL, mpi_errno, MPI_ERR_PORT, "**tcp_port_nolink",
                         "**tcp_port_nolink %d", tag);
    /* a port of this very process is known closed without asking (5.0 would
     * take the connector's own exchange for the acceptor's) */
    MPIR_ERR_CHKANDJUMP1(kind == MPIDI_TCP_DYN_CONNECT && peer == MPIDI_TCP_global.rank &&
                         !port_find((uint32_t) tag), mpi_errno, MPI_ERR_PORT,
                         "**tcp_port_refused", "**tcp_port_refused %d", tag);
    mpi_errno = link_conn(l, deadline, &c);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_TCP_dyn_msg_t m = {.tag = (uint32_t) tag, .kind = (uint8_t) kind,
        .len = (uint16_t) size
    };
    memcpy(m.data, buf, size);
    send_dmsg(c, &m, l->secret);
    if (kind == MPIDI_TCP_DYN_CONNECT)
        l->kind = LINK_DIALED;
    else
        link_free(l);
  fn_exit:
    return mpi_errno;
  fn_fail:
    if (l)
        link_free(l);
    if (peer >= 0)
        MPIDI_TCP_dyn_unplace(peer);
    goto fn_exit;
}

/* The blocking receive between the roots, by tag alone (ch4's
 * dynamic_recv): the acceptor's
 * oldest CONNECT on its port, or the connector's answer.  timeout 0: as long
 * as it takes (MPI_Comm_accept); a connector gives up when the process it
 * dialed fails or refuses. */
int MPIDI_TCP_dyn_recv(int tag, void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    double deadline = deadline_of(timeout);
    MPIDI_TCP_dmsg_t *d;
    MPIDI_TCP_link_t *dial;

    for (;;) {
        dial = link_find(-1, (uint32_t) tag, LINK_DIALED);
        if ((d = dmsg_take(-1, (uint32_t) tag,
                           dial ? ANSWERS : KIND(MPIDI_TCP_DYN_CONNECT))) != NULL)
            break;
        /* an accept on a port not open here: nothing could ever come */
        MPIR_ERR_CHKANDJUMP1(!dial && !port_find((uint32_t) tag), mpi_errno, MPI_ERR_PORT,
                             "**tcp_port_closed", "**tcp_port_closed %d", tag);
        if (dial && g->dead_err[dial->peer])
            mpi_errno = as_port_error(g->dead_err[dial->peer], tag);
        else
            mpi_errno = wait_once(deadline, tag);
        if (mpi_errno) {
            if (dial) {
                MPIDI_TCP_dyn_unplace(dial->peer);
                link_gone(dial);
            }
            goto fn_fail;
        }
    }
    if (d->kind == MPIDI_TCP_DYN_CONNECT) {
        MPIDI_TCP_port_t *p = port_find(d->tag);
        if (p)
            p->n_queued--;
        MPIR_ERR_CHKANDJUMP1(p == NULL, mpi_errno, MPI_ERR_PORT, "**tcp_port_closed",
                             "**tcp_port_closed %d", tag);
    } else {
        MPIDI_TCP_link_t *l = link_find(d->peer, d->tag, LINK_DIALED);
        if (l)
            link_free(l);
        if (d->kind == MPIDI_TCP_DYN_REFUSED)
            MPIDI_TCP_dyn_unplace(d->peer);
        MPIR_ERR_CHKANDJUMP1(d->kind == MPIDI_TCP_DYN_REFUSED, mpi_errno, MPI_ERR_PORT,
                             "**tcp_port_refused", "**tcp_port_refused %d", tag);
    }
    memset(buf, 0, size);
    memcpy(buf, d->data, MPL_MIN(d->len, size));
  fn_exit:
    MPL_free(d);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* 5.0's exchange between the roots of a connect after its CONNECT (ch4's
 * dynamic_sendrecv, tcp_world.c): send_size bytes in DATA pieces each way,
 * recv_size bytes received, as much as the other root sends. */
int MPIDI_TCP_dyn_sendrecv(int peer, int tag, const void *send_buf, int send_size,
                           void *recv_buf, int recv_size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    double deadline = deadline_of(timeout);
    MPIDI_TCP_conn_t *c = NULL;
    MPIDI_TCP_link_t *l = NULL;
    int got = 0;

    if (peer >= 0)
        l = roots_link(peer, (uint32_t) tag);
    MPIR_ERR_CHKANDJUMP1(l == NULL || send_size < 0 || recv_size < 0, mpi_errno, MPI_ERR_PORT,
                         "**tcp_port_nolink", "**tcp_port_nolink %d", tag);
    mpi_errno = link_conn(l, deadline, &c);
    MPIR_ERR_CHECK(mpi_errno);
    for (int off = 0; off < send_size; off += MPIDI_TCP_DYN_DATA_MAX) {
        MPIDI_TCP_dyn_msg_t m = {.tag = (uint32_t) tag, .kind = MPIDI_TCP_DYN_DATA,
            .len = (uint16_t) MPL_MIN(send_size - off, MPIDI_TCP_DYN_DATA_MAX)
        };
        memcpy(m.data, (const uint8_t *) send_buf + off, m.len);
        send_dmsg(c, &m, l->secret);
    }
    while (got < recv_size) {
        MPIDI_TCP_dmsg_t *d = dmsg_take(peer, (uint32_t) tag, KIND(MPIDI_TCP_DYN_DATA));
        if (d == NULL) {
            /* the only answer to a connect here: the port closed before its accept */
            MPIR_ERR_CHKANDJUMP1(l->answered, mpi_errno, MPI_ERR_PORT, "**tcp_port_refused",
                                 "**tcp_port_refused %d", tag);
            MPIR_ERR_CHKANDJUMP1(l->withdrawn, mpi_errno, MPI_ERR_PORT, "**tcp_port_withdrawn",
                                 "**tcp_port_withdrawn %d", tag);
            if (MPIDI_TCP_global.dead_err[peer])
                mpi_errno = as_port_error(MPIDI_TCP_global.dead_err[peer], tag);
            else
                mpi_errno = wait_once(deadline, tag);
            MPIR_ERR_CHECK(mpi_errno);
            continue;
        }
        int fits = d->len <= recv_size - got;
        if (fits)
            memcpy((uint8_t *) recv_buf + got, d->data, d->len);
        got += d->len;
        MPL_free(d);
        MPIR_ERR_CHKANDJUMP1(!fits, mpi_errno, MPI_ERR_PORT, "**tcp_port_size",
                             "**tcp_port_size %d", tag);
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* ch4 is done with the roots' link to peer on tag (5.0, through the
 * overlay): its connect or accept ended, well or (failed) not. */
void MPIDI_TCP_dyn_done(int peer, int tag, int failed)
{
    if (peer < 0)
        return;
    for (MPIDI_TCP_link_t * l = MPIDI_TCP_global.links; l;) {
        if (l->peer != peer || l->tag != (uint32_t) tag || l->kind == LINK_GONE) {
            l = l->next;
            continue;
        }
        if (failed)
            link_gone(l);
        else
            link_free(l);
        l = MPIDI_TCP_global.links;     /* either may have freed other links */
    }
}

void MPIDI_TCP_dyn_finalize(void)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    while (g->ports)
        MPIDI_TCP_port_close((int) g->ports->tag);
    while (g->links)
        link_free(g->links);
    while (g->dmsgs) {
        MPIDI_TCP_dmsg_t *d = g->dmsgs;
        g->dmsgs = d->next;
        MPL_free(d);
    }
    MPIDI_TCP_auth_wipe(g->dyn, (g->peer_cap - g->size) * sizeof(*g->dyn));
    MPL_free(g->dyn);
}
