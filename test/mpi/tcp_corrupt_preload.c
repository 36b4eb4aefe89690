/*
 * LD_PRELOAD library for tcp_faults' corrupt scenario: in the rank named by
 * MMC_CORRUPT_RANK (PMI_RANK), the first ch4:tcp send message with tag
 * MMC_CORRUPT_TAG leaves with one field broken, as a buggy rank would send
 * it.  MMC_CORRUPT names the field: srcrank (the MPIDIG source rank), vci,
 * handler (CMA's split handler, which only shared memory may carry), hdrsize
 * (the MPIDIG header length), eager (a payload above the eager limit).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "tcp_proto.h"

/* MPIDIG_hdr_t: src_rank, tag, context id, ..., data_sz at 32 (LP64) */
#define AM_SRC_RANK 0
#define AM_TAG      4
#define AM_DATA_SZ  32
#define PREFIX      (MPIDI_TCP_HDR_SIZE + 40)

static int armed = -1;

/* the rank as the launcher tells it: hydra and Slurm's pmi2 set PMI_RANK,
 * a PMIx launcher PMIX_RANK */
static int arm(void)
{
    const char *r = getenv("MMC_CORRUPT_RANK"), *me = getenv("PMI_RANK");
    if (!me)
        me = getenv("PMIX_RANK");
    return r && me && getenv("MMC_CORRUPT") && atoi(r) == atoi(me);
}

static void corrupt(uint8_t * b)
{
    const char *kind = getenv("MMC_CORRUPT");
    int32_t v;
    if (!strcmp(kind, "srcrank")) {
        memcpy(&v, b + MPIDI_TCP_HDR_SIZE + AM_SRC_RANK, 4);
        v += 1;
        memcpy(b + MPIDI_TCP_HDR_SIZE + AM_SRC_RANK, &v, 4);
    } else if (!strcmp(kind, "vci")) {
        b[4] = 5;
    } else if (!strcmp(kind, "handler")) {
        b[2] = 40;
    } else if (!strcmp(kind, "hdrsize")) {
        MPIDI_TCP_put16(b + 6, (uint16_t) (MPIDI_TCP_get16(b + 6) + 8));
    } else if (!strcmp(kind, "eager")) {
        int64_t big = 64 << 20;
        MPIDI_TCP_put64(b + 8, (uint64_t) big);
        memcpy(b + MPIDI_TCP_HDR_SIZE + AM_DATA_SZ, &big, 8);
    }
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    static ssize_t(*real) (int, const struct msghdr *, int);
    if (!real)
        real = (ssize_t(*)(int, const struct msghdr *, int)) dlsym(RTLD_NEXT, "sendmsg");
    if (armed < 0)
        armed = arm();
    if (!armed || m->msg_iovlen < 1)
        return real(fd, m, flags);

    /* the frame's first bytes, wherever the iovecs split them */
    uint8_t b[PREFIX];
    size_t have = 0;
    for (size_t i = 0; i < m->msg_iovlen && have < PREFIX; i++) {
        size_t n = m->msg_iov[i].iov_len < PREFIX - have ? m->msg_iov[i].iov_len : PREFIX - have;
        memcpy(b + have, m->msg_iov[i].iov_base, n);
        have += n;
    }
    int32_t tag;
    memcpy(&tag, b + MPIDI_TCP_HDR_SIZE + AM_TAG, 4);
    if (have < PREFIX || b[0] != MPIDI_TCP_PROTO_VERSION || b[1] != MPIDI_TCP_OP_AM || b[2] != 0 ||
        tag != atoi(getenv("MMC_CORRUPT_TAG") ? getenv("MMC_CORRUPT_TAG") : "777"))
        return real(fd, m, flags);
    armed = 0;
    corrupt(b);

    /* the same bytes, the first PREFIX of them replaced */
    struct iovec v[16];
    struct msghdr copy = *m;
    size_t k = 0, skip = PREFIX;
    v[k++] = (struct iovec) { b, PREFIX };
    for (size_t i = 0; i < m->msg_iovlen && k < 16; i++) {
        size_t len = m->msg_iov[i].iov_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        v[k++] = (struct iovec) { (char *) m->msg_iov[i].iov_base + skip, len - skip };
        skip = 0;
    }
    copy.msg_iov = v;
    copy.msg_iovlen = k;
    return real(fd, &copy, flags);
}
