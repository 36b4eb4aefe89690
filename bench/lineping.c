/*
 * The intra-node ceiling of an 8-byte ping-pong: two processes, pinned to
 * two CPUs, pass 8 bytes back and forth through shared memory, one cache
 * line each way.  The writer stores the payload, then a sequence word in the
 * same line with release order; the reader spins on the sequence with
 * acquire loads, checks the payload and answers on the other line.  No MPI:
 * what any MPI's shared-memory path can at best reach on this machine
 * (bench/run-shm-bench prints it beside the contenders' 8-byte latency).
 *
 *   lineping [CPU_A CPU_B]     (default 0 1)
 *
 * Prints one line, the best of 5 trials of about 20 ms:
 *   lineping cpus=A,B lat_us=L       (one way: round trip / 2)
 * Exits 1 when a payload arrives wrong.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRIALS 5

typedef struct {
    _Alignas(64) uint64_t payload;
    _Atomic uint64_t seq;
} line_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof(s), &s) != 0) {
        perror("lineping: sched_setaffinity");
        exit(2);
    }
}

static void put(line_t * l, uint64_t k)
{
    l->payload = k * 0x9E3779B97F4A7C15u;
    atomic_store_explicit(&l->seq, k, memory_order_release);
}

/* waits for message k on l; 0 when its payload is right */
static int get(line_t * l, uint64_t k)
{
    while (atomic_load_explicit(&l->seq, memory_order_acquire) != k);
    return l->payload != k * 0x9E3779B97F4A7C15u;
}

int main(int argc, char **argv)
{
    int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    line_t *ping = mmap(NULL, 2 * sizeof(line_t), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ping == MAP_FAILED) {
        perror("lineping: mmap");
        return 2;
    }
    line_t *pong = ping + 1;
    /* the child answers every message until one with a zero payload */
    pid_t child = fork();
    if (child == 0) {
        pin(b);
        for (uint64_t k = 1;; k++) {
            if (get(ping, k)) {
                if (ping->payload == 0)
                    _exit(0);
                _exit(1);
            }
            put(pong, k);
        }
    }
    pin(a);
    uint64_t k = 0;
    int bad = 0;
    long n = 1000;
    double best = 1e30;
    for (int trial = -1; trial < TRIALS && !bad; trial++) {
        double t0 = now();
        for (long i = 0; i < n && !bad; i++) {
            k++;
            put(ping, k);
            bad = get(pong, k);
        }
        double t = now() - t0;
        if (trial < 0)          /* calibration: about 20 ms a trial */
            n = (long) (0.02 / (t / n + 1e-12));
        else if (t / n < best)
            best = t / n;
    }
    /* a zero payload ends the child */
    k++;
    ping->payload = 0;
    atomic_store_explicit(&ping->seq, k, memory_order_release);
    int st = 0;
    waitpid(child, &st, 0);
    if (bad || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "lineping: a payload arrived wrong\n");
        return 1;
    }
    printf("lineping cpus=%d,%d lat_us=%.4f\n", a, b, best / 2 * 1e6);
    return 0;
}
