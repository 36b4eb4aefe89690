/*
 * mpich-multichannel: ch4:tcp's listening socket, where strangers arrive.
 *
 * Anyone who can reach a rank's port can connect.  An accepted connection is
 * challenged at once (tcp_handshake.c) and until it proves it belongs to the job
 * it costs one descriptor and a small struct (no buffers), lives at most
 * MPIDI_TCP_UNPROVEN_TIME seconds, and there are at most unproven_max of
 * them: beyond that the oldest silent one is dropped (a rank of the job that
 * was dropped connects again).  Out of descriptors, a spare one is given up to
 * accept and close the newcomer, so the kernel's queue never fills with
 * connections we cannot take.  Refusals are logged at a bounded rate
 * (MPIDI_TCP_refused, tcp_sock.c).
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int MPIDI_TCP_accept_init(void)
{
    MPIDI_TCP_global.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* room for a burst of legitimate connects (an all-to-all's first round) */
    MPIDI_TCP_global.unproven_max = MPL_MIN(MPL_MAX(64, MPIDI_TCP_global.size), 1024);
    return MPI_SUCCESS;
}

/* The oldest silent unproven connection goes first: one whose answer is
 * already in its socket is a rank of the job being slow, read this call. */
static void drop_oldest_unproven(const char *why)
{
    MPIDI_TCP_conn_t *oldest = NULL, *oldest_silent = NULL;
    for (MPIDI_TCP_conn_t * c = MPIDI_TCP_global.conns; c; c = c->next) {
        int avail = 0;
        if (c->state != MPIDI_TCP_CONN_UNPROVEN)
            continue;
        if (!oldest || c->deadline < oldest->deadline)
            oldest = c;
        if (c->hs_len == 0 && ioctl(c->fd, FIONREAD, &avail) == 0 && avail == 0 &&
            (!oldest_silent || c->deadline < oldest_silent->deadline))
            oldest_silent = c;
    }
    if (oldest_silent)
        oldest = oldest_silent;
    if (oldest) {
        MPIDI_TCP_refused(&oldest->remote, why);
        MPIDI_TCP_conn_free(oldest);
    }
}

/* Out of descriptors: drop an unproven connection, else take the newcomer
 * with the spare descriptor and close it.  Returns 1 to try accept again. */
static int out_of_fds(void)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);

    if (g->n_unproven > 0) {
        drop_oldest_unproven("out of file descriptors: dropped the oldest unproven connection");
        return 1;
    }
    if (g->spare_fd < 0)
        return 0;
    close(g->spare_fd);
    int fd = accept4(g->listen_fd, (struct sockaddr *) &sa, &len, SOCK_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        MPIDI_TCP_refused(&sa, "out of file descriptors (RLIMIT_NOFILE)");
    }
    g->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return fd >= 0;
}

/* Accepts what the kernel has queued (bounded per call) and challenges it. */
void MPIDI_TCP_accept(void)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;

    for (int i = 0; i < MPIDI_TCP_ACCEPT_BATCH; i++) {
        struct sockaddr_in sa;
        socklen_t len = sizeof(sa);
        int fd = accept4(g->listen_fd, (struct sockaddr *) &sa, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) &&
                out_of_fds())
                continue;
            break;      /* EAGAIN, or nothing more we can do this call */
        }
        if (g->n_unproven >= g->unproven_max)
            drop_oldest_unproven("too many unproven connections: dropped the oldest");
        MPIDI_TCP_conn_t *c = MPIDI_TCP_conn_new(fd, -1, MPIDI_TCP_CONN_UNPROVEN, 0);
        if (c == NULL) {
            close(fd);
            break;
        }
        c->remote = sa;
        c->deadline = MPIDI_TCP_now() + MPIDI_TCP_UNPROVEN_TIME;
        MPIDI_TCP_liveness_setup(fd);
        MPIDI_TCP_global.ops->accepted(c);
    }
}
