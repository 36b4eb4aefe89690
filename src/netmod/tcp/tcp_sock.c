/*
 * mpich-multichannel: ch4:tcp socket set-up: options, the listening socket
 * and the address it publishes; the log of refused connections, which every
 * layer above may refuse.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static void warn_short_buffer(const char *cvar, int asked, int reported, const char *sysctl)
{
    static int warned;
    if (warned || MPIR_Process.local_rank != 0)
        return;
    warned = 1;
    fprintf(stderr, "ch4:tcp warning: %s=%d but the kernel granted %d bytes; "
            "raise %s (e.g. sysctl -w %s=%d) to get the size asked for\n",
            cvar, asked, reported / 2, sysctl, sysctl, asked);
}

static int set_bufsize(int fd, int opt, int size, const char *cvar, const char *sysctl)
{
    int mpi_errno = MPI_SUCCESS;
    int got;
    socklen_t len = sizeof(got);

    if (size == 0)
        return MPI_SUCCESS;     /* kernel autotuning */
    int rc = setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
    MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_sockopt", "**tcp_sockopt %d",
                         errno);
    rc = getsockopt(fd, SOL_SOCKET, opt, &got, &len);
    MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_sockopt", "**tcp_sockopt %d",
                         errno);
    if (MPIDI_TCP_bufsize_short(size, got))
        warn_short_buffer(cvar, size, got, sysctl);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Options applied before listen() or connect(), so the window scale the
 * handshake negotiates fits the buffers. */
int MPIDI_TCP_sock_setup(int fd, int is_listener)
{
    int mpi_errno = MPI_SUCCESS;
    int one = 1;

    mpi_errno = set_bufsize(fd, SO_SNDBUF, MPIDI_TCP_global.sndbuf,
                            "MPIR_CVAR_CH4_TCP_SNDBUF_SIZE", "net.core.wmem_max");
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = set_bufsize(fd, SO_RCVBUF, MPIDI_TCP_global.rcvbuf,
                            "MPIR_CVAR_CH4_TCP_RCVBUF_SIZE", "net.core.rmem_max");
    MPIR_ERR_CHECK(mpi_errno);
    if (is_listener)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (MPIDI_TCP_global.nodelay)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* The interface of the default route, from /proc/net/route. */
static void default_route_iface(char *name, size_t len)
{
    char line[256], ifn[64];
    unsigned long dest;
    FILE *f = fopen("/proc/net/route", "r");

    name[0] = '\0';
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%63s %lx", ifn, &dest) == 2 && dest == 0) {
            MPL_strncpy(name, ifn, len);
            break;
        }
    }
    fclose(f);
}

static uint32_t hostname_addr(void)
{
    char host[256];
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
    uint32_t addr = 0;

    if (gethostname(host, sizeof(host)) != 0 || getaddrinfo(host, NULL, &hints, &res) != 0)
        return 0;
    if (res)
        addr = ((struct sockaddr_in *) res->ai_addr)->sin_addr.s_addr;
    freeaddrinfo(res);
    return addr;
}

int MPIDI_TCP_choose_address(struct in_addr *ip)
{
    int mpi_errno = MPI_SUCCESS;
    struct ifaddrs *ifa_list = NULL;
    MPIDI_TCP_iface_t ifs[64];
    int n = 0;
    char route_if[64];

    int rc = getifaddrs(&ifa_list);
    MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_ifaddrs", "**tcp_ifaddrs %d",
                         errno);
    for (struct ifaddrs * ifa = ifa_list; ifa && n < 64; ifa = ifa->ifa_next) {
        if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET)
            continue;
        MPIDI_TCP_iface_t *i = &ifs[n++];
        memset(i, 0, sizeof(*i));
        MPL_strncpy(i->name, ifa->ifa_name, sizeof(i->name));
        i->addr = ((struct sockaddr_in *) ifa->ifa_addr)->sin_addr.s_addr;
        i->flags = ((ifa->ifa_flags & IFF_UP) ? MPIDI_TCP_IF_UP : 0) |
            ((ifa->ifa_flags & IFF_LOOPBACK) ? MPIDI_TCP_IF_LOOPBACK : 0) |
            ((ifa->ifa_flags & IFF_POINTOPOINT) ? MPIDI_TCP_IF_PTP : 0);
    }
    freeifaddrs(ifa_list);

    default_route_iface(route_if, sizeof(route_if));
    int pick = MPIDI_TCP_pick_iface(ifs, n, MPIR_CVAR_CH4_TCP_IFNAME, hostname_addr(),
                                    route_if, MPIR_Process.num_nodes == 1);
    if (pick < 0 && MPIR_CVAR_CH4_TCP_IFNAME[0])
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                             "MPIR_CVAR_CH4_TCP_IFNAME (no interface with an IPv4 address)",
                             MPIR_CVAR_CH4_TCP_IFNAME);
    MPIR_ERR_CHKANDJUMP(pick < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_noiface");
    ip->s_addr = ifs[pick].addr;
    MPL_strncpy(MPIDI_TCP_global.ifname, ifs[pick].name, sizeof(MPIDI_TCP_global.ifname));

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_TCP_sock_listen(void)
{
    int mpi_errno = MPI_SUCCESS;
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int lo = MPIDI_TCP_global.port_lo, hi = MPIDI_TCP_global.port_hi, rc = -1, err = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    mpi_errno = MPIDI_TCP_choose_address(&sa.sin_addr);
    MPIR_ERR_CHECK(mpi_errno);

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    MPIR_ERR_CHKANDJUMP1(fd < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_socket", "**tcp_socket %d",
                         errno);
    MPIDI_TCP_global.listen_fd = fd;
    mpi_errno = MPIDI_TCP_sock_setup(fd, 1);
    MPIR_ERR_CHECK(mpi_errno);

    if (lo == 0) {
        sa.sin_port = 0;
        rc = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
        err = errno;
    } else {
        /* start at a different port on each local rank to avoid racing for the same one */
        int span = hi - lo + 1;
        for (int i = 0; i < span && rc < 0; i++) {
            sa.sin_port = htons((uint16_t) (lo + (MPIR_Process.local_rank + i) % span));
            rc = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
            err = errno;
        }
    }
    MPIR_ERR_CHKANDJUMP2(rc < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_bind", "**tcp_bind %s %d",
                         MPIR_CVAR_CH4_TCP_PORT_RANGE[0] ? MPIR_CVAR_CH4_TCP_PORT_RANGE : "any",
                         err);
    rc = listen(fd, SOMAXCONN);
    MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**tcp_listen", "**tcp_listen %d",
                         errno);
    getsockname(fd, (struct sockaddr *) &sa, &len);
    MPIDI_TCP_global.me.addr.ip = sa.sin_addr;
    MPIDI_TCP_global.me.addr.port = sa.sin_port;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

const char *MPIDI_TCP_addr_str(const MPIDI_TCP_bc_t * a, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a->ip, ip, sizeof(ip));
    snprintf(buf, len, "%s:%d", ip, ntohs(a->port));
    return buf;
}

const char *MPIDI_TCP_sockaddr_str(const struct sockaddr_in *sa, char *buf, size_t len)
{
    MPIDI_TCP_bc_t a = {.ip = sa->sin_addr,.port = sa->sin_port };
    return MPIDI_TCP_addr_str(&a, buf, len);
}

/* refusals logged per window; the rest are counted */
#define LOG_BURST  8
#define LOG_WINDOW 10.0

static struct {
    double window_end;
    int logged, suppressed;
} log_state;

void MPIDI_TCP_refused(const struct sockaddr_in *from, const char *why)
{
    double now = MPIDI_TCP_now();
    char addr[64];

    if (now >= log_state.window_end) {
        if (log_state.suppressed)
            fprintf(stderr, "ch4:tcp warning: rank %d refused %d more connections in %.0f s "
                    "(not shown)\n", MPIDI_TCP_global.rank, log_state.suppressed, LOG_WINDOW);
        log_state.window_end = now + LOG_WINDOW;
        log_state.logged = log_state.suppressed = 0;
    }
    if (log_state.logged++ >= LOG_BURST) {
        log_state.suppressed++;
        return;
    }
    fprintf(stderr, "ch4:tcp warning: rank %d refused a connection from %s: %s\n",
            MPIDI_TCP_global.rank, MPIDI_TCP_sockaddr_str(from, addr, sizeof(addr)), why);
}
