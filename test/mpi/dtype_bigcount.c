/*
 * Counts past 2^31 through MPI 4.0's large-count calls, between 2 ranks:
 *   - rank 0 to rank 1, MPI_Send_c / MPI_Recv_c of 2^31 + 7 MPI_BYTE;
 *   - rank 1 to rank 0, MPI_Isend_c of 2^31 + 8 MPI_BYTE into MPI_Irecv_c of
 *     one hvector of two blocks with a 64-byte hole between them (a type
 *     whose size is past 2^31 elements).
 * Every byte is checked, and so are the hole and the margins around each
 * buffer; MPI_Get_count_c and MPI_Get_elements_c must give the counts.  A
 * size field of 32 bits anywhere on the path (a wire header, a CMA read that
 * the kernel cuts at 2 GiB, an int in the datatype engine) truncates or
 * corrupts one of them.  Needs about 2.2 GB of memory a rank.
 */
#include "mmc_test.h"

#define FILL 0x3c
#define MARGIN 64
#define HOLE 64

static const MPI_Count n_contig = ((MPI_Count) 1 << 31) + 7;
static const MPI_Count n_vector = ((MPI_Count) 1 << 31) + 8;

static void report(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    MMC_ERR("%s: %s\n", what, msg);
}

static void check_fill(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != FILL) {
            MMC_ERR("%s: byte %zu written (%u)\n", what, i, p[i]);
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size, err;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size != 2) {
        if (rank == 0)
            MMC_ERR("dtype_bigcount needs 2 ranks, not %d\n", size);
        return mmc_finish();
    }

    size_t half = (size_t) n_vector / 2, len = (size_t) n_vector + HOLE + 2 * MARGIN;
    unsigned char *mem = malloc(len), *buf = mem + MARGIN;
    if (!mem) {
        MMC_ERR("rank %d: no memory for %zu bytes\n", rank, len);
        return mmc_finish();
    }
    MPI_Status st;
    MPI_Count got;

    /* contiguous, blocking */
    if (rank == 0) {
        mmc_fill(buf, (size_t) n_contig, 1, 0);
        err = MPI_Send_c(buf, n_contig, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        if (err)
            report(err, "MPI_Send_c of 2^31 + 7 bytes");
    } else {
        memset(mem, FILL, len);
        err = MPI_Recv_c(buf, n_contig, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
        if (err) {
            report(err, "MPI_Recv_c of 2^31 + 7 bytes");
        } else {
            MPI_Get_count_c(&st, MPI_BYTE, &got);
            if (got != n_contig)
                MMC_ERR("MPI_Recv_c of 2^31 + 7 bytes: count %lld\n", (long long) got);
            mmc_check(buf, (size_t) n_contig, 1, 0, "2^31 + 7 bytes, contiguous");
            check_fill(mem, MARGIN, "2^31 + 7 bytes, margin before");
            check_fill(buf + n_contig, len - MARGIN - (size_t) n_contig,
                       "2^31 + 7 bytes, after the data");
        }
    }

    /* into a type of more than 2^31 elements with a hole, nonblocking */
    MPI_Datatype vec;
    MPI_Type_create_hvector_c(2, (MPI_Count) half, (MPI_Count) (half + HOLE), MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    MPI_Request req;
    if (rank == 1) {
        mmc_fill(buf, (size_t) n_vector, 2, 1);
        MPI_Isend_c(buf, n_vector, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req);
        err = MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (err)
            report(err, "MPI_Isend_c of 2^31 + 8 bytes");
    } else {
        memset(mem, FILL, len);
        MPI_Irecv_c(buf, 1, vec, 1, 2, MPI_COMM_WORLD, &req);
        err = MPI_Wait(&req, &st);
        if (err) {
            report(err, "MPI_Irecv_c of 2^31 + 8 bytes into an hvector");
        } else {
            MPI_Get_count_c(&st, vec, &got);
            MPI_Count elements;
            MPI_Get_elements_c(&st, vec, &elements);
            if (got != 1 || elements != n_vector)
                MMC_ERR("2^31 + 8 bytes into an hvector: count %lld, elements %lld\n",
                        (long long) got, (long long) elements);
            /* the message's byte i lies at i, or past the hole */
            size_t bad = 0;
            for (size_t i = 0; i < (size_t) n_vector; i++) {
                unsigned char b = buf[i < half ? i : i + HOLE];
                if (b != mmc_byte(2, 1, (size_t) n_vector, i) && !bad++)
                    MMC_ERR("2^31 + 8 bytes into an hvector: byte %zu of the message is %u, "
                            "expected %u\n", i, b, mmc_byte(2, 1, (size_t) n_vector, i));
            }
            check_fill(buf + half, HOLE, "2^31 + 8 bytes into an hvector, the hole");
            check_fill(mem, MARGIN, "2^31 + 8 bytes into an hvector, margin before");
            check_fill(buf + n_vector + HOLE, MARGIN,
                       "2^31 + 8 bytes into an hvector, margin after");
        }
    }
    MPI_Type_free(&vec);
    free(mem);
    if (rank == 0)
        printf("dtype_bigcount: 2^31 + 7 bytes 0 -> 1, 2^31 + 8 bytes 1 -> 0 into an hvector\n");
    return mmc_finish();
}
