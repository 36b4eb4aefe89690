/*
 * mpich-multichannel: ch4:tcp receiving (the protocol layer).
 *
 * A connection's receive state survives between calls: a header, an MPIDIG
 * header or a payload may arrive in any number of pieces.
 *
 * Headers and small messages are assembled in the read-ahead buffer and
 * handed to MPIDIG with a pointer.  For a larger payload MPIDIG's handler is
 * called with MPIDIG_AM_ATTR__IS_ASYNC and returns the request; the payload
 * is then read straight into it: a contiguous buffer (or an iovec MPIDIG
 * prepared) with readv, clipped to the message; a noncontiguous datatype
 * through the datatype engine, one read-ahead buffer at a time.
 *
 * Every header is validated (tcp_proto.h) and its opcode checked against the
 * connection's state before the handler table is indexed.  What a failed
 * connection leaves (awaited replies, a half-read payload, receives posted
 * for a dead peer) fails here too, told by the connection layer
 * (MPIDI_TCP_global.ops).
 */
#include "mpidimpl.h"
#include "tcp_types.h"
#include "mmc_carry.h"

#include <arpa/inet.h>

/* the state a connection must be in to receive each opcode (a verdict that
 * does not answer the hello sent is the handshake's to refuse) */
static const MPIDI_TCP_conn_state_t op_state[MPIDI_TCP_OP_MAX] = {
    [MPIDI_TCP_OP_CHALLENGE] = MPIDI_TCP_CONN_AWAIT_CHALLENGE,
    [MPIDI_TCP_OP_HELLO] = MPIDI_TCP_CONN_UNPROVEN,
    [MPIDI_TCP_OP_PORT_HELLO] = MPIDI_TCP_CONN_UNPROVEN,
    [MPIDI_TCP_OP_DYN_HELLO] = MPIDI_TCP_CONN_UNPROVEN,
    [MPIDI_TCP_OP_HELLO_ACK] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_HELLO_NAK] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_HELLO_DEAD] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_PORT_ACK] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_PORT_NAK] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_DYN_ACK] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_DYN_NAK] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_DYN_DEAD] = MPIDI_TCP_CONN_HELLO_SENT,
    [MPIDI_TCP_OP_DYN_MSG] = MPIDI_TCP_CONN_ESTABLISHED,
    [MPIDI_TCP_OP_AM] = MPIDI_TCP_CONN_ESTABLISHED,
    [MPIDI_TCP_OP_CLOSE] = MPIDI_TCP_CONN_ESTABLISHED,
};

/* A stream that breaks the protocol.  A stranger is refused; at a rank's
 * address, something that is not that rank fails it; a rank of this job that
 * sent a malformed message is failed with an error naming it, which only the
 * requests depending on it see.  Always MPI_SUCCESS: nothing here is an error
 * of the MPI call that happens to drive progress. */
int MPIDI_TCP_protocol_error(MPIDI_TCP_conn_t * c, const char *why)
{
    char name[96];
    int peer = c->peer, err;

    if (peer < 0) {
        MPIDI_TCP_refused(&c->remote, why);
        MPIDI_TCP_conn_free(c);
        return MPI_SUCCESS;
    }
    MPIDI_TCP_peer_str(peer, name, sizeof(name));
    if (c->state == MPIDI_TCP_CONN_ESTABLISHED)
        err = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                   MPIX_ERR_PROC_FAILED, "**tcp_badhdr", "**tcp_badhdr %s %s",
                                   name, why);
    else
        err = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                   MPIX_ERR_PROC_FAILED, "**tcp_auth", "**tcp_auth %s %s",
                                   name, why);
    MPIDI_TCP_conn_fail(c, err);
    return MPI_SUCCESS;
}

/* A piece of the payload of a noncontiguous receive.  MPICH's datatype
 * engine unpacks whole basic elements only, and a read ends anywhere: the
 * bytes of an element split by it wait at the front of rbuf, where the next
 * read appends the rest (MPIDIG_recv_copy_seg took a split element for a
 * datatype mismatch: an MPI_C_DOUBLE_COMPLEX into a strided layout failed).
 * More left over than any element has, or anything at the message's end, is
 * a real mismatch (MMC_carry_fits, the rule of MPIDIG's receive in pieces).
 * c->rx_left already counts the piece as read. */
static void unpack_piece(MPIDI_TCP_conn_t * c, MPIR_Request * rreq, uint8_t * data, size_t n)
{
    MPIDIG_rreq_async_t *p = &MPIDIG_REQUEST(rreq, req->recv_async);
    MPI_Aint done = 0;

    MMC_TYPEREP_UNPACK(data, (MPI_Aint) n, MPIDIG_REQUEST(rreq, buffer),
                       MPIDIG_REQUEST(rreq, count), MPIDIG_REQUEST(rreq, datatype), p->offset,
                       &done);
    p->offset += done;
    p->in_data_sz -= done;
    c->rx_carry = n - (size_t) done;
    if (!MMC_carry_fits((intptr_t) c->rx_carry, c->rx_left == 0)) {
        /* what is left of the message is read and dropped */
        rreq->status.MPI_ERROR = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                      __func__, __LINE__, MPI_ERR_TYPE,
                                                      "**dtypemismatch", 0);
        c->rx_carry = 0;
    } else if (c->rx_carry) {
        memmove(c->rbuf, data + done, c->rx_carry);
    } else if (c->rx_left == 0) {
        MPIR_STATUS_SET_COUNT(rreq->status, p->offset);
    }
}

static void consume_payload(MPIDI_TCP_conn_t * c, void *data, size_t n)
{
    MPIR_Request *rreq = c->rx_req;
    c->rx_left -= n;
    if (c->rx_held) {
        memcpy(c->rx_held, data, n);
        c->rx_held += n;
    } else if (rreq && rreq->status.MPI_ERROR == MPI_SUCCESS &&
               MPIDIG_REQUEST(rreq, req->recv_async.recv_type) == MPIDIG_RECV_DATATYPE) {
        unpack_piece(c, rreq, data, n);
    } else if (rreq && n) {
        MPIDIG_recv_copy_seg(data, n, rreq);
    }
}

/* MPIDIG describes a receive buffer by its datatype; a contiguous one becomes
 * a plain (pointer, length) so the payload is read straight into it.  A
 * noncontiguous one stays a datatype, unpacked one read at a time. */
static void recv_setup(MPIR_Request * rreq)
{
    MPIDIG_rreq_async_t *p = &MPIDIG_REQUEST(rreq, req->recv_async);
    if (p->recv_type == MPIDIG_RECV_DATATYPE) {
        int contig, is_gpu;
        MPI_Aint sz;
        void *data;
        MPIDI_Datatype_check_contig(MPIDIG_REQUEST(rreq, datatype), contig);
        if (contig)
            MPIDIG_get_recv_data(&contig, &is_gpu, &data, &sz, rreq);
    }
    MPIDIG_recv_setup(rreq);
}

#define HELD(rreq) (&MPIDIG_REQUEST(rreq, netmod_am.tcp))

/* MPI_Comm_free receives what is left unmatched into 0 of MPI_DATATYPE_NULL
 * (MPIR_Comm_delete_internal), which MPICH's unpack cannot take: 0 MPI_BYTEs
 * are the same receive (its truncation error is set when it matches). */
static void null_type_as_bytes(MPIR_Request * rreq)
{
    if (MPIDIG_REQUEST(rreq, datatype) == MPI_DATATYPE_NULL)
        MPIDIG_REQUEST(rreq, datatype) = MPI_BYTE;
}

/* A held unexpected message that has both arrived and been matched. */
static int deliver_held(MPIR_Request * rreq)
{
    MPIDI_TCP_am_request_t *t = HELD(rreq);
    null_type_as_bytes(rreq);
    if (t->err)
        rreq->status.MPI_ERROR = t->err;
    else
        MPIDIG_recv_copy(t->buf, rreq);
    MPL_free(t->buf);
    t->buf = NULL;
    return MPIDIG_REQUEST(rreq, req->target_cmpl_cb) (rreq);
}

int MPIDI_TCP_unexp_matched(MPIR_Request * rreq)
{
    if (!HELD(rreq)->done) {
        HELD(rreq)->matched = 1;        /* delivered when the last byte arrives */
        return MPI_SUCCESS;
    }
    return deliver_held(rreq);
}

/* An eager message whose payload is still on its way, sent without RTS:
 * offered to MPIDIG as transport rendezvous, so that an unexpected one is
 * held by us (exact size) and only a matched one gets MPIDIG's receive
 * buffer.  Larger than MPICH's pack buffers, MPIDIG could not hold it; at
 * any size, MPIDIG would keep it "busy" until its last byte, and a receive
 * posted meanwhile is lost on 4.2.1 (handle_unexp_cmpl dereferences the
 * NULL match of a non-enqueued receive: MPICH's many_isend crashed). */
static int held_candidate(const MPIDI_TCP_hdr_t * h, const void *am_hdr)
{
    return h->handler_id == MPIDIG_SEND &&
        !(((const MPIDIG_hdr_t *) am_hdr)->flags & MPIDIG_AM_SEND_FLAGS_RTS);
}

/* am_hdr: the MPIDIG header, aligned (it holds pointers) and verified */
static int rx_am(MPIDI_TCP_conn_t * c, const MPIDI_TCP_hdr_t * h, void *am_hdr,
                 uint8_t * payload, size_t buffered, MPIDI_TCP_rx_mode_t mode)
{
    int mpi_errno = MPI_SUCCESS;
    size_t hdr_total = MPIDI_TCP_HDR_SIZE + h->am_hdr_sz;
    uint32_t attr = 0;

    MPIDIG_AM_ATTR_SET_VCIS(attr, h->src_vci, h->dst_vci);
    MPIDI_TCP_global.n_arrived++;
    if (h->handler_id == MPIDIG_SEND_DATA)      /* its request was verified as ours */
        null_type_as_bytes(((MPIDIG_send_data_msg_t *) am_hdr)->rreq_ptr);

    if (mode == MPIDI_TCP_RX_SYNC) {
        c->r_head += hdr_total + h->payload_sz;
        mpi_errno = MPIDIG_global.target_msg_cbs[h->handler_id] (am_hdr, payload, h->payload_sz,
                                                                 attr, NULL);
        return mpi_errno;
    }

    MPIR_Request *rreq = NULL;
    int held = held_candidate(h, am_hdr);
    if (held)
        attr |= MPIDIG_AM_ATTR__IS_RNDV;
    mpi_errno = MPIDIG_global.target_msg_cbs[h->handler_id] (am_hdr, NULL, h->payload_sz,
                                                             attr | MPIDIG_AM_ATTR__IS_ASYNC,
                                                             &rreq);
    c->rx_held = NULL;
    if (rreq && held && !MPIDIG_recv_initialized(rreq)) {
        /* at most the sender's announced eager limit (MPIDI_TCP_verify_am) */
        MPIDI_TCP_am_request_t *t = HELD(rreq);
        memset(t, 0, sizeof(*t));
        t->buf = MPL_malloc(h->payload_sz, MPL_MEM_BUFFER);
        if (t->buf == NULL) {
            /* its payload is read and dropped; the receive that matches it fails */
            t->err = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
                                          __LINE__, MPI_ERR_OTHER, "**nomem", 0);
            t->done = 1;
            rreq = NULL;
        }
        c->rx_held = t->buf;
    } else if (rreq) {
        recv_setup(rreq);
    }
    c->rx_req = rreq;
    c->rx_left = h->payload_sz;
    c->rx_carry = 0;
    c->rx_active = 1;
    MPIDI_TCP_global.n_rx_active++;
    /* everything buffered after the headers belongs to this payload */
    consume_payload(c, payload, buffered);
    c->r_head = c->r_tail = 0;
    return mpi_errno;
}

static int rx_close(MPIDI_TCP_conn_t * c)
{
    c->r_head += MPIDI_TCP_HDR_SIZE;
    c->got_close = 1;
    if (!MPIDI_TCP_global.finalizing && !c->self_rx && !MPIDI_TCP_global.dead_err[c->peer]) {
        /* it will never send again: receives still posted for it can never match */
        MPIDI_TCP_global.dead_err[c->peer] =
            MPIDI_TCP_peer_error(c->peer, "the peer has called MPI_Finalize", 0);
        MPIDI_TCP_global.n_dead++;
        MPIDI_TCP_sweep_posted(0);
    }
    return MPI_SUCCESS;
}

/* Reads the payload of an async message.  Returns 1 when it is complete, 0
 * when the socket has no more for now or the budget is spent, -1 when the
 * connection failed. */
static int read_payload(MPIDI_TCP_conn_t * c, size_t * budget)
{
    while (c->rx_left > 0) {
        MPIR_Request *rreq = c->rx_req;
        MPIDIG_rreq_async_t *p = rreq ? &MPIDIG_REQUEST(rreq, req->recv_async) : NULL;
        int ok = rreq && rreq->status.MPI_ERROR == MPI_SUCCESS;
        size_t want = (size_t) MPL_MIN(c->rx_left, (uint64_t) MPIDI_TCP_RBUF_SIZE);
        ssize_t n;
        size_t asked;

        if (*budget == 0)
            return 0;
        if (c->rx_held) {
            asked = (size_t) MPL_MIN(c->rx_left, (uint64_t) MPIDI_TCP_READ_BUDGET);
            n = read(c->fd, c->rx_held, asked);
            if (n > 0) {
                c->rx_held += n;
                c->rx_left -= n;
            }
        } else if (ok && p->recv_type != MPIDIG_RECV_DATATYPE && p->iov_num > 0) {
            /* straight into the receive buffer, never past this message */
            struct iovec v[64];
            int k = 0;
            uint64_t room = c->rx_left;
            for (int i = 0; i < p->iov_num && k < 64 && room > 0; i++, k++) {
                v[k] = p->iov_ptr[i];
                if (v[k].iov_len > room)
                    v[k].iov_len = room;
                room -= v[k].iov_len;
            }
            asked = c->rx_left - room;
            n = readv(c->fd, v, k);
            if (n > 0) {
                p->iov_num = MPIDI_TCP_iov_advance(&p->iov_ptr, p->iov_num, (size_t) n);
                p->in_data_sz -= n;
                p->offset += n;
                c->rx_left -= n;
            }
        } else if (ok && p->recv_type == MPIDIG_RECV_DATATYPE) {
            /* through the datatype engine, after a split element's first bytes */
            size_t carry = c->rx_carry;
            asked = (size_t) MPL_MIN(c->rx_left, (uint64_t) (MPIDI_TCP_RBUF_SIZE - carry));
            n = read(c->fd, c->rbuf + carry, asked);
            if (n > 0) {
                c->rx_left -= n;
                unpack_piece(c, rreq, c->rbuf, carry + (size_t) n);
            }
        } else {
            /* discarded (truncation, an error, no request) */
            asked = want;
            n = read(c->fd, c->rbuf, want);
            if (n > 0)
                c->rx_left -= n;
        }
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
            MPIDI_TCP_conn_lost(c, "receive", n == 0 ? 0 : errno);
            return -1;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return 0;
        }
        *budget -= MPL_MIN((size_t) n, *budget);
        MPIDI_TCP_global.n_read++;
        /* a short read drained the socket: epoll says when more arrives,
         * sparing a read that would only return EAGAIN */
        if ((size_t) n < asked && c->rx_left > 0)
            return 0;
    }
    return 1;
}

static int finish_payload(MPIDI_TCP_conn_t * c)
{
    MPIR_Request *rreq = c->rx_req;
    c->rx_active = 0;
    MPIDI_TCP_global.n_rx_active--;
    c->rx_req = NULL;
    if (c->rx_held) {
        c->rx_held = NULL;
        HELD(rreq)->done = 1;
        return HELD(rreq)->matched ? deliver_held(rreq) : MPI_SUCCESS;
    }
    return rreq ? MPIDIG_REQUEST(rreq, req->target_cmpl_cb) (rreq) : MPI_SUCCESS;
}

/* The connection failed while a payload was arriving: its receive completes
 * with err (a held unexpected message, when a receive matches it). */
void MPIDI_TCP_rx_abort(MPIDI_TCP_conn_t * c, int err)
{
    MPIR_Request *rreq = c->rx_req;
    if (!c->rx_active)
        return;
    if (c->rx_held)
        HELD(rreq)->err = err;
    else if (rreq)
        rreq->status.MPI_ERROR = err;
    finish_payload(c);
}

/* The connection layer is about to free a failed connection: what awaits
 * its peer and the payload it was reading complete with err. */
void MPIDI_TCP_conn_failing(MPIDI_TCP_conn_t * c, int err)
{
    MPIDI_TCP_awaits_fail(c, err);
    MPIDI_TCP_rx_abort(c, err);
}

/* Receives posted for a dead peer complete with its error; called on each
 * failure and periodically, for receives posted later.  A receive from a
 * peer we have no connection to starts one (probe_unconnected): a peer that
 * died refuses it, an unreachable one times out, so the receive fails too. */
void MPIDI_TCP_sweep_posted(int probe_unconnected)
{
    for (int vci = 0; vci < MMC_N_TOTAL_VCIS; vci++) {
        MPIR_Request *r, *tmp;
        DL_FOREACH_SAFE(MPIDI_global.per_vci[vci].posted_list, r, tmp) {
            int src = MMC_RECV_SOURCE(r);
            if (src == MPI_ANY_SOURCE || r->comm == NULL)
                continue;
#ifndef MPIDI_CH4_DIRECT_NETMOD
            if (MPIDI_REQUEST(r, is_local))
                continue;
#endif
            int peer = MPIDI_TCP_RANK_TO_PEER(r->comm, src);
            if (peer < 0 || peer >= MPIDI_TCP_global.n_peers)
                continue;
            if (probe_unconnected && !MPIDI_TCP_global.vc[peer] &&
                !MPIDI_TCP_global.dead_err[peer]) {
                MPIDI_TCP_conn_t *c;
                MPIDI_TCP_conn_get(peer, &c);
            }
            if (!MPIDI_TCP_global.dead_err[peer])
                continue;
            MPIDIG_delete_posted(r, &MPIDI_global.per_vci[vci].posted_list);
            MPIR_Datatype_release_if_not_builtin(MPIDIG_REQUEST(r, datatype));
            r->status.MPI_ERROR = MPIDI_TCP_global.dead_err[peer];
            MPIR_STATUS_SET_COUNT(r->status, 0);
            MPID_Request_complete(r);
        }
    }
}

/* A peer was found dead: receives posted for it can never match. */
void MPIDI_TCP_peer_died(void)
{
    MPIDI_TCP_sweep_posted(0);
}

/* Parses and dispatches the next message in the read-ahead buffer.
 * Returns 1 when one was dispatched, 0 when more bytes are needed. */
static int parse_one(MPIDI_TCP_conn_t * c, int *mpi_errno)
{
    size_t avail = c->r_tail - c->r_head;
    MPIDI_TCP_hdr_t h;
    /* MPIDIG headers hold pointers: hand them over aligned */
    uint64_t am_hdr[MPIDI_TCP_AM_HDR_MAX / sizeof(uint64_t)];

    if (avail < MPIDI_TCP_HDR_SIZE) {
        c->need = MPIDI_TCP_HDR_SIZE - avail;
        return 0;
    }
    MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_hdr_decode(c->rbuf + c->r_head, MPIDI_AM_HANDLERS_MAX,
                                                    &h);
    if (herr != MPIDI_TCP_HDR_OK) {
        *mpi_errno = MPIDI_TCP_protocol_error(c, MPIDI_TCP_hdr_strerror(herr));
        return 1;
    }
    if (op_state[h.opcode] != c->state) {
        *mpi_errno = MPIDI_TCP_protocol_error(c, "message not valid in this connection state");
        return 1;
    }
    if (h.opcode == MPIDI_TCP_OP_CLOSE) {
        *mpi_errno = rx_close(c);
        return 1;
    }
    if (h.opcode == MPIDI_TCP_OP_DYN_MSG) {
        /* small (hdr_decode bounds it): handled once it is all here */
        size_t total = MPIDI_TCP_HDR_SIZE + h.payload_sz;
        if (avail < total) {
            c->need = total - avail;
            return 0;
        }
        const uint8_t *body = c->rbuf + c->r_head + MPIDI_TCP_HDR_SIZE;
        c->need = 0;
        c->r_head += total;
        *mpi_errno = MPIDI_TCP_dyn_rx(c, body, h.payload_sz);
        return 1;
    }
    size_t hdr_total = MPIDI_TCP_HDR_SIZE + h.am_hdr_sz;
    if (avail < hdr_total) {
        c->need = hdr_total - avail;
        return 0;
    }
    size_t buffered = avail - hdr_total;
    MPIDI_TCP_rx_mode_t mode = MPIDI_TCP_rx_mode(hdr_total, h.payload_sz, buffered);
    if (mode == MPIDI_TCP_RX_MORE) {
        /* small (within the read-ahead buffer): checked once it is all here */
        c->need = hdr_total + h.payload_sz - avail;
        return 0;
    }
    /* checked once, just before dispatch (it takes what the message answers) */
    memcpy(am_hdr, c->rbuf + c->r_head + MPIDI_TCP_HDR_SIZE, h.am_hdr_sz);
    const char *bad = MPIDI_TCP_verify_am(c, &h, am_hdr);
    if (bad) {
        *mpi_errno = MPIDI_TCP_protocol_error(c, bad);
        return 1;
    }
    c->need = 0;
    c->readahead = mode == MPIDI_TCP_RX_ASYNC ? MPIDI_TCP_READAHEAD_AFTER_LARGE :
        MPIDI_TCP_READAHEAD;
    *mpi_errno = rx_am(c, &h, am_hdr, c->rbuf + c->r_head + hdr_total, buffered, mode);
    return 1;
}

/* A handshake message, read exactly (nothing past it leaves the socket) into
 * the connection's small buffer: no read-ahead buffer before the proof. */
static int hs_read(MPIDI_TCP_conn_t * c)
{
    MPIDI_TCP_hdr_t h;

    for (;;) {
        /* the header, then the body its (validated) opcode fixes: never empty */
        size_t total = MPIDI_TCP_HDR_SIZE +
            (c->hs_len < MPIDI_TCP_HDR_SIZE ? 0 : MPIDI_TCP_body_size(c->hs[1]));
        ssize_t n = read(c->fd, c->hs + c->hs_len, total - c->hs_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return MPI_SUCCESS;
        if (n <= 0) {
            MPIDI_TCP_conn_lost(c, "receive", n == 0 ? 0 : errno);
            return MPI_SUCCESS;
        }
        c->hs_len += n;
        if (c->hs_len < total)
            continue;
        MPIDI_TCP_hdr_err_t herr = MPIDI_TCP_hdr_decode(c->hs, MPIDI_AM_HANDLERS_MAX, &h);
        if (c->hs_len == MPIDI_TCP_HDR_SIZE) {
            if (herr != MPIDI_TCP_HDR_OK)
                return MPIDI_TCP_protocol_error(c, MPIDI_TCP_hdr_strerror(herr));
            if (op_state[h.opcode] != c->state)
                return MPIDI_TCP_protocol_error(c, "message not valid in this connection state");
            continue;
        }
        c->hs_len = 0;
        return MPIDI_TCP_handshake(c, &h, c->hs + MPIDI_TCP_HDR_SIZE);
    }
}

/* Reads what the connection has, within MPIDI_TCP_READ_BUDGET bytes, and
 * dispatches every whole message (MPIDI_TCP_global.n_arrived counts them). */
int MPIDI_TCP_conn_read(MPIDI_TCP_conn_t * c)
{
    int mpi_errno = MPI_SUCCESS, drained = 0;
    size_t budget = MPIDI_TCP_READ_BUDGET;

    if (c->fd < 0)
        return MPI_SUCCESS;
    if (c->state != MPIDI_TCP_CONN_ESTABLISHED)
        return hs_read(c);
    if (c->rbuf == NULL) {
        c->rbuf = MPL_malloc(MPIDI_TCP_RBUF_SIZE, MPL_MEM_BUFFER);
        if (c->rbuf == NULL) {
            MPIDI_TCP_conn_fail(c, MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
                                                        __func__, __LINE__, MPI_ERR_OTHER,
                                                        "**nomem", 0));
            return MPI_SUCCESS;
        }
    }

    while (!c->zombie && c->fd >= 0 && mpi_errno == MPI_SUCCESS) {
        if (c->rx_active) {
            int rc = read_payload(c, &budget);
            if (rc <= 0)
                break;
            mpi_errno = finish_payload(c);
            /* the socket rarely holds more right behind a large message; the
             * (level-triggered) epoll set says so, and the request just
             * completed is not delayed by a read that finds nothing */
            break;
        }
        if (parse_one(c, &mpi_errno))
            continue;
        /* a short read drained the socket: epoll says when more arrives */
        if (budget == 0 || drained)
            break;
        if (c->r_head == c->r_tail) {
            c->r_head = c->r_tail = 0;
        }
        size_t want = MPL_MAX(c->readahead, c->need);
        if (c->r_head && MPIDI_TCP_RBUF_SIZE - c->r_tail < want) {
            memmove(c->rbuf, c->rbuf + c->r_head, c->r_tail - c->r_head);
            c->r_tail -= c->r_head;
            c->r_head = 0;
        }
        want = MPL_MIN(want, MPIDI_TCP_RBUF_SIZE - c->r_tail);
        ssize_t n = read(c->fd, c->rbuf + c->r_tail, want);
        if (n > 0) {
            c->r_tail += n;
            budget -= MPL_MIN((size_t) n, budget);
            MPIDI_TCP_global.n_read++;
            drained = (size_t) n < want;
        } else if (n == 0) {
            MPIDI_TCP_conn_lost(c, "receive", 0);
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else if (errno != EINTR) {
            MPIDI_TCP_conn_lost(c, "receive", errno);
        }
    }
    return mpi_errno;
}
