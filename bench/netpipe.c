/*
 * NetPIPE-method MPI ping-pong between rank 0 and rank 1 (put them on two
 * hosts): message sizes at regular intervals on a log scale, each with
 * perturbations of -3 and +3 bytes, repetitions per point sized to a time
 * budget, latency = round trip / 2, throughput in Mbit/s.  Received bytes
 * are checked once per point.
 *
 *   netpipe [--sizes a,b,c] [--max BYTES] [--budget-ms MS] [--perturb N]
 *           [--vs-raw RANK1_ADDR [--raw-buf BYTES[,BYTES2]]]
 *
 * One line per point: size=N reps=R lat_us=L mbps=B (the best of three
 * trials of R round trips, as NetPIPE reports).
 *
 * --vs-raw: the same two processes also open a plain TCP connection (rank 1
 * listens on RANK1_ADDR, buffers of --raw-buf bytes, 0 = autotuning) and
 * alternate MPI and raw trials at every point, adding raw_lat_us=L
 * raw_mbps=B: the ratio of the two is measured on the same cores in the same
 * fraction of a second, which separate runs on a noisy VM cannot give.  A
 * second size opens a second connection, reported as raw2_mbps=B (e.g. small
 * fixed buffers against autotuning in the same processes).
 */
#include "bench_common.h"
#include "rawsock.h"
#include <arpa/inet.h>
#include <stdint.h>
#include <unistd.h>

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

static double raw_roundtrips(int rank, int fd, unsigned char *buf, size_t n, int reps)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        raw_xfer(fd, buf, n, rank == 1, 0);
        raw_xfer(fd, buf, n, rank == 0, 0);
    }
    return MPI_Wtime() - t0;
}

/* rank 1 listens on an ephemeral port and sends it to rank 0, which connects */
static int raw_connect(int rank, const char *addr, int bufsize)
{
    struct sockaddr_in sa = {.sin_family = AF_INET };
    socklen_t len = sizeof(sa);
    int port = 0, fd = socket(AF_INET, SOCK_STREAM, 0);
    raw_setup(fd, bufsize, bufsize);
    if (rank == 1) {
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) || listen(fd, 1) ||
            getsockname(fd, (struct sockaddr *) &sa, &len))
            raw_die("raw listen");
        port = ntohs(sa.sin_port);
        MPI_Send(&port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        int c = accept(fd, NULL, NULL);
        close(fd);
        fd = c;
    } else {
        MPI_Recv(&port, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sa.sin_port = htons(port);
        if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 ||
            connect(fd, (struct sockaddr *) &sa, sizeof(sa)))
            raw_die("raw connect");
    }
    if (fd < 0)
        raw_die("raw accept");
    raw_setup(fd, bufsize, bufsize);
    return fd;
}

int main(int argc, char **argv)
{
    int rank, nprocs, perturb = 3;
    size_t max = 8 << 20;
    double budget = 0.05;
    const char *list = NULL, *raw_addr = NULL;
    int raw_buf[2] = { 0, -1 }, fd[2] = { -1, -1 };

    bench_start(&argc, &argv, &rank, &nprocs);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sizes"))
            list = argv[i + 1];
        else if (!strcmp(argv[i], "--max"))
            max = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--budget-ms"))
            budget = atof(argv[i + 1]) / 1e3;
        else if (!strcmp(argv[i], "--perturb"))
            perturb = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--vs-raw"))
            raw_addr = argv[i + 1];
        else if (!strcmp(argv[i], "--raw-buf"))
            sscanf(argv[i + 1], "%d,%d", &raw_buf[0], &raw_buf[1]);
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
    for (int k = 0; k < 2; k++)
        if (raw_addr && rank < 2 && raw_buf[k] >= 0)
            fd[k] = raw_connect(rank, raw_addr, raw_buf[k]);
    size_t biggest = sizes[nsizes - 1];
    unsigned char *buf = malloc(biggest), *ref = malloc(biggest);
    for (size_t i = 0; i < biggest; i++)
        ref[i] = (unsigned char) (i * 131 + 7);

    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        /* correctness of the point: rank 1 echoes, rank 0 compares */
        memcpy(buf, ref, n);
        bench_roundtrips(rank, buf, n, 1);
        int bad = rank == 0 && memcmp(buf, ref, n) != 0;
        for (int k = 0; k < 2; k++) {
            if (fd[k] < 0)
                continue;
            memcpy(buf, ref, n);
            raw_roundtrips(rank, fd[k], buf, n, 1);
            bad |= rank == 0 && memcmp(buf, ref, n) != 0;
        }
        /* calibrate repetitions to the budget, from a short trial */
        double t = bench_roundtrips(rank, buf, n, 2);
        int reps = (int) (budget / (t / 2 + 1e-9) / 3);
        reps = reps < 2 ? 2 : reps > 20000 ? 20000 : reps;
        MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
        double best = 1e30, raw_best[2] = { 1e30, 1e30 };
        for (int trial = 0; trial < 3; trial++) {
            double d = bench_roundtrips(rank, buf, n, reps);
            if (d < best)
                best = d;
            for (int k = 0; k < 2; k++)
                if (fd[k] >= 0 && (d = raw_roundtrips(rank, fd[k], buf, n, reps)) < raw_best[k])
                    raw_best[k] = d;
        }
        if (rank == 0) {
            double lat = best / reps / 2;
            printf("size=%zu reps=%d lat_us=%.3f mbps=%.1f", n, reps, lat * 1e6, n * 8 / lat / 1e6);
            if (fd[0] >= 0)
                printf(" raw_lat_us=%.3f raw_mbps=%.1f", raw_best[0] / reps / 2 * 1e6,
                       n * 8 / (raw_best[0] / reps / 2) / 1e6);
            if (fd[1] >= 0)
                printf(" raw2_mbps=%.1f", n * 8 / (raw_best[1] / reps / 2) / 1e6);
            printf("%s\n", bad ? " BAD_DATA" : "");
            fflush(stdout);
        }
    }
    for (int k = 0; k < 2; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    free(buf);
    free(ref);
    MPI_Finalize();
    return 0;
}
