/*
 * Ping-pong latency from rank 0 to its intra-node partner and to a partner
 * on another node, in one job with both kinds of traffic: blocks of
 * intra-node and inter-node ping-pongs alternate, so the polling arbiter
 * sees mixed traffic; with several sizes, each block runs each size in turn
 * (a NetPIPE-style curve).  Latency = round trip / 2 (NetPIPE), the median
 * over blocks of each block's mean.  Only the two ranks of the current block
 * poll; the others wait idle (mmc_idle_wait) for their next block.
 *
 *   latency [blocks [iters [size,size,...] [policy,policy,...]]]
 *                                      (default 20 2000 8, no policy list)
 *   prints: intra_SIZE_us=X inter_SIZE_us=Y ... for each size
 *
 * With a policy list (stock, roundrobin, staticN, dynamic, adaptive, and on
 * MPICH 5.0 any of them with _throttle, see switch_policy) every block
 * runs once under each policy, switched in the job with MPI_T_cvar_write
 * (MPIR_CVAR_CH4_POLL_POLICY and _STATIC_RATIO), the order rotating by block:
 * the contenders share one placement of the processes, which is what moves
 * most between jobs here.  Then rank 0 prints one line per block and policy,
 *   block=B policy=NAME intra_SIZE_us=X inter_SIZE_us=Y ...
 *
 * The first and the last round trip of each block check the reply's bytes.
 */
#include "bench_common.h"

#define WARMUP 20
#define MAXSIZES 16
#define MAXPOLICIES 16

static unsigned char pat(int i, size_t k)
{
    return (unsigned char) (i * 11 + k * 3);
}

static double block(int rank, int peer, size_t size, int iters, int first_tag)
{
    static unsigned char buf[1 << 20];
    double t0 = 0;
    for (int i = 0; i < WARMUP + iters; i++) {
        if (i == WARMUP)
            t0 = mmc_now_us();
        int check = i == 0 || i == WARMUP + iters - 1;
        if (rank == 0) {
            MPI_Send(buf, (int) size, MPI_BYTE, peer, first_tag, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, first_tag, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (size_t k = 0; check && k < size; k++) {
                if (buf[k] != pat(i, k)) {
                    fprintf(stderr, "latency: size %zu round trip %d: byte %zu wrong\n", size, i,
                            k);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        } else {
            MPI_Request req;
            MPI_Irecv(buf, (int) size, MPI_BYTE, 0, first_tag, MPI_COMM_WORLD, &req);
            if (i == 0)
                mmc_idle_wait(&req);  /* our block starts when rank 0 says so */
            else
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            for (size_t k = 0; check && k < size; k++)
                buf[k] = pat(i, k);
            MPI_Send(buf, (int) size, MPI_BYTE, 0, first_tag, MPI_COMM_WORLD);
        }
    }
    return (mmc_now_us() - t0) / iters / 2;
}

/* Switches this rank to a policy of the list: stock, roundrobin, staticN,
 * dynamic, adaptive; NAME_throttle also turns MPICH 5.0's progress throttle
 * on (MPIR_CVAR_CH4_PROGRESS_THROTTLE), which the others turn off where the
 * MPICH has it. */
static void switch_policy(const char *name)
{
    int ratio = 50;
    char item[32];
    snprintf(item, sizeof(item), "%s", name);
    char *suffix = strstr(item, "_throttle");
    int throttle = suffix != NULL;
    if (suffix)
        *suffix = '\0';
    if (strncmp(item, "static", 6) == 0 && item[6]) {
        ratio = atoi(item + 6);
        item[6] = '\0';
    }
    int value = mmc_cvar_enum("MPIR_CVAR_CH4_POLL_POLICY", item);
    if (value < 0 || mmc_cvar_write("MPIR_CVAR_CH4_POLL_STATIC_RATIO", ratio) ||
        mmc_cvar_write("MPIR_CVAR_CH4_POLL_POLICY", value) ||
        (mmc_cvar_write("MPIR_CVAR_CH4_PROGRESS_THROTTLE", throttle) && throttle)) {
        fprintf(stderr, "latency: cannot switch to policy %s through MPI_T\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int main(int argc, char **argv)
{
    int rank, intra, inter, nsizes = 0, npol = 0;
    size_t sizes[MAXSIZES];
    char *pols[MAXPOLICIES];
    int blocks = argc > 1 ? atoi(argv[1]) : 20;
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    for (char *s = argc > 3 ? argv[3] : "8"; *s && nsizes < MAXSIZES; s += *s == ',') {
        sizes[nsizes] = strtoul(s, &s, 0);
        if (sizes[nsizes] < 1 || sizes[nsizes] > 1 << 20) {
            fprintf(stderr, "latency: sizes from 1 byte to 1 MiB\n");
            return 2;
        }
        nsizes++;
    }
    char *list = argc > 4 ? strdup(argv[4]) : NULL;
    for (char *p = list ? strtok(list, ",") : NULL; p && npol < MAXPOLICIES; p = strtok(NULL, ","))
        pols[npol++] = p;
    bench_init(&argc, &argv, "latency", &rank, &intra, &inter);
    int units = npol ? npol : 1;
    double *lat = malloc(sizeof(double) * units * nsizes * 2 * blocks);
#define LAT(p_, z_, k_, b_) lat[(((p_) * nsizes + (z_)) * 2 + (k_)) * blocks + (b_)]
    for (int b = 0; b < blocks; b++) {
        for (int u = 0; u < units; u++) {
            int p = (b + u) % units;
            if (npol)
                switch_policy(pols[p]);
            for (int z = 0; z < nsizes; z++) {
                for (int k = 0; k < 2; k++) {
                    int peer = k == 0 ? intra : inter;
                    if (rank == 0 || rank == peer)
                        LAT(p, z, k, b) = block(rank, rank == 0 ? peer : 0, sizes[z], iters,
                                                (((b * units + u) * nsizes + z) * 2 + k) % 32768);
                }
            }
        }
    }
    if (rank == 0 && npol) {
        for (int b = 0; b < blocks; b++) {
            for (int p = 0; p < npol; p++) {
                printf("block=%d policy=%s", b, pols[p]);
                for (int z = 0; z < nsizes; z++)
                    printf(" intra_%zu_us=%.3f inter_%zu_us=%.3f", sizes[z], LAT(p, z, 0, b),
                           sizes[z], LAT(p, z, 1, b));
                printf("\n");
            }
        }
    } else if (rank == 0) {
        for (int z = 0; z < nsizes; z++)
            printf("intra_%zu_us=%.3f inter_%zu_us=%.3f ", sizes[z],
                   bench_median(&LAT(0, z, 0, 0), blocks), sizes[z],
                   bench_median(&LAT(0, z, 1, 0), blocks));
        printf("\n");
    }
    mmc_barrier(MPI_COMM_WORLD, rank != 0);
    free(lat);
    free(list);
    MPI_Finalize();
    return 0;
}
