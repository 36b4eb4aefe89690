/*
 * mpich-multichannel: decisions of the CMA single-copy path that need no
 * MPICH, unit-tested in test/unit/test_cma.c.
 *
 * The receiver of a large intra-node message reads it from the sender's
 * address space with process_vm_readv.  Both sides are described by iovec
 * lists (a window of them at a time for noncontiguous datatypes); a batch is
 * what one system call moves: at most MPIDI_CMA_IOV_MAX entries a side and
 * MPIDI_CMA_BATCH_MAX bytes (the kernel moves at most about 2 GiB per call).
 */
#ifndef CMA_POLICY_H_INCLUDED
#define CMA_POLICY_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define MPIDI_CMA_IOV_MAX     1024      /* Linux's UIO_MAXIOV */
/* MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD and ..._SPLIT_THRESHOLD at -1, for the
 * MPICH of MPICH_NUMVERSION numversion: measured per series (doc/cma.md,
 * doc/mpich-versions.md).  4.x's copy path keeps up with split CMA up to
 * 4 MiB; 5.0's moves half as much from 256 KiB on, and split CMA passes it
 * at 1 MiB, where CMA must start split to win. */
#define MPIDI_CMA_DEFAULT(numversion) \
    ((size_t) ((numversion) >= 50000000 ? 1 : 4) * 1024 * 1024)
#define MPIDI_CMA_THRESHOLD_DEFAULT(numversion) MPIDI_CMA_DEFAULT(numversion)
#define MPIDI_CMA_BATCH_MAX   ((size_t) 1 << 30)

/* Where a transfer stands in an iovec list: entry idx, off bytes into it. */
typedef struct {
    int idx;
    size_t off;
} MPIDI_CMA_pos_t;

/* Fills lout/rout (room for max_iov entries each) with the next batch, from
 * positions lpos/rpos of local[nlocal] and remote[nremote]; zero-length
 * entries are skipped.  Returns the bytes the batch covers, the same on both
 * sides: 0 when either list is exhausted. */
size_t MPIDI_CMA_batch(const struct iovec *local, int nlocal, MPIDI_CMA_pos_t lpos,
                       const struct iovec *remote, int nremote, MPIDI_CMA_pos_t rpos,
                       int max_iov, size_t max_bytes,
                       struct iovec *lout, int *nl, struct iovec *rout, int *nr);

/* Moves pos forward by n bytes of iov[niov]. */
void MPIDI_CMA_advance(const struct iovec *iov, int niov, MPIDI_CMA_pos_t * pos, size_t n);

/* Why CMA cannot be used between two local ranks, decided at MPI_Init. */
typedef enum {
    MPIDI_CMA_OK = 0,
    MPIDI_CMA_OFF,              /* MPIR_CVAR_CH4_CMA_ENABLE=0 */
    MPIDI_CMA_YAMA,             /* kernel.yama.ptrace_scope >= 2 without CAP_SYS_PTRACE */
    MPIDI_CMA_USERNS,           /* the peer is in another user namespace */
    MPIDI_CMA_PROBE             /* a test read of the peer failed */
} MPIDI_CMA_avail_t;

/* ptrace_scope: the Yama setting, -1 when Yama is absent. */
MPIDI_CMA_avail_t MPIDI_CMA_availability(int enable, int ptrace_scope, int cap_sys_ptrace,
                                         int same_userns, int probe_errno);
const char *MPIDI_CMA_avail_str(MPIDI_CMA_avail_t why);

/* The split: a single process_vm_readv keeps one core busy while the
 * sender's core idles in its wait, so the receiver of a large message between
 * contiguous buffers asks the sender to write the second part of it with
 * process_vm_writev while it reads the first.
 * MPIR_CVAR_CH4_IPC_CMA_SPLIT_THRESHOLD -1: where CMA starts (above) */
#define MPIDI_CMA_SPLIT_DEFAULT(numversion) MPIDI_CMA_DEFAULT(numversion)
#define MPIDI_CMA_PAGE 4096

/* The byte at which the sender's part of a bytes-long message starts: half
 * of it, on a page boundary once it is at least two pages.  0 = not split:
 * threshold 0 (never), a message below the threshold, or a noncontiguous
 * buffer on either side (contig 0). */
size_t MPIDI_CMA_split_point(size_t bytes, size_t threshold, int contig);

#endif /* CMA_POLICY_H_INCLUDED */
