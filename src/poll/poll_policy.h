/*
 * mpich-multichannel: polling arbiter policy.
 *
 * Plain C, no MPICH headers: the ch4 glue (ch4_poll.h) and the unit tests
 * (test/unit/test_poll_policy.c) both include this file.
 *
 * A "pass" is one trip through ch4 progress.  Shared memory is polled on
 * every pass; the arbiter decides whether the netmod is polled too.  With a
 * ratio R the netmod is polled on every R-th pass, so it is never starved for
 * more than R - 1 passes and R is clamped to [1, max_ratio].
 */
#ifndef POLL_POLICY_H_INCLUDED
#define POLL_POLICY_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef enum {
    MPIDI_POLL_POLICY_ROUNDROBIN = 0,   /* stock ch4: both channels every pass */
    MPIDI_POLL_POLICY_STATIC,   /* netmod every static_ratio passes */
    MPIDI_POLL_POLICY_DYNAMIC,  /* ratio = m / (n + 1) over the last `history` messages */
    MPIDI_POLL_POLICY_ADAPTIVE, /* dynamic, refined by what the caller waits on */
    MPIDI_POLL_POLICY_STOCK     /* the MPICH version's own order (ch4_poll.h); here
                                 * as round-robin: the netmod is due on every pass */
} MPIDI_POLL_policy_t;

/* What the current progress pass is waiting for, as ch4's wait path knows it. */
typedef enum {
    MPIDI_POLL_WAIT_ANY = 0,    /* unknown or either: test/probe loops, any-source waits */
    MPIDI_POLL_WAIT_LOCAL,      /* only requests that complete through shared memory */
    MPIDI_POLL_WAIT_REMOTE      /* at least one request that needs the netmod */
} MPIDI_POLL_wait_t;

typedef enum {
    MPIDI_POLL_SHM = 0,
    MPIDI_POLL_NM = 1
} MPIDI_POLL_channel_t;

/* What the netmod says it has to do, when it can say (MPIDI_POLL_arbiter_t.nm_state). */
typedef enum {
    MPIDI_POLL_NM_BUSY = 0,     /* something in flight: connections being made or proven,
                                 * bytes the sockets have not taken, replies awaited,
                                 * a message half read */
    MPIDI_POLL_NM_QUIET,        /* nothing in flight; a remote rank may still send */
    MPIDI_POLL_NM_UNUSED        /* no rank of the job is reached through it */
} MPIDI_POLL_nm_state_t;

typedef struct {
    MPIDI_POLL_policy_t policy;
    unsigned static_ratio;
    unsigned history;
    unsigned max_ratio;

    unsigned ratio;             /* shared-memory polls per netmod poll, in [1, max_ratio] */
    unsigned since_nm;          /* passes since the netmod was last polled */
    unsigned yields_since_nm;   /* yields since then */
    int nm_soon;                /* a yield made the netmod due, unless it is idle */
    unsigned win_msgs[2];       /* arrivals per channel in the current history window */
    unsigned nm_quiet;          /* netmod polls since shared memory last delivered */

    unsigned yield_after;       /* empty passes before the rank yields its core; 0 = never */
    unsigned idle_passes;       /* consecutive passes that discovered nothing */
    unsigned long long seen;    /* MPIDI_POLL_found at the end of the last pass */

    int sleep;                  /* whether blocking waits may sleep (MPIDI_POLL_set_wait_mode) */
    unsigned spin_count;        /* empty blocking-wait passes before arming */
    unsigned empty_waits;       /* consecutive empty blocking-wait passes */
    int armed;                  /* this rank told its senders to wake it */
    unsigned long long wait_seen;       /* MPIDI_POLL_found after the last wait pass */

    /* the netmod's report, NULL where it gives none (MPICH's own netmods); set
     * by the netmod's init, which ch4 runs after the arbiter's */
    MPIDI_POLL_nm_state_t(*nm_state) (void);
    int nm_fd;                  /* readable when the netmod has work (ch4:tcp's epoll fd), -1 */

    /* statistics, exported as MPI_T performance variables */
    unsigned long long shm_polls;
    unsigned long long nm_polls;
    unsigned long long nm_skipped;
    unsigned long long nm_idle;
    unsigned long long msgs[2];
    unsigned long long progressed;      /* later pieces of messages (no arrival) */
    unsigned long long ratio_updates;
    unsigned long long yields;
    unsigned long long flag_yields;     /* of spins on a shared-memory flag (MPIDI_POLL_FLAG_SPUN) */
    unsigned long long flag_passes;     /* progress passes those spins made */
    unsigned long long sleeps;  /* blocking waits that slept */
    unsigned long long woken;   /* of those, ended by a signal or the netmod, not the timeout */
    unsigned long long slept_ns;        /* time asleep */
} MPIDI_POLL_arbiter_t;

/* Parameter errors reported by MPIDI_POLL_arbiter_init (0 = valid). */
enum {
    MPIDI_POLL_EINVAL_STATIC_RATIO = 1,
    MPIDI_POLL_EINVAL_HISTORY,
    MPIDI_POLL_EINVAL_MAX_RATIO,
    MPIDI_POLL_EINVAL_YIELD_AFTER,
    MPIDI_POLL_EINVAL_SPIN_COUNT
};

int MPIDI_POLL_arbiter_init(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_policy_t policy,
                            int static_ratio, int history, int max_ratio);
void MPIDI_POLL_arbiter_reset(MPIDI_POLL_arbiter_t * a);
/* Another policy or static ratio at run time: it starts afresh (its initial
 * ratio, an empty window), the statistics go on.  Returns
 * MPIDI_POLL_EINVAL_STATIC_RATIO, and changes nothing, for a ratio below 1. */
int MPIDI_POLL_set_policy(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_policy_t policy,
                          int static_ratio);
void MPIDI_POLL_update_ratio(MPIDI_POLL_arbiter_t * a);
void MPIDI_POLL_shm_quiet(MPIDI_POLL_arbiter_t * a);

/* The ratio that applies to one pass.  Under `adaptive` a wait that needs the
 * netmod polls it every pass, and a wait that only shared memory can satisfy
 * polls it at the static ratio: the netmod has nothing for that wait, only
 * unexpected arrivals and protocol steps of other operations. */
static inline unsigned MPIDI_POLL_pass_ratio(const MPIDI_POLL_arbiter_t * a,
                                             MPIDI_POLL_wait_t wait)
{
    if (a->policy == MPIDI_POLL_POLICY_ADAPTIVE) {
        if (wait == MPIDI_POLL_WAIT_REMOTE)
            return 1;
        if (wait == MPIDI_POLL_WAIT_LOCAL)
            return a->static_ratio > a->ratio ? a->static_ratio : a->ratio;
    }
    return a->ratio;
}

/* A netmod with nothing to wait for is polled only every max_ratio passes
 * (the bound of every policy: strangers on its port, peers connecting and
 * its timers still get an answer): one not used by any rank of the job
 * whatever the wait, one with nothing in flight while a wait needs only
 * shared memory under adaptive (the only policy whose waits carry hints:
 * the first wait after a switch to another policy still carries one).
 * Asked only on passes the policy would poll the netmod on; round-robin and
 * stock are MPICH's orders and ask nothing. */
static inline int MPIDI_POLL_nm_idle(const MPIDI_POLL_arbiter_t * a, MPIDI_POLL_wait_t wait)
{
    if (!a->nm_state || a->policy == MPIDI_POLL_POLICY_ROUNDROBIN ||
        a->policy == MPIDI_POLL_POLICY_STOCK)
        return 0;
    MPIDI_POLL_nm_state_t s = a->nm_state();
    return s == MPIDI_POLL_NM_UNUSED ||
        (s == MPIDI_POLL_NM_QUIET && wait == MPIDI_POLL_WAIT_LOCAL &&
         a->policy == MPIDI_POLL_POLICY_ADAPTIVE);
}

/* Called once per pass in which both channels are eligible; returns 1 when
 * the netmod is to be polled on this pass.  Shared memory is polled on every
 * pass, so it is counted here too.  A window closes on arrivals only, so a
 * ratio earned by shared-memory traffic would outlive that traffic through a
 * wait in which nothing arrives (a peer that is descheduled or still
 * connecting); `history` netmod polls in a row without a shared-memory
 * arrival end it (MPIDI_POLL_shm_quiet). */
static inline int MPIDI_POLL_nm_due(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_wait_t wait)
{
    a->shm_polls++;
    unsigned pass = a->since_nm + 1;
    if (pass >= MPIDI_POLL_pass_ratio(a, wait) || a->nm_soon) {
        a->nm_soon = 0;
        if (pass < a->max_ratio && MPIDI_POLL_nm_idle(a, wait)) {
            a->nm_idle++;
        } else {
            a->since_nm = a->yields_since_nm = 0;
            a->nm_polls++;
            if (a->ratio > 1 && ++a->nm_quiet >= a->history)
                MPIDI_POLL_shm_quiet(a);
            return 1;
        }
    }
    a->since_nm++;
    a->nm_skipped++;
    return 0;
}

/* The next pass polls the netmod whatever the ratio and the netmod's report:
 * after a yield, and for a test whose answer may come from a remote rank in a
 * message sent before the one that ended the caller's last wait (the
 * netmod may hold it while shared memory delivered the later one). */
static inline void MPIDI_POLL_nm_next(MPIDI_POLL_arbiter_t * a)
{
    a->since_nm = a->max_ratio;
}

/* A pass of the stock order on MPICH 4.1+, which decides by itself (shared
 * memory first, the netmod only when shared memory made no progress): counted
 * like a pass of the arbiter in which both channels were eligible. */
static inline void MPIDI_POLL_count_pass(MPIDI_POLL_arbiter_t * a, int nm_polled)
{
    a->shm_polls++;
    if (nm_polled) {
        a->nm_polls++;
        a->yields_since_nm = 0;
    } else
        a->nm_skipped++;
}

/* Messages a channel discovered (dispatched an incoming message for). */
static inline void MPIDI_POLL_arrived(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_channel_t ch,
                                      unsigned n)
{
    a->msgs[ch] += n;
    a->win_msgs[ch] += n;
    if (ch == MPIDI_POLL_SHM)
        a->nm_quiet = 0;
    if (a->win_msgs[MPIDI_POLL_SHM] + a->win_msgs[MPIDI_POLL_NM] >= a->history)
        MPIDI_POLL_update_ratio(a);
}

/* A piece of a message already under way came (a later segment through the
 * posix queue, bytes ch4:tcp read of a message not yet whole): the pass was
 * not empty, but nothing new arrived for the ratio. */
static inline void MPIDI_POLL_progressed(MPIDI_POLL_arbiter_t * a)
{
    a->progressed++;
}

/* What the passes so far discovered: a pass that changes it was not empty. */
static inline unsigned long long MPIDI_POLL_found(const MPIDI_POLL_arbiter_t * a)
{
    return a->msgs[MPIDI_POLL_SHM] + a->msgs[MPIDI_POLL_NM] + a->progressed;
}

/* Yielding (MPIR_CVAR_CH4_POLL_YIELD_AFTER).  A waiting rank busy-polls; on
 * a machine with more ranks than CPUs that spin takes the time slice the
 * rank it waits for needs.  After yield_after consecutive passes that
 * discovered nothing, each further empty pass ends with sched_yield().  A
 * yield may cost a time slice, so a ratio of passes would become a ratio of
 * time slices: the pass after a yield polls every channel the wait may need,
 * and nothing the rank waits for is delayed by more than one time slice.  A
 * netmod idle for the wait (MPIDI_POLL_nm_idle: one node, or nothing in
 * flight while the wait needs shared memory alone) is not worth a system call
 * per yield: it is polled after MPIDI_POLL_NM_YIELDS yields at the latest, so
 * a stranger or a remote rank's request waits that many time slices at most.
 * An arrival starts the count again. */

/* empty passes before the first yield under auto (-1): doc/arbiter.md */
#define MPIDI_POLL_YIELD_AUTO 32
/* yields after which even an idle netmod is polled */
#define MPIDI_POLL_NM_YIELDS 16

/* Where a rank runs, for the auto decision: the kernel it runs on (a hash of
 * its boot id: network namespaces and containers on one machine share its
 * CPUs) and the CPUs its affinity mask allows. */
#define MPIDI_POLL_CPU_WORDS 16 /* 1024 CPUs */
typedef struct {
    uint64_t machine;
    uint64_t cpus[MPIDI_POLL_CPU_WORDS];
} MPIDI_POLL_place_t;

/* Of n ranks' places, how many share rank me's machine and on how many CPUs
 * (the union of their masks) they may run; returns 1 when they are more
 * ranks than CPUs. */
int MPIDI_POLL_oversubscribed(const MPIDI_POLL_place_t * all, int n, int me, unsigned *ranks,
                              unsigned *cpus);

/* Sets yield_after from the CVAR: -1 = MPIDI_POLL_YIELD_AUTO when
 * oversubscribed, else never; 0 = never; N = after N empty passes.
 * Returns MPIDI_POLL_EINVAL_YIELD_AFTER below -1. */
int MPIDI_POLL_set_yield(MPIDI_POLL_arbiter_t * a, int yield_after, int oversubscribed);

/* Called at the end of every pass; returns 1 when the rank is to yield now. */
static inline int MPIDI_POLL_pass_done(MPIDI_POLL_arbiter_t * a)
{
    if (a->yield_after == 0)
        return 0;
    unsigned long long seen = MPIDI_POLL_found(a);
    if (seen != a->seen) {
        a->seen = seen;
        a->idle_passes = 0;
        return 0;
    }
    if (a->idle_passes < a->yield_after)
        a->idle_passes++;
    if (a->idle_passes < a->yield_after)
        return 0;
    a->yields++;
    if (++a->yields_since_nm >= MPIDI_POLL_NM_YIELDS)
        MPIDI_POLL_nm_next(a);
    else
        a->nm_soon = 1;
    return 1;
}

/* Sleeping (MPIR_CVAR_CH4_POLL_WAIT_MODE).  A blocking wait (ch4's
 * MPID_Progress_wait: MPI_Wait, MPI_Recv, a blocking collective, MPI_Finalize;
 * never a test or a probe) that discovered nothing for spin_count passes arms
 * itself: it tells the local ranks that send to it to signal it, then polls
 * once more, so that a message sent before a sender could see the arming is
 * found by that pass, and one sent after it brings a signal.  The pass after
 * the arming that still finds nothing sleeps in the kernel (doc/arbiter.md,
 * *A wait that sleeps*). */
typedef enum {
    MPIDI_POLL_MODE_SPIN = 0,   /* neither yield nor sleep */
    MPIDI_POLL_MODE_YIELD,      /* yield after yield_after empty passes */
    MPIDI_POLL_MODE_SLEEP,      /* sleep after spin_count empty waits */
    MPIDI_POLL_MODE_AUTO        /* sleep where oversubscribed, else spin */
} MPIDI_POLL_mode_t;

/* spin_count's default: doc/arbiter.md */
#define MPIDI_POLL_SPIN_DEFAULT 2000

/* Sets the yield and the sleep from the CVARs: `spin` never yields (it
 * ignores yield_after), `yield` takes yield_after -1 as MPIDI_POLL_YIELD_AUTO
 * oversubscribed or not, `sleep` and `auto` take it as MPIDI_POLL_set_yield
 * does with yield_auto; `auto` sleeps where oversubscribed.  Returns
 * MPIDI_POLL_EINVAL_YIELD_AFTER (below -1) or _SPIN_COUNT (below 0), and
 * changes nothing, for an invalid value. */
int MPIDI_POLL_set_wait_mode(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_mode_t mode, int yield_after,
                             int spin_count, int oversubscribed, int yield_auto);

typedef enum {
    MPIDI_POLL_IDLE_SPIN = 0,   /* poll again */
    MPIDI_POLL_IDLE_ARM,        /* arm, then poll once more */
    MPIDI_POLL_IDLE_DISARM,     /* the armed rank found something: disarm, poll again */
    MPIDI_POLL_IDLE_SLEEP       /* armed and still nothing: sleep */
} MPIDI_POLL_idle_t;

/* Called after each pass of a blocking wait where sleep is on; can_sleep
 * says whether nothing but an arrival or the netmod's fd can end the wait
 * (no send shared memory postponed, no other thread asleep). */
static inline MPIDI_POLL_idle_t MPIDI_POLL_wait_done(MPIDI_POLL_arbiter_t * a, int can_sleep)
{
    unsigned long long seen = MPIDI_POLL_found(a);
    if (seen != a->wait_seen || !can_sleep) {
        a->wait_seen = seen;
        a->empty_waits = 0;
        if (a->armed) {
            a->armed = 0;
            return MPIDI_POLL_IDLE_DISARM;
        }
        return MPIDI_POLL_IDLE_SPIN;
    }
    if (a->armed)
        return MPIDI_POLL_IDLE_SLEEP;
    if (++a->empty_waits < a->spin_count)
        return MPIDI_POLL_IDLE_SPIN;
    a->armed = 1;
    return MPIDI_POLL_IDLE_ARM;
}

/* After a sleep, which disarmed: a signal or the netmod's readiness starts
 * the spin again; a timeout that found nothing arms at the next empty pass,
 * so a rank that stays idle costs one pass and the rechecking pass per
 * timeout.  The pass after a sleep polls the netmod. */
static inline void MPIDI_POLL_woke(MPIDI_POLL_arbiter_t * a, int signalled,
                                   unsigned long long ns)
{
    a->armed = 0;
    a->sleeps++;
    a->slept_ns += ns;
    if (signalled)
        a->woken++;
    a->empty_waits = signalled || a->spin_count == 0 ? 0 : a->spin_count - 1;
    MPIDI_POLL_nm_next(a);
}

#endif /* POLL_POLICY_H_INCLUDED */
