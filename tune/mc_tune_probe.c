/*
 * mpich-mc-tune-probe: the measuring half of mpich-mc-tune (doc/tuning.md).
 * The driver launches it with one rank pair per contender: ranks 2k and
 * 2k+1 run contender k, placed by the driver on the link being tuned and
 * given the contender's CVARs in their environment (an MPMD job), so every
 * contender runs in the same job and the contenders take turns round by
 * round.  Rank 0 directs: it sends each measurement to the pair that runs
 * it; every other rank waits without spinning (mmc_idle_wait), so only the
 * measuring pair uses the CPUs.  Rank 0 also decides (tune_policy.c) and
 * prints one JSON object per line, prefixed "MMC-TUNE ", for the driver.
 *
 *   mpich-mc-tune-probe PHASE [--deadline S] [--rounds N] [--ms MS] [--min BYTES]
 *                       [--max BYTES] [--same-below BYTES] [--windows FROM:TO]
 *                       [--default BYTES] [--default-split BYTES]
 *                       [--cap BYTES] [--kernel-max BYTES]
 *                       [--policies P[:RATIO],...] [--cvar NAME=VALUE]...
 *                       [--ceiling raw|memcpy]
 *                       [--saved NAME=MEDIAN:SPREAD]...
 *
 * PHASE: link (1 pair: MPI, raw TCP and memcpy by size, round trip), net
 * (2 pairs: eager to 16 MiB, all rendezvous, in ping-pong and in windows
 * of 64 sends; raw TCP buffers in pair 0's processes), cma (3 pairs: copy
 * path, CMA, CMA split), fbox (2 pairs:
 * fast boxes up to a quarter of the box, MPICH's queue), policy (3 ranks:
 * 0 and 1 on one node, 2 on another; policies written through MPI_T), ab
 * (2 pairs: defaults, tuned; raw TCP in pair 0's processes beside them,
 * or memcpy with --ceiling memcpy; every size from --min), cvars (the
 * defaults, then every --cvar read back through MPI_T), check (link's
 * figures against --saved ones).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <math.h>
#include <poll.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>
#include "mmc_mpi.h"
#include "../bench/rawsock.h"
#include "tune_policy.h"
#include "tcp_policy.h"         /* what the thresholds' -1 resolves to */
#include "cma_policy.h"
#include "fbox_ring.h"

enum { OP_STOP, OP_MPI, OP_RAW, OP_MEMCPY, OP_MIXED, OP_POLICY, OP_WINDOW };
enum { TAG_CMD = 7000, TAG_RES, TAG_DATA, TAG_SETUP, TAG_STREAM };

typedef struct {
    int op, conn, reps, arg;
    int a, b;                   /* the pair: a measures, b answers */
    long size;
} cmd_t;

#define MAX_CONNS 12
#define MAX_SIZES 40
#define MAX_POLICIES 8
#define CONFIRM 3               /* contests that decide a threshold's move (crossover()) */

static int rank, nprocs, rounds = 5, partial;
static double deadline, slice = 0.02;
static unsigned char *buf, *ref, *slots;
static size_t bufsize, slotsize;
static int conns[MAX_CONNS], nconns;

/* a figure for JSON: a round that measured nothing gives 0, never inf or nan */
static double fin(double x)
{
    return isfinite(x) ? x : 0;
}

static void out(const char *fmt, ...) __attribute__ ((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("MMC-TUNE ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static double now(void)
{
    return mmc_now_us() / 1e6;
}

static void grow(size_t n)
{
    if (n <= bufsize)
        return;
    buf = realloc(buf, n);
    ref = realloc(ref, n);
    for (size_t i = bufsize; i < n; i++)
        ref[i] = (unsigned char) (i * 131 + 7);
    bufsize = n;
    if (!buf || !ref) {
        fprintf(stderr, "mpich-mc-tune-probe: no memory for %zu bytes\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* ---------------------------------------------------------------- raw TCP */

/* Rank b listens, publishes its IPv4 addresses, checks a random token from
 * a: a stranger who reaches the port first is dropped, not measured. */
static int raw_pair(int a, int b, int bufsz)
{
    unsigned char token[16], got[16];
    struct {
        uint32_t addr[8];
        int n, port;
    } card = { {0}, 0, 0 };
    int fd = -1;
    if (rank == a && getrandom(token, sizeof(token), 0) != sizeof(token))
        raw_die("getrandom");
    if (rank == a)
        MPI_Send(token, sizeof(token), MPI_BYTE, b, TAG_SETUP, MPI_COMM_WORLD);
    if (rank == b) {
        MPI_Recv(token, sizeof(token), MPI_BYTE, a, TAG_SETUP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        struct sockaddr_in sa = {.sin_family = AF_INET };
        socklen_t len = sizeof(sa);
        int l = socket(AF_INET, SOCK_STREAM, 0);
        raw_setup(l, bufsz, bufsz);
        if (bind(l, (struct sockaddr *) &sa, sizeof(sa)) || listen(l, 4) ||
            getsockname(l, (struct sockaddr *) &sa, &len))
            raw_die("raw listen");
        card.port = ntohs(sa.sin_port);
        struct ifaddrs *ifs, *i;
        if (getifaddrs(&ifs) == 0) {
            for (int lo = 0; lo < 2; lo++)      /* other interfaces first, loopback last */
                for (i = ifs; i; i = i->ifa_next)
                    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && card.n < 8 &&
                        !!(i->ifa_flags & IFF_LOOPBACK) == lo)
                        card.addr[card.n++] =
                            ((struct sockaddr_in *) i->ifa_addr)->sin_addr.s_addr;
            freeifaddrs(ifs);
        }
        MPI_Send(&card, sizeof(card), MPI_BYTE, a, TAG_SETUP, MPI_COMM_WORLD);
        for (;;) {
            struct pollfd p = { l, POLLIN, 0 };
            if (poll(&p, 1, 30000) != 1)
                raw_die("raw accept: no connection from the partner in 30 s");
            fd = accept(l, NULL, NULL);
            if (fd < 0)
                continue;
            struct timeval tv = { 2, 0 };
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            if (recv(fd, got, sizeof(got), MSG_WAITALL) == sizeof(got) &&
                memcmp(got, token, sizeof(got)) == 0)
                break;
            close(fd);
        }
        close(l);
        struct timeval none = { 0, 0 };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
        raw_setup(fd, bufsz, bufsz);
    } else if (rank == a) {
        MPI_Recv(&card, sizeof(card), MPI_BYTE, b, TAG_SETUP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < card.n && fd < 0; k++) {
            struct sockaddr_in sa = {.sin_family = AF_INET,.sin_port = htons(card.port) };
            sa.sin_addr.s_addr = card.addr[k];
            fd = socket(AF_INET, SOCK_STREAM, 0);
            raw_setup(fd, bufsz, bufsz);
            fcntl(fd, F_SETFL, O_NONBLOCK);
            int rc = connect(fd, (struct sockaddr *) &sa, sizeof(sa)), err = 0;
            socklen_t el = sizeof(err);
            struct pollfd p = { fd, POLLOUT, 0 };
            if (rc != 0 && (errno != EINPROGRESS || poll(&p, 1, 2000) != 1 ||
                            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err)) {
                close(fd);
                fd = -1;
                continue;
            }
            fcntl(fd, F_SETFL, 0);
            raw_xfer(fd, token, sizeof(token), 0, 1);
        }
        if (fd < 0)
            raw_die("raw connect: no address of the partner answered");
    }
    return fd;
}

/* ---------------------------------------------------------------- measuring */

static double pingpong_mpi(int a, int b, size_t n, int reps)
{
    double t0 = now();
    for (int r = 0; r < reps; r++) {
        if (rank == a) {
            MPI_Send(buf, (int) n, MPI_BYTE, b, TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) n, MPI_BYTE, b, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) n, MPI_BYTE, a, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int) n, MPI_BYTE, a, TAG_DATA, MPI_COMM_WORLD);
        }
    }
    return now() - t0;
}

static double pingpong_raw(int a, int fd, size_t n, int reps)
{
    double t0 = now();
    for (int r = 0; r < reps; r++) {
        raw_xfer(fd, buf, n, rank != a, 0);
        raw_xfer(fd, buf, n, rank == a, 0);
    }
    return now() - t0;
}

/* The windowed pattern of the bandwidth benchmarks users run first: a sends
 * a window of nonblocking sends from one buffer, b receives each into a slot
 * of its own and answers with one byte.  64 messages, fewer where they would
 * hold more than WINDOW_BYTES (64 x 16 MiB would be 1 GiB), at least 4. */
#define WINDOW 64
#define WINDOW_MIN 4
#define WINDOW_BYTES ((size_t) 16 << 20)
static int window_of(size_t n)
{
    size_t w = n ? WINDOW_BYTES / n : WINDOW;
    return w > WINDOW ? WINDOW : w < WINDOW_MIN ? WINDOW_MIN : (int) w;
}

/* reps windows; with check, b compares every message with ref and its
 * answer says whether all were right: a returns -1 when one was not */
static double window_mpi(int a, int b, size_t n, int reps, int check)
{
    MPI_Request req[WINDOW];
    int w = window_of(n);
    unsigned char ok = 1;
    if (rank == b && slotsize < w * n) {
        free(slots);
        slotsize = w * n;
        slots = malloc(slotsize ? slotsize : 1);
        if (!slots) {
            fprintf(stderr, "mpich-mc-tune-probe: no memory for %zu bytes\n", slotsize);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    double t0 = now();
    for (int r = 0; r < reps; r++) {
        if (rank == a) {
            for (int i = 0; i < w; i++)
                MPI_Isend(buf, (int) n, MPI_BYTE, b, TAG_DATA, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ok, 1, MPI_BYTE, b, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < w; i++)
                MPI_Irecv(slots + i * n, (int) n, MPI_BYTE, a, TAG_DATA, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            for (int i = 0; check && i < w; i++)
                ok &= memcmp(slots + i * n, ref, n) == 0;
            MPI_Send(&ok, 1, MPI_BYTE, a, TAG_DATA, MPI_COMM_WORLD);
        }
    }
    return ok ? now() - t0 : -1;
}

/* memcpy of n bytes reps x 2 times (as many copies as a ping-pong moves) */
static double copies(size_t n, int reps)
{
    grow(2 * n);
    double t0 = now();
    for (int r = 0; r < 2 * reps; r++) {
        memcpy(buf + (r % 2) * n, buf + (1 - r % 2) * n, n);
        __asm__ __volatile__("":::"memory");
    }
    return now() - t0;
}

/* The mixed load of the policy phase: rank 2 streams `reps` 64 KiB messages
 * to rank 0 while ranks 0 and 1 ping-pong 8 bytes; ends when the stream is
 * through.  Rank 0 returns the time; *rt the round trips it made. */
#define STREAM_MSG 65536
#define STREAM_WIN 4
static double mixed(int reps, long *rt)
{
    char ping[8] = { 0 };
    double t0 = now();
    *rt = 0;
    grow((size_t) STREAM_MSG * STREAM_WIN);
    if (rank == 2) {
        MPI_Request req[STREAM_WIN];
        for (int i = 0; i < reps; i++) {
            int slot = i % STREAM_WIN;
            if (i >= STREAM_WIN)
                MPI_Wait(&req[slot], MPI_STATUS_IGNORE);
            MPI_Isend(buf + (size_t) slot * STREAM_MSG, STREAM_MSG, MPI_BYTE, 0, TAG_STREAM,
                      MPI_COMM_WORLD, &req[slot]);
        }
        MPI_Waitall(reps < STREAM_WIN ? reps : STREAM_WIN, req, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        for (;;) {
            MPI_Status st;
            MPI_Recv(ping, 8, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG != TAG_DATA)
                break;
            MPI_Send(ping, 8, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
        }
    } else if (rank == 0) {
        MPI_Request req[STREAM_WIN + 1];
        int got = 0, posted = 0;
        for (; posted < STREAM_WIN && posted < reps; posted++)
            MPI_Irecv(buf + (size_t) posted * STREAM_MSG, STREAM_MSG, MPI_BYTE, 2, TAG_STREAM,
                      MPI_COMM_WORLD, &req[posted]);
        for (int i = posted; i < STREAM_WIN; i++)
            req[i] = MPI_REQUEST_NULL;
        while (got < reps) {
            MPI_Send(ping, 8, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
            MPI_Irecv(ping, 8, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req[STREAM_WIN]);
            for (;;) {
                int idx;
                MPI_Waitany(STREAM_WIN + 1, req, &idx, MPI_STATUS_IGNORE);
                if (idx == STREAM_WIN)
                    break;
                got++;
                if (posted < reps) {
                    MPI_Irecv(buf + (size_t) idx * STREAM_MSG, STREAM_MSG, MPI_BYTE, 2,
                              TAG_STREAM, MPI_COMM_WORLD, &req[idx]);
                    posted++;
                }
            }
            (*rt)++;
        }
        MPI_Send(ping, 8, MPI_BYTE, 1, TAG_STREAM, MPI_COMM_WORLD);
    }
    return now() - t0;
}

static int policy_write(int value, int ratio)
{
    int rc = mmc_cvar_write("MPIR_CVAR_CH4_POLL_STATIC_RATIO", ratio);
    return rc ? rc : mmc_cvar_write("MPIR_CVAR_CH4_POLL_POLICY", value);
}

/* Runs one command on this rank (a member of the run); returns the time,
 * or -1 when the received bytes were wrong or the CVAR write failed. */
static double run_cmd(const cmd_t * c)
{
    size_t n = (size_t) c->size;
    if (c->op == OP_MPI || c->op == OP_RAW) {
        grow(n ? n : 1);
        /* one checked round trip first: a wrong byte fails the measurement */
        memcpy(buf, ref, n);
        if (c->op == OP_MPI)
            pingpong_mpi(c->a, c->b, n, 1);
        else
            pingpong_raw(c->a, conns[c->conn], n, 1);
        if (rank == c->a && memcmp(buf, ref, n) != 0)
            return -1;
        return c->op == OP_MPI ? pingpong_mpi(c->a, c->b, n, c->reps)
            : pingpong_raw(c->a, conns[c->conn], n, c->reps);
    }
    if (c->op == OP_WINDOW) {
        grow(n ? n : 1);
        memcpy(buf, ref, n);
        if (window_mpi(c->a, c->b, n, 1, 1) < 0)
            return -1;
        return window_mpi(c->a, c->b, n, c->reps, 0);
    }
    if (c->op == OP_MEMCPY)
        return copies(n, c->reps);
    if (c->op == OP_POLICY)
        return policy_write(c->arg, c->reps) ? -1 : 0;
    if (c->op == OP_MIXED) {
        long rt;
        double t = mixed(c->reps, &rt);
        return rank == 0 ? t / (rt ? rt : 1) : t;
    }
    return 0;
}

/* Rank 0: ranks who[] (ending in -1) run c; returns what the first of them
 * measured.  Every member reports back, so the next command finds them all
 * waiting; ranks not in who[] sleep meanwhile. */
static double direct(cmd_t c, const int *who)
{
    double res = 0, r;
    for (int i = 0; who[i] >= 0; i++)
        if (who[i] != 0)
            MPI_Send(&c, sizeof(c), MPI_BYTE, who[i], TAG_CMD, MPI_COMM_WORLD);
    for (int i = 0; who[i] >= 0; i++)
        if (who[i] == 0 && (r = run_cmd(&c), i == 0))
            res = r;
    for (int i = 0; who[i] >= 0; i++) {
        if (who[i] == 0)
            continue;
        MPI_Request req;
        MPI_Irecv(&r, 1, MPI_DOUBLE, who[i], TAG_RES, MPI_COMM_WORLD, &req);
        mmc_idle_wait(&req);
        if (i == 0)
            res = r;
    }
    return res;
}

/* Every rank but 0: runs what rank 0 sends until OP_STOP. */
static void serve(void)
{
    for (;;) {
        cmd_t c;
        MPI_Request req;
        MPI_Irecv(&c, sizeof(c), MPI_BYTE, 0, TAG_CMD, MPI_COMM_WORLD, &req);
        mmc_idle_wait(&req);
        if (c.op == OP_STOP)
            return;
        double r = run_cmd(&c);
        MPI_Send(&r, 1, MPI_DOUBLE, 0, TAG_RES, MPI_COMM_WORLD);
    }
}

/* ---------------------------------------------------------------- contests */

typedef struct {
    const char *name;
    cmd_t c;
    int who[4];
} contender_t;

static contender_t mpi_pair(const char *name, int pair)
{
    contender_t k = { name, {.op = OP_MPI,.a = 2 * pair,.b = 2 * pair + 1 },
    {2 * pair, 2 * pair + 1, -1} };
    return k;
}

/* pair's ranks in the windowed pattern */
static contender_t window_pair(const char *name, int pair)
{
    contender_t k = mpi_pair(name, pair);
    k.c.op = OP_WINDOW;
    return k;
}

static contender_t raw_conn(const char *name, int conn)
{
    contender_t k = { name, {.op = OP_RAW,.conn = conn,.a = 0,.b = 1 }, {0, 1, -1} };
    return k;
}

static double t[8][MMC_TUNE_MAX_ROUNDS];

/* Ends every other rank's serve() (each waits for rank 0's commands). */
static void stop_servers(void)
{
    cmd_t stop = {.op = OP_STOP };
    for (int r = 1; r < nprocs; r++)
        MPI_Send(&stop, sizeof(stop), MPI_BYTE, r, TAG_CMD, MPI_COMM_WORLD);
}

/* Received bytes were wrong: said, and the job ends with exit 3, nothing of
 * it used.  The other ranks are stopped as at the end: with MPI_Abort the
 * launcher could lose the line that says why. */
static void damaged(const char *who, size_t n)
{
    out("{\"kind\":\"error\",\"what\":\"%s received wrong bytes at %zu\"}", who, n);
    stop_servers();
    for (int i = 0; i < nconns; i++)
        close(conns[i]);
    MPI_Finalize();
    exit(3);
}

/* Contenders k[0..nk) at size n, round by round, each round in another
 * order; the same repetitions for all, sized to `slice` seconds from k[0].
 * Returns the rounds completed (fewer when the deadline came: partial). */
static int contest(contender_t * k, int nk, size_t n, int *reps)
{
    for (int j = 0; j < nk; j++) {
        cmd_t c = k[j].c;
        c.size = (long) n;
        c.reps = 1;
        double one = direct(c, k[j].who);       /* warm-up and byte check */
        if (one < 0)
            damaged(k[j].name, n);
        if (j == 0) {
            *reps = one > 0 ? (int) (slice / one) : 100000;
            *reps = *reps < 1 ? 1 : *reps > 100000 ? 100000 : *reps;
        }
    }
    int r;
    for (r = 0; r < rounds && r < MMC_TUNE_MAX_ROUNDS; r++) {
        if (now() > deadline) {
            partial = 1;
            break;
        }
        for (int j = 0; j < nk; j++) {
            int idx = (j + r) % nk;
            cmd_t c = k[idx].c;
            c.size = (long) n;
            if (*reps <= 4) {
                /* large messages: one untimed first, so that a connection
                 * left idle while the others ran (TCP restarts slow start
                 * after an idle RTO) is timed at its pace, not at its restart */
                c.reps = 1;
                direct(c, k[idx].who);
            }
            c.reps = *reps;
            t[idx][r] = direct(c, k[idx].who);
        }
    }
    return r;
}

/* a figure's spread over its rounds, relative to its median */
static double spread_of(const double *v, int n)
{
    double m = MMC_TUNE_median(v, n);
    return m > 0 ? MMC_TUNE_spread(v, n) / m : 0;
}

/* the messages one repetition moves one way: a ping-pong's two, a window's */
static int one_way(const cmd_t * c, size_t n)
{
    return c->op == OP_WINDOW ? window_of(n) : 2;
}

/* One JSON line per size: each contender's time per message one way (in a
 * window: the window's time over its messages) and bandwidth, and each one
 * against k[0] (ratio above 1: faster than k[0]). */
static void report(const char *phase, contender_t * k, int nk, size_t n, int reps, int nr)
{
    char line[4096];
    int o = snprintf(line, sizeof(line), "{\"kind\":\"point\",\"phase\":\"%s\",\"size\":%zu,"
                     "\"reps\":%d,\"rounds\":%d", phase, n, reps, nr);
    for (int j = 0; j < nk; j++) {
        double m = MMC_TUNE_median(t[j], nr) / reps / one_way(&k[j].c, n);
        o += snprintf(line + o, sizeof(line) - o, ",\"%s\":{\"lat_us\":%.4f,\"mbps\":%.2f,"
                      "\"spread\":%.4f", k[j].name, fin(m * 1e6), m > 0 ? fin(n * 8 / m / 1e6) : 0,
                      fin(spread_of(t[j], nr)));
        if (j > 0) {
            MMC_TUNE_cmp_t c = MMC_TUNE_compare(t[0], t[j], nr);
            o += snprintf(line + o, sizeof(line) - o, ",\"vs_%s\":%.4f,\"vs_spread\":%.4f,"
                          "\"verdict\":%d", k[0].name, fin(c.ratio), fin(c.spread),
                          MMC_TUNE_verdict(c));
        }
        o += snprintf(line + o, sizeof(line) - o, "}");
    }
    out("%s}", line);
}

static void progress(const char *stage, int done, int of)
{
    out("{\"kind\":\"progress\",\"stage\":\"%s\",\"done\":%d,\"of\":%d}", stage, done, of);
}

/* ---------------------------------------------------------------- phases */

static size_t min_size = 1, max_size = 64 << 20, same_below, window_from = SIZE_MAX, window_to;
static size_t dflt, dflt_split, cap, kernel_max, buf_test = 4 << 20;

/* link (and check): MPI, raw TCP and memcpy, every size of the grid */
static void phase_link(const char *phase, const size_t * sizes, int ns, double fig[][2])
{
    contender_t k[3] = { mpi_pair("mpi", 0), raw_conn("raw", 0),
        {"memcpy", {.op = OP_MEMCPY}, {0, -1}}
    };
    for (int i = 0; i < ns; i++) {
        int reps, nr = contest(k, 3, sizes[i], &reps);
        if (nr == 0)
            break;
        report(phase, k, 3, sizes[i], reps, nr);
        progress(phase, i + 1, ns);
        if (fig) {
            fig[i][0] = MMC_TUNE_median(t[0], nr) / reps / 2;
            fig[i][1] = spread_of(t[0], nr);
            fig[i + ns][0] = MMC_TUNE_median(t[1], nr) / reps / 2;
            fig[i + ns][1] = spread_of(t[1], nr);
        }
    }
}

typedef struct {
    contender_t *k;
    int nk, a, b;               /* compare k[b] against k[a] */
    int b_above;                /* ... k[b_above] instead from size `above` (0: never) */
    size_t above;
    const size_t *grid;
    const char *phase;
    int verdict[MAX_SIZES];
    int pooling;                /* the confirming contests: their rounds pooled by size */
    int pooled[MAX_SIZES];
    double pool[MAX_SIZES][2][MMC_TUNE_MAX_ROUNDS];     /* a's and b's times */
    int done, of;               /* contests so far, and the number expected */
} bisect_ctx_t;

/* holds at grid point i: k[b] does not lose to k[a] beyond the noise */
static int not_losing(int i, void *p)
{
    bisect_ctx_t *x = p;
    int reps, nr = contest(x->k, x->nk, x->grid[i], &reps);
    if (nr == 0)
        return 1;               /* no time left: no evidence for a change */
    report(x->phase, x->k, x->nk, x->grid[i], reps, nr);
    int b = x->above && x->grid[i] >= x->above ? x->b_above : x->b;
    MMC_TUNE_cmp_t c = MMC_TUNE_compare(t[x->a], t[b], nr);
    x->verdict[i] = MMC_TUNE_verdict(c);
    for (int r = 0; x->pooling && r < nr && x->pooled[i] < MMC_TUNE_MAX_ROUNDS; r++, x->pooled[i]++) {
        x->pool[i][0][x->pooled[i]] = t[x->a][r];
        x->pool[i][1][x->pooled[i]] = t[b][r];
    }
    ++x->done;
    progress(x->phase, x->done, x->done > x->of ? x->done : x->of);
    return x->verdict[i] >= 0;
}

static MMC_TUNE_cmp_t pooled_cmp(const bisect_ctx_t * x, int j)
{
    return MMC_TUNE_compare(x->pool[j][0], x->pool[j][1], x->pooled[j]);
}

/* the crossover of k[b] (from size `above` on, when not 0: k[b_above])
 * against k[a] on grid; returns the threshold it gives, printed as a record
 * of kind (a choice, or one pattern's crossover of a choice made of several) */
static size_t crossover(const char *kind, const char *phase, const char *cvar,
                        contender_t * k, int nk, int a, int b, int b_above, size_t above,
                        size_t lo, size_t hi, size_t dflt_value, size_t never)
{
    size_t grid[MAX_SIZES];
    bisect_ctx_t x = { k, nk, a, b, b_above, above, grid, phase, {0}, 0, {0}, {{{0}}}, 0, 1 };
    int n = MMC_TUNE_grid(lo, hi, grid, MAX_SIZES);
    while ((1 << x.of) <= n)
        x.of++;
    int i = MMC_TUNE_bisect(n, not_losing, &x);
    /* The move is decided by CONFIRM more contests at each size between
     * the crossover and the default, and one beyond each, their rounds
     * pooled (the bisection's own contests left out).  The passes go over
     * the sizes in turn, so a size's contests meet the machine in different
     * states: on this VM, contests of one size in one job gave split CMA
     * 0.76-1.24 of the copy path, each with a spread of 0.01-0.03, and the
     * first contest of the cma step won 4-20% more than the later ones at
     * its size; the bisection's single contests put the eager limit at
     * 4-16 MiB in 5 runs (doc/tuning.md). */
    int d = 0;
    while (d < n && grid[d] < dflt_value)
        d++;
    int from = (i < d ? i : d) - 1, to = (i > d ? i : d) + 1;
    from = from < 0 ? 0 : from;
    to = to > n ? n : to;
    x.of = x.done + (to - from) * CONFIRM;
    x.pooling = 1;
    for (int pass = 0; pass < CONFIRM; pass++)
        for (int j = from; j < to; j++)
            not_losing(j, &x);
    /* the edge between losing and not losing is bracketed by the pooled
     * verdicts, not by the bisection's: while the smallest size measured
     * does not lose, or the largest loses, the next one beyond is measured
     * too (a single contest that lost just below the crossover left the
     * CMA threshold at 1 MiB in a run whose pooled contests won there) */
    while (!partial) {
        int j;
        if (from > 0 && MMC_TUNE_verdict(pooled_cmp(&x, from)) >= 0)
            j = --from;
        else if (to < n && MMC_TUNE_verdict(pooled_cmp(&x, to - 1)) < 0)
            j = to++;
        else
            break;
        x.of += CONFIRM;
        for (int pass = 0; pass < CONFIRM; pass++)
            not_losing(j, &x);
    }
    char pooled[MAX_SIZES * 96];
    int o = 0;
    pooled[0] = 0;
    for (int j = from; j < to; j++) {
        MMC_TUNE_cmp_t c = pooled_cmp(&x, j);
        x.verdict[j] = MMC_TUNE_verdict(c);
        o += snprintf(pooled + o, sizeof(pooled) - o, "%s{\"size\":%zu,\"rounds\":%d,"
                      "\"ratio\":%.4f,\"spread\":%.4f,\"verdict\":%d}", o ? "," : "", grid[j],
                      c.rounds, fin(c.ratio), fin(c.spread), x.verdict[j]);
    }
    size_t cross = i < n ? grid[i] : 0;
    size_t v = MMC_TUNE_threshold(grid, x.verdict, n, from, to, dflt_value, never);
    out("{\"kind\":\"%s\",\"phase\":\"%s\",\"cvar\":\"%s\",\"value\":%zu,\"default\":%zu,"
        "\"crossover\":%zu,\"pooled\":[%s],\"partial\":%d}", kind, phase, cvar, v, dflt_value,
        cross, pooled, partial);
    return v;
}

typedef struct {
    contender_t *fixed;
    int n;
} buffer_ctx_t;

/* holds for fixed buffer i when it does not lose to the largest one */
static int buffer_enough(int i, void *p)
{
    buffer_ctx_t *x = p;
    contender_t two[2] = { x->fixed[x->n - 1], x->fixed[i] };
    int reps, nr = contest(two, 2, buf_test, &reps);
    if (nr == 0)
        return 1;
    report("buffers", two, 2, buf_test, reps, nr);
    return MMC_TUNE_verdict(MMC_TUNE_compare(t[0], t[1], nr)) >= 0;
}

/* net: the eager limit (pair 0 all eager, pair 1 all rendezvous) in
 * ping-pong and in windows, then the socket buffers on raw TCP in pair 0's
 * processes (conn 0 autotuned, conns 1.. fixed sizes) */
static void phase_net(const size_t * bufs, int nb)
{
    static const char eager[] = "MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE";
    contender_t k[2] = { mpi_pair("eager", 0), mpi_pair("rendezvous", 1) };
    contender_t kw[2] = { window_pair("eager", 0), window_pair("rendezvous", 1) };
    size_t top = max_size < MPIDI_TCP_EAGER_MAX ? max_size : MPIDI_TCP_EAGER_MAX;
    size_t limit[2];
    limit[0] = crossover("crossover", "eager", eager, k, 2, 0, 1, 1, 0, 64 << 10, top, dflt,
                         MPIDI_TCP_EAGER_MAX);
    limit[1] = crossover("crossover", "eager-window", eager, kw, 2, 0, 1, 1, 0, 64 << 10, top,
                         dflt, MPIDI_TCP_EAGER_MAX);
    out("{\"kind\":\"choice\",\"phase\":\"eager\",\"cvar\":\"%s\",\"value\":%zu,"
        "\"default\":%zu,\"patterns\":{\"pingpong\":%zu,\"window\":%zu},"
        "\"window\":{\"sends\":%d,\"bytes\":%zu},\"partial\":%d}", eager,
        MMC_TUNE_threshold_all(limit, 2), dflt, limit[0], limit[1], WINDOW, WINDOW_BYTES,
        partial);

    if (nb == 0)
        return;
    contender_t kb[MAX_CONNS];
    char names[MAX_CONNS][24];
    kb[0] = raw_conn("auto", 0);
    for (int i = 0; i < nb; i++) {
        snprintf(names[i], sizeof(names[i]), "fixed%zu", bufs[i]);
        kb[i + 1] = raw_conn(names[i], i + 1);
    }
    /* the smallest fixed size that does not lose to the largest */
    buffer_ctx_t x = { kb + 1, nb };
    int lo = MMC_TUNE_bisect(nb - 1, buffer_enough, &x), reps, nr;
    contender_t two[2] = { kb[0], kb[lo + 1] };
    nr = contest(two, 2, buf_test, &reps);
    report("buffers", two, 2, buf_test, reps, nr);
    int v = MMC_TUNE_verdict(MMC_TUNE_compare(t[0], t[1], nr));
    double bw = nr ? buf_test * 8 / (MMC_TUNE_median(t[0], nr) / reps / 2) : 0;
    /* the round trip: 8 bytes on the autotuned connection */
    contender_t rt[1] = { kb[0] };
    nr = contest(rt, 1, 8, &reps);
    double rtt = nr ? MMC_TUNE_median(t[0], nr) / reps : 0;
    size_t bdp;
    int short_max = MMC_TUNE_kernel_max_short(kernel_max, bw, rtt, &bdp);
    out("{\"kind\":\"choice\",\"phase\":\"buffers\",\"cvar\":\"MPIR_CVAR_CH4_TCP_SNDBUF_SIZE\","
        "\"value\":%zu,\"default\":0,\"partial\":%d}", v > 0 ? bufs[lo] : 0, partial);
    out("{\"kind\":\"choice\",\"phase\":\"buffers\",\"cvar\":\"MPIR_CVAR_CH4_TCP_RCVBUF_SIZE\","
        "\"value\":%zu,\"default\":0,\"partial\":%d}", v > 0 ? bufs[lo] : 0, partial);
    out("{\"kind\":\"link\",\"rtt_us\":%.2f,\"mbps\":%.1f,\"bdp_bytes\":%zu,\"kernel_max\":%zu,"
        "\"kernel_max_short\":%d,\"buffer_cap\":%zu}", fin(rtt * 1e6), fin(bw / 1e6), bdp, kernel_max,
        short_max, cap);
}

/* cma: pair 0 the copy path, pair 1 CMA, pair 2 CMA split, on one node.
 * The split first (CMA split against CMA), then the threshold: the copy
 * path against CMA as it will be sent, split from the split's threshold on
 * (CMA alone against the copy path missed where only the split wins). */
static void phase_cma(void)
{
    contender_t k[3] = { mpi_pair("copy", 0), mpi_pair("cma", 1), mpi_pair("split", 2) };
    contender_t ks[2] = { k[1], k[2] };
    size_t split = crossover("choice", "split", "MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD", ks, 2,
                             0, 1, 1, 0, 64 << 10, max_size, dflt_split, 0);
    crossover("choice", "cma", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", k, 3, 0, 1, 2, split,
              16 << 10, max_size, dflt, max_size);
}

/* the fast boxes of a job of this MPICH: the CVARs resolved as MPI_Init
 * resolves them for two local ranks (size 0: off, or not in this build) */
static MPIDI_FBOX_config_t fbox_config(void)
{
    MPIDI_FBOX_config_t c = { 0 };
    if (MPIDI_FBOX_configure(mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_SIZE", 0),
                             mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS", -1),
                             mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG", -1), 2, &c) != 0)
        c.size = 0;
    return c;
}

/* fbox: pair 0 sends every size its box takes through the box, pair 1 none
 * (FASTBOX_MAX_MSG=0: MPICH's queue), on one node.  The box size is the
 * node's, so it cannot differ between pairs of one job: the limit is
 * measured on the box the job has, and is where the queue stops losing. */
static void phase_fbox(void)
{
    MPIDI_FBOX_config_t c = fbox_config();
    size_t top = c.size / 4;
    if (top < 8) {
        out("{\"kind\":\"error\",\"what\":\"fast boxes are off: no limit to measure\"}");
        return;
    }
    contender_t k[2] = { mpi_pair("box", 0), mpi_pair("queue", 1) };
    crossover("choice", "fbox", "MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG", k, 2, 0, 1, 1, 0, 8,
              top < max_size ? top : max_size, dflt, top);
}

/* policy: each candidate written through MPI_T on ranks 0-2, then the mixed
 * load; intra-node latency and the stream's time against the first */
static void phase_policy(char *list)
{
    char *names[MAX_POLICIES];
    int value[MAX_POLICIES], ratio[MAX_POLICIES], np = 0;
    static double tot[MAX_POLICIES][MMC_TUNE_MAX_ROUNDS], lat[MAX_POLICIES][MMC_TUNE_MAX_ROUNDS];
    for (char *p = strtok(list, ","); p && np < MAX_POLICIES; p = strtok(NULL, ",")) {
        char *colon = strchr(p, ':');
        ratio[np] = colon ? atoi(colon + 1) : 50;
        if (colon)
            *colon = 0;
        names[np] = p;
        value[np] = mmc_cvar_enum("MPIR_CVAR_CH4_POLL_POLICY", p);
        if (value[np] < 0) {
            out("{\"kind\":\"error\",\"what\":\"no polling policy %s in this MPICH\"}", p);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        np++;
    }
    int all[4] = { 0, 1, 2, -1 };
    int reps = 16, nr;
    /* the stream sized to 5 slices under the first candidate */
    cmd_t first = {.op = OP_POLICY,.arg = value[0],.reps = ratio[0] };
    cmd_t trial = {.op = OP_MIXED,.reps = reps };
    double start = now();
    direct(first, all);
    direct(trial, all);
    reps = (int) (reps * 5 * slice / (now() - start));
    reps = reps < 16 ? 16 : reps;
    for (nr = 0; nr < rounds && !partial; nr++) {
        for (int j = 0; j < np; j++) {
            if (now() > deadline) {
                partial = 1;
                break;
            }
            int idx = (j + nr) % np;
            cmd_t set = {.op = OP_POLICY,.arg = value[idx],.reps = ratio[idx] };
            if (direct(set, all) < 0) {
                out("{\"kind\":\"error\",\"what\":\"MPI_T_cvar_write of policy %s refused\"}",
                    names[idx]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            cmd_t mix = {.op = OP_MIXED,.reps = reps };
            start = now();
            lat[idx][nr] = direct(mix, all);
            tot[idx][nr] = now() - start;
        }
        progress("policy", nr + 1, rounds);
    }
    if (partial && nr > 0)
        nr--;                   /* the round the deadline cut short */
    int best = 0;
    for (int j = 0; j < np; j++) {
        MMC_TUNE_cmp_t ci = MMC_TUNE_compare(lat[0], lat[j], nr);
        MMC_TUNE_cmp_t cs = MMC_TUNE_compare(tot[0], tot[j], nr);
        out("{\"kind\":\"point\",\"phase\":\"policy\",\"policy\":\"%s\",\"ratio\":%d,"
            "\"intra_rt_us\":%.3f,\"intra_vs\":%.4f,\"intra_spread\":%.4f,\"stream_mbps\":%.1f,"
            "\"stream_vs\":%.4f,\"stream_spread\":%.4f,\"rounds\":%d}", names[j], ratio[j],
            fin(MMC_TUNE_median(lat[j], nr) * 1e6), fin(ci.ratio), fin(ci.spread),
            fin((double) reps * STREAM_MSG * 8 / MMC_TUNE_median(tot[j], nr) / 1e6), fin(cs.ratio),
            fin(cs.spread), nr);
        /* of the candidates that beat the default, the first in the list,
         * unless a later one beats it in turn: several policies win by
         * about as much, and taking the largest ratio among them would
         * pick one by chance from run to run */
        if (j > 0 && MMC_TUNE_verdict(ci) > 0 && MMC_TUNE_verdict(cs) >= 0 &&
            (best == 0 || MMC_TUNE_verdict(MMC_TUNE_compare(lat[best], lat[j], nr)) > 0))
            best = j;
    }
    out("{\"kind\":\"choice\",\"phase\":\"policy\",\"cvar\":\"MPIR_CVAR_CH4_POLL_POLICY\","
        "\"value\":\"%s\",\"default\":\"%s\",\"partial\":%d}", names[best], names[0], partial);
    if (strcmp(names[best], "static") == 0)
        out("{\"kind\":\"choice\",\"phase\":\"policy\",\"cvar\":"
            "\"MPIR_CVAR_CH4_POLL_STATIC_RATIO\",\"value\":%d,\"default\":50,\"partial\":%d}",
            ratio[best], partial);
}

/* one pattern's A/B contest at size n, reported as phase: its verdict, a
 * loss counting only when a second contest (phase-recheck) confirms it,
 * since over dozens of sizes one contest alone loses somewhere by chance;
 * *cut when the deadline ended it */
static int ab_contest(const char *phase, contender_t * k, int nk, size_t n, int same, int *cut)
{
    char again[32];
    int reps, nr = contest(k, nk, n, &reps);
    if ((*cut = nr == 0))
        return 0;
    report(same ? "ab-same" : phase, k, nk, n, reps, nr);
    int v = same ? 0 : MMC_TUNE_verdict(MMC_TUNE_compare(t[0], t[1], nr));
    if (v >= 0)
        return v;
    nr = contest(k, nk, n, &reps);
    if ((*cut = nr == 0))
        return 0;
    snprintf(again, sizeof(again), "%s-recheck", phase);
    report(again, k, nk, n, reps, nr);
    return MMC_TUNE_verdict(MMC_TUNE_compare(t[0], t[1], nr)) < 0 ? -1 : 0;
}

/* ab: defaults (pair 0) against the tuned settings (pair 1), every size,
 * with a ceiling for both in pair 0's processes: raw TCP between them, or
 * memcpy (one node).  Below --same-below both settings send the same way
 * (the driver finds the size from their thresholds): measured ("ab-same"),
 * but a difference there is the two pairs', not the settings', and does not
 * count.  Where one sends eager and the other not (--windows FROM:TO, from
 * the driver), the windowed pattern too ("ab-window"): the eager limit is
 * chosen from both patterns, and a loss in either is a loss. */
static void phase_ab(const size_t * sizes, int ns, int raw_ceiling)
{
    contender_t k[3] = { mpi_pair("defaults", 0), mpi_pair("tuned", 1),
        raw_ceiling ? raw_conn("ceiling", 0) : (contender_t) {"ceiling", {.op = OP_MEMCPY}, {0, -1}}
    };
    contender_t kw[2] = { window_pair("defaults", 0), window_pair("tuned", 1) };
    int worst = 1, lost = 0, i, cut = 0;
    for (i = 0; i < ns; i++) {
        int same = sizes[i] < same_below;
        int v = ab_contest("ab", k, 3, sizes[i], same, &cut);
        if (!cut && sizes[i] >= window_from && sizes[i] <= window_to) {
            int vw = ab_contest("ab-window", kw, 2, sizes[i], 0, &cut);
            v = v < 0 || vw < 0 ? -1 : v > 0 || vw > 0 ? 1 : 0;
        }
        if (cut)
            break;
        progress("ab", i + 1, ns);
        worst = v < worst ? v : worst;
        lost += v < 0;
    }
    out("{\"kind\":\"ab\",\"worst\":%d,\"sizes_lost\":%d,\"sizes\":%d,\"partial\":%d}", worst,
        lost, i, partial);
}

/* the settings a job of this MPICH gets when the tuner's are not given: the
 * CVARs as MPI_T reads them here, and the built-in value where one reads -1 */
static void defaults(void)
{
    int eager = mmc_cvar_int("MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE", -1);
    int p2p = mmc_cvar_int("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", -1);
    int split = mmc_cvar_int("MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD", -1);
    MPIDI_FBOX_config_t fbox = fbox_config();
    char policy[256] = "";
    mmc_cvar_enum_walk("MPIR_CVAR_CH4_POLL_POLICY", NULL,
                       mmc_cvar_int("MPIR_CVAR_CH4_POLL_POLICY", -1), policy, sizeof(policy));
    out("{\"kind\":\"defaults\",\"values\":{\"MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE\":%d,"
        "\"MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD\":%zu,\"MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD\":%zu,"
        "\"MPIR_CVAR_CH4_TCP_SNDBUF_SIZE\":%d,\"MPIR_CVAR_CH4_TCP_RCVBUF_SIZE\":%d,"
        "\"MPIR_CVAR_CH4_POLL_POLICY\":\"%s\",\"MPIR_CVAR_CH4_POLL_STATIC_RATIO\":%d,"
        "\"MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG\":%zu},\"eager_max\":%d,\"fbox_size\":%zu}",
        eager < 0 ? MPIDI_TCP_EAGER_DEFAULT : eager,
        p2p < 0 ? MPIDI_CMA_THRESHOLD_DEFAULT(MPICH_NUMVERSION) : (size_t) p2p,
        split < 0 ? MPIDI_CMA_SPLIT_DEFAULT(MPICH_NUMVERSION) : (size_t) split,
        mmc_cvar_int("MPIR_CVAR_CH4_TCP_SNDBUF_SIZE", 0),
        mmc_cvar_int("MPIR_CVAR_CH4_TCP_RCVBUF_SIZE", 0), policy,
        mmc_cvar_int("MPIR_CVAR_CH4_POLL_STATIC_RATIO", 50), fbox.max_msg, MPIDI_TCP_EAGER_MAX,
        fbox.size);
}

/* cvars: the defaults, then every NAME=VALUE read back through MPI_T */
static int phase_cvars(char **cv, int ncv)
{
    int bad = 0, provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    defaults();
    for (int i = 0; i < ncv; i++) {
        char name[256], desc[4096], str[256];
        const char *want = strchr(cv[i], '=');
        int idx, verb, bind, scope, nlen = sizeof(name), dlen = sizeof(desc), n, ok = 0;
        MPI_Datatype dt;
        MPI_T_enum et;
        MPI_T_cvar_handle h;
        snprintf(name, sizeof(name), "%.*s", want ? (int) (want - cv[i]) : 0, cv[i]);
        if (want && MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS &&
            MPI_T_cvar_get_info(idx, name, &nlen, &verb, &dt, &et, desc, &dlen, &bind,
                                &scope) == MPI_SUCCESS &&
            MPI_T_cvar_handle_alloc(idx, NULL, &h, &n) == MPI_SUCCESS) {
            if (dt == MPI_CHAR) {
                MPI_T_cvar_read(h, str);
                ok = strcmp(str, want + 1) == 0;
            } else {
                int v;
                MPI_T_cvar_read(h, &v);
                ok = et != MPI_T_ENUM_NULL ? v == mmc_cvar_enum(name, want + 1)
                    : v == atoi(want + 1);
            }
            MPI_T_cvar_handle_free(&h);
        }
        out("{\"kind\":\"cvar\",\"setting\":\"%s\",\"ok\":%d}", cv[i], ok);
        bad += !ok;
    }
    return bad;
}

/* check: the link's figures against the saved ones */
static void phase_check(char **saved, int nsaved)
{
    size_t sizes[2] = { 8, buf_test };
    double fig[4][2] = { {0} };
    phase_link("check", sizes, 2, fig);
    const char *names[4] = { "lat_us", "bw_mbps", "raw_lat_us", "raw_bw_mbps" };
    double val[4] = { fig[0][0] * 1e6, fig[1][0] > 0 ? buf_test * 8 / fig[1][0] / 1e6 : 0,
        fig[2][0] * 1e6, fig[3][0] > 0 ? buf_test * 8 / fig[3][0] / 1e6 : 0
    };
    double spr[4] = { fig[0][1], fig[1][1], fig[2][1], fig[3][1] };
    int drifted = 0;
    for (int i = 0; i < 4; i++) {
        double s = 0, ss = 0;
        int have = 0;
        for (int j = 0; j < nsaved; j++) {
            size_t l = strlen(names[i]);
            if (strncmp(saved[j], names[i], l) == 0 && saved[j][l] == '=')
                have = sscanf(saved[j] + l + 1, "%lf:%lf", &s, &ss) == 2;
        }
        int d = have ? MMC_TUNE_drift(s, ss, val[i], spr[i]) : 0;
        drifted |= d != 0;
        out("{\"kind\":\"drift\",\"figure\":\"%s\",\"saved\":%.3f,\"now\":%.3f,\"spread\":%.4f,"
            "\"drift\":%d,\"compared\":%d}", names[i], fin(s), fin(val[i]), fin(spr[i]), d, have);
    }
    out("{\"kind\":\"check\",\"drifted\":%d,\"partial\":%d}", drifted, partial);
}

int main(int argc, char **argv)
{
    const char *phase = argc > 1 ? argv[1] : "";
    char *policies = NULL, *cv[32], *saved[8];
    int ncv = 0, nsaved = 0, rc = 0, raw_ceiling = 1;
    double budget = 60;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    mmc_pin_cpu(rank % 2);      /* the two ranks of a pair never share a core */
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "--deadline"))
            budget = atof(v);
        else if (!strcmp(o, "--rounds"))
            rounds = atoi(v);
        else if (!strcmp(o, "--ms"))
            slice = atof(v) / 1e3;
        else if (!strcmp(o, "--min"))
            min_size = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--same-below"))
            same_below = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--windows")) {
            if (sscanf(v, "%zu:%zu", &window_from, &window_to) != 2)
                window_from = SIZE_MAX;
        } else if (!strcmp(o, "--max"))
            max_size = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--default"))
            dflt = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--default-split"))
            dflt_split = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--cap"))
            cap = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--kernel-max"))
            kernel_max = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--buf-test"))
            buf_test = strtoull(v, NULL, 10);
        else if (!strcmp(o, "--ceiling"))
            raw_ceiling = !strcmp(v, "raw");
        else if (!strcmp(o, "--policies"))
            policies = argv[i + 1];
        else if (!strcmp(o, "--cvar") && ncv < 32)
            cv[ncv++] = argv[i + 1];
        else if (!strcmp(o, "--saved") && nsaved < 8)
            saved[nsaved++] = argv[i + 1];
    }
    rounds = rounds < 1 ? 1 : rounds > MMC_TUNE_MAX_ROUNDS ? MMC_TUNE_MAX_ROUNDS : rounds;
    deadline = now() + budget;
    int need = !strcmp(phase, "net") || !strcmp(phase, "ab") || !strcmp(phase, "fbox") ? 4
        : !strcmp(phase, "cma") ? 6
        : !strcmp(phase, "policy") ? 3 : !strcmp(phase, "cvars") ? 1 : 2;
    if (nprocs < need) {
        if (rank == 0)
            fprintf(stderr, "mpich-mc-tune-probe %s: needs %d ranks, has %d\n", phase, need,
                    nprocs);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* raw TCP between ranks 0 and 1: autotuned, then each fixed buffer size
     * from 64 KiB to the cap (net) */
    size_t bufs[MAX_CONNS];
    int nb = 0;
    if (!strcmp(phase, "net"))
        nb = MMC_TUNE_grid(64 << 10, cap < kernel_max ? cap : kernel_max, bufs, MAX_CONNS - 1);
    if (!strcmp(phase, "link") || !strcmp(phase, "check") || (!strcmp(phase, "ab") && raw_ceiling)
        || nb > 0)
        conns[nconns++] = raw_pair(0, 1, 0);
    for (int i = 0; i < nb; i++)
        conns[nconns++] = raw_pair(0, 1, (int) bufs[i]);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank != 0) {
        serve();
    } else {
        size_t grid[MAX_SIZES];
        int ns = MMC_TUNE_grid(min_size, max_size, grid, MAX_SIZES);
        if (!strcmp(phase, "link"))
            phase_link("link", grid, ns, NULL);
        else if (!strcmp(phase, "net"))
            phase_net(bufs, nb);
        else if (!strcmp(phase, "cma"))
            phase_cma();
        else if (!strcmp(phase, "fbox"))
            phase_fbox();
        else if (!strcmp(phase, "policy") && policies)
            phase_policy(policies);
        else if (!strcmp(phase, "ab"))
            phase_ab(grid, ns, raw_ceiling);
        else if (!strcmp(phase, "cvars"))
            rc = phase_cvars(cv, ncv) != 0;
        else if (!strcmp(phase, "check"))
            phase_check(saved, nsaved);
        else {
            fprintf(stderr, "mpich-mc-tune-probe: unknown phase '%s'\n", phase);
            rc = 2;
        }
        out("{\"kind\":\"end\",\"phase\":\"%s\",\"partial\":%d}", phase, partial);
        stop_servers();
    }
    for (int i = 0; i < nconns; i++)
        close(conns[i]);
    MPI_Finalize();
    return rc;
}
