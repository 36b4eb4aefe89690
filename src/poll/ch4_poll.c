/*
 * mpich-multichannel: polling arbiter CVARs, MPI_T performance variables and
 * initialization (called from MPID_Init).
 */
#include "mpidimpl.h"
#include "ch4_poll.h"

#include <sched.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH4_POLL
      description : cvars that control how ch4 progress shares polls between shared memory and the netmod

cvars:
    - name        : MPIR_CVAR_CH4_POLL_POLICY
      category    : CH4_POLL
      type        : enum
      default     : adaptive
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        How ch4 progress divides its polls between shared memory and the netmod; shared memory is polled on every pass, the policy decides how often the netmod is. Default adaptive (best in bench/run-policy-bench, see doc/arbiter.md).
          roundrobin - both channels on every pass (MPICH 4.0's own order).
          stock      - the MPICH version's own order: on 4.0, roundrobin; on 4.1 and later, shared memory first and the netmod only when shared memory made no progress.
          static     - the netmod once every MPIR_CVAR_CH4_POLL_STATIC_RATIO passes.
          dynamic    - ratio m / (n + 1) recomputed every MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY messages (m from shared memory, n from the netmod).
          adaptive   - dynamic, but the netmod is polled on every pass while a wait needs it, and at the larger of MPIR_CVAR_CH4_POLL_STATIC_RATIO and the dynamic ratio while a wait needs only shared memory.
        May be changed at run time with MPI_T_cvar_write: the new policy starts at the next progress pass; a value written then that is not one of these is ignored with a message on stderr.

    - name        : MPIR_CVAR_CH4_POLL_STATIC_RATIO
      category    : CH4_POLL
      type        : int
      default     : 50
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Shared-memory polls per netmod poll under the static policy, and the floor under
        adaptive while every awaited request is intra-node. Default 50. 1 polls the netmod
        on every pass; must be 1 or more; a value above MPIR_CVAR_CH4_POLL_MAX_RATIO is
        lowered to it. May be changed at run time like MPIR_CVAR_CH4_POLL_POLICY.

    - name        : MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY
      category    : CH4_POLL
      type        : int
      default     : 10
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Messages between ratio updates under the dynamic and adaptive policies; the ratio
        is computed from exactly these messages. Default 10; must be 1 or more.

    - name        : MPIR_CVAR_CH4_POLL_MAX_RATIO
      category    : CH4_POLL
      type        : int
      default     : 1000
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Upper bound of the shared-memory to netmod polling ratio under every policy, so
        the netmod is polled at least once every this many passes. Default 1000; must be
        1 or more (1 makes every policy round-robin).

    - name        : MPIR_CVAR_CH4_POLL_YIELD_AFTER
      category    : CH4_POLL
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Consecutive progress passes that discover nothing after which a rank calls
        sched_yield() at the end of each further empty pass, giving its core to the rank it
        waits for; it keeps polling every channel. Default -1 (auto): after 32 passes when
        more ranks of the job run on this machine than CPUs their affinity masks allow,
        never otherwise, and never where MPICH's own MPIR_CVAR_CH4_PROGRESS_THROTTLE (5.0)
        is on (decided at MPI_Init, see doc/arbiter.md). 0 never yields (stock ch4). Must
        be -1 or more and the same on every rank.

    - name        : MPIR_CVAR_CH4_POLL_WAIT_MODE
      category    : CH4_POLL
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        What a blocking wait (MPI_Wait, MPI_Recv, a blocking collective, MPI_Finalize; never MPI_Test or MPI_Iprobe) does while it finds nothing. Default auto. Must be the same on every rank.
          spin  - polls on (MPIR_CVAR_CH4_POLL_YIELD_AFTER is ignored: it never yields).
          yield - polls on, with sched_yield() after MPIR_CVAR_CH4_POLL_YIELD_AFTER empty passes (-1: 32, oversubscribed or not).
          sleep - after MPIR_CVAR_CH4_POLL_SPIN_COUNT empty passes, blocks in the kernel until a local sender signals it or the netmod has work (ch4:tcp's sockets, ch4:ucx's worker, ch4:ofi's completion queue; at most 10 ms at a time); yields as MPIR_CVAR_CH4_POLL_YIELD_AFTER says before that. Under ch4:ucx it asks UCX for wake-ups, which leaves out the transports that cannot give them. Under ch4:ofi it opens the completion queue with a wait fd (FI_WAIT_FD); with a provider that has none, or more than one queue, waits yield instead (said once on stderr).
          auto  - sleep where more ranks of the job run on the machine than CPUs they may use, spin otherwise (doc/arbiter.md).

    - name        : MPIR_CVAR_CH4_POLL_SPIN_COUNT
      category    : CH4_POLL
      type        : int
      default     : 2000
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Empty passes of a blocking wait before it sleeps, where MPIR_CVAR_CH4_POLL_WAIT_MODE
        makes it sleep. Default 2000. 0 sleeps after the first empty pass (and the one that
        rechecks); must be 0 or more.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_POLL_arbiter_t MPIDI_POLL_global;

/* The policy CVARs as the arbiter last read them (MPIDI_POLL_follow_cvars) */
int MPIDI_POLL_cvar_policy, MPIDI_POLL_cvar_static_ratio;

/* -1: not a value of the enum (possible only through MPI_T_cvar_write) */
static int policy_of_cvar(void)
{
    switch (MPIR_CVAR_CH4_POLL_POLICY) {
        case MPIR_CVAR_CH4_POLL_POLICY_roundrobin:
            return MPIDI_POLL_POLICY_ROUNDROBIN;
        case MPIR_CVAR_CH4_POLL_POLICY_static:
            return MPIDI_POLL_POLICY_STATIC;
        case MPIR_CVAR_CH4_POLL_POLICY_dynamic:
            return MPIDI_POLL_POLICY_DYNAMIC;
        case MPIR_CVAR_CH4_POLL_POLICY_adaptive:
            return MPIDI_POLL_POLICY_ADAPTIVE;
        case MPIR_CVAR_CH4_POLL_POLICY_stock:
            return MPIDI_POLL_POLICY_STOCK;
        default:
            return -1;
    }
}

/* An MPI_T_cvar_write of the policy or the static ratio takes effect at the
 * next progress pass.  Progress cannot return an error for it, so an invalid
 * value is reported on stderr once per write and ignored: the arbiter keeps
 * what it had. */
void MPIDI_POLL_follow_cvars(void)
{
    MPIDI_POLL_cvar_policy = MPIR_CVAR_CH4_POLL_POLICY;
    MPIDI_POLL_cvar_static_ratio = MPIR_CVAR_CH4_POLL_STATIC_RATIO;
    int policy = policy_of_cvar();
    if (policy < 0 || MPIDI_POLL_set_policy(&MPIDI_POLL_global, (MPIDI_POLL_policy_t) policy,
                                            MPIR_CVAR_CH4_POLL_STATIC_RATIO) != 0)
        fprintf(stderr, "ch4 poll: MPIR_CVAR_CH4_POLL_POLICY=%d, MPIR_CVAR_CH4_POLL_STATIC_RATIO="
                "%d written at run time: invalid, ignored\n", MPIR_CVAR_CH4_POLL_POLICY,
                MPIR_CVAR_CH4_POLL_STATIC_RATIO);
}

static MPIDI_POLL_mode_t mode_of_cvar(void)
{
    switch (MPIR_CVAR_CH4_POLL_WAIT_MODE) {
        case MPIR_CVAR_CH4_POLL_WAIT_MODE_spin:
            return MPIDI_POLL_MODE_SPIN;
        case MPIR_CVAR_CH4_POLL_WAIT_MODE_yield:
            return MPIDI_POLL_MODE_YIELD;
        case MPIR_CVAR_CH4_POLL_WAIT_MODE_sleep:
            return MPIDI_POLL_MODE_SLEEP;
        default:
            return MPIDI_POLL_MODE_AUTO;
    }
}

/* MPICH 4.0.2 registers enum CVARs as a bare MPI_INT: give ours an MPI_T
 * enum, so that a tool or the application can look up the value of each
 * name (MPI_T_enum_get_item) before MPI_T_cvar_write. */
struct enum_item {
    const char *name;
    int value;
};

static void register_enum(const char *cvar_name, const struct enum_item *items, int n)
{
    cvar_table_entry_t *cvar = LOOKUP_CVAR_BY_NAME(cvar_name);
    if (cvar->enumtype != MPI_T_ENUM_NULL)
        return;
    MPI_T_enum e;
    MPIR_T_enum_create(cvar_name, &e);
    for (int i = 0; i < n; i++)
        MPIR_T_enum_add_item(e, items[i].name, items[i].value);
    cvar->enumtype = e;
}

static void register_enums(void)
{
    static const struct enum_item policies[] = {
        {"roundrobin", MPIR_CVAR_CH4_POLL_POLICY_roundrobin},
        {"static", MPIR_CVAR_CH4_POLL_POLICY_static},
        {"dynamic", MPIR_CVAR_CH4_POLL_POLICY_dynamic},
        {"adaptive", MPIR_CVAR_CH4_POLL_POLICY_adaptive},
        {"stock", MPIR_CVAR_CH4_POLL_POLICY_stock},
    }, modes[] = {
        {"spin", MPIR_CVAR_CH4_POLL_WAIT_MODE_spin},
        {"yield", MPIR_CVAR_CH4_POLL_WAIT_MODE_yield},
        {"sleep", MPIR_CVAR_CH4_POLL_WAIT_MODE_sleep},
        {"auto", MPIR_CVAR_CH4_POLL_WAIT_MODE_auto},
    };
    register_enum("MPIR_CVAR_CH4_POLL_POLICY", policies, 5);
    register_enum("MPIR_CVAR_CH4_POLL_WAIT_MODE", modes, 4);
}

static void register_pvars(void)
{
    MPIDI_POLL_arbiter_t *a = &MPIDI_POLL_global;
    const struct {
        const char *name;
        unsigned long long *addr;
        const char *desc;
    } counters[] = {
        {"ch4_poll_shm_polls", &a->shm_polls, "Progress passes that polled shared memory"},
        {"ch4_poll_nm_polls", &a->nm_polls, "Progress passes that polled the netmod"},
        {"ch4_poll_nm_skipped", &a->nm_skipped,
         "Progress passes on which the arbiter skipped the netmod"},
        {"ch4_poll_nm_idle", &a->nm_idle, "Of those, passes on which the policy was due to "
         "poll the netmod and the netmod had nothing to wait for"},
        {"ch4_poll_shm_msgs", &a->msgs[MPIDI_POLL_SHM],
         "Incoming messages discovered by shared memory"},
        {"ch4_poll_nm_msgs", &a->msgs[MPIDI_POLL_NM], "Incoming messages discovered by the netmod"},
        {"ch4_poll_progressed", &a->progressed, "Progress passes that took later pieces of "
         "messages under way (posix queue segments, ch4:tcp bytes) and no new message"},
        {"ch4_poll_ratio_updates", &a->ratio_updates, "Times the dynamic ratio was recomputed"},
        {"ch4_poll_yields", &a->yields, "Empty progress passes that ended with sched_yield()"},
        {"ch4_poll_flag_yields", &a->flag_yields,
         "sched_yield() calls in MPICH's spin on a shared-memory collective's flag"},
        {"ch4_poll_flag_passes", &a->flag_passes,
         "Progress passes made from that spin (one every MPIDI_POLL_FLAG_PASS_YIELDS yields)"},
        {"ch4_poll_sleeps", &a->sleeps, "Blocking waits that slept in the kernel"},
        {"ch4_poll_sleeps_woken", &a->woken,
         "Of those, ended by a signal or the netmod before the timeout"},
        {"ch4_poll_sleep_ns", &a->slept_ns, "Nanoseconds spent asleep"},
        {"ch4_poll_wakeups_sent", &MPIDI_POLL_wake.sent, "Wake-ups sent to sleeping local ranks"},
        {"ch4_poll_wakeups_received", &MPIDI_POLL_wake.received,
         "Wake-ups received while asleep"},
    };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        MMC_PVAR_COUNTER("CH4_POLL", counters[i].name, counters[i].addr, counters[i].desc);
    MMC_PVAR("CH4_POLL", MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED, "ch4_poll_ratio",
             &a->ratio, "Current shared-memory polls per netmod poll (outside wait hints)");
    MMC_PVAR("CH4_POLL", MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED, "ch4_poll_yield_after",
             &a->yield_after, "Empty passes before a rank yields (0: never)");
    MMC_PVAR("CH4_POLL", MPI_T_PVAR_CLASS_LEVEL, MPI_INT, "ch4_poll_sleep",
             &a->sleep, "Whether blocking waits sleep (MPIR_CVAR_CH4_POLL_WAIT_MODE)");
}

/* The kernel this rank runs on: a hash of its boot id, which network
 * namespaces and containers on one machine share (the host name, when there
 * is no boot id). */
static uint64_t machine_id(void)
{
    char id[256] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id, sizeof(id), f))
            id[0] = '\0';
        fclose(f);
    }
    if (!id[0] && gethostname(id, sizeof(id) - 1) != 0)
        id[0] = '\0';
    uint64_t h = 14695981039346656037ULL;       /* FNV-1a */
    for (const char *c = id; *c; c++)
        h = (h ^ (unsigned char) *c) * 1099511628211ULL;
    return h;
}

static void my_place(MPIDI_POLL_place_t * p)
{
    cpu_set_t set;
    memset(p, 0, sizeof(*p));
    p->machine = machine_id();
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE && i < 64 * MPIDI_POLL_CPU_WORDS; i++)
            if (CPU_ISSET(i, &set))
                p->cpus[i / 64] |= 1ULL << (i % 64);
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < n && i < 64 * MPIDI_POLL_CPU_WORDS; i++)
            p->cpus[i / 64] |= 1ULL << (i % 64);
    }
}

/* Whether this rank's machine runs more ranks of the job than CPUs they may
 * use: one PMI allgather of every rank's place. */
static int machine_oversubscribed(int *over, unsigned *ranks, unsigned *cpus)
{
    int mpi_errno = MPI_SUCCESS;
    int n = MPIR_Process.size;
    MPIDI_POLL_place_t *all = MPL_malloc(n * sizeof(*all), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!all, mpi_errno, MPI_ERR_OTHER, "**nomem");
    my_place(&all[MPIR_Process.rank]);
    if (n > 1) {
        MPIDI_POLL_place_t mine = all[MPIR_Process.rank];
        mpi_errno = MPIR_pmi_allgather(&mine, sizeof(mine), all, sizeof(mine),
                                       MPIR_PMI_DOMAIN_ALL);
        MPIR_ERR_CHECK(mpi_errno);
    }
    *over = MPIDI_POLL_oversubscribed(all, n, MPIR_Process.rank, ranks, cpus);
  fn_exit:
    MPL_free(all);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_POLL_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    char val[32];

    int over = 0;
    unsigned ranks = 0, cpus = 0;

    int err = MPIDI_POLL_arbiter_init(&MPIDI_POLL_global,
                                      (MPIDI_POLL_policy_t) policy_of_cvar(),
                                      MPIR_CVAR_CH4_POLL_STATIC_RATIO,
                                      MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY,
                                      MPIR_CVAR_CH4_POLL_MAX_RATIO);
    MPIDI_POLL_cvar_policy = MPIR_CVAR_CH4_POLL_POLICY;
    MPIDI_POLL_cvar_static_ratio = MPIR_CVAR_CH4_POLL_STATIC_RATIO;
    /* every rank joins the allgather whatever its own CVARs say: it is
     * collective, and an MPMD job may give its ranks different values (a
     * rank that left it out failed MPI_Init of the others, PMI_KVS_Get) */
    mpi_errno = machine_oversubscribed(&over, &ranks, &cpus);
    MPIR_ERR_CHECK(mpi_errno);
    /* the automatic yield stands down where MPICH's own throttle (5.0) is
     * on, so that no empty pass yields twice; a value set by hand holds */
    if (!err)
        err = MPIDI_POLL_set_wait_mode(&MPIDI_POLL_global, mode_of_cvar(),
                                       MPIR_CVAR_CH4_POLL_YIELD_AFTER,
                                       MPIR_CVAR_CH4_POLL_SPIN_COUNT, over,
                                       over && !MMC_PROGRESS_THROTTLE);
    if (err) {
        static const char *const names[] = {
            [MPIDI_POLL_EINVAL_STATIC_RATIO] = "MPIR_CVAR_CH4_POLL_STATIC_RATIO",
            [MPIDI_POLL_EINVAL_HISTORY] = "MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY",
            [MPIDI_POLL_EINVAL_MAX_RATIO] = "MPIR_CVAR_CH4_POLL_MAX_RATIO",
            [MPIDI_POLL_EINVAL_YIELD_AFTER] = "MPIR_CVAR_CH4_POLL_YIELD_AFTER",
            [MPIDI_POLL_EINVAL_SPIN_COUNT] = "MPIR_CVAR_CH4_POLL_SPIN_COUNT",
        };
        const int values[] = {
            [MPIDI_POLL_EINVAL_STATIC_RATIO] = MPIR_CVAR_CH4_POLL_STATIC_RATIO,
            [MPIDI_POLL_EINVAL_HISTORY] = MPIR_CVAR_CH4_POLL_DYNAMIC_HISTORY,
            [MPIDI_POLL_EINVAL_MAX_RATIO] = MPIR_CVAR_CH4_POLL_MAX_RATIO,
            [MPIDI_POLL_EINVAL_YIELD_AFTER] = MPIR_CVAR_CH4_POLL_YIELD_AFTER,
            [MPIDI_POLL_EINVAL_SPIN_COUNT] = MPIR_CVAR_CH4_POLL_SPIN_COUNT,
        };
        snprintf(val, sizeof(val), "%d", values[err]);
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                             names[err], val);
    }
    register_pvars();
    register_enums();
    if (MPIR_CVAR_DEBUG_SUMMARY && MPIR_Process.rank == 0) {
        if (MPIR_CVAR_CH4_POLL_YIELD_AFTER == -1)
            printf("ch4 poll: %u ranks on %u CPUs on this machine: ", ranks, cpus);
        else
            printf("ch4 poll: ");
        if (MPIDI_POLL_global.yield_after)
            printf("yield after %u empty passes", MPIDI_POLL_global.yield_after);
        else
            printf("never yield");
        if (MPIDI_POLL_global.sleep)
            printf(", blocking waits sleep after %u\n", MPIDI_POLL_global.spin_count);
        else
            printf(", never sleep\n");
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
