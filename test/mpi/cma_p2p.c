/*
 * Intra-node point-to-point with byte checks, around the CMA threshold (read
 * from MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD): expected, unexpected and
 * crossing messages; vector, indexed and struct datatypes on either side;
 * many outstanding Isend/Irecv pairs; MPI_ANY_SOURCE; Probe and Mprobe;
 * Ssend; a cancelled receive; truncation (MPI_ERR_TRUNCATE, and the message
 * after it intact); with the argument "big", one message over 2 GiB.
 *
 * The last argument says what the cma_* pvars must show, summed over the
 * ranks: "cma" (messages moved by CMA, no fallback), "split" (the same, and
 * messages split between the sender's write and the receiver's read),
 * "nosplit" (none split), "fallback" (copies refused, those messages
 * delivered through the copy path) or "off" (CMA never tried).  Run with 2
 * or 3 ranks on one node.
 */
#include "mmc_test.h"
#include "cma_policy.h"
#include <unistd.h>

static int rank, nprocs;
static size_t thr;

/* rank 0 -> rank 1; mode 0: receive posted first, 1: message first, 2: both ways */
static void xfer(size_t size, int tag, int mode)
{
    unsigned char *s = malloc(size), *r = malloc(size);
    MPI_Request rq[2];
    MPI_Status st;
    int n;
    if (rank > 1)
        goto done;
    int other = 1 - rank;
    mmc_fill(s, size, tag, rank);
    memset(r, 0xee, size);
    if (mode == 2) {
        MPI_Irecv(r, (int) size, MPI_BYTE, other, tag, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(s, (int) size, MPI_BYTE, other, tag, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        mmc_check(r, size, tag, other, "crossing");
    } else if (rank == 0) {
        if (mode == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(s, (int) size, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
    } else {
        if (mode == 0) {
            MPI_Irecv(r, (int) size, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq[0]);
            MPI_Send(NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            MPI_Wait(&rq[0], &st);
        } else {
            usleep(20000);
            MPI_Recv(r, (int) size, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        }
        MPI_Get_count(&st, MPI_BYTE, &n);
        if ((size_t) n != size)
            MMC_ERR("size %zu mode %d: count %d\n", size, mode, n);
        mmc_check(r, size, tag, 0, mode ? "unexpected" : "expected");
    }
  done:
    free(s);
    free(r);
}

static void thresholds(void)
{
    size_t sizes[] = { thr - 1, thr, thr + 1, (1 << 20) + 7, 16 << 20 };
    for (int i = 0; i < 5; i++)
        for (int mode = 0; mode < 3; mode++)
            xfer(sizes[i], 10 + i * 3 + mode, mode);
}

/* a datatype of about `bytes` data bytes: 0 contiguous, 1 vector, 2 indexed, 3 struct */
static MPI_Datatype make_type(int kind, int bytes, int *count)
{
    MPI_Datatype t = MPI_BYTE;
    int nblk = bytes / 3000, lens[8] = { 1000, 3000, 17, 4096, 2000, 1, 700, 5000 };
    int displs[8], pos = 0, total = 0;
    for (int i = 0; i < 8; i++) {
        displs[i] = pos;
        pos += lens[i] + 333;
        total += lens[i];
    }
    *count = 1;
    if (kind == 0) {
        *count = bytes;
    } else if (kind == 1) {
        MPI_Type_vector(nblk, 3000, 4100, MPI_BYTE, &t);
    } else {
        MPI_Datatype one;
        if (kind == 2) {
            MPI_Type_indexed(8, lens, displs, MPI_BYTE, &one);
        } else {
            MPI_Aint ad[8];
            MPI_Datatype ty[8];
            for (int i = 0; i < 8; i++) {
                ad[i] = displs[i];
                ty[i] = MPI_BYTE;
            }
            MPI_Type_create_struct(8, lens, ad, ty, &one);
        }
        MPI_Type_create_resized(one, 0, pos, &t);
        MPI_Type_free(&one);
        *count = bytes / total;
    }
    if (t != MPI_BYTE)
        MPI_Type_commit(&t);
    return t;
}

static void datatypes(void)
{
    for (int sk = 0; sk < 4; sk++) {
        for (int rk = 0; rk < 4; rk++) {
            int sc, rc, ssz, rsz, tag = 100 + sk * 4 + rk;
            MPI_Datatype st = make_type(sk, 3 << 20, &sc), rt = make_type(rk, 3 << 20, &rc);
            MPI_Aint lb, sext, rext;
            MPI_Type_size(st, &ssz);
            MPI_Type_size(rt, &rsz);
            MPI_Type_get_extent(st, &lb, &sext);
            MPI_Type_get_extent(rt, &lb, &rext);
            size_t n = (size_t) ssz * sc;       /* the receiver's room is at least this */
            if ((size_t) rsz * rc < n)
                sc = (int) ((size_t) rsz * rc / ssz), n = (size_t) ssz * sc;
            unsigned char *ref = malloc(n), *packed = malloc(n);
            unsigned char *sbuf = calloc(1, sext * sc), *rbuf = calloc(1, rext * rc);
            if (rank == 0) {
                int p = 0;
                mmc_fill(ref, n, tag, 0);
                MPI_Unpack(ref, (int) n, &p, sbuf, sc, st, MPI_COMM_SELF);
                MPI_Send(sbuf, sc, st, 1, tag, MPI_COMM_WORLD);
            } else if (rank == 1) {
                MPI_Status status;
                int p = 0, got;
                MPI_Recv(rbuf, rc, rt, 0, tag, MPI_COMM_WORLD, &status);
                MPI_Get_count(&status, MPI_BYTE, &got);
                if ((size_t) got != n)
                    MMC_ERR("datatypes %d -> %d: count %d, expected %zu\n", sk, rk, got, n);
                MPI_Pack(rbuf, (int) (n / rsz), rt, packed, (int) n, &p, MPI_COMM_SELF);
                if (n % rsz)    /* a partial element: compare what Pack reached */
                    n = (size_t) p;
                mmc_check(packed, n, tag, 0, "datatypes");
            }
            free(ref);
            free(packed);
            free(sbuf);
            free(rbuf);
            if (st != MPI_BYTE)
                MPI_Type_free(&st);
            if (rt != MPI_BYTE)
                MPI_Type_free(&rt);
        }
    }
}

/* 32 pairs outstanding at once, receives posted in reverse order */
static void many(void)
{
    enum { N = 32 };
    MPI_Request rq[N];
    unsigned char *buf[N];
    if (rank > 1)
        return;
    for (int k = 0; k < N; k++) {
        int i = rank == 0 ? k : N - 1 - k;
        size_t size = (256 << 10) + i * 7;
        buf[i] = malloc(size);
        if (rank == 0) {
            mmc_fill(buf[i], size, 200 + i, 0);
            MPI_Isend(buf[i], (int) size, MPI_BYTE, 1, 200 + i, MPI_COMM_WORLD, &rq[i]);
        } else {
            memset(buf[i], 0xee, size);
            MPI_Irecv(buf[i], (int) size, MPI_BYTE, 0, 200 + i, MPI_COMM_WORLD, &rq[i]);
        }
    }
    MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; i++) {
        if (rank == 1)
            mmc_check(buf[i], (256 << 10) + i * 7, 200 + i, 0, "outstanding");
        free(buf[i]);
    }
}

/* every other rank sends two large messages to rank 0, received from MPI_ANY_SOURCE */
static void anysource(void)
{
    size_t size = 2 * thr + 5;
    unsigned char *b = malloc(size);
    if (rank == 0) {
        for (int k = 0; k < 2 * (nprocs - 1); k++) {
            MPI_Status st;
            MPI_Recv(b, (int) size, MPI_BYTE, MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &st);
            mmc_check(b, size, 300, st.MPI_SOURCE, "ANY_SOURCE");
        }
    } else {
        mmc_fill(b, size, 300, rank);
        for (int k = 0; k < 2; k++)
            MPI_Send(b, (int) size, MPI_BYTE, 0, 300, MPI_COMM_WORLD);
    }
    free(b);
}

static void probes_ssend_cancel(void)
{
    size_t size = 3 * thr + 11;
    unsigned char *b = malloc(size);
    if (rank == 0) {
        mmc_fill(b, size, 400, 0);
        MPI_Send(b, (int) size, MPI_BYTE, 1, 400, MPI_COMM_WORLD);
        MPI_Send(b, (int) size, MPI_BYTE, 1, 400, MPI_COMM_WORLD);
        MPI_Ssend(b, (int) size, MPI_BYTE, 1, 400, MPI_COMM_WORLD);
        mmc_fill(b, size, 401, 0);
        MPI_Send(b, (int) size, MPI_BYTE, 1, 401, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Status st;
        MPI_Message msg;
        MPI_Request rq;
        int n, cancelled;
        /* a receive cancelled before its message: the message goes to the next */
        MPI_Irecv(b, (int) size, MPI_BYTE, 0, 401, MPI_COMM_WORLD, &rq);
        MPI_Cancel(&rq);
        MPI_Wait(&rq, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled)
            MMC_ERR("cancel: the receive was not cancelled\n");
        MPI_Probe(0, 400, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if ((size_t) n != size)
            MMC_ERR("probe: count %d, expected %zu\n", n, size);
        memset(b, 0, size);
        MPI_Recv(b, (int) size, MPI_BYTE, 0, 400, MPI_COMM_WORLD, &st);
        mmc_check(b, size, 400, 0, "after probe");
        MPI_Mprobe(0, 400, MPI_COMM_WORLD, &msg, &st);
        memset(b, 0, size);
        MPI_Mrecv(b, (int) size, MPI_BYTE, &msg, &st);
        mmc_check(b, size, 400, 0, "mrecv");
        memset(b, 0, size);
        MPI_Recv(b, (int) size, MPI_BYTE, 0, 400, MPI_COMM_WORLD, &st);
        mmc_check(b, size, 400, 0, "ssend");
        memset(b, 0, size);
        MPI_Recv(b, (int) size, MPI_BYTE, 0, 401, MPI_COMM_WORLD, &st);
        mmc_check(b, size, 401, 0, "after cancel");
    }
    free(b);
}

static void truncation(void)
{
    size_t size = 4 * thr;
    unsigned char *b = malloc(size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        mmc_fill(b, size, 500, 0);
        MPI_Send(b, (int) size, MPI_BYTE, 1, 500, MPI_COMM_WORLD);
        mmc_fill(b, size, 501, 0);
        MPI_Send(b, (int) size, MPI_BYTE, 1, 501, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int err = MPI_Recv(b, (int) size / 2, MPI_BYTE, 0, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int cls = MPI_SUCCESS;
        MPI_Error_class(err, &cls);
        if (cls != MPI_ERR_TRUNCATE)
            MMC_ERR("truncation: error class %d, expected MPI_ERR_TRUNCATE\n", cls);
        memset(b, 0, size);
        MPI_Recv(b, (int) size, MPI_BYTE, 0, 501, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mmc_check(b, size, 501, 0, "after truncation");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(b);
}

/* 2 GiB + 1 MiB + 3 bytes in one message: 4 elements of a contiguous type (an int
 * count cannot say it in bytes), then the remainder */
static void big(void)
{
    size_t size = (2UL << 30) + (1 << 20) + 3;
    MPI_Datatype chunk;
    MPI_Type_contiguous((int) (size / 4), MPI_BYTE, &chunk);
    MPI_Type_commit(&chunk);
    unsigned char *b = malloc(size);
    if (!b) {
        MMC_ERR("big: no memory\n");
    } else if (rank == 0) {
        mmc_fill(b, size, 600, 0);
        MPI_Send(b, 4, chunk, 1, 600, MPI_COMM_WORLD);
        MPI_Send(b + 4 * (size / 4), (int) (size % 4), MPI_BYTE, 1, 601, MPI_COMM_WORLD);
    } else if (rank == 1) {
        memset(b, 0, size);
        MPI_Recv(b, 4, chunk, 0, 600, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(b + 4 * (size / 4), (int) (size % 4), MPI_BYTE, 0, 601, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        mmc_check(b, size, 600, 0, "over 2 GiB");
    }
    free(b);
    MPI_Type_free(&chunk);
}

int main(int argc, char **argv)
{
    const char *expect = argc > 1 ? argv[argc - 1] : "cma";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int t = mmc_cvar_int("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", -1);
    thr = t < 0 ? MPIDI_CMA_THRESHOLD_DEFAULT(MPICH_NUMVERSION) : t < 2 ? 2 : (size_t) t;
    if (argc > 2 && !strcmp(argv[1], "big")) {
        big();
    } else {
        thresholds();
        datatypes();
        many();
        anysource();
        probes_ssend_cancel();
        truncation();
    }
    long long mine[3] = { mmc_pvar_counter("cma_msgs"), mmc_pvar_counter("cma_fallbacks"),
        mmc_pvar_counter("cma_splits")
    };
    long long sum[3];
    MPI_Allreduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("cma_msgs %lld cma_fallbacks %lld cma_splits %lld\n", sum[0], sum[1], sum[2]);
        int cma = !strcmp(expect, "cma"), split = !strcmp(expect, "split"),
            nosplit = !strcmp(expect, "nosplit");
        if ((cma || split || nosplit) && (sum[0] <= 0 || sum[1] != 0))
            MMC_ERR("expected messages moved by CMA and no fallback\n");
        if (split && sum[2] <= 0)
            MMC_ERR("expected messages split between sender and receiver\n");
        if (nosplit && sum[2] != 0)
            MMC_ERR("expected no message split\n");
        if (!strcmp(expect, "fallback") && sum[1] <= 0)
            MMC_ERR("expected refused copies delivered through the copy path\n");
        if (!strcmp(expect, "off") && (sum[0] != 0 || sum[1] != 0))
            MMC_ERR("expected CMA not to be used\n");
    }
    return mmc_finish();
}
