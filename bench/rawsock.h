/*
 * Raw TCP ping-pong pieces shared by bench/rawtcp.c and bench/netpipe.c
 * (header-only).  Both sides poll with MSG_DONTWAIT unless blocking is set, as
 * an MPI library does: a blocking read pays the scheduler's wake-up on every
 * message and is not a fair ceiling for a polling MPI.
 */
#ifndef BENCH_RAWSOCK_H_INCLUDED
#define BENCH_RAWSOCK_H_INCLUDED

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

static inline void raw_die(const char *what)
{
    perror(what);
    exit(1);
}

static inline void raw_xfer(int fd, void *buf, size_t n, int recv_side, int blocking)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = recv_side ? recv(fd, (char *) buf + done, n - done, blocking ? 0 : MSG_DONTWAIT)
            : send(fd, (char *) buf + done, n - done, MSG_NOSIGNAL | (blocking ? 0 : MSG_DONTWAIT));
        if (r > 0)
            done += r;
        else if (r == 0)
            raw_die("peer closed");
        else if (errno != EAGAIN && errno != EINTR)
            raw_die(recv_side ? "recv" : "send");
    }
}

/* buffer sizes (0 = kernel autotuning) before listen/connect, and TCP_NODELAY */
static inline void raw_setup(int fd, int sndbuf, int rcvbuf)
{
    int one = 1;
    if (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)))
        raw_die("SO_SNDBUF");
    if (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
        raw_die("SO_RCVBUF");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

#endif /* BENCH_RAWSOCK_H_INCLUDED */
