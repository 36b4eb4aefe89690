/*
 * The datatype matrix, collectives: every predefined C type with every
 * reduction operator MPI allows for it (MAX and MIN for integers and
 * floating point, SUM and PROD for complex too, the logical operators for
 * integers and bool, the bitwise ones for integers and MPI_BYTE, all of them
 * for MPI_AINT, MPI_OFFSET and MPI_COUNT) through Allreduce, Reduce and Scan
 * at counts that take the fast boxes, MPICH's queue and the large-message
 * paths; then derived types with holes through Bcast, Gatherv, Alltoallw and
 * Neighbor_alltoallw on a ring.  Every result is computed locally and
 * compared element by element, or byte by byte with the holes left alone.
 * (MINLOC and MAXLOC on every pair type: dtype_pairs.)
 */
#include "mmc_test.h"
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

enum op { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, NOPS };
static const char *op_names[] = { "SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND",
    "BOR", "BXOR" };
static MPI_Op mpi_op(int op)
{
    static const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR,
        MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
    return ops[op];
}

#define ARITH ((1 << O_SUM) | (1 << O_PROD) | (1 << O_MAX) | (1 << O_MIN))
#define LOGIC ((1 << O_LAND) | (1 << O_LOR) | (1 << O_LXOR))
#define BITS ((1 << O_BAND) | (1 << O_BOR) | (1 << O_BXOR))
#define INTEGER (ARITH | LOGIC | BITS)
#define MULTI (ARITH | BITS)
#define FLOATING ARITH
#define COMPLEX ((1 << O_SUM) | (1 << O_PROD))

/* the contribution of rank r to element i under op: small enough that
 * PROD over 4 ranks fits a signed char and float sums are exact in any order */
static long value(int op, long i, int r)
{
    switch (op) {
        case O_PROD: return 1 + (i + r) % 2 * ((i % 3) == 0);
        case O_LAND: case O_LOR: case O_LXOR: return (i + r) % 3 == 0;
        case O_BAND: case O_BOR: case O_BXOR: return (i * 5 + r * 3 + 1) & 0x7f;
        default: return (i * 7 + r * 3) % 11 - 5 * (i % 2);
    }
}

/* op over integer-like a and b */
#define COMBINE_INT(op, a, b) \
    ((op) == O_SUM ? (a) + (b) : (op) == O_PROD ? (a) * (b) : \
     (op) == O_MAX ? ((a) > (b) ? (a) : (b)) : (op) == O_MIN ? ((a) < (b) ? (a) : (b)) : \
     (op) == O_LAND ? ((a) && (b)) : (op) == O_LOR ? ((a) || (b)) : \
     (op) == O_LXOR ? (!(a) != !(b)) : (op) == O_BAND ? ((a) & (b)) : \
     (op) == O_BOR ? ((a) | (b)) : ((a) ^ (b)))
#define COMBINE_FLOAT(op, a, b) \
    ((op) == O_SUM ? (a) + (b) : (op) == O_PROD ? (a) * (b) : \
     (op) == O_MAX ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))
#define COMBINE_COMPLEX(op, a, b) ((op) == O_SUM ? (a) + (b) : (a) * (b))
/* complex values: the real part as an integer's, an imaginary part too */
#define MAKE_REAL(CT, v) ((CT) (v))
#define MAKE_COMPLEX(CT, v) ((CT) (v) + (CT) ((v) % 3) * (CT) I)

static int counts[] = { 1, 37, 3000, 70000 };
#define NCOUNTS ((int) (sizeof(counts) / sizeof(counts[0])))

#define DEFINE_REDUCE(NM, CT, COMBINE, MAKE) \
static void reduce_##NM(const char *name, MPI_Datatype t, int ops, int rank, int size) \
{ \
    for (int op = 0; op < NOPS; op++) { \
        if (!(ops & (1 << op))) \
            continue; \
        for (int c = 0; c < NCOUNTS; c++) { \
            int n = counts[c]; \
            CT *in = malloc(n * sizeof(CT)), *out = malloc(n * sizeof(CT)); \
            for (long i = 0; i < n; i++) \
                in[i] = MAKE(CT, value(op, i, rank)); \
            for (int coll = 0; coll < 3; coll++) { \
                /* Allreduce; Reduce to the last rank; Scan */ \
                int last = coll == 0 ? size : coll == 1 ? size : rank + 1; \
                const char *what = coll == 0 ? "Allreduce" : coll == 1 ? "Reduce" : "Scan"; \
                memset(out, 0x33, n * sizeof(CT)); \
                if (coll == 0) \
                    MPI_Allreduce(in, out, n, t, mpi_op(op), MPI_COMM_WORLD); \
                else if (coll == 1) \
                    MPI_Reduce(in, out, n, t, mpi_op(op), size - 1, MPI_COMM_WORLD); \
                else \
                    MPI_Scan(in, out, n, t, mpi_op(op), MPI_COMM_WORLD); \
                if (coll == 1 && rank != size - 1) \
                    continue; \
                for (long i = 0; i < n; i++) { \
                    CT e = MAKE(CT, value(op, i, 0)); \
                    for (int r = 1; r < last; r++) \
                        e = COMBINE(op, e, MAKE(CT, value(op, i, r))); \
                    if (memcmp(&e, &out[i], sizeof(CT)) && !(e == out[i])) { \
                        MMC_ERR("%s %s %s of %d: element %ld wrong\n", what, name, \
                                op_names[op], n, i); \
                        break; \
                    } \
                } \
            } \
            free(in); \
            free(out); \
        } \
    } \
}

DEFINE_REDUCE(schar, signed char, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(uchar, unsigned char, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(short, short, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(ushort, unsigned short, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(int, int, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(uint, unsigned, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(long, long, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(ulong, unsigned long, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(llong, long long, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(ullong, unsigned long long, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(i8, int8_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(i16, int16_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(i32, int32_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(i64, int64_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(u8, uint8_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(u16, uint16_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(u32, uint32_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(u64, uint64_t, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(aint, MPI_Aint, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(offset, MPI_Offset, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(count, MPI_Count, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(cbool, bool, COMBINE_INT, MAKE_REAL)
DEFINE_REDUCE(float, float, COMBINE_FLOAT, MAKE_REAL)
DEFINE_REDUCE(double, double, COMBINE_FLOAT, MAKE_REAL)
DEFINE_REDUCE(ldouble, long double, COMBINE_FLOAT, MAKE_REAL)
DEFINE_REDUCE(fcomplex, float _Complex, COMBINE_COMPLEX, MAKE_COMPLEX)
DEFINE_REDUCE(dcomplex, double _Complex, COMBINE_COMPLEX, MAKE_COMPLEX)
DEFINE_REDUCE(ldcomplex, long double _Complex, COMBINE_COMPLEX, MAKE_COMPLEX)

static void reductions(int rank, int size)
{
#define R(NM, T, OPS) reduce_##NM(#T, T, OPS, rank, size)
    R(schar, MPI_SIGNED_CHAR, INTEGER); R(uchar, MPI_UNSIGNED_CHAR, INTEGER);
    R(short, MPI_SHORT, INTEGER); R(ushort, MPI_UNSIGNED_SHORT, INTEGER);
    R(int, MPI_INT, INTEGER); R(uint, MPI_UNSIGNED, INTEGER);
    R(long, MPI_LONG, INTEGER); R(ulong, MPI_UNSIGNED_LONG, INTEGER);
    R(llong, MPI_LONG_LONG, INTEGER); R(ullong, MPI_UNSIGNED_LONG_LONG, INTEGER);
    R(i8, MPI_INT8_T, INTEGER); R(i16, MPI_INT16_T, INTEGER);
    R(i32, MPI_INT32_T, INTEGER); R(i64, MPI_INT64_T, INTEGER);
    R(u8, MPI_UINT8_T, INTEGER); R(u16, MPI_UINT16_T, INTEGER);
    R(u32, MPI_UINT32_T, INTEGER); R(u64, MPI_UINT64_T, INTEGER);
    R(aint, MPI_AINT, MULTI); R(offset, MPI_OFFSET, MULTI); R(count, MPI_COUNT, MULTI);
    R(cbool, MPI_C_BOOL, LOGIC); R(uchar, MPI_BYTE, BITS);
    R(float, MPI_FLOAT, FLOATING); R(double, MPI_DOUBLE, FLOATING);
    R(ldouble, MPI_LONG_DOUBLE, FLOATING);
    R(fcomplex, MPI_C_FLOAT_COMPLEX, COMPLEX); R(fcomplex, MPI_C_COMPLEX, COMPLEX);
    R(dcomplex, MPI_C_DOUBLE_COMPLEX, COMPLEX);
    R(ldcomplex, MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX);
#undef R
}

/* derived types with holes through the collectives that move them */

#define FILL 0x6b

static unsigned char pat(size_t i, int src, int salt)
{
    return (unsigned char) (i * 97 + (i >> 7) * 13 + (size_t) src * 59 + (size_t) salt * 5 + 3);
}

/* a strided vector of ints (holes between blocks) and a struct with holes */
static MPI_Datatype hole_vector(void)
{
    MPI_Datatype t;
    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* the bytes n elements of t at buf hold once the elements of src's
 * pattern buffer (laid out as t) arrive, the rest FILL: by MPI_Pack/Unpack */
static void expect(unsigned char *exp, size_t len, MPI_Datatype t, int n, int src, int salt)
{
    unsigned char *s = malloc(len), *packed;
    int psize, pos = 0, upos = 0;
    for (size_t i = 0; i < len; i++)
        s[i] = pat(i, src, salt);
    MPI_Pack_size(n, t, MPI_COMM_WORLD, &psize);
    packed = malloc(psize + 1);
    MPI_Pack(s, n, t, packed, psize, &pos, MPI_COMM_WORLD);
    memset(exp, FILL, len);
    MPI_Unpack(packed, pos, &upos, exp, n, t, MPI_COMM_WORLD);
    free(packed);
    free(s);
}

static void check_bytes(const unsigned char *got, const unsigned char *exp, size_t len,
                        const char *what, int src)
{
    for (size_t i = 0; i < len; i++)
        if (got[i] != exp[i]) {
            MMC_ERR("%s: the part from rank %d differs at byte %zu (%u, expected %u)\n", what,
                    src, i, got[i], exp[i]);
            return;
        }
}

static void derived(int rank, int size)
{
    MPI_Datatype vec = hole_vector(), st, sst;
    {
        int bl[3] = { 1, 1, 2 };
        MPI_Aint d[3] = { 0, 8, 20 };
        MPI_Datatype ty[3] = { MPI_CHAR, MPI_DOUBLE, MPI_SHORT };
        MPI_Type_create_struct(3, bl, d, ty, &st);
        MPI_Type_create_resized(st, 0, 32, &sst);
        MPI_Type_commit(&sst);
        MPI_Type_free(&st);
    }
    MPI_Datatype types[2] = { vec, sst };
    const char *names[2] = { "vector(3 x 2 int, stride 4)", "struct(char, double, 2 short)" };
    int ns[] = { 1, 500, 20000 };

    for (int ti = 0; ti < 2; ti++) {
        MPI_Datatype t = types[ti];
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        for (int k = 0; k < 3; k++) {
            int n = ns[k];
            size_t len = (size_t) n * ext;
            unsigned char *buf = malloc(len), *exp = malloc(len);
            unsigned char *all = malloc(len * size), *mine = malloc(len);
            char what[160];

            /* Bcast from each root */
            for (int root = 0; root < size; root++) {
                if (rank == root)
                    for (size_t i = 0; i < len; i++)
                        buf[i] = pat(i, root, 1);
                else
                    memset(buf, FILL, len);
                MPI_Bcast(buf, n, t, root, MPI_COMM_WORLD);
                if (rank != root) {
                    expect(exp, len, t, n, root, 1);
                    snprintf(what, sizeof(what), "Bcast of %d %s", n, names[ti]);
                    check_bytes(buf, exp, len, what, root);
                }
            }

            /* Gatherv: rank r's part at the r-th slot from the end */
            for (size_t i = 0; i < len; i++)
                mine[i] = pat(i, rank, 2);
            int *rc = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
            for (int r = 0; r < size; r++) {
                rc[r] = n;
                displs[r] = (size - 1 - r) * n;
            }
            memset(all, FILL, len * size);
            MPI_Gatherv(mine, n, t, all, rc, displs, t, 0, MPI_COMM_WORLD);
            if (rank == 0)
                for (int r = 0; r < size; r++) {
                    expect(exp, len, t, n, r, 2);
                    snprintf(what, sizeof(what), "Gatherv of %d %s", n, names[ti]);
                    check_bytes(all + (size_t) displs[r] * ext, exp, len, what, r);
                }

            /* Alltoallw: n elements of t to every rank, at byte offsets */
            int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
            MPI_Datatype *stypes = malloc(size * sizeof(MPI_Datatype));
            unsigned char *sendall = malloc(len * size);
            for (size_t i = 0; i < len * size; i++)
                sendall[i] = pat(i % len, rank, 3 + (int) (i / len));
            for (int r = 0; r < size; r++) {
                sc[r] = n;
                sd[r] = r * (int) len;
                stypes[r] = t;
            }
            memset(all, FILL, len * size);
            MPI_Alltoallw(sendall, sc, sd, stypes, all, sc, sd, stypes, MPI_COMM_WORLD);
            for (int r = 0; r < size; r++) {
                expect(exp, len, t, n, r, 3 + rank);
                snprintf(what, sizeof(what), "Alltoallw of %d %s", n, names[ti]);
                check_bytes(all + (size_t) r * len, exp, len, what, r);
            }

            /* Neighbor_alltoallw on a ring, periodic from 3 ranks (with 2, left
             * and right would be one process, and which part is which unclear) */
            MPI_Comm ring;
            int dims[1] = { size }, periods[1] = { size > 2 };
            MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
            int left, right;
            MPI_Cart_shift(ring, 0, 1, &left, &right);
            MPI_Aint nd[2] = { 0, (MPI_Aint) len };
            int nc[2] = { n, n };
            MPI_Datatype nt[2] = { t, t };
            memset(all, FILL, 2 * len);
            MPI_Neighbor_alltoallw(sendall, nc, nd, nt, all, nc, nd, nt, ring);
            /* the left neighbour's second part (sent right), the right's first;
             * nothing from MPI_PROC_NULL */
            snprintf(what, sizeof(what), "Neighbor_alltoallw of %d %s", n, names[ti]);
            if (left != MPI_PROC_NULL)
                expect(exp, len, t, n, left, 3 + 1);
            else
                memset(exp, FILL, len);
            check_bytes(all, exp, len, what, left);
            if (right != MPI_PROC_NULL)
                expect(exp, len, t, n, right, 3 + 0);
            else
                memset(exp, FILL, len);
            check_bytes(all + len, exp, len, what, right);
            MPI_Comm_free(&ring);

            free(sc);
            free(sd);
            free(stypes);
            free(sendall);
            free(rc);
            free(displs);
            free(buf);
            free(exp);
            free(all);
            free(mine);
        }
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&sst);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reductions(rank, size);
    derived(rank, size);
    return mmc_finish();
}
