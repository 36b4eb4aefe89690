/*
 * The datatype matrix, point to point: every predefined C type MPICH
 * defines and derived types of every constructor (with holes, negative lower
 * bounds, nesting, and a dup of each), at counts whose sizes take every path
 * (0, one element, a fast box, MPICH's queue, past ch4:tcp's eager limit,
 * past CMA's threshold), with every send mode, received into the same type
 * and into another layout of the same signature, around a ring.
 *
 * What a receive must hold is computed locally, by MPICH's own pack and
 * unpack of the sender's buffer (which every rank can rebuild): the received
 * buffer must equal that byte for byte, the bytes outside the type (holes,
 * margins on both sides) still holding their fill.  So a transport that
 * drops, shifts or reorders a block, or writes into a hole, fails.
 *
 *   dtype_matrix [quick]    quick: 3 counts and 3 send modes a type
 */
#include "mmc_test.h"
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#define FILL 0x5c
#define MARGIN 64
#define MAXTYPES 96

struct dtype {
    char name[64];
    MPI_Datatype type, twin;    /* twin: another layout of the same signature, */
    int twin_mult;              /* twin_mult of them to an element of type */
    int free_type, free_twin;
};

static struct dtype types[MAXTYPES];
static int ntypes;

static void add(const char *name, MPI_Datatype type, int free_type, MPI_Datatype twin,
                int twin_mult, int free_twin)
{
    if (ntypes == MAXTYPES) {
        MMC_ERR("too many types\n");
        return;
    }
    struct dtype *d = &types[ntypes++];
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->type = type;
    d->twin = twin;
    d->twin_mult = twin_mult;
    d->free_type = free_type;
    d->free_twin = free_twin;
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

/* T with a hole of its own size after each element: the twin of any
 * contiguous run of T */
static MPI_Datatype spaced(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Datatype r;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_create_resized(t, 0, 2 * ext, &r);
    return commit(r);
}

static void add_predefined(const char *name, MPI_Datatype t)
{
    add(name, t, 0, spaced(t), 1, 1);
}

/* a derived type of n elements of basic type b */
static void add_derived(const char *name, MPI_Datatype t, MPI_Datatype b, int n)
{
    add(name, commit(t), 1, spaced(b), n, 1);
}

static void build_types(void)
{
#define P(T) add_predefined(#T, T)
    P(MPI_CHAR); P(MPI_SIGNED_CHAR); P(MPI_UNSIGNED_CHAR); P(MPI_BYTE); P(MPI_WCHAR);
    P(MPI_SHORT); P(MPI_UNSIGNED_SHORT); P(MPI_INT); P(MPI_UNSIGNED); P(MPI_LONG);
    P(MPI_UNSIGNED_LONG); P(MPI_LONG_LONG); P(MPI_UNSIGNED_LONG_LONG);
    P(MPI_FLOAT); P(MPI_DOUBLE); P(MPI_LONG_DOUBLE); P(MPI_C_BOOL);
    P(MPI_INT8_T); P(MPI_INT16_T); P(MPI_INT32_T); P(MPI_INT64_T);
    P(MPI_UINT8_T); P(MPI_UINT16_T); P(MPI_UINT32_T); P(MPI_UINT64_T);
    P(MPI_C_COMPLEX); P(MPI_C_FLOAT_COMPLEX); P(MPI_C_DOUBLE_COMPLEX);
    P(MPI_C_LONG_DOUBLE_COMPLEX); P(MPI_AINT); P(MPI_OFFSET); P(MPI_COUNT); P(MPI_PACKED);
    P(MPI_FLOAT_INT); P(MPI_DOUBLE_INT); P(MPI_LONG_INT); P(MPI_2INT); P(MPI_SHORT_INT);
    P(MPI_LONG_DOUBLE_INT);
#undef P

    MPI_Datatype t, u;
    int bl3[3] = { 2, 1, 3 }, di3[3] = { 0, 5, 9 };
    MPI_Aint hd3[3] = { 0, 20, 44 };

    MPI_Type_contiguous(3, MPI_DOUBLE, &t);
    add_derived("contiguous(3 double)", t, MPI_DOUBLE, 3);
    MPI_Type_vector(3, 2, 5, MPI_INT, &t);
    add_derived("vector(3 x 2 int, stride 5)", t, MPI_INT, 6);
    MPI_Type_create_hvector(4, 1, 24, MPI_DOUBLE, &t);
    add_derived("hvector(4 x 1 double, 24 B)", t, MPI_DOUBLE, 4);
    MPI_Type_indexed(3, bl3, di3, MPI_INT, &t);
    add_derived("indexed(2,1,3 int at 0,5,9)", t, MPI_INT, 6);
    MPI_Type_create_hindexed(3, bl3, hd3, MPI_SHORT, &t);
    add_derived("hindexed(2,1,3 short at 0,20,44 B)", t, MPI_SHORT, 6);
    MPI_Type_create_indexed_block(3, 2, di3, MPI_FLOAT, &t);
    add_derived("indexed_block(3 x 2 float)", t, MPI_FLOAT, 6);
    MPI_Type_create_hindexed_block(3, 2, hd3, MPI_INT, &t);
    add_derived("hindexed_block(3 x 2 int)", t, MPI_INT, 6);
    MPI_Type_vector(2, 1, 3, MPI_INT, &u);
    MPI_Type_create_resized(u, -8, 32, &t);
    MPI_Type_free(&u);
    add_derived("resized(vector(2 int), lb -8, extent 32)", t, MPI_INT, 2);
    {
        int sizes[3] = { 4, 5, 6 }, sub[3] = { 2, 3, 2 }, start[3] = { 1, 1, 3 };
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
        add_derived("subarray(2x3x2 of 4x5x6 double)", t, MPI_DOUBLE, 12);
    }
    {
        int gs[2] = { 8, 6 }, distr[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC };
        int darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, ps[2] = { 2, 2 };
        /* process 1 of a 2x2 grid: the same type on every rank */
        MPI_Type_create_darray(4, 1, 2, gs, distr, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        int sz;
        MPI_Type_size(t, &sz);
        add_derived("darray(8x6 int, block x cyclic(2), process 1 of 2x2)", t, MPI_INT,
                    sz / (int) sizeof(int));
    }
    {
        /* a struct with holes, and its twin packed tight */
        int bl[3] = { 1, 2, 1 };
        MPI_Aint d[3] = { 0, 8, 28 }, dt[3] = { 0, 1, 17 };
        MPI_Datatype ty[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT };
        MPI_Type_create_struct(3, bl, d, ty, &t);
        MPI_Type_create_struct(3, bl, dt, ty, &u);
        add("struct(char, 2 double, int; holes)", commit(t), 1, commit(u), 1, 1);
    }
    {
        /* a struct of a pair type and a vector, negative displacement first */
        int bl[2] = { 2, 1 };
        MPI_Aint d[2] = { -40, 16 }, dt[2] = { 0, 32 };
        MPI_Datatype vec, ty[2];
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
        ty[0] = MPI_DOUBLE_INT;
        ty[1] = vec;
        MPI_Type_create_struct(2, bl, d, ty, &t);
        ty[1] = MPI_2INT;
        MPI_Type_create_struct(2, bl, dt, ty, &u);
        MPI_Type_free(&vec);
        add("struct(2 double_int at -40, vector(2 int))", commit(t), 1, commit(u), 1, 1);
    }

    /* a dup of every derived type, with the original's twin */
    int nderived = ntypes;
    for (int i = 0; i < nderived; i++) {
        if (!types[i].free_type)
            continue;
        char name[64];
        snprintf(name, sizeof(name), "dup(%.55s)", types[i].name);
        MPI_Type_dup(types[i].type, &t);
        add(name, t, 1, types[i].twin, types[i].twin_mult, 0);
    }
    /* and of a pair type and a predefined one */
    MPI_Type_dup(MPI_LONG_INT, &t);
    add("dup(MPI_LONG_INT)", t, 1, spaced(MPI_LONG_INT), 1, 1);
    MPI_Type_dup(MPI_INT, &t);
    add("dup(MPI_INT)", t, 1, spaced(MPI_INT), 1, 1);
}

/* A buffer for count elements of t: base is where the communication call
 * points, so that every byte the type may touch lies between the margins. */
struct buf {
    unsigned char *mem, *base;
    size_t len;
};

static void buf_alloc(struct buf *b, MPI_Datatype t, MPI_Aint count)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Aint span = count ? text + (count - 1) * ext : 0;
    b->len = (size_t) span + 2 * MARGIN;
    b->mem = malloc(b->len);
    b->base = b->mem + MARGIN - tlb;
}

static unsigned char pattern(size_t i, int src, int salt)
{
    return (unsigned char) (i * 151 + (i >> 9) * 11 + (size_t) src * 43 + (size_t) salt * 7 + 1);
}

static void fill_pattern(struct buf *b, int src, int salt)
{
    for (size_t i = 0; i < b->len; i++)
        b->mem[i] = pattern(i, src, salt);
}

/* what a receive of rcount x rtype must hold after src sent scount x stype */
static void expected(struct buf *exp, const struct dtype *d, MPI_Datatype stype, MPI_Aint scount,
                     MPI_Datatype rtype, MPI_Aint rcount, int src, int salt)
{
    struct buf s;
    int psize;
    buf_alloc(&s, stype, scount);
    fill_pattern(&s, src, salt);
    MPI_Pack_size((int) scount, stype, MPI_COMM_WORLD, &psize);
    unsigned char *packed = malloc(psize ? psize : 1);
    int pos = 0;
    MPI_Pack(s.base, (int) scount, stype, packed, psize, &pos, MPI_COMM_WORLD);
    memset(exp->mem, FILL, exp->len);
    int upos = 0;
    MPI_Unpack(packed, pos, &upos, exp->base, (int) rcount, rtype, MPI_COMM_WORLD);
    if (upos != pos)
        MMC_ERR("%s: local unpack took %d of %d packed bytes\n", d->name, upos, pos);
    free(packed);
    free(s.mem);
}

static int bsend_max;

static void exchange(const struct dtype *d, int twin, MPI_Aint count, int mode, int rank, int size)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = mode + 1;
    MPI_Datatype rtype = twin ? d->twin : d->type;
    MPI_Aint rcount = twin ? count * d->twin_mult : count;
    struct buf s, r, e;
    int tsize;

    MPI_Type_size(d->type, &tsize);
    if (mode == MMC_IBSEND && (MPI_Aint) tsize * count > bsend_max)
        mode = MMC_ISEND;
    buf_alloc(&s, d->type, count);
    buf_alloc(&r, rtype, rcount);
    buf_alloc(&e, rtype, rcount);
    fill_pattern(&s, rank, tag);
    memset(r.mem, FILL, r.len);

    MPI_Request req[2];
    MPI_Status st;
    int err = MPI_SUCCESS;
    switch (mode) {
        case MMC_SENDRECV:
            err = MPI_Sendrecv(s.base, (int) count, d->type, next, tag, r.base, (int) rcount,
                               rtype, prev, tag, MPI_COMM_WORLD, &st);
            break;
        case MMC_PSEND:
            err = mmc_partitioned(s.base, count, d->type, r.base, rcount, rtype, next, prev,
                                  tag, MPI_COMM_WORLD, &st);
            break;
        case MMC_BLOCKING:
            /* even ranks send first; an odd ring's last rank too */
            if (rank % 2 == 0 && rank != size - 1) {
                err = MPI_Send(s.base, (int) count, d->type, next, tag, MPI_COMM_WORLD);
                err |= MPI_Recv(r.base, (int) rcount, rtype, prev, tag, MPI_COMM_WORLD, &st);
            } else {
                err = MPI_Recv(r.base, (int) rcount, rtype, prev, tag, MPI_COMM_WORLD, &st);
                err |= MPI_Send(s.base, (int) count, d->type, next, tag, MPI_COMM_WORLD);
            }
            break;
        default:
            MPI_Irecv(r.base, (int) rcount, rtype, prev, tag, MPI_COMM_WORLD, &req[0]);
            mmc_start_send(mode, s.base, (int) count, d->type, next, tag, MPI_COMM_WORLD,
                           &req[1]);
            MPI_Status sts[2];
            err = MPI_Waitall(2, req, sts);
            st = sts[0];
            if (err == MPI_ERR_IN_STATUS)
                err = sts[0].MPI_ERROR != MPI_SUCCESS ? sts[0].MPI_ERROR : sts[1].MPI_ERROR;
            if (mode == MMC_SEND_INIT)
                MPI_Request_free(&req[1]);
    }

    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        MMC_ERR("%s %s count %ld%s: %s\n", d->name, mmc_mode_names[mode], (long) count,
                twin ? " into its twin" : "", msg);
        free(s.mem);
        free(r.mem);
        free(e.mem);
        return;
    }
    int got;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != tsize * count || st.MPI_SOURCE != prev || st.MPI_TAG != tag)
        MMC_ERR("%s %s count %ld%s: status says %d bytes from %d tag %d, expected %ld from %d "
                "tag %d\n", d->name, mmc_mode_names[mode], (long) count,
                twin ? " into its twin" : "", got, st.MPI_SOURCE, st.MPI_TAG,
                (long) tsize * count, prev, tag);
    expected(&e, d, d->type, count, rtype, rcount, prev, tag);
    for (size_t i = 0; i < r.len; i++)
        if (r.mem[i] != e.mem[i]) {
            MMC_ERR("%s %s count %ld%s from %d: byte %ld of the receive buffer is %u, "
                    "expected %u%s\n", d->name, mmc_mode_names[mode], (long) count,
                    twin ? " into its twin" : "", prev, (long) i - MARGIN, r.mem[i], e.mem[i],
                    e.mem[i] == FILL ? " (outside the data)" : "");
            break;
        }
    free(s.mem);
    free(r.mem);
    free(e.mem);
}

int main(int argc, char **argv)
{
    int rank, size, quick = argc > 1 && !strcmp(argv[1], "quick");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    build_types();

    bsend_max = 1 << 20;
    int bsize = bsend_max + 4 * MPI_BSEND_OVERHEAD;
    void *battach = malloc(bsize);
    MPI_Buffer_attach(battach, bsize);

    /* message sizes: nothing, one element, a box (up to 1 KiB), MPICH's
     * queue, past ch4:tcp's eager limit, past CMA's threshold (4 MiB on
     * 4.x, 1 MiB on 5.0) */
    static const MPI_Aint sizes[] = { 0, 1, 200, 6000, 100000, 1200000, 5000000 };
    static const MPI_Aint quick_sizes[] = { 1, 6000, 1200000 };
    const MPI_Aint *sz = quick ? quick_sizes : sizes;
    int nsizes = quick ? 3 : (int) (sizeof(sizes) / sizeof(sizes[0]));
    int checked = 0;

    for (int i = 0; i < ntypes; i++) {
        const struct dtype *d = &types[i];
        int tsize;
        MPI_Type_size(d->type, &tsize);
        for (int k = 0; k < nsizes; k++) {
            MPI_Aint count = sz[k] <= 1 ? sz[k] : (sz[k] + tsize - 1) / tsize;
            for (int mode = 0; mode < MMC_NMODES; mode++) {
                /* every mode at every size in full; quick: isend everywhere,
                 * issend at the first two sizes, partitioned at the second */
                if (quick && mode != MMC_ISEND && !(mode == MMC_ISSEND && k < 2) &&
                    !(mode == MMC_PSEND && k == 1))
                    continue;
                /* past 1 MiB, standard, synchronous and partitioned sends only */
                if (sz[k] > 1000000 && mode != MMC_ISEND && mode != MMC_ISSEND &&
                    mode != MMC_PSEND)
                    continue;
                for (int twin = 0; twin < 2; twin++) {
                    exchange(d, twin, count, mode, rank, size);
                    checked++;
                }
            }
        }
    }
    if (rank == 0)
        printf("dtype_matrix: %d types, %d exchanges checked a rank\n", ntypes, checked);

    MPI_Buffer_detach(&battach, &bsize);
    free(battach);
    for (int i = 0; i < ntypes; i++) {
        if (types[i].free_type)
            MPI_Type_free(&types[i].type);
        if (types[i].free_twin)
            MPI_Type_free(&types[i].twin);
    }
    return mmc_finish();
}
