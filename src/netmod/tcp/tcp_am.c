/*
 * mpich-multichannel: ch4:tcp sending.
 *
 * An active message is the wire header, the MPIDIG header and the payload,
 * written with one writev.  A contiguous payload is written from the user's
 * buffer; a noncontiguous one is packed MPIDI_TCP_PACK_SEG bytes at a time.
 * When the socket takes everything at once nothing is allocated; otherwise
 * the rest waits in the connection's queue, in order, until epoll says the
 * socket is writable (the connection layer's byte queue, tcp_sendq.c, which
 * hands each entry back to MPIDI_TCP_am_sendq_refill and _done).  The send
 * request completes (MPIDIG's origin callback) when its last byte is in the
 * socket.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <sys/socket.h>

const MPI_Aint MPIDI_TCP_am_hdr_max = MPIDI_TCP_AM_HDR_MAX;

/* The connection layer wrote a queued send whole, or gave up on it (err):
 * the send completes (MPIDIG's origin callback) and its entry is freed. */
void MPIDI_TCP_am_sendq_done(MPIDI_TCP_sendq_t * e, int err)
{
    MPIR_Request *sreq = e->sreq;
    int handler_id = e->handler_id;

    if (err != MPI_SUCCESS && sreq)
        sreq->status.MPI_ERROR = err;
    if (e->pack_buf) {
        MPL_free(e->pack_buf);
        MPIR_Datatype_release_if_not_builtin(e->datatype);
    }
    MPL_free(e);
    if (sreq)
        MPIDIG_global.origin_cbs[handler_id] (sreq);
}

/* The connection layer wrote all of an entry's bytes: 1 when a packed
 * payload has another segment, now in e->iov; -1 when the datatype engine
 * gave none (the frame's announced length cannot be kept). */
int MPIDI_TCP_am_sendq_refill(MPIDI_TCP_sendq_t * e)
{
    if (!e->pack_buf || e->packed == e->data_sz)
        return 0;
    MPI_Aint n = MPL_MIN(e->data_sz - e->packed, MPIDI_TCP_PACK_SEG), actual = 0;
    int err = MMC_TYPEREP_PACK(e->buf, e->count, e->datatype, e->packed, e->pack_buf, n,
                               &actual);
    if (err != MPI_SUCCESS || actual <= 0)
        return -1;
    e->packed += actual;
    e->iov[1].iov_base = e->pack_buf;
    e->iov[1].iov_len = actual;
    e->iov_cur = &e->iov[1];
    e->iov_cnt = 1;
    return 1;
}

static int await_add(MPIDI_TCP_conn_t * c, MPIR_Request * req, int handler_id)
{
    MPIDI_TCP_await_t *a = MPL_malloc(sizeof(*a), MPL_MEM_BUFFER);
    if (a == NULL)
        return 0;
    a->req = req;
    a->handler_id = handler_id;
    a->next = c->awaits;
    c->awaits = a;
    MPIDI_TCP_global.n_awaits++;
    return 1;
}

/* The peer sent a reply naming req: 1 when we were waiting for it from this
 * peer (the entry is removed), 0 when it names nothing of ours. */
int MPIDI_TCP_await_take(MPIDI_TCP_conn_t * c, MPIR_Request * req, int handler_id)
{
    for (MPIDI_TCP_await_t ** p = &c->awaits; *p; p = &(*p)->next) {
        if ((*p)->req == req && (*p)->handler_id == handler_id) {
            MPIDI_TCP_await_t *a = *p;
            *p = a->next;
            MPL_free(a);
            MPIDI_TCP_global.n_awaits--;
            return 1;
        }
    }
    return 0;
}

/* The peer failed: sends waiting for its CTS or SSEND_ACK and receives
 * waiting for its data complete with err. */
void MPIDI_TCP_awaits_fail(MPIDI_TCP_conn_t * c, int err)
{
    while (c->awaits) {
        MPIDI_TCP_await_t *a = c->awaits;
        MPIR_Request *req = a->req;
        c->awaits = a->next;
        MPIDI_TCP_global.n_awaits--;
        req->status.MPI_ERROR = err;
        if (a->handler_id == MPIDIG_SEND_CTS) {
            MPIDIG_global.origin_cbs[MPIDIG_SEND_DATA] (req);
        } else if (a->handler_id == MPIDIG_SEND_DATA) {
            MPIR_STATUS_SET_COUNT(req->status, 0);
            MPIDIG_REQUEST(req, req->target_cmpl_cb) (req);
        } else {
            MPID_Request_complete(req);
        }
        MPL_free(a);
    }
}

static int nomem_error(const char *what)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_NO_MEM, "**tcp_nomem", "**tcp_nomem %s", what);
}

/* The replies only this peer may send, naming our requests, for a message of
 * handler_id: at most two (a rendezvous send's CTS and a synchronous send's
 * acknowledgement). */
static int awaits_of(int handler_id, const void *am_hdr, MPIR_Request * req[2], int id[2])
{
    int n = 0;
    if (handler_id == MPIDIG_SEND) {
        const MPIDIG_hdr_t *h = am_hdr;
        if (h->flags & MPIDIG_AM_SEND_FLAGS_RTS) {
            req[n] = h->sreq_ptr;
            id[n++] = MPIDIG_SEND_CTS;
        }
        if (h->flags & MPIDIG_AM_SEND_FLAGS_SYNC) {
            req[n] = h->sreq_ptr;
            id[n++] = MPIDIG_SSEND_ACK;
        }
    } else if (handler_id == MPIDIG_SEND_CTS) {
        req[n] = ((const MPIDIG_send_cts_msg_t *) am_hdr)->rreq_ptr;
        id[n++] = MPIDIG_SEND_DATA;
    }
    return n;
}

/* They are awaited before any byte leaves: 0, or a nomem error with nothing
 * registered. */
static int add_awaits(MPIDI_TCP_conn_t * c, int handler_id, const void *am_hdr)
{
    MPIR_Request *req[2];
    int id[2];
    int n = awaits_of(handler_id, am_hdr, req, id);
    for (int i = 0; i < n; i++) {
        if (!await_add(c, req[i], id[i])) {
            while (i-- > 0)
                MPIDI_TCP_await_take(c, req[i], id[i]);
            return nomem_error("a reply the peer owes");
        }
    }
    return MPI_SUCCESS;
}

/* Takes back what add_awaits registered for a send that never left. */
static void drop_awaits(MPIDI_TCP_conn_t * c, int handler_id, const void *am_hdr)
{
    MPIR_Request *req[2];
    int id[2];
    int n = awaits_of(handler_id, am_hdr, req, id);
    for (int i = 0; i < n; i++)
        MPIDI_TCP_await_take(c, req[i], id[i]);
}

/* Out of memory: a send of which no byte left is an MPI error of its own
 * (the await entries taken back); once part of its frame is in the socket
 * the stream cannot go on, and the connection fails. */
static int send_nomem(MPIDI_TCP_conn_t * c, int handler_id, const void *am_hdr, ssize_t sent,
                      const char *what)
{
    if (sent == 0) {
        drop_awaits(c, handler_id, am_hdr);
        return nomem_error(what);
    }
    int peer = c->peer;
    MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(peer, "out of memory for the rest of a "
                                                "message part-written", ENOMEM));
    return MPIDI_TCP_global.dead_err[peer];
}

int MPIDI_TCP_send_am(int peer, int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                      const void *data, MPI_Aint count, MPI_Datatype datatype,
                      int src_vci, int dst_vci, MPIR_Request * sreq)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_TCP_conn_t *c;
    int dt_contig = 1;
    MPI_Aint data_sz = 0, dt_true_lb = 0;
    MPIR_Datatype *dt_ptr;
    uint8_t wire[MPIDI_TCP_HDR_SIZE];
    ssize_t n = 0;

    MPIR_ERR_CHKANDJUMP1(am_hdr_sz > MPIDI_TCP_AM_HDR_MAX, mpi_errno, MPI_ERR_INTERN,
                         "**tcp_amhdr", "**tcp_amhdr %d", (int) am_hdr_sz);
    mpi_errno = MPIDI_TCP_conn_get(peer, &c);
    MPIR_ERR_CHECK(mpi_errno);

    /* data may be MPI_BOTTOM (NULL) with a datatype of absolute addresses */
    if (count > 0 && datatype != MPI_DATATYPE_NULL)
        MPIDI_Datatype_get_info(count, datatype, dt_contig, data_sz, dt_ptr, dt_true_lb);
    mpi_errno = add_awaits(c, handler_id, am_hdr);
    MPIR_ERR_CHECK(mpi_errno);

    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION, .opcode = MPIDI_TCP_OP_AM,
        .handler_id = (uint8_t) handler_id, .src_vci = (uint8_t) src_vci,
        .dst_vci = (uint8_t) dst_vci, .am_hdr_sz = (uint16_t) am_hdr_sz,
        .payload_sz = (uint64_t) data_sz
    };
    MPIDI_TCP_hdr_encode(wire, &h);
    size_t total = MPIDI_TCP_HDR_SIZE + am_hdr_sz + data_sz;
    const char *payload = data_sz ? MPIR_get_contig_ptr(data, dt_true_lb) : NULL;

    int idle = c->state == MPIDI_TCP_CONN_ESTABLISHED && c->sq_head == NULL &&
        c->ctl_off == c->ctl_len;
    if (idle && dt_contig) {
        struct iovec iov[3] = { {wire, MPIDI_TCP_HDR_SIZE}, {(void *) am_hdr, am_hdr_sz},
        {(void *) payload, data_sz}
        };
        do {
            n = MPIDI_TCP_sendv(c->fd, iov, data_sz ? 3 : 2);
        } while (n < 0 && errno == EINTR);
        if (n == (ssize_t) total) {
            if (sreq)
                MPIDIG_global.origin_cbs[handler_id] (sreq);
            goto fn_exit;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            int err = errno;
            MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(peer, "send", err));
            mpi_errno = MPIDI_TCP_global.dead_err[peer];
            goto fn_fail;
        }
        n = MPL_MAX(n, 0);
    }

    /* the rest waits in the queue */
    MPIDI_TCP_sendq_t *e = MPL_malloc(sizeof(*e) + MPIDI_TCP_HDR_SIZE + am_hdr_sz,
                                      MPL_MEM_BUFFER);
    if (e == NULL) {
        mpi_errno = send_nomem(c, handler_id, am_hdr, n, "a queued send");
        goto fn_fail;
    }
    memset(e, 0, sizeof(*e));
    memcpy(e->hdr, wire, MPIDI_TCP_HDR_SIZE);
    if (am_hdr_sz)
        memcpy(e->hdr + MPIDI_TCP_HDR_SIZE, am_hdr, am_hdr_sz);
    e->sreq = sreq;
    e->handler_id = handler_id;
    e->iov[0].iov_base = e->hdr;
    e->iov[0].iov_len = MPIDI_TCP_HDR_SIZE + am_hdr_sz;
    e->iov_cur = e->iov;
    e->iov_cnt = 1;
    if (data_sz && dt_contig) {
        e->iov[1].iov_base = (void *) payload;
        e->iov[1].iov_len = data_sz;
        e->iov_cnt = 2;
    } else if (data_sz) {
        /* packed in segments once the headers are out (nothing of it written
         * yet: only a contiguous payload is written before queueing); the user
         * may free the datatype before the send completes */
        e->buf = data;
        e->count = count;
        e->datatype = datatype;
        e->data_sz = data_sz;
        e->pack_buf = MPL_malloc(MPL_MIN(data_sz, MPIDI_TCP_PACK_SEG), MPL_MEM_BUFFER);
        if (e->pack_buf == NULL) {
            MPL_free(e);
            mpi_errno = send_nomem(c, handler_id, am_hdr, 0, "a noncontiguous send's "
                                   "pack buffer");
            goto fn_fail;
        }
        MPIR_Datatype_add_ref_if_not_builtin(datatype);
    }
    e->iov_cnt = MPIDI_TCP_iov_advance(&e->iov_cur, e->iov_cnt, (size_t) n);
    MPIDI_TCP_sendq_push(c, e);
    if (idle)
        MPIDI_TCP_flush(c);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
