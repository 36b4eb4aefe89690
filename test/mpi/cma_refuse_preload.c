/*
 * LD_PRELOAD library for the CMA tests: process_vm_readv and
 * process_vm_writev as a kernel that refuses.  MMC_CMA_ALLOW=N lets the first
 * N calls through (the test reads of MPI_Init are one per local peer), then
 * every call fails with MMC_CMA_ERRNO (EPERM, ESRCH, EFAULT or ENOSYS;
 * default EPERM), or, with MMC_CMA_SHORT=1, moves at most half of what it is
 * asked for (a partial copy that must be resumed).  MMC_CMA_OPS=write
 * refuses only writes (the sender's part of a split message), =read only
 * reads; default both.  A process's calls on itself pass and are not
 * counted: UCX probes CMA that way when its netmod starts, our CMA never.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef ssize_t(*vm_fn) (pid_t, const struct iovec *, unsigned long, const struct iovec *,
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

/* op 0 = read, 1 = write */
static ssize_t maybe_refuse(int op, pid_t pid, const struct iovec *local, unsigned long liovcnt,
                            const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
    static const char *const names[2][2] = { {"read", "process_vm_readv"},
    {"write", "process_vm_writev"}
    };
    static vm_fn reals[2];
    static long calls;
    if (!reals[op])
        reals[op] = (vm_fn) dlsym(RTLD_NEXT, names[op][1]);
    vm_fn real = reals[op];
    const char *allow = getenv("MMC_CMA_ALLOW"), *ops = getenv("MMC_CMA_OPS");
    if (pid == getpid() || (allow && calls++ < atol(allow)) || (ops && strcmp(ops, names[op][0])))
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

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
                         const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
    return maybe_refuse(0, pid, local, liovcnt, remote, riovcnt, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long liovcnt,
                          const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
    return maybe_refuse(1, pid, local, liovcnt, remote, riovcnt, flags);
}
