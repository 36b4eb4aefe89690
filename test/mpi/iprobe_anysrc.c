/*
 * Rank 0 discovers messages from every other rank (intra- and inter-node)
 * with MPI_Iprobe(MPI_ANY_SOURCE) loops, then with blocking MPI_ANY_SOURCE
 * receives.  Run under a polling ratio of 1000 it shows the netmod is never
 * starved: every message arrives, in per-sender order, with the right bytes.
 * Then an MPI_ANY_SOURCE receive posted before each sender is told to send:
 * posted to both channels, it must complete whichever of them the message
 * takes (ch4:ucx on MPICH 4.0.2 never completed one that UCX satisfied;
 * doc/mpich-fixes.md).  Last, synchronous sends, eager and rendezvous, taken
 * with MPI_Mprobe and MPI_Improbe(MPI_ANY_SOURCE) and MPI_Mrecv: the
 * acknowledgement goes back by the channel the message came by (ch4 sent it
 * through shared memory whenever that probe was first to find it, a message
 * of an active-message netmod too, and the sender waited for ever).  And
 * synchronous sends of 1 MiB that rank 0 finds by MPI_Iprobe and receives at
 * once with MPI_Irecv(MPI_ANY_SOURCE), their bytes mostly still on the way:
 * ch4:tcp holds such a message, and its acknowledgement leaves once the last
 * byte is in, by the channel the message came by (MPICH 4.0.2 and 4.2.1 had
 * marked the request as shared memory's, whose receive call matched it
 * first: the acknowledgement of a message from another node went nowhere,
 * about once in 150 runs of shm_order 2 x 2).
 */
#include "mmc_test.h"

#define NMSG 40

static int msg_len(int src, int seq)
{
    return (seq % 5 == 4) ? 70000 + src * 100 + seq : 8 + (src * 31 + seq * 7) % 900;
}

static void receive_all(int size, int use_iprobe, int phase, unsigned char *buf)
{
    int *next = calloc(size, sizeof(int));
    for (int n = 0; n < (size - 1) * NMSG; n++) {
        MPI_Status st;
        if (use_iprobe) {
            int flag = 0;
            while (!flag)
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            int len;
            MPI_Get_count(&st, MPI_BYTE, &len);
            if (len != msg_len(st.MPI_SOURCE, next[st.MPI_SOURCE]))
                MMC_ERR("iprobe: message %d from %d has %d bytes\n", next[st.MPI_SOURCE],
                        st.MPI_SOURCE, len);
            MPI_Recv(buf, 80000, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        } else {
            MPI_Recv(buf, 80000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        }
        int src = st.MPI_SOURCE, seq = next[src]++;
        if (st.MPI_TAG != phase * NMSG + seq)
            MMC_ERR("message from %d out of order: tag %d, expected %d\n", src, st.MPI_TAG,
                    phase * NMSG + seq);
        mmc_check(buf, msg_len(src, seq), phase * NMSG + seq, src,
                  use_iprobe ? "iprobe" : "any-source recv");
    }
    free(next);
}

static void send_all(int rank, int phase, unsigned char *buf)
{
    for (int seq = 0; seq < NMSG; seq++) {
        MPI_Request req;
        mmc_fill(buf, msg_len(rank, seq), phase * NMSG + seq, rank);
        MPI_Isend(buf, msg_len(rank, seq), MPI_BYTE, 0, phase * NMSG + seq, MPI_COMM_WORLD, &req);
        mmc_idle_wait(&req);
    }
}

/* rank 0 posts the receive, then tells one sender at a time to send */
static void posted_first(int rank, int size, unsigned char *buf)
{
    static const int lens[] = { 8, 70000 };
    int go = 1;
    for (int src = 1; src < size; src++) {
        for (int k = 0; k < 2; k++) {
            int tag = 1000 + k;
            if (rank == 0) {
                MPI_Request req;
                MPI_Status st;
                MPI_Irecv(buf, 80000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
                MPI_Send(&go, 1, MPI_INT, src, 999, MPI_COMM_WORLD);
                MPI_Wait(&req, &st);
                int len;
                MPI_Get_count(&st, MPI_BYTE, &len);
                if (st.MPI_SOURCE != src || st.MPI_TAG != tag || len != lens[k])
                    MMC_ERR("posted first: got source %d tag %d, %d bytes; expected %d, %d, %d\n",
                            st.MPI_SOURCE, st.MPI_TAG, len, src, tag, lens[k]);
                else
                    mmc_check(buf, lens[k], tag, src, "any-source recv posted first");
            } else if (rank == src) {
                MPI_Recv(&go, 1, MPI_INT, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mmc_fill(buf, lens[k], tag, rank);
                MPI_Send(buf, lens[k], MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            }
        }
    }
}

/* a receive's status and bytes: message tag of src, len bytes in buf */
static void check_recv(const MPI_Status * st, int src, int tag, int len,
                       const unsigned char *buf, const char *what)
{
    int got;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (st->MPI_SOURCE != src || got != len)
        MMC_ERR("%s: source %d, %d bytes; expected %d, %d\n", what, st->MPI_SOURCE, got, src,
                len);
    else
        mmc_check(buf, len, tag, src, what);
}

/* every sender Ssends to rank 0, which takes the messages by matched probe */
static void matched_probe(int rank, int size, unsigned char *buf)
{
    static const int lens[] = { 8, 70000 };
    for (int k = 0; k < 4; k++) {
        int tag = 2000 + k, len = lens[k % 2];
        if (rank != 0) {
            mmc_fill(buf, len, tag, rank);
            MPI_Ssend(buf, len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            continue;
        }
        for (int n = 0; n < size - 1; n++) {
            MPI_Message msg;
            MPI_Status st;
            int flag = 0;
            if (k < 2)
                MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &msg, &st);
            else
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &st);
            int src = st.MPI_SOURCE;
            memset(buf, 0, len);
            MPI_Mrecv(buf, 80000, MPI_BYTE, &msg, &st);
            check_recv(&st, src, tag, len, buf, "matched probe");
        }
    }
}

#define HELD_LEN (1 << 20)

/* each sender in turn Issends HELD_LEN bytes; rank 0 receives the message
 * the moment MPI_Iprobe sees it; the sender gives up after 60 s, naming it */
static void held_ssend(int rank, int size, unsigned char *buf)
{
    int go = 1;
    for (int src = 1; src < size; src++) {
        int tag = 3000 + src;
        if (rank == 0) {
            MPI_Request req;
            MPI_Status st;
            int flag = 0;
            MPI_Send(&go, 1, MPI_INT, src, 999, MPI_COMM_WORLD);
            while (!flag)
                MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            memset(buf, 0, HELD_LEN);
            MPI_Irecv(buf, HELD_LEN, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, &st);
            check_recv(&st, src, tag, HELD_LEN, buf, "held ssend");
        } else if (rank == src) {
            MPI_Request req;
            int done = 0;
            MPI_Recv(&go, 1, MPI_INT, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            mmc_fill(buf, HELD_LEN, tag, rank);
            MPI_Issend(buf, HELD_LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
            double t0 = MPI_Wtime();
            while (!done && MPI_Wtime() - t0 < 60)
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (!done) {
                MMC_ERR("held ssend: rank %d's MPI_Issend of %d bytes not acknowledged after "
                        "60 s\n", rank, HELD_LEN);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(HELD_LEN);
    for (int phase = 0; phase < 2; phase++) {
        if (rank == 0)
            receive_all(size, phase == 0, phase, buf);
        else
            send_all(rank, phase, buf);
        mmc_barrier(MPI_COMM_WORLD, rank != 0);
    }
    posted_first(rank, size, buf);
    mmc_barrier(MPI_COMM_WORLD, rank != 0);
    matched_probe(rank, size, buf);
    mmc_barrier(MPI_COMM_WORLD, rank != 0);
    held_ssend(rank, size, buf);
    free(buf);
    return mmc_finish();
}
