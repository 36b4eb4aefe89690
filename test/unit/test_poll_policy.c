/*
 * Unit tests of the polling arbiter policy (src/poll/poll_policy.[ch]).
 * No MPICH needed.  Prints "N passed, N failed" and exits non-zero on failure.
 */
#include <string.h>
#include "poll_policy.h"
#include "unit.h"

/* The netmod schedule of `passes` passes as a string of '1' (polled) and '.' */
static void schedule(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_wait_t w, int passes, char *out)
{
    for (int i = 0; i < passes; i++)
        out[i] = MPIDI_POLL_nm_due(a, w) ? '1' : '.';
    out[passes] = '\0';
}

static void init_ok(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_policy_t p, int sr, int h, int max)
{
    CHECK(MPIDI_POLL_arbiter_init(a, p, sr, h, max) == 0);
}

static void every_pass(MPIDI_POLL_policy_t policy)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, policy, 50, 10, 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 100);        /* history must not matter */
    schedule(&a, MPIDI_POLL_WAIT_LOCAL, 8, s);
    CHECK(strcmp(s, "11111111") == 0);
    CHECK(a.ratio == 1 && a.nm_polls == 8 && a.nm_skipped == 0 && a.shm_polls == 8);
}

static void test_roundrobin(void)
{
    every_pass(MPIDI_POLL_POLICY_ROUNDROBIN);
}

/* stock leaves the netmod due on every pass: what MPICH 4.1+ skips after
 * shared memory made progress is decided by the ch4 glue (ch4_poll.h) */
static void test_stock(void)
{
    every_pass(MPIDI_POLL_POLICY_STOCK);
    MPIDI_POLL_arbiter_t a;
    init_ok(&a, MPIDI_POLL_POLICY_STOCK, 50, 10, 1000);
    MPIDI_POLL_count_pass(&a, 1);
    MPIDI_POLL_count_pass(&a, 0);
    MPIDI_POLL_count_pass(&a, 0);
    CHECK(a.shm_polls == 3 && a.nm_polls == 1 && a.nm_skipped == 2);
}

static void test_static_schedule(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 3, 10, 1000);
    schedule(&a, MPIDI_POLL_WAIT_ANY, 9, s);
    CHECK(strcmp(s, "..1..1..1") == 0);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 50);  /* a static ratio ignores traffic */
    CHECK(a.ratio == 3);
    CHECK(a.shm_polls == 9 && a.nm_polls == 3 && a.nm_skipped == 6);
    CHECK(a.msgs[MPIDI_POLL_NM] == 50 && a.msgs[MPIDI_POLL_SHM] == 0);
}

static void test_static_50_counts(void)
{
    MPIDI_POLL_arbiter_t a;
    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 50, 10, 1000);
    for (int i = 0; i < 100000; i++)
        MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY);
    CHECK(a.nm_polls == 2000 && a.shm_polls == 100000);
}

static void test_dynamic_history(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, 1000);
    CHECK(a.ratio == 1);        /* starts as round-robin */

    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 9);
    CHECK(a.ratio == 1 && a.ratio_updates == 0);        /* window not full yet */
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 1);
    CHECK(a.ratio == 10 && a.ratio_updates == 1);       /* 10 / (0 + 1) */
    schedule(&a, MPIDI_POLL_WAIT_ANY, 20, s);
    CHECK(strcmp(s, ".........1.........1") == 0);

    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 9);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 1);
    CHECK(a.ratio == 4);        /* 9 / (1 + 1) */

    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 5);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 5);
    CHECK(a.ratio == 1);        /* 5 / 6 clamps to 1: the netmod never outranks shm */

    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 10);
    CHECK(a.ratio == 1);
    CHECK(a.msgs[MPIDI_POLL_SHM] == 24 && a.msgs[MPIDI_POLL_NM] == 16);
}

static void test_ratio_drop_polls_at_once(void)
{
    MPIDI_POLL_arbiter_t a;
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 10);
    CHECK(a.ratio == 10);
    for (int i = 0; i < 4; i++)
        CHECK(!MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY));
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 10);
    CHECK(a.ratio == 1);
    CHECK(MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY));  /* no leftover wait from ratio 10 */
}

/* A ratio earned by shared-memory traffic ends after `history` netmod polls
 * without a shared-memory arrival, even though no window closed. */
static void test_shm_quiet_ends_ratio(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[128];
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 10);
    CHECK(a.ratio == 10);
    schedule(&a, MPIDI_POLL_WAIT_ANY, 50, s);  /* 5 netmod polls */
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 1);  /* restarts the count */
    schedule(&a, MPIDI_POLL_WAIT_ANY, 99, s);
    CHECK(a.ratio == 10 && a.ratio_updates == 1);       /* 9 quiet netmod polls */
    schedule(&a, MPIDI_POLL_WAIT_ANY, 4, s);
    CHECK(strcmp(s, "1111") == 0);      /* the 10th ends it: round-robin from the next pass */
    CHECK(a.ratio == 1 && a.ratio_updates == 2 && a.win_msgs[MPIDI_POLL_SHM] == 0);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 10); /* a fresh window earns it back */
    CHECK(a.ratio == 10);

    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 3, 10, 1000);
    schedule(&a, MPIDI_POLL_WAIT_ANY, 90, s);
    CHECK(a.ratio == 3 && a.nm_polls == 30);    /* a static ratio is not earned */
}

static void test_set_policy(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, 100);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 10);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 5);
    schedule(&a, MPIDI_POLL_WAIT_ANY, 3, s);
    CHECK(a.ratio == 10 && a.win_msgs[MPIDI_POLL_SHM] == 5);
    CHECK(MPIDI_POLL_set_policy(&a, MPIDI_POLL_POLICY_STATIC, 7) == 0);
    schedule(&a, MPIDI_POLL_WAIT_ANY, 14, s);
    CHECK(strcmp(s, "......1......1") == 0);    /* from the first pass of the new policy */
    CHECK(a.ratio == 7 && a.win_msgs[MPIDI_POLL_SHM] == 0);
    CHECK(a.shm_polls == 17 && a.msgs[MPIDI_POLL_SHM] == 15);   /* statistics go on */
    CHECK(MPIDI_POLL_set_policy(&a, MPIDI_POLL_POLICY_ROUNDROBIN, 0)
          == MPIDI_POLL_EINVAL_STATIC_RATIO);
    CHECK(a.policy == MPIDI_POLL_POLICY_STATIC && a.ratio == 7);        /* unchanged */
    CHECK(MPIDI_POLL_set_policy(&a, MPIDI_POLL_POLICY_STATIC, 5000) == 0);
    CHECK(a.ratio == 100);      /* clamped to max_ratio */
    CHECK(MPIDI_POLL_set_policy(&a, MPIDI_POLL_POLICY_ADAPTIVE, 50) == 0);
    CHECK(a.ratio == 1 && a.static_ratio == 50);
}

static void test_clamp_max_ratio(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 2, 100, 4);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 100);
    CHECK(a.ratio == 4);        /* 100 / 1 clamped */
    schedule(&a, MPIDI_POLL_WAIT_ANY, 8, s);
    CHECK(strcmp(s, "...1...1") == 0);
}

/* Whatever the history and the wait hints, the netmod is polled at least once
 * every max_ratio passes. */
static void test_never_starved(void)
{
    MPIDI_POLL_arbiter_t a;
    unsigned seed = 12345;
    for (int p = MPIDI_POLL_POLICY_ROUNDROBIN; p <= MPIDI_POLL_POLICY_ADAPTIVE; p++) {
        init_ok(&a, (MPIDI_POLL_policy_t) p, 7, 8, 16);
        unsigned gap = 0, worst = 0;
        for (int i = 0; i < 200000; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) & 0xff;
            if (r < 40)
                MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 1 + r % 3);
            else if (r < 44)
                MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 1);
            if (MPIDI_POLL_nm_due(&a, (MPIDI_POLL_wait_t) (r % 3)))
                gap = 0;
            else if (++gap > worst)
                worst = gap;
        }
        CHECK(worst < 16);
        CHECK(a.ratio >= 1 && a.ratio <= 16);
    }
}

/* Bursts as long as the history window: each window predicts the burst that
 * has just ended, so every network burst is served at the high ratio earned by
 * the shared-memory burst before it and every shm burst at ratio 1. */
static void test_burst_equals_history_mispredicts(void)
{
    MPIDI_POLL_arbiter_t a;
    const int h = 10;
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, h, 1000);
    for (int round = 0; round < 5; round++) {
        MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, h);
        CHECK(a.ratio == (unsigned) h); /* in force while the next (network) burst arrives */
        MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, h);
        CHECK(a.ratio == 1);    /* in force while the next (shm) burst arrives */
    }
    /* A burst twice the window: the second window of each burst is predicted right. */
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, h, 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, h);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, h);
    CHECK(a.ratio == (unsigned) h);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, h);
    CHECK(a.ratio == 1);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, h);
    CHECK(a.ratio == 1);
}

static void test_adaptive_wait_hints(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_ADAPTIVE, 5, 10, 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 10);
    CHECK(a.ratio == 10);
    schedule(&a, MPIDI_POLL_WAIT_REMOTE, 4, s);
    CHECK(strcmp(s, "1111") == 0);      /* waiting on the network: poll it every pass */
    schedule(&a, MPIDI_POLL_WAIT_LOCAL, 20, s);
    CHECK(strcmp(s, ".........1.........1") == 0);      /* max(static 5, learned 10) */
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 10);
    schedule(&a, MPIDI_POLL_WAIT_LOCAL, 10, s);
    CHECK(strcmp(s, "....1....1") == 0);        /* static ratio is the floor for local waits */
    schedule(&a, MPIDI_POLL_WAIT_ANY, 3, s);
    CHECK(strcmp(s, "111") == 0);       /* unhinted passes use the learned ratio (1) */

    /* the same hints do not change `dynamic` */
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 5, 10, 1000);
    schedule(&a, MPIDI_POLL_WAIT_LOCAL, 3, s);
    CHECK(strcmp(s, "111") == 0);
}

static void test_reset(void)
{
    MPIDI_POLL_arbiter_t a;
    init_ok(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 17);
    for (int i = 0; i < 5; i++)
        MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY);
    CHECK(a.ratio == 17 && a.win_msgs[MPIDI_POLL_SHM] == 0);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 3);
    MPIDI_POLL_arbiter_reset(&a);
    CHECK(a.ratio == 1 && a.since_nm == 0);
    CHECK(a.win_msgs[MPIDI_POLL_SHM] == 0 && a.msgs[MPIDI_POLL_SHM] == 0);
    CHECK(a.shm_polls == 0 && a.nm_polls == 0 && a.nm_skipped == 0 && a.ratio_updates == 0);
    CHECK(a.policy == MPIDI_POLL_POLICY_DYNAMIC && a.history == 10 && a.max_ratio == 1000);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 9);
    CHECK(a.ratio == 1);        /* the pre-reset window is gone */

    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 50, 10, 1000);
    MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY);
    MPIDI_POLL_arbiter_reset(&a);
    CHECK(a.ratio == 50 && a.since_nm == 0);
}

static void test_invalid_parameters(void)
{
    MPIDI_POLL_arbiter_t a;
    CHECK(MPIDI_POLL_arbiter_init(&a, MPIDI_POLL_POLICY_STATIC, 0, 10, 1000) ==
          MPIDI_POLL_EINVAL_STATIC_RATIO);
    CHECK(MPIDI_POLL_arbiter_init(&a, MPIDI_POLL_POLICY_STATIC, -5, 10, 1000) ==
          MPIDI_POLL_EINVAL_STATIC_RATIO);
    CHECK(MPIDI_POLL_arbiter_init(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 0, 1000) ==
          MPIDI_POLL_EINVAL_HISTORY);
    CHECK(MPIDI_POLL_arbiter_init(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, 0) ==
          MPIDI_POLL_EINVAL_MAX_RATIO);
    CHECK(MPIDI_POLL_arbiter_init(&a, MPIDI_POLL_POLICY_STATIC, 1000, 1, 1000) == 0);
    CHECK(MPIDI_POLL_arbiter_init(&a, MPIDI_POLL_POLICY_DYNAMIC, 50, 10, -1) ==
          MPIDI_POLL_EINVAL_MAX_RATIO);
}

static void test_static_ratio_clamped(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 2000, 10, 4);
    CHECK(a.static_ratio == 4 && a.ratio == 4);
    schedule(&a, MPIDI_POLL_WAIT_ANY, 8, s);
    CHECK(strcmp(s, "...1...1") == 0);
    init_ok(&a, MPIDI_POLL_POLICY_ROUNDROBIN, 50, 10, 1);      /* max 1: round-robin for all */
    CHECK(a.static_ratio == 1);
}

/* The yield schedule of `passes` empty passes as '.' (poll on) and 'y' (yield) */
static void yields(MPIDI_POLL_arbiter_t * a, int passes, char *out)
{
    for (int i = 0; i < passes; i++)
        out[i] = MPIDI_POLL_pass_done(a) ? 'y' : '.';
    out[passes] = '\0';
}

static void test_yield_exact_pass(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_ADAPTIVE, 50, 10, 1000);
    CHECK(MPIDI_POLL_set_yield(&a, 3, 0) == 0 && a.yield_after == 3);
    yields(&a, 6, s);
    CHECK(strcmp(s, "..yyyy") == 0);    /* the third empty pass and every one after */
    CHECK(a.yields == 4);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_NM, 1);
    yields(&a, 4, s);
    CHECK(strcmp(s, "...y") == 0);      /* the pass with the arrival, then 3 empty ones */
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 2);
    yields(&a, 1, s);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 1);
    yields(&a, 4, s);
    CHECK(strcmp(s, "...y") == 0);      /* each arrival starts the count again */
    CHECK(MPIDI_POLL_set_yield(&a, 1, 0) == 0);
    yields(&a, 3, s);
    CHECK(strcmp(s, "yyy") == 0);
}

static void test_yield_polls_netmod_next(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];
    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 1000, 10, 1000);
    CHECK(MPIDI_POLL_set_yield(&a, 2, 0) == 0);
    for (int i = 0; i < 4; i++) {
        s[i] = MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY) ? '1' : '.';
        s[i + 5] = MPIDI_POLL_pass_done(&a) ? 'y' : '.';
    }
    s[4] = '|';
    s[9] = '\0';
    /* passes 1-2 skip the netmod (ratio 1000); pass 2 yields, so 3 and 4 poll it */
    CHECK(strcmp(s, "..11|.yyy") == 0);
    CHECK(a.nm_polls + a.nm_skipped == a.shm_polls);
}

static void test_yield_never(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[2048];
    init_ok(&a, MPIDI_POLL_POLICY_ROUNDROBIN, 50, 10, 1000);
    yields(&a, 2000, s);        /* the default of the plain arbiter: never */
    CHECK(strchr(s, 'y') == NULL && a.yields == 0);
    CHECK(MPIDI_POLL_set_yield(&a, 0, 1) == 0 && a.yield_after == 0);
    yields(&a, 2000, s);        /* 0 never yields, oversubscribed or not */
    CHECK(strchr(s, 'y') == NULL && a.yields == 0);
}

static void test_yield_auto(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[2048];
    init_ok(&a, MPIDI_POLL_POLICY_ADAPTIVE, 50, 10, 1000);
    CHECK(MPIDI_POLL_set_yield(&a, -1, 0) == 0 && a.yield_after == 0);
    yields(&a, 2000, s);
    CHECK(strchr(s, 'y') == NULL);
    CHECK(MPIDI_POLL_set_yield(&a, -1, 1) == 0 && a.yield_after == MPIDI_POLL_YIELD_AUTO);
    yields(&a, MPIDI_POLL_YIELD_AUTO, s);
    CHECK(strchr(s, 'y') == s + MPIDI_POLL_YIELD_AUTO - 1);
    CHECK(MPIDI_POLL_set_yield(&a, -2, 1) == MPIDI_POLL_EINVAL_YIELD_AFTER);
}

static void place(MPIDI_POLL_place_t * p, uint64_t machine, uint64_t cpus0, uint64_t cpus1)
{
    memset(p, 0, sizeof(*p));
    p->machine = machine;
    p->cpus[0] = cpus0;
    p->cpus[1] = cpus1;
}

static void test_oversubscribed(void)
{
    MPIDI_POLL_place_t p[5];
    unsigned r, c;
    /* 2 unbound ranks on a 2-CPU machine: not oversubscribed; a third is */
    place(&p[0], 7, 0x3, 0);
    place(&p[1], 7, 0x3, 0);
    place(&p[2], 7, 0x3, 0);
    CHECK(!MPIDI_POLL_oversubscribed(p, 2, 1, &r, &c) && r == 2 && c == 2);
    CHECK(MPIDI_POLL_oversubscribed(p, 3, 0, &r, &c) && r == 3 && c == 2);
    /* ranks bound to one core each: the union of their masks counts */
    place(&p[0], 7, 0x1, 0);
    place(&p[1], 7, 0x2, 0);
    CHECK(!MPIDI_POLL_oversubscribed(p, 2, 0, &r, &c) && r == 2 && c == 2);
    place(&p[1], 7, 0x1, 0);    /* both bound to CPU 0 */
    CHECK(MPIDI_POLL_oversubscribed(p, 2, 1, &r, &c) && r == 2 && c == 1);
    /* another machine's ranks do not count; CPUs past 64 do */
    place(&p[0], 7, 0x1, 0x1);
    place(&p[1], 7, 0x1, 0);
    place(&p[2], 9, 0x1, 0);
    place(&p[3], 9, 0x1, 0);
    place(&p[4], 9, 0x1, 0);
    CHECK(!MPIDI_POLL_oversubscribed(p, 5, 1, &r, &c) && r == 2 && c == 2);
    CHECK(MPIDI_POLL_oversubscribed(p, 5, 3, &r, &c) && r == 3 && c == 1);
}

static MPIDI_POLL_nm_state_t nm_now;
static MPIDI_POLL_nm_state_t nm_report(void)
{
    return nm_now;
}

/* netmod polls in `passes` passes */
static unsigned long long polls_in(MPIDI_POLL_arbiter_t * a, MPIDI_POLL_wait_t w, int passes)
{
    unsigned long long n0 = a->nm_polls;
    for (int i = 0; i < passes; i++)
        MPIDI_POLL_nm_due(a, w);
    return a->nm_polls - n0;
}

static void test_idle_netmod(void)
{
    MPIDI_POLL_arbiter_t a;
    char s[64];

    /* unused (a job on one node): every max_ratio-th pass, whatever the wait */
    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 3, 10, 8);
    a.nm_state = nm_report;
    nm_now = MPIDI_POLL_NM_UNUSED;
    schedule(&a, MPIDI_POLL_WAIT_ANY, 24, s);
    CHECK(strcmp(s, ".......1.......1.......1") == 0);
    CHECK(a.nm_idle == 15 && a.nm_skipped == 21 && a.shm_polls == 24);

    /* static ratio 50, max_ratio 1000: netmod polls in `passes` passes */
    static const struct {
        MPIDI_POLL_policy_t policy;
        MPIDI_POLL_nm_state_t nm;
        MPIDI_POLL_wait_t wait;
        int passes;
        unsigned long long polls;
    } cases[] = {
        { MPIDI_POLL_POLICY_ADAPTIVE, MPIDI_POLL_NM_UNUSED, MPIDI_POLL_WAIT_REMOTE, 5000, 5 },
        { MPIDI_POLL_POLICY_DYNAMIC, MPIDI_POLL_NM_UNUSED, MPIDI_POLL_WAIT_ANY, 5000, 5 },
        /* quiet: only a wait that needs shared memory alone skips it */
        { MPIDI_POLL_POLICY_ADAPTIVE, MPIDI_POLL_NM_QUIET, MPIDI_POLL_WAIT_LOCAL, 5000, 5 },
        { MPIDI_POLL_POLICY_ADAPTIVE, MPIDI_POLL_NM_QUIET, MPIDI_POLL_WAIT_REMOTE, 100, 100 },
        { MPIDI_POLL_POLICY_ADAPTIVE, MPIDI_POLL_NM_QUIET, MPIDI_POLL_WAIT_ANY, 100, 100 },
        { MPIDI_POLL_POLICY_STATIC, MPIDI_POLL_NM_QUIET, MPIDI_POLL_WAIT_ANY, 5000, 100 },
        /* a hint left from adaptive (the first wait after a switch) */
        { MPIDI_POLL_POLICY_STATIC, MPIDI_POLL_NM_QUIET, MPIDI_POLL_WAIT_LOCAL, 5000, 100 },
        { MPIDI_POLL_POLICY_DYNAMIC, MPIDI_POLL_NM_QUIET, MPIDI_POLL_WAIT_LOCAL, 100, 100 },
        /* busy: the policy alone */
        { MPIDI_POLL_POLICY_ADAPTIVE, MPIDI_POLL_NM_BUSY, MPIDI_POLL_WAIT_LOCAL, 5000, 100 },
        /* round-robin and stock are MPICH's orders: they never ask */
        { MPIDI_POLL_POLICY_ROUNDROBIN, MPIDI_POLL_NM_UNUSED, MPIDI_POLL_WAIT_LOCAL, 100, 100 },
        { MPIDI_POLL_POLICY_STOCK, MPIDI_POLL_NM_UNUSED, MPIDI_POLL_WAIT_ANY, 100, 100 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        init_ok(&a, cases[i].policy, 50, 10, 1000);
        a.nm_state = nm_report;
        nm_now = cases[i].nm;
        CHECK(polls_in(&a, cases[i].wait, cases[i].passes) == cases[i].polls);
        CHECK((a.nm_idle == 0) == (cases[i].polls * 50 >= (unsigned) cases[i].passes));
    }

    /* a yield leaves the netmod due on the next pass ... */
    init_ok(&a, MPIDI_POLL_POLICY_STATIC, 50, 10, 1000);
    a.nm_state = nm_report;
    nm_now = MPIDI_POLL_NM_QUIET;
    CHECK(MPIDI_POLL_set_yield(&a, 2, 0) == 0);
    MPIDI_POLL_pass_done(&a);
    MPIDI_POLL_pass_done(&a);
    CHECK(a.yields == 1 && MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY));
    /* ... unless it is idle for the wait: then every MPIDI_POLL_NM_YIELDS yields */
    nm_now = MPIDI_POLL_NM_UNUSED;
    int polled = 0, first = 0;
    for (int i = 1; i <= 2 * MPIDI_POLL_NM_YIELDS; i++) {
        CHECK(MPIDI_POLL_pass_done(&a));
        if (MPIDI_POLL_nm_due(&a, MPIDI_POLL_WAIT_ANY) && polled++ == 0)
            first = i;
    }
    CHECK(polled == 2 && first == MPIDI_POLL_NM_YIELDS);
    CHECK(a.nm_polls + a.nm_skipped == a.shm_polls);
}

/* MPIDI_POLL_nm_next: the next pass polls the netmod under every ratio and
 * report, once; the passes after it follow the policy again */
static void test_nm_next(void)
{
    static const MPIDI_POLL_wait_t waits[] = {
        MPIDI_POLL_WAIT_ANY, MPIDI_POLL_WAIT_LOCAL, MPIDI_POLL_WAIT_REMOTE
    };
    static const MPIDI_POLL_nm_state_t states[] = {
        MPIDI_POLL_NM_BUSY, MPIDI_POLL_NM_QUIET, MPIDI_POLL_NM_UNUSED
    };
    for (int w = 0; w < 3; w++)
        for (int n = 0; n < 3; n++) {
            MPIDI_POLL_arbiter_t a;
            char s[8];
            init_ok(&a, MPIDI_POLL_POLICY_ADAPTIVE, 50, 10, 1000);
            a.nm_state = nm_report;
            nm_now = states[n];
            MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 10); /* earns ratio 10 */
            MPIDI_POLL_nm_due(&a, waits[w]);
            MPIDI_POLL_nm_next(&a);
            schedule(&a, waits[w], 3, s);
            CHECK(s[0] == '1');
            int every = waits[w] == MPIDI_POLL_WAIT_REMOTE && states[n] != MPIDI_POLL_NM_UNUSED;
            CHECK(strcmp(s + 1, every ? "11" : "..") == 0);
        }
}

int main(void)
{
    run("roundrobin polls the netmod every pass", test_roundrobin);
    run("stock leaves the netmod due every pass", test_stock);
    run("static ratio 3 schedule", test_static_schedule);
    run("static ratio 50 counts", test_static_50_counts);
    run("dynamic ratio from message history", test_dynamic_history);
    run("a lower ratio takes effect on the next pass", test_ratio_drop_polls_at_once);
    run("quiet shared memory ends the earned ratio", test_shm_quiet_ends_ratio);
    run("policy switched at run time", test_set_policy);
    run("ratio clamped to max_ratio", test_clamp_max_ratio);
    run("netmod polled at least every max_ratio passes", test_never_starved);
    run("burst size equal to history mispredicts", test_burst_equals_history_mispredicts);
    run("adaptive follows wait hints", test_adaptive_wait_hints);
    run("reset", test_reset);
    run("invalid parameters refused", test_invalid_parameters);
    run("static ratio clamped to max_ratio", test_static_ratio_clamped);
    run("yield on the exact empty pass, reset by an arrival", test_yield_exact_pass);
    run("the pass after a yield polls the netmod", test_yield_polls_netmod_next);
    run("yield 0 never yields", test_yield_never);
    run("auto yields only when oversubscribed", test_yield_auto);
    run("oversubscribed: ranks of one machine against their CPUs", test_oversubscribed);
    run("an idle netmod is polled every max_ratio passes", test_idle_netmod);
    run("nm_next makes the next pass poll the netmod", test_nm_next);
    return unit_summary();
}
