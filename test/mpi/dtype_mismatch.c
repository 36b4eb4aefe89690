/*
 * A receive whose datatype does not fit what arrives: 100001 bytes (and 13
 * bytes) into a strided layout of doubles, at sizes that go eagerly and by
 * rendezvous.  The receive fails with MPI_ERR_TYPE, within the test's time
 * limit, and the message sent after it on the same pair arrives intact (the
 * stream stays in step: ch4:tcp keeps a split element only while more of it
 * can come, doc/tcp.md).
 */
#include "mmc_test.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    static const int lens[] = { 13, 100001, 3000001 };
    MPI_Datatype strided;
    MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &strided);
    MPI_Type_commit(&strided);

    for (int k = 0; k < 3; k++) {
        int len = lens[k];
        unsigned char *buf = malloc(2 * (size_t) len + 64), *after = malloc(1000);
        if (rank == 0) {
            mmc_fill(buf, len, k, 0);
            MPI_Send(buf, len, MPI_BYTE, 1, k, MPI_COMM_WORLD);
            mmc_fill(after, 1000, 100 + k, 0);
            MPI_Send(after, 1000, MPI_BYTE, 1, 100 + k, MPI_COMM_WORLD);
        } else if (rank == 1) {
            /* room for every byte: count * 8 >= len */
            int count = (len + 7) / 8, cls = MPI_SUCCESS;
            int err = MPI_Recv(buf, count, strided, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                MPI_Error_class(err, &cls);
            if (cls != MPI_ERR_TYPE)
                MMC_ERR("%d bytes into doubles: error class %d, expected MPI_ERR_TYPE (%d)\n",
                        len, cls, MPI_ERR_TYPE);
            memset(after, 0, 1000);
            err = MPI_Recv(after, 1000, MPI_BYTE, 0, 100 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                MMC_ERR("the message after %d bytes into doubles failed\n", len);
            else
                mmc_check(after, 1000, 100 + k, 0, "the message after a mismatch");
        }
        free(buf);
        free(after);
    }
    MPI_Type_free(&strided);
    return mmc_finish();
}
