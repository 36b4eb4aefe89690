/*
 * Intra-node bandwidth of two ranks (put them on one node, pinned to two
 * cores), for the CMA single-copy path against the copy path and other MPIs:
 *
 *   shmbw [--sizes a,b,c] [--budget-ms MS] [--window W]
 *
 * Per size, one line:
 *   size=N pp_mbs=B bibw_mbs=B cpu_s_per_gb=C memcpy_mbs=B
 * pp: one-way ping-pong throughput (size / half the round trip); bibw: both
 * ranks keep W Isend/Irecv pairs in flight to each other, total bytes moved
 * per second; cpu_s_per_gb: CPU seconds (user + system, both ranks) per GB
 * moved during bibw; memcpy: a single-thread memcpy of the same size between
 * two buffers on rank 0, the ceiling of a one-copy transfer.  Each figure is
 * the best of three trials sized to the budget.  Received bytes are checked
 * once per size.
 */
#include "bench_common.h"
#include <sys/resource.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* returns the elapsed time; *cpu gets both ranks' CPU seconds */
static double bibw(int rank, char **sbuf, char **rbuf, int w, size_t n, int reps, double *cpu)
{
    MPI_Request rq[2 * 64];
    int other = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    for (int r = 0; r < reps && rank < 2; r++) {
        for (int i = 0; i < w; i++) {
            MPI_Irecv(rbuf[i], (int) n, MPI_BYTE, other, i, MPI_COMM_WORLD, &rq[i]);
            MPI_Isend(sbuf[i], (int) n, MPI_BYTE, other, i, MPI_COMM_WORLD, &rq[w + i]);
        }
        MPI_Waitall(2 * w, rq, MPI_STATUSES_IGNORE);
    }
    double t = MPI_Wtime() - t0, c = cpu_seconds() - c0;
    MPI_Allreduce(&c, cpu, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    int rank, nprocs, w = 8;
    double budget = 0.2;
    size_t sizes[64];
    int nsizes = 0;
    const char *list = "65536,262144,1048576,4194304,16777216,67108864";

    bench_start(&argc, &argv, &rank, &nprocs);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sizes"))
            list = argv[i + 1];
        else if (!strcmp(argv[i], "--budget-ms"))
            budget = atof(argv[i + 1]) / 1e3;
        else if (!strcmp(argv[i], "--window"))
            w = atoi(argv[i + 1]) > 64 ? 64 : atoi(argv[i + 1]);
    }
    for (char *p = (char *) list; *p && nsizes < 64;) {
        sizes[nsizes++] = strtoull(p, &p, 10);
        if (*p == ',')
            p++;
    }
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "shmbw needs 2 ranks on one node\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        char *buf = malloc(n), *ref = malloc(n), *sb[64], *rb[64];
        for (size_t i = 0; i < n; i++)
            ref[i] = (char) (i * 131 + 7);
        for (int i = 0; i < w; i++) {
            sb[i] = malloc(n);
            rb[i] = malloc(n);
            memcpy(sb[i], ref, n);
            memset(rb[i], 0, n);
        }
        /* correctness: a round trip, and one bibw round */
        memcpy(buf, ref, n);
        bench_roundtrips(rank, buf, n, 1);
        double cpu;
        bibw(rank, sb, rb, w, n, 1, &cpu);
        int bad = memcmp(buf, ref, n) != 0;
        for (int i = 0; i < w; i++)
            bad |= memcmp(rb[i], ref, n) != 0;
        /* repetitions from a short trial */
        double t = bench_roundtrips(rank, buf, n, 2) / 2;
        int reps = (int) (budget / (t + 1e-9) / 3);
        reps = reps < 2 ? 2 : reps > 10000 ? 10000 : reps;
        MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
        int breps = reps / w < 2 ? 2 : reps / w;
        double pp = 1e30, bw = 1e30, bwcpu = 0, mc = 1e30;
        for (int trial = 0; trial < 3; trial++) {
            double d = bench_roundtrips(rank, buf, n, reps);
            pp = d < pp ? d : pp;
            d = bibw(rank, sb, rb, w, n, breps, &cpu);
            if (d < bw) {
                bw = d;
                bwcpu = cpu;
            }
            if (rank == 0) {
                double t0 = MPI_Wtime();
                for (int r = 0; r < reps; r++)
                    memcpy(r & 1 ? ref : buf, r & 1 ? buf : ref, n);
                d = MPI_Wtime() - t0;
                mc = d < mc ? d : mc;
            }
        }
        double moved = 2.0 * w * breps * n;
        if (rank == 0) {
            printf("size=%zu pp_mbs=%.1f bibw_mbs=%.1f cpu_s_per_gb=%.3f memcpy_mbs=%.1f%s\n", n,
                   n / (pp / reps / 2) / 1e6, moved / bw / 1e6, bwcpu / (moved / 1e9),
                   n / (mc / reps) / 1e6, bad ? " BAD_DATA" : "");
            fflush(stdout);
        }
        free(buf);
        free(ref);
        for (int i = 0; i < w; i++) {
            free(sb[i]);
            free(rb[i]);
        }
    }
    MPI_Finalize();
    return 0;
}
