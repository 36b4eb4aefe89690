/*
 * mpich-multichannel: the tuner's decisions (plain C, no MPI): comparing two
 * contenders over interleaved rounds, bisection on a size grid, and the
 * choice of each setting from what was measured.  Unit tests:
 * test/unit/test_tune.c.  How the tuner uses them: doc/tuning.md.
 */
#ifndef TUNE_POLICY_H_INCLUDED
#define TUNE_POLICY_H_INCLUDED

#include <stddef.h>

#define MMC_TUNE_MAX_ROUNDS 64
#define MMC_TUNE_MIN_GAIN 0.01  /* a change must gain more than 1% ... */

/* B against A over interleaved rounds: ratio = A's time / B's time per round
 * (above 1: B is faster); median of those ratios and their spread (half
 * their range without the highest and the lowest n / 5: the tuner changes
 * a setting only where the gain exceeds it). */
typedef struct {
    double ratio;
    double spread;
    int rounds;
} MMC_TUNE_cmp_t;

/* median of v[0..n) (0 when n is 0); v is left as it was */
double MMC_TUNE_median(const double *v, int n);

/* half the range of v[0..n) without the n / 5 highest and the n / 5
 * lowest (0 when n is 0) */
double MMC_TUNE_spread(const double *v, int n);

MMC_TUNE_cmp_t MMC_TUNE_compare(const double *a_time, const double *b_time, int rounds);

/* +1: B is faster by more than both 1% and the spread; -1: slower by more
 * than both; 0: neither (no change is justified) */
int MMC_TUNE_verdict(MMC_TUNE_cmp_t c);

/* Smallest i in [0, n) for which holds(i) is true, for a predicate that is
 * false up to some point of the grid and true from there on (n if it never
 * holds).  Evaluates at most floor(log2(n)) + 1 points, never one twice. */
int MMC_TUNE_bisect(int n, int (*holds) (int i, void *ctx), void *ctx);

/* Powers of two from lo to hi (both included when powers of two); returns
 * how many, at most max. */
int MMC_TUNE_grid(size_t lo, size_t hi, size_t * out, int max);

/* A threshold from verdicts on grid[from..to) (the sizes around the
 * crossover, from the contests that decide it) of the contender the
 * threshold switches to (rendezvous, CMA, the split): +1 it wins beyond
 * noise, -1 it loses, 0 neither.  The default stays unless the verdicts
 * justify moving: up, past the last size from the default on at which it
 * loses (to `never` when that is the grid's last); down, when it wins at
 * some size below the default, to the smallest size from which it loses
 * nowhere below the default.  Returns the value to write. */
size_t MMC_TUNE_threshold(const size_t * grid, const int *verdict, int n, int from, int to,
                          size_t dflt, size_t never);

/* One threshold for traffic of several patterns (ping-pong, windows), from
 * each pattern's: the largest, so that the protocol it switches to loses in
 * none of them (a size below it is sent the way that wins there in at least
 * one pattern).  0 for n == 0. */
size_t MMC_TUNE_threshold_all(const size_t * v, int n);

/* Socket buffers: the memory they may take, buffers x peers x 2 (send and
 * receive; Linux doubles what is asked: counted too) must stay within budget. */
size_t MMC_TUNE_buffer_cap(size_t budget, int peers);

/* Whether the kernel's ceiling (net.core.wmem_max/rmem_max, bytes) lets a
 * fixed buffer cover the bandwidth-delay product (bits/s, seconds). */
int MMC_TUNE_kernel_max_short(size_t kernel_max, double bits_per_s, double rtt_s,
                              size_t * bdp_bytes);

/* --check: has a figure drifted from the saved one beyond both 10% and the
 * spreads of the two measurements?  +1 higher, -1 lower, 0 the same. */
int MMC_TUNE_drift(double saved, double saved_spread, double now, double now_spread);

#endif /* TUNE_POLICY_H_INCLUDED */
