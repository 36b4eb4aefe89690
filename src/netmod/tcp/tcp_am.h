/*
 * mpich-multichannel: ch4:tcp active-message API entries (inline).
 *
 * MPIDIG decides eager or rendezvous with am_check_eager: a message up to
 * MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE goes with its header; above, MPIDIG
 * sends an RTS (am_send_hdr), the receiver a CTS (am_send_hdr_reply) once
 * matched, and the sender the data (am_isend_reply).  An eager message
 * larger than MPICH's pack buffers that arrives unexpected is held by ch4:tcp
 * (tcp_rx.c), so the eager limit does not size MPICH's buffers.
 */
#ifndef TCP_AM_H_INCLUDED
#define TCP_AM_H_INCLUDED

#include "tcp_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend(int rank, MPIR_Comm * comm, int handler_id,
                                               const void *am_hdr, MPI_Aint am_hdr_sz,
                                               const void *data, MPI_Aint count,
                                               MPI_Datatype datatype, int src_vci, int dst_vci,
                                               MPIR_Request * sreq)
{
    return MPIDI_TCP_send_am(MPIDI_TCP_RANK_TO_PEER(comm, rank), handler_id, am_hdr, am_hdr_sz,
                             data, count, datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_isend_reply(MPIR_Comm * comm, int src_rank,
                                                     int handler_id, const void *am_hdr,
                                                     MPI_Aint am_hdr_sz, const void *data,
                                                     MPI_Aint count, MPI_Datatype datatype,
                                                     int src_vci, int dst_vci,
                                                     MPIR_Request * sreq)
{
    return MPIDI_TCP_send_am(MPIDI_TCP_RANK_TO_PEER(comm, src_rank), handler_id, am_hdr,
                             am_hdr_sz, data, count, datatype, src_vci, dst_vci, sreq);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr(int rank, MPIR_Comm * comm, int handler_id,
                                                  const void *am_hdr, MPI_Aint am_hdr_sz,
                                                  int src_vci, int dst_vci)
{
    return MPIDI_TCP_send_am(MPIDI_TCP_RANK_TO_PEER(comm, rank), handler_id, am_hdr, am_hdr_sz,
                             NULL, 0, MPI_DATATYPE_NULL, src_vci, dst_vci, NULL);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_send_hdr_reply(MPIR_Comm * comm, int src_rank,
                                                        int handler_id, const void *am_hdr,
                                                        MPI_Aint am_hdr_sz, int src_vci,
                                                        int dst_vci)
{
    return MPIDI_TCP_send_am(MPIDI_TCP_RANK_TO_PEER(comm, src_rank), handler_id, am_hdr,
                             am_hdr_sz, NULL, 0, MPI_DATATYPE_NULL, src_vci, dst_vci, NULL);
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_hdr_max_sz(void)
{
    return MPIDI_TCP_am_hdr_max;
}

MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_limit(void)
{
    return MPIDI_TCP_eager_max;
}

/* what MPIDIG keeps in its pack buffers; larger eager messages ch4:tcp holds itself */
MPL_STATIC_INLINE_PREFIX MPI_Aint MPIDI_NM_am_eager_buf_limit(void)
{
    return MPL_MIN(MPIDI_TCP_eager_max, MMC_PACK_BUFFER_SIZE);
}

MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_check_eager(MPI_Aint am_hdr_sz, MPI_Aint data_sz,
                                                      const void *data, MPI_Aint count,
                                                      MPI_Datatype datatype, MPIR_Request * sreq)
{
    return data_sz <= MPIDI_TCP_eager_max;
}

/* an unexpected eager message ch4:tcp holds: delivered when a receive matches it */
MPL_STATIC_INLINE_PREFIX MPIDIG_recv_data_copy_cb MPIDI_NM_am_get_data_copy_cb(uint32_t attr)
{
    return MPIDI_TCP_unexp_matched;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_init(MPIR_Request * req)
{
}

MPL_STATIC_INLINE_PREFIX void MPIDI_NM_am_request_finalize(MPIR_Request * req)
{
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rank_is_local(int rank, MPIR_Comm * comm)
{
    return MMC_RANK_IS_LOCAL(rank, comm);
}

#if MMC_CH4_BOOTSTRAP_COMM
/* 5.0: MPIDIG hands a message to a netmod's own tag matching only where the
 * netmod says it can; ch4:tcp has none, so the two transfers below are never
 * asked for, and answer with an error should they be. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_NM_am_can_do_tag(MPIR_Request * rreq)
{
    return false;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_tag_send(int rank, MPIR_Comm * comm, int handler_id,
                                                  int tag, const void *buf, MPI_Aint count,
                                                  MPI_Datatype datatype, int src_vci,
                                                  int dst_vci, MPIR_Request * sreq)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_INTERN, "**tcp_notag", 0);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_am_tag_recv(int rank, MPIR_Comm * comm, int handler_id,
                                                  int tag, void *buf, MPI_Aint count,
                                                  MPI_Datatype datatype, int src_vci,
                                                  int dst_vci, MPIR_Request * rreq)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_INTERN, "**tcp_notag", 0);
}
#else
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_comm_get_gpid(MPIR_Comm * comm_ptr, int idx,
                                                    uint64_t * gpid_ptr, bool is_remote)
{
    int avtid = 0, lpid = 0;
    if (comm_ptr->comm_kind == MPIR_COMM_KIND__INTRACOMM || is_remote)
        MPIDIU_comm_rank_to_pid(comm_ptr, idx, &lpid, &avtid);
    else
        MPIDIU_comm_rank_to_pid_local(comm_ptr, idx, &lpid, &avtid);
    *gpid_ptr = MPIDIU_GPID_CREATE(avtid, lpid);
    return MPI_SUCCESS;
}
#endif

#endif /* TCP_AM_H_INCLUDED */
