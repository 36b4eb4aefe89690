/*
 * Unit tests of the CMA path's decisions (src/shm/cma/cma_policy.[ch]): the
 * process_vm_readv batches are checked by running them with memcpy between
 * two buffers and comparing bytes.  No MPICH needed.
 */
#include <stdlib.h>
#include <string.h>
#include "cma_policy.h"
#include "unit.h"

/* Moves everything described by remote into local, batch by batch, as the
 * receiver does; shortcut says how many bytes each "system call" may move at
 * most (a partial read).  Returns the total moved. */
static size_t run_batches(const struct iovec *local, int nl, const struct iovec *remote, int nr,
                          int max_iov, size_t max_bytes, size_t shortcut, int *calls)
{
    MPIDI_CMA_pos_t lp = { 0, 0 }, rp = { 0, 0 };
    struct iovec lo[64], ro[64];
    int kl, kr;
    size_t total = 0, n;
    *calls = 0;
    while ((n = MPIDI_CMA_batch(local, nl, lp, remote, nr, rp, max_iov, max_bytes,
                                lo, &kl, ro, &kr)) > 0) {
        CHECK(kl <= max_iov && kr <= max_iov);
        size_t want = n < shortcut ? n : shortcut, done = 0;
        /* a memcpy "process_vm_readv" that stops after want bytes */
        size_t li = 0, ri = 0;
        for (int i = 0, j = 0; i < kl && j < kr && done < want;) {
            size_t a = lo[i].iov_len - li, b = ro[j].iov_len - ri, m = a < b ? a : b;
            if (m > want - done)
                m = want - done;
            memcpy((char *) lo[i].iov_base + li, (char *) ro[j].iov_base + ri, m);
            done += m;
            li += m;
            ri += m;
            if (li == lo[i].iov_len) {
                i++;
                li = 0;
            }
            if (ri == ro[j].iov_len) {
                j++;
                ri = 0;
            }
        }
        MPIDI_CMA_advance(local, nl, &lp, done);
        MPIDI_CMA_advance(remote, nr, &rp, done);
        total += done;
        (*calls)++;
    }
    return total;
}

static void test_contig(void)
{
    char src[1000], dst[1000];
    for (int i = 0; i < 1000; i++)
        src[i] = (char) (i * 7 + 1);
    memset(dst, 0, sizeof(dst));
    struct iovec l = { dst, 1000 }, r = { src, 1000 };
    int calls;
    CHECK(run_batches(&l, 1, &r, 1, 64, 1 << 20, (size_t) -1, &calls) == 1000);
    CHECK(calls == 1 && memcmp(src, dst, 1000) == 0);
    /* a batch cap and partial reads are resumed where they stopped */
    memset(dst, 0, sizeof(dst));
    CHECK(run_batches(&l, 1, &r, 1, 64, 300, 77, &calls) == 1000);
    CHECK(calls == 13 && memcmp(src, dst, 1000) == 0);
}

/* vector-like pieces on both sides, of different shapes, zero-length ones in between */
static void test_noncontig(void)
{
    enum { N = 4096 };
    char *src = malloc(N), *dst = malloc(N), *ref = malloc(N);
    for (int i = 0; i < N; i++)
        src[i] = (char) (i * 13 + 5);
    struct iovec r[100], l[100];
    int nr = 0, nl = 0;
    size_t rsum = 0, lsum = 0;
    for (int i = 0; rsum < 3000; i++) {      /* remote: 37-byte pieces every 41 bytes */
        size_t len = rsum + 37 > 3000 ? 3000 - rsum : 37;
        r[nr++] = (struct iovec) { src + i * 41, len };
        if (i % 5 == 0)
            r[nr++] = (struct iovec) { src, 0 };
        rsum += len;
    }
    for (int i = 0; lsum < 3000; i++) {      /* local: 61-byte pieces every 64 bytes */
        size_t len = lsum + 61 > 3000 ? 3000 - lsum : 61;
        l[nl++] = (struct iovec) { dst + i * 64, len };
        lsum += len;
    }
    /* expected: the remote pieces concatenated, laid out by the local pieces */
    char packed[3000];
    for (int i = 0, o = 0; i < nr; o += r[i].iov_len, i++)
        memcpy(packed + o, r[i].iov_base, r[i].iov_len);
    memset(ref, 0, N);
    for (int i = 0, o = 0; i < nl; o += l[i].iov_len, i++)
        memcpy(ref + ((char *) l[i].iov_base - dst), packed + o, l[i].iov_len);
    int max_iov[] = { 1, 3, 64 };
    size_t shortcut[] = { (size_t) -1, 100, 1 };
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int calls;
            memset(dst, 0, N);
            CHECK(run_batches(l, nl, r, nr, max_iov[a], 1 << 20, shortcut[b], &calls) == 3000);
            CHECK(memcmp(dst, ref, N) == 0);
        }
    free(src);
    free(dst);
    free(ref);
}

/* the receive buffer is shorter than the message (truncation is decided
 * before, but the batches must never run past either side) */
static void test_uneven(void)
{
    char src[100], dst[60];
    struct iovec l = { dst, 60 }, r = { src, 100 }, lo[4], ro[4];
    int kl, kr;
    MPIDI_CMA_pos_t p0 = { 0, 0 };
    CHECK(MPIDI_CMA_batch(&l, 1, p0, &r, 1, p0, 4, 1000, lo, &kl, ro, &kr) == 60);
    MPIDI_CMA_pos_t end = { 1, 0 };
    CHECK(MPIDI_CMA_batch(&l, 1, end, &r, 1, p0, 4, 1000, lo, &kl, ro, &kr) == 0);
    CHECK(kl == 0 && kr == 0);
}

/* > 4 GiB described without touching memory: batches stay within the cap */
static void test_huge(void)
{
    struct iovec l = { (void *) 0x1000, (size_t) 5 << 30 }, r = { (void *) 0x2000, (size_t) 5 << 30 };
    struct iovec lo[2], ro[2];
    int kl, kr, calls = 0;
    MPIDI_CMA_pos_t lp = { 0, 0 }, rp = { 0, 0 };
    size_t n, total = 0;
    while ((n = MPIDI_CMA_batch(&l, 1, lp, &r, 1, rp, 2, MPIDI_CMA_BATCH_MAX, lo, &kl, ro, &kr))) {
        CHECK(n <= MPIDI_CMA_BATCH_MAX && kl == 1 && kr == 1);
        CHECK((char *) lo[0].iov_base == (char *) 0x1000 + total);
        MPIDI_CMA_advance(&l, 1, &lp, n);
        MPIDI_CMA_advance(&r, 1, &rp, n);
        total += n;
        calls++;
    }
    CHECK(total == (size_t) 5 << 30 && calls == 5);
}

static void test_availability(void)
{
    CHECK(MPIDI_CMA_availability(1, -1, 0, 1, 0) == MPIDI_CMA_OK);     /* no Yama */
    CHECK(MPIDI_CMA_availability(1, 0, 0, 1, 0) == MPIDI_CMA_OK);
    CHECK(MPIDI_CMA_availability(1, 1, 0, 1, 0) == MPIDI_CMA_OK);      /* PR_SET_PTRACER */
    CHECK(MPIDI_CMA_availability(1, 2, 0, 1, 0) == MPIDI_CMA_YAMA);
    CHECK(MPIDI_CMA_availability(1, 2, 1, 1, 0) == MPIDI_CMA_OK);
    CHECK(MPIDI_CMA_availability(1, 3, 1, 1, 0) == MPIDI_CMA_YAMA);
    CHECK(MPIDI_CMA_availability(1, 0, 0, 0, 0) == MPIDI_CMA_USERNS);
    CHECK(MPIDI_CMA_availability(1, 0, 0, 1, 1) == MPIDI_CMA_PROBE);
    CHECK(MPIDI_CMA_availability(0, 0, 0, 1, 0) == MPIDI_CMA_OFF);
    CHECK(strstr(MPIDI_CMA_avail_str(MPIDI_CMA_YAMA), "ptrace_scope") != NULL);
}

static void test_split(void)
{
    const size_t M = 1 << 20;
    CHECK(MPIDI_CMA_split_point(16 * M, 0, 1) == 0);    /* 0: never */
    CHECK(MPIDI_CMA_split_point(16 * M, 4 * M, 0) == 0);        /* a noncontiguous side */
    CHECK(MPIDI_CMA_split_point(4 * M - 1, 4 * M, 1) == 0);
    CHECK(MPIDI_CMA_split_point(4 * M, 4 * M, 1) == 2 * M);
    /* on a page boundary, never past the middle */
    size_t odd = 5 * M + 12345, p = MPIDI_CMA_split_point(odd, 1, 1);
    CHECK(p % MPIDI_CMA_PAGE == 0 && p <= odd / 2 && odd / 2 - p < MPIDI_CMA_PAGE);
    /* below two pages: half, and both parts non-empty */
    CHECK(MPIDI_CMA_split_point(3, 1, 1) == 1 && MPIDI_CMA_split_point(8191, 1, 1) == 4095);
    CHECK(MPIDI_CMA_split_point(8192, 1, 1) == 4096);
    CHECK(MPIDI_CMA_split_point(1, 1, 1) == 0 && MPIDI_CMA_split_point(0, 1, 1) == 0);
    /* more than 4 GiB */
    CHECK(MPIDI_CMA_split_point((size_t) 5 << 30, 4 * M, 1) == (size_t) 5 << 29);
}

/* MPICH_NUMVERSION of 4.0.2, 4.2.1, 5.0.0a1 and 5.0.1: 4 MiB on 4.x, 1 MiB from 5.0 */
static void test_defaults(void)
{
    const size_t M = 1 << 20;
    CHECK(MPIDI_CMA_THRESHOLD_DEFAULT(40002300) == 4 * M);
    CHECK(MPIDI_CMA_THRESHOLD_DEFAULT(40201300) == 4 * M);
    CHECK(MPIDI_CMA_THRESHOLD_DEFAULT(50000001) == M);
    CHECK(MPIDI_CMA_THRESHOLD_DEFAULT(50001300) == M);
    CHECK(MPIDI_CMA_SPLIT_DEFAULT(40201300) == 4 * M && MPIDI_CMA_SPLIT_DEFAULT(50001300) == M);
}

int main(void)
{
    run("contiguous, batch cap and partial reads resumed", test_contig);
    run("noncontiguous on both sides, any iov limit or partial read", test_noncontig);
    run("batches never pass the shorter side", test_uneven);
    run("5 GiB in 1 GiB batches", test_huge);
    run("availability decided from Yama, user namespace and probe", test_availability);
    run("split point: threshold, contiguity, page boundary", test_split);
    run("default thresholds by MPICH version", test_defaults);
    return unit_summary();
}
