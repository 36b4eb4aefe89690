/*
 * MPI_Open_port, MPI_Comm_accept and MPI_Comm_connect between two jobs of
 * ch4:tcp, each started by its own mpiexec:
 *
 *   tcp_port server DIR     opens a port, accepts once, closes the port
 *   tcp_port client DIR     connects with two malformed port names, one
 *                           whose secret was changed and a closed port of its
 *                           own (MPI_ERR_PORT, at once), then with the real
 *                           one; after the server closed its port, once more
 *                           (MPI_ERR_PORT).  MPI_Error_string gets exactly
 *                           MPI_MAX_ERROR_STRING bytes, a guard behind them
 *   ... DIR name            both: the port name passes through MPI_Publish_name
 *                           and MPI_Lookup_name (mpiexec -nameserver), the
 *                           client learns the port closed when the name is
 *                           unpublished
 *   ... DIR replay          both: the server accepts twice; between the two
 *                           a stranger replays the client's captured port
 *                           handshake (stranger() below)
 *
 * The port name passes through a file in DIR unless told otherwise.
 * Joined, every rank of each job exchanges checked messages with every rank
 * of the other, then a ring and an allreduce run over the merged
 * communicator.  Each job's rank 0 prints " No Errors".
 */
#include "mmc_test.h"
#include "tcp_raw.h"
#include <sys/wait.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[512], tmp[520];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) || rename(tmp, path))
        MMC_ERR("cannot write %s: %s\n", path, strerror(errno));
}

/* waits (up to 60 s) for the other job to write a file */
static void get_file(const char *dir, const char *name, char *text, size_t len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    for (int i = 0; i < 600; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            char *ok = fgets(text, (int) len, f);
            fclose(f);
            if (ok) {
                text[strcspn(text, "\n")] = 0;
                return;
            }
        }
        usleep(100000);
    }
    MMC_ERR("no %s after 60 s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define SERVICE "mmc-tcp-port"

/* Waits (up to 60 s) until the server's name is published (found 1) or no
 * longer (found 0).  Hydra's lookup of a name nobody published may succeed
 * with an empty port name. */
static void lookup(char *port, int found)
{
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 600; i++) {
        port[0] = 0;
        int err = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, port);
        if ((err == MPI_SUCCESS && port[0]) == found) {
            printf("client: the name %s is %s\n", SERVICE, found ? "published" : "unpublished");
            return;
        }
        usleep(100000);
    }
    MMC_ERR("the name %s was not %s within 60 s\n", SERVICE, found ? "published" : "unpublished");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI_Error_string's buffer, MPI_MAX_ERROR_STRING bytes, and a guard of
 * non-zero bytes behind it: the closed port's stack is long enough that
 * MPICH's stack printer wrote past the buffer (doc/mpich-fixes.md) */
static struct {
    char s[MPI_MAX_ERROR_STRING];
    char guard[4096];
} msgbuf;

static void error_string(int err, char *msg)
{
    int len = -1;

    memset(&msgbuf, 'g', sizeof(msgbuf));
    MPI_Error_string(err, msgbuf.s, &len);
    for (size_t i = 0; i < sizeof(msgbuf.guard); i++)
        if (msgbuf.guard[i] != 'g') {
            MMC_ERR("rank %d: MPI_Error_string wrote past MPI_MAX_ERROR_STRING (at +%zu)\n",
                    rank, i);
            break;
        }
    if (len < 0 || (size_t) len != strnlen(msgbuf.s, sizeof(msgbuf.s)))
        MMC_ERR("rank %d: MPI_Error_string returned length %d for a string of %zu bytes\n",
                rank, len, strnlen(msgbuf.s, sizeof(msgbuf.s)));
    snprintf(msg, MPI_MAX_ERROR_STRING, "%.*s", MPI_MAX_ERROR_STRING - 1, msgbuf.s);
}

/* a connect that must fail with MPI_ERR_PORT, within a few seconds */
static void bad_connect(const char *what, const char *port)
{
    MPI_Comm inter = MPI_COMM_NULL;
    int cls = MPI_SUCCESS;
    char msg[MPI_MAX_ERROR_STRING];
    double t0 = MPI_Wtime();
    int err = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    double t = MPI_Wtime() - t0;

    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: connect with %s succeeded\n", rank, what);
        return;
    }
    MPI_Error_class(err, &cls);
    error_string(err, msg);
    if (cls != MPI_ERR_PORT || t > 20 || inter != MPI_COMM_NULL)
        MMC_ERR("rank %d: connect with %s: class %d (expected MPI_ERR_PORT %d) after %.1f s: %s\n",
                rank, what, cls, MPI_ERR_PORT, t, msg);
    else if (rank == 0)
        printf("client: connect with %s: MPI_ERR_PORT: %s\n", what, msg);
}

static void exchange(MPI_Comm inter, int server)
{
    int rsize;
    unsigned char out[70000], in[70000];

    MPI_Comm_remote_size(inter, &rsize);
    for (int r = 0; r < rsize; r++) {
        for (size_t len = 8; len <= sizeof(out); len *= 30) {
            int tag = (int) len % 1000;
            mmc_fill(out, len, tag, rank + (server ? 100 : 200));
            memset(in, 0, len);
            MPI_Sendrecv(out, (int) len, MPI_BYTE, r, tag, in, (int) len, MPI_BYTE, r, tag, inter,
                         MPI_STATUS_IGNORE);
            mmc_check(in, len, tag, r + (server ? 200 : 100), "intercommunicator");
        }
    }
}

/* A stranger beside the client's root (forked from rank 1: no MPI, none of
 * the rank's state) captures the root's first proven port handshake and
 * its CONNECT (a packet socket), then, when told, replays them to the
 * server's port: it must get the challenge and at most an empty PORT_NAK.
 * Writes the number of failed expectations to done_fd. */
static void stranger(int ready_fd, int go_fd, int done_fd)
{
    uint8_t cap[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_PORT_HELLO_SIZE + MPIDI_TCP_HDR_SIZE + 48];
    uint8_t nonce[MPIDI_TCP_NONCE_SIZE], rest[256];
    char dst[64], c;
    int dst_port = 0, errs = 1, fd = -1;
    int sock = raw_packet_socket();

    if (sock < 0)
        perror("stranger: packet socket (needs CAP_NET_RAW)");
    if (write(ready_fd, "r", 1) != 1 || sock < 0)
        goto done;
    long got = raw_capture(sock, MPIDI_TCP_OP_PORT_HELLO, cap, sizeof(cap), dst, &dst_port);
    close(sock);
    if (got != (long) sizeof(cap)) {
        fprintf(stderr, "stranger: captured %ld bytes of a port handshake\n", got);
        goto done;
    }
    printf("stranger: captured a port handshake and CONNECT to %s:%d\n", dst, dst_port);
    fflush(stdout);
    if (read(go_fd, &c, 1) != 1 || (fd = raw_connect(dst, dst_port)) < 0 ||
        raw_challenge(fd, nonce, 20) != 0) {
        fprintf(stderr, "stranger: no challenge from the server's root\n");
        goto done;
    }
    if (send(fd, cap, sizeof(cap), MSG_NOSIGNAL) != (ssize_t) sizeof(cap))
        fprintf(stderr, "stranger: the replay was cut short (closed already)\n");
    long n = raw_read_all(fd, rest, sizeof(rest), 30);
    MPIDI_TCP_hdr_t h;
    static const uint8_t zero[MPIDI_TCP_MAC_SIZE];
    int nak = n == MPIDI_TCP_HDR_SIZE + MPIDI_TCP_MAC_SIZE &&
        MPIDI_TCP_hdr_decode(rest, 64, &h) == MPIDI_TCP_HDR_OK &&
        h.opcode == MPIDI_TCP_OP_PORT_NAK && !memcmp(rest + MPIDI_TCP_HDR_SIZE, zero, sizeof(zero));
    if (n != 0 && !nak) {
        fprintf(stderr, "stranger: the replay got %ld bytes%s\n", n,
                n < 0 ? " (the connection was kept)" : ", not an empty PORT_NAK");
        goto done;
    }
    printf("stranger: replayed the port handshake: got the challenge, then %s\n",
           nak ? "an empty PORT_NAK" : "nothing");
    errs = 0;
  done:
    fflush(stdout);
    if (fd >= 0)
        close(fd);
    if (write(done_fd, &errs, sizeof(errs)) != sizeof(errs))
        _exit(2);
    _exit(0);
}

/* One join: connect or accept, then checked messages and the merged ring. */
static void join(const char *port, int server, int round)
{
    MPI_Comm inter;
    int err = server ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) :
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    if (err != MPI_SUCCESS) {
        MMC_ERR("rank %d: %s %d failed\n", rank, server ? "accept" : "connect", round);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    exchange(inter, server);
    mmc_merged_check(inter, !server);
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("%s: joined (%d), checked messages both ways, merged ring and allreduce\n",
               server ? "server" : "client", round);
}

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME] = "", bad[MPI_MAX_PORT_NAME];
    int server, err, replay, named, pipes[3][2];
    pid_t pid = -1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc < 3 || size < 2) {
        MMC_ERR("usage: tcp_port server|client DIR [replay] (2 ranks or more)\n");
        return mmc_finish();
    }
    server = strcmp(argv[1], "server") == 0;
    replay = argc > 3 && strcmp(argv[3], "replay") == 0;
    named = argc > 3 && strcmp(argv[3], "name") == 0;
    const char *dir = argv[2];

    if (server) {
        if (rank == 0) {
            err = MPI_Open_port(MPI_INFO_NULL, port);
            if (err != MPI_SUCCESS)
                MMC_ERR("MPI_Open_port failed\n");
            if (named && MPI_Publish_name(SERVICE, MPI_INFO_NULL, port) != MPI_SUCCESS)
                MMC_ERR("MPI_Publish_name failed\n");
            else if (!named)
                put_file(dir, "port", port);
        }
        join(port, 1, 1);
        if (replay)
            join(port, 1, 2);
        if (rank == 0) {
            MPI_Close_port(port);
            if (named && MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port) != MPI_SUCCESS)
                MMC_ERR("MPI_Unpublish_name failed\n");
            else if (!named)
                put_file(dir, "closed", "1");
        }
        return mmc_finish();
    }

    if (replay && rank == 1) {
        char c;
        if (pipe(pipes[0]) || pipe(pipes[1]) || pipe(pipes[2]))
            MMC_ERR("pipe failed\n");
        if ((pid = fork()) == 0)
            stranger(pipes[0][1], pipes[1][0], pipes[2][1]);
        if (read(pipes[0][0], &c, 1) != 1)
            MMC_ERR("the stranger did not start\n");
    }
    MPI_Barrier(MPI_COMM_WORLD);        /* the stranger listens before the root connects */
    if (rank == 0 && named)
        lookup(port, 1);
    else if (rank == 0)
        get_file(dir, "port", port, sizeof(port));
    /* not a port name of ch4:tcp's, then the right one with one bit of its
     * secret (the last bytes of the address) changed */
    bad_connect("a port name without a tag", "no-such-port");
    bad_connect("a malformed port name", "tag#0$connentry#0011$");
    snprintf(bad, sizeof(bad), "%s", port);
    char *end = strrchr(bad, '$');
    if (end && end > bad + 1)
        end[-1] = end[-1] == '0' ? '1' : '0';
    bad_connect("a wrong secret", bad);
    /* a port the connecting root itself opened and closed */
    char own[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        MPI_Open_port(MPI_INFO_NULL, own);
        MPI_Close_port(own);
    }
    bad_connect("a closed port of its own", own);
    join(port, 0, 1);
    if (replay) {
        /* the server waits in its second accept while the stranger replays */
        if (rank == 1) {
            int e = 1;
            if (write(pipes[1][1], "g", 1) != 1 || read(pipes[2][0], &e, sizeof(e)) != sizeof(e))
                MMC_ERR("the stranger died\n");
            else if (e)
                MMC_ERR("the stranger got something\n");
            waitpid(pid, NULL, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        join(port, 0, 2);
    }
    if (rank == 0 && named)
        lookup(bad, 0);
    else if (rank == 0)
        get_file(dir, "closed", bad, sizeof(bad));
    bad_connect("a closed port", port);
    return mmc_finish();
}
