/*
 * What a ch4:tcp connection costs a rank: every rank counts its open file
 * descriptors (/proc/self/fd) and its resident memory (/proc/self/statm),
 * then exchanges one message with every other rank at once (every pair
 * connects, the all-to-all's first round), counts again, and exchanges once
 * more (steady state).  Rank 0 prints, over the ranks, the descriptors and
 * KiB added per remote peer (min / median / max), the time of the first
 * exchange (connect and trust handshake with every peer at once) and of the
 * second, and checks every received byte.
 */
#include "bench_common.h"
#include <dirent.h>
#include <unistd.h>

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent * e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1;       /* the directory itself */
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double exchange_all(int rank, int n, int *bad)
{
    int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
    MPI_Request *rq = malloc(2 * n * sizeof(MPI_Request));
    MPI_Status *st = malloc(2 * n * sizeof(MPI_Status));
    double t0 = MPI_Wtime();
    for (int p = 0; p < n; p++) {
        out[p] = rank * 100000 + p;
        in[p] = -1;
        MPI_Irecv(&in[p], 1, MPI_INT, p, 7, MPI_COMM_WORLD, &rq[p]);
        MPI_Isend(&out[p], 1, MPI_INT, p, 7, MPI_COMM_WORLD, &rq[n + p]);
    }
    MPI_Waitall(2 * n, rq, st);
    double t = MPI_Wtime() - t0;
    for (int p = 0; p < n; p++)
        *bad += in[p] != p * 100000 + rank;
    free(out);
    free(in);
    free(rq);
    free(st);
    return t;
}

static void stats(const double *v, int n, double *lo, double *med, double *hi)
{
    double *c = malloc(n * sizeof(double));
    memcpy(c, v, n * sizeof(double));
    *med = bench_median(c, n);
    *lo = c[0];
    *hi = c[n - 1];
    free(c);
}

int main(int argc, char **argv)
{
    int rank, n, bad = 0, local;
    MPI_Comm node;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int fd0 = count_fds();
    long kib0 = rss_kib();
    double t_first = exchange_all(rank, n, &bad);
    int fd1 = count_fds();
    long kib1 = rss_kib();
    double t_second = exchange_all(rank, n, &bad);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    int remote = n - local;
    double mine[4] = { remote ? (double) (fd1 - fd0) / remote : 0,
        remote ? (double) (kib1 - kib0) / remote : 0, t_first * 1e3, t_second * 1e3
    };
    double *all = rank == 0 ? malloc(4 * n * sizeof(double)) : NULL;
    int total_bad = 0;
    MPI_Gather(mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const char *what[4] = { "fds_per_remote_peer", "kib_per_remote_peer", "first_ms",
            "second_ms"
        };
        printf("ranks=%d remote_peers_per_rank=%d\n", n, remote);
        for (int k = 0; k < 4; k++) {
            double *v = malloc(n * sizeof(double)), lo, med, hi;
            for (int r = 0; r < n; r++)
                v[r] = all[4 * r + k];
            stats(v, n, &lo, &med, &hi);
            printf("%s min=%.2f median=%.2f max=%.2f\n", what[k], lo, med, hi);
            free(v);
        }
        printf("check=%s\n", total_bad ? "BAD_DATA" : "ok");
    }
    MPI_Finalize();
    return 0;
}
