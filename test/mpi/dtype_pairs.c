/*
 * MPI's predefined pair types (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
 * MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT: the types MINLOC and MAXLOC
 * results travel in; most have a hole between the value and the index)
 * around a ring, at counts that take every intra-node path (the fast boxes,
 * MPICH's queue, CMA above its threshold) and ch4:tcp's eager and rendezvous
 * paths across hosts, with every send mode, received into the same type and
 * into a user struct of the same signature with another layout.  Each
 * element's value and index are checked, and so is every byte of the
 * receive buffer outside them (the holes and the rest of the buffer keep
 * their fill), and MPI_Get_elements counts two elements a pair.  Last, MINLOC and MAXLOC over each type.  MPICH 4.0.2
 * crashed in its IPC send path on every send of a pair type that has a hole
 * (a predefined type has no contents to read: doc/mpich-fixes.md).
 */
#include "mmc_test.h"
#include <stddef.h>

#define FILL 0xa5

enum kind { K_FLOAT, K_DOUBLE, K_LONG, K_INT, K_SHORT, K_LDOUBLE };

struct pair {
    const char *name;
    MPI_Datatype type, value_type;
    enum kind kind;
    size_t value_size, index_off;       /* the index's offset in the C struct */
};

#define PAIR(T, VT, K, CT) \
    { #T, T, VT, K, sizeof(CT), offsetof(struct { CT v; int i; }, i) }

static const struct pair pairs[] = {
    PAIR(MPI_FLOAT_INT, MPI_FLOAT, K_FLOAT, float),
    PAIR(MPI_DOUBLE_INT, MPI_DOUBLE, K_DOUBLE, double),
    PAIR(MPI_LONG_INT, MPI_LONG, K_LONG, long),
    PAIR(MPI_2INT, MPI_INT, K_INT, int),
    PAIR(MPI_SHORT_INT, MPI_SHORT, K_SHORT, short),
    PAIR(MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, K_LDOUBLE, long double),
};
#define NPAIRS (sizeof(pairs) / sizeof(pairs[0]))

/* 0 and 1, a box, MPICH's queue, past ch4:tcp's eager limit, past CMA's
 * threshold (4 MiB on 4.x) for every type */
static const int counts[] = { 0, 1, 4, 1000, 70000, 600000 };
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))
#define MAXCOUNT 600000

/* the value of element i from src, small enough for every kind */
static long value_of(int src, int mode, long i)
{
    return (i * 7 + src * 131 + mode * 17) % 30011 - 15000;
}

static int index_of(int src, long i)
{
    return (int) (i * 3 + src) ^ 0x5a5a;
}

static void put_value(unsigned char *p, enum kind k, long v)
{
    switch (k) {
        case K_FLOAT: { float x = v + 0.25f; memcpy(p, &x, sizeof(x)); break; }
        case K_DOUBLE: { double x = v + 0.125; memcpy(p, &x, sizeof(x)); break; }
        case K_LONG: { long x = v * 100003L; memcpy(p, &x, sizeof(x)); break; }
        case K_INT: { int x = (int) v; memcpy(p, &x, sizeof(x)); break; }
        case K_SHORT: { short x = (short) v; memcpy(p, &x, sizeof(x)); break; }
        case K_LDOUBLE: { long double x = v + 0.0625L; memcpy(p, &x, sizeof(x)); break; }
    }
}

static int value_is(const unsigned char *p, enum kind k, long v)
{
    switch (k) {
        case K_FLOAT: { float x; memcpy(&x, p, sizeof(x)); return x == v + 0.25f; }
        case K_DOUBLE: { double x; memcpy(&x, p, sizeof(x)); return x == v + 0.125; }
        case K_LONG: { long x; memcpy(&x, p, sizeof(x)); return x == v * 100003L; }
        case K_INT: { int x; memcpy(&x, p, sizeof(x)); return x == (int) v; }
        case K_SHORT: { short x; memcpy(&x, p, sizeof(x)); return x == (short) v; }
        case K_LDOUBLE: { long double x; memcpy(&x, p, sizeof(x)); return x == v + 0.0625L; }
    }
    return 0;
}

/* Where a layout of the pair's signature (a value, then an int) keeps each
 * field of an element, and the element's extent */
struct layout {
    MPI_Datatype type;          /* the pair type, or a struct of the same signature */
    MPI_Aint value_off, index_off, extent;
};

static void fill_elements(unsigned char *buf, const struct pair *pr, const struct layout *l,
                          int count, int src, int mode)
{
    memset(buf, FILL, (size_t) count * l->extent);
    for (long i = 0; i < count; i++) {
        int idx = index_of(src, i);
        put_value(buf + i * l->extent + l->value_off, pr->kind, value_of(src, mode, i));
        memcpy(buf + i * l->extent + l->index_off, &idx, sizeof(idx));
    }
}

/* checks count elements and that nothing else of the buffer (len bytes) changed */
static void check_elements(const unsigned char *buf, size_t len, const struct pair *pr,
                           const struct layout *l, int count, int src, int mode,
                           const char *what)
{
    int bad = 0;
    for (long i = 0; i < count && bad < 3; i++) {
        const unsigned char *e = buf + i * l->extent;
        int idx;
        memcpy(&idx, e + l->index_off, sizeof(idx));
        if (!value_is(e + l->value_off, pr->kind, value_of(src, mode, i)) ||
            idx != index_of(src, i)) {
            MMC_ERR("%s %s %s count %d from %d: element %ld wrong (index %d, expected %d)\n",
                    pr->name, mmc_mode_names[mode], what, count, src, i, idx, index_of(src, i));
            bad++;
        }
    }
    for (size_t b = 0; b < len && bad < 3; b++) {
        MPI_Aint in_elem = (MPI_Aint) (b % l->extent);
        int data = b < (size_t) count * l->extent &&
            ((in_elem >= l->value_off && in_elem < l->value_off + (MPI_Aint) pr->value_size) ||
             (in_elem >= l->index_off && in_elem < l->index_off + (MPI_Aint) sizeof(int)));
        if (!data && buf[b] != FILL) {
            MMC_ERR("%s %s %s count %d from %d: byte %zu outside the data was written\n",
                    pr->name, mmc_mode_names[mode], what, count, src, b);
            bad++;
        }
    }
}

static void exchange(const struct pair *pr, const struct layout *sl, const struct layout *rl,
                     int count, int mode, int rank, int size, unsigned char *sbuf,
                     unsigned char *rbuf, size_t rlen, const char *what)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, tag = mode * 100 + 1;
    MPI_Request req[2];

    fill_elements(sbuf, pr, sl, count, rank, mode);
    memset(rbuf, FILL, rlen);
    if (mode == MMC_SENDRECV) {
        MPI_Status st;
        MPI_Sendrecv(sbuf, count, sl->type, next, tag, rbuf, count, rl->type, prev, tag,
                     MPI_COMM_WORLD, &st);
        int got, elements;
        MPI_Count elements_x;
        MPI_Get_count(&st, rl->type, &got);
        if (got != count)
            MMC_ERR("%s sendrecv %s: count %d received as %d\n", pr->name, what, count, got);
        /* a value and an index each: MPICH divided by zero on a type whose
         * basic elements have one size but not one type (MPI_FLOAT_INT, a
         * struct of a float and an int) */
        MPI_Get_elements(&st, rl->type, &elements);
        MPI_Get_elements_x(&st, rl->type, &elements_x);
        if (elements != 2 * count || elements_x != 2 * count)
            MMC_ERR("%s sendrecv %s: %d elements (%lld by MPI_Get_elements_x), expected %d\n",
                    pr->name, what, elements, (long long) elements_x, 2 * count);
    } else if (mode == MMC_PSEND) {
        MPI_Status st;
        mmc_partitioned(sbuf, count, sl->type, rbuf, count, rl->type, next, prev, tag,
                        MPI_COMM_WORLD, &st);
    } else {
        MPI_Irecv(rbuf, count, rl->type, prev, tag, MPI_COMM_WORLD, &req[0]);
        mmc_start_send(mode, sbuf, count, sl->type, next, tag, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        if (mode == MMC_SEND_INIT)
            MPI_Request_free(&req[1]);
    }
    check_elements(rbuf, rlen, pr, rl, count, prev, mode, what);
}

/* MPI_Get_elements of a struct of two pairs and an int, for the bytes of one
 * and of a pair and a half: MPICH counted a pair type inside a derived type
 * as no element (and ch4:ofi then failed such receives as a mismatch) */
static void struct_elements(const struct pair *pr)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(pr->type, &lb, &ext);
    int bl[2] = { 2, 1 }, size, value_size;
    MPI_Aint disp[2] = { 0, 2 * ext };
    MPI_Datatype types[2] = { pr->type, MPI_INT }, st_type;
    MPI_Type_create_struct(2, bl, disp, types, &st_type);
    MPI_Type_commit(&st_type);
    MPI_Type_size(st_type, &size);
    MPI_Type_size(pr->value_type, &value_size);
    MPI_Status st;
    int whole = -1, part = -1;
    MPI_Status_set_elements(&st, MPI_BYTE, size);
    MPI_Get_elements(&st, st_type, &whole);
    /* the first pair and the value of the second */
    MPI_Status_set_elements(&st, MPI_BYTE, 2 * value_size + 4);
    MPI_Get_elements(&st, st_type, &part);
    if (whole != 5 || part != 3)
        MMC_ERR("%s: struct of 2 pairs and an int: %d elements in %d bytes (expected 5), "
                "%d in %d (expected 3)\n", pr->name, whole, size, part,
                2 * value_size + 4);
    MPI_Type_free(&st_type);
}

/* MINLOC and MAXLOC of every rank's 5 elements: value i*(rank+1) mod 7 - 3,
 * index rank*10+i; ties go to the lower index */
static void minmaxloc(const struct pair *pr, int rank, int size)
{
    unsigned char in[5 * 32], out[5 * 32];
    MPI_Aint lb, ext;
    struct layout l;

    MPI_Type_get_extent(pr->type, &lb, &ext);
    l = (struct layout) { pr->type, 0, (MPI_Aint) pr->index_off, ext };
    for (int op = 0; op < 2; op++) {
        memset(in, 0, sizeof(in));
        for (long i = 0; i < 5; i++) {
            int idx = rank * 10 + (int) i;
            put_value(in + i * ext, pr->kind, (i * (rank + 1)) % 7 - 3);
            memcpy(in + i * ext + l.index_off, &idx, sizeof(idx));
        }
        MPI_Allreduce(in, out, 5, pr->type, op ? MPI_MAXLOC : MPI_MINLOC, MPI_COMM_WORLD);
        for (long i = 0; i < 5; i++) {
            long best = 0;
            int best_idx = -1;
            for (int r = 0; r < size; r++) {
                long v = (i * (r + 1)) % 7 - 3;
                if (best_idx < 0 || (op ? v > best : v < best)) {
                    best = v;
                    best_idx = r * 10 + (int) i;
                }
            }
            int idx;
            memcpy(&idx, out + i * ext + l.index_off, sizeof(idx));
            if (!value_is(out + i * ext, pr->kind, best) || idx != best_idx)
                MMC_ERR("%s %s: element %ld has index %d, expected value %ld at %d\n",
                        pr->name, op ? "MAXLOC" : "MINLOC", i, idx, best, best_idx);
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the widest layout: 64 bytes an element */
    size_t len = (size_t) MAXCOUNT * 64;
    unsigned char *sbuf = malloc(len), *rbuf = malloc(len);
    /* (buffered sends stop below 70000 elements) */
    int bsize = 1000 * 64 + MPI_BSEND_OVERHEAD;
    void *battach = malloc(bsize);
    MPI_Buffer_attach(battach, bsize);

    for (size_t p = 0; p < NPAIRS; p++) {
        const struct pair *pr = &pairs[p];
        MPI_Aint lb, ext;
        MPI_Type_get_extent(pr->type, &lb, &ext);
        struct layout same = { pr->type, 0, (MPI_Aint) pr->index_off, ext };

        /* the same signature with the index 8 bytes past the value's end
         * and room after it: another layout, to receive into */
        struct layout other;
        int bl[2] = { 1, 1 };
        MPI_Aint disp[2] = { 0, ((MPI_Aint) pr->value_size + 8 + 3) & ~(MPI_Aint) 3 };
        MPI_Datatype types[2] = { pr->value_type, MPI_INT }, tmp;
        MPI_Type_create_struct(2, bl, disp, types, &tmp);
        MPI_Type_create_resized(tmp, 0, disp[1] + 4 + 16, &other.type);
        MPI_Type_commit(&other.type);
        MPI_Type_free(&tmp);
        other.value_off = 0;
        other.index_off = disp[1];
        other.extent = disp[1] + 4 + 16;

        /* and a dup of the pair type, on the sender's side */
        struct layout dup = same;
        MPI_Type_dup(pr->type, &dup.type);

        for (size_t c = 0; c < NCOUNTS; c++) {
            int count = counts[c];
            for (int mode = 0; mode < MMC_BLOCKING; mode++) {
                /* the large counts with three modes each: enough for every path */
                if (count >= 70000 && mode != MMC_ISEND && mode != MMC_ISSEND &&
                    mode != MMC_PSEND)
                    continue;
                exchange(pr, &same, &same, count, mode, rank, size, sbuf, rbuf,
                         (size_t) count * ext + 64, "into the same type");
                exchange(pr, &dup, &other, count, mode, rank, size, sbuf, rbuf,
                         (size_t) count * other.extent + 64, "from a dup into another layout");
            }
        }
        minmaxloc(pr, rank, size);
        struct_elements(pr);
        MPI_Type_free(&other.type);
        MPI_Type_free(&dup.type);
    }

    MPI_Buffer_detach(&battach, &bsize);
    free(battach);
    free(sbuf);
    free(rbuf);
    return mmc_finish();
}
