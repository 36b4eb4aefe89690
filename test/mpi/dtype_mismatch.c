/*
 * A receive whose datatype does not fit what arrives: 100001 bytes (and 13
 * bytes, and 3000001) into a strided layout of doubles, at sizes that go
 * through a box, eagerly and by rendezvous or CMA; sent standard and
 * synchronous; the receive posted before the message comes and after it
 * has arrived (unexpected).  The receive fails with MPI_ERR_TYPE, within the
 * test's time limit, a synchronous sender completes, and the message sent
 * after it on the same pair arrives intact (the stream stays in step:
 * ch4:tcp keeps a split element only while more of it can come, doc/tcp.md).
 * Whole elements more than the receive has room for are MPI_ERR_TRUNCATE,
 * not a mismatch (ch4:ucx tells the two apart on completion).
 */
#include "mmc_test.h"

enum { POSTED_FIRST, ARRIVED_FIRST };

/* a message of len bytes into count strided doubles, and the class it must fail with */
struct mcase {
    int len, count, expect;
};

static void receive(unsigned char *buf, const struct mcase *m, MPI_Datatype strided, int tag,
                    int order, const char *what)
{
    int count = m->count, cls = MPI_SUCCESS, err;
    MPI_Status st;
    if (order == POSTED_FIRST) {
        MPI_Request r;
        MPI_Irecv(buf, count, strided, 0, tag, MPI_COMM_WORLD, &r);
        MPI_Send(NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD);    /* go */
        err = MPI_Wait(&r, &st);
    } else {
        MPI_Probe(0, tag, MPI_COMM_WORLD, &st);
        err = MPI_Recv(buf, count, strided, 0, tag, MPI_COMM_WORLD, &st);
    }
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &cls);
    if (cls != m->expect)
        MMC_ERR("%d bytes into %d doubles, %s: error class %d, expected %s (%d)\n", m->len,
                count, what, cls, m->expect == MPI_ERR_TYPE ? "MPI_ERR_TYPE" : "MPI_ERR_TRUNCATE",
                m->expect);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* room for every byte, the last element cut; then whole elements, too many */
    static const struct mcase cases[] = {
        {13, 2, MPI_ERR_TYPE}, {100001, 12501, MPI_ERR_TYPE}, {3000001, 375001, MPI_ERR_TYPE},
        {40, 2, MPI_ERR_TRUNCATE}, {100000, 1000, MPI_ERR_TRUNCATE},
        {3000000, 1000, MPI_ERR_TRUNCATE}
    };
    const int ncases = sizeof(cases) / sizeof(cases[0]);
    static const char *orders[] = { "posted first", "arrived first" };
    MPI_Datatype strided;
    MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &strided);
    MPI_Type_commit(&strided);

    for (int k = 0; k < ncases; k++)
        for (int order = POSTED_FIRST; order <= ARRIVED_FIRST; order++)
            for (int sync = 0; sync < 2; sync++) {
                int len = cases[k].len, tag = 4 * k + 2 * order + sync;
                char what[64];
                snprintf(what, sizeof what, "%s, %s", sync ? "MPI_Ssend" : "MPI_Send",
                         orders[order]);
                unsigned char *buf = malloc(2 * (size_t) len + 64), *after = malloc(1000);
                if (rank == 0) {
                    if (order == POSTED_FIRST)
                        MPI_Recv(NULL, 0, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    mmc_fill(buf, len, tag, 0);
                    int err = (sync ? MPI_Ssend : MPI_Send) (buf, len, MPI_BYTE, 1, tag,
                                                             MPI_COMM_WORLD);
                    if (err != MPI_SUCCESS)
                        MMC_ERR("the sender of %d bytes, %s, failed\n", len, what);
                    mmc_fill(after, 1000, 100 + tag, 0);
                    MPI_Send(after, 1000, MPI_BYTE, 1, 100 + tag, MPI_COMM_WORLD);
                } else if (rank == 1) {
                    receive(buf, &cases[k], strided, tag, order, what);
                    memset(after, 0, 1000);
                    if (MPI_Recv(after, 1000, MPI_BYTE, 0, 100 + tag, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
                        MMC_ERR("the message after %d bytes into doubles, %s, failed\n", len,
                                what);
                    else
                        mmc_check(after, 1000, 100 + tag, 0, "the message after a mismatch");
                }
                free(buf);
                free(after);
            }
    MPI_Type_free(&strided);
    return mmc_finish();
}
