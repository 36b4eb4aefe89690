/*
 * Unit tests of the wake-up of a sleeping rank (src/poll/poll_wake.[ch]) and
 * of the sleep decisions of the arbiter (src/poll/poll_policy.[ch]).  Two
 * threads stand for two local ranks: each has its wake socket and its line.
 */
#include "poll_wake.h"
#include "poll_policy.h"
#include "unit.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static MPIDI_POLL_wake_line_t lines[2];

static void opens_and_publishes(void)
{
    MPIDI_POLL_wake_t w = {.fd = -1 };
    memset(lines, 0, sizeof(lines));
    CHECK(MPIDI_POLL_wake_open(&w, lines, 1) == 0);
    CHECK(w.fd >= 0);
    CHECK(lines[1].addr_len > 0 && lines[1].addr_len <= MPIDI_POLL_WAKE_ADDR_MAX);
    CHECK(lines[1].addr[0] == '\0');    /* abstract */
    CHECK(lines[0].addr_len == 0);
    CHECK(w.addr_len == lines[1].addr_len && !memcmp(w.addr, lines[1].addr, w.addr_len));
    /* another thread's wake-up */
    MPIDI_POLL_wake_self(&w);
    CHECK(w.sent == 1);
    CHECK(MPIDI_POLL_wake_sleep(&w, -1, 5000) == 1);
    MPIDI_POLL_wake_close(&w);
    CHECK(w.fd == -1);
}

static void signals_only_an_armed_peer(void)
{
    MPIDI_POLL_wake_t a = {.fd = -1 }, b = {.fd = -1 };
    memset(lines, 0, sizeof(lines));
    CHECK(MPIDI_POLL_wake_open(&a, lines, 0) == 0);
    CHECK(MPIDI_POLL_wake_open(&b, lines, 1) == 0);
    a.on = b.on = 1;
    MPIDI_POLL_wake_signal(&a, 1);
    CHECK(a.sent == 0);
    /* not armed: the sleep ends on its timeout */
    double t0 = now();
    CHECK(MPIDI_POLL_wake_sleep(&b, -1, 50) == 0);
    CHECK(now() - t0 >= 0.045);
    MPIDI_POLL_wake_arm(&b);
    MPIDI_POLL_wake_signal(&a, 1);
    MPIDI_POLL_wake_signal(&a, 1);      /* the second finds it disarmed */
    CHECK(a.sent == 1);
    CHECK(lines[1].armed == 0);
    t0 = now();
    CHECK(MPIDI_POLL_wake_sleep(&b, -1, 5000) == 1);
    CHECK(now() - t0 < 2.0);
    CHECK(b.received == 1);
    /* signalling off (spin): nothing sent even to an armed peer */
    a.on = 0;
    MPIDI_POLL_wake_arm(&b);
    MPIDI_POLL_wake_signal(&a, 1);
    CHECK(a.sent == 1);
    MPIDI_POLL_wake_close(&a);
    MPIDI_POLL_wake_close(&b);
}

static void a_stranger_is_a_spurious_wakeup(void)
{
    MPIDI_POLL_wake_t b = {.fd = -1 }, s = {.fd = -1 };
    MPIDI_POLL_wake_line_t mine[1];
    memset(lines, 0, sizeof(lines));
    CHECK(MPIDI_POLL_wake_open(&b, lines, 1) == 0);
    CHECK(MPIDI_POLL_wake_open(&s, mine, 0) == 0);
    /* datagrams until the socket's queue is full: the sender never blocks */
    s.lines = lines;
    double t0 = now();
    for (int i = 0; i < 1000; i++)
        MPIDI_POLL_wake_send(&s, 1);
    CHECK(now() - t0 < 1.0);
    CHECK(s.sent >= 1 && s.sent < 1000);
    CHECK(MPIDI_POLL_wake_sleep(&b, -1, 1000) == 1);
    CHECK(b.received == s.sent);
    CHECK(MPIDI_POLL_wake_sleep(&b, -1, 20) == 0);
    /* a corrupt address in the region is not followed */
    unsigned long long sent = s.sent;
    lines[1].addr_len = 4096;
    MPIDI_POLL_wake_send(&s, 1);
    CHECK(s.sent == sent);
    MPIDI_POLL_wake_close(&b);
    MPIDI_POLL_wake_close(&s);
}

/* ping-pong of a sequence word each way, each side sleeping whenever it
 * finds nothing: a lost wake-up shows as a sleep that ran to its timeout */
#define ROUNDS 100000
#define TIMEOUT_MS 2000
static uint64_t seq[2];
static MPIDI_POLL_wake_t side[2];
static unsigned timeouts[2];

static void wait_for(int me, uint64_t want)
{
    while (__atomic_load_n(&seq[me], __ATOMIC_ACQUIRE) < want) {
        MPIDI_POLL_wake_arm(&side[me]);
        if (__atomic_load_n(&seq[me], __ATOMIC_ACQUIRE) >= want) {
            MPIDI_POLL_wake_disarm(&side[me]);
            break;
        }
        if (!MPIDI_POLL_wake_sleep(&side[me], -1, TIMEOUT_MS))
            timeouts[me]++;
    }
}

static void *pong(void *arg)
{
    (void) arg;
    for (uint64_t i = 1; i <= ROUNDS; i++) {
        wait_for(1, i);
        __atomic_store_n(&seq[0], i, __ATOMIC_RELEASE);
        MPIDI_POLL_wake_signal(&side[1], 0);
    }
    return NULL;
}

static void no_lost_wakeup(void)
{
    memset(lines, 0, sizeof(lines));
    seq[0] = seq[1] = 0;
    for (int i = 0; i < 2; i++) {
        CHECK(MPIDI_POLL_wake_open(&side[i], lines, i) == 0);
        side[i].on = 1;
        timeouts[i] = 0;
    }
    pthread_t t;
    pthread_create(&t, NULL, pong, NULL);
    double t0 = now();
    for (uint64_t i = 1; i <= ROUNDS; i++) {
        __atomic_store_n(&seq[1], i, __ATOMIC_RELEASE);
        MPIDI_POLL_wake_signal(&side[0], 1);
        wait_for(0, i);
    }
    pthread_join(t, NULL);
    printf("    %d rounds in %.2f s, %llu + %llu signals\n", ROUNDS, now() - t0,
           side[0].sent, side[1].sent);
    CHECK(timeouts[0] == 0 && timeouts[1] == 0);
    CHECK(side[0].sent + side[1].sent > 0);
    for (int i = 0; i < 2; i++)
        MPIDI_POLL_wake_close(&side[i]);
}

static void arbiter(MPIDI_POLL_arbiter_t * a, int mode, int yield_after, int spin, int over)
{
    CHECK(MPIDI_POLL_arbiter_init(a, MPIDI_POLL_POLICY_ADAPTIVE, 50, 10, 1000) == 0);
    CHECK(MPIDI_POLL_set_wait_mode(a, (MPIDI_POLL_mode_t) mode, yield_after, spin, over,
                                   over) == 0);
}

static void modes(void)
{
    MPIDI_POLL_arbiter_t a;
    arbiter(&a, MPIDI_POLL_MODE_SPIN, 5, 10, 1);
    CHECK(!a.sleep && a.yield_after == 0);
    arbiter(&a, MPIDI_POLL_MODE_YIELD, -1, 10, 0);
    CHECK(!a.sleep && a.yield_after == MPIDI_POLL_YIELD_AUTO);
    arbiter(&a, MPIDI_POLL_MODE_SLEEP, -1, 10, 0);
    CHECK(a.sleep && a.yield_after == 0 && a.spin_count == 10);
    arbiter(&a, MPIDI_POLL_MODE_AUTO, -1, 10, 1);
    CHECK(a.sleep && a.yield_after == MPIDI_POLL_YIELD_AUTO);
    arbiter(&a, MPIDI_POLL_MODE_AUTO, -1, 10, 0);
    CHECK(!a.sleep && a.yield_after == 0);
    CHECK(MPIDI_POLL_set_wait_mode(&a, MPIDI_POLL_MODE_SLEEP, -1, -1, 0, 0) ==
          MPIDI_POLL_EINVAL_SPIN_COUNT);
    CHECK(MPIDI_POLL_set_wait_mode(&a, MPIDI_POLL_MODE_SLEEP, -2, 0, 0, 0) ==
          MPIDI_POLL_EINVAL_YIELD_AFTER);
    CHECK(!a.sleep);            /* unchanged */
}

static void arms_after_the_spin_then_sleeps(void)
{
    MPIDI_POLL_arbiter_t a;
    arbiter(&a, MPIDI_POLL_MODE_SLEEP, 0, 3, 0);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SPIN);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SPIN);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    /* the rechecking pass found nothing */
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SLEEP);
    MPIDI_POLL_woke(&a, 0, 1000);
    CHECK(a.sleeps == 1 && a.woken == 0 && a.slept_ns == 1000);
    CHECK(a.since_nm == a.max_ratio);   /* the next pass polls the netmod */
    /* a timeout re-arms at the next empty pass */
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SLEEP);
    MPIDI_POLL_woke(&a, 1, 10);
    CHECK(a.woken == 1);
    /* a signal spins again */
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SPIN);
}

static void an_arrival_disarms(void)
{
    MPIDI_POLL_arbiter_t a;
    arbiter(&a, MPIDI_POLL_MODE_SLEEP, 0, 1, 0);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    MPIDI_POLL_arrived(&a, MPIDI_POLL_SHM, 1);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_DISARM);
    CHECK(!a.armed && a.empty_waits == 0);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    /* so does a later piece of a message under way, which is no arrival */
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SLEEP);
    MPIDI_POLL_woke(&a, 1, 0);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    MPIDI_POLL_progressed(&a);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_DISARM);
    CHECK(a.msgs[MPIDI_POLL_SHM] == 1 && a.win_msgs[MPIDI_POLL_SHM] == 1);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    /* work only polling can finish (bytes to write) disarms too */
    CHECK(MPIDI_POLL_wait_done(&a, 0) == MPIDI_POLL_IDLE_DISARM);
    CHECK(MPIDI_POLL_wait_done(&a, 0) == MPIDI_POLL_IDLE_SPIN);
    /* spin count 0: the first empty pass arms */
    arbiter(&a, MPIDI_POLL_MODE_SLEEP, 0, 0, 0);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_SLEEP);
    MPIDI_POLL_woke(&a, 0, 0);
    CHECK(MPIDI_POLL_wait_done(&a, 1) == MPIDI_POLL_IDLE_ARM);
}

int main(void)
{
    run("open: an abstract address, published in the rank's line; a wake-up of its own",
        opens_and_publishes);
    run("signal: only an armed peer, once, and only where sleep is on",
        signals_only_an_armed_peer);
    run("strangers' datagrams: spurious wake-ups, drained, a full socket never blocks a sender; "
        "a corrupt address not followed",
        a_stranger_is_a_spurious_wakeup);
    run("100000 ping-pong rounds, both sides sleeping: no lost wake-up", no_lost_wakeup);
    run("wait modes: spin, yield, sleep, auto; invalid values change nothing", modes);
    run("a blocking wait arms after the spin, sleeps after the rechecking pass",
        arms_after_the_spin_then_sleeps);
    run("an arrival, a later piece of a message, or work only polling finishes, disarms",
        an_arrival_disarms);
    return unit_summary();
}
