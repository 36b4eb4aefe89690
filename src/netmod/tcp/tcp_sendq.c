/*
 * mpich-multichannel: ch4:tcp's byte queue of a connection (the connection
 * layer).  A connection writes its pending control message first, then its
 * queued entries in order, as much as the socket takes.  What an entry
 * carries is the protocol's business: the layer above (tcp_am.c, wired by
 * tcp_init.c through MPIDI_TCP_global.ops) refills an entry whose bytes are
 * out and completes one that is done or failed.
 */
#include "mpidimpl.h"
#include "tcp_types.h"

#include <sys/epoll.h>
#include <sys/socket.h>

/* writev that never raises SIGPIPE on a connection the peer closed */
ssize_t MPIDI_TCP_sendv(int fd, const struct iovec *iov, int cnt)
{
    struct msghdr m = {.msg_iov = (struct iovec *) iov,.msg_iovlen = cnt };
    return sendmsg(fd, &m, MSG_NOSIGNAL);
}

void MPIDI_TCP_sendq_push(MPIDI_TCP_conn_t * c, MPIDI_TCP_sendq_t * e)
{
    e->next = NULL;
    if (c->sq_tail)
        c->sq_tail->next = e;
    else
        c->sq_head = e;
    c->sq_tail = e;
}

void MPIDI_TCP_sendq_fail(MPIDI_TCP_conn_t * c, int err)
{
    while (c->sq_head) {
        MPIDI_TCP_sendq_t *e = c->sq_head;
        c->sq_head = e->next;
        MPIDI_TCP_global.ops->sendq_done(e, err);
    }
    c->sq_tail = NULL;
}

static int write_error(MPIDI_TCP_conn_t * c, int err)
{
    MPIDI_TCP_conn_lost(c, "send", err);
    return 1;
}

/* Writes the pending control message, then as much of the queue as the socket
 * takes, completing finished sends.  Returns nonzero when the connection
 * failed and was freed. */
int MPIDI_TCP_flush(MPIDI_TCP_conn_t * c)
{
    if (c->fd < 0)
        return 0;
    while (c->ctl_off < c->ctl_len) {
        ssize_t n = send(c->fd, c->ctl + c->ctl_off, c->ctl_len - c->ctl_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return write_error(c, errno);
            MPIDI_TCP_set_writing(c, 1);
            return 0;
        }
        c->ctl_off += n;
    }
    if (c->state == MPIDI_TCP_CONN_ESTABLISHED) {
        while (c->sq_head) {
            MPIDI_TCP_sendq_t *e = c->sq_head;
            ssize_t n = MPIDI_TCP_sendv(c->fd, e->iov_cur, e->iov_cnt);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                    return write_error(c, errno);
                break;
            }
            e->iov_cnt = MPIDI_TCP_iov_advance(&e->iov_cur, e->iov_cnt, (size_t) n);
            if (e->iov_cnt > 0)
                continue;
            int more = MPIDI_TCP_global.ops->sendq_refill(e);
            if (more < 0) {
                /* the peer reads a frame of the announced length: nothing else may follow */
                MPIDI_TCP_conn_fail(c, MPIDI_TCP_peer_error(c->peer, "a message's datatype "
                                                            "could not be packed", 0));
                return 1;
            }
            if (more)
                continue;
            c->sq_head = e->next;
            if (c->sq_head == NULL)
                c->sq_tail = NULL;
            MPIDI_TCP_global.ops->sendq_done(e, MPI_SUCCESS);
        }
    }
    MPIDI_TCP_set_writing(c, c->sq_head && c->state == MPIDI_TCP_CONN_ESTABLISHED);
    return 0;
}

/* A connection with bytes waiting is written on every progress call, like a
 * polling sender: epoll reports a socket writable only once a third of its
 * buffer is free, which would leave the link idle meanwhile. */
void MPIDI_TCP_set_writing(MPIDI_TCP_conn_t * c, int writing)
{
    if (writing != c->writing) {
        MPIDI_TCP_global.n_writing += writing ? 1 : -1;
        c->writing = writing;
        MPIDI_TCP_conn_events(c, EPOLLIN | (writing ? EPOLLOUT : 0));
    }
}

/* a write error fails and frees its connection (MPIDI_TCP_flush) */
void MPIDI_TCP_flush_all(void)
{
    for (MPIDI_TCP_conn_t * c = MPIDI_TCP_global.conns, *next; c; c = next) {
        next = c->next;
        if (c->writing)
            MPIDI_TCP_flush(c);
    }
}
