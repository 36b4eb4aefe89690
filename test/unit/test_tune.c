/*
 * Unit tests of the tuner's decisions (tune/tune_policy.[ch]).  No MPICH needed.
 */
#include "tune_policy.h"
#include "unit.h"

static void compare_median_and_spread(void)
{
    /* B takes 0.8, 0.8, 0.5 (an outlier), 0.8 and 1.0 of A's time */
    double a[5] = { 1, 1, 1, 1, 1 }, b[5] = { 0.8, 0.8, 0.5, 0.8, 1.0 };
    MMC_TUNE_cmp_t c = MMC_TUNE_compare(a, b, 5);
    CHECK(c.rounds == 5);
    CHECK(c.ratio > 1.2499 && c.ratio < 1.2501);
    CHECK(c.spread < 1e-9);     /* 1.0 and 2.0 left out: the middle three agree */
    /* under 5 rounds the whole range counts */
    c = MMC_TUNE_compare(a, b + 2, 3);
    CHECK(c.spread > 0.499 && c.spread < 0.501);        /* (2.0 - 1.0) / 2 */
    /* one round in 5 each way is left out: of 15, the 3 highest and lowest */
    double a15[15], b15[15] = { 0.5, 0.5, 0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2 };
    for (int i = 0; i < 15; i++)
        a15[i] = 1;
    c = MMC_TUNE_compare(a15, b15, 15);
    CHECK(c.ratio == 1 && c.spread < 1e-9);
    /* a round with no figure (stopped early) is left out */
    double b2[5] = { 0.8, 0, 0.8, 0.8, 0.8 };
    CHECK(MMC_TUNE_compare(a, b2, 5).rounds == 4);
    double v[4] = { 3, 1, 4, 2 };
    CHECK(MMC_TUNE_median(v, 4) == 2.5 && MMC_TUNE_median(v, 3) == 3 && v[0] == 3);
    CHECK(MMC_TUNE_median(v, 0) == 0);
}

static void verdict_needs_both_one_percent_and_the_spread(void)
{
    MMC_TUNE_cmp_t c = { 1.05, 0.02, 5 };
    CHECK(MMC_TUNE_verdict(c) == 1);
    c.spread = 0.06;            /* gain inside the spread */
    CHECK(MMC_TUNE_verdict(c) == 0);
    c = (MMC_TUNE_cmp_t) { 1.008, 0.001, 5 };   /* below 1% */
    CHECK(MMC_TUNE_verdict(c) == 0);
    c = (MMC_TUNE_cmp_t) { 0.90, 0.03, 5 };
    CHECK(MMC_TUNE_verdict(c) == -1);
    c = (MMC_TUNE_cmp_t) { 1.5, 0.0, 2 };       /* too few rounds to say */
    CHECK(MMC_TUNE_verdict(c) == 0);
}

struct probe {
    int first_true, evaluated[64], calls;
};

static int holds(int i, void *ctx)
{
    struct probe *p = ctx;
    p->evaluated[i]++;
    p->calls++;
    return i >= p->first_true;
}

static void bisect_finds_the_crossover_in_log_steps(void)
{
    for (int n = 1; n <= 17; n++) {
        for (int t = 0; t <= n; t++) {
            struct probe p = { t, { 0 }, 0 };
            CHECK(MMC_TUNE_bisect(n, holds, &p) == t);
            int bound = 1;
            while ((1 << bound) <= n)
                bound++;        /* floor(log2 n) + 1 */
            CHECK(p.calls <= bound);
            for (int i = 0; i < n; i++)
                CHECK(p.evaluated[i] <= 1);
        }
    }
    struct probe p = { 0, { 0 }, 0 };
    CHECK(MMC_TUNE_bisect(0, holds, &p) == 0 && p.calls == 0);
}

static void grid_is_powers_of_two(void)
{
    size_t g[32];
    int n = MMC_TUNE_grid(65536, 16 << 20, g, 32);
    CHECK(n == 9 && g[0] == 65536 && g[8] == (16 << 20));
    n = MMC_TUNE_grid(3000, 9000, g, 32);
    CHECK(n == 2 && g[0] == 4096 && g[1] == 8192);
    CHECK(MMC_TUNE_grid(1, 1 << 30, g, 4) == 4);
}

static void threshold_moves_only_on_evidence(void)
{
    size_t g[32], d = 2 << 20, never = 16 << 20;
    int n = MMC_TUNE_grid(65536, 16 << 20, g, 32);      /* 64 KiB (0) .. 2 MiB (5) .. 16 MiB (8) */
    int v[32] = { 0 };
    /* ties everywhere: no reason to move */
    CHECK(MMC_TUNE_threshold(g, v, n, 0, n, d, never) == d);
    /* it loses everywhere from the default on: never */
    v[5] = v[6] = v[7] = v[8] = -1;
    CHECK(MMC_TUNE_threshold(g, v, n, 4, n, d, never) == never);
    /* it loses up to 4 MiB: raise to 8 MiB (a loss below the default does not count) */
    v[7] = v[8] = 0;
    v[4] = -1;
    CHECK(MMC_TUNE_threshold(g, v, n, 4, n, d, never) == (size_t) 8 << 20);
    /* only the confirmed range counts: a loss at 16 MiB outside it moves nothing */
    v[4] = v[5] = v[6] = 0;
    v[8] = -1;
    CHECK(MMC_TUNE_threshold(g, v, n, 1, 8, d, never) == d);
    /* the last size confirmed loses: the next one, unconfirmed */
    v[8] = 0;
    v[6] = -1;
    CHECK(MMC_TUNE_threshold(g, v, n, 4, 7, d, never) == (size_t) 8 << 20);
    v[6] = 0;
    /* a win at 1 MiB, ties from 256 KiB: down to where it stops losing */
    v[1] = -1;
    v[4] = 1;
    CHECK(MMC_TUNE_threshold(g, v, n, 1, 6, d, never) == (size_t) 256 << 10);
    /* the same verdicts, confirmed only from 512 KiB */
    CHECK(MMC_TUNE_threshold(g, v, n, 3, 6, d, never) == (size_t) 512 << 10);
    /* a loss at 512 KiB: from 1 MiB on it loses nowhere */
    v[3] = -1;
    CHECK(MMC_TUNE_threshold(g, v, n, 1, 6, d, never) == (size_t) 1 << 20);
    /* a win at 256 KiB does not outweigh the loss above it */
    v[2] = 1;
    CHECK(MMC_TUNE_threshold(g, v, n, 1, 6, d, never) == (size_t) 1 << 20);
    /* a loss just below the default: no size from which it never loses */
    v[4] = -1;
    CHECK(MMC_TUNE_threshold(g, v, n, 1, 6, d, never) == d);
    /* a win above the default moves nothing down */
    v[2] = v[3] = v[4] = 0;
    v[6] = 1;
    CHECK(MMC_TUNE_threshold(g, v, n, 1, 7, d, never) == d);
}

static void threshold_of_patterns_is_the_largest(void)
{
    /* ping-pong: rendezvous from 256 KiB; windows: eager wins up to 1 MiB */
    size_t v[2] = { 256 << 10, 1 << 20 };
    CHECK(MMC_TUNE_threshold_all(v, 2) == (size_t) 1 << 20);
    v[1] = 64 << 10;
    CHECK(MMC_TUNE_threshold_all(v, 2) == (size_t) 256 << 10);
    v[0] = 16 << 20;            /* never rendezvous in one pattern: never */
    CHECK(MMC_TUNE_threshold_all(v, 2) == (size_t) 16 << 20);
    CHECK(MMC_TUNE_threshold_all(v, 1) == (size_t) 16 << 20);
    CHECK(MMC_TUNE_threshold_all(v, 0) == 0);
}

static void buffers_within_budget_and_kernel_max(void)
{
    /* 64 MiB for 16 peers: 1 MiB per buffer (send + receive, doubled) */
    CHECK(MMC_TUNE_buffer_cap(64 << 20, 16) == (size_t) 1 << 20);
    CHECK(MMC_TUNE_buffer_cap(4 << 20, 0) == (size_t) 1 << 20);
    size_t bdp;
    /* 1 Gbit/s x 10 ms = 1.25 MB: a 4 MiB ceiling covers it, 1 MiB does not */
    CHECK(!MMC_TUNE_kernel_max_short(4 << 20, 1e9, 0.010, &bdp) && bdp == 1250000);
    CHECK(MMC_TUNE_kernel_max_short(1 << 20, 1e9, 0.010, &bdp));
}

static void drift_needs_ten_percent_and_the_spreads(void)
{
    CHECK(MMC_TUNE_drift(100, 0.02, 200, 0.02) == 1);   /* round trip doubled */
    CHECK(MMC_TUNE_drift(100, 0.02, 105, 0.02) == 0);
    CHECK(MMC_TUNE_drift(100, 0.20, 125, 0.10) == 0);   /* inside the spreads */
    CHECK(MMC_TUNE_drift(100, 0.02, 50, 0.02) == -1);
    CHECK(MMC_TUNE_drift(0, 0, 50, 0) == 0);
}

int main(void)
{
    run("compare: median ratio and half-range spread of the rounds (1 in 5 left out each way)",
        compare_median_and_spread);
    run("verdict: a change needs more than 1% and more than the spread",
        verdict_needs_both_one_percent_and_the_spread);
    run("bisect: crossover of every monotone predicate in floor(log2 n) + 1 steps",
        bisect_finds_the_crossover_in_log_steps);
    run("grid: powers of two between the bounds", grid_is_powers_of_two);
    run("threshold: moved from the default only on a measured loss or gain",
        threshold_moves_only_on_evidence);
    run("threshold of several patterns: the largest, so the switch loses in none",
        threshold_of_patterns_is_the_largest);
    run("buffers: memory budget per buffer, kernel maximum against the BDP",
        buffers_within_budget_and_kernel_max);
    run("check: drift beyond 10% and the spreads", drift_needs_ten_percent_and_the_spreads);
    return unit_summary();
}
