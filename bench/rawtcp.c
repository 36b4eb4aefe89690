/*
 * Raw TCP ping-pong with the NetPIPE method, the ceiling ch4:tcp is measured
 * against: the same sizes (regular log-scale steps with +-3 byte
 * perturbations, or a list), repetitions sized to a time budget, the best of
 * three trials, latency = round trip / 2, throughput in Mbit/s.
 *
 *   rawtcp -s [options]                 server (echoes), listens on --port
 *   rawtcp -c HOST [options]            client, prints one line per size:
 *                                       size=N reps=R lat_us=L mbps=B
 *   options: --port P (5555)  --sizes a,b,c  --max BYTES  --budget-ms MS (50)
 *            --sndbuf N --rcvbuf N (0 = kernel autotuning)  --blocking  --cpu N
 *            --stream BYTES   client sends BYTES as fast as it can, the server
 *                             answers one byte at the end: prints mbps (for long
 *                             links, where ping-pong is latency bound)
 *
 * Both sides poll (rawsock.h) unless --blocking.  Data are checked once per size.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "rawsock.h"

static int blocking, sndbuf, rcvbuf;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t sizes[512];
static int nsizes;

static void add(size_t s)
{
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] == s)
            return;
    if (s && nsizes < 512)
        sizes[nsizes++] = s;
}

static int cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *host = NULL, *list = NULL;
    int server = 0, port = 5555, cpu = -1;
    size_t max = 8 << 20, stream = 0;
    double budget = 0.05;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (!strcmp(a, "-s"))
            server = 1;
        else if (!strcmp(a, "--blocking"))
            blocking = 1;
        else if (!strcmp(a, "-c") && ++i)
            host = v;
        else if (!strcmp(a, "--port") && ++i)
            port = atoi(v);
        else if (!strcmp(a, "--sizes") && ++i)
            list = v;
        else if (!strcmp(a, "--max") && ++i)
            max = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--budget-ms") && ++i)
            budget = atof(v) / 1e3;
        else if (!strcmp(a, "--sndbuf") && ++i)
            sndbuf = atoi(v);
        else if (!strcmp(a, "--rcvbuf") && ++i)
            rcvbuf = atoi(v);
        else if (!strcmp(a, "--cpu") && ++i)
            cpu = atoi(v);
        else if (!strcmp(a, "--stream") && ++i)
            stream = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "rawtcp: unknown option %s (see the top of bench/rawtcp.c)\n", a);
            return 2;
        }
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof(set), &set);
    }
    if (list) {
        for (char *p = (char *) list; *p;) {
            add(strtoull(p, &p, 10));
            if (*p == ',')
                p++;
        }
    } else {
        for (size_t b = 1; b <= max; b *= 2)
            for (size_t x = b; x <= b + b / 2 && x <= max; x += b / 2 ? b / 2 : 1) {
                add(x);
                if (x > 6) {
                    add(x - 3);
                    add(x + 3);
                }
            }
    }
    qsort(sizes, nsizes, sizeof(size_t), cmp);

    int fd;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port) };
    if (server) {
        int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        raw_setup(lfd, sndbuf, rcvbuf);
        if (bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) || listen(lfd, 1))
            raw_die("bind/listen");
        fd = accept(lfd, NULL, NULL);
        close(lfd);
    } else {
        struct hostent *he = gethostbyname(host);
        if (!he)
            raw_die("host");
        memcpy(&sa.sin_addr, he->h_addr_list[0], 4);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        raw_setup(fd, sndbuf, rcvbuf);
        for (int tries = 0; connect(fd, (struct sockaddr *) &sa, sizeof(sa)); tries++) {
            if (tries == 100)
                raw_die("connect");
            close(fd);
            usleep(50000);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            raw_setup(fd, sndbuf, rcvbuf);
        }
    }
    if (fd < 0)
        raw_die("socket");
    raw_setup(fd, sndbuf, rcvbuf);

    /* the client tells the server what to do: sizes, reps, or a stream */
    uint64_t ctl[2];
    size_t biggest = stream ? (1 << 20) : sizes[nsizes - 1];
    char *buf = malloc(biggest), *ref = malloc(biggest);
    for (size_t i = 0; i < biggest; i++)
        ref[i] = (char) (i * 131 + 7);
    if (server) {
        for (;;) {
            ssize_t r = recv(fd, ctl, sizeof(ctl), MSG_WAITALL);
            if (r != sizeof(ctl) || ctl[0] == 0)
                break;
            if (ctl[1] == UINT64_MAX) { /* stream of ctl[0] bytes, then one byte back */
                for (uint64_t left = ctl[0]; left;) {
                    size_t n = left < biggest ? left : biggest;
                    raw_xfer(fd, buf, n, 1, blocking);
                    left -= n;
                }
                raw_xfer(fd, buf, 1, 0, blocking);
                continue;
            }
            if (ctl[0] > biggest)
                buf = realloc(buf, biggest = ctl[0]);
            for (uint64_t k = 0; k < ctl[1]; k++) {
                raw_xfer(fd, buf, ctl[0], 1, blocking);
                raw_xfer(fd, buf, ctl[0], 0, blocking);
            }
        }
        return 0;
    }
    if (stream) {
        ctl[0] = stream;
        ctl[1] = UINT64_MAX;
        raw_xfer(fd, ctl, sizeof(ctl), 0, blocking);
        double t0 = now();
        for (size_t left = stream; left;) {
            size_t n = left < biggest ? left : biggest;
            raw_xfer(fd, ref, n, 0, blocking);
            left -= n;
        }
        raw_xfer(fd, buf, 1, 1, blocking);
        printf("stream=%zu mbps=%.1f\n", stream, stream * 8 / (now() - t0) / 1e6);
    } else {
        for (int s = 0; s < nsizes; s++) {
            size_t n = sizes[s];
            /* check once, then calibrate to the budget */
            ctl[0] = n;
            ctl[1] = 1;
            memset(buf, 0, n);
            raw_xfer(fd, ctl, sizeof(ctl), 0, blocking);
            raw_xfer(fd, ref, n, 0, blocking);
            raw_xfer(fd, buf, n, 1, blocking);
            int bad = memcmp(buf, ref, n) != 0;
            ctl[1] = 2;
            double t0 = now();
            raw_xfer(fd, ctl, sizeof(ctl), 0, blocking);
            for (int k = 0; k < 2; k++) {
                raw_xfer(fd, buf, n, 0, blocking);
                raw_xfer(fd, buf, n, 1, blocking);
            }
            double t = (now() - t0) / 2;
            uint64_t reps = (uint64_t) (budget / (t + 1e-9) / 3);
            reps = reps < 2 ? 2 : reps > 20000 ? 20000 : reps;
            double best = 1e30;
            for (int trial = 0; trial < 3; trial++) {
                ctl[1] = reps;
                raw_xfer(fd, ctl, sizeof(ctl), 0, blocking);
                t0 = now();
                for (uint64_t k = 0; k < reps; k++) {
                    raw_xfer(fd, buf, n, 0, blocking);
                    raw_xfer(fd, buf, n, 1, blocking);
                }
                double d = now() - t0;
                best = d < best ? d : best;
            }
            double lat = best / reps / 2;
            printf("size=%zu reps=%llu lat_us=%.3f mbps=%.1f%s\n", n, (unsigned long long) reps,
                   lat * 1e6, n * 8 / lat / 1e6, bad ? " BAD_DATA" : "");
            fflush(stdout);
        }
    }
    ctl[0] = 0;
    raw_xfer(fd, ctl, sizeof(ctl), 0, blocking);
    close(fd);
    return 0;
}
