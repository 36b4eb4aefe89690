/*
 * mpich-multichannel: what ch4:tcp checks in every active message before
 * MPIDIG's handler sees it, even from a rank that proved it belongs to the
 * job (a bug there must not become memory corruption here):
 *
 *   - the VCIs exist;
 *   - the handler is one MPIDIG sends between nodes: not shared memory's
 *     (MPIDI_IPC_ACK, CMA's split handler, any dynamically registered id),
 *     not another netmod's;
 *   - the MPIDIG header is exactly what the handler reads: its struct, plus
 *     an inline flattened datatype where the handler takes one; a payload
 *     only where the handler takes one, of the size the header announces;
 *   - the sender it names (the source rank of a send, the origin of an RMA
 *     operation) is the connection's peer, once the communicator or window
 *     exists here; an RMA operation for a window that does not is refused
 *     (MPIDIG would assert);
 *   - an eager payload is within the eager limit the peer announced;
 *   - a CTS, SSEND_ACK or rendezvous data names a request of ours that waits
 *     for exactly that from this peer (MPIDIG would dereference the pointer).
 *
 * A message that fails is a protocol error of that peer (tcp_rx.c).
 */
#include "mpidimpl.h"
#include "tcp_types.h"

enum { VAR_NONE, VAR_FLAT };    /* header grows by its flattened_sz */
/* PAY_FLAT: the payload is flattened_sz bytes; PAY_FIELD: as many as the
 * MPI_Aint at pay_off says; PAY_ANY: what local state expects (MPIDIG) */
enum { PAY_NONE, PAY_ANY, PAY_FLAT, PAY_FIELD };
enum { FROM_NONE, FROM_COMM, FROM_WIN, FROM_WIN_CNTRL };

typedef struct {
    uint16_t size;              /* the header struct; 0: not carried by ch4:tcp */
    uint8_t var, payload, from;
    uint8_t rank_off, id_off, flat_off;        /* flat_off 0: no flattened_sz field */
    uint8_t pay_off;
} rule_t;

#define RULE(type_, var_, pay_) \
    { sizeof(type_), var_, pay_, FROM_NONE, 0, 0, 0, 0 }
#define RULE_COMM(type_, pay_) \
    { sizeof(type_), VAR_NONE, pay_, FROM_COMM, offsetof(type_, src_rank), \
      offsetof(type_, context_id), 0, 0 }
#define RULE_WIN(type_, var_, pay_) \
    { sizeof(type_), var_, pay_, FROM_WIN, offsetof(type_, src_rank), offsetof(type_, win_id), \
      offsetof(type_, flattened_sz), 0 }
#define RULE_WIN_FIXED(type_, pay_) \
    { sizeof(type_), VAR_NONE, pay_, FROM_WIN, offsetof(type_, src_rank), offsetof(type_, win_id), \
      0, 0 }
#define RULE_CNTRL \
    { sizeof(MPIDIG_win_cntrl_msg_t), VAR_NONE, PAY_NONE, FROM_WIN_CNTRL, \
      offsetof(MPIDIG_win_cntrl_msg_t, origin_rank), offsetof(MPIDIG_win_cntrl_msg_t, win_id), \
      0, 0 }

static const rule_t rules[MPIDIG_HANDLER_STATIC_MAX] = {
    [MPIDIG_SEND] = RULE_COMM(MPIDIG_hdr_t, PAY_ANY),   /* payload: see verify_send */
    [MPIDIG_SEND_CTS] = RULE(MPIDIG_send_cts_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_SEND_DATA] = RULE(MPIDIG_send_data_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_SSEND_ACK] = RULE(MPIDIG_ssend_ack_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_PART_SEND_INIT] = RULE_COMM(MPIDIG_part_send_init_msg_t, PAY_NONE),
    [MPIDIG_PART_CTS] = RULE(MPIDIG_part_cts_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_PART_SEND_DATA] = RULE(MPIDIG_part_send_data_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_PUT_REQ] = { sizeof(MPIDIG_put_msg_t), VAR_FLAT, PAY_FIELD, FROM_WIN,
        offsetof(MPIDIG_put_msg_t, src_rank), offsetof(MPIDIG_put_msg_t, win_id),
        offsetof(MPIDIG_put_msg_t, flattened_sz), offsetof(MPIDIG_put_msg_t, origin_data_sz) },
    [MPIDIG_PUT_ACK] = RULE(MPIDIG_put_ack_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_PUT_DT_REQ] = RULE_WIN(MPIDIG_put_msg_t, VAR_NONE, PAY_FLAT),
    [MPIDIG_PUT_DAT_REQ] = RULE(MPIDIG_put_dat_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_PUT_DT_ACK] = RULE(MPIDIG_put_dt_ack_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_GET_REQ] = RULE_WIN(MPIDIG_get_msg_t, VAR_NONE, PAY_FLAT),
    [MPIDIG_GET_ACK] = { sizeof(MPIDIG_get_ack_msg_t), VAR_NONE, PAY_FIELD, FROM_NONE, 0, 0, 0,
        offsetof(MPIDIG_get_ack_msg_t, target_data_sz) },
    [MPIDIG_ACC_REQ] = RULE_WIN(MPIDIG_acc_req_msg_t, VAR_FLAT, PAY_ANY),
    [MPIDIG_ACC_ACK] = RULE(MPIDIG_acc_ack_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_ACC_DT_REQ] = RULE_WIN(MPIDIG_acc_req_msg_t, VAR_NONE, PAY_FLAT),
    [MPIDIG_ACC_DAT_REQ] = RULE(MPIDIG_acc_dat_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_ACC_DT_ACK] = RULE(MPIDIG_acc_dt_ack_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_GET_ACC_REQ] = RULE_WIN(MPIDIG_get_acc_req_msg_t, VAR_FLAT, PAY_ANY),
    [MPIDIG_GET_ACC_ACK] = RULE(MPIDIG_acc_ack_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_GET_ACC_DT_REQ] = RULE_WIN(MPIDIG_get_acc_req_msg_t, VAR_NONE, PAY_FLAT),
    [MPIDIG_GET_ACC_DAT_REQ] = RULE(MPIDIG_get_acc_dat_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_GET_ACC_DT_ACK] = RULE(MPIDIG_get_acc_dt_ack_msg_t, VAR_NONE, PAY_NONE),
    [MPIDIG_CSWAP_REQ] = RULE_WIN_FIXED(MPIDIG_cswap_req_msg_t, PAY_ANY),
    [MPIDIG_CSWAP_ACK] = RULE(MPIDIG_cswap_ack_msg_t, VAR_NONE, PAY_ANY),
    [MPIDIG_WIN_COMPLETE] = RULE_CNTRL,
    [MPIDIG_WIN_POST] = RULE_CNTRL,
    [MPIDIG_WIN_LOCK] = RULE_CNTRL,
    [MPIDIG_WIN_LOCK_ACK] = RULE_CNTRL,
    [MPIDIG_WIN_UNLOCK] = RULE_CNTRL,
    [MPIDIG_WIN_UNLOCK_ACK] = RULE_CNTRL,
    [MPIDIG_WIN_LOCKALL] = RULE_CNTRL,
    [MPIDIG_WIN_LOCKALL_ACK] = RULE_CNTRL,
    [MPIDIG_WIN_UNLOCKALL] = RULE_CNTRL,       /* answered by WIN_UNLOCK_ACK */
    [MPIDIG_COMM_ABORT] = RULE(int, VAR_NONE, PAY_NONE),
};

static int rd_int(const void *hdr, size_t off)
{
    int v;
    memcpy(&v, (const char *) hdr + off, sizeof(v));
    return v;
}

/* rank, in comm, is the process peer */
static int is_peer(MPIR_Comm * comm, int rank, int peer)
{
    return rank >= 0 && rank < comm->remote_size && MPIDI_TCP_RANK_TO_PEER(comm, rank) == peer;
}

static const char *verify_sender(const rule_t * r, const void *am_hdr, int peer)
{
    int rank = rd_int(am_hdr, r->rank_off);

    if (r->from == FROM_COMM) {
        MMC_context_id_t ctx;
        memcpy(&ctx, (const char *) am_hdr + r->id_off, sizeof(ctx));
        void *comm = MPIDI_TCP_comm_lookup(ctx & ~MPIR_CONTEXT_SUFFIX_MASK);
        /* a communicator not created here yet: MPIDIG keeps the message by context id */
        if (comm != MPIDIU_MAP_NOT_FOUND && !is_peer(comm, rank, peer))
            return "the source rank is not the sending rank";
        return NULL;
    }
    uint64_t win_id;
    memcpy(&win_id, (const char *) am_hdr + r->id_off, sizeof(win_id));
    MPIR_Win *win = MPIDIU_map_lookup(MPIDI_global.win_map, win_id);
    if (win == MPIDIU_MAP_NOT_FOUND)
        return "an RMA message for a window that does not exist";
    if (!is_peer(win->comm_ptr, rank, peer))
        return "the origin rank is not the sending rank";
    return NULL;
}

/* A send: eager (the payload, within the peer's announced eager limit) or a
 * rendezvous request (no payload). */
static const char *verify_send(const MPIDIG_hdr_t * hdr, const MPIDI_TCP_hdr_t * h, int peer)
{
    /* SYNC and RTS only: rendezvous ids and headers other than 0 are shared memory's */
    if (hdr->rndv_hdr_sz != 0 || (hdr->flags & ~(MPIDIG_AM_SEND_FLAGS_SYNC |
                                                 MPIDIG_AM_SEND_FLAGS_RTS)))
        return "a shared-memory rendezvous header";
    if (hdr->flags & MPIDIG_AM_SEND_FLAGS_RTS)
        return h->payload_sz == 0 && hdr->data_sz >= 0 ? NULL : "a rendezvous request with data";
    if (h->payload_sz != (uint64_t) hdr->data_sz)
        return "an eager payload of another size than its header announces";
    if (h->payload_sz > MPIDI_TCP_global.cards[peer].eager_max)
        return "an eager payload above the sender's eager limit";
    return NULL;
}

const char *MPIDI_TCP_verify_am(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h,
                                const void *am_hdr)
{
    int peer = c->peer;
    MPIDI_TCP_conn_t *owner = MPIDI_TCP_global.vc[peer];        /* holds our awaits */
    const rule_t *r;
    size_t want;

    if (h->src_vci >= MMC_N_TOTAL_VCIS || h->dst_vci >= MMC_N_TOTAL_VCIS)
        return "a VCI this build does not have";
    if (h->handler_id >= MPIDIG_HANDLER_STATIC_MAX || rules[h->handler_id].size == 0 ||
        MPIDIG_global.target_msg_cbs[h->handler_id] == NULL)
        return "a handler ch4:tcp does not carry";
    r = &rules[h->handler_id];
    if (h->am_hdr_sz < r->size)
        return "a header shorter than its handler reads";
    want = r->size;
    int flat = r->flat_off ? rd_int(am_hdr, r->flat_off) : 0;
    if (flat < 0)
        return "a negative datatype size";
    if (r->var == VAR_FLAT)
        want += (size_t) flat;
    if (h->am_hdr_sz != want)
        return "a header of another size than its handler reads";
    MPI_Aint announced = 0;
    if (r->payload == PAY_FIELD)
        memcpy(&announced, (const char *) am_hdr + r->pay_off, sizeof(announced));
    if ((r->payload == PAY_NONE && h->payload_sz != 0) ||
        (r->payload == PAY_FLAT && h->payload_sz != (uint64_t) flat) ||
        (r->payload == PAY_FIELD && (announced < 0 || h->payload_sz != (uint64_t) announced)))
        return "a payload of another size than its handler reads";
    if (r->from != FROM_NONE) {
        const char *bad = verify_sender(r, am_hdr, peer);
        if (bad)
            return bad;
    }
    switch (h->handler_id) {
        case MPIDIG_SEND:
            return verify_send(am_hdr, h, peer);
        case MPIDIG_SEND_CTS:
            return owner && MPIDI_TCP_await_take(owner, ((const MPIDIG_send_cts_msg_t *)
                                                         am_hdr)->sreq_ptr, MPIDIG_SEND_CTS) ?
                NULL : "a CTS for no rendezvous send to it";
        case MPIDIG_SSEND_ACK:
            return owner && MPIDI_TCP_await_take(owner, ((const MPIDIG_ssend_ack_msg_t *)
                                                         am_hdr)->sreq_ptr, MPIDIG_SSEND_ACK) ?
                NULL : "an SSEND_ACK for no synchronous send to it";
        case MPIDIG_SEND_DATA:
            return owner && MPIDI_TCP_await_take(owner, ((const MPIDIG_send_data_msg_t *)
                                                         am_hdr)->rreq_ptr, MPIDIG_SEND_DATA) ?
                NULL : "rendezvous data for no receive that asked it";
        default:
            return NULL;
    }
}
