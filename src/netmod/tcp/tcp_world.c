/*
 * mpich-multichannel: how ch4:tcp learns its world, on each netmod API.
 *
 * Every rank's card (address, eager limit, key) travels through PMI and
 * nowhere else.  MPICH 4.x asks for the cards in init_world (then init_vcis
 * on 4.1+, and post_init); 5.0 has no init_world and commits the world
 * communicator as a bootstrap communicator, whose commit hook exchanges them,
 * and asks for comm_set_vcis, get_local_upids, insert_upid and
 * dynamic_sendrecv in every MPI_Intercomm_create.  The entries of one API
 * are compiled where MPICH has that API (MMC_CH4_BOOTSTRAP_COMM,
 * mmc_compat.h).  Processes of other worlds (dynamic processes) are refused
 * on both (doc/tcp-dynamic.md).
 */
#include "mpidimpl.h"
#include "tcp_types.h"

static int exchange_cards(void)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    if (g->size == 1)
        return MPI_SUCCESS;
    MPIDI_TCP_card_t me = g->me;
    return MPIR_pmi_allgather(&me, sizeof(me), g->cards, sizeof(me), MPIR_PMI_DOMAIN_ALL);
}

/* What other processes know of a peer (MPIDI_TCP_upid_t): its card but
 * the key. */
void MPIDI_TCP_upid_of(int peer, uint8_t * upid)
{
    const MPIDI_TCP_card_t *c = &MPIDI_TCP_global.cards[peer];
    MPIDI_TCP_upid_t u = {.port = c->addr.port, .eager_max = c->eager_max,
        .mpich_version = MPICH_NUMVERSION
    };
    memcpy(&u.ip, &c->addr.ip, sizeof(u.ip));
    memcpy(u.pk, c->pk, sizeof(u.pk));
    MPIDI_TCP_upid_encode(upid, &u);
}

/* A bootstrap communicator's commit (5.0): the world's; a session's group
 * would need the cards of that group alone, which PMI gives per group only. */
int MPIDI_TCP_bootstrap(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_CHKANDJUMP(comm != MPIR_Process.comm_world, mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION,
                        "**tcp_nosession");
    mpi_errno = exchange_cards();
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#if !MMC_CH4_BOOTSTRAP_COMM

int MPIDI_TCP_init_world(void)
{
    return exchange_cards();
}

/* MPICH 4.1+ asks the netmod for num_vcis VCIs after init_world: ch4:tcp
 * serves one, which MPIDI_TCP_init_local made sure is all ch4 has. */
int MPIDI_TCP_init_vcis(int num_vcis, int *num_vcis_actual)
{
    *num_vcis_actual = 1;
    return MPI_SUCCESS;
}

int MPIDI_TCP_post_init(void)
{
    return MPI_SUCCESS;
}

/* MPI_Open_port, MPI_Comm_spawn and MPI_Comm_join ask for these first */
int MPIDI_TCP_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    return MPIDI_TCP_no_dynamic_processes();
}

int MPIDI_TCP_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                             uint64_t * remote_gpids)
{
    return MPIDI_TCP_no_dynamic_processes();
}

#else /* 5.0 */

/* ch4:tcp serves one VCI on every rank (MPIDI_TCP_init_local refuses more):
 * every rank's counts are known without asking. */
int MPIDI_TCP_comm_set_vcis(MPIR_Comm * comm, int num_implicit, int num_reserved,
                            MPIDI_num_vci_t * all_num_vcis)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_CHKANDJUMP(num_implicit + num_reserved != 1, mpi_errno, MPI_ERR_OTHER, "**tcp_vcis");
    for (int i = 0; i < comm->local_size; i++) {
        all_num_vcis[i].n_vcis = 1;
        all_num_vcis[i].n_total_vcis = 1;
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static bool of_this_world(MPIR_Lpid lpid)
{
    return !(lpid & MPIR_LPID_DYNAMIC_MASK) && MPIR_LPID_WORLD_INDEX(lpid) == 0;
}

/* Every MPI_Intercomm_create sends these to the other group's leader: each
 * rank's upid (tcp_proto.h: its address and public key, never its card's
 * key, which leaves a process only through PMI). */
int MPIDI_TCP_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    int mpi_errno = MPI_SUCCESS;
    int n = comm->local_size;
    int *sizes = MPL_malloc(n * sizeof(int), MPL_MEM_ADDRESS);
    uint8_t *upids = MPL_malloc((size_t) n * MPIDI_TCP_UPID_SIZE, MPL_MEM_ADDRESS);

    MPIR_ERR_CHKANDJUMP(!sizes || !upids, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < n; i++) {
        MPIR_Lpid lpid = MPIR_Group_rank_to_lpid(comm->local_group, i);
        if (!of_this_world(lpid)) {
            mpi_errno = MPIDI_TCP_no_dynamic_processes();
            goto fn_fail;
        }
        sizes[i] = MPIDI_TCP_UPID_SIZE;
        MPIDI_TCP_upid_of((int) MPIR_LPID_WORLD_RANK(lpid), upids + i * MPIDI_TCP_UPID_SIZE);
    }
    *local_upid_size = sizes;
    *local_upids = (char *) upids;
  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(sizes);
    MPL_free(upids);
    goto fn_exit;
}

/* The processes of an intercommunicator's other group, as its leader named
 * them: one of this world must be the process its card describes. */
int MPIDI_TCP_insert_upid(MPIR_Lpid lpid, const char *upid, int upid_len)
{
    int mpi_errno = MPI_SUCCESS;
    uint8_t mine[MPIDI_TCP_UPID_SIZE];

    if (!of_this_world(lpid))
        return MPIDI_TCP_no_dynamic_processes();
    MPIDI_TCP_upid_of((int) MPIR_LPID_WORLD_RANK(lpid), mine);
    MPIR_ERR_CHKANDJUMP1(upid_len != MPIDI_TCP_UPID_SIZE || memcmp(upid, mine, sizeof(mine)),
                         mpi_errno, MPI_ERR_OTHER, "**tcp_upid", "**tcp_upid %d",
                         (int) MPIR_LPID_WORLD_RANK(lpid));
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The leaders' exchange of MPI_Intercomm_create: over the peer communicator
 * both leaders are in, as any other message between two ranks of the world. */
int MPIDI_TCP_dynamic_sendrecv(MPIR_Lpid remote_lpid, MPIR_Comm * peer_comm, int tag,
                               const void *send_buf, int send_size, void *recv_buf,
                               int recv_size, int timeout)
{
    int peer = -1;
    if (peer_comm && of_this_world(remote_lpid))
        for (int r = 0; r < peer_comm->remote_size && peer < 0; r++)
            if (MPIR_comm_rank_to_lpid(peer_comm, r) == remote_lpid)
                peer = r;
    if (peer < 0)
        return MPIDI_TCP_no_dynamic_processes();
    return MPIC_Sendrecv(send_buf, send_size, MPIR_BYTE_INTERNAL, peer, tag,
                         recv_buf, recv_size, MPIR_BYTE_INTERNAL, peer, tag,
                         peer_comm, MPI_STATUS_IGNORE, 0);
}

#endif
