/*
 * MPI_Comm_join on ch4:tcp (2 ranks, one per host): rank 0 listens on a TCP
 * socket of its own, rank 1 connects to it, and each joins over its end of
 * that socket; over the intercommunicator they exchange checked messages
 * both ways, then a ring and an allreduce over the merged communicator.
 */
#include "mmc_test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tcp_raw.h"

int main(int argc, char **argv)
{
    int rank, size, fd = -1, port = 0;
    char ip[64];
    MPI_Comm inter;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        MMC_ERR("tcp_join needs 2 ranks\n");
        return mmc_finish();
    }
    raw_my_ip(ip);
    MPI_Bcast(ip, sizeof(ip), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        struct sockaddr_in sa = {.sin_family = AF_INET };
        socklen_t len = sizeof(sa);
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        inet_pton(AF_INET, ip, &sa.sin_addr);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) || listen(lfd, 1) ||
            getsockname(lfd, (struct sockaddr *) &sa, &len))
            MMC_ERR("rank 0: cannot listen\n");
        port = ntohs(sa.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        fd = accept(lfd, NULL, NULL);
        close(lfd);
    } else {
        MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = raw_connect(ip, port);
    }
    if (fd < 0) {
        MMC_ERR("rank %d: no socket to join over\n", rank);
        return mmc_finish();
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_Comm_join(fd, &inter) != MPI_SUCCESS) {
        MMC_ERR("rank %d: MPI_Comm_join failed\n", rank);
        close(fd);
        return mmc_finish();
    }
    close(fd);

    unsigned char out[40000], in[40000];
    for (size_t len = 8; len <= sizeof(out); len *= 50) {
        mmc_fill(out, len, 7, rank);
        memset(in, 0, len);
        MPI_Sendrecv(out, (int) len, MPI_BYTE, 0, 7, in, (int) len, MPI_BYTE, 0, 7, inter,
                     MPI_STATUS_IGNORE);
        mmc_check(in, len, 7, 1 - rank, "joined intercommunicator");
    }
    mmc_merged_check(inter, rank);
    MPI_Comm_disconnect(&inter);
    if (rank == 0)
        printf("join: checked messages both ways, merged allreduce\n");
    return mmc_finish();
}
