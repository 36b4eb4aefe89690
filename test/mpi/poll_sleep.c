/*
 * A wait that sleeps (MPIR_CVAR_CH4_POLL_WAIT_MODE): rank 0 sends each other
 * rank messages after a pause, through every path the sizes take (a box, the
 * shared-memory queue, CMA, ch4:tcp across hosts), while the receiver waits
 * in MPI_Recv; bytes are checked, and so are the receivers' CPU time and the
 * sleep pvars.
 *   arg paths:   4 sizes, a 300 ms pause each: a receiver under sleep uses
 *                under a fifth of the pause in CPU time, and slept (with
 *                MMC_EXPECT_PROGRESSED set, counted pieces of the largest)
 *   arg spin:    the same with the mode off: no sleep at all
 *   arg stress:  3000 short rounds (a pause of 0-100 us before each send),
 *                receivers that sleep at once (SPIN_COUNT=0): every byte, and
 *                most sleeps ended by a wake-up, not the timeout
 *   arg threads: MPI_THREAD_MULTIPLE: one thread of each receiver sleeps in
 *                MPI_Recv for a late message while its other thread
 *                ping-pongs with rank 0; both finish, bytes checked
 *   arg greq:    each rank's main thread sleeps in MPI_Wait on a generalized
 *                request that its other thread completes after a pause:
 *                the completion wakes it (most sleeps that end do so by a
 *                wake-up, not the 10 ms timeout) and MPI_Wait returns the
 *                status its query function gives, GREQ_ROUNDS times
 *   arg dead:    rank 1, shown to sleep by a first late message, sleeps in
 *                MPI_Recv again while rank 0 kills itself (SIGKILL): the
 *                launcher ends the job (a nonzero exit within the test's
 *                limit): the sleeper does not keep it alive
 */
#include "mmc_test.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#define PAUSE_MS 300
/* a box, the queue, its pipeline, CMA (above every version's threshold) */
static const int sizes[] = { 8, 2000, 65536, 8 << 20 };

#define NSIZES ((int) (sizeof(sizes) / sizeof(sizes[0])))

static int rank, size;

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pause_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

static void paths(int sleep_on)
{
    unsigned char *buf = malloc(sizes[NSIZES - 1]);
    long long s0 = mmc_pvar_counter("ch4_poll_sleeps");
    long long w0 = mmc_pvar_counter("ch4_poll_sleeps_woken");
    long long p0 = mmc_pvar_counter("ch4_poll_progressed");
    if (s0 < 0 || w0 < 0 || p0 < 0)
        MMC_ERR("rank %d: no ch4_poll_sleeps(_woken) or ch4_poll_progressed performance "
                "variable\n", rank);
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        if (rank == 0) {
            pause_us(PAUSE_MS * 1000L);
            for (int p = 1; p < size; p++) {
                mmc_fill(buf, n, k, p);
                MPI_Send(buf, n, MPI_BYTE, p, k, MPI_COMM_WORLD);
            }
        } else {
            double c0 = cpu_s(), t0 = mmc_now_us();
            MPI_Recv(buf, n, MPI_BYTE, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double cpu = cpu_s() - c0, wall = (mmc_now_us() - t0) / 1e6;
            mmc_check(buf, n, k, rank, "late message");
            printf("rank %d: %d bytes after %.0f ms: %.1f ms of CPU\n", rank, n, wall * 1e3,
                   cpu * 1e3);
            /* a fifth: wide of what spinning costs on a loaded machine too */
            if (sleep_on && cpu > 0.2 * PAUSE_MS / 1e3)
                MMC_ERR("rank %d: %.1f ms of CPU in a wait of %.0f ms under sleep\n", rank,
                        cpu * 1e3, wall * 1e3);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    long long slept = mmc_pvar_counter("ch4_poll_sleeps") - s0;
    long long woken = mmc_pvar_counter("ch4_poll_sleeps_woken") - w0;
    if (rank != 0 && sleep_on && slept <= 0)
        MMC_ERR("rank %d: waited %d ms %d times and never slept\n", rank, PAUSE_MS, NSIZES);
    /* the timeouts alone would also keep the CPU low: the messages must wake it */
    if (rank != 0 && sleep_on && woken <= 0)
        MMC_ERR("rank %d: %lld sleeps, none ended by a message's wake-up\n", rank, slept);
    if (!sleep_on && slept != 0)
        MMC_ERR("rank %d: slept %lld times with sleep off\n", rank, slept);
    /* MMC_EXPECT_PROGRESSED: the largest message came in pieces the arbiter saw */
    long long progressed = mmc_pvar_counter("ch4_poll_progressed") - p0;
    if (rank != 0 && getenv("MMC_EXPECT_PROGRESSED") && progressed <= 0)
        MMC_ERR("rank %d: %d bytes came without a pass that counted a piece\n", rank,
                sizes[NSIZES - 1]);
    free(buf);
}

#define STRESS_ROUNDS 3000
static void stress(void)
{
    unsigned char buf[2000];
    long long s0 = mmc_pvar_counter("ch4_poll_sleeps");
    long long w0 = mmc_pvar_counter("ch4_poll_sleeps_woken");
    unsigned seed = 12345;
    for (int r = 0; r < STRESS_ROUNDS; r++) {
        int n = r % 3 == 0 ? 2000 : 8;
        if (rank == 0) {
            for (int p = 1; p < size; p++) {
                seed = seed * 1103515245 + 12345;
                /* a pause that races the receiver's arming */
                double until = mmc_now_us() + (seed >> 16) % 100;
                while (mmc_now_us() < until);
                mmc_fill(buf, n, r, p);
                MPI_Send(buf, n, MPI_BYTE, p, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, 1, MPI_BYTE, p, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_check(buf, n, r, rank, "stress");
            MPI_Send(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    long long slept = mmc_pvar_counter("ch4_poll_sleeps") - s0;
    long long woken = mmc_pvar_counter("ch4_poll_sleeps_woken") - w0;
    printf("rank %d: %d rounds, %lld sleeps, %lld ended by a wake-up\n", rank, STRESS_ROUNDS,
           slept, woken);
    if (rank != 0 && slept < STRESS_ROUNDS / 4)
        MMC_ERR("rank %d: only %lld sleeps in %d rounds with SPIN_COUNT=0\n", rank, slept,
                STRESS_ROUNDS);
    /* a lost wake-up ends on the 10 ms timeout: rare preemptions may too */
    if (slept > 0 && woken < slept * 3 / 4)
        MMC_ERR("rank %d: %lld of %lld sleeps ran to the timeout\n", rank, slept - woken, slept);
}

#define PINGS 2000
static void *pinger(void *arg)
{
    (void) arg;
    unsigned char b[64];
    for (int i = 0; i < PINGS; i++) {
        if (rank == 0) {
            for (int p = 1; p < size; p++) {
                MPI_Recv(b, 64, MPI_BYTE, p, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mmc_check(b, 64, i, p, "ping");
                mmc_fill(b, 64, i, 0);
                MPI_Send(b, 64, MPI_BYTE, p, 3, MPI_COMM_WORLD);
            }
        } else {
            mmc_fill(b, 64, i, rank);
            MPI_Send(b, 64, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
            MPI_Recv(b, 64, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_check(b, 64, i, 0, "pong");
        }
    }
    return NULL;
}

static void threads(void)
{
    unsigned char b[4096];
    pthread_t t;
    pthread_create(&t, NULL, pinger, NULL);
    if (rank == 0) {
        pause_us(PAUSE_MS * 1000L);
        for (int p = 1; p < size; p++) {
            mmc_fill(b, sizeof(b), 99, p);
            MPI_Send(b, sizeof(b), MPI_BYTE, p, 4, MPI_COMM_WORLD);
        }
    } else {
        MPI_Recv(b, sizeof(b), MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mmc_check(b, sizeof(b), 99, rank, "late message beside the pings");
    }
    pthread_join(t, NULL);
    printf("rank %d: %d pings beside a sleeping wait\n", rank, PINGS);
}

#define GREQ_ROUNDS 10
/* the status of round r: r bytes, tag 100 + r, no source */
static int greq_query(void *state, MPI_Status * st)
{
    int r = *(int *) state;
    MPI_Status_set_elements(st, MPI_BYTE, r);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = 100 + r;
    return MPI_SUCCESS;
}

static int greq_free(void *state)
{
    (void) state;
    return MPI_SUCCESS;
}

static int greq_cancel(void *state, int complete)
{
    (void) state;
    (void) complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    pause_us(50 * 1000L);
    MPI_Grequest_complete(*(MPI_Request *) arg);
    return NULL;
}

static void greq(void)
{
    long long w0 = mmc_pvar_counter("ch4_poll_sleeps_woken");
    for (int r = 0; r < GREQ_ROUNDS; r++) {
        MPI_Request req, handle;
        MPI_Status st;
        pthread_t t;
        int count = -1;
        MPI_Grequest_start(greq_query, greq_free, greq_cancel, &r, &req);
        /* the completer's own copy: MPI_Wait sets req to MPI_REQUEST_NULL */
        handle = req;
        pthread_create(&t, NULL, completer, &handle);
        MPI_Wait(&req, &st);
        pthread_join(t, NULL);
        if (req != MPI_REQUEST_NULL)
            MMC_ERR("rank %d: MPI_Wait left the generalized request\n", rank);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (st.MPI_SOURCE != MPI_UNDEFINED || st.MPI_TAG != 100 + r || count != r)
            MMC_ERR("rank %d: round %d: MPI_Wait returned source %d, tag %d, %d bytes, not "
                    "the query's MPI_UNDEFINED, %d, %d\n", rank, r, st.MPI_SOURCE, st.MPI_TAG,
                    count, 100 + r, r);
    }
    long long woken = mmc_pvar_counter("ch4_poll_sleeps_woken") - w0;
    printf("rank %d: %d generalized requests completed by another thread, %lld sleeps "
           "ended by a wake-up\n", rank, GREQ_ROUNDS, woken);
    /* unwoken, each wait would end on the timeout after the completion */
    if (w0 < 0 || woken < GREQ_ROUNDS / 2)
        MMC_ERR("rank %d: %lld of %d completions woke the sleeping wait\n", rank, woken,
                GREQ_ROUNDS);
}

static void dead(void)
{
    char c = 1;
    long long s0 = mmc_pvar_counter("ch4_poll_sleeps");
    if (rank == 0) {
        pause_us(PAUSE_MS * 1000L);
        MPI_Send(&c, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        pause_us(PAUSE_MS * 1000L);
        raise(SIGKILL);
    } else if (rank == 1) {
        MPI_Recv(&c, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long long slept = mmc_pvar_counter("ch4_poll_sleeps") - s0;
        printf("rank 1: slept %lld times; waits again for rank 0, which dies\n", slept);
        fflush(stdout);
        if (s0 < 0 || slept <= 0)
            MMC_ERR("rank 1: waited %d ms and never slept\n", PAUSE_MS);
        MPI_Recv(&c, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MMC_ERR("rank 1: a receive from a killed rank completed\n");
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "paths";
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (strcmp(what, "threads") == 0 || strcmp(what, "greq") == 0) {
        if (provided < MPI_THREAD_MULTIPLE)
            MMC_ERR("rank %d: MPI_THREAD_MULTIPLE not provided\n", rank);
        else if (what[0] == 't')
            threads();
        else
            greq();
    } else if (strcmp(what, "stress") == 0) {
        stress();
    } else if (strcmp(what, "dead") == 0) {
        dead();
    } else {
        paths(strcmp(what, "spin") != 0);
    }
    return mmc_finish();
}
