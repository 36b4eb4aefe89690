/*
 * ch4:tcp against a stranger at a rank's port: a process outside the job
 * (forked from a rank, it uses no MPI and none of the rank's state) that can
 * reach the ports, as every user of a cluster can.  The scenario is argv[1];
 * MPIR_CVAR_CH4_TCP_PORT_RANGE fixes the ports, and rank 0 finds its own
 * there (the range's first unless another socket had that one), so nothing
 * of the job but rank 0's address is exchanged before the stranger acts.
 *
 *   impostor   4 ranks, 2 hosts x 2.  The stranger, beside ranks 2 and 3,
 *              captures the bytes of the first connection between ranks 1
 *              and 2 (a raw packet socket: it sees every byte of that
 *              handshake and of the first message), then: claims to be rank 2
 *              at rank 0 with a guessed proof, replays the captured HELLO and
 *              message to the rank it was meant for and to rank 0, sends the
 *              message with no HELLO, and stays silent on one connection.  Each time it must get the
 *              rank's challenge and then nothing (no verdict, no data) before
 *              the rank closes the connection.  Then rank 2 (whom the stranger
 *              claimed to be) and rank 0 exchange their first messages, and
 *              every byte is checked.
 *   flood      2 ranks on 2 hosts.  The stranger, beside rank 0, opens 1000
 *              connections to rank 0's port, which lowers its RLIMIT_NOFILE
 *              to 64, and holds them while rank 1 makes its first connection
 *              to rank 0 and the two exchange messages of 8 B to 1 MiB, every
 *              byte checked.
 */
#include "mmc_test.h"
#include "tcp_raw.h"
#include <sys/resource.h>
#include <sys/wait.h>

static int rank, nprocs, port_lo, port_hi, port0;

static void exchange(int from, int to, int tag, size_t size)
{
    unsigned char *buf = malloc(size);
    if (rank == from) {
        mmc_fill(buf, size, tag, from);
        if (MPI_Send(buf, (int) size, MPI_BYTE, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
            MMC_ERR("rank %d: send to %d failed\n", from, to);
    } else if (rank == to) {
        memset(buf, 0, size);
        if (MPI_Recv(buf, (int) size, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE))
            MMC_ERR("rank %d: receive from %d failed\n", to, from);
        mmc_check(buf, size, tag, from, "after the stranger");
    }
    free(buf);
}

/* ------------------------------------------------------------ impostor */

/* One attempt: connect, expect the challenge, send what, then expect nothing
 * but the close. */
static int attempt(const char *ip, int port, const uint8_t * what, size_t len, const char *label)
{
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE], rest[256];
    int fd = raw_connect(ip, port);
    if (fd < 0) {
        fprintf(stderr, "stranger (%s): cannot connect to %s:%d\n", label, ip, port);
        return 1;
    }
    if (raw_challenge(fd, nonce, 20) != 0) {
        fprintf(stderr, "stranger (%s): no challenge\n", label);
        close(fd);
        return 1;
    }
    if (len && write(fd, what, len) != (ssize_t) len)
        fprintf(stderr, "stranger (%s): write failed (closed already)\n", label);
    double t0 = raw_now();
    long n = raw_read_all(fd, rest, sizeof(rest), 30);
    close(fd);
    if (n != 0) {
        fprintf(stderr, "stranger (%s): %s\n", label, n < 0 ? "the rank kept the connection" :
                "the rank sent more than its challenge");
        return 1;
    }
    printf("stranger (%s): got the challenge, then nothing; closed after %.1f s\n", label,
           raw_now() - t0);
    fflush(stdout);
    return 0;
}

/* The stranger: returns the number of failed expectations. */
static int impostor(int ready_fd, const char *ip0)
{
    uint8_t cap[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HELLO_SIZE + 64 + 4096], hello[128];
    size_t hello_len = MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HELLO_SIZE;
    int errs = 0;

    int sock = raw_packet_socket();
    if (sock < 0) {
        perror("stranger: packet socket (needs CAP_NET_RAW)");
        return 1;
    }
    if (write(ready_fd, "r", 1) != 1)
        return 1;
    /* a HELLO, then the first message's headers */
    char dst[64];
    int dst_port = 0;
    long got = raw_capture(sock, MPIDI_TCP_OP_HELLO, cap, hello_len + MPIDI_TCP_HDR_SIZE + 48, dst,
                           &dst_port);
    close(sock);
    if (got < (long) hello_len + MPIDI_TCP_HDR_SIZE) {
        fprintf(stderr, "stranger: captured %ld bytes of a handshake\n", got);
        return 1;
    }
    MPIDI_TCP_hdr_t h;
    uint32_t from = MPIDI_TCP_get32(cap + MPIDI_TCP_HDR_SIZE + 4);
    uint32_t to = MPIDI_TCP_get32(cap + MPIDI_TCP_HDR_SIZE + 12);
    if (MPIDI_TCP_hdr_decode(cap, 64, &h) != MPIDI_TCP_HDR_OK || h.opcode != MPIDI_TCP_OP_HELLO) {
        fprintf(stderr, "stranger: the captured bytes are not a HELLO\n");
        return 1;
    }
    printf("stranger: captured rank %u's HELLO to rank %u (%s:%d) and %ld bytes after it\n",
           from, to, dst, dst_port, got - (long) hello_len);
    fflush(stdout);
    raw_hello(hello, 2, (uint32_t) nprocs, 0, 0x42);
    errs += attempt(ip0, port0, hello, hello_len, "claims rank 2 at rank 0, guessed proof");
    errs += attempt(dst, dst_port, cap, (size_t) got, "replays the handshake and message to "
                    "its rank");
    errs += attempt(ip0, port0, cap, (size_t) got, "replays the handshake to rank 0");
    errs += attempt(dst, dst_port, cap + hello_len, (size_t) got - hello_len,
                    "sends the message without a HELLO");
    errs += attempt(ip0, port0, NULL, 0, "says nothing");
    return errs;
}

static int scenario_impostor(void)
{
    char ip[64], ip0[64];
    int token = 0, pipes[2][2], errs = 0;

    raw_my_ip(ip);
    if (nprocs != 4) {
        if (rank == 0)
            MMC_ERR("impostor needs 4 ranks on 2 hosts\n");
        return mmc_finish();
    }
    if (rank == 0) {
        MPI_Send(ip, sizeof(ip), MPI_CHAR, 3, 1, MPI_COMM_WORLD);
        MPI_Send(&port0, 1, MPI_INT, 3, 5, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, 3, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* the first messages between rank 0 and the rank the stranger claimed to be */
        exchange(0, 2, 20, 100000);
        exchange(2, 0, 21, 1000);
    } else if (rank == 1) {
        MPI_Recv(&token, 1, MPI_INT, 3, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        exchange(1, 2, 10, 100);
        exchange(1, 2, 12, 3000000);
    } else if (rank == 2) {
        /* no receive posted from rank 1 (which would connect to it) before the capture */
        MPI_Recv(&token, 1, MPI_INT, 3, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        exchange(1, 2, 10, 100);
        MPI_Recv(&token, 1, MPI_INT, 3, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        exchange(0, 2, 20, 100000);
        exchange(2, 0, 21, 1000);
        exchange(1, 2, 12, 3000000);
    } else {
        MPI_Recv(ip0, sizeof(ip0), MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&port0, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (pipe(pipes[0]) || pipe(pipes[1]))
            MMC_ERR("pipe failed\n");
        pid_t pid = fork();
        if (pid == 0) {
            int e = impostor(pipes[0][1], ip0);
            if (write(pipes[1][1], &e, sizeof(e)) != sizeof(e))
                _exit(2);
            _exit(0);
        }
        char c;
        if (read(pipes[0][0], &c, 1) != 1)
            MMC_ERR("the stranger did not start\n");
        MPI_Send(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        MPI_Send(&token, 1, MPI_INT, 2, 4, MPI_COMM_WORLD);
        if (read(pipes[1][0], &errs, sizeof(errs)) != sizeof(errs))
            MMC_ERR("the stranger died\n");
        waitpid(pid, NULL, 0);
        if (errs)
            MMC_ERR("the stranger got something %d times\n", errs);
        MPI_Send(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Send(&token, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
    }
    return mmc_finish();
}

/* ------------------------------------------------------------ flood */

#define FLOOD_CONNS 1000
#define RANK_NOFILE 64

/* Opens FLOOD_CONNS connections to ip:port (as many as its own limit
 * allows), says so after the first 200, and holds them until told to stop. */
static void flood(const char *ip, int port, int ready_fd, int stop_fd)
{
    static int fds[FLOOD_CONNS];
    struct rlimit rl;
    struct sockaddr_in sa = {.sin_family = AF_INET,.sin_port = htons(port) };
    int n = 0;

    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    inet_pton(AF_INET, ip, &sa.sin_addr);
    for (int i = 0; i < FLOOD_CONNS; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fd < 0)
            break;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
            close(fd);
            continue;
        }
        fds[n++] = fd;
        if (n == 200 && write(ready_fd, &n, sizeof(n)) != sizeof(n))
            _exit(1);
    }
    if (n < 200 && write(ready_fd, &n, sizeof(n)) != sizeof(n))
        _exit(1);
    printf("stranger: opened %d connections to rank 0\n", n);
    fflush(stdout);
    char c;
    if (read(stop_fd, &c, 1) < 0)
        _exit(1);
    _exit(0);
}

static int scenario_flood(void)
{
    char ip[64];
    int pipes[2][2];
    struct rlimit rl;

    if (nprocs != 2) {
        if (rank == 0)
            MMC_ERR("flood needs 2 ranks on 2 hosts\n");
        return mmc_finish();
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rank == 0) {
        int opened = 0;
        raw_my_ip(ip);
        if (pipe(pipes[0]) || pipe(pipes[1]))
            MMC_ERR("pipe failed\n");
        pid_t pid = fork();
        if (pid == 0)
            flood(ip, port0, pipes[0][1], pipes[1][0]);
        /* the rank, not the stranger, runs short of descriptors */
        rl.rlim_cur = rl.rlim_max = RANK_NOFILE;
        setrlimit(RLIMIT_NOFILE, &rl);
        if (read(pipes[0][0], &opened, sizeof(opened)) != sizeof(opened) || opened < 200)
            MMC_ERR("the stranger opened only %d connections\n", opened);
        printf("rank 0: RLIMIT_NOFILE %lu; the stranger holds %d+ connections to its port\n",
               (unsigned long) rl.rlim_cur, opened);
        fflush(stdout);
        for (int i = 0; i < 40; i++) {
            size_t size = (size_t) 8 << (i % 18);
            exchange(1, 0, 100 + i, size);
            exchange(0, 1, 200 + i, size);
        }
        if (write(pipes[1][1], "s", 1) != 1)
            MMC_ERR("cannot stop the stranger\n");
        waitpid(pid, NULL, 0);
    } else {
        /* rank 0's stranger starts at once; rank 1 connects to rank 0 under it */
        sleep(3);
        for (int i = 0; i < 40; i++) {
            size_t size = (size_t) 8 << (i % 18);
            exchange(1, 0, 100 + i, size);
            exchange(0, 1, 200 + i, size);
        }
    }
    return mmc_finish();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (!raw_port_range(&port_lo, &port_hi) || argc < 2) {
        if (rank == 0)
            MMC_ERR("usage: tcp_stranger impostor|flood, with MPIR_CVAR_CH4_TCP_PORT_RANGE\n");
        return mmc_finish();
    }
    if (rank == 0 && !(port0 = raw_own_listen_port()))
        MMC_ERR("rank 0 listens on no port of %d:%d\n", port_lo, port_hi);
    if (!strcmp(argv[1], "impostor"))
        return scenario_impostor();
    if (!strcmp(argv[1], "flood"))
        return scenario_flood();
    if (rank == 0)
        MMC_ERR("unknown scenario %s\n", argv[1]);
    return mmc_finish();
}
