/*
 * mpich-multichannel: CMA CVARs, pvars and the availability check at
 * MPI_Init (see cma_post.h and doc/cma.md).
 */
#include "mpidimpl.h"
#include "cma_post.h"
#include "cma_policy.h"
#include "mmc_compat.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH4_CMA
      description : cvars that control the CMA single-copy path of ch4 shared memory

cvars:
    - name        : MPIR_CVAR_CH4_CMA_ENABLE
      category    : CH4_CMA
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Default true: a large message between ranks of one node is moved with one
        process_vm_readv copy (Cross Memory Attach) when the kernel allows it, which
        MPI_Init checks (Yama ptrace_scope, user namespaces, a test read between the local
        ranks); a read refused later sends that message through the copy path. false: every
        message goes through shared memory with two copies. MPIR_CVAR_DEBUG_SUMMARY=1
        prints whether CMA is used and why not.

    - name        : MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD
      category    : CH4_CMA
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Smallest message in bytes sent with CMA; smaller ones go through shared memory.
        Default -1: 4194304 (4 MiB) on MPICH 4.x, 1048576 (1 MiB) on 5.0, chosen by
        measurement (doc/cma.md): on the machine measured, smaller messages are faster
        through shared memory. 0 sends every message with CMA. Must be -1 or more.

    - name        : MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD
      category    : CH4_CMA
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Smallest CMA message in bytes that is split between both ranks' cores: the sender,
        waiting for it, writes the second half with process_vm_writev while the receiver
        reads the first (contiguous receive buffers only). A split message needs the sender
        to be in an MPI call, as a rendezvous does. Default -1: as the P2P threshold's default
        (4 MiB on MPICH 4.x, 1 MiB on 5.0), chosen by measurement (doc/cma.md). 0 never
        splits. Must be -1 or more.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_CMA_global_t MPIDI_CMA_global;

/* read by the local ranks' test reads */
static volatile uint64_t probe_word;

typedef struct {
    uint64_t userns;
    uint64_t probe_addr;
    uint64_t probe_val;
    int32_t pid;
} cma_info_t;

/* a threshold CVAR: -1 = the default, else bytes */
static int threshold(const char *name, int val, size_t dflt, size_t * out)
{
    if (val < -1) {
        char s[32];
        snprintf(s, sizeof(s), "%d", val);
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s", name, s);
    }
    *out = val < 0 ? dflt : (size_t) val;
    return MPI_SUCCESS;
}

static int split_cb(void *am_hdr, void *data, MPI_Aint in_data_sz, uint32_t attr,
                    MPIR_Request ** req)
{
    const MPIDI_CMA_split_hdr_t *hdr = am_hdr;
    if (attr & MPIDIG_AM_ATTR__IS_ASYNC)
        *req = NULL;
    switch (hdr->op) {
        case MPIDI_CMA_WRITE:
            return MPIDI_CMA_write_part(hdr);
        case MPIDI_CMA_WRITTEN:
            return MPIDI_CMA_written(hdr);
    }
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_FATAL, __func__, __LINE__, MPI_ERR_INTERN,
                                "**intern", "**intern %s", "unknown CMA split message");
}

int MPIDI_CMA_init_local(void)
{
    int mpi_errno;
    MPIDI_CMA_global_t *g = &MPIDI_CMA_global;

    mpi_errno = threshold("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
                          MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD,
                          MPIDI_CMA_THRESHOLD_DEFAULT(MPICH_NUMVERSION),
                          &g->threshold);
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = threshold("MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD",
                          MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD,
                          MPIDI_CMA_SPLIT_DEFAULT(MPICH_NUMVERSION),
                          &g->split_threshold);
    if (mpi_errno)
        return mpi_errno;
    /* every process registers it, in the same order, so the id matches */
    g->split_handler = MPIDIG_am_reg_cb_dynamic(NULL, &split_cb);
    if (g->split_handler < 0)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**intern", "**intern %s",
                                    "no AM handler id left for CMA");
    g->enabled = 0;
    g->pid = (int32_t) getpid();
    g->msgs = g->bytes = g->fallbacks = g->splits = 0;
    MMC_PVAR_COUNTER("CH4_CMA", "cma_msgs", &g->msgs,
                     "Messages received with CMA (process_vm_readv)");
    MMC_PVAR_COUNTER("CH4_CMA", "cma_bytes", &g->bytes, "Bytes received with CMA");
    MMC_PVAR_COUNTER("CH4_CMA", "cma_fallbacks", &g->fallbacks,
                     "Messages sent with CMA whose read the kernel refused: delivered through "
                     "shared memory instead");
    MMC_PVAR_COUNTER("CH4_CMA", "cma_splits", &g->splits,
                     "Messages received with CMA whose second part the sender wrote "
                     "(process_vm_writev) while this rank read the first");
    return MPI_SUCCESS;
}

/* Withdraws the PR_SET_PTRACER_ANY we set (after the peers' probes). */
static void ptracer_reset(void)
{
    if (MPIDI_CMA_global.ptracer_any)
        prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    MPIDI_CMA_global.ptracer_any = 0;
}

/* Yama's ptrace_scope, -1 when Yama is absent */
static int read_ptrace_scope(void)
{
    int v = -1;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int have_cap_sys_ptrace(void)
{
    char line[256];
    unsigned long long caps = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "CapEff: %llx", &caps) == 1)
            break;
    fclose(f);
    return (caps >> 19) & 1;    /* CAP_SYS_PTRACE */
}

static uint64_t userns_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/user", &st) == 0 ? (uint64_t) st.st_ino : 0;
}

/* 0 when the peer's test word reads back as published, else an errno */
static int probe(const cma_info_t * peer)
{
    uint64_t v = 0;
    struct iovec l = { &v, sizeof(v) }, r = { (void *) (uintptr_t) peer->probe_addr, sizeof(v) };
    ssize_t n = process_vm_readv(peer->pid, &l, 1, &r, 1, 0);
    if (n < 0)
        return errno;
    return n == sizeof(v) && v == peer->probe_val ? 0 : EIO;
}

int MPIDI_CMA_comm_bootstrap(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_CMA_global_t *g = &MPIDI_CMA_global;
    int nlocal = MPIR_Process.local_size, me = MPIR_Process.local_rank;
    MPIDI_CMA_avail_t why = MPIDI_CMA_OK;
    cma_info_t *all = NULL;

    if (g->ok)
        goto fn_exit;           /* 5.0: a later bootstrap communicator (sessions) */
    g->ok = MPL_calloc(MPIR_Process.size, 1, MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!g->ok, mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (nlocal < 2)
        goto fn_exit;

    /* Yama scope 1 lets only ancestors read our memory; the local ranks are not
     * ours, and PR_SET_PTRACER names one process or any: any process of this
     * user may then attach to us (doc/cma.md), for as long as CMA is in use */
    int scope = read_ptrace_scope();
    if (MPIR_CVAR_CH4_CMA_ENABLE && scope == 1)
        g->ptracer_any = prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0;

    /* every local rank takes part in the exchange, enabled or not */
    cma_info_t mine = {.userns = userns_id(), .probe_addr = (uint64_t) (uintptr_t) & probe_word,
        .pid = g->pid
    };
    probe_word = mine.probe_val = ((uint64_t) mine.pid << 32) ^ 0x6d6d63636d61ULL;
    all = MPL_malloc(nlocal * sizeof(*all), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!all, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = MMC_node_allgather(MMC_NODE_COMM(comm), &mine, sizeof(mine), all);
    MPIR_ERR_CHECK(mpi_errno);
    int usable = 0, cap = have_cap_sys_ptrace();
    for (int i = 0; i < nlocal; i++) {
        if (i == me)
            continue;
        MPIDI_CMA_avail_t a = MPIDI_CMA_availability(MPIR_CVAR_CH4_CMA_ENABLE, scope, cap,
                                                     all[i].userns == mine.userns,
                                                     MPIR_CVAR_CH4_CMA_ENABLE ? probe(&all[i]) :
                                                     0);
        if (a == MPIDI_CMA_OK) {
            g->ok[MPIR_Process.node_local_map[i]] = 1;
            usable++;
        } else if (why == MPIDI_CMA_OK) {
            why = a;
        }
    }
    g->enabled = usable > 0;
    if (!g->enabled)
        ptracer_reset();
    if (MPIR_CVAR_DEBUG_SUMMARY && me == 0) {
        if (why == MPIDI_CMA_OK && g->split_threshold)
            printf("CMA single-copy: on, messages of %zu bytes and more, split from %zu bytes\n",
                   g->threshold, g->split_threshold);
        else if (why == MPIDI_CMA_OK)
            printf("CMA single-copy: on, messages of %zu bytes and more, never split\n",
                   g->threshold);
        else
            printf("CMA single-copy: %s with %d of %d local ranks: %s\n",
                   usable ? "on" : "off", usable, nlocal - 1, MPIDI_CMA_avail_str(why));
        fflush(stdout);
    }

  fn_exit:
    MPL_free(all);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_CMA_mpi_finalize_hook(void)
{
    ptracer_reset();
    MPL_free(MPIDI_CMA_global.ok);
    MPIDI_CMA_global.ok = NULL;
    MPIDI_CMA_global.enabled = 0;
    return MPI_SUCCESS;
}
