/*
 * mpich-multichannel: the wake socket of a sleeping rank (plain C, see
 * poll_wake.h).
 */
#include "poll_wake.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* datagrams drained per wake-up: enough for every sender of a node to have
 * signalled; strangers' beyond it wait for the next wake-up */
#define DRAIN_MAX 64

int MPIDI_POLL_wake_open(MPIDI_POLL_wake_t * w, MPIDI_POLL_wake_line_t * lines, int me)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX };
    socklen_t len = sizeof(sa_family_t);

    w->sleeper = 0;
    w->sent = w->received = 0;
    w->addr_len = 0;
    w->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (w->fd < 0)
        return errno;
    /* autobind: a unique abstract name the kernel picks */
    if (bind(w->fd, (struct sockaddr *) &a, len) != 0)
        goto fail;
    len = sizeof(a);
    if (getsockname(w->fd, (struct sockaddr *) &a, &len) != 0)
        goto fail;
    size_t path = len - offsetof(struct sockaddr_un, sun_path);
    if (path == 0 || path > MPIDI_POLL_WAKE_ADDR_MAX) {
        errno = ENAMETOOLONG;
        goto fail;
    }
    memcpy(w->addr, a.sun_path, path);
    w->addr_len = (uint32_t) path;
    MPIDI_POLL_wake_publish(w, lines, me);
    return 0;
  fail:;
    int err = errno;
    close(w->fd);
    w->fd = -1;
    return err;
}

void MPIDI_POLL_wake_publish(MPIDI_POLL_wake_t * w, MPIDI_POLL_wake_line_t * lines, int me)
{
    w->lines = lines;
    w->me = me;
    if (!lines)
        return;
    memcpy(lines[me].addr, w->addr, w->addr_len);
    __atomic_store_n(&lines[me].armed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&lines[me].addr_len, w->addr_len, __ATOMIC_RELEASE);
}

void MPIDI_POLL_wake_close(MPIDI_POLL_wake_t * w)
{
    w->on = 0;
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

static void send_to(MPIDI_POLL_wake_t * w, const char *addr, uint32_t path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX };

    /* a peer without a socket sleeps on its timeout alone */
    if (path == 0 || path > MPIDI_POLL_WAKE_ADDR_MAX || w->fd < 0)
        return;
    memcpy(a.sun_path, addr, path);
    /* a full socket holds a wake-up already; EINTR: the peer's timeout */
    if (sendto(w->fd, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &a,
               (socklen_t) (offsetof(struct sockaddr_un, sun_path) + path)) == 1)
        w->sent++;
}

void MPIDI_POLL_wake_send(MPIDI_POLL_wake_t * w, int peer)
{
    send_to(w, w->lines[peer].addr, __atomic_load_n(&w->lines[peer].addr_len, __ATOMIC_ACQUIRE));
}

void MPIDI_POLL_wake_self(MPIDI_POLL_wake_t * w)
{
    send_to(w, w->addr, w->addr_len);
}

int MPIDI_POLL_wake_sleep(MPIDI_POLL_wake_t * w, int nm_fd, int timeout_ms)
{
    struct pollfd p[2] = {
        {.fd = w->fd, .events = POLLIN},
        {.fd = nm_fd, .events = POLLIN},
    };
    int n = poll(p, nm_fd >= 0 ? 2 : 1, timeout_ms);

    MPIDI_POLL_wake_disarm(w);
    if (n <= 0)
        return 0;
    char b[8];
    for (int i = 0; i < DRAIN_MAX && recv(w->fd, b, sizeof(b), MSG_DONTWAIT) >= 0; i++)
        w->received++;
    return 1;
}
