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

/* MPIR_CVAR_CH4_TCP_PORT_RANGE's two ends; 0 when it is unset or not LO:HI */
static inline int raw_port_range(int *lo, int *hi)
{
    const char *range = getenv("MPIR_CVAR_CH4_TCP_PORT_RANGE");
    return range && sscanf(range, "%d:%d", lo, hi) == 2;
}

/* The port this process listens on within MPIR_CVAR_CH4_TCP_PORT_RANGE, or
 * 0: the range's first port may be taken (an outgoing connection's ephemeral
 * port) when the rank binds, and then it listens on the next. */
static inline int raw_own_listen_port(void)
{
    int lo, hi;
    if (!raw_port_range(&lo, &hi))
        return 0;
    for (int fd = 0; fd < 4096; fd++) {
        int on = 0;
        socklen_t olen = sizeof(on);
        struct sockaddr_in sa;
        socklen_t slen = sizeof(sa);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) == 0 && on &&
            getsockname(fd, (struct sockaddr *) &sa, &slen) == 0 && sa.sin_family == AF_INET &&
            ntohs(sa.sin_port) >= lo && ntohs(sa.sin_port) <= hi)
            return ntohs(sa.sin_port);
    }
    return 0;
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

/* A packet socket that sees every packet to and from this host (AF_PACKET,
 * SOCK_DGRAM, ETH_P_ALL: a socket for IP alone sees no outgoing packets;
 * it needs CAP_NET_RAW), with room for a burst while its process waits for
 * a CPU; -1 with errno set. */
static inline int raw_packet_socket(void)
{
    int sock = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)), sz = 8 << 20;
    if (sock >= 0 && setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
        setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    return sock;
}

#define RAW_SEGS 256
#define RAW_SEG_MAX 256

/* The data segments seen so far (the last RAW_SEGS, the first RAW_SEG_MAX
 * bytes of each), kept so that a stream is put together by sequence number
 * whatever order the tap saw them in and however often. */
typedef struct {
    uint32_t saddr, daddr, seq;
    uint16_t sport, dport, len;
    uint8_t data[RAW_SEG_MAX];
} raw_seg_t;

/* The bytes of s's stream from sequence number s->seq on, up to want, into
 * out; returns how many follow each other without a gap. */
static inline size_t raw_assemble(const raw_seg_t * segs, int nsegs, const raw_seg_t * s,
                                  uint8_t * out, size_t want)
{
    size_t have = 0;
    int i, found = 1;
    while (have < want && found) {
        uint32_t pos = s->seq + (uint32_t) have;
        found = 0;
        for (i = 0; i < nsegs; i++) {
            const raw_seg_t *t = &segs[i];
            uint32_t off = pos - t->seq;
            if (t->saddr != s->saddr || t->sport != s->sport || t->daddr != s->daddr ||
                t->dport != s->dport || off >= t->len)
                continue;
            size_t n = t->len - off < want - have ? t->len - off : want - have;
            memcpy(out + have, t->data + off, n);
            have += n;
            found = 1;
            break;
        }
    }
    return have;
}

/* On a raw_packet_socket, the initiator's first want bytes (at most
 * RAW_SEG_MAX) of the first connection seen from or to this host whose
 * stream starts with a frame of opcode op, and where it went; 0 after 30 s
 * without, with what was seen on stderr.  Every such stream is followed: a
 * connection that loses a simultaneous connect carries nothing after its
 * hello. */
static inline long raw_capture(int sock, uint8_t op, uint8_t * out, size_t want, char *dst_ip,
                               int *dst_port)
{
    static raw_seg_t segs[RAW_SEGS];
    static uint8_t pkt[65536];
    int nsegs = 0, next = 0, i;
    long packets = 0, data_segs = 0, starts = 0;
    double end = raw_now() + 30;

    if (want > RAW_SEG_MAX)
        return -1;
    while (raw_now() < end) {
        struct pollfd p = {.fd = sock,.events = POLLIN };
        if (poll(&p, 1, 1000) <= 0)
            continue;
        struct sockaddr_ll from;
        socklen_t flen = sizeof(from);
        ssize_t n = recvfrom(sock, pkt, sizeof(pkt), 0, (struct sockaddr *) &from, &flen);
        packets++;
        if (n < (ssize_t) sizeof(struct iphdr) || from.sll_protocol != htons(ETH_P_IP))
            continue;
        struct iphdr *iph = (struct iphdr *) pkt;
        if (iph->protocol != IPPROTO_TCP)
            continue;
        struct tcphdr *th = (struct tcphdr *) (pkt + iph->ihl * 4);
        size_t off = iph->ihl * 4 + th->doff * 4;
        if (ntohs(iph->tot_len) <= off || off + 2 > (size_t) n)
            continue;
        size_t len = ntohs(iph->tot_len) - off;
        if (len > (size_t) n - off)
            len = (size_t) n - off;
        data_segs++;
        raw_seg_t *s = &segs[next];
        next = (next + 1) % RAW_SEGS;
        if (nsegs < RAW_SEGS)
            nsegs++;
        s->saddr = iph->saddr;
        s->daddr = iph->daddr;
        s->sport = th->source;
        s->dport = th->dest;
        s->seq = ntohl(th->seq);
        s->len = (uint16_t) (len < RAW_SEG_MAX ? len : RAW_SEG_MAX);
        memcpy(s->data, pkt + off, s->len);
        /* a segment may complete a stream that started earlier */
        for (i = 0; i < nsegs; i++) {
            const raw_seg_t *t = &segs[i];
            if (t->len < 2 || t->data[0] != MPIDI_TCP_PROTO_VERSION || t->data[1] != op)
                continue;
            if (t == s)
                starts++;
            if (raw_assemble(segs, nsegs, t, out, want) == want) {
                inet_ntop(AF_INET, &t->daddr, dst_ip, 64);
                *dst_port = ntohs(t->dport);
                return (long) want;
            }
        }
    }
    struct {
        unsigned packets, drops;        /* the kernel's struct tpacket_stats */
    } st = { 0, 0 };
    socklen_t sl = sizeof(st);
    getsockopt(sock, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
    fprintf(stderr, "capture: in 30 s %ld packets (%u dropped by the kernel), %ld TCP data "
            "segments, %ld starting with opcode %u; the streams that start so:\n", packets,
            st.drops, data_segs, starts, op);
    for (i = 0; i < nsegs; i++) {
        const raw_seg_t *t = &segs[i];
        char a[64], b[64];
        int j = 0;
        if (t->len < 2 || t->data[0] != MPIDI_TCP_PROTO_VERSION || t->data[1] != op)
            continue;
        while (j < i && (segs[j].saddr != t->saddr || segs[j].sport != t->sport ||
                         segs[j].seq != t->seq))
            j++;
        if (j < i)
            continue;   /* seen twice: on loopback, going out and coming in */
        inet_ntop(AF_INET, &t->saddr, a, sizeof(a));
        inet_ntop(AF_INET, &t->daddr, b, sizeof(b));
        fprintf(stderr, "  %s:%d -> %s:%d, %zu of %zu bytes in order\n", a, ntohs(t->sport), b,
                ntohs(t->dport), raw_assemble(segs, nsegs, t, out, want), want);
    }
    return 0;
}

#endif /* TCP_RAW_H_INCLUDED */
