/*
 * LD_PRELOAD library for tcp_faults' nomem scenarios: while the test has
 * called mmc_nomem(1), every malloc, calloc and realloc of the process fails,
 * as they do when memory runs out.  glibc's own entry points serve the rest.
 */
#include <errno.h>
#include <stddef.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

static volatile int failing;

void mmc_nomem(int on)
{
    failing = on;
}

void *malloc(size_t n)
{
    if (failing) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    if (failing) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    if (failing) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}
