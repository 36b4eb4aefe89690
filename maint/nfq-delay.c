/*
 * Holds every packet of a netfilter queue for a fixed delay, then accepts
 * it, in arrival order: a one-way link delay for maint/netns-cluster's WAN
 * mode (this kernel has no sch_netem).  Built and started by the script.
 *
 *   nfq-delay QUEUE_NUM DELAY_MS
 *
 * Packets are queued with metadata only (no payload copy) and whole, as the
 * sender's TCP segmentation offload built them (NFQA_CFG_F_GSO: without it
 * the kernel splits each into MTU packets in software first, one queue
 * message each), so the daemon keeps up with a gigabit link on a core it
 * shares with busy-polling ranks; the queue holds up to 1 << 20 packets.
 * Each is released at its due time to the microsecond (ppoll), not in
 * millisecond bursts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING (1 << 20)

static uint32_t ids[RING];
static double due[RING];
static unsigned head, tail;     /* pending packets are [head, tail) */
static double delay;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int on_packet(struct nfq_q_handle *q, struct nfgenmsg *msg, struct nfq_data *nfa,
                     void *data)
{
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    if (ph == NULL)
        return 0;
    if (tail - head == RING) {  /* full: let it through rather than stall the link */
        nfq_set_verdict(q, ntohl(ph->packet_id), NF_ACCEPT, 0, NULL);
        return 0;
    }
    ids[tail % RING] = ntohl(ph->packet_id);
    due[tail % RING] = now() + delay;
    tail++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: nfq-delay QUEUE_NUM DELAY_MS\n");
        return 2;
    }
    delay = atof(argv[2]) / 1e3;
    struct nfq_handle *h = nfq_open();
    if (!h) {
        perror("nfq_open");
        return 1;
    }
    nfq_unbind_pf(h, AF_INET);
    if (nfq_bind_pf(h, AF_INET) < 0) {
        perror("nfq_bind_pf");
        return 1;
    }
    struct nfq_q_handle *q = nfq_create_queue(h, (uint16_t) atoi(argv[1]), on_packet, NULL);
    if (!q || nfq_set_mode(q, NFQNL_COPY_META, 0) < 0) {
        perror("nfq_create_queue");
        return 1;
    }
    if (nfq_set_queue_flags(q, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0)
        perror("nfq-delay: NFQA_CFG_F_GSO (packets are segmented before queueing)");
    nfq_set_queue_maxlen(q, RING);
    nfnl_rcvbufsiz(nfq_nfnlh(h), 64 << 20);
    int fd = nfq_fd(h);
    char buf[65536];
    for (;;) {
        struct timespec wait = { 0, 0 }, *until = NULL;
        if (tail != head) {
            double d = due[head % RING] - now();
            if (d > 0)
                wait = (struct timespec) {(time_t) d, (long) ((d - (time_t) d) * 1e9)};
            until = &wait;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN };
        if (ppoll(&p, 1, until, NULL) > 0) {
            for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n <= 0)
                    break;
                nfq_handle_packet(h, buf, (int) n);
            }
        }
        double t = now();
        while (tail != head && due[head % RING] <= t) {
            nfq_set_verdict(q, ids[head % RING], NF_ACCEPT, 0, NULL);
            head++;
        }
    }
}
