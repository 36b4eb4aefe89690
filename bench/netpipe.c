/*
 * NetPIPE-method MPI ping-pong between rank 0 and rank 1 (put them on two
 * hosts): message sizes at regular intervals on a log scale, each with
 * perturbations of -3 and +3 bytes, repetitions per point sized to a time
 * budget, latency = round trip / 2, throughput in Mbit/s.  Received bytes
 * are checked once per point.
 *
 *   netpipe [--sizes a,b,c] [--max BYTES] [--budget-ms MS] [--perturb N]
 *
 * One line per point: size=N reps=R lat_us=L mbps=B (the best of three
 * trials of R round trips, as NetPIPE reports).
 */
#include "bench_common.h"
#include <stdint.h>

static size_t sizes[512];
static int nsizes;

static void add_size(size_t s)
{
    if (s == 0 || nsizes == 512)
        return;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] == s)
            return;
    sizes[nsizes++] = s;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return (x > y) - (x < y);
}

static double roundtrips(int rank, unsigned char *buf, size_t n, int reps)
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

int main(int argc, char **argv)
{
    int rank, nprocs, perturb = 3;
    size_t max = 8 << 20;
    double budget = 0.05;
    const char *list = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    bench_pin(rank);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sizes"))
            list = argv[i + 1];
        else if (!strcmp(argv[i], "--max"))
            max = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--budget-ms"))
            budget = atof(argv[i + 1]) / 1e3;
        else if (!strcmp(argv[i], "--perturb"))
            perturb = atoi(argv[i + 1]);
    }
    if (nprocs < 2) {
        fprintf(stderr, "netpipe needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (list) {
        for (char *p = (char *) list; *p;) {
            add_size(strtoull(p, &p, 10));
            if (*p == ',')
                p++;
        }
    } else {
        for (size_t base = 1; base <= max; base *= 2) {
            size_t bases[2] = { base, base + base / 2 };
            for (int b = 0; b < 2; b++) {
                if (bases[b] > max)
                    continue;
                add_size(bases[b]);
                if (bases[b] > (size_t) perturb * 2) {
                    add_size(bases[b] - perturb);
                    add_size(bases[b] + perturb);
                }
            }
        }
    }
    qsort(sizes, nsizes, sizeof(size_t), cmp_size);
    size_t biggest = sizes[nsizes - 1];
    unsigned char *buf = malloc(biggest), *ref = malloc(biggest);
    for (size_t i = 0; i < biggest; i++)
        ref[i] = (unsigned char) (i * 131 + 7);

    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        /* correctness of the point: rank 1 echoes, rank 0 compares */
        memcpy(buf, ref, n);
        roundtrips(rank, buf, n, 1);
        int bad = rank == 0 && memcmp(buf, ref, n) != 0;
        /* calibrate repetitions to the budget, from a short trial */
        double t = roundtrips(rank, buf, n, 2);
        int reps = (int) (budget / (t / 2 + 1e-9) / 3);
        reps = reps < 2 ? 2 : reps > 20000 ? 20000 : reps;
        MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
        double best = 1e30;
        for (int trial = 0; trial < 3; trial++) {
            double d = roundtrips(rank, buf, n, reps);
            MPI_Bcast(&d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (d < best)
                best = d;
        }
        if (rank == 0) {
            double lat = best / reps / 2;
            printf("size=%zu reps=%d lat_us=%.3f mbps=%.1f%s\n", n, reps, lat * 1e6,
                   n * 8 / lat / 1e6, bad ? " BAD_DATA" : "");
            fflush(stdout);
        }
    }
    free(buf);
    free(ref);
    MPI_Finalize();
    return 0;
}
