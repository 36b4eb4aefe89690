/*
 * What a blocking wait costs when it has nothing to do, and what waking it
 * costs (doc/arbiter.md, *A wait that sleeps*).  Plain MPI, no project
 * headers, so that Open MPI and Debian's MPICH run the same program:
 *
 *   idlewait idle SECONDS       rank 0 sleeps SECONDS, then sends 8 bytes to
 *                               every other rank, which waited in MPI_Recv all
 *                               along; each prints the CPU time its process
 *                               used in that wait (getrusage: every thread)
 *   idlewait wake PAUSE_MS N    N rounds: rank 0 sleeps PAUSE_MS, writes the
 *                               time (CLOCK_MONOTONIC, shared by every process
 *                               of this machine and its network namespaces)
 *                               into 8 bytes and sends them to rank 1, which
 *                               waited in MPI_Recv; rank 1 takes the time on
 *                               arrival and answers with 1 byte.  The one-way
 *                               latency to a waiting receiver: the median and
 *                               quartiles of the N rounds
 *   idlewait allreduce N        N 8-byte MPI_Allreduce (sum) on every rank;
 *                               microseconds per call
 *   idlewait halo SIZE N        N rounds of a ring halo exchange: each rank
 *                               sends SIZE bytes to both neighbours
 *                               (Isend/Irecv, Waitall); microseconds per round
 *   idlewait rma N              N rounds of a passive-target epoch: every rank
 *                               MPI_Win_lock_all, adds 1 to the next rank's
 *                               counter (MPI_Fetch_and_op, whose result must
 *                               be the round), MPI_Win_unlock_all and
 *                               MPI_Barrier; microseconds per round (each
 *                               counter read at the end under a lock of itself)
 *
 * IDLEWAIT_PIN=1 binds rank r to CPU r mod (CPUs online), whatever the
 * launcher, so every MPI is pinned alike.
 *
 * Every received byte is checked.  Rank 0 (rank 1 for wake) prints one line
 * ending in check=ok; a wrong byte ends the run with MPI_Abort.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int rank, nprocs;

static void die(const char *what)
{
    fprintf(stderr, "idlewait: rank %d: %s\n", rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void pause_ms(double ms)
{
    long ns = (long) (ms * 1e6);
    struct timespec ts = { ns / 1000000000, ns % 1000000000 };
    nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static unsigned char pat(size_t i, int src, int dst, int round)
{
    return (unsigned char) (i * 131u + (unsigned) src * 17u + (unsigned) dst * 7u + round);
}

static void idle(double seconds)
{
    uint64_t msg = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        pause_ms(seconds * 1e3);
        for (int p = 1; p < nprocs; p++) {
            msg = 0x1d1e0000u + (uint64_t) p;
            MPI_Send(&msg, 8, MPI_BYTE, p, 1, MPI_COMM_WORLD);
        }
    } else {
        double c0 = cpu_s();
        uint64_t t0 = now_ns();
        MPI_Recv(&msg, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double wall = (now_ns() - t0) / 1e9, cpu = cpu_s() - c0;
        if (msg != 0x1d1e0000u + (uint64_t) rank)
            die("wrong bytes after the idle wait");
        printf("rank=%d mode=idle wall_s=%.3f cpu_s=%.4f cpu_pct=%.3f check=ok\n", rank, wall,
               cpu, 100 * cpu / wall);
    }
}

static void wake(double pause, int n)
{
    double *lat = malloc(sizeof(double) * n);
    uint64_t stamp, prev = 0;
    char ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            pause_ms(pause);
            stamp = now_ns();
            MPI_Send(&stamp, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (ack != (char) i)
                die("wrong acknowledgement");
        } else if (rank == 1) {
            MPI_Recv(&stamp, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            uint64_t t = now_ns();
            /* a stamp is a time of this machine, later than the one before */
            if (stamp <= prev || stamp > t)
                die("wrong bytes: not a time stamp of the sender");
            prev = stamp;
            lat[i] = (t - stamp) / 1e3;
            ack = (char) i;
            MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    if (rank == 1) {
        qsort(lat, n, sizeof(double), cmp_double);
        printf("rank=1 mode=wake pause_ms=%g rounds=%d wake_us=%.2f q1_us=%.2f q3_us=%.2f "
               "check=ok\n", pause, n, lat[n / 2], lat[n / 4], lat[3 * n / 4]);
    }
    free(lat);
}

static void allreduce(int n)
{
    int64_t in = rank + 1, out = 0, want = (int64_t) nprocs * (nprocs + 1) / 2;
    for (int i = 0; i < 10; i++)
        MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (out != want)
            die("wrong Allreduce result");
    }
    double us = (MPI_Wtime() - t0) / n * 1e6;
    if (rank == 0)
        printf("mode=allreduce np=%d reps=%d us=%.3f check=ok\n", nprocs, n, us);
}

static void halo(size_t size, int n)
{
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    unsigned char *s = malloc(size), *rl = malloc(size), *rr = malloc(size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Request rq[4];
        for (size_t k = 0; k < size; k++)
            s[k] = pat(k, rank, 0, i);
        MPI_Irecv(rl, (int) size, MPI_BYTE, left, 4, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(rr, (int) size, MPI_BYTE, right, 4, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(s, (int) size, MPI_BYTE, left, 4, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(s, (int) size, MPI_BYTE, right, 4, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        for (size_t k = 0; k < size; k++)
            if (rl[k] != pat(k, left, 0, i) || rr[k] != pat(k, right, 0, i))
                die("wrong halo bytes");
    }
    double us = (MPI_Wtime() - t0) / n * 1e6;
    if (rank == 0)
        printf("mode=halo np=%d size=%zu reps=%d us=%.3f check=ok\n", nprocs, size, n, us);
    free(s);
    free(rl);
    free(rr);
}

static void rma(int n)
{
    int64_t *mine, one = 1, prev, now;
    MPI_Win win;
    int next = (rank + 1) % nprocs;
    MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mine,
                     &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    *mine = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        MPI_Win_lock_all(0, win);
        MPI_Fetch_and_op(&one, &prev, MPI_INT64_T, next, 0, MPI_SUM, win);
        MPI_Win_unlock_all(win);
        if (prev != i)
            die("wrong MPI_Fetch_and_op result");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double us = (MPI_Wtime() - t0) / n * 1e6;
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    now = *mine;
    MPI_Win_unlock(rank, win);
    if (now != n)
        die("wrong counter after the epochs");
    if (rank == 0)
        printf("mode=rma np=%d reps=%d us=%.3f check=ok\n", nprocs, n, us);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (getenv("IDLEWAIT_PIN")) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(rank % sysconf(_SC_NPROCESSORS_ONLN), &set);
        if (sched_setaffinity(0, sizeof(set), &set))
            die("sched_setaffinity failed");
    }
    const char *mode = argc > 1 ? argv[1] : "";
    if (nprocs < 2)
        die("needs at least 2 ranks");
    if (!strcmp(mode, "idle") && argc == 3)
        idle(atof(argv[2]));
    else if (!strcmp(mode, "wake") && argc == 4)
        wake(atof(argv[2]), atoi(argv[3]));
    else if (!strcmp(mode, "allreduce") && argc == 3)
        allreduce(atoi(argv[2]));
    else if (!strcmp(mode, "halo") && argc == 4)
        halo((size_t) atol(argv[2]), atoi(argv[3]));
    else if (!strcmp(mode, "rma") && argc == 3)
        rma(atoi(argv[2]));
    else
        die("usage: idlewait idle SECONDS | wake PAUSE_MS N | allreduce N | halo SIZE N | rma N");
    MPI_Finalize();
    return 0;
}
