/*
 * Rank 0 discovers messages from every other rank (intra- and inter-node)
 * with MPI_Iprobe(MPI_ANY_SOURCE) loops, then with blocking MPI_ANY_SOURCE
 * receives.  Run under a polling ratio of 1000 it shows the netmod is never
 * starved: every message arrives, in per-sender order, with the right bytes.
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

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(80000);
    for (int phase = 0; phase < 2; phase++) {
        if (rank == 0)
            receive_all(size, phase == 0, phase, buf);
        else
            send_all(rank, phase, buf);
        mmc_barrier(MPI_COMM_WORLD, rank != 0);
    }
    free(buf);
    return mmc_finish();
}
