/*
 * mpich-multichannel: polling arbiter policy (plain C, see poll_policy.h).
 */
#include "poll_policy.h"

/* The ratio starts again: dynamic policies as round-robin, earning a higher
 * ratio from the traffic of an empty window. */
static void restart(MPIDI_POLL_arbiter_t * a)
{
    a->ratio = a->policy == MPIDI_POLL_POLICY_STATIC ? a->static_ratio : 1;
    a->since_nm = a->yields_since_nm = 0;
    a->nm_soon = 0;
    a->nm_quiet = 0;
    a->win_msgs[MPIDI_POLL_SHM] = a->win_msgs[MPIDI_POLL_NM] = 0;
}

int MPIDI_POLL_arbiter_init(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_policy_t policy,
                            int static_ratio, int history, int max_ratio)
{
    if (max_ratio < 1)
        return MPIDI_POLL_EINVAL_MAX_RATIO;
    if (static_ratio < 1)
        return MPIDI_POLL_EINVAL_STATIC_RATIO;
    if (history < 1)
        return MPIDI_POLL_EINVAL_HISTORY;

    a->history = (unsigned) history;
    a->max_ratio = (unsigned) max_ratio;
    a->yield_after = 0;
    a->sleep = 0;
    a->spin_count = MPIDI_POLL_SPIN_DEFAULT;
    a->nm_state = NULL;
    a->nm_fd = -1;
    MPIDI_POLL_set_policy(a, policy, static_ratio);
    MPIDI_POLL_arbiter_reset(a);
    return 0;
}

int MPIDI_POLL_set_policy(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_policy_t policy, int static_ratio)
{
    if (static_ratio < 1)
        return MPIDI_POLL_EINVAL_STATIC_RATIO;
    a->policy = policy;
    /* max_ratio bounds every policy */
    a->static_ratio = (unsigned) static_ratio < a->max_ratio ? (unsigned) static_ratio
        : a->max_ratio;
    restart(a);
    return 0;
}

void MPIDI_POLL_arbiter_reset(MPIDI_POLL_arbiter_t * a)
{
    restart(a);
    a->shm_polls = a->nm_polls = a->nm_skipped = a->nm_idle = 0;
    a->msgs[MPIDI_POLL_SHM] = a->msgs[MPIDI_POLL_NM] = a->progressed = 0;
    a->ratio_updates = 0;
    a->idle_passes = 0;
    a->seen = a->yields = a->flag_yields = a->flag_passes = 0;
    a->empty_waits = 0;
    a->armed = 0;
    a->wait_seen = 0;
    a->sleeps = a->woken = a->slept_ns = 0;
}

/* ratio = m / (n + 1) over the window just closed, clamped to [1, max_ratio]:
 * the netmod can never be polled more often than shared memory. */
void MPIDI_POLL_update_ratio(MPIDI_POLL_arbiter_t * a)
{
    if (a->policy == MPIDI_POLL_POLICY_DYNAMIC || a->policy == MPIDI_POLL_POLICY_ADAPTIVE) {
        unsigned r = a->win_msgs[MPIDI_POLL_SHM] / (a->win_msgs[MPIDI_POLL_NM] + 1);
        if (r < 1)
            r = 1;
        if (r > a->max_ratio)
            r = a->max_ratio;
        a->ratio = r;
        a->ratio_updates++;
    }
    a->win_msgs[MPIDI_POLL_SHM] = a->win_msgs[MPIDI_POLL_NM] = 0;
}

/* Shared memory has delivered nothing for `history` netmod polls: the traffic
 * that earned the ratio has stopped, so the dynamic policies start again from
 * round-robin with an empty window. */
void MPIDI_POLL_shm_quiet(MPIDI_POLL_arbiter_t * a)
{
    a->nm_quiet = 0;
    if (a->policy == MPIDI_POLL_POLICY_DYNAMIC || a->policy == MPIDI_POLL_POLICY_ADAPTIVE) {
        restart(a);
        a->ratio_updates++;
    }
}

int MPIDI_POLL_oversubscribed(const MPIDI_POLL_place_t * all, int n, int me, unsigned *ranks,
                              unsigned *cpus)
{
    uint64_t mask[MPIDI_POLL_CPU_WORDS] = { 0 };
    *ranks = *cpus = 0;
    for (int i = 0; i < n; i++) {
        if (all[i].machine != all[me].machine)
            continue;
        (*ranks)++;
        for (int w = 0; w < MPIDI_POLL_CPU_WORDS; w++)
            mask[w] |= all[i].cpus[w];
    }
    for (int w = 0; w < MPIDI_POLL_CPU_WORDS; w++)
        *cpus += (unsigned) __builtin_popcountll(mask[w]);
    return *ranks > *cpus;
}

int MPIDI_POLL_set_yield(MPIDI_POLL_arbiter_t * a, int yield_after, int oversubscribed)
{
    if (yield_after < -1)
        return MPIDI_POLL_EINVAL_YIELD_AFTER;
    if (yield_after == -1)
        a->yield_after = oversubscribed ? MPIDI_POLL_YIELD_AUTO : 0;
    else
        a->yield_after = (unsigned) yield_after;
    a->idle_passes = 0;
    return 0;
}

int MPIDI_POLL_set_wait_mode(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_mode_t mode, int yield_after,
                             int spin_count, int oversubscribed, int yield_auto)
{
    if (spin_count < 0)
        return MPIDI_POLL_EINVAL_SPIN_COUNT;
    if (yield_after < -1)
        return MPIDI_POLL_EINVAL_YIELD_AFTER;
    switch (mode) {
        case MPIDI_POLL_MODE_SPIN:
            MPIDI_POLL_set_yield(a, 0, 0);
            a->sleep = 0;
            break;
        case MPIDI_POLL_MODE_YIELD:
            MPIDI_POLL_set_yield(a, yield_after, 1);
            a->sleep = 0;
            break;
        case MPIDI_POLL_MODE_SLEEP:
            MPIDI_POLL_set_yield(a, yield_after, yield_auto);
            a->sleep = 1;
            break;
        default:
            MPIDI_POLL_set_yield(a, yield_after, yield_auto);
            a->sleep = oversubscribed;
            break;
    }
    a->spin_count = (unsigned) spin_count;
    return 0;
}
