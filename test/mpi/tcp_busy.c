/*
 * ch4:tcp: a peer that is alive but outside MPI (computing) for 3 x
 * MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT is waited for, never declared dead.  The
 * kernel completes TCP's handshake while the busy rank computes; only MPI
 * progress answers the rest.  The scenario is argv[1]; 2 ranks on 2 hosts:
 *
 *   sender     rank 1 computes, then sends its first message to rank 0, which
 *              has waited in MPI_Recv all along (an eager and a rendezvous one)
 *   receiver   rank 0 sends its first messages (eager and rendezvous) to rank 1,
 *              which computes before it receives
 *   race       both send to each other at once; rank 0 then computes before it
 *              waits, so rank 1 answers rank 0's connection and waits for its own
 *
 * Every byte is checked, and afterwards both exchange again in both directions.
 */
#include "mmc_test.h"
#include <unistd.h>

#define EAGER 1000
#define RNDV (8 << 20)  /* above the default eager limit */

static int rank, busy_s;

/* Outside MPI: computing, as far as MPI can tell. */
static void compute(void)
{
    printf("rank %d: computing outside MPI for %d s\n", rank, busy_s);
    fflush(stdout);
    sleep((unsigned) busy_s);
}

static void post(unsigned char *buf, size_t size, int peer, int tag, int send, MPI_Request * rq)
{
    if (send) {
        mmc_fill(buf, size, tag, rank);
        MPI_Isend(buf, (int) size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, rq);
    } else {
        memset(buf, 0, size);
        MPI_Irecv(buf, (int) size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, rq);
    }
}

/* Both messages (eager, rendezvous) each way as requested; checks what arrived. */
static void transfer(int sends, int recvs, int busy_before_wait)
{
    int peer = 1 - rank, n = 0, err;
    unsigned char *buf[4];
    MPI_Request rq[4];
    MPI_Status st[4];

    for (int i = 0; i < 4; i++)
        buf[i] = malloc(RNDV);
    if (sends) {
        post(buf[n], EAGER, peer, 10 + rank, 1, &rq[n]), n++;
        post(buf[n], RNDV, peer, 20 + rank, 1, &rq[n]), n++;
    }
    if (recvs) {
        post(buf[n], EAGER, peer, 10 + peer, 0, &rq[n]), n++;
        post(buf[n], RNDV, peer, 20 + peer, 0, &rq[n]), n++;
    }
    if (busy_before_wait)
        compute();
    err = MPI_Waitall(n, rq, st);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        MMC_ERR("rank %d: %s\n", rank, msg);
    }
    if (recvs) {
        int k = sends ? 2 : 0;
        mmc_check(buf[k], EAGER, 10 + peer, peer, "eager message");
        mmc_check(buf[k + 1], RNDV, 20 + peer, peer, "rendezvous message");
    }
    for (int i = 0; i < 4; i++)
        free(buf[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    busy_s = 3 * mmc_cvar_int("MPIR_CVAR_CH4_TCP_CONNECT_TIMEOUT", 30);
    const char *s = argc > 1 ? argv[1] : "";

    if (!strcmp(s, "sender")) {
        if (rank == 1)
            compute();
        transfer(rank == 1, rank == 0, 0);
    } else if (!strcmp(s, "receiver")) {
        if (rank == 1)
            compute();
        transfer(rank == 0, rank == 1, 0);
    } else if (!strcmp(s, "race")) {
        transfer(1, 1, rank == 0);
    } else if (rank == 0) {
        MMC_ERR("usage: tcp_busy sender|receiver|race\n");
    }
    /* nobody was declared dead: the connection carries both ways */
    transfer(1, 1, 0);
    return mmc_finish();
}
