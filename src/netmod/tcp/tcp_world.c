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
 * mmc_compat.h).  The processes of other worlds (dynamic processes) are
 * named by upids, their peers made in tcp_dynamic.c (doc/tcp-dynamic.md).
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

/* The upids of comm's processes (tcp_proto.h: address and public key, never
 * the card's key, which leaves a process only through PMI), for
 * MPI_Open_port (comm_self) and the leaders' exchange of
 * MPI_Intercomm_create (on 4.x only with another job). */
int MPIDI_TCP_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    int mpi_errno = MPI_SUCCESS;
    int n = comm->local_size;
    int *sizes = MPL_malloc(n * sizeof(int), MPL_MEM_ADDRESS);
    uint8_t *upids = MPL_malloc((size_t) n * MPIDI_TCP_UPID_SIZE, MPL_MEM_ADDRESS);

    MPIR_ERR_CHKANDJUMP(!sizes || !upids, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < n; i++) {
        int peer = MPIDI_TCP_RANK_TO_PEER(comm, i);
        MPIR_ERR_CHKANDJUMP(peer < 0, mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION,
                            "**tcp_nodynamic");
        sizes[i] = MPIDI_TCP_UPID_SIZE;
        MPIDI_TCP_upid_of(peer, upids + i * MPIDI_TCP_UPID_SIZE);
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

/* Where ch4 last named a process of another job, if that table still
 * names it there (ch4 frees tables without telling the netmod). */
static int dyn_gpid(int peer, uint64_t * gpid)
{
    const MPIDI_TCP_dyn_peer_t *d = &MPIDI_TCP_global.dyn[peer - MPIDI_TCP_global.size];
    const MPIDI_av_table_t *t;
    if (d->avtid < 0 || d->avtid >= MPIDI_global.avt_mgr.max_n_avts ||
        (t = MPIDI_global.avt_mgr.av_tables[d->avtid]) == NULL || d->lpid >= t->size ||
        t->table[d->lpid].netmod.tcp.peer_plus1 != peer + 1)
        return 0;
    *gpid = MPIDIU_GPID_CREATE(d->avtid, d->lpid);
    return 1;
}

/* A connect or accept that failed leaves the table made for its peer
 * unused: ch4 frees tables only through the communicators that use them,
 * and asserts at MPI_Finalize on one that none ever used. */
void MPIDI_TCP_dyn_unplace(int peer)
{
    MPIDI_TCP_dyn_peer_t *d = &MPIDI_TCP_global.dyn[peer - MPIDI_TCP_global.size];
    uint64_t gpid;
    if (peer < MPIDI_TCP_global.size || !dyn_gpid(peer, &gpid) ||
        MPIR_Object_get_ref(MPIDI_global.avt_mgr.av_tables[d->avtid]) != 0)
        return;
    MPIDIU_free_avt(d->avtid);
    d->avtid = -1;
}

/* ch4's blocking send and receive between the roots of a connect
 * (tcp_dynamic.c); a process by its gpid */
int MPIDI_TCP_dynamic_send(uint64_t remote_gpid, int tag, const void *buf, int size,
                           int timeout)
{
    int peer = MPIDIU_get_av(MPIDIU_GPID_GET_AVTID(remote_gpid),
                             MPIDIU_GPID_GET_LPID(remote_gpid)).netmod.tcp.peer_plus1 - 1;
    return MPIDI_TCP_dyn_send(peer, tag, buf, size, timeout);
}

int MPIDI_TCP_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    return MPIDI_TCP_dyn_recv(tag, buf, size, timeout);
}

/* ch4's addresses of processes other processes named by their upids: the
 * world's and those known already where they are, the others in one new av
 * table.  Every gpid is filled even when a upid is bad (MPICH's exchange of
 * an intercommunicator's upids ignores the error): its peer is dead with the
 * reason.  A upid with a port's record (MPI_Comm_connect's port name, size 1)
 * names the port too. */
int MPIDI_TCP_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                             uint64_t * remote_gpids)
{
    int mpi_errno = MPI_SUCCESS, n_new = 0, avtid = 0, lpid = 0;
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    int *peers = MPL_malloc(size * sizeof(int), MPL_MEM_ADDRESS);
    const uint8_t *p = (const uint8_t *) remote_upids;

    MPIR_ERR_CHKANDJUMP(!peers, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < size; p += MPL_MAX(remote_upid_size[i], 0), i++) {
        int len = MPL_MAX(remote_upid_size[i], 0), err;
        if (size == 1 && len == MPIDI_TCP_UPID_SIZE + MPIDI_TCP_PORT_REC_SIZE)
            len = MPIDI_TCP_UPID_SIZE;
        peers[i] = -1;
        err = MPIDI_TCP_dyn_peer_add(p, len, &peers[i]);
        if (err == MPI_SUCCESS && len != remote_upid_size[i])
            err = MPIDI_TCP_port_named(peers[i], p + len);
        if (err && !mpi_errno)
            mpi_errno = err;
        /* a connect's (size 1) error ends it: no table that nothing would free */
        if (mpi_errno && size == 1)
            goto fn_fail;
        if (peers[i] < g->size && peers[i] >= 0)
            remote_gpids[i] = MPIDIU_GPID_CREATE(0, peers[i]);
        else if (peers[i] < 0 || !dyn_gpid(peers[i], &remote_gpids[i]))
            n_new++;
    }
    if (n_new) {
        int err = MPIDIU_new_avt(n_new, &avtid);
        if (err) {
            mpi_errno = err;
            goto fn_fail;
        }
    }
    for (int i = 0; i < size && n_new; i++) {
        int peer = peers[i];
        if ((peer >= 0 && peer < g->size) || (peer >= g->size && dyn_gpid(peer, &remote_gpids[i])))
            continue;
        /* a peer out of memory keeps the entry ch4 zeroed: its sends fail */
        MPIDIU_get_av(avtid, lpid).netmod.tcp.peer_plus1 = peer + 1;
        if (peer >= 0) {
            g->dyn[peer - g->size].avtid = avtid;
            g->dyn[peer - g->size].lpid = lpid;
        }
        remote_gpids[i] = MPIDIU_GPID_CREATE(avtid, lpid);
        lpid++;
    }
  fn_exit:
    MPL_free(peers);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#else /* 5.0 */

/* 5.0's connect frees its peer's entry itself (MPIDIU_free_dynamic_lpid) */
void MPIDI_TCP_dyn_unplace(int peer)
{
}

/* the peer of a process ch4 named (its entry may be a dynamic one, which
 * ch4's fast lookup does not serve) */
static int lpid_peer(MPIR_Lpid lpid)
{
    return MPIDIU_lpid_to_av_slow(lpid)->netmod.tcp.peer_plus1 - 1;
}

/* ch4's blocking send and receive between the roots of a connect
 * (tcp_dynamic.c).  A connect that fails here leaves the dynamic entry of
 * its port, which 5.0 frees only after a success and asserts on at
 * MPI_Finalize: it goes here. */
int MPIDI_TCP_dynamic_send(MPIR_Lpid remote_lpid, int tag, const void *buf, int size,
                           int timeout)
{
    int mpi_errno = MPIDI_TCP_dyn_send(lpid_peer(remote_lpid), tag, buf, size, timeout);
    if (mpi_errno && (remote_lpid & MPIR_LPID_DYNAMIC_MASK))
        MPIDIU_free_dynamic_lpid(remote_lpid);
    return mpi_errno;
}

/* 5.0's accept copies as many bytes of address as the connector's first
 * int says (establish_peer_conn) before anything checks them: no more than
 * the buffer holds after it. */
int MPIDI_TCP_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    int len = -1, mpi_errno = MPIDI_TCP_dyn_recv(tag, buf, size, timeout);
    if (mpi_errno == MPI_SUCCESS && size >= (int) sizeof(int))
        memcpy(&len, buf, sizeof(int));
    if (mpi_errno == MPI_SUCCESS && (len < 0 || len > size - (int) sizeof(int)))
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_PORT, "**tcp_port_size", "**tcp_port_size %d",
                                         tag);
    return mpi_errno;
}

void MPIDI_TCP_dynamic_done(int64_t remote_lpid, int tag, int failed)
{
    MPIDI_TCP_dyn_done(lpid_peer(remote_lpid), tag, failed);
}

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

/* A process of another world, or a connect's port (a dynamic lpid, whose
 * upid carries the port's record), gets a peer in its entry, filled even when
 * the upid is bad: its peer is dead with the reason. */
static int insert_other(MPIR_Lpid lpid, const uint8_t * upid, int upid_len)
{
    int mpi_errno = MPI_SUCCESS, peer = -1, len = upid_len;
    int dynamic = (lpid & MPIR_LPID_DYNAMIC_MASK) != 0;

    if (dynamic && len == MPIDI_TCP_UPID_SIZE + MPIDI_TCP_PORT_REC_SIZE)
        len = MPIDI_TCP_UPID_SIZE;
    mpi_errno = MPIDI_TCP_dyn_peer_add(upid, MPL_MAX(len, 0), &peer);
    if (mpi_errno == MPI_SUCCESS && len != upid_len)
        mpi_errno = MPIDI_TCP_port_named(peer, upid + len);
    /* a rank of this world is no process of another */
    MPIR_ERR_CHKANDJUMP1(mpi_errno == MPI_SUCCESS && !dynamic && peer < MPIDI_TCP_global.size,
                         mpi_errno, MPI_ERR_OTHER, "**tcp_upid_world", "**tcp_upid_world %d",
                         peer);
    MPIDIU_lpid_to_av_slow(lpid)->netmod.tcp.peer_plus1 = peer + 1;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A process another process named by its upid, under the lpid ch4 gave it:
 * one of this world must be the process its card describes. */
int MPIDI_TCP_insert_upid(MPIR_Lpid lpid, const char *upid, int upid_len)
{
    int mpi_errno = MPI_SUCCESS;
    uint8_t mine[MPIDI_TCP_UPID_SIZE];

    if (!of_this_world(lpid))
        return insert_other(lpid, (const uint8_t *) upid, upid_len);
    MPIDI_TCP_upid_of((int) MPIR_LPID_WORLD_RANK(lpid), mine);
    MPIR_ERR_CHKANDJUMP1(upid_len != MPIDI_TCP_UPID_SIZE || memcmp(upid, mine, sizeof(mine)),
                         mpi_errno, MPI_ERR_OTHER, "**tcp_upid", "**tcp_upid %d",
                         (int) MPIR_LPID_WORLD_RANK(lpid));
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The leaders' exchange of MPI_Intercomm_create (ch4_comm.c: the size of
 * their data, then the data).  The roots of a connect (the peer a dynamic
 * lpid) have only their proven connection, and each piece carries the
 * port's MAC; a size above what a million processes need is refused before
 * ch4 allocates it.  Other leaders share a peer communicator and use it as
 * any other message between two of its ranks. */
int MPIDI_TCP_dynamic_sendrecv(MPIR_Lpid remote_lpid, MPIR_Comm * peer_comm, int tag,
                               const void *send_buf, int send_size, void *recv_buf,
                               int recv_size, int timeout)
{
    int mpi_errno = MPI_SUCCESS, rank = -1;

    if (remote_lpid & MPIR_LPID_DYNAMIC_MASK) {
        /* MPIR_Intercomm_create_timeout moved the port's tag into the collective space */
        tag &= ~MPIR_TAG_COLL_BIT;
        mpi_errno = MPIDI_TCP_dyn_sendrecv(lpid_peer(remote_lpid), tag, send_buf, send_size,
                                           recv_buf, recv_size, timeout);
        MPIR_ERR_CHECK(mpi_errno);
        int size = -1;
        if (recv_size == sizeof(int))
            memcpy(&size, recv_buf, sizeof(int));
        MPIR_ERR_CHKANDJUMP1(recv_size == sizeof(int) &&
                             (size < 0 || size > MPIDI_TCP_DYN_XCHG_MAX), mpi_errno,
                             MPI_ERR_PORT, "**tcp_port_size", "**tcp_port_size %d", tag);
        goto fn_exit;
    }
    for (int r = 0; peer_comm && r < peer_comm->remote_size && rank < 0; r++)
        if (MPIR_comm_rank_to_lpid(peer_comm, r) == remote_lpid)
            rank = r;
    MPIR_ERR_CHKANDJUMP1(rank < 0, mpi_errno, MPI_ERR_PORT, "**tcp_port_nolink",
                         "**tcp_port_nolink %d", tag);
    mpi_errno = MPIC_Sendrecv(send_buf, send_size, MPIR_BYTE_INTERNAL, rank, tag,
                              recv_buf, recv_size, MPIR_BYTE_INTERNAL, rank, tag,
                              peer_comm, MPI_STATUS_IGNORE, 0);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#endif
