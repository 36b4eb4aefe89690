/*
 * LD_PRELOAD library for the CMA tests: process_vm_readv as a kernel that
 * refuses.  MMC_CMA_ALLOW=N lets the first N calls through (the test reads of
 * MPI_Init are one per local peer), then every call fails with
 * MMC_CMA_ERRNO (EPERM, ESRCH, EFAULT or ENOSYS; default EPERM), or, with
 * MMC_CMA_SHORT=1, moves at most half of what it is asked for (a partial read
 * that must be resumed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

typedef ssize_t(*readv_fn) (pid_t, const struct iovec *, unsigned long, const struct iovec *,
                            unsigned long, unsigned long);

static int errno_of(const char *s)
{
    if (s && !strcmp(s, "ESRCH"))
        return ESRCH;
    if (s && !strcmp(s, "EFAULT"))
        return EFAULT;
    if (s && !strcmp(s, "ENOSYS"))
        return ENOSYS;
    return EPERM;
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
                         const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
    static long calls;
    static readv_fn real;
    const char *allow = getenv("MMC_CMA_ALLOW");
    if (!real)
        real = (readv_fn) dlsym(RTLD_NEXT, "process_vm_readv");
    if (allow && calls++ < atol(allow))
        return real(pid, local, liovcnt, remote, riovcnt, flags);
    if (getenv("MMC_CMA_SHORT")) {
        /* the first half of the first local entry only */
        struct iovec l = local[0];
        l.iov_len = l.iov_len > 1 ? l.iov_len / 2 : 1;
        return real(pid, &l, 1, remote, riovcnt, flags);
    }
    errno = errno_of(getenv("MMC_CMA_ERRNO"));
    return -1;
}
