/*
 * A tiny, MPI-neutral sanity check of a launch: latency and bandwidth between
 * rank pairs (0,1), (2,3), ...  Used to verify that a peer MPI (Open MPI via
 * bench/ompi-run) really talks over the link under test before its figures
 * are compared with ours.  Plain MPI, no project headers:
 *
 *   /usr/bin/mpicc.openmpi -O2 -o pingpong bench/pingpong.c
 *   pingpong pp SIZE REPS      ping-pong; latency = round trip / 2,
 *                              bandwidth = SIZE / latency
 *   pingpong bw SIZE REPS [W]  the even rank sends windows of W (default 16)
 *                              Isends, the odd rank posts W Irecvs and answers
 *                              each window with a 1-byte ack; bandwidth =
 *                              W * SIZE * REPS / time (unidirectional)
 *
 * Every pair runs at once.  Each timed message's received length is checked
 * (MPI_Get_count), and one untimed exchange per direction checks the contents
 * against a pattern that depends on sender, receiver and size.  Each pair's
 * even rank prints one line:
 *   pair=0,1 hosts=A,B mode=pp size=8 reps=1000 lat_us=L MBps=B check=ok
 * (MBps = 10^6 bytes/s).  Exits 1 (after MPI_Abort) on a wrong length or
 * byte.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 10
#define TAG 7

static unsigned char pat(size_t i, int src, int dst, size_t size)
{
    return (unsigned char) (i * 131u + (unsigned) src * 17u + (unsigned) dst * 7u + size);
}

static void fill(unsigned char *b, size_t n, int src, int dst)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, src, dst, n);
}

static void die(const char *what, int rank)
{
    fprintf(stderr, "pingpong: rank %d: %s\n", rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void recv_checked(void *buf, int n, int src, int rank)
{
    MPI_Status st;
    int got;
    MPI_Recv(buf, n, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != n)
        die("received length differs from sent length", rank);
}

/* One untimed exchange each way; contents must match the pattern. */
static void check_contents(unsigned char *buf, size_t size, int rank, int peer)
{
    for (int dir = 0; dir < 2; dir++) {
        int src = (dir == 0) == (rank % 2 == 0) ? rank : peer;
        if (src == rank) {
            fill(buf, size, rank, peer);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, size);
            recv_checked(buf, (int) size, peer, rank);
            for (size_t i = 0; i < size; i++)
                if (buf[i] != pat(i, peer, rank, size)) {
                    char m[128];
                    snprintf(m, sizeof m, "byte %zu of %zu from rank %d is wrong", i, size, peer);
                    die(m, rank);
                }
        }
    }
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4 || (strcmp(argv[1], "pp") && strcmp(argv[1], "bw"))) {
        if (rank == 0)
            fprintf(stderr, "usage: pingpong pp|bw SIZE REPS [WINDOW]\n");
        MPI_Finalize();
        return 2;
    }
    if (np % 2)
        die("needs an even number of ranks", rank);
    int bw = !strcmp(argv[1], "bw");
    size_t size = strtoull(argv[2], NULL, 10);
    int reps = atoi(argv[3]);
    int win = argc > 4 ? atoi(argv[4]) : 16;
    if (size < 1 || size > (1u << 30) || reps < 1 || win < 1 || win > 1024)
        die("bad SIZE, REPS or WINDOW", rank);
    int peer = rank ^ 1, lead = rank % 2 == 0;
    size_t nbuf = bw ? (size_t) win : 1;
    unsigned char *buf = malloc(size * nbuf), ack = 0;
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t) win);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t) win);
    if (!buf || !req || !st)
        die("out of memory", rank);
    fill(buf, size * nbuf, rank, peer);

    char host[MPI_MAX_PROCESSOR_NAME], phost[MPI_MAX_PROCESSOR_NAME];
    int hl;
    MPI_Get_processor_name(host, &hl);
    MPI_Sendrecv(host, sizeof host, MPI_CHAR, peer, 1, phost, sizeof phost, MPI_CHAR, peer, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    check_contents(buf, size, rank, peer);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0;
    for (int it = 0; it < WARMUP + reps; it++) {
        if (it == WARMUP)
            t0 = MPI_Wtime();
        if (!bw) {
            if (lead) {
                MPI_Send(buf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
                recv_checked(buf, (int) size, peer, rank);
            } else {
                recv_checked(buf, (int) size, peer, rank);
                MPI_Send(buf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
            }
        } else if (lead) {
            for (int w = 0; w < win; w++)
                MPI_Isend(buf + (size_t) w * size, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD,
                          &req[w]);
            MPI_Waitall(win, req, st);
            recv_checked(&ack, 1, peer, rank);
        } else {
            for (int w = 0; w < win; w++)
                MPI_Irecv(buf + (size_t) w * size, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD,
                          &req[w]);
            MPI_Waitall(win, req, st);
            for (int w = 0; w < win; w++) {
                int got;
                MPI_Get_count(&st[w], MPI_BYTE, &got);
                if (got != (int) size)
                    die("received length differs from sent length", rank);
            }
            MPI_Send(&ack, 1, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    check_contents(buf, size, rank, peer);

    if (lead) {
        double lat_us = bw ? 0 : t / reps / 2 * 1e6;
        double mbps = bw ? (double) size * win * reps / t / 1e6 : size / lat_us;
        char line[512];
        int n = snprintf(line, sizeof line, "pair=%d,%d hosts=%s,%s cpu=%d mode=%s size=%zu reps=%d",
                         rank, peer, host, phost, sched_getcpu(), argv[1], size, reps);
        if (bw)
            snprintf(line + n, sizeof line - n, " window=%d MBps=%.1f check=ok", win, mbps);
        else
            snprintf(line + n, sizeof line - n, " lat_us=%.2f MBps=%.1f check=ok", lat_us, mbps);
        puts(line);
        fflush(stdout);
    }
    free(buf);
    free(req);
    free(st);
    MPI_Finalize();
    return 0;
}
