/*
 * mpich-multichannel: fast boxes, the parts of fbox_ring.h that are not on
 * the data path: the CVARs' values, claiming a box, finding claimed ones.
 */
#include "fbox_ring.h"

int MPIDI_FBOX_configure(int size, int max_peers, int max_msg, int nlocal,
                         MPIDI_FBOX_config_t * out)
{
    if (size == -1)
        size = MPIDI_FBOX_SIZE_DEFAULT;
    if (size < 0 || (size > 0 && (size < MPIDI_FBOX_SIZE_MIN || size > MPIDI_FBOX_SIZE_MAX ||
                                  (size & (size - 1)) != 0)))
        return MPIDI_FBOX_EINVAL_SIZE;
    if (max_peers == -1)
        max_peers = MPIDI_FBOX_MAX_PEERS_DEFAULT;
    if (max_peers < 0)
        return MPIDI_FBOX_EINVAL_MAX_PEERS;
    if (max_msg == -1)
        max_msg = size / 4 < MPIDI_FBOX_MAX_MSG_DEFAULT ? size / 4 : MPIDI_FBOX_MAX_MSG_DEFAULT;
    if (max_msg < 0 || max_msg > size / 4)
        return MPIDI_FBOX_EINVAL_MAX_MSG;

    if (max_peers > nlocal - 1)
        max_peers = nlocal > 1 ? nlocal - 1 : 0;
    out->size = max_peers > 0 ? (size_t) size : 0;
    out->max_peers = out->size ? max_peers : 0;
    out->max_msg = (size_t) max_msg;
    return 0;
}

void MPIDI_FBOX_claim(MPIDI_FBOX_tx_t * tx, MPIDI_FBOX_inbox_t * in,
                      const MPIDI_FBOX_config_t * c, int me)
{
    uint32_t i = __atomic_fetch_add(&in->claimed, 1, __ATOMIC_ACQ_REL);

    if (i >= (uint32_t) c->max_peers) {
        tx->state = MPIDI_FBOX_NONE;
        return;
    }
    tx->box = MPIDI_FBOX_box(in, c, (int) i);
    tx->head = tx->tail = 0;
    tx->iq_seen = 0;
    tx->wrap = NULL;
    __atomic_store_n(&tx->box->owner, (uint32_t) me + 1, __ATOMIC_RELEASE);
    tx->state = MPIDI_FBOX_CLAIMED;
}

int MPIDI_FBOX_discover(MPIDI_FBOX_inbox_t * in, const MPIDI_FBOX_config_t * c,
                        MPIDI_FBOX_rx_t * rx, int *n)
{
    uint32_t claimed = __atomic_load_n(&in->claimed, __ATOMIC_ACQUIRE);
    int found = 0;

    if (claimed > (uint32_t) c->max_peers)
        claimed = (uint32_t) c->max_peers;
    while ((uint32_t) * n < claimed) {
        MPIDI_FBOX_box_t *box = MPIDI_FBOX_box(in, c, *n);
        uint32_t owner = __atomic_load_n(&box->owner, __ATOMIC_ACQUIRE);
        if (owner == 0)
            break;
        rx[*n].box = box;
        rx[*n].tail = 0;
        rx[*n].taken = 0;
        rx[*n].src = (int) owner - 1;
        (*n)++;
        found++;
    }
    return found;
}
