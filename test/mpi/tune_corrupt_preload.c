/*
 * LD_PRELOAD library for mpich-mc-tune's probe: every MPI_Isend of
 * MMC_CORRUPT_MIN bytes of MPI_BYTE or more leaves with its last byte
 * flipped, as a path that damaged data would deliver it.  The probe's only
 * sends that large by MPI_Isend are the windows of its eager-limit contest,
 * whose first window the receiver checks byte by byte.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

typedef int (*isend_fn) (const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request * req)
{
    static isend_fn real;
    static unsigned char *copy;
    static const void *copied;
    static int size;
    const char *min = getenv("MMC_CORRUPT_MIN");
    if (!real)
        real = (isend_fn) dlsym(RTLD_NEXT, "MPI_Isend");
    if (min && type == MPI_BYTE && count > 0 && count >= atoi(min)) {
        /* one damaged copy per buffer and size: a window's sends all leave
         * from it, and the previous window has completed before it changes */
        if (buf != copied || count != size) {
            unsigned char *c = realloc(copy, count);
            if (c) {
                copy = c;
                memcpy(copy, buf, count);
                copy[count - 1] ^= 0xff;
                copied = buf;
                size = count;
            }
        }
        if (buf == copied && count == size)
            buf = copy;
    }
    return real(buf, count, type, dest, tag, comm, req);
}
