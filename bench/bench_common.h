/*
 * Shared by the mpich-multichannel benchmarks (header-only).
 */
#ifndef BENCH_COMMON_H_INCLUDED
#define BENCH_COMMON_H_INCLUDED

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mmc_mpi.h"

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

/* sum of the n smallest of v[0..len) (sorts v) */
static inline double bench_sum_smallest(double *v, int len, int n)
{
    double sum = 0;
    qsort(v, len, sizeof(double), bench_cmp_double);
    for (int i = 0; i < n; i++)
        sum += v[i];
    return sum;
}

/* Rank 0 on the first CPU, everyone else on the second: rank 0 is in every
 * measured pair and its partner never shares its core, whatever the scheduler
 * would choose; idle ranks sleep on the partner's core. */
static inline void bench_pin(int rank)
{
    mmc_pin_cpu(rank == 0 ? 0 : 1);
}

/* MPI_Init, rank and size, and the rank pinned (bench_pin) */
static inline void bench_start(int *argc, char ***argv, int *rank, int *nprocs)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nprocs);
    bench_pin(*rank);
}

/* reps round trips of n bytes between ranks 0 and 1 (others only join the
 * barrier); returns rank 0's elapsed seconds */
static inline double bench_roundtrips(int rank, void *buf, size_t n, int reps)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        if (rank == 0) {
            MPI_Send(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int) n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/* MPI_Init, then rank 0's partners: both benchmarks need one on rank 0's node
 * and one on another node. */
static inline void bench_init(int *argc, char ***argv, const char *name, int *rank,
                              int *intra, int *inter)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    bench_pin(*rank);
    mmc_partners(intra, inter);
    if (*intra < 0 || *inter < 0) {
        if (*rank == 0)
            fprintf(stderr, "%s: needs 2 ranks on rank 0's node and one on another\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

#endif /* BENCH_COMMON_H_INCLUDED */
