/*
 * Intra-node latency and message rate of two ranks, MPI-neutral (built with
 * each MPI's own mpicc by bench/run-shm-bench), each pinned to its own CPU
 * (rank 0 to the first CPU it may use, its partner to the second):
 *
 *   shmlat [peer P] [lat SIZE,SIZE,...] [rate W] [bw SIZE,SIZE,...] [coll SIZE,...]
 *     peer   rank 0's partner (default 1); every other rank idles until the
 *            end (a nonblocking barrier tested once a millisecond), as a rank
 *            of the job on another host that has nothing to do
 *     lat    ping-pong per size: one line size=N lat_us=L (round trip / 2,
 *            the best of 5 trials of about 20 ms each)
 *     rate   message rate, as osu_mbw_mr: rank 0 sends windows of W 8-byte
 *            MPI_Isend, the partner posts W MPI_Irecv and answers each window
 *            with 4 bytes; one line window=W msgs_per_s=R (best of 5 trials
 *            of about 50 ms)
 *     bw     windowed bandwidth per size, as osu_bw: windows of W (the last
 *            rate's, default 64; fewer above 4 MiB, 256 MiB a window)
 *            MPI_Isend of SIZE bytes, each window answered as above; one line
 *            size=N window=W bw_MBps=B (10^6 bytes/s, the best of 5 trials)
 *     coll   small collectives of the two ranks, as osu_allreduce and its
 *            kin: per size MPI_Allreduce (MPI_INT, sum), MPI_Bcast and
 *            MPI_Reduce (root 0) of SIZE bytes, then MPI_Barrier; one line
 *            coll=NAME size=N us=T each (time per call, the best of 5
 *            trials of about 20 ms; every result of the first and last call
 *            checked)
 *
 * The first and last message of every trial are checked byte by byte (and
 * every message's length); a wrong one aborts with exit status 1.
 */
#include "mmc_mpi.h"

#define TRIALS 5
#define MAXW 256

static int rank;
static MPI_Comm pair;           /* rank 0 (0 here) and its partner (1) */

static unsigned char pat(size_t size, int i, size_t k)
{
    return (unsigned char) (size * 7 + (size_t) i * 13 + k * 3 + 1);
}

static void fill(unsigned char *b, size_t size, int i)
{
    for (size_t k = 0; k < size; k++)
        b[k] = pat(size, i, k);
}

static void check(const unsigned char *b, size_t size, int i, MPI_Status * st)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    int bad = (size_t) count != size;
    for (size_t k = 0; !bad && k < size; k++)
        bad = b[k] != pat(size, i, k);
    if (bad) {
        fprintf(stderr, "shmlat: rank %d: message %d of %zu bytes is wrong\n", rank, i, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* n round trips of size bytes; the seconds they took */
static double pingpong(unsigned char *sbuf, unsigned char *rbuf, size_t size, int n)
{
    MPI_Status st;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        int edge = i == 0 || i == n - 1;
        if (edge)
            fill(sbuf, size, i);
        if (rank == 0) {
            MPI_Send(sbuf, (int) size, MPI_BYTE, 1, 1, pair);
            MPI_Recv(rbuf, (int) size, MPI_BYTE, 1, 1, pair, &st);
        } else {
            MPI_Recv(rbuf, (int) size, MPI_BYTE, 0, 1, pair, &st);
            MPI_Send(sbuf, (int) size, MPI_BYTE, 0, 1, pair);
        }
        if (edge)
            check(rbuf, size, i, &st);
    }
    return MPI_Wtime() - t0;
}

static void lat(size_t size)
{
    unsigned char *sbuf = malloc(size + 1), *rbuf = malloc(size + 1);
    memset(sbuf, 0, size + 1);
    memset(rbuf, 0, size + 1);
    /* how many round trips make about 20 ms, from a short run */
    int n = 10;
    double t = pingpong(sbuf, rbuf, size, n);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, pair);
    n = (int) (0.02 / (t / n + 1e-9));
    n = n < 4 ? 4 : n > 200000 ? 200000 : n;
    double best = 1e30;
    for (int k = 0; k < TRIALS; k++) {
        t = pingpong(sbuf, rbuf, size, n);
        if (t < best)
            best = t;
    }
    if (rank == 0)
        printf("size=%zu lat_us=%.4f\n", size, best / n / 2 * 1e6);
    free(sbuf);
    free(rbuf);
}

enum { ALLREDUCE, BCAST, REDUCE, BARRIER };
static const char *const coll_names[] = { "allreduce", "bcast", "reduce", "barrier" };

/* n calls of collective c on size bytes; the seconds they took */
static double coll_calls(int c, int *in, int *out, int count, int n)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        int edge = i == 0 || i == n - 1;
        if (edge)
            for (int k = 0; k < count; k++) {
                in[k] = (rank + 1) * (k + i + 1);
                out[k] = -1;
            }
        if (c == ALLREDUCE)
            MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, pair);
        else if (c == BCAST)
            MPI_Bcast(rank == 0 ? in : out, count, MPI_INT, 0, pair);
        else if (c == REDUCE)
            MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, pair);
        else
            MPI_Barrier(pair);
        if (!edge || c == BARRIER || (c == REDUCE && rank != 0) || (c == BCAST && rank == 0))
            continue;
        for (int k = 0; k < count; k++) {
            /* the sum of ranks 0 and 1's, or rank 0's alone for bcast */
            int want = c == BCAST ? (k + i + 1) : 3 * (k + i + 1);
            if (out[k] != want) {
                fprintf(stderr, "shmlat: rank %d: %s of %d ints, call %d: element %d is %d, "
                        "not %d\n", rank, coll_names[c], count, i, k, out[k], want);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    return MPI_Wtime() - t0;
}

static void coll(int c, size_t size)
{
    int count = (int) (size / sizeof(int));
    count = count < 1 ? 1 : count;
    int *in = malloc(count * sizeof(int)), *out = malloc(count * sizeof(int));
    int n = 10;
    double t = coll_calls(c, in, out, count, n);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, pair);
    n = (int) (0.02 / (t / n + 1e-9));
    n = n < 4 ? 4 : n > 400000 ? 400000 : n;
    double best = 1e30;
    for (int k = 0; k < TRIALS; k++) {
        MPI_Barrier(pair);
        t = coll_calls(c, in, out, count, n);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, pair);
        if (t < best)
            best = t;
    }
    if (rank == 0) {
        if (c == BARRIER)
            printf("coll=%s us=%.4f\n", coll_names[c], best / n * 1e6);
        else
            printf("coll=%s size=%zu us=%.4f\n", coll_names[c], size, best / n * 1e6);
    }
    free(in);
    free(out);
}

/* windows of w messages of size bytes, each window answered with 4 bytes;
 * the seconds they took */
static double window_trial(unsigned char *sbuf, unsigned char *rbuf, size_t size, int w,
                           int windows)
{
    unsigned char ack[4] = { 1, 2, 3, 4 };
    MPI_Request req[MAXW];
    MPI_Status st[MAXW];
    double t0 = MPI_Wtime();
    for (int k = 0; k < windows; k++) {
        int edge = k == 0 || k == windows - 1;
        if (rank == 0) {
            for (int i = 0; i < w; i++) {
                if (edge)
                    fill(sbuf + (size_t) i * size, size, i);
                MPI_Isend(sbuf + (size_t) i * size, (int) size, MPI_BYTE, 1, 2, pair, &req[i]);
            }
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(ack, 4, MPI_BYTE, 1, 3, pair, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < w; i++)
                MPI_Irecv(rbuf + (size_t) i * size, (int) size, MPI_BYTE, 0, 2, pair, &req[i]);
            MPI_Waitall(w, req, st);
            if (edge)
                for (int i = 0; i < w; i++)
                    check(rbuf + (size_t) i * size, size, i, &st[i]);
            MPI_Send(ack, 4, MPI_BYTE, 0, 3, pair);
        }
    }
    return MPI_Wtime() - t0;
}

/* The best of TRIALS trials of about 50 ms of windows of w messages of size
 * bytes: messages per second. */
static double windowed(size_t size, int w)
{
    unsigned char *sbuf = calloc((size_t) w, size), *rbuf = calloc((size_t) w, size);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "shmlat: no memory for a window of %d x %zu bytes\n", w, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int windows = 4;
    double t = window_trial(sbuf, rbuf, size, w, windows);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, pair);
    windows = (int) (0.05 / (t / windows + 1e-9));
    windows = windows < 4 ? 4 : windows;
    double best = 1e30;
    for (int k = 0; k < TRIALS; k++) {
        t = window_trial(sbuf, rbuf, size, w, windows);
        if (t < best)
            best = t;
    }
    free(sbuf);
    free(rbuf);
    return (double) w * windows / best;
}

int main(int argc, char **argv)
{
    int size, peer = 1, a = 1, w = 64;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 3 && strcmp(argv[1], "peer") == 0) {
        peer = atoi(argv[2]);
        a = 3;
    }
    if (size < 2 || peer < 1 || peer >= size || argc < a + 2 || (argc - a) % 2) {
        if (rank == 0)
            fprintf(stderr, "usage: shmlat [peer P] [lat SIZE,SIZE,...] [rate W] "
                    "[bw SIZE,SIZE,...] [coll SIZE,SIZE,...] (2 ranks or more)\n");
        MPI_Finalize();
        return 2;
    }
    int active = rank == 0 || rank == peer;
    MPI_Comm_split(MPI_COMM_WORLD, active ? 0 : MPI_UNDEFINED, rank, &pair);
    MPI_Request done;
    if (!active) {
        MPI_Ibarrier(MPI_COMM_WORLD, &done);
        for (int flag = 0; !flag;) {
            struct timespec ms = { 0, 1000000 };
            nanosleep(&ms, NULL);
            MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
        }
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(pair, &rank);
    mmc_pin_cpu(rank);
    MPI_Barrier(pair);
    for (; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "rate") == 0) {
            w = atoi(argv[a + 1]);
            w = w < 1 ? 1 : w > MAXW ? MAXW : w;
            double r = windowed(8, w);
            if (rank == 0)
                printf("window=%d msgs_per_s=%.0f\n", w, r);
            continue;
        }
        int bw = strcmp(argv[a], "bw") == 0, co = strcmp(argv[a], "coll") == 0;
        for (char *p = argv[a + 1]; *p;) {
            size_t n = strtoull(p, &p, 10);
            if (co) {
                for (int c = ALLREDUCE; c < BARRIER; c++)
                    coll(c, n);
            } else if (!bw) {
                lat(n);
            } else {
                /* at most 256 MiB a window */
                size_t cap = (256u << 20) / (n ? n : 1);
                int ws = (size_t) w > cap ? (cap ? (int) cap : 1) : w;
                double r = windowed(n, ws);
                if (rank == 0)
                    printf("size=%zu window=%d bw_MBps=%.1f\n", n, ws, r * n / 1e6);
            }
            if (*p == ',')
                p++;
        }
        if (co)
            coll(BARRIER, 0);
    }
    MPI_Comm_free(&pair);
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    MPI_Wait(&done, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
