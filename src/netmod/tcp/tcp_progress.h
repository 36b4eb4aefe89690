/*
 * mpich-multichannel: ch4:tcp progress entry (inline).  ch4:tcp serves
 * vci 0; the work is in tcp_progress.c.
 */
#ifndef TCP_PROGRESS_H_INCLUDED
#define TCP_PROGRESS_H_INCLUDED

#include "tcp_impl.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_progress(int vci, int blocking)
{
    int made_progress = 0;
    if (vci != 0)
        return MPI_SUCCESS;
    return MPIDI_TCP_progress(&made_progress);
}

#endif /* TCP_PROGRESS_H_INCLUDED */
