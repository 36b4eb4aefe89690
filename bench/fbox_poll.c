/*
 * The cost of an empty receive poll of the fast boxes (src/shm/fbox), what
 * every progress pass pays: a rank with P local peers polls the boxes of the
 * min(P, MAX_PEERS) of them that claimed one.  Plain C, no MPI:
 *
 *   cc -O2 -std=c11 -D_DEFAULT_SOURCE -I src/shm/fbox bench/fbox_poll.c src/shm/fbox/fbox_ring.c
 *   fbox_poll [max_peers]          (default 32, MPIR_CVAR_CH4_SHM_FASTBOX_MAX_PEERS's)
 *
 * For 1, 8, 64 and 256 local peers (every one of them having sent once, so
 * every box it may have is claimed and empty), one line:
 *   peers=P boxes=B ns_per_poll=T bytes_per_node=M   (best of 5 runs of 10^7 polls)
 * bytes_per_node: the node's shared region for P + 1 ranks at the default box size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fbox_ring.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    int max_peers = argc > 1 ? atoi(argv[1]) : MPIDI_FBOX_MAX_PEERS_DEFAULT;
    int peers_list[] = { 1, 8, 64, 256 };

    for (int k = 0; k < 4; k++) {
        int peers = peers_list[k], nlocal = peers + 1;
        MPIDI_FBOX_config_t c;
        if (MPIDI_FBOX_configure(-1, max_peers, -1, nlocal, &c) != 0)
            return 2;
        size_t bytes = MPIDI_FBOX_region_bytes(&c, nlocal);
        void *region = aligned_alloc(4096, bytes);
        memset(region, 0, bytes);
        MPIDI_FBOX_inbox_t *in = MPIDI_FBOX_inbox(region, &c, 0);
        MPIDI_FBOX_tx_t tx;
        for (int s = 1; s <= peers; s++) {
            memset(&tx, 0, sizeof(tx));
            MPIDI_FBOX_claim(&tx, in, &c, s);
        }
        MPIDI_FBOX_rx_t *rx = calloc(c.max_peers + 1, sizeof(*rx));
        int n = 0;
        MPIDI_FBOX_discover(in, &c, rx, &n);
        double best = 1e30;
        long polls = 10000000, found = 0;
        for (int run = 0; run < 5; run++) {
            double t0 = now_ns();
            for (long i = 0; i < polls; i++)
                for (int b = 0; b < n; b++)
                    found += MPIDI_FBOX_rx_peek(&rx[b], c.size) != NULL;
            double t = (now_ns() - t0) / polls;
            if (t < best)
                best = t;
        }
        printf("peers=%d boxes=%d ns_per_poll=%.2f bytes_per_node=%zu%s\n", peers, n, best,
               bytes, found ? " (found a record: wrong)" : "");
        free(rx);
        free(region);
    }
    return 0;
}
