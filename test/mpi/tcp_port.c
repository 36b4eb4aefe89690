/*
 * MPI_Open_port, MPI_Comm_accept and MPI_Comm_connect between two jobs of
 * ch4:tcp, each started by its own mpiexec (the port name passes through a
 * file in DIR):
 *
 *   tcp_port server DIR     opens a port, accepts once, closes the port
 *   tcp_port client DIR     connects with a malformed port name and with one
 *                           whose secret was changed (MPI_ERR_PORT, at once),
 *                           then with the real one; after the server closed
 *                           its port, once more (MPI_ERR_PORT)
 *
 * Joined, every rank of each job exchanges checked messages with every rank
 * of the other, then a ring and an allreduce run over the merged
 * communicator.  Each job's rank 0 prints " No Errors".
 */
#include "mmc_test.h"
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

/* a connect that must fail with MPI_ERR_PORT, within a few seconds */
static void bad_connect(const char *what, const char *port)
{
    MPI_Comm inter = MPI_COMM_NULL;
    int cls = MPI_SUCCESS, len;
    char msg[MPI_MAX_ERROR_STRING];
    double t0 = MPI_Wtime();
    int err = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    double t = MPI_Wtime() - t0;

    if (err == MPI_SUCCESS) {
        MMC_ERR("rank %d: connect with %s succeeded\n", rank, what);
        return;
    }
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
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

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME] = "", bad[MPI_MAX_PORT_NAME];
    MPI_Comm inter;
    int server, err;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc < 3) {
        MMC_ERR("usage: tcp_port server|client DIR\n");
        return mmc_finish();
    }
    server = strcmp(argv[1], "server") == 0;
    const char *dir = argv[2];

    if (server) {
        if (rank == 0) {
            err = MPI_Open_port(MPI_INFO_NULL, port);
            if (err != MPI_SUCCESS)
                MMC_ERR("MPI_Open_port failed\n");
            put_file(dir, "port", port);
        }
        err = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    } else {
        if (rank == 0)
            get_file(dir, "port", port, sizeof(port));
        /* not a port name of ch4:tcp's, then the right one with one bit of
         * its secret (the last bytes of the address) changed */
        bad_connect("a malformed port name", "tag#0$connentry#0011$");
        snprintf(bad, sizeof(bad), "%s", port);
        char *end = strrchr(bad, '$');
        if (end && end > bad + 1)
            end[-1] = end[-1] == '0' ? '1' : '0';
        bad_connect("a wrong secret", bad);
        err = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    }
    if (err != MPI_SUCCESS) {
        MMC_ERR("rank %d: %s failed\n", rank, server ? "accept" : "connect");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    exchange(inter, server);
    mmc_merged_check(inter, !server);
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("%s: joined, checked messages both ways, merged ring and allreduce\n",
               server ? "server" : "client");
    if (server) {
        if (rank == 0) {
            MPI_Close_port(port);
            put_file(dir, "closed", "1");
        }
    } else {
        if (rank == 0)
            get_file(dir, "closed", bad, sizeof(bad));
        bad_connect("a closed port", port);
    }
    return mmc_finish();
}
