/*
 * The floor under any wait that sleeps in the kernel: what waking a process
 * asleep in poll(2) costs on this machine, no MPI.  Two processes pinned to
 * CPUs 0 and 1 share a Unix datagram socket pair (the wake-up the shared
 * memory of ours uses, src/poll/poll_wake.c):
 *
 *   wakeraw PAUSE_MS N
 *
 * N rounds: the parent sleeps PAUSE_MS, writes the time (CLOCK_MONOTONIC) into
 * 8 bytes and sends them; the child, asleep in poll(2), takes the time when
 * they arrive.  Prints "wake_us=MEDIAN q1_us=Q1 q3_us=Q3 check=ok"; a datagram
 * that is not a later time stamp than the one before fails it.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof(s), &s)) {
        perror("wakeraw: sched_setaffinity");
        exit(1);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static int sleeper(int fd, int n)
{
    double *lat = malloc(sizeof(double) * n);
    uint64_t stamp, prev = 0;
    pin(1);
    for (int i = 0; i < n; i++) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, 10000) != 1 || recv(fd, &stamp, 8, 0) != 8) {
            fprintf(stderr, "wakeraw: no datagram within 10 s\n");
            return 1;
        }
        uint64_t t = now_ns();
        if (stamp <= prev || stamp > t) {
            fprintf(stderr, "wakeraw: round %d: not a later time stamp\n", i);
            return 1;
        }
        prev = stamp;
        lat[i] = (t - stamp) / 1e3;
    }
    qsort(lat, n, sizeof(double), cmp_double);
    printf("mode=wakeraw rounds=%d wake_us=%.2f q1_us=%.2f q3_us=%.2f check=ok\n", n, lat[n / 2],
           lat[n / 4], lat[3 * n / 4]);
    return 0;
}

int main(int argc, char **argv)
{
    int sv[2], status;
    if (argc != 3 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: wakeraw PAUSE_MS N\n");
        return 2;
    }
    double pause = atof(argv[1]);
    int n = atoi(argv[2]);
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
        perror("wakeraw: socketpair");
        return 1;
    }
    pid_t child = fork();
    if (child == 0)
        return sleeper(sv[1], n);
    pin(0);
    for (int i = 0; i < n; i++) {
        long ns = (long) (pause * 1e6);
        struct timespec ts = { ns / 1000000000, ns % 1000000000 };
        nanosleep(&ts, NULL);
        uint64_t stamp = now_ns();
        if (send(sv[0], &stamp, 8, 0) != 8) {
            perror("wakeraw: send");
            return 1;
        }
    }
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
