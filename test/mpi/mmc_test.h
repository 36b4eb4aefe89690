/*
 * Helpers shared by the mpich-multichannel MPI tests (header-only).
 * Every test checks the bytes it receives and ends with MPICH's test-suite
 * convention: rank 0 prints " No Errors" when no rank found an error.
 */
#ifndef MMC_TEST_H_INCLUDED
#define MMC_TEST_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int mmc_errs;

#define MMC_ERR(...) do { fprintf(stderr, __VA_ARGS__); mmc_errs++; } while (0)

/* Byte i of a message identified by (tag, src, size): catches shifted,
 * truncated, stale and swapped buffers. */
static inline unsigned char mmc_byte(int tag, int src, size_t size, size_t i)
{
    return (unsigned char) (i * 131 + (i >> 8) * 7 + (size_t) tag * 29 + (size_t) src * 17 + size);
}

static inline void mmc_fill(unsigned char *buf, size_t size, int tag, int src)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = mmc_byte(tag, src, size, i);
}

/* Returns the number of wrong bytes (reports the first). */
static inline size_t mmc_check(const unsigned char *buf, size_t size, int tag, int src,
                               const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < size; i++) {
        if (buf[i] != mmc_byte(tag, src, size, i)) {
            if (!bad)
                MMC_ERR("%s: size %zu from %d tag %d: byte %zu is %u, expected %u\n", what,
                        size, src, tag, i, buf[i], mmc_byte(tag, src, size, i));
            bad++;
        }
    }
    return bad;
}

/* Wait without busy-polling: these machines have 2 cores, and a rank that
 * only waits must not take the CPU from the ranks being measured or tested. */
static inline void mmc_sleepy_wait(MPI_Request * req)
{
    int flag = 0;
    struct timespec ts = { 0, 100000 };
    for (;;) {
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return;
        nanosleep(&ts, NULL);
    }
}

static inline void mmc_sleepy_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    mmc_sleepy_wait(&req);
}

/* node[r] = lowest world rank on the same node as r */
static inline int *mmc_node_map(void)
{
    int size, rank, leader;
    MPI_Comm shm;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shm);
    MPI_Comm_free(&shm);
    int *node = malloc(sizeof(int) * size);
    MPI_Allgather(&leader, 1, MPI_INT, node, 1, MPI_INT, MPI_COMM_WORLD);
    return node;
}

/* Rank 0's intra-node partner and its first partner on another node; the
 * tests need both, so a layout without them is an error, not a pass. */
static inline void mmc_partners(const int *node, int size, int *intra, int *inter)
{
    *intra = *inter = -1;
    for (int r = 1; r < size; r++) {
        if (node[r] == node[0] && *intra < 0)
            *intra = r;
        if (node[r] != node[0] && *inter < 0)
            *inter = r;
    }
}

static inline int mmc_finish(void)
{
    int rank, total;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&mmc_errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf(" Found %d errors\n", total);
        else
            printf(" No Errors\n");
    }
    MPI_Finalize();
    return 0;
}

#endif /* MMC_TEST_H_INCLUDED */
