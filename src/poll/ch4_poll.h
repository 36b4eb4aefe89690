/*
 * mpich-multichannel: ch4 glue of the polling arbiter.
 *
 * The overlay includes this header from ch4_progress.h and ch4_wait.h and
 * replaces the non-direct-netmod MPIDI_PROGRESS with
 * MPIDI_POLL_PROGRESS(vci, is_global): shared memory is polled on every pass,
 * the netmod when the arbiter says so or when ch4 asks for a global pass
 * (5.0: is_global, so that no netmod starves; always 0 on 4.x), and a pass
 * that discovered nothing may end with sched_yield()
 * (MPIR_CVAR_CH4_POLL_YIELD_AFTER).  Channels report arrivals
 * with MPIDI_POLL_ARRIVED() where they dispatch an incoming message.
 */
#ifndef CH4_POLL_H_INCLUDED
#define CH4_POLL_H_INCLUDED

#include "poll_policy.h"
#include "poll_wake.h"
#include "mmc_compat.h"
#include <sched.h>

extern MPIDI_POLL_arbiter_t MPIDI_POLL_global;
extern MPIDI_POLL_wake_t MPIDI_POLL_wake;

int MPIDI_POLL_init(void);
/* the node's wake lines, with the posix shared memory (every local rank) */
int MPIDI_POLL_wake_init(MPIR_Comm * node_comm);
int MPIDI_POLL_wake_finalize(void);
void MPIDI_POLL_wait_idle(void);
/* Set by a netmod whose fd (MPIDI_POLL_global.nm_fd) reports only what comes
 * after an arming (ch4:ucx's ucp_worker_arm): called last before a sleep, 0
 * when events already wait, so the wait polls again instead.  NULL: a
 * level-triggered fd (ch4:tcp's epoll). */
extern int (*MPIDI_POLL_nm_arm) (void);
/* The netmod has no fd for the waits, for the reason `why` (a phrase the
 * first wait under WAIT_MODE=sleep prints): they yield instead. */
void MPIDI_POLL_nm_no_fd(const char *why);
/* The netmod's finalize closes its fd: the waits after it spin. */
void MPIDI_POLL_nm_gone(void);
/* A request completed without a message (MPI_Grequest_complete): wakes a
 * thread asleep in a wait.  (mpir_greq.c, which cannot include this header,
 * declares it too.) */
void MPIDI_POLL_completed_elsewhere(void);

/* MPID_Progress_wait after each pass: where sleep is on, the step towards
 * sleeping (ch4_wake.c) */
#define MPIDI_POLL_WAITED()                     \
    do {                                        \
        if (unlikely(MPIDI_POLL_global.sleep))  \
            MPIDI_POLL_wait_idle();             \
    } while (0)

/* MPICH's posix release-gather collectives (intra-node Bcast, Reduce,
 * Allreduce, Barrier from their fifth call on) spin on a flag in shared
 * memory that no writer signals, with a progress pass only every few thousand
 * loads.  Where ranks outnumber CPUs (a yield is on), the rank that would set
 * the flag may be waiting for this core: the spin gives it away every
 * MPIDI_POLL_FLAG_SPINS loads instead of at the end of the time slice.  Every
 * MPIDI_POLL_FLAG_PASS_YIELDS yields it makes a progress pass, since a peer
 * it ran for may have sent what only this rank's progress answers (an RMA
 * lock, a fetch-and-op), which with MPICH's pass every few thousand loads
 * waits for this spin to end: 4 ranks on 2 CPUs, an RMA epoch and a barrier
 * 438 -> 66 us.  A pass after every yield (56 us) doubled an oversubscribed
 * Allreduce (doc/arbiter.md).  Its error is dropped as MPICH drops its own
 * pass's in that loop. */
#define MPIDI_POLL_FLAG_SPINS 64
#define MPIDI_POLL_FLAG_PASS_YIELDS 16
#define MPIDI_POLL_FLAG_SPUN(n_)                                        \
    do {                                                                \
        if (unlikely(MPIDI_POLL_global.yield_after) &&                  \
            (n_) % MPIDI_POLL_FLAG_SPINS == MPIDI_POLL_FLAG_SPINS - 1) { \
            MPIDI_POLL_global.flag_yields++;                            \
            sched_yield();                                              \
            if (MPIDI_POLL_global.flag_yields % MPIDI_POLL_FLAG_PASS_YIELDS == 0) { \
                MPIDI_POLL_global.flag_passes++;                        \
                MPID_Progress_test(NULL);                               \
            }                                                           \
        }                                                               \
    } while (0)

/* A posix eager send to local rank `lr_` is visible: an armed receiver is
 * woken (poll_wake.h) */
#define MPIDI_POLL_SENT_LOCAL(lr_) MPIDI_POLL_wake_signal(&MPIDI_POLL_wake, (lr_))

/* MPI_T_cvar_write may change MPIR_CVAR_CH4_POLL_POLICY and _STATIC_RATIO at
 * run time: each pass compares them with what the arbiter last read. */
extern int MPIDI_POLL_cvar_policy, MPIDI_POLL_cvar_static_ratio;
void MPIDI_POLL_follow_cvars(void);
#define MPIDI_POLL_CVARS_WRITTEN()                                      \
    unlikely(MPIR_CVAR_CH4_POLL_POLICY != MPIDI_POLL_cvar_policy ||     \
             MPIR_CVAR_CH4_POLL_STATIC_RATIO != MPIDI_POLL_cvar_static_ratio)

/* Wait hints carried in MPID_Progress_state.flag next to ch4's own
 * MPIDI_PROGRESS_* bits (which end at 1 << 3). */
#define MPIDI_PROGRESS_POLL_LOCAL  (1 << 6)
#define MPIDI_PROGRESS_POLL_REMOTE (1 << 7)

#define MPIDI_POLL_ARRIVED(ch_, n_) MPIDI_POLL_arrived(&MPIDI_POLL_global, (ch_), (n_))
#define MPIDI_POLL_PROGRESSED() MPIDI_POLL_progressed(&MPIDI_POLL_global)

#ifndef MPIDI_CH4_DIRECT_NETMOD
/* A point-to-point request whose peer is on this node completes through shared
 * memory alone; an any-source receive may complete through either channel,
 * which is what the message history predicts; every other request (netmod,
 * collective, persistent, generalized) may need the netmod.  A complete one
 * needs neither (MPICH's builtin request of a send that completed at once
 * carries no peer). */
MPL_STATIC_INLINE_PREFIX int MPIDI_POLL_hint_of(MPIR_Request * req)
{
    if (MPIR_Request_is_complete(req))
        return MPIDI_PROGRESS_POLL_LOCAL;
    if (req->kind == MPIR_REQUEST_KIND__SEND || req->kind == MPIR_REQUEST_KIND__RECV) {
        if (MMC_ANYSRC_PARTNER(req))
            return 0;
        if (req->dev.is_local == 1)
            return MPIDI_PROGRESS_POLL_LOCAL;
    }
    return MPIDI_PROGRESS_POLL_REMOTE;
}

/* Only adaptive reads the hint (MPIDI_POLL_pass_ratio): no other policy pays
 * for it on each test and wait. */
MPL_STATIC_INLINE_PREFIX int MPIDI_POLL_request_hint(MPIR_Request * req)
{
    if (MPIDI_POLL_global.policy != MPIDI_POLL_POLICY_ADAPTIVE)
        return 0;
    return MPIDI_POLL_hint_of(req);
}

/* The hint of a set: remote if any request needs the netmod, else unknown if
 * any could complete on either channel, else local. */
MPL_STATIC_INLINE_PREFIX int MPIDI_POLL_requests_hint(int n, MPIR_Request ** reqs)
{
    if (MPIDI_POLL_global.policy != MPIDI_POLL_POLICY_ADAPTIVE)
        return 0;
    int hint = MPIDI_PROGRESS_POLL_LOCAL;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == NULL)
            continue;
        int h = MPIDI_POLL_hint_of(reqs[i]);
        if (h == MPIDI_PROGRESS_POLL_REMOTE)
            return h;
        if (h == 0)
            hint = 0;
    }
    return hint;
}
#else
#define MPIDI_POLL_request_hint(req_) 0
#define MPIDI_POLL_requests_hint(n_, reqs_) 0
#endif

MPL_STATIC_INLINE_PREFIX MPIDI_POLL_wait_t MPIDI_POLL_wait_of(int flag)
{
    if (flag & MPIDI_PROGRESS_POLL_REMOTE)
        return MPIDI_POLL_WAIT_REMOTE;
    if (flag & MPIDI_PROGRESS_POLL_LOCAL)
        return MPIDI_POLL_WAIT_LOCAL;
    return MPIDI_POLL_WAIT_ANY;
}

/* The arbiter only chooses when a pass may poll both channels: a caller that
 * asked for one channel (e.g. netmod fallback progress) always gets it. */
#define MPIDI_POLL_BOTH (MPIDI_PROGRESS_NM | MPIDI_PROGRESS_SHM)

#define MPIDI_POLL_NM_PASS(vci)                                         \
    do {                                                                \
        MPIDI_THREAD_CS_ENTER_VCI_OPTIONAL(vci);                        \
        mpi_errno = MPIDI_NM_progress(vci, MMC_PROGRESS_OUT);           \
        MPIDI_THREAD_CS_EXIT_VCI_OPTIONAL(vci);                         \
        MPIR_ERR_CHECK(mpi_errno);                                      \
    } while (0)

#define MPIDI_POLL_SHM_PASS(vci)                                        \
    do {                                                                \
        MPID_THREAD_CS_ENTER(VCI, MMC_VCI_LOCK(vci));                   \
        mpi_errno = MPIDI_SHM_progress(vci, MMC_PROGRESS_OUT);          \
        MPID_THREAD_CS_EXIT(VCI, MMC_VCI_LOCK(vci));                    \
        MPIR_ERR_CHECK(mpi_errno);                                      \
    } while (0)

/* The stock policy on MPICH 4.1+: that version's own pass, shared memory
 * first, the netmod only when nothing in this pass made progress, both in a
 * global pass.  (On 4.0 the own pass is round-robin, which the arbitrated
 * pass does.) */
#define MPIDI_POLL_SHM_FIRST_PASS(vci, is_global_)                      \
    do {                                                                \
        if ((state->flag & MPIDI_PROGRESS_SHM) && ((is_global_) || !MMC_PASS_MADE_PROGRESS)) \
            MPIDI_POLL_SHM_PASS(vci);                                   \
        int nm_ = (is_global_) || !MMC_PASS_MADE_PROGRESS;              \
        if ((state->flag & MPIDI_POLL_BOTH) == MPIDI_POLL_BOTH)         \
            MPIDI_POLL_count_pass(&MPIDI_POLL_global, nm_);             \
        if ((state->flag & MPIDI_PROGRESS_NM) && nm_)                   \
            MPIDI_POLL_NM_PASS(vci);                                    \
    } while (0)

/* Every other policy: the netmod when the arbiter says so or the pass is
 * global, then shared memory, on every pass. */
#define MPIDI_POLL_ARBITRATED_PASS(vci, is_global_)                     \
    do {                                                                \
        int poll_nm_ = (state->flag & MPIDI_PROGRESS_NM);               \
        if ((state->flag & MPIDI_POLL_BOTH) == MPIDI_POLL_BOTH)         \
            poll_nm_ = MPIDI_POLL_nm_due(&MPIDI_POLL_global,            \
                                         MPIDI_POLL_wait_of(state->flag)) || (is_global_); \
        if (poll_nm_)                                                   \
            MPIDI_POLL_NM_PASS(vci);                                    \
        if (state->flag & MPIDI_PROGRESS_SHM)                           \
            MPIDI_POLL_SHM_PASS(vci);                                   \
    } while (0)

/* The end of every pass: after YIELD_AFTER empty ones, a yield. */
#define MPIDI_POLL_PASS_DONE()                                          \
    do {                                                                \
        if (MPIDI_POLL_pass_done(&MPIDI_POLL_global))                   \
            sched_yield();                                              \
    } while (0)

#define MPIDI_POLL_PROGRESS(vci, is_global_)                            \
    do {                                                                \
        if (MPIDI_POLL_CVARS_WRITTEN())                                 \
            MPIDI_POLL_follow_cvars();                                  \
        if (MMC_STOCK_SHM_FIRST && MPIDI_POLL_global.policy == MPIDI_POLL_POLICY_STOCK) \
            MPIDI_POLL_SHM_FIRST_PASS(vci, is_global_);                 \
        else                                                            \
            MPIDI_POLL_ARBITRATED_PASS(vci, is_global_);                \
        MPIDI_POLL_PASS_DONE();                                         \
    } while (0)

#endif /* CH4_POLL_H_INCLUDED */
