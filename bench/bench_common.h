/*
 * Shared by the mpich-multichannel benchmarks (header-only).
 */
#ifndef BENCH_COMMON_H_INCLUDED
#define BENCH_COMMON_H_INCLUDED

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

/* MPI_Init, then rank 0's partners: both benchmarks need one on rank 0's node
 * and one on another node. */
static inline void bench_init(int *argc, char ***argv, const char *name, int *rank,
                              int *intra, int *inter)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    mmc_partners(intra, inter);
    if (*intra < 0 || *inter < 0) {
        if (*rank == 0)
            fprintf(stderr, "%s: needs 2 ranks on rank 0's node and one on another\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

#endif /* BENCH_COMMON_H_INCLUDED */
