/*
 * mpich-multichannel: what the rest of MPICH sees of ch4:tcp (included by
 * the inline API headers and the generated tcp_noinline.h, so by every MPICH
 * source file): keep it small, the internals are in tcp_types.h.
 */
#ifndef TCP_IMPL_H_INCLUDED
#define TCP_IMPL_H_INCLUDED

#include <mpidimpl.h>
#include "mpidch4r.h"
#include "mmc_compat.h"

extern MPI_Aint MPIDI_TCP_eager_max;    /* MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE, resolved */
extern const MPI_Aint MPIDI_TCP_am_hdr_max;

/* ch4:tcp's peer index of a rank of comm (world ranks are 0..size-1), -1 for
 * a process it was never told of; a macro: ch4's av lookup is declared after
 * this header in MPICH's own files */
#define MPIDI_TCP_RANK_TO_PEER(comm_, rank_) \
    (MPIDIU_comm_rank_to_av(comm_, rank_)->netmod.tcp.peer_plus1 - 1)

/* Sends an active message to a peer; sreq, when given, completes
 * through MPIDIG's origin callback once the last byte is in the socket. */
int MPIDI_TCP_send_am(int peer, int handler_id, const void *am_hdr, MPI_Aint am_hdr_sz,
                      const void *data, MPI_Aint count, MPI_Datatype datatype,
                      int src_vci, int dst_vci, MPIR_Request * sreq);
int MPIDI_TCP_progress(int *made_progress);
/* the netmod API's init_vcis (MPICH 4.1+; declared here for 4.0, which has no such entry) */
int MPIDI_TCP_init_vcis(int num_vcis, int *num_vcis_actual);
/* MPI_Open_port and MPI_Close_port (through the overlay): a port's secret,
 * appended to the upid in its name */
int MPIDI_TCP_port_open(int tag, char **addrname, int *addrname_size);
void MPIDI_TCP_port_close(int tag);
/* 5.0's connect or accept on tag with the process of a dynamic lpid (an
 * MPIR_Lpid) is over, through the overlay */
void MPIDI_TCP_dynamic_done(int64_t remote_lpid, int tag, int failed);
/* MPIDIG calls it when a receive matches an unexpected message ch4:tcp holds */
int MPIDI_TCP_unexp_matched(MPIR_Request * rreq);

#endif /* TCP_IMPL_H_INCLUDED */
