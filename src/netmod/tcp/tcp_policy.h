/*
 * mpich-multichannel: ch4:tcp decisions that need no MPICH.
 *
 * CVAR parsing and limits, the published interface, which connection of a
 * simultaneous connect survives, how an incoming payload is received, and
 * iovec bookkeeping.  Plain C, unit-tested in test/unit/test_tcp.c; the
 * netmod (tcp_init.c, tcp_conn.c, tcp_rx.c) calls these.
 */
#ifndef TCP_POLICY_H_INCLUDED
#define TCP_POLICY_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Eager limit when MPIR_CVAR_CH4_TCP_EAGER_MAX_MSG_SIZE is -1: chosen from the
 * sweep in doc/tcp.md. */
#define MPIDI_TCP_EAGER_DEFAULT   (2 * 1024 * 1024)
/* Largest accepted eager limit: an unexpected eager message is held in memory
 * at its own size until a receive matches it. */
#define MPIDI_TCP_EAGER_MAX       (16 * 1024 * 1024)

/* Bytes requested from the socket when looking for the next header.  A
 * message that fits is assembled here and handed over with one copy; the
 * payload of a larger one is read straight into the receive buffer, after
 * whatever part of it this read-ahead already holds. */
#define MPIDI_TCP_READAHEAD       16384
/* After a message read straight into its receive buffer the next read asks
 * for this much only, so the following large message's headers come with
 * little of its payload (which would be copied). */
#define MPIDI_TCP_READAHEAD_AFTER_LARGE 512

/* Parses "lo:hi" (1 <= lo <= hi <= 65535); "" means any port (*lo = *hi = 0).
 * Returns 0, or -1 when malformed. */
int MPIDI_TCP_parse_port_range(const char *s, int *lo, int *hi);

/* The eager limit for a CVAR value: -1 -> default; 0..MPIDI_TCP_EAGER_MAX as
 * is; anything else -1 (invalid). */
long MPIDI_TCP_eager_limit(long cvar);

/* Socket buffer CVARs: 0 leaves the kernel's autotuning, >0 is a size,
 * negative is invalid (returns -1). */
int MPIDI_TCP_check_bufsize(long cvar);

/* Linux reports twice the size it granted; nonzero when it granted less
 * than 90% of what was asked. */
int MPIDI_TCP_bufsize_short(long asked, long reported);

/* Candidate interfaces for the published address. */
#define MPIDI_TCP_IF_UP        0x1
#define MPIDI_TCP_IF_LOOPBACK  0x2
#define MPIDI_TCP_IF_PTP       0x4      /* point-to-point: VPN tunnels, ppp */
typedef struct {
    char name[16];
    uint32_t addr;              /* IPv4, network byte order */
    unsigned flags;
} MPIDI_TCP_iface_t;

/* Interfaces that reach only this host or a private overlay: loopback,
 * point-to-point links, and container or VM bridges by their usual names. */
int MPIDI_TCP_iface_is_local_only(const MPIDI_TCP_iface_t * ifc);

/* Index of the interface whose address the netmod publishes, or -1:
 *   - want (MPIR_CVAR_CH4_TCP_IFNAME) when set: that interface, whatever it is;
 *   - else the interface the host name resolves to, if it is not local-only;
 *   - else the interface of the default route, if it is not local-only;
 *   - else the first interface that is up and not local-only;
 *   - else loopback, only when single_node (every rank on this host). */
int MPIDI_TCP_pick_iface(const MPIDI_TCP_iface_t * ifs, int n, const char *want,
                         uint32_t hostname_addr, const char *default_route_if, int single_node);

/* Simultaneous connect: both ranks keep the connection the lower rank
 * initiated.  Nonzero when an incoming HELLO from peer should be accepted. */
int MPIDI_TCP_keep_incoming(int my_rank, int peer_rank, int have_outgoing);

/* Seconds before reconnecting after a connection closed before its verdict
 * for the retries-th time (1, 2, ...): at the next timer check, then from
 * 10 ms doubling to 1 s. */
double MPIDI_TCP_retry_delay(int retries);

/* Whether a connected peer is gone, from TCP_INFO: TCP waits for an
 * acknowledgement (retransmitting, or probing a zero window or an idle
 * connection) and the host has acknowledged nothing for outage_s seconds.
 * A live peer, however busy, answers probes, which clears probes. */
int MPIDI_TCP_peer_gone(unsigned retransmits, unsigned probes, unsigned last_ack_recv_ms,
                        int outage_s);

/* How a message whose header is buffered gets its payload. */
typedef enum {
    MPIDI_TCP_RX_SYNC,          /* all buffered: hand the handler a pointer */
    MPIDI_TCP_RX_MORE,          /* small: read more into the read-ahead buffer first */
    MPIDI_TCP_RX_ASYNC          /* large: ask the handler for the request, read into it */
} MPIDI_TCP_rx_mode_t;

MPIDI_TCP_rx_mode_t MPIDI_TCP_rx_mode(size_t hdr_total, uint64_t payload_sz, size_t buffered);

/* Drops n bytes from the front of an iovec array; returns the entries left
 * and moves *iov past the finished ones. */
int MPIDI_TCP_iov_advance(struct iovec **iov, int cnt, size_t n);

#endif /* TCP_POLICY_H_INCLUDED */
