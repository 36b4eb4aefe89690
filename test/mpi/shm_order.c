/*
 * Fast boxes (src/shm/fbox): MPI's order per pair of local ranks across the
 * box and MPICH's queue, and every byte, under the boxes' limits.
 *
 *   order  every rank but 0 sends rank 0 messages of sizes around
 *          MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG and a compact record's limit
 *          (one line up to 48 bytes, two up to 112), and pipelined ones,
 *          some in windows of nonblocking sends, some of those synchronous
 *          (never a compact record, whatever the size); rank 0 receives them
 *          with wildcard and specific receives and checks each one's place
 *          and bytes
 *   fill   rank 1 sends 3000 small messages while rank 0 computes, so its box
 *          fills and the rest go through the queue; rank 0 then checks all
 *   many   every rank sends every other rank small messages, many rounds
 *          (with few boxes per rank, most pairs have none)
 *   nested pairs of ranks each send the other a synchronous message on a
 *          communicator of its own, free the request and then the
 *          communicator: the acknowledgement's handler frees the
 *          communicator, and MPICH 4.1+ probes it there, making progress
 *          inside the handler; every message, acknowledgement included, must
 *          be taken once (a box record taken twice completed a request twice)
 *   direct rank 0 posts all its receives before rank 1 sends: plain small
 *          messages whose receive is the posted queue's head go from the box
 *          straight into the buffer (fbox_direct.h), the others (too large
 *          for a compact record, a non-contiguous or truncated receive, a
 *          receive behind another, a wildcard) through MPIDIG; every one
 *          must land where its datatype says, with its status, and a freed
 *          receive request must still get its bytes
 *
 * The fbox_* pvars, summed over the ranks, must show the boxes at work (none
 * with MPIR_CVAR_CH4_SHM_FASTBOX_SIZE=0) and, for fill, a full box, for many
 * with boxes for fewer peers than there are, a sender without one.
 */
#include "mmc_test.h"
#include <time.h>

static int rank, size;
static size_t max_msg;

/* the largest message a box takes, as fbox_ring.c resolves the CVARs (with
 * the boxes off, the default's sizes all the same) */
static size_t effective_max_msg(void)
{
    int box = mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_SIZE", -1);
    int m = mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_MAX_MSG", -1);
    if (box <= 0)
        box = 4096;
    if (m == -1)
        m = box / 4 < 1024 ? box / 4 : 1024;
    return (size_t) m;
}

/* message i of a sender: sizes around the box limit, now and then a large one */
static size_t size_of(int i)
{
    size_t around[] = { 0, 1, 8, max_msg - 1, max_msg, max_msg + 1, 4, 2 * max_msg + 3,
        max_msg > 64 ? max_msg - 64 : 2, 100, 48, 49, 112, 113
    };
    if (i % 37 == 36)
        return 150000 + (size_t) i;     /* pipelined through the queue */
    return around[i % (sizeof(around) / sizeof(around[0]))];
}

#define NMSG 600
#define WINDOW 12

static void order_send(void)
{
    size_t big = 150000 + NMSG;
    unsigned char *buf = malloc(WINDOW * big);
    MPI_Request req[WINDOW];
    for (int i = 0; i < NMSG;) {
        /* a window of nonblocking sends, then a few blocking ones */
        int n = 0;
        for (; n < WINDOW && i < NMSG; n++, i++) {
            mmc_fill(buf + n * big, size_of(i), i, rank);
            if (n % 4 == 3)
                MPI_Issend(buf + n * big, (int) size_of(i), MPI_BYTE, 0, i, MPI_COMM_WORLD,
                           &req[n]);
            else
                MPI_Isend(buf + n * big, (int) size_of(i), MPI_BYTE, 0, i, MPI_COMM_WORLD,
                          &req[n]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 3 && i < NMSG; k++, i++) {
            mmc_fill(buf, size_of(i), i, rank);
            MPI_Send(buf, (int) size_of(i), MPI_BYTE, 0, i, MPI_COMM_WORLD);
        }
    }
    free(buf);
}

/* A receive that gives up after 60 s and says what it waited for (a hang
 * here has shown once in 150 runs of 2 hosts x 2 ranks under load). */
static void wait_recv(void *buf, int len, int src, int tag, MPI_Status * st, const int *next,
                      int k)
{
    MPI_Request rq;
    int done = 0;
    double t0 = MPI_Wtime();
    MPI_Irecv(buf, len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &rq);
    while (!done && MPI_Wtime() - t0 < 60)
        MPI_Test(&rq, &done, st);
    if (done)
        return;
    MMC_ERR("order: receive %d (source %d, tag %d) not done after 60 s; next message of each "
            "sender:", k, src, tag);
    for (int r = 1; r < size; r++)
        fprintf(stderr, " %d:%d", r, next[r]);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void order_recv(void)
{
    size_t big = 150000 + NMSG;
    unsigned char *buf = malloc(big);
    int *next = calloc(size, sizeof(int));
    int total = (size - 1) * NMSG;
    for (int k = 0; k < total; k++) {
        MPI_Status st;
        int count;
        /* wildcards mostly; every fifth receive names the source (and then
         * the tag that source must send next) */
        int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
        if (k % 5 == 4) {
            for (int r = 1; r < size; r++) {
                int s = 1 + (k / 5 + r) % (size - 1);
                if (next[s] < NMSG) {
                    src = s;
                    tag = k % 10 == 9 ? next[s] : MPI_ANY_TAG;
                    break;
                }
            }
        }
        wait_recv(buf, (int) big, src, tag, &st, next, k);
        MPI_Get_count(&st, MPI_BYTE, &count);
        int s = st.MPI_SOURCE, i = st.MPI_TAG;
        if (s < 1 || s >= size || i != next[s]) {
            MMC_ERR("order: from %d got message %d, expected %d\n", s, i,
                    s >= 1 && s < size ? next[s] : -1);
            break;
        }
        if ((size_t) count != size_of(i))
            MMC_ERR("order: message %d from %d has %d bytes, expected %zu\n", i, s, count,
                    size_of(i));
        else
            mmc_check(buf, (size_t) count, i, s, "order");
        next[s]++;
    }
    free(next);
    free(buf);
}

#define NFILL 3000

static void fill(void)
{
    size_t n = max_msg < 48 ? max_msg : 48;
    unsigned char *buf = malloc(NFILL * n);
    if (rank == 1) {
        MPI_Request *req = malloc(NFILL * sizeof(MPI_Request));
        for (int i = 0; i < NFILL; i++) {
            mmc_fill(buf + i * n, n, i % 30000, rank);
            MPI_Isend(buf + i * n, (int) n, MPI_BYTE, 0, i % 30000, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(NFILL, req, MPI_STATUSES_IGNORE);
        free(req);
    } else if (rank == 0) {
        struct timespec ts = { 0, 300 * 1000 * 1000 };
        nanosleep(&ts, NULL);   /* computing, no MPI call: the box fills */
        for (int i = 0; i < NFILL; i++) {
            MPI_Status st;
            MPI_Recv(buf, (int) n, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG != i % 30000) {
                MMC_ERR("fill: message %d has tag %d\n", i, st.MPI_TAG);
                break;
            }
            mmc_check(buf, n, i % 30000, 1, "fill");
        }
    }
    free(buf);
}

#define ROUNDS 40

static void many(void)
{
    size_t n = 24;
    unsigned char *out = malloc(size * n), *in = malloc(size * n);
    MPI_Request *req = malloc(2 * size * sizeof(MPI_Request));
    for (int round = 0; round < ROUNDS; round++) {
        int k = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            MPI_Irecv(in + p * n, (int) n, MPI_BYTE, p, round, MPI_COMM_WORLD, &req[k++]);
            mmc_fill(out + p * n, n, round, rank * 1000 + p);
            MPI_Isend(out + p * n, (int) n, MPI_BYTE, p, round, MPI_COMM_WORLD, &req[k++]);
        }
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; p++)
            if (p != rank)
                mmc_check(in + p * n, n, round, p * 1000 + rank, "many");
    }
    free(req);
    free(out);
    free(in);
}

#define NESTED 300

static void nested(void)
{
    int peer = rank ^ 1;        /* an odd size's last rank has none: dups and frees only */
    for (int it = 0; it < NESTED; it++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (peer >= size) {
            MPI_Comm_free(&comm);
            continue;
        }
        /* sizes in a box, compact or not, and past it (CMA or the queue) */
        size_t sizes[] = { 8, 200, 2 * max_msg + 5, 70000 };
        size_t n = sizes[it % 4];
        unsigned char *out = malloc(n), *in = malloc(n);
        MPI_Request sreq, rreq;
        mmc_fill(out, n, it, rank);
        MPI_Irecv(in, (int) n, MPI_BYTE, peer, it, comm, &rreq);
        MPI_Issend(out, (int) n, MPI_BYTE, peer, it, comm, &sreq);
        MPI_Request_free(&sreq);
        MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        mmc_check(in, n, it, peer, "nested");
        MPI_Comm_free(&comm);
        /* the acknowledgement arrives during this exchange, or the next; the
         * peer has the message once it answers, so the buffer may go */
        int x = it, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 0, &y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (y != it)
            MMC_ERR("nested: round %d, the peer says %d\n", it, y);
        free(out);
        free(in);
    }
}

enum { D_BYTES, D_INTS, D_VECTOR, D_LB };
#define D_ANY_TAG 1
#define D_ANY_SOURCE 2
#define D_FREED 4
#define D_CAP 160

/* in the order rank 0 posts them; rank 1 sends by tag, the window after */
static const struct {
    int tag, len, cap, kind, flags;
} dcase[] = {
    {0, 8, 8, D_BYTES, 0},
    {1, 0, 16, D_BYTES, 0},
    {2, 100, 100, D_INTS, 0},
    {3, 112, 112, D_BYTES, 0},  /* a compact record's largest */
    {4, 113, 113, D_BYTES, 0},  /* a full record */
    {5, 40, 64, D_BYTES, D_ANY_TAG},
    {6, 40, 40, D_BYTES, D_ANY_SOURCE},
    {7, 64, 64, D_VECTOR, 0},
    {8, 64, 64, D_LB, 0},
    {9, 48, 32, D_BYTES, 0},    /* truncated */
    {11, 24, 24, D_BYTES, 0},   /* posted before 10, sent after it */
    {10, 24, 24, D_BYTES, 0},
    {12, 8, 8, D_BYTES, D_FREED},
    {13, 8, 8, D_BYTES, 0}
};

#define NDCASE ((int) (sizeof(dcase) / sizeof(dcase[0])))
#define DWINDOW 64

/* where byte j of a message lands in a receive of this kind */
static size_t d_at(int kind, size_t j)
{
    return kind == D_VECTOR ? j / 8 * 16 + j % 8 : kind == D_LB ? 16 + j : j;
}

static void direct(void)
{
    unsigned char *buf = malloc((size_t) (NDCASE + DWINDOW) * D_CAP);
    MPI_Request req[NDCASE + DWINDOW];
    MPI_Status st[NDCASE + DWINDOW];
    int go = 1;

    if (rank == 1) {
        MPI_Recv(&go, 1, MPI_INT, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int tag = 0; tag < NDCASE; tag++) {
            int len = 0;
            for (int i = 0; i < NDCASE; i++)
                if (dcase[i].tag == tag)
                    len = dcase[i].len;
            mmc_fill(buf, (size_t) len, tag, 1);
            MPI_Send(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        }
        for (int i = 0; i < DWINDOW; i++) {
            mmc_fill(buf + i * 8, 8, 100 + i, 1);
            MPI_Isend(buf + i * 8, 8, MPI_BYTE, 0, 100 + i, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(DWINDOW, req, MPI_STATUSES_IGNORE);
    } else if (rank == 0) {
        MPI_Datatype vec, lb, t;
        int len64 = 64, at16 = 16;
        MPI_Type_vector(8, 8, 16, MPI_BYTE, &vec);
        MPI_Type_commit(&vec);
        MPI_Type_create_indexed_block(1, len64, &at16, MPI_BYTE, &lb);
        MPI_Type_commit(&lb);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        memset(buf, 0xee, (size_t) (NDCASE + DWINDOW) * D_CAP);
        int n = 0;
        for (int i = 0; i < NDCASE; i++) {
            unsigned char *b = buf + i * D_CAP;
            int count = dcase[i].cap;
            t = MPI_BYTE;
            if (dcase[i].kind == D_INTS) {
                t = MPI_INT;
                count /= (int) sizeof(int);
            } else if (dcase[i].kind != D_BYTES) {
                t = dcase[i].kind == D_VECTOR ? vec : lb;
                count = 1;
            }
            MPI_Irecv(b, count, t, dcase[i].flags & D_ANY_SOURCE ? MPI_ANY_SOURCE : 1,
                      dcase[i].flags & D_ANY_TAG ? MPI_ANY_TAG : dcase[i].tag, MPI_COMM_WORLD,
                      &req[i]);
            if (dcase[i].flags & D_FREED)
                MPI_Request_free(&req[i]);
            else
                req[n++] = req[i];
        }
        int first_window = n;
        for (int i = 0; i < DWINDOW; i++)
            MPI_Irecv(buf + (NDCASE + i) * D_CAP, 8, MPI_BYTE, 1, 100 + i, MPI_COMM_WORLD,
                      &req[n++]);
        MPI_Send(&go, 1, MPI_INT, 1, 999, MPI_COMM_WORLD);
        /* one at a time: MPI_Waitall stops at the truncated one's error */
        int rc[NDCASE + DWINDOW];
        for (int k = 0; k < n; k++)
            rc[k] = MPI_Wait(&req[k], &st[k]);
        /* the freed receive (12) is done once 13, sent after it, is */
        for (int i = 0, k = 0; i < NDCASE; i++) {
            const unsigned char *b = buf + i * D_CAP;
            size_t got = (size_t) dcase[i].len, bad = 0;
            int cls = MPI_SUCCESS, count = -1;
            if (!(dcase[i].flags & D_FREED)) {
                MPI_Status *s = &st[k];
                MPI_Error_class(rc[k++], &cls);
                MPI_Get_count(s, MPI_BYTE, &count);
                if (s->MPI_SOURCE != 1 || s->MPI_TAG != dcase[i].tag)
                    MMC_ERR("direct: receive %d got source %d tag %d, expected 1 and %d\n", i,
                            s->MPI_SOURCE, s->MPI_TAG, dcase[i].tag);
            }
            if (dcase[i].len > dcase[i].cap) {
                if (cls != MPI_ERR_TRUNCATE)
                    MMC_ERR("direct: %d bytes into %d: error class %d, not MPI_ERR_TRUNCATE\n",
                            dcase[i].len, dcase[i].cap, cls);
                continue;
            }
            if (cls != MPI_SUCCESS || (count != -1 && count != dcase[i].len))
                MMC_ERR("direct: receive %d: error class %d, %d bytes, expected %d\n", i, cls,
                        count, dcase[i].len);
            for (size_t j = 0; j < got; j++)
                bad += b[d_at(dcase[i].kind, j)] != mmc_byte(dcase[i].tag, 1, got, j);
            /* nothing outside where the datatype puts the data */
            for (size_t j = 0, at = 0; j < D_CAP; j++) {
                if (at < got && j == d_at(dcase[i].kind, at)) {
                    at++;
                    continue;
                }
                bad += b[j] != 0xee;
            }
            if (bad)
                MMC_ERR("direct: receive %d (tag %d, %d bytes): %zu bytes wrong\n", i,
                        dcase[i].tag, dcase[i].len, bad);
        }
        for (int i = 0; i < DWINDOW; i++) {
            if (rc[first_window + i] != MPI_SUCCESS || st[first_window + i].MPI_TAG != 100 + i)
                MMC_ERR("direct: window receive %d: error %d, tag %d\n", i, rc[first_window + i],
                        st[first_window + i].MPI_TAG);
            mmc_check(buf + (NDCASE + i) * D_CAP, 8, 100 + i, 1, "direct window");
        }
        MPI_Type_free(&vec);
        MPI_Type_free(&lb);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "order";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    max_msg = effective_max_msg();

    if (strcmp(mode, "order") == 0) {
        if (rank == 0)
            order_recv();
        else
            order_send();
    } else if (strcmp(mode, "fill") == 0) {
        fill();
    } else if (strcmp(mode, "nested") == 0) {
        nested();
    } else if (strcmp(mode, "direct") == 0) {
        direct();
    } else {
        many();
    }

    long long mine[5] = { mmc_pvar_counter("fbox_msgs"), mmc_pvar_counter("fbox_fallback_full"),
        mmc_pvar_counter("fbox_fallback_nobox"), mmc_pvar_counter("fbox_fallback_large"),
        mmc_pvar_counter("fbox_direct")
    }, sum[5];
    MPI_Reduce(mine, sum, 5, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int off = mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_SIZE", -1) == 0;
        printf("%s: %lld messages through boxes, fallbacks: %lld box full, %lld no box, "
               "%lld too large; %lld straight into their receive\n", mode, sum[0], sum[1],
               sum[2], sum[3], sum[4]);
        /* rank 1's first message finds rank 0's receive at the head */
        if (strcmp(mode, "direct") == 0 && (off ? sum[4] != 0 : mine[4] <= 0))
            MMC_ERR("direct: %lld messages straight into their receive with boxes %s\n",
                    off ? sum[4] : mine[4], off ? "off" : "on");
        if (sum[0] < 0)
            MMC_ERR("no fbox_msgs pvar\n");
        else if (off ? sum[0] != 0 : sum[0] == 0)
            MMC_ERR("%lld messages through boxes with boxes %s\n", sum[0], off ? "off" : "on");
        if (!off && strcmp(mode, "fill") == 0 && sum[1] == 0)
            MMC_ERR("fill: the box never filled\n");
        if (!off && strcmp(mode, "order") == 0 && sum[3] == 0)
            MMC_ERR("order: no message was too large for a box\n");
        int peers = mmc_cvar_int("MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS", -1);
        if (!off && strcmp(mode, "many") == 0 && peers >= 0 && size - 1 > peers && sum[2] == 0)
            MMC_ERR("many: more peers than boxes, yet every sender had a box\n");
    }
    return mmc_finish();
}
