/*
 * mpich-multichannel: ch4:tcp progress entry (inline).  ch4:tcp serves
 * vci 0; the work is in tcp_progress.c.
 */
#ifndef TCP_PROGRESS_H_INCLUDED
#define TCP_PROGRESS_H_INCLUDED

#include "tcp_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, MMC_PROGRESS_PARAM)
{
    int made = 0;
    if (vci != 0)
        return MPI_SUCCESS;
    int mpi_errno = MPIDI_TCP_progress(&made);
    MMC_PROGRESS_MADE(made);
    return mpi_errno;
}

#endif /* TCP_PROGRESS_H_INCLUDED */
