/*
 * mpich-multichannel: the tuner's decisions (plain C, see tune_policy.h).
 */
#include "tune_policy.h"
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *r, int n)
{
    return n == 0 ? 0 : n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

double MMC_TUNE_median(const double *v, int n)
{
    double tmp[MMC_TUNE_MAX_ROUNDS];
    n = n < MMC_TUNE_MAX_ROUNDS ? n : MMC_TUNE_MAX_ROUNDS;
    for (int i = 0; i < n; i++)
        tmp[i] = v[i];
    qsort(tmp, n, sizeof(double), cmp_double);
    return median_sorted(tmp, n);
}

double MMC_TUNE_spread(const double *v, int n)
{
    double tmp[MMC_TUNE_MAX_ROUNDS];
    n = n < MMC_TUNE_MAX_ROUNDS ? n : MMC_TUNE_MAX_ROUNDS;
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++)
        tmp[i] = v[i];
    qsort(tmp, n, sizeof(double), cmp_double);
    /* one round in 5 each way is left out: on a long link a single round
     * that met a loss or a queue set a spread of 30% and hid a 14%
     * rendezvous loss; with one each way of 15 rounds, the spread of the
     * mixed load grew with the rounds (doc/tuning.md) */
    int cut = n / 5;
    return (tmp[n - 1 - cut] - tmp[cut]) / 2;
}

MMC_TUNE_cmp_t MMC_TUNE_compare(const double *a_time, const double *b_time, int rounds)
{
    double r[MMC_TUNE_MAX_ROUNDS];
    MMC_TUNE_cmp_t c = { 1.0, 0.0, 0 };
    for (int i = 0; i < rounds && c.rounds < MMC_TUNE_MAX_ROUNDS; i++)
        if (a_time[i] > 0 && b_time[i] > 0)
            r[c.rounds++] = a_time[i] / b_time[i];
    if (c.rounds == 0)
        return c;
    c.ratio = MMC_TUNE_median(r, c.rounds);
    c.spread = MMC_TUNE_spread(r, c.rounds);
    return c;
}

int MMC_TUNE_verdict(MMC_TUNE_cmp_t c)
{
    double noise = c.spread > MMC_TUNE_MIN_GAIN ? c.spread : MMC_TUNE_MIN_GAIN;
    /* fewer than 3 rounds give no spread worth the name */
    if (c.rounds < 3)
        return 0;
    if (c.ratio - 1 > noise)
        return 1;
    if (1 - c.ratio > noise)
        return -1;
    return 0;
}

int MMC_TUNE_bisect(int n, int (*holds) (int i, void *ctx), void *ctx)
{
    int lo = 0, hi = n;         /* the answer lies in [lo, hi] */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (holds(mid, ctx))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int MMC_TUNE_grid(size_t lo, size_t hi, size_t * out, int max)
{
    int n = 0;
    size_t s = 1;
    while (s < lo)
        s *= 2;
    for (; s <= hi && n < max; s *= 2)
        out[n++] = s;
    return n;
}

size_t MMC_TUNE_threshold(const size_t * grid, const int *verdict, int n, int from, int to,
                          size_t dflt, size_t never)
{
    int d = 0, last_loss = -1, low = -1, win = 0;
    while (d < n && grid[d] < dflt)
        d++;
    /* up, past the last size from the default on at which it loses */
    for (int i = from > d ? from : d; i < to; i++)
        if (verdict[i] < 0)
            last_loss = i;
    if (last_loss >= 0)
        return last_loss + 1 < n ? grid[last_loss + 1] : never;
    /* down to where it stops losing, if it wins somewhere from there to the
     * default: where it ties, the measurement cannot place the threshold,
     * and where it stops losing is the sharp edge of the curve
     * (doc/tuning.md) */
    for (int i = from; i < to && i < d; i++) {
        if (verdict[i] < 0) {
            low = -1;
            win = 0;
        } else {
            if (low < 0)
                low = i;
            win |= verdict[i] > 0;
        }
    }
    return low >= 0 && win ? grid[low] : dflt;
}

size_t MMC_TUNE_threshold_all(const size_t * v, int n)
{
    size_t m = 0;
    for (int i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

size_t MMC_TUNE_buffer_cap(size_t budget, int peers)
{
    if (peers < 1)
        peers = 1;
    return budget / ((size_t) peers * 2 * 2);
}

int MMC_TUNE_kernel_max_short(size_t kernel_max, double bits_per_s, double rtt_s,
                              size_t * bdp_bytes)
{
    *bdp_bytes = (size_t) (bits_per_s / 8 * rtt_s);
    return kernel_max < *bdp_bytes;
}

int MMC_TUNE_drift(double saved, double saved_spread, double now, double now_spread)
{
    double noise = saved_spread + now_spread;
    if (noise < 0.10)
        noise = 0.10;
    if (saved <= 0 || now <= 0)
        return 0;
    if (now / saved - 1 > noise)
        return 1;
    if (1 - now / saved > noise)
        return -1;
    return 0;
}
