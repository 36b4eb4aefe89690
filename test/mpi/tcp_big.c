/*
 * One message larger than 2 GiB between two nodes (64-bit lengths on the
 * wire, payload reads resumed across many calls), every byte checked, in
 * both directions: a contiguous buffer of count 2049 x 1 MiB.
 */
#include "mmc_test.h"
#include <stdint.h>

#define CHUNK (1 << 20)
#define NCHUNK 2049             /* 2 GiB + 1 MiB */

static unsigned char big_byte(size_t i, int dir)
{
    return (unsigned char) ((i * 2654435761u) >> 13) ^ (unsigned char) (i >> 30) ^ (unsigned char) dir;
}

int main(int argc, char **argv)
{
    int rank, intra, peer;
    MPI_Datatype mb;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mmc_partners(&intra, &peer);
    if (peer < 0) {
        if (rank == 0)
            MMC_ERR("tcp_big needs ranks on two nodes\n");
        return mmc_finish();
    }
    MPI_Type_contiguous(CHUNK, MPI_BYTE, &mb);
    MPI_Type_commit(&mb);
    size_t n = (size_t) CHUNK * NCHUNK;
    if (rank == 0 || rank == peer) {
        unsigned char *buf = malloc(n);
        if (!buf) {
            MMC_ERR("rank %d: cannot allocate %zu bytes\n", rank, n);
        } else {
            for (int dir = 0; dir < 2; dir++) {
                int sender = dir == 0 ? 0 : peer;
                if (rank == sender) {
                    for (size_t i = 0; i < n; i++)
                        buf[i] = big_byte(i, dir);
                    MPI_Send(buf, NCHUNK, mb, rank == 0 ? peer : 0, dir, MPI_COMM_WORLD);
                } else {
                    MPI_Status st;
                    MPI_Count count;
                    memset(buf, 0, n);
                    MPI_Recv(buf, NCHUNK, mb, sender, dir, MPI_COMM_WORLD, &st);
                    MPI_Get_elements_x(&st, MPI_BYTE, &count);
                    if ((size_t) count != n)
                        MMC_ERR("received %lld bytes, expected %zu\n", (long long) count, n);
                    size_t bad = 0;
                    for (size_t i = 0; i < n; i++)
                        if (buf[i] != big_byte(i, dir) && !bad++)
                            MMC_ERR("byte %zu of the 2 GiB message is wrong\n", i);
                    if (bad)
                        MMC_ERR("%zu wrong bytes\n", bad);
                }
            }
            free(buf);
        }
    }
    MPI_Type_free(&mb);
    mmc_barrier(MPI_COMM_WORLD, rank != 0 && rank != peer);
    return mmc_finish();
}
