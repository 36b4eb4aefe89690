/*
 * Shared by the mpich-multichannel benchmarks (header-only).
 *
 * These machines have 2 cores and MPICH busy-polls, so at most two ranks may
 * poll at a time: a rank with nothing to do waits for its next turn with
 * MPI_Test and a short sleep (bench_idle_wait), never with a blocking call.
 */
#ifndef BENCH_COMMON_H_INCLUDED
#define BENCH_COMMON_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC is one clock for every process of the machine, network
 * namespaces included, so simulated hosts can compare timestamps. */
static inline double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline void bench_idle_wait(MPI_Request * req)
{
    int flag = 0;
    struct timespec ts = { 0, 50000 };
    for (;;) {
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return;
        nanosleep(&ts, NULL);
    }
}

static inline void bench_idle_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    bench_idle_wait(&req);
}

/* node[r] = lowest world rank on r's node */
static inline int *bench_node_map(void)
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

/* Rank 0's first partner on its own node and on another node (-1: none). */
static inline void bench_partners(int *intra, int *inter)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *node = bench_node_map();
    *intra = *inter = -1;
    for (int r = 1; r < size; r++) {
        if (node[r] == node[0] && *intra < 0)
            *intra = r;
        if (node[r] != node[0] && *inter < 0)
            *inter = r;
    }
    free(node);
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n)
{
    qsort(v, n, sizeof(double), bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* BENCH_COMMON_H_INCLUDED */
