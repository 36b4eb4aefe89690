/*
 * Point-to-point across nodes, with byte checks, around every size at which
 * ch4:tcp changes how it moves a message: the eager limit (read from
 * MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE), the read-ahead buffer, and large
 * messages; expected, unexpected and crossing messages; vector, indexed and
 * struct datatypes on either side, and absolute-address datatypes with
 * MPI_BOTTOM (as MPICH's own gather uses); MPI_ANY_SOURCE / MPI_ANY_TAG; Ssend,
 * Rsend, Probe, Mprobe; truncation (MPI_ERR_TRUNCATE, and the messages after
 * it still arrive intact); messages left unreceived when their communicator
 * is freed.
 *
 * Rank 0 works with a partner on another node; ranks not in the active pair
 * wait without busy-polling.
 */
#include "mmc_test.h"
#include "tcp_policy.h"
#include <unistd.h>

static int rank, nprocs, peer;
static long eager;

/* a message of `size` bytes from a to b, tag t; mode 0: receive posted first,
 * 1: message arrives before the receive, 2: both directions at once */
static void exchange(size_t size, int tag, int mode, unsigned char *sbuf, unsigned char *rbuf)
{
    MPI_Request rq[2];
    if (rank != 0 && rank != peer)
        return;
    int other = rank == 0 ? peer : 0;
    memset(rbuf, 0xee, size);
    mmc_fill(sbuf, size, tag, rank);
    if (mode == 2) {
        MPI_Irecv(rbuf, (int) size, MPI_BYTE, other, tag, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(sbuf, (int) size, MPI_BYTE, other, tag, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        mmc_check(rbuf, size, tag, other, "crossing");
        return;
    }
    if (rank == 0) {
        if (mode == 0)  /* wait until the receive is posted */
            MPI_Recv(NULL, 0, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, (int) size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        int n;
        if (mode == 0) {
            MPI_Irecv(rbuf, (int) size, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &rq[0]);
            MPI_Send(NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            MPI_Wait(&rq[0], &st);
        } else {
            usleep(20000);
            MPI_Recv(rbuf, (int) size, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st);
        }
        MPI_Get_count(&st, MPI_BYTE, &n);
        if ((size_t) n != size)
            MMC_ERR("size %zu mode %d: count %d\n", size, mode, n);
        mmc_check(rbuf, size, tag, 0, mode ? "unexpected" : "expected");
    }
}

static void thresholds(void)
{
    size_t sizes[32];
    int n = 0;
    sizes[n++] = 0;
    sizes[n++] = 1;
    if (eager > 1)
        sizes[n++] = (size_t) eager - 1;
    sizes[n++] = (size_t) eager;
    sizes[n++] = (size_t) eager + 1;
    /* a message that just fits the read-ahead buffer, and just does not */
    for (size_t s = MPIDI_TCP_READAHEAD - 96; s <= MPIDI_TCP_READAHEAD - 16; s += 16)
        sizes[n++] = s;
    sizes[n++] = MPIDI_TCP_READAHEAD + 1;
    sizes[n++] = (1 << 20) + 3;
    sizes[n++] = (6 << 20) + 5;
    size_t max = (6 << 20) + 5;
    for (int i = 0; i < n; i++)
        if (sizes[i] > max)
            max = sizes[i];
    unsigned char *s = malloc(max), *r = malloc(max);
    for (int i = 0; i < n; i++)
        for (int mode = 0; mode < 3; mode++)
            exchange(sizes[i], 100 + i * 3 + mode, mode, s, r);
    free(s);
    free(r);
}

/* Datatypes of n ints: blocks (lens[i] ints at int offset disps[i]). */
typedef struct {
    int nblocks, lens[4096], disps[4096], extent;
} layout_t;

static void make_layout(layout_t * L, int nints, int kind)
{
    int pos = 0, left = nints, i = 0;
    while (left > 0) {
        int len = kind == 0 ? 3 : 1 + i % 7;    /* vector: fixed blocks; else varying */
        if (len > left)
            len = left;
        L->lens[i] = len;
        L->disps[i] = pos;
        pos += len + (kind == 0 ? 2 : 1 + i % 3);
        left -= len;
        i++;
    }
    L->nblocks = i;
    L->extent = pos;
}

static MPI_Datatype make_type(layout_t * L, int kind)
{
    MPI_Datatype t;
    if (kind == 0 && L->nblocks > 1 && L->lens[L->nblocks - 1] == 3) {
        MPI_Type_vector(L->nblocks, 3, 5, MPI_INT, &t);
    } else if (kind == 1 || kind == 0) {
        MPI_Type_indexed(L->nblocks, L->lens, L->disps, MPI_INT, &t);
    } else {
        MPI_Aint d[4096];
        MPI_Datatype types[4096];
        for (int i = 0; i < L->nblocks; i++) {
            d[i] = (MPI_Aint) L->disps[i] * sizeof(int);
            types[i] = MPI_INT;
        }
        MPI_Type_create_struct(L->nblocks, L->lens, d, types, &t);
    }
    MPI_Type_commit(&t);
    return t;
}

static int value(int i, int tag)
{
    return i * 7919 + tag;
}

/* sender kind ks, receiver kind kr (3: contiguous), n ints */
static void typed(int nints, int ks, int kr, int tag)
{
    static layout_t Ls, Lr;
    if (rank != 0 && rank != peer)
        return;
    int kinds[2] = { ks, kr };
    layout_t *L[2] = { &Ls, &Lr };
    MPI_Datatype t[2];
    int *buf[2];
    for (int side = 0; side < 2; side++) {
        if (kinds[side] == 3) {
            L[side]->nblocks = 1;
            L[side]->lens[0] = nints;
            L[side]->disps[0] = 0;
            L[side]->extent = nints;
            t[side] = MPI_INT;
        } else {
            make_layout(L[side], nints, kinds[side]);
            t[side] = make_type(L[side], kinds[side]);
        }
        buf[side] = malloc(sizeof(int) * (L[side]->extent + 1));
    }
    int count = kinds[rank == 0 ? 0 : 1] == 3 ? nints : 1;
    if (rank == 0) {
        int k = 0;
        for (int b = 0; b < Ls.nblocks; b++)
            for (int j = 0; j < Ls.lens[b]; j++, k++)
                buf[0][Ls.disps[b] + j] = value(k, tag);
        MPI_Send(buf[0], count, t[0], peer, tag, MPI_COMM_WORLD);
    } else {
        for (int i = 0; i <= Lr.extent; i++)
            buf[1][i] = -1;
        MPI_Recv(buf[1], count, t[1], 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int k = 0, bad = 0;
        for (int b = 0; b < Lr.nblocks; b++)
            for (int j = 0; j < Lr.lens[b]; j++, k++)
                if (buf[1][Lr.disps[b] + j] != value(k, tag) && !bad++)
                    MMC_ERR("datatype %d->%d, %d ints: element %d wrong\n", ks, kr, nints, k);
        /* the gaps stay untouched */
        for (int b = 0; b + 1 < Lr.nblocks; b++)
            for (int g = Lr.disps[b] + Lr.lens[b]; g < Lr.disps[b + 1]; g++)
                if (buf[1][g] != -1 && !bad++)
                    MMC_ERR("datatype %d->%d, %d ints: gap at %d written\n", ks, kr, nints, g);
    }
    for (int side = 0; side < 2; side++) {
        if (kinds[side] != 3)
            MPI_Type_free(&t[side]);
        free(buf[side]);
    }
}

static void datatypes(void)
{
    /* around the eager limit (in ints), and large enough to be read in segments */
    int counts[] = { 5, (int) (eager / 4) - 1, (int) (eager / 4), (int) (eager / 4) + 1, 12000 };
    int tag = 1000;
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        if (counts[c] < 1 || counts[c] > 12000)
            continue;
        for (int ks = 0; ks < 4; ks++)
            for (int kr = 0; kr < 4; kr++)
                if (ks != 3 || kr != 3)
                    typed(counts[c], ks, kr, tag++);
    }
}

/* MPI_BOTTOM with a datatype of absolute addresses: one block (contiguous)
 * and two blocks in separate buffers, on both sides */
static void bottom(void)
{
    int n = 3000, *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int));
    if (rank != 0 && rank != peer) {
        free(a);
        free(b);
        return;
    }
    for (int nblocks = 1; nblocks <= 2; nblocks++) {
        int lens[2] = { n, n };
        MPI_Aint disps[2];
        MPI_Datatype t;
        MPI_Get_address(a, &disps[0]);
        MPI_Get_address(b, &disps[1]);
        MPI_Type_create_hindexed(nblocks, lens, disps, MPI_INT, &t);
        MPI_Type_commit(&t);
        int tag = 5000 + nblocks;
        if (rank == 0) {
            for (int i = 0; i < n; i++) {
                a[i] = value(i, tag);
                b[i] = value(n + i, tag);
            }
            MPI_Send(MPI_BOTTOM, 1, t, peer, tag, MPI_COMM_WORLD);
        } else {
            for (int i = 0; i < n; i++)
                a[i] = b[i] = -1;
            MPI_Recv(MPI_BOTTOM, 1, t, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0, bad = 0; i < n * nblocks; i++) {
                int got = i < n ? a[i] : b[i - n];
                if (got != value(i, tag) && !bad++)
                    MMC_ERR("MPI_BOTTOM, %d blocks: element %d is %d\n", nblocks, i, got);
            }
        }
        MPI_Type_free(&t);
    }
    free(a);
    free(b);
}

/* everyone sends to rank 0, which receives with MPI_ANY_SOURCE/MPI_ANY_TAG;
 * the tag tells which message it got */
static void anysource(void)
{
    size_t sizes[] = { 8, (size_t) eager + 1, 300000 };
    size_t max = sizes[1] > sizes[2] ? sizes[1] : sizes[2];
    unsigned char *buf = malloc(max + 1);
    if (rank == 0) {
        for (int i = 0; i < 3 * (nprocs - 1); i++) {
            MPI_Status st;
            int count;
            memset(buf, 0, max + 1);
            MPI_Recv(buf, (int) max + 1, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            int s = (st.MPI_TAG - 2000) / 100;
            if (s < 0 || s > 2 || (st.MPI_TAG - 2000) % 100 != st.MPI_SOURCE ||
                (size_t) count != sizes[s]) {
                MMC_ERR("any source: tag %d, %d bytes from %d\n", st.MPI_TAG, count,
                        st.MPI_SOURCE);
                continue;
            }
            mmc_check(buf, sizes[s], st.MPI_TAG, st.MPI_SOURCE, "any source");
        }
    } else {
        for (int s = 0; s < 3; s++) {
            int tag = 2000 + s * 100 + rank;
            mmc_fill(buf, sizes[s], tag, rank);
            MPI_Send(buf, (int) sizes[s], MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        }
    }
    free(buf);
    mmc_barrier(MPI_COMM_WORLD, 0);
}

static void modes(void)
{
    /* 200000: above MPICH's pack buffers, eager when the limit allows (held by ch4:tcp
     * while unexpected) */
    size_t sizes[] = { 16, 200000, (size_t) eager + 1, 2 << 20 };
    unsigned char *s = malloc((2 << 20) + 1), *r = malloc((2 << 20) + 1);
    for (size_t i = 0; i < 4; i++) {
        if (sizes[i] > (2 << 20))
            continue;
        size_t n = sizes[i];
        int tag = 3000 + (int) i * 10;
        if (rank == 0) {
            mmc_fill(s, n, tag, 0);
            MPI_Ssend(s, (int) n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_fill(s, n, tag + 2, 0);
            MPI_Rsend(s, (int) n, MPI_BYTE, peer, tag + 2, MPI_COMM_WORLD);
            mmc_fill(s, n, tag + 3, 0);
            MPI_Send(s, (int) n, MPI_BYTE, peer, tag + 3, MPI_COMM_WORLD);
            mmc_fill(s, n, tag + 4, 0);
            MPI_Send(s, (int) n, MPI_BYTE, peer, tag + 4, MPI_COMM_WORLD);
        } else if (rank == peer) {
            MPI_Request rq;
            MPI_Status st;
            MPI_Message msg;
            int count;
            MPI_Recv(r, (int) n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_check(r, n, tag, 0, "Ssend");
            MPI_Irecv(r, (int) n, MPI_BYTE, 0, tag + 2, MPI_COMM_WORLD, &rq);
            MPI_Send(NULL, 0, MPI_BYTE, 0, tag + 1, MPI_COMM_WORLD);    /* ready */
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            mmc_check(r, n, tag + 2, 0, "Rsend");
            MPI_Probe(0, tag + 3, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if ((size_t) count != n)
                MMC_ERR("Probe: count %d, expected %zu\n", count, n);
            MPI_Recv(r, count, MPI_BYTE, 0, tag + 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_check(r, n, tag + 3, 0, "Probe");
            MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (st.MPI_TAG != tag + 4 || (size_t) count != n)
                MMC_ERR("Mprobe: tag %d count %d\n", st.MPI_TAG, count);
            MPI_Mrecv(r, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
            mmc_check(r, n, tag + 4, 0, "Mprobe");
        }
    }
    free(s);
    free(r);
}

/* A receive too small for its message reports MPI_ERR_TRUNCATE; the bytes of
 * the messages behind it on the connection are not disturbed. */
static void truncation(void)
{
    size_t sizes[] = { 100, 200000, (size_t) eager + 1, 1 << 20 };
    unsigned char *s = malloc((1 << 20) + 64), *r = malloc((1 << 20) + 64);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t i = 0; i < 4; i++) {
        size_t n = sizes[i];
        if (n > (1 << 20))
            continue;
        int tag = 4000 + (int) i * 2;
        if (rank == 0) {
            mmc_fill(s, n, tag, 0);
            MPI_Send(s, (int) n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            mmc_fill(s, 64, tag + 1, 0);
            MPI_Send(s, 64, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD);
        } else if (rank == peer) {
            MPI_Status st;
            int err = MPI_Recv(r, (int) n / 2, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st), cls;
            MPI_Error_class(err, &cls);
            if (cls != MPI_ERR_TRUNCATE)
                MMC_ERR("truncated receive of %zu bytes: error class %d, expected %d\n", n, cls,
                        MPI_ERR_TRUNCATE);
            memset(r, 0, 64);
            err = MPI_Recv(r, 64, MPI_BYTE, 0, tag + 1, MPI_COMM_WORLD, &st);
            if (err != MPI_SUCCESS)
                MMC_ERR("receive after truncation failed\n");
            mmc_check(r, 64, tag + 1, 0, "after truncation");
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(s);
    free(r);
}

/* Messages nobody receives when their communicator is freed: MPICH 4.2+
 * receives them into a NULL buffer of MPI_DATATYPE_NULL (in
 * MPIR_Comm_delete_internal), a held eager one possibly while its payload
 * still arrives.  Nothing breaks, and the connection's next messages arrive
 * intact.  4.0.2 leaves them queued: a rendezvous send is then never taken,
 * so it is sent on 4.2+ only. */
static void unmatched(void)
{
    size_t big = eager < (1 << 20) ? (size_t) eager : (size_t) 1 << 20;
    size_t sizes[3] = { 64, big > 64 ? big : 1, (size_t) eager + 1 };
    int N = 0;
    while (N < 3 && (sizes[N] <= (size_t) eager ||
                     MPICH_NUMVERSION >= MPICH_CALC_VERSION(4, 2, 0, MPICH_RELEASE_TYPE_ALPHA, 0)))
        N++;
    unsigned char *s = malloc((size_t) eager + 1 + (2 << 20)), *r = malloc(2 << 20);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* MPICH 4.2+ reports the unmatched messages as an error of MPI_Comm_free, on
     * MPI_COMM_WORLD */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        MPI_Request rq[3];
        mmc_fill(s, (size_t) eager + 1, 5000, 0);
        for (int i = 0; i < N; i++)
            MPI_Isend(s, (int) sizes[i], MPI_BYTE, peer, 5000 + i, dup, &rq[i]);
        /* the rendezvous one completes when the peer's MPI_Comm_free takes it */
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
    } else if (rank == peer) {
        for (int i = 0, flag = 0; i < N; i++, flag = 0)
            while (!flag)
                MPI_Iprobe(0, 5000 + i, dup, &flag, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    exchange(64, 5010, 1, s, r);
    exchange((size_t) 1 << 20, 5011, 1, s, r);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int intra;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    mmc_partners(&intra, &peer);
    eager = mmc_cvar_int("MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE", -1);
    if (eager < 0)
        eager = MPIDI_TCP_EAGER_DEFAULT;
    if (peer < 0) {
        if (rank == 0)
            MMC_ERR("tcp_p2p needs ranks on two nodes\n");
        return mmc_finish();
    }
    int active = rank == 0 || rank == peer;
    thresholds();
    mmc_barrier(MPI_COMM_WORLD, !active);
    datatypes();
    bottom();
    mmc_barrier(MPI_COMM_WORLD, !active);
    anysource();
    modes();
    mmc_barrier(MPI_COMM_WORLD, !active);
    truncation();
    mmc_barrier(MPI_COMM_WORLD, !active);
    unmatched();
    mmc_barrier(MPI_COMM_WORLD, !active);
    return mmc_finish();
}
