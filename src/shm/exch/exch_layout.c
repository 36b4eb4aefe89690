/*
 * mpich-multichannel: the exchange collectives' layout and CVAR (exch_layout.h).
 */
#include "exch_layout.h"

int MPIDI_EXCH_max_size(int cvar, size_t * max_bytes)
{
    if (cvar == -1) {
        *max_bytes = MPIDI_EXCH_SIZE_DEFAULT;
        return 0;
    }
    if (cvar < 0 || cvar > MPIDI_EXCH_SIZE_LIMIT)
        return MPIDI_EXCH_EINVAL_SIZE;
    *max_bytes = (size_t) cvar;
    return 0;
}

void MPIDI_EXCH_layout(int nranks, size_t max_bytes, MPIDI_EXCH_layout_t * l)
{
    size_t raw = MPIDI_EXCH_DATA_OFFSET + max_bytes;
    l->max_bytes = max_bytes;
    l->buf_bytes = (raw + MPIDI_EXCH_LINE - 1) / MPIDI_EXCH_LINE * MPIDI_EXCH_LINE;
    l->total = (size_t) nranks * MPIDI_EXCH_DEPTH * l->buf_bytes;
}
