/*
 * Small allreduces, reduces, bcasts and barriers by exchange through shared
 * memory (src/shm/exch): every predefined operation on the types it allows, counts
 * from 1 to past MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE (which then go MPICH's way,
 * interleaved with the exchanges on the same communicator), in place or not,
 * on world, a duplicate, a reversed and an odd/even split, a cartesian
 * communicator, the node's shared-memory split, and 200 communicators made
 * and freed; bcasts from every root into another datatype of the same
 * signature, reduces to every root back to back; every result checked
 * against the one computed here, and every rank's bits compared with rank
 * 0's (each rank reduces for itself).  A
 * barrier must order stores to a shared window; a rank blocked in the
 * allreduce must move on a rendezvous its peer waits for first.  An
 * erroneous bcast whose root sends more or less than the others receive
 * is an error at every receiver, as MPICH's own algorithms make it (its
 * errors/coll/bcastlength), and so is an allreduce whose ranks disagree on
 * the count at every rank of a node's exchange; the communicator works on.
 *   arg on:  the exchange took operations (pvar ch4_shm_exch_ops)
 *   arg off: it took none (MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE=0)
 */
#include "mmc_test.h"
#include <complex.h>

#define MAXCOUNT 2048           /* 8 KiB of int: past the default 4 KiB */

static int wrank;

/* rank r's i-th value of a test: small, so sums and products stay exact */
static int val(int r, int i, int t)
{
    return (r * 7 + i * 3 + t) % 5 + 1;
}

typedef struct {
    MPI_Op op;
    const char *name;
} op_t;

static const op_t ops[] = {
    {MPI_SUM, "SUM"}, {MPI_PROD, "PROD"}, {MPI_MAX, "MAX"}, {MPI_MIN, "MIN"},
    {MPI_BAND, "BAND"}, {MPI_BOR, "BOR"}, {MPI_BXOR, "BXOR"},
    {MPI_LAND, "LAND"}, {MPI_LOR, "LOR"}, {MPI_LXOR, "LXOR"},
};

static long long combine(MPI_Op op, long long a, long long b)
{
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    if (op == MPI_BXOR) return a ^ b;
    if (op == MPI_LAND) return a && b;
    if (op == MPI_LOR) return a || b;
    return !a != !b;            /* LXOR */
}

/* every rank's result bytes must equal rank 0's where all are on one node
 * (the exchange, or MPICH's release_gather that broadcasts the root's) */
static void same_bits(MPI_Comm comm, const void *buf, int bytes, const char *what)
{
    int rank, size, local;
    MPI_Comm node;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_INT, MPI_MIN, comm);
    if (local != size)
        return;
    unsigned char *all = malloc((size_t) bytes * size);
    MPI_Allgather(buf, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm);
    for (int r = 1; r < size; r++)
        if (memcmp(all, all + (size_t) r * bytes, (size_t) bytes)) {
            MMC_ERR("rank %d: %s: rank %d's result differs from rank 0's\n", wrank, what, r);
            break;
        }
    free(all);
}

/* integers (int, long long, signed char) under every operation */
static void integers(MPI_Comm comm, const char *cname, int t)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const int counts[] = { 1, 7, 14, 512, 1024, 1025, MAXCOUNT };
    int *in = malloc(MAXCOUNT * sizeof(int)), *out = malloc(MAXCOUNT * sizeof(int));
    long long *lin = malloc(MAXCOUNT * sizeof(long long)), *lout = malloc(MAXCOUNT * sizeof(long long));
    signed char *cin = malloc(MAXCOUNT), *cout = malloc(MAXCOUNT);
    for (unsigned o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
        for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int n = counts[c], inplace = (o + c) % 2;
            for (int i = 0; i < n; i++) {
                in[i] = val(rank, i, t + (int) o);
                lin[i] = (long long) in[i] << 33;
                cin[i] = (signed char) (in[i] == 5 ? 0 : in[i] % 2);
            }
            if (inplace) {
                memcpy(out, in, n * sizeof(int));
                MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, ops[o].op, comm);
            } else
                MPI_Allreduce(in, out, n, MPI_INT, ops[o].op, comm);
            MPI_Allreduce(lin, lout, n, MPI_LONG_LONG, ops[o].op == MPI_PROD ? MPI_SUM : ops[o].op,
                          comm);
            MPI_Allreduce(cin, cout, n, MPI_SIGNED_CHAR, ops[o].op == MPI_PROD ? MPI_MAX : ops[o].op,
                          comm);
            for (int i = 0; i < n; i++) {
                long long e = val(0, i, t + (int) o), le = (long long) e << 33;
                long long ce = val(0, i, t + (int) o) == 5 ? 0 : val(0, i, t + (int) o) % 2;
                for (int r = 1; r < size; r++) {
                    int v = val(r, i, t + (int) o);
                    e = combine(ops[o].op, e, v);
                    le = combine(ops[o].op == MPI_PROD ? MPI_SUM : ops[o].op, le, (long long) v << 33);
                    ce = combine(ops[o].op == MPI_PROD ? MPI_MAX : ops[o].op, ce,
                                 v == 5 ? 0 : v % 2);
                }
                if (out[i] != (int) e || lout[i] != le || cout[i] != (signed char) ce) {
                    MMC_ERR("rank %d: %s: %s of %d: element %d: int %d (expected %lld), "
                            "long long %lld (%lld), char %d (%lld)\n", wrank, cname, ops[o].name,
                            n, i, out[i], e, lout[i], le, cout[i], ce);
                    break;
                }
            }
        }
    free(in); free(out); free(lin); free(lout); free(cin); free(cout);
}

/* floating point: sums whose order matters must give every rank the same
 * bits; MINLOC and MAXLOC on MPI_2INT; complex products */
static void floats(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const int counts[] = { 1, 5, 256, 257, 513 };
    double *d = malloc(MAXCOUNT * sizeof(double)), *dr = malloc(MAXCOUNT * sizeof(double));
    for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];
        for (int i = 0; i < n; i++)
            d[i] = (rank % 2 ? 1e16 : 1.0) * (i + 1) + 0.1 * rank;
        MPI_Allreduce(d, dr, n, MPI_DOUBLE, MPI_SUM, comm);
        for (int i = 0; i < n; i++) {
            double lo = 0, hi = 0;
            for (int r = 0; r < size; r++)
                lo += (r % 2 ? 1e16 : 1.0) * (i + 1) + 0.1 * r;
            hi = lo * (1 + 1e-12);
            lo = lo * (1 - 1e-12);
            if (!(dr[i] >= lo && dr[i] <= hi)) {
                MMC_ERR("rank %d: %s: double SUM of %d: element %d is %g\n", wrank, cname, n, i,
                        dr[i]);
                break;
            }
        }
        same_bits(comm, dr, n * (int) sizeof(double), "double SUM");
    }
    struct { int v, loc; } p[64], pr[64];
    for (int i = 0; i < 64; i++) {
        p[i].v = val(rank, i, 3);
        p[i].loc = rank;
    }
    for (int m = 0; m < 2; m++) {
        MPI_Allreduce(p, pr, 64, MPI_2INT, m ? MPI_MAXLOC : MPI_MINLOC, comm);
        for (int i = 0; i < 64; i++) {
            int best = val(0, i, 3), loc = 0;
            for (int r = 1; r < size; r++) {
                int v = val(r, i, 3);
                if (m ? v > best : v < best) {
                    best = v;
                    loc = r;
                }
            }
            if (pr[i].v != best || pr[i].loc != loc) {
                MMC_ERR("rank %d: %s: 2INT %s element %d: (%d, %d), expected (%d, %d)\n", wrank,
                        cname, m ? "MAXLOC" : "MINLOC", i, pr[i].v, pr[i].loc, best, loc);
                break;
            }
        }
    }
    double complex z[16], zr[16];
    for (int i = 0; i < 16; i++)
        z[i] = (rank % 3 == 0 ? 1.0 : 0.0) + (rank % 3 == 0 ? 0.0 : 1.0) * I;
    MPI_Allreduce(z, zr, 16, MPI_C_DOUBLE_COMPLEX, MPI_PROD, comm);
    double complex ez = 1;
    for (int r = 0; r < size; r++)
        ez *= (r % 3 == 0 ? 1.0 : 0.0) + (r % 3 == 0 ? 0.0 : 1.0) * I;
    for (int i = 0; i < 16; i++)
        if (zr[i] != ez) {
            MMC_ERR("rank %d: %s: complex PROD element %d: %g%+gi, expected %g%+gi\n", wrank, cname,
                    i, creal(zr[i]), cimag(zr[i]), creal(ez), cimag(ez));
            break;
        }
    free(d);
    free(dr);
}

/* MPI_Bcast from every root, with the receivers' datatype other than the
 * root's (ints at the root, a contiguous type of 4 ints or bytes at the
 * others: only the signature must match), and MPI_Reduce to every root, in
 * place at the root or not, back to back so that ranks run ahead */
static void rooted(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const int counts[] = { 4, 16, 512, 516, 1028 };
    int *buf = malloc(MAXCOUNT * sizeof(int)), *red = malloc(MAXCOUNT * sizeof(int));
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    for (int root = 0; root < size; root++)
        for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int n = counts[c], kind = (root + (int) c) % 3;
            for (int i = 0; i < n; i++)
                buf[i] = rank == root ? val(root, i, 11) * 1000 + i : -1;
            if (rank == root)
                MPI_Bcast(buf, n, MPI_INT, root, comm);
            else if (kind == 0)
                MPI_Bcast(buf, n / 4, four, root, comm);
            else if (kind == 1)
                MPI_Bcast(buf, n * (int) sizeof(int), MPI_BYTE, root, comm);
            else
                MPI_Bcast(buf, n, MPI_INT, root, comm);
            for (int i = 0; i < n; i++)
                if (buf[i] != val(root, i, 11) * 1000 + i) {
                    MMC_ERR("rank %d: %s: bcast of %d ints from %d (receivers' type %d): "
                            "element %d is %d\n", wrank, cname, n, root, kind, i, buf[i]);
                    break;
                }
        }
    for (int rep = 0; rep < 50; rep++)
        for (int root = 0; root < size; root++) {
            int n = rep % 2 ? 3 : 1100, inplace = rank == root && rep % 3 == 0;
            /* the root's receive buffer holds its data only in place */
            for (int i = 0; i < n; i++) {
                buf[i] = val(rank, i, rep);
                red[i] = inplace ? buf[i] : -1000;
            }
            MPI_Reduce(inplace ? MPI_IN_PLACE : buf, red, n, MPI_INT, MPI_SUM, root, comm);
            if (rank != root)
                continue;
            for (int i = 0; i < n; i++) {
                int e = 0;
                for (int r = 0; r < size; r++)
                    e += val(r, i, rep);
                if (red[i] != e) {
                    MMC_ERR("rank %d: %s: reduce %d of %d ints to %d: element %d is %d, "
                            "expected %d\n", wrank, cname, rep, n, root, i, red[i], e);
                    break;
                }
            }
        }
    MPI_Type_free(&four);
    free(buf);
    free(red);
}

/* a barrier orders each rank's store before every other rank's load */
static void barrier_orders(MPI_Comm node)
{
    int rank, size;
    long long *mine;
    MPI_Win win;
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    MPI_Win_allocate_shared(sizeof(long long), sizeof(long long), MPI_INFO_NULL, node, &mine, &win);
    long long *slot[64];
    for (int r = 0; r < size && r < 64; r++) {
        MPI_Aint sz;
        int disp;
        MPI_Win_shared_query(win, r, &sz, &disp, &slot[r]);
    }
    *mine = 0;
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    for (long long it = 1; it <= 2000; it++) {
        __atomic_store_n(mine, it, __ATOMIC_RELAXED);
        MPI_Win_sync(win);
        MPI_Barrier(node);
        MPI_Win_sync(win);
        for (int r = 0; r < size && r < 64; r++) {
            long long v = __atomic_load_n(slot[r], __ATOMIC_RELAXED);
            if (v < it) {
                MMC_ERR("rank %d: after barrier %lld, rank %d's store reads %lld\n", wrank, it, r,
                        v);
                it = 2001;
                break;
            }
        }
        /* nobody stores it + 1 before everyone has read it */
        MPI_Barrier(node);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

/* rank 1 waits for its 4 MiB send to rank 0 before its allreduce; rank 0
 * posts the receive and waits in the allreduce first */
static void progress_inside(MPI_Comm comm)
{
    int rank, size, x, y;
    size_t len = 4 << 20;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size < 2)
        return;
    unsigned char *buf = malloc(len);
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 0) {
        memset(buf, 0, len);
        MPI_Irecv(buf, (int) len, MPI_BYTE, 1, 5, comm, &r);
    } else if (rank == 1) {
        mmc_fill(buf, len, 5, 1);
        MPI_Send(buf, (int) len, MPI_BYTE, 0, 5, comm);
    }
    x = rank + 1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
    if (y != size * (size + 1) / 2)
        MMC_ERR("rank %d: allreduce beside a rendezvous: %d\n", wrank, y);
    if (rank == 0) {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        mmc_check(buf, len, 5, 1, "the rendezvous beside the allreduce");
    }
    free(buf);
}

/* MPI_Bcast with the root's count 10 and the others' 1, then the other way
 * round (the root 1, the others 10): an error at every receiver; where the
 * exchange takes every rank (exch), an MPI_Allreduce of 2 ints at rank 0 and
 * 1 elsewhere is an error at every rank.  Then a correct allreduce. */
static void mismatch(MPI_Comm parent, const char *cname, int exch)
{
    int rank, size, buf[10], x, y;
    MPI_Comm comm;
    MPI_Comm_dup(parent, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int way = 0; way < 2 && size > 1; way++) {
        int mine = (rank == 0) == (way == 0) ? 10 : 1;
        for (int i = 0; i < 10; i++)
            buf[i] = rank == 0 ? 100 + i : -1;
        int rc = MPI_Bcast(buf, mine, MPI_INT, 0, comm);
        if (rank != 0 && rc == MPI_SUCCESS)
            MMC_ERR("rank %d: %s: a bcast of %d ints from the root into %d: no error\n",
                    wrank, cname, way == 0 ? 10 : 1, mine);
    }
    if (exch && size > 1) {
        int in[2] = { rank, rank }, out[2];
        int rc = MPI_Allreduce(in, out, rank == 0 ? 2 : 1, MPI_INT, MPI_SUM, comm);
        if (rc == MPI_SUCCESS)
            MMC_ERR("rank %d: %s: an allreduce of %d ints where rank 0 gave 2: no error\n",
                    wrank, cname, rank == 0 ? 2 : 1);
    }
    x = rank + 1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
    if (y != size * (size + 1) / 2)
        MMC_ERR("rank %d: %s: the allreduce after the mismatches: %d\n", wrank, cname, y);
    MPI_Comm_free(&comm);
}

static void run_on(MPI_Comm comm, const char *cname, int t)
{
    integers(comm, cname, t);
    floats(comm, cname);
    rooted(comm, cname);
    /* MPICH's own collectives between the exchanges */
    int b = t, s;
    MPI_Bcast(&b, 1, MPI_INT, 0, comm);
    MPI_Reduce(&b, &s, 1, MPI_INT, MPI_SUM, 0, comm);
    MPI_Barrier(comm);
    integers(comm, cname, t + 1);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Comm dup, rev, half, cart, node;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int on = argc > 1 && strcmp(argv[1], "on") == 0;
    long long before = mmc_pvar_counter("ch4_shm_exch_ops");

    run_on(MPI_COMM_WORLD, "world", 0);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_on(dup, "dup", 1);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev);
    run_on(rev, "reversed", 2);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    run_on(half, "odd/even", 3);
    int dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    run_on(cart, "cartesian", 4);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    run_on(node, "node", 5);
    barrier_orders(node);
    progress_inside(MPI_COMM_WORLD);
    progress_inside(node);
    int nnode;
    MPI_Comm_size(node, &nnode);
    /* 5.0's bcast composition leaves a node's step out after an error between
     * nodes, stranding the node's other ranks with MPICH's own algorithms
     * too (5.0 turns its errors/coll tests off) */
#if MPICH_NUMVERSION >= 50000000
    if (nnode == size)
#endif
        mismatch(MPI_COMM_WORLD, "world", 0);
    mismatch(node, "node", on);
    for (int i = 0; i < 200; i++) {
        MPI_Comm c;
        int n, r, y;
        MPI_Comm_dup(i % 2 ? node : MPI_COMM_WORLD, &c);
        MPI_Comm_size(c, &n);
        MPI_Comm_rank(c, &r);
        int x = i * 100 + r;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c);
        MPI_Barrier(c);
        if (y != i * 100 + n - 1)
            MMC_ERR("rank %d: communicator %d: max %d, expected %d\n", wrank, i, y, i * 100 + n - 1);
        MPI_Comm_free(&c);
    }
    MPI_Comm_free(&node);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&dup);

    long long used = mmc_pvar_counter("ch4_shm_exch_ops") - before, all;
    MPI_Allreduce(&used, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("by exchange: %lld operations\n", all);
        if (on ? all <= 0 : all != 0)
            MMC_ERR("the exchange took %lld operations (expected %s)\n", all, on ? "some" : "none");
    }
    return mmc_finish();
}
