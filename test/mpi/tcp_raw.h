/*
 * Raw-socket helpers for the ch4:tcp tests that play a stranger at a rank's
 * port: capture a handshake between two processes, connect, expect the
 * rank's challenge, and see what else (if anything) the rank sends before it
 * closes the connection.
 */
#ifndef TCP_RAW_H_INCLUDED
#define TCP_RAW_H_INCLUDED

#include "tcp_proto.h"
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double raw_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* This host's address on the network the other hosts reach (not loopback). */
static inline void raw_my_ip(char *ip)
{
    struct ifaddrs *ifa, *i;
    strcpy(ip, "127.0.0.1");
    if (getifaddrs(&ifa) != 0)
        return;
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, "lo")) {
            inet_ntop(AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, ip, 64);
            break;
        }
    freeifaddrs(ifa);
}

/* A blocking TCP connection to ip:port, or -1. */
static inline int raw_connect(const char *ip, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,.sin_port = htons(port) };
    inet_pton(AF_INET, ip, &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads until EOF, a reset or timeout_s; returns the bytes read (up to cap
 * kept in buf), -1 on timeout. */
static inline long raw_read_all(int fd, uint8_t * buf, size_t cap, double timeout_s)
{
    long got = 0;
    double end = raw_now() + timeout_s;
    for (;;) {
        struct pollfd p = {.fd = fd,.events = POLLIN };
        int ms = (int) ((end - raw_now()) * 1000);
        if (ms <= 0 || poll(&p, 1, ms) <= 0)
            return -1;
        uint8_t tmp[4096];
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return got;
        if ((size_t) got < cap)
            memcpy(buf + got, tmp, (size_t) n < cap - got ? (size_t) n : cap - got);
        got += n;
    }
}

/* Reads exactly a rank's challenge: 0 and its nonce, or -1. */
static inline int raw_challenge(int fd, uint8_t * nonce, double timeout_s)
{
    uint8_t b[MPIDI_TCP_HDR_SIZE + MPIDI_TCP_CHALLENGE_SIZE];
    size_t have = 0;
    double end = raw_now() + timeout_s;
    while (have < sizeof(b)) {
        struct pollfd p = {.fd = fd,.events = POLLIN };
        int ms = (int) ((end - raw_now()) * 1000);
        if (ms <= 0 || poll(&p, 1, ms) <= 0)
            return -1;
        ssize_t n = read(fd, b + have, sizeof(b) - have);
        if (n <= 0)
            return -1;
        have += n;
    }
    MPIDI_TCP_hdr_t h;
    if (MPIDI_TCP_hdr_decode(b, 64, &h) != MPIDI_TCP_HDR_OK || h.opcode != MPIDI_TCP_OP_CHALLENGE)
        return -1;
    return MPIDI_TCP_challenge_decode(b + MPIDI_TCP_HDR_SIZE, nonce) == MPIDI_TCP_HDR_OK ? 0 : -1;
}

/* A HELLO frame claiming to be rank of a job of size, for dest, with the
 * given nonce and MAC (which a stranger can only guess or replay). */
static inline size_t raw_hello(uint8_t * frame, uint32_t rank, uint32_t size, uint32_t dest,
                               uint8_t fill)
{
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION,.opcode = MPIDI_TCP_OP_HELLO,
        .payload_sz = MPIDI_TCP_HELLO_SIZE
    };
    MPIDI_TCP_hello_t m = {.rank = rank,.size = size,.dest = dest };
    memset(m.nonce, fill, sizeof(m.nonce));
    memset(m.mac, fill ^ 0x5a, sizeof(m.mac));
    MPIDI_TCP_hdr_encode(frame, &h);
    MPIDI_TCP_hello_encode(frame + MPIDI_TCP_HDR_SIZE, &m);
    return MPIDI_TCP_HDR_SIZE + MPIDI_TCP_HELLO_SIZE;
}

/* A control message of opcode op whose body is body bytes of fill after our
 * magic: well formed, proving nothing.  Returns the frame's size. */
static inline size_t raw_frame(uint8_t * frame, uint8_t op, size_t body, uint8_t fill)
{
    MPIDI_TCP_hdr_t h = {.version = MPIDI_TCP_PROTO_VERSION,.opcode = op,.payload_sz = body };
    MPIDI_TCP_hdr_encode(frame, &h);
    memset(frame + MPIDI_TCP_HDR_SIZE, fill, body);
    MPIDI_TCP_put32(frame + MPIDI_TCP_HDR_SIZE, MPIDI_TCP_MAGIC);
    return MPIDI_TCP_HDR_SIZE + body;
}

#define RAW_FLOWS 8

/* On a packet socket (AF_PACKET, SOCK_DGRAM, ETH_P_ALL: it needs
 * CAP_NET_RAW), the initiator's bytes of the first connection seen from or
 * to this host that starts with a frame of opcode op and carries want bytes
 * (in order; a veth loses nothing), and where it went; 0 after 30 s without.
 * Several are followed at once: a connection that loses a simultaneous
 * connect carries nothing after its hello. */
static inline long raw_capture(int sock, uint8_t op, uint8_t * out, size_t want, char *dst_ip,
                               int *dst_port)
{
    static struct {
        uint32_t saddr, daddr, next;
        uint16_t sport, dport;
        size_t have;
        uint8_t buf[256];
    } f[RAW_FLOWS];
    int nflows = 0;
    double end = raw_now() + 30;

    if (want > sizeof(f[0].buf))
        return -1;
    while (raw_now() < end) {
        uint8_t pkt[65536];
        struct pollfd p = {.fd = sock,.events = POLLIN };
        if (poll(&p, 1, 1000) <= 0)
            continue;
        struct sockaddr_ll from;
        socklen_t flen = sizeof(from);
        ssize_t n = recvfrom(sock, pkt, sizeof(pkt), 0, (struct sockaddr *) &from, &flen);
        if (n < (ssize_t) sizeof(struct iphdr) || from.sll_protocol != htons(ETH_P_IP))
            continue;
        struct iphdr *iph = (struct iphdr *) pkt;
        if (iph->protocol != IPPROTO_TCP)
            continue;
        struct tcphdr *th = (struct tcphdr *) (pkt + iph->ihl * 4);
        size_t off = iph->ihl * 4 + th->doff * 4, len = ntohs(iph->tot_len) - off;
        uint8_t *data = pkt + off;
        int i;
        if (len == 0)
            continue;
        for (i = 0; i < nflows; i++)
            if (f[i].saddr == iph->saddr && f[i].sport == th->source)
                break;
        if (i == nflows) {
            if (nflows == RAW_FLOWS || len < 2 || data[0] != MPIDI_TCP_PROTO_VERSION ||
                data[1] != op)
                continue;
            f[i].saddr = iph->saddr;
            f[i].sport = th->source;
            f[i].daddr = iph->daddr;
            f[i].dport = th->dest;
            f[i].next = ntohl(th->seq);
            f[i].have = 0;
            nflows++;
        }
        if (ntohl(th->seq) != f[i].next)
            continue;
        len = len < want - f[i].have ? len : want - f[i].have;
        memcpy(f[i].buf + f[i].have, data, len);
        f[i].have += len;
        f[i].next += (uint32_t) len;
        if (f[i].have == want) {
            memcpy(out, f[i].buf, want);
            inet_ntop(AF_INET, &f[i].daddr, dst_ip, 64);
            *dst_port = ntohs(f[i].dport);
            return (long) want;
        }
    }
    return 0;
}

#endif /* TCP_RAW_H_INCLUDED */
