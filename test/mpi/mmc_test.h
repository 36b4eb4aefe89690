/*
 * Helpers shared by the mpich-multichannel MPI tests (header-only).
 * Every test checks the bytes it receives and ends with MPICH's test-suite
 * convention: rank 0 prints " No Errors" when no rank found an error.
 */
#ifndef MMC_TEST_H_INCLUDED
#define MMC_TEST_H_INCLUDED

#include "mmc_mpi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mmc_errs;

#define MMC_ERR(...) do { fprintf(stderr, __VA_ARGS__); mmc_errs++; } while (0)

/* Byte i of a message identified by (tag, src, size): catches shifted,
 * truncated, stale and swapped buffers. */
static inline unsigned char mmc_byte(int tag, int src, size_t size, size_t i)
{
    return (unsigned char) (i * 131 + (i >> 8) * 7 + (size_t) tag * 29 + (size_t) src * 17 + size);
}

static inline void mmc_fill(unsigned char *buf, size_t size, int tag, int src)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = mmc_byte(tag, src, size, i);
}

/* Returns the number of wrong bytes (reports the first). */
static inline size_t mmc_check(const unsigned char *buf, size_t size, int tag, int src,
                               const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < size; i++) {
        if (buf[i] != mmc_byte(tag, src, size, i)) {
            if (!bad)
                MMC_ERR("%s: size %zu from %d tag %d: byte %zu is %u, expected %u\n", what,
                        size, src, tag, i, buf[i], mmc_byte(tag, src, size, i));
            bad++;
        }
    }
    return bad;
}

/* Over the merged communicator of an intercommunicator (this side's ranks
 * after the other's when high): a ring of checked messages and an allreduce
 * of the merged ranks. */
static inline void mmc_merged_check(MPI_Comm inter, int high)
{
    MPI_Comm all;
    int mr, ms, sum = 0;
    unsigned char out[300], in[300];

    MPI_Intercomm_merge(inter, high, &all);
    MPI_Comm_rank(all, &mr);
    MPI_Comm_size(all, &ms);
    int next = (mr + 1) % ms, prev = (mr + ms - 1) % ms;
    mmc_fill(out, sizeof(out), 4, mr);
    MPI_Sendrecv(out, sizeof(out), MPI_BYTE, next, 4, in, sizeof(in), MPI_BYTE, prev, 4, all,
                 MPI_STATUS_IGNORE);
    mmc_check(in, sizeof(in), 4, prev, "merged ring");
    MPI_Allreduce(&mr, &sum, 1, MPI_INT, MPI_SUM, all);
    if (sum != ms * (ms - 1) / 2)
        MMC_ERR("merged rank %d: allreduce over %d processes gave %d\n", mr, ms, sum);
    MPI_Comm_free(&all);
}

/* The send modes the datatype tests cross with every type and size; the
 * first five are nonblocking and start with mmc_start_send, partitioned
 * exchanges go through mmc_partitioned, the last two each test runs its own
 * way. */
enum mmc_mode { MMC_ISEND, MMC_ISSEND, MMC_IRSEND, MMC_IBSEND, MMC_SEND_INIT, MMC_PSEND,
    MMC_SENDRECV, MMC_BLOCKING, MMC_NMODES };
static const char *const mmc_mode_names[] = { "isend", "issend", "irsend", "ibsend",
    "send_init", "psend_init", "sendrecv", "send/recv" };

/* Starts a nonblocking send of that mode.  Every rank of comm calls it once
 * its receive is posted (a ready send waits for all of them first); the
 * request of MMC_SEND_INIT is persistent, freed by the caller once done. */
static inline void mmc_start_send(int mode, const void *buf, int count, MPI_Datatype type,
                                  int dest, int tag, MPI_Comm comm, MPI_Request * req)
{
    switch (mode) {
        case MMC_ISEND:
            MPI_Isend(buf, count, type, dest, tag, comm, req);
            break;
        case MMC_ISSEND:
            MPI_Issend(buf, count, type, dest, tag, comm, req);
            break;
        case MMC_IRSEND:
            MPI_Barrier(comm);
            MPI_Irsend(buf, count, type, dest, tag, comm, req);
            break;
        case MMC_IBSEND:
            MPI_Ibsend(buf, count, type, dest, tag, comm, req);
            break;
        case MMC_SEND_INIT:
            MPI_Send_init(buf, count, type, dest, tag, comm, req);
            MPI_Start(req);
            break;
    }
}

/* A ring exchange by partitioned communication (MPI 4.0): scount elements to
 * next, rcount from prev, each cut into the same number of partitions (the
 * largest of 7, 5, 4, 3, 2 that divides scount, else one), made ready out of
 * order through MPI_Pready, MPI_Pready_range and MPI_Pready_list, each
 * partition of the receive watched with MPI_Parrived.  Returns the error of
 * the wait, the receive's status in *st. */
static inline int mmc_partitioned(const void *sbuf, MPI_Aint scount, MPI_Datatype stype,
                                  void *rbuf, MPI_Aint rcount, MPI_Datatype rtype, int next,
                                  int prev, int tag, MPI_Comm comm, MPI_Status * st)
{
    static const int cuts[] = { 7, 5, 4, 3, 2 };
    int p = 1;
    for (int i = 0; i < 5 && p == 1; i++)
        if (scount >= cuts[i] && scount % cuts[i] == 0 && rcount % cuts[i] == 0)
            p = cuts[i];
    MPI_Request req[2];
    MPI_Status sts[2];
    MPI_Precv_init(rbuf, p, rcount / p, rtype, prev, tag, comm, MPI_INFO_NULL, &req[0]);
    MPI_Psend_init(sbuf, p, scount / p, stype, next, tag, comm, MPI_INFO_NULL, &req[1]);
    MPI_Startall(2, req);
    /* the last alone, the upper half but the last as a range, the lower
     * half as a list from the top down */
    MPI_Pready(p - 1, req[1]);
    if (p / 2 <= p - 2)
        MPI_Pready_range(p / 2, p - 2, req[1]);
    int low[7], nlow = 0;
    for (int i = p / 2 - 1; i >= 0; i--)
        low[nlow++] = i;
    if (nlow)
        MPI_Pready_list(nlow, low, req[1]);
    for (int i = 0; i < p; i++) {
        int arrived = 0;
        while (!arrived)
            MPI_Parrived(req[0], i, &arrived);
    }
    int err = MPI_Waitall(2, req, sts);
    *st = sts[0];
    if (err == MPI_ERR_IN_STATUS)
        err = sts[0].MPI_ERROR != MPI_SUCCESS ? sts[0].MPI_ERROR : sts[1].MPI_ERROR;
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    return err;
}

/* What each rank counted (yields, progress passes) in `where`, summed on
 * rank 0 and printed as "WHAT: N COUNTED in WHERE": with `on` (ranks
 * outnumber CPUs) some rank must have counted there, without it none. */
static inline void mmc_count_report(long long mine, int on, const char *what,
                                    const char *counted, const char *where)
{
    int rank;
    long long all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %lld %s in %s\n", what, all, counted, where);
    if (on && rank == 0 && all <= 0)
        MMC_ERR("ranks outnumber CPUs, yet no %s in %s\n", counted, where);
    if (!on && mine != 0)
        MMC_ERR("rank %d: %lld %s in %s with yielding off\n", rank, mine, counted, where);
}

static inline int mmc_finish(void)
{
    int rank, total;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&mmc_errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf(" Found %d errors\n", total);
        else
            printf(" No Errors\n");
    }
    MPI_Finalize();
    return 0;
}

#endif /* MMC_TEST_H_INCLUDED */
