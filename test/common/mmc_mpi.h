/*
 * MPI helpers shared by the mpich-multichannel tests and benchmarks
 * (header-only; built with -I test/common).
 *
 * These machines have 2 cores and MPICH busy-polls, so at most two ranks may
 * poll at a time: a rank with nothing to do waits for its next turn with
 * MPI_Test and a short sleep (mmc_idle_wait), never with a blocking call.
 */
#ifndef MMC_MPI_H_INCLUDED
#define MMC_MPI_H_INCLUDED

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Binds the calling process to the which-th CPU it may run on (counting
 * from 0); nothing when it may run on fewer than two. */
static inline void mmc_pin_cpu(int which)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2)
        return;
    CPU_ZERO(&one);
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &all) && seen++ == which) {
            CPU_SET(cpu, &one);
            break;
        }
    }
    sched_setaffinity(0, sizeof(one), &one);
}

/* CLOCK_MONOTONIC is one clock for every process of the machine, network
 * namespaces included, so simulated hosts can compare timestamps. */
static inline double mmc_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A fixed 200 us sleep, not a growing one: the arbiter bounds the netmod's
 * wait in passes, and an idle rank makes one pass per MPI_Test, so under a
 * static ratio of 1000 a 10 ms sleep left its netmod unpolled for 10 s
 * (doc/arbiter.md, "Passes, not time"). */
static inline void mmc_idle_wait(MPI_Request * req)
{
    int flag = 0;
    struct timespec ts = { 0, 200000 };
    for (;;) {
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return;
        nanosleep(&ts, NULL);
    }
}

/* Every rank of a barrier must call MPI_Ibarrier (a blocking and a
 * nonblocking barrier do not match); `idle` ranks wait without polling. */
static inline void mmc_barrier(MPI_Comm comm, int idle)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    if (idle)
        mmc_idle_wait(&req);
    else
        MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* Rank 0's first partner on its own node and on another node (-1: none),
 * from MPI_COMM_TYPE_SHARED. */
static inline void mmc_partners(int *intra, int *inter)
{
    int size, rank, leader;
    MPI_Comm shm;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shm);
    MPI_Comm_free(&shm);
    int *node = malloc(sizeof(int) * size);
    MPI_Allgather(&leader, 1, MPI_INT, node, 1, MPI_INT, MPI_COMM_WORLD);
    *intra = *inter = -1;
    for (int r = 1; r < size; r++) {
        if (node[r] == node[0] && *intra < 0)
            *intra = r;
        if (node[r] != node[0] && *inter < 0)
            *inter = r;
    }
    free(node);
}

/* An integer CVAR's value through MPI_T (dflt when this MPI has no such CVAR).
 * MPI_T is left initialized (it is reference-counted): MPICH 4.0.2 loses its
 * performance variables when MPI_T is finalized and initialized again. */
static inline int mmc_cvar_int(const char *name, int dflt)
{
    int idx, n, v = dflt, provided;
    MPI_T_cvar_handle h;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &n) == MPI_SUCCESS) {
        MPI_T_cvar_read(h, &v);
        MPI_T_cvar_handle_free(&h);
    }
    return v;
}

/* Writes an integer (or enum) CVAR on this rank through MPI_T_cvar_write;
 * returns 0, or -1 when this MPI has no such CVAR or refuses the write. */
static inline int mmc_cvar_write(const char *name, int value)
{
    int idx, n, provided, rc = -1;
    MPI_T_cvar_handle h;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &n) == MPI_SUCCESS) {
        rc = MPI_T_cvar_write(h, &value) == MPI_SUCCESS ? 0 : -1;
        MPI_T_cvar_handle_free(&h);
    }
    return rc;
}

/* The items of an enum CVAR: with `item`, the value of the item so named;
 * without (NULL), the name of the item whose value is `value`, copied into
 * out[0..len).  -1: no such CVAR, enum or item. */
static inline int mmc_cvar_enum_walk(const char *name, const char *item, int value, char *out,
                                     int len)
{
    int idx, verb, bind, scope, nlen, dlen, nitems, v, provided;
    char str[256], desc[4096];
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    nlen = sizeof(str), dlen = sizeof(desc);
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(idx, str, &nlen, &verb, &dt, &et, desc, &dlen, &bind,
                            &scope) != MPI_SUCCESS || et == MPI_T_ENUM_NULL)
        return -1;
    nlen = sizeof(str);
    MPI_T_enum_get_info(et, &nitems, str, &nlen);
    for (int i = 0; i < nitems; i++) {
        nlen = sizeof(str);
        if (MPI_T_enum_get_item(et, i, &v, str, &nlen) != MPI_SUCCESS)
            continue;
        if (item ? strcmp(str, item) == 0 : v == value) {
            if (!item)
                snprintf(out, len, "%s", str);
            return v;
        }
    }
    return -1;
}

/* The value of item `item` of an enum CVAR (-1: no such CVAR or item). */
static inline int mmc_cvar_enum(const char *name, const char *item)
{
    return mmc_cvar_enum_walk(name, item, 0, NULL, 0);
}

/* A counter pvar's value through MPI_T (-1 when this MPI has no such pvar);
 * MPI_T is left initialized, see mmc_cvar_int. */
static inline long long mmc_pvar_counter(const char *name)
{
    int idx, n, provided;
    unsigned long long v = 0;
    long long ret = -1;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS &&
        MPI_T_pvar_session_create(&s) == MPI_SUCCESS) {
        if (MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &n) == MPI_SUCCESS) {
            if (MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS)
                ret = (long long) v;
            MPI_T_pvar_handle_free(s, &h);
        }
        MPI_T_pvar_session_free(&s);
    }
    return ret;
}

#endif /* MMC_MPI_H_INCLUDED */
