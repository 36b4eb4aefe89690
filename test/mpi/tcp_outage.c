/*
 * ch4:tcp across a network outage between two hosts (netfilter DROP, both
 * directions, set by rank 1 in its own host's namespace), with
 * MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT = T.  3 ranks on 3 hosts:
 *
 *   short  the link from rank 0 to rank 1 is cut for 2 s (< T/2) while 4 MiB
 *          travel each way: both arrive intact, nobody is declared dead
 *   long   the link stays cut: the requests between ranks 0 and 1 fail with
 *          MPIX_ERR_PROC_FAILED between T - 2 and T + T/8 + 3 s after they
 *          were posted, while rank 0 and rank 2 keep exchanging messages
 */
#include "mmc_test.h"
#include "tcp_raw.h"
#include <unistd.h>

#define SIZE (4 << 20)

static int rank, outage_s;
static char ip0[64];

/* Rank 1 cuts (or restores) its host's traffic with rank 0's host. */
static void link_cut(int cut)
{
    char cmd[256];
    const char *op = cut ? "-I" : "-D";
    snprintf(cmd, sizeof(cmd), "iptables-legacy -w %s INPUT -s %s -j DROP && "
             "iptables-legacy -w %s OUTPUT -d %s -j DROP", op, ip0, op, ip0);
    if (system(cmd) != 0)
        MMC_ERR("rank %d: '%s' failed\n", rank, cmd);
    printf("rank %d: link to rank 0's host %s %s\n", rank, ip0, cut ? "cut" : "restored");
    fflush(stdout);
}

/* 4 MiB each way between ranks 0 and 1; returns the first error or MPI_SUCCESS. */
static int both_ways(int tag, unsigned char *out, unsigned char *in, double *elapsed)
{
    int peer = 1 - rank;
    MPI_Request rq[2];
    MPI_Status st[2];
    mmc_fill(out, SIZE, tag, rank);
    memset(in, 0, SIZE);
    double t0 = mmc_now_us();
    MPI_Irecv(in, SIZE, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(out, SIZE, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1]);
    if (rank == 1 && tag == 1) {
        /* the short outage: restored while the transfer waits */
        while (mmc_now_us() - t0 < 2e6) {
            int flag;
            MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
        }
        link_cut(0);
    }
    int err = MPI_Waitall(2, rq, st);
    *elapsed = (mmc_now_us() - t0) / 1e6;
    if (err == MPI_ERR_IN_STATUS)
        err = st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR;
    if (err == MPI_SUCCESS)
        mmc_check(in, SIZE, tag, peer, "across the outage");
    return err;
}

int main(int argc, char **argv)
{
    int nprocs, errs, total = 0;
    double dt;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    outage_s = mmc_cvar_int("MPIR_CVAR_CH4_TCP_OUTAGE_TIMEOUT", 120);
    unsigned char *out = malloc(SIZE), *in = malloc(SIZE);
    if (rank == 0)
        raw_my_ip(ip0);
    MPI_Bcast(ip0, sizeof(ip0), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (nprocs != 3) {
        if (rank == 0)
            MMC_ERR("tcp_outage needs 3 ranks on 3 hosts\n");
        return mmc_finish();
    }

    /* short: heals */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        link_cut(1);
    if (rank <= 1) {
        if (rank == 0)
            usleep(500000);     /* the data meets the cut link */
        int err = both_ways(1, out, in, &dt);
        if (err != MPI_SUCCESS)
            MMC_ERR("rank %d: transfer across a 2 s outage failed\n", rank);
        else if (dt < 1.0)      /* posted after the cut, done only after the link is back */
            MMC_ERR("rank %d: done after %.1f s: the transfer did not cross the outage\n", rank,
                    dt);
        else
            printf("rank %d: 4 MiB each way across a 2 s outage: intact after %.1f s\n", rank, dt);
        fflush(stdout);
    }

    /* long: the peer fails within the bound, others are unaffected */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        link_cut(1);
    if (rank <= 1) {
        if (rank == 0)
            usleep(500000);
        int err = both_ways(2, out, in, &dt), cls = MPI_SUCCESS;
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        msg[0] = '\0';
        if (err != MPI_SUCCESS) {
            MPI_Error_class(err, &cls);
            MPI_Error_string(err, msg, &len);
        }
        printf("rank %d: transfer across a lasting outage: %s after %.1f s: %s\n", rank,
               err ? "failed" : "succeeded", dt, msg);
        fflush(stdout);
        if (cls != MPIX_ERR_PROC_FAILED)
            MMC_ERR("rank %d: expected MPIX_ERR_PROC_FAILED, got class %d\n", rank, cls);
        /* the last acknowledgement came before the cut, up to 0.5 s before the send */
        if (dt < outage_s - 2 || dt > outage_s + outage_s / 8.0 + 3)
            MMC_ERR("rank %d: failed after %.1f s, outside [%d, %.1f]\n", rank, dt,
                    outage_s - 2, outage_s + outage_s / 8.0 + 3);
        if (rank == 1)
            link_cut(0);
    }
    if (rank != 1) {
        /* meanwhile and after: ranks 0 and 2 are not affected */
        for (int i = 0; i < 3; i++) {
            int from = i % 2 ? 2 : 0, tag = 10 + i;
            if (rank == from) {
                mmc_fill(out, SIZE, tag, rank);
                if (MPI_Send(out, SIZE, MPI_BYTE, 2 - from, tag, MPI_COMM_WORLD))
                    MMC_ERR("rank %d: send to rank %d failed\n", rank, 2 - from);
            } else {
                memset(in, 0, SIZE);
                if (MPI_Recv(in, SIZE, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE))
                    MMC_ERR("rank %d: receive from rank %d failed\n", rank, from);
                mmc_check(in, SIZE, tag, from, "beside the outage");
            }
        }
    }
    /* ranks 0 and 1 no longer talk: rank 1 reports through rank 2 */
    errs = mmc_errs;
    if (rank == 1) {
        MPI_Send(&errs, 1, MPI_INT, 2, 99, MPI_COMM_WORLD);
    } else if (rank == 2) {
        MPI_Recv(&total, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        total += errs;
        MPI_Send(&total, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&total, 1, MPI_INT, 2, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        total += errs;
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
