/*
 * mpich-multichannel: ch4:ucx's messages between the roots of a connect and
 * an accept (MPICH 5.0), in place of MPICH's MPIDI_UCX_dynamic_send, _recv
 * and _sendrecv, which the overlay leaves out of ucx_spawn.c.
 *
 * MPICH's versions waited on completion flags in their own stack frame and,
 * after the connect timeout, returned with the UCX request still posted: a
 * peer that answered late then had UCX write its bytes and the flag into the
 * stack of a function that had returned.  Here an operation's flag and bytes
 * live on the heap.  One that times out is abandoned: a receive is cancelled
 * (UCX completes a cancelled tag receive at once unless the transport holds
 * it), and whatever completes later frees the operation in its callback.
 * All of it runs under VCI 0's lock, as UCX's callbacks do (they run inside
 * ucp_worker_progress, called here).
 */
#ifndef MMC_UCX_DYNAMIC_H_INCLUDED
#define MMC_UCX_DYNAMIC_H_INCLUDED

typedef struct {
    bool done;
    bool failed;
    bool abandoned;
    void *req;                  /* UCX's request while posted, else NULL */
    char bytes[];               /* a send's own copy, a receive's landing (zeroed) */
} dyn_op_t;

static void dyn_complete(dyn_op_t * op, void *request, ucs_status_t status)
{
    ucp_request_release(request);
    if (op->abandoned) {
        MPL_free(op);
        return;
    }
    op->req = NULL;
    op->done = true;
    op->failed = status != UCS_OK;
}

static void dyn_send_cb(void *request, ucs_status_t status, void *user_data)
{
    dyn_complete(user_data, request, status);
}

static void dyn_recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t * info,
                        void *user_data)
{
    dyn_complete(user_data, request, status);
}

static uint64_t dyn_match_bits(int context_id, int tag)
{
    return MPIDI_UCX_DYNPROC | ((uint64_t) context_id << MPIDI_UCX_CONTEXT_ID_SHIFT) |
        (tag & MPIDI_UCX_TAG_MASK);
}

/* A new op of size bytes (zeroed), set up for UCX's callback; NULL when out
 * of memory */
static dyn_op_t *dyn_new(int size, ucp_request_param_t * param)
{
    dyn_op_t *op = MPL_calloc(1, sizeof(dyn_op_t) + size, MPL_MEM_OTHER);
    *param = (ucp_request_param_t) {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .user_data = op,
    };
    return op;
}

/* What the post returned: done at once, refused (done, failed), or posted */
static dyn_op_t *dyn_posted(dyn_op_t * op, ucs_status_ptr_t st)
{
    if (UCS_PTR_IS_PTR(st))
        op->req = st;
    else {
        op->done = true;
        op->failed = st != UCS_OK;
    }
    return op;
}

/* A send of a copy of size bytes; NULL when out of memory */
static dyn_op_t *dyn_send(ucp_ep_h ep, uint64_t tag, const void *buf, int size)
{
    ucp_request_param_t param;
    dyn_op_t *op = dyn_new(size, &param);
    if (!op)
        return NULL;
    memcpy(op->bytes, buf, size);
    param.cb.send = dyn_send_cb;
    return dyn_posted(op, ucp_tag_send_nbx(ep, op->bytes, size, tag, &param));
}

/* A receive of up to size bytes into the op; NULL when out of memory */
static dyn_op_t *dyn_recv(int vci, uint64_t tag, int size)
{
    ucp_request_param_t param;
    dyn_op_t *op = dyn_new(size, &param);
    if (!op)
        return NULL;
    param.cb.recv = dyn_recv_cb;
    return dyn_posted(op, ucp_tag_recv_nbx(MPIDI_UCX_global.ctx[vci].worker, op->bytes, size,
                                           tag, UINT64_MAX, &param));
}

/* Frees an op that is done; gives one still posted over to its callback */
static void dyn_drop(int vci, dyn_op_t * op, bool is_recv)
{
    if (!op)
        return;
    if (op->done) {
        MPL_free(op);
        return;
    }
    op->abandoned = true;
    if (is_recv)
        ucp_request_cancel(MPIDI_UCX_global.ctx[vci].worker, op->req);
}

/* Whether op (NULL: none) is still under way */
static bool dyn_pending(const dyn_op_t * op)
{
    return op && !op->done;
}

/* Waits for both ops (either may be NULL) until timeout seconds (0: no
 * limit), then fails with error class errclass (MPICH's contract: MPI_ERR_PORT
 * for dynamic_send and _recv, MPIX_ERR_TIMEOUT for _sendrecv); yields the
 * locks between polls if told to (dynamic_sendrecv, as MPICH's does) */
static int dyn_wait(int vci, dyn_op_t * a, dyn_op_t * b, int timeout, int errclass, bool yield)
{
    int mpi_errno = MPI_SUCCESS;
    MPL_time_t start, now;
    double gap;
    MPL_wtime(&start);
    while (dyn_pending(a) || dyn_pending(b)) {
        ucp_worker_progress(MPIDI_UCX_global.ctx[vci].worker);
        MPL_wtime(&now);
        MPL_wtime_diff(&start, &now, &gap);
        MPIR_ERR_CHKANDJUMP1(timeout > 0 && gap > timeout && (dyn_pending(a) || dyn_pending(b)),
                             mpi_errno, errclass, "**mmc_dyn_timeout",
                             "**mmc_dyn_timeout %d", timeout);
        if (yield) {
            MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
            MPID_THREAD_CS_YIELD(VCI, MPIDI_VCI_LOCK(vci));
        }
    }
    MPIR_ERR_CHKANDJUMP((a && a->failed) || (b && b->failed), mpi_errno, MPI_ERR_PORT,
                        "**mmc_dyn_failed");
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_UCX_dynamic_send(MPIR_Lpid remote_lpid, int tag, const void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS, vci = 0;
    ucp_ep_h ep = MPIDI_UCX_AV_TO_EP(MPIDIU_lpid_to_av_slow(remote_lpid), vci, vci);
    dyn_op_t *op = dyn_send(ep, dyn_match_bits(0, tag), buf, size);
    MPIR_ERR_CHKANDJUMP(!op, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = dyn_wait(vci, op, NULL, timeout, MPI_ERR_PORT, false);
  fn_exit:
    dyn_drop(vci, op, false);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_UCX_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS, vci = 0;
    dyn_op_t *op = dyn_recv(vci, dyn_match_bits(0, tag), size);
    MPIR_ERR_CHKANDJUMP(!op, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = dyn_wait(vci, NULL, op, timeout, MPI_ERR_PORT, false);
    MPIR_ERR_CHECK(mpi_errno);
    memcpy(buf, op->bytes, size);
  fn_exit:
    dyn_drop(vci, op, true);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_UCX_dynamic_sendrecv(MPIR_Lpid remote_lpid, MPIR_Comm * peer_comm, int tag,
                               const void *send_buf, int send_size, void *recv_buf, int recv_size,
                               int timeout)
{
    int mpi_errno = MPI_SUCCESS, vci = 0;
    dyn_op_t *s = NULL, *r = NULL;
    if (send_size > 0) {
        ucp_ep_h ep = MPIDI_UCX_AV_TO_EP(MPIDIU_lpid_to_av_slow(remote_lpid), vci, vci);
        s = dyn_send(ep, dyn_match_bits(peer_comm->context_id, tag), send_buf, send_size);
        MPIR_ERR_CHKANDJUMP(!s, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    if (recv_size > 0) {
        r = dyn_recv(vci, dyn_match_bits(peer_comm->recvcontext_id, tag), recv_size);
        MPIR_ERR_CHKANDJUMP(!r, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    mpi_errno = dyn_wait(vci, s, r, timeout, MPIX_ERR_TIMEOUT, true);
    MPIR_ERR_CHECK(mpi_errno);
    if (r)
        memcpy(recv_buf, r->bytes, recv_size);
  fn_exit:
    dyn_drop(vci, s, false);
    dyn_drop(vci, r, true);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#endif /* MMC_UCX_DYNAMIC_H_INCLUDED */
