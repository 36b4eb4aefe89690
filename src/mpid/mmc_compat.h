/*
 * mpich-multichannel: the ch4 interfaces that differ between the MPICH
 * versions our modules build against (4.0.2, 4.2.1 and 5.0.x, doc/mpich-5.0.md;
 * maint/overlay refuses others).  Each difference is named
 * here once, so the modules keep one copy of their code: a module tests the
 * macros and feature flags below, never MPICH_NUMVERSION.  Included by every
 * module after mpidimpl.h (MPICH_NUMVERSION).
 */
#ifndef MMC_COMPAT_H_INCLUDED
#define MMC_COMPAT_H_INCLUDED

#ifndef MPICH_NUMVERSION
#error "mmc_compat.h needs mpi.h (include mpidimpl.h first)"
#endif

#if MPICH_NUMVERSION >= MPICH_CALC_VERSION(4, 1, 0, MPICH_RELEASE_TYPE_ALPHA, 0)

/* 4.1+: progress functions report what they did through *made_progress, and
 * ch4's own pass polls shared memory first and skips the netmod once shared
 * memory (or an earlier VCI of the pass) made progress. */
#define MMC_PROGRESS_OUT (&made_progress)
#define MMC_PASS_MADE_PROGRESS made_progress
#define MMC_STOCK_SHM_FIRST 1
#define MMC_ANYSRC_PARTNER(req_) ((req_)->dev.anysrc_partner)
/* a netmod's progress entry: MPIDI_NM_progress(int vci, MMC_PROGRESS_PARAM) */
#define MMC_PROGRESS_PARAM int *made_progress
#define MMC_PROGRESS_MADE(made_) do { if (made_) *made_progress = 1; } while (0)
/* the size of MPIDIG's pack buffers (16 KiB by default; 4.0: 68 KiB) */
#define MMC_PACK_BUFFER_SIZE MPIR_CVAR_CH4_PACK_BUFFER_SIZE
/* what MPICH's IPC receive does once a message's data is in place: the
 * request's target completion callback (Ssend acks, any-source partners,
 * unexpected matches depend on it) */
#define MMC_IPC_RECV_COMPLETE(rreq_) MPIDIG_REQUEST(rreq_, req->target_cmpl_cb) (rreq_)
/* VCIs a message may name: the implicit ones and those reserved for explicit use */
#define MMC_N_TOTAL_VCIS (MPIDI_global.n_total_vcis)
/* VCIs MPI_Init is asked for, and whether the CVARs asking are in range */
#define MMC_VCI_CVARS "MPIR_CVAR_CH4_NUM_VCIS + MPIR_CVAR_CH4_RESERVE_VCIS"
#define MMC_VCIS_ASKED (MPIR_CVAR_CH4_NUM_VCIS + MPIR_CVAR_CH4_RESERVE_VCIS)
#define MMC_VCI_CVARS_IN_RANGE (MPIR_CVAR_CH4_NUM_VCIS >= 1 && MPIR_CVAR_CH4_RESERVE_VCIS >= 0)
#define MMC_TYPEREP_PACK(buf_, count_, type_, off_, out_, max_, actual_) \
    MPIR_Typerep_pack(buf_, count_, type_, off_, out_, max_, actual_, MPIR_TYPEREP_FLAG_NONE)
#define MMC_TYPEREP_UNPACK(in_, size_, buf_, count_, type_, off_, actual_) \
    MPIR_Typerep_unpack(in_, size_, buf_, count_, type_, off_, actual_, MPIR_TYPEREP_FLAG_NONE)
/* a posix eager receive transaction's VCIs (4.0: "vsi") */
#define MMC_EAGER_SRC_VCI src_vci
#define MMC_EAGER_DST_VCI dst_vci
/* the posix layer's state of one VCI (4.0: "vsi") */
#define MMC_POSIX_PER_VCI(v_) (MPIDI_POSIX_global.per_vci[v_])
/* shared memory among the ranks of a communicator of one node (4.0: and
 * whether every rank could map it) */
#define MMC_COMM_SHM_ALLOC(comm_, len_, ptr_, failed_) MPIDU_shm_alloc(comm_, len_, ptr_)

#else /* 4.0.x */

/* 4.0: the second argument of the progress functions is a "blocking" flag
 * (always 0 in ch4's pass), and ch4's pass polls the netmod, then shared
 * memory, every time. */
#define MMC_PROGRESS_OUT 0
/* 4.0: posix's collectives take errflag by pointer (4.1+ by value) */
#define MMC_POSIX_COLL_FAILED (*errflag != MPIR_ERR_NONE)
#define MMC_PASS_MADE_PROGRESS 0
#define MMC_STOCK_SHM_FIRST 0
#define MMC_ANYSRC_PARTNER(req_) ((req_)->dev.anysource_partner_request)
#define MMC_PROGRESS_PARAM int blocking
#define MMC_PROGRESS_MADE(made_) ((void) (made_))
#define MMC_PACK_BUFFER_SIZE MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE
#define MMC_N_TOTAL_VCIS (MPIDI_global.n_vcis)
/* 4.0 has no reserved VCIs and takes a count below 1 as 1 */
#define MMC_VCI_CVARS "MPIR_CVAR_CH4_NUM_VCIS"
#define MMC_VCIS_ASKED MPIR_CVAR_CH4_NUM_VCIS
#define MMC_VCI_CVARS_IN_RANGE 1
#define MMC_TYPEREP_PACK MPIR_Typerep_pack
#define MMC_TYPEREP_UNPACK MPIR_Typerep_unpack
#define MMC_EAGER_SRC_VCI src_vsi
#define MMC_EAGER_DST_VCI dst_vsi
#define MMC_POSIX_PER_VCI(v_) (MPIDI_POSIX_global.per_vsi[v_])
#define MMC_COMM_SHM_ALLOC(comm_, len_, ptr_, failed_) \
    MPIDU_shm_alloc(comm_, len_, ptr_, failed_)
#define MMC_IPC_RECV_COMPLETE(rreq_)                                    \
    do {                                                                \
        MPIR_Datatype_release_if_not_builtin(MPIDIG_REQUEST(rreq_, datatype)); \
        MPID_Request_complete(rreq_);                                   \
    } while (0)

#endif

#if MPICH_NUMVERSION >= MPICH_CALC_VERSION(5, 0, 0, MPICH_RELEASE_TYPE_ALPHA, 0)
/* 5.0: a VCI's lock has a macro of its own, and ch4's progress test may end
 * in MPICH's own throttle (a yield after many empty passes) */
#define MMC_VCI_LOCK(v_) MPIDI_VCI_LOCK(v_)
#define MMC_PROGRESS_THROTTLE MPIR_CVAR_CH4_PROGRESS_THROTTLE
/* in posix's collectives: an earlier step of ch4's composition failed */
#define MMC_POSIX_COLL_FAILED MPIR_COLL_ATTR_HAS_ERR(coll_attr)
/* the world rank of a rank of comm (5.0: -1 for a process of another world) */
#define MMC_GRANK(rank_, comm_) MPIDIU_get_grank(rank_, comm_)
/* the local rank of a world rank on this node (-1: not on it) */
#define MMC_LOCAL_RANK_OF(grank_) (MPIDI_SHM_global.local_ranks[grank_])
/* MPIDIG's header: a context id is an int, and error bits 0 are none */
typedef int MMC_context_id_t;
#define MMC_ERR_NONE 0
/* the netmod API: no init_world; the world is set up in the commit of a
 * bootstrap communicator (comm_world, or a session's), the VCIs of a
 * communicator by comm_set_vcis, processes are named by lpids, and MPIDIG may
 * offer a netmod tag-matched transfers (am_can_do_tag) */
#define MMC_CH4_BOOTSTRAP_COMM 1
#define MMC_COMM_IS_BOOTSTRAP(comm_) ((comm_)->attr & MPIR_COMM_ATTR__BOOTSTRAP)
/* the source a posted receive waits for */
#define MMC_RECV_SOURCE(rreq_) ((rreq_)->status.MPI_SOURCE)
/* MPIDIG's test of a posted receive against a local message, and what a
 * match sets (5.0 keeps a posted receive's source and tag in its status) */
#define MMC_POSTED_MATCH(rank_, tag_, ctx_, rreq_) \
    MPIDIG_match_request(rank_, tag_, ctx_, rreq_, true, MPIDIG_PT2PT_POSTED)
#define MMC_RECV_MATCHED(rreq_, rank_, tag_)    \
    do {                                        \
        (rreq_)->status.MPI_SOURCE = (rank_);   \
        (rreq_)->status.MPI_TAG = (tag_);       \
    } while (0)
#define MMC_PRECV_INIT(buf_, parts_, count_, type_, rank_, tag_, comm_, info_, req_) \
    MPIDIG_mpi_precv_init(buf_, parts_, count_, type_, rank_, tag_, comm_, info_, false, req_)

/* What the node's ranks share during MPI_Init.  5.0 sets up shared memory
 * in the commit of the world communicator, with its node communicator
 * (node_comm) working and no MPIDU_Init_shm; the root creates a segment
 * every rank maps, and unlinks its name once all have it, so a crash leaves
 * nothing behind. */
#include <sys/mman.h>

#define MMC_NODE_COMM(comm_) MPIR_Comm_get_node_comm(comm_)
/* bytes, as MPICH's internal calls must name them (5.0 refuses the user's
 * MPI_BYTE handle there) */
#define MMC_BYTE MPIR_BYTE_INTERNAL

MPL_STATIC_INLINE_PREFIX int MMC_node_bcast(MPIR_Comm * node_comm, void *buf, int len)
{
    return MPIR_Bcast_impl(buf, len, MPIR_BYTE_INTERNAL, 0, node_comm, MPIR_COLL_ATTR_SYNC);
}

/* all gets every local rank's len bytes, local rank i's at i * len (the
 * world's node_comm orders them as MPIR_Process.node_local_map does) */
MPL_STATIC_INLINE_PREFIX int MMC_node_allgather(MPIR_Comm * node_comm, const void *mine, int len,
                                                void *all)
{
    return MPIR_Allgather_impl(mine, len, MPIR_BYTE_INTERNAL, all, len, MPIR_BYTE_INTERNAL,
                               node_comm, MPIR_COLL_ATTR_SYNC);
}

MPL_STATIC_INLINE_PREFIX int MMC_node_shm_alloc(MPIR_Comm * node_comm, const char *what,
                                                size_t len, void **ptr)
{
    int mpi_errno = MPI_SUCCESS;
    char name[64];
    bool root = false;
    snprintf(name, sizeof(name), "/mpich_%s_%x_%d", what, MPIR_Process.world_id,
             MPIR_Process.node_map[MPIR_Process.rank]);
    *ptr = MPL_initshm_open(name, (int) len, &root);
    /* every rank joins the barrier, one whose mapping failed too */
    mpi_errno = MPIR_Barrier_impl(node_comm, MPIR_COLL_ATTR_SYNC);
    if (root)
        shm_unlink(name);
    if (!mpi_errno && !*ptr)
        mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                         MPI_ERR_OTHER, "**nomem", 0);
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MMC_node_shm_free(void *ptr, size_t len)
{
    return munmap(ptr, len) == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}
#else /* 4.x */
#include "mpidu_init_shm.h"

#define MMC_VCI_LOCK(v_) (MPIDI_VCI(v_).lock)
#define MMC_PROGRESS_THROTTLE 0
#ifndef MMC_POSIX_COLL_FAILED
#define MMC_POSIX_COLL_FAILED (errflag != MPIR_ERR_NONE)
#endif
#define MMC_GRANK(rank_, comm_) MPIDIU_rank_to_lpid(rank_, comm_)
#define MMC_LOCAL_RANK_OF(grank_) (MPIDI_POSIX_global.local_ranks[grank_])
typedef MPIR_Context_id_t MMC_context_id_t;
#define MMC_ERR_NONE MPIR_ERR_NONE
/* init_world, init_vcis (4.1+) and post_init set up the world; dynamic
 * processes are named by gpids */
#define MMC_CH4_BOOTSTRAP_COMM 0
#define MMC_COMM_IS_BOOTSTRAP(comm_) 0
#define MMC_RECV_SOURCE(rreq_) MPIDIG_REQUEST(rreq_, u.recv.source)
#define MMC_POSTED_MATCH(rank_, tag_, ctx_, rreq_) \
    MPIDIG_match_request(rank_, tag_, ctx_, rreq_, MPIDIG_PT2PT_POSTED)
#define MMC_RECV_MATCHED(rreq_, rank_, tag_)            \
    do {                                                \
        MPIDIG_REQUEST(rreq_, u.recv.source) = (rank_); \
        MPIDIG_REQUEST(rreq_, u.recv.tag) = (tag_);     \
        (rreq_)->status.MPI_SOURCE = (rank_);           \
        (rreq_)->status.MPI_TAG = (tag_);               \
    } while (0)
#define MMC_PRECV_INIT MPIDIG_mpi_precv_init

/* 4.x: MPIDU_Init_shm, set up before the shared-memory modules, over all of
 * MPI_Init's local ranks (node_comm is not used: NULL) */
#define MMC_NODE_COMM(comm_) NULL
#define MMC_BYTE MPI_BYTE

MPL_STATIC_INLINE_PREFIX int MMC_node_allgather(MPIR_Comm * node_comm, const void *mine, int len,
                                                void *all)
{
    int mpi_errno = MPIDU_Init_shm_put((void *) mine, len);
    if (!mpi_errno)
        mpi_errno = MPIDU_Init_shm_barrier();
    for (int i = 0; !mpi_errno && i < MPIR_Process.local_size; i++)
        mpi_errno = MPIDU_Init_shm_get(i, len, (char *) all + (size_t) i * len);
    /* the slots are reused by whoever exchanges next */
    if (!mpi_errno)
        mpi_errno = MPIDU_Init_shm_barrier();
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MMC_node_bcast(MPIR_Comm * node_comm, void *buf, int len)
{
    /* every rank puts; the others read local rank 0's */
    int mpi_errno = MPIDU_Init_shm_put(buf, len);
    if (!mpi_errno)
        mpi_errno = MPIDU_Init_shm_barrier();
    if (!mpi_errno && MPIR_Process.local_rank != 0)
        mpi_errno = MPIDU_Init_shm_get(0, len, buf);
    if (!mpi_errno)
        mpi_errno = MPIDU_Init_shm_barrier();
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MMC_node_shm_alloc(MPIR_Comm * node_comm, const char *what,
                                                size_t len, void **ptr)
{
    return MPIDU_Init_shm_alloc(len, ptr);
}

MPL_STATIC_INLINE_PREFIX int MMC_node_shm_free(void *ptr, size_t len)
{
    return MPIDU_Init_shm_free(ptr);
}
#endif

/* A module's MPI_T performance variable: read-only, continuous, in the
 * module's category (a macro: MPIR_T is only needed where it is used). */
#define MMC_PVAR(cat_, class_, dtype_, name_, addr_, desc_)                  \
    MPIR_T_PVAR_REGISTER_impl(class_, dtype_, name_, addr_, 1, MPI_T_ENUM_NULL, \
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT, \
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS, \
                              NULL, NULL, cat_, desc_)
#define MMC_PVAR_COUNTER(cat_, name_, addr_, desc_) \
    MMC_PVAR(cat_, MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, name_, addr_, desc_)

/* MPI_Init: more VCIs asked for than the build has (MMC_VCI_CVARS) is the
 * user's error, reported naming the CVARs, where MPICH asserts */
#define MMC_CHECK_VCIS_ASKED(mpi_errno_)                                        \
    do {                                                                        \
        int mmc_max_ = MPL_MIN(MPIDI_CH4_MAX_VCIS, MPIR_REQUEST_NUM_POOLS);     \
        if (!MMC_VCI_CVARS_IN_RANGE || MMC_VCIS_ASKED > mmc_max_) {             \
            char mmc_asked_[96];                                                \
            snprintf(mmc_asked_, sizeof(mmc_asked_), "%d VCIs; this build has at most %d", \
                     MMC_VCIS_ASKED, mmc_max_);                                 \
            MPIR_ERR_SETANDJUMP2(mpi_errno_, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s", \
                                 MMC_VCI_CVARS, mmc_asked_);                    \
        }                                                                       \
    } while (0)

/* whether a rank of comm is on this node (4.0's MPIDIU_rank_is_local is gone in 4.1) */
#define MMC_RANK_IS_LOCAL(rank_, comm_) MPIDIU_av_is_local(MPIDIU_comm_rank_to_av(comm_, rank_))

#endif /* MMC_COMPAT_H_INCLUDED */
