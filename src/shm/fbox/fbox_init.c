/*
 * mpich-multichannel: fast boxes' CVARs, pvars, the node's region at
 * MPI_Init and the boxes found later (see fbox_post.h and doc/shm.md).
 */
#include "mpidimpl.h"
#include "posix_impl.h"
#include "fbox_post.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH4_FASTBOX
      description : cvars that control the fast boxes of ch4 shared memory

cvars:
    - name        : MPIR_CVAR_CH4_SHM_FASTBOX_SIZE
      category    : CH4_FASTBOX
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes of each fast box: a ring that carries small messages from one local rank to
        another without atomic operations, one per ordered pair of ranks that talk (at most
        MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS per receiver). Default -1: 16384, chosen by
        measurement (doc/shm.md). 0 turns fast boxes off: every message through MPICH's
        shared-memory queue. Else a power of two from 512 to 16777216. A node's box size is
        that of its first local rank.

    - name        : MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS
      category    : CH4_FASTBOX
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Fast boxes a rank receives from, and so polls, at most: the first local ranks to send
        it a small message get one each, the others use MPICH's shared-memory queue. Default
        -1: 32 (or the number of other local ranks, if fewer). 0 turns fast boxes off. A
        node's count is that of its first local rank.

    - name        : MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG
      category    : CH4_FASTBOX
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Largest message in bytes a rank sends through a fast box; larger ones go through
        MPICH's shared-memory queue. Default -1: 1024 (at most a quarter of the box size),
        chosen by measurement (doc/shm.md). At most a quarter of
        MPIR_CVAR_CH4_SHM_FASTBOX_SIZE.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_FBOX_global_t MPIDI_FBOX_global;

static int cvar_error(int which)
{
    static const struct {
        const char *name;
        const int *val;
    } cvars[] = {
        { "MPIR_CVAR_CH4_SHM_FASTBOX_SIZE", &MPIR_CVAR_CH4_SHM_FASTBOX_SIZE },
        { "MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS", &MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS },
        { "MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG", &MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG },
    };
    char s[32];
    snprintf(s, sizeof(s), "%d", *cvars[which - 1].val);
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                                cvars[which - 1].name, s);
}

int MPIDI_FBOX_init(MPIR_Comm * node_comm)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    int nlocal = MPIR_Process.local_size;
    MPIDI_FBOX_config_t mine, node;

    if (g->initialized)
        return MPI_SUCCESS;
    memset(g, 0, sizeof(*g));
    g->initialized = 1;
    int rc = MPIDI_FBOX_configure(MPIR_CVAR_CH4_SHM_FASTBOX_SIZE,
                                  MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS,
                                  MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG, nlocal, &mine);
    if (rc)
        return cvar_error(rc);
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_msgs", &g->msgs, "Messages sent through fast boxes");
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_bytes", &g->bytes,
                     "Message bytes sent through fast boxes");
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_direct", &g->direct,
                     "Messages received from fast boxes straight into the posted receive "
                     "they matched");
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_fallback_full", &g->fallback[MPIDI_FBOX_FULL],
                     "Small messages left to the shared-memory queue: the peer's box was full "
                     "(a message the queue postpones counts again when retried)");
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_fallback_large", &g->fallback[MPIDI_FBOX_LARGE],
                     "Messages left to the shared-memory queue: above "
                     "MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG");
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_fallback_nobox", &g->fallback[MPIDI_FBOX_NOBOX],
                     "Small messages left to the shared-memory queue: the peer had no box left");
    MMC_PVAR_COUNTER("CH4_FASTBOX", "fbox_fallback_order", &g->fallback[MPIDI_FBOX_ORDER],
                     "Small messages left to the shared-memory queue behind earlier ones there "
                     "(a message the queue postpones counts again when retried)");
    /* boxes only where the bootstrap's node is all of this node's ranks (a
     * session's group may be fewer) */
    if (nlocal < 2 || (node_comm && node_comm->local_size != nlocal))
        goto fn_exit;

    /* the region's layout must be one on the node: its first local rank's */
    node = mine;
    mpi_errno = MMC_node_bcast(node_comm, &node, sizeof(node));
    MPIR_ERR_CHECK(mpi_errno);
    if (node.size == 0)
        goto fn_exit;

    g->cfg = node;
    g->cfg.max_msg = mine.max_msg;
    g->me = MPIR_Process.local_rank;
    g->region_bytes = MPIDI_FBOX_region_bytes(&node, nlocal);
    mpi_errno = MMC_node_shm_alloc(node_comm, "fbox", g->region_bytes, &g->region);
    MPIR_ERR_CHECK(mpi_errno);
    g->inbox = MPIDI_FBOX_inbox(g->region, &g->cfg, g->me);
    g->tx = MPL_calloc(nlocal, sizeof(*g->tx), MPL_MEM_SHM);
    g->rx = MPL_calloc(node.max_peers, sizeof(*g->rx), MPL_MEM_SHM);
    g->rx_of = MPL_malloc(nlocal * sizeof(*g->rx_of), MPL_MEM_SHM);
    g->iq_taken = MPL_calloc(nlocal, sizeof(*g->iq_taken), MPL_MEM_SHM);
    MPIR_ERR_CHKANDJUMP(!g->tx || !g->rx || !g->rx_of || !g->iq_taken ||
                        MPIDI_FBOX_hold_more() != MPI_SUCCESS, mpi_errno, MPI_ERR_OTHER,
                        "**nomem");
    for (int i = 0; i < nlocal; i++)
        g->rx_of[i] = -1;
    g->on = 1;
    g->sending = mine.size > 0;

    if (MPIR_CVAR_DEBUG_SUMMARY && g->me == 0)
        printf("fast boxes: %zu bytes each, up to %d per rank, messages up to %zu bytes; "
               "%zu KiB of shared memory for %d local ranks\n", node.size, node.max_peers,
               mine.max_msg, g->region_bytes >> 10, nlocal);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_FBOX_found(void)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    int first = g->nrx;

    MPIDI_FBOX_discover(g->inbox, &g->cfg, g->rx, &g->nrx);
    for (int i = first; i < g->nrx; i++) {
        int src = g->rx[i].src;
        g->rx_of[src] = i;
        /* the sender counts its iqueue messages from MPI_Init on */
        __atomic_store_n(&g->rx[i].box->iq_seen, g->iq_taken[src], __ATOMIC_RELEASE);
    }
}

int MPIDI_FBOX_hold_more(void)
{
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;
    /* the held_t themselves never move: records in use point into them */
    MPIDI_FBOX_held_t **held = MPL_realloc(g->held, (g->nheld + 1) * sizeof(*held),
                                           MPL_MEM_SHM);
    if (!held)
        return MPI_ERR_NO_MEM;
    g->held = held;
    held[g->nheld] = MPL_malloc(sizeof(**held), MPL_MEM_SHM);
    if (!held[g->nheld])
        return MPI_ERR_NO_MEM;
    g->nheld++;
    return MPI_SUCCESS;
}

int MPIDI_FBOX_finalize(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_FBOX_global_t *g = &MPIDI_FBOX_global;

    if (g->region) {
        mpi_errno = MMC_node_shm_free(g->region, g->region_bytes);
        g->region = NULL;
    }
    MPL_free(g->tx);
    MPL_free(g->rx);
    MPL_free(g->rx_of);
    MPL_free(g->iq_taken);
    for (int i = 0; i < g->nheld; i++)
        MPL_free(g->held[i]);
    MPL_free(g->held);
    g->on = g->sending = g->initialized = 0;
    return mpi_errno;
}
