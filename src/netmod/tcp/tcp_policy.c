/*
 * mpich-multichannel: ch4:tcp decisions that need no MPICH (see tcp_policy.h).
 */
#include "tcp_policy.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_port(const char *s, const char *end, int *port)
{
    if (s == end || end - s > 5)
        return -1;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (!isdigit((unsigned char) *p))
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = (int) v;
    return 0;
}

int MPIDI_TCP_parse_port_range(const char *s, int *lo, int *hi)
{
    *lo = *hi = 0;
    if (s == NULL || *s == '\0')
        return 0;
    const char *colon = strchr(s, ':');
    if (colon == NULL)
        return -1;
    if (parse_port(s, colon, lo) || parse_port(colon + 1, colon + strlen(colon), hi) || *lo > *hi) {
        *lo = *hi = 0;
        return -1;
    }
    return 0;
}

long MPIDI_TCP_eager_limit(long cvar)
{
    if (cvar == -1)
        return MPIDI_TCP_EAGER_DEFAULT;
    if (cvar < 0 || cvar > MPIDI_TCP_EAGER_MAX)
        return -1;
    return cvar;
}

int MPIDI_TCP_check_bufsize(long cvar)
{
    return cvar < 0 ? -1 : 0;
}

int MPIDI_TCP_bufsize_short(long asked, long reported)
{
    if (asked <= 0)
        return 0;
    return (reported / 2) * 10 < asked * 9;
}

int MPIDI_TCP_iface_is_local_only(const MPIDI_TCP_iface_t * ifc)
{
    static const char *const virtual_prefixes[] = {
        "docker", "virbr", "br-", "veth", "vnet", "cni", "flannel", "cali", "weave",
        "lxc", "lxd", "podman", "tun", "tap", "wg", "ppp", "zt", "tailscale", "ipsec", NULL
    };
    if (ifc->flags & (MPIDI_TCP_IF_LOOPBACK | MPIDI_TCP_IF_PTP))
        return 1;
    for (int i = 0; virtual_prefixes[i]; i++)
        if (strncmp(ifc->name, virtual_prefixes[i], strlen(virtual_prefixes[i])) == 0)
            return 1;
    return 0;
}

static int usable(const MPIDI_TCP_iface_t * ifc)
{
    return (ifc->flags & MPIDI_TCP_IF_UP) && ifc->addr != 0 && !MPIDI_TCP_iface_is_local_only(ifc);
}

int MPIDI_TCP_pick_iface(const MPIDI_TCP_iface_t * ifs, int n, const char *want,
                         uint32_t hostname_addr, const char *default_route_if, int single_node)
{
    if (want && *want) {
        for (int i = 0; i < n; i++)
            if (strcmp(ifs[i].name, want) == 0 && ifs[i].addr != 0)
                return i;
        return -1;
    }
    if (hostname_addr)
        for (int i = 0; i < n; i++)
            if (ifs[i].addr == hostname_addr && usable(&ifs[i]))
                return i;
    if (default_route_if && *default_route_if)
        for (int i = 0; i < n; i++)
            if (strcmp(ifs[i].name, default_route_if) == 0 && usable(&ifs[i]))
                return i;
    for (int i = 0; i < n; i++)
        if (usable(&ifs[i]))
            return i;
    if (single_node)
        for (int i = 0; i < n; i++)
            if ((ifs[i].flags & MPIDI_TCP_IF_LOOPBACK) && ifs[i].addr != 0)
                return i;
    return -1;
}

int MPIDI_TCP_keep_incoming(int my_rank, int peer_rank, int have_outgoing)
{
    return !have_outgoing || peer_rank < my_rank;
}

double MPIDI_TCP_retry_delay(int retries)
{
    if (retries <= 1)
        return 0.001;
    double d = 0.01 * (double) (1 << (retries - 2 < 7 ? retries - 2 : 7));
    return d < 1.0 ? d : 1.0;
}

int MPIDI_TCP_peer_gone(unsigned retransmits, unsigned probes, unsigned last_ack_recv_ms,
                        int outage_s)
{
    if (retransmits == 0 && probes == 0)
        return 0;
    return last_ack_recv_ms >= (unsigned) outage_s * 1000u;
}

MPIDI_TCP_rx_mode_t MPIDI_TCP_rx_mode(size_t hdr_total, uint64_t payload_sz, size_t buffered)
{
    if (buffered >= payload_sz)
        return MPIDI_TCP_RX_SYNC;
    if (hdr_total + payload_sz <= MPIDI_TCP_READAHEAD)
        return MPIDI_TCP_RX_MORE;
    return MPIDI_TCP_RX_ASYNC;
}

int MPIDI_TCP_iov_advance(struct iovec **iov, int cnt, size_t n)
{
    struct iovec *v = *iov;
    while (cnt > 0 && n >= v->iov_len) {
        n -= v->iov_len;
        v++;
        cnt--;
    }
    if (cnt > 0 && n > 0) {
        v->iov_base = (char *) v->iov_base + n;
        v->iov_len -= n;
    }
    *iov = v;
    return cnt;
}
