/*
 * MPI_Comm_split_type on intercommunicators whose two groups sit on the
 * nodes in every way a job of 2 hosts can place them: 1+1 on one node and
 * across two, 1+2, 2+1, 2+2 with each group on a node of its own and with
 * each group on both.  The result of a shared-memory split is, on each
 * process, the intercommunicator of the processes of both groups on its
 * node, or MPI_COMM_NULL where the other group has none there; it is
 * checked against the node map (its sizes, that it is an
 * intercommunicator) and used (a message each way and an allreduce, bytes
 * and sums checked).  Run it on jobs of 2, 3 and 4 ranks placed 1+1, 1+2,
 * 2+1 and 2+2: where a group is smaller than the other, 4.0.2 took the
 * node of the other group's process of the same rank.  Each split runs with MPI_INFO_NULL, with an info
 * object (4.0.2 then compared the hints across the groups) and as
 * MPI_COMM_TYPE_HW_GUIDED "mpi_shared_memory", its equivalent.  MPICH
 * 4.0.2 crashed where a group had no partner on its node
 * (doc/mpich-fixes.md).  Also a plain split of each intercommunicator
 * that leaves out each group's first process (4.0.2 hung there), and a
 * merge in which both groups ask for the same side (5.0.1 disagreed on the
 * side where the groups interleave the world's ranks).
 */
#include "mmc_test.h"

/* group A, group B: world ranks, -1 ends a list */
struct placement {
    const char *name;
    int a[3], b[3];
};

static const struct placement placements[] = {
    { "1+1, two ranks of one node or the first two", { 0, -1 }, { 1, -1 } },
    { "1+1, the first and the last rank", { 0, -1 }, { 3, -1 } },
    { "1+2", { 0, -1 }, { 2, 3, -1 } },
    { "1+2, the last two ranks", { 0, -1 }, { 1, 2, -1 } },
    { "2+1", { 0, 1, -1 }, { 2, -1 } },
    { "2+2, ranks in order", { 0, 1, -1 }, { 2, 3, -1 } },
    { "2+2, interleaved", { 0, 2, -1 }, { 1, 3, -1 } },
};

enum how { H_NULLINFO, H_INFO, H_HW_GUIDED, NHOW };
static const char *how_names[] = { "MPI_INFO_NULL", "an info object",
    "HW_GUIDED mpi_shared_memory" };

static int in_list(const int *l, int r)
{
    for (; *l >= 0; l++)
        if (*l == r)
            return 1;
    return 0;
}

static int fits(const int *l, int size)
{
    for (; *l >= 0; l++)
        if (*l >= size)
            return 0;
    return 1;
}

/* the members of list l on node n, and the sum of their world ranks */
static int on_node(const int *l, const int *node, int n, int *sum)
{
    int k = 0;
    *sum = 0;
    for (; *l >= 0; l++)
        if (node[*l] == n) {
            k++;
            *sum += *l;
        }
    return k;
}

static void check_split(MPI_Comm inter, const struct placement *p, enum how how, int in_a,
                        int wrank, const int *node)
{
    MPI_Comm sh;
    MPI_Info info = MPI_INFO_NULL;
    int split_type = MPI_COMM_TYPE_SHARED;

    if (how == H_INFO) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "mmc_unused_hint", "1");
    } else if (how == H_HW_GUIDED) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
        split_type = MPI_COMM_TYPE_HW_GUIDED;
    }
    int err = MPI_Comm_split_type(inter, split_type, 0, info, &sh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (err != MPI_SUCCESS) {
        MMC_ERR("%s, %s: rank %d: MPI_Comm_split_type failed\n", p->name, how_names[how],
                wrank);
        return;
    }

    const int *mine = in_a ? p->a : p->b, *theirs = in_a ? p->b : p->a;
    int my_sum, their_sum;
    int nlocal = on_node(mine, node, node[wrank], &my_sum);
    int nremote = on_node(theirs, node, node[wrank], &their_sum);
    if (nremote == 0) {
        if (sh != MPI_COMM_NULL) {
            MMC_ERR("%s, %s: rank %d: no process of the other group on its node, "
                    "but the split is not MPI_COMM_NULL\n", p->name, how_names[how], wrank);
            MPI_Comm_free(&sh);
        }
        return;
    }
    if (sh == MPI_COMM_NULL) {
        MMC_ERR("%s, %s: rank %d: MPI_COMM_NULL, %d of the other group on its node\n",
                p->name, how_names[how], wrank, nremote);
        return;
    }

    int is_inter, lsize, rsize, lrank;
    MPI_Comm_test_inter(sh, &is_inter);
    MPI_Comm_size(sh, &lsize);
    MPI_Comm_remote_size(sh, &rsize);
    MPI_Comm_rank(sh, &lrank);
    if (!is_inter || lsize != nlocal || rsize != nremote) {
        MMC_ERR("%s, %s: rank %d: split is %s, %d local and %d remote, expected an "
                "intercommunicator, %d and %d\n", p->name, how_names[how], wrank,
                is_inter ? "inter" : "intra", lsize, rsize, nlocal, nremote);
        MPI_Comm_free(&sh);
        return;
    }

    /* each side's sum of world ranks reaches the other */
    int sum = -1;
    MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, sh);
    if (sum != their_sum)
        MMC_ERR("%s, %s: rank %d: allreduce over the split gave %d, expected %d\n", p->name,
                how_names[how], wrank, sum, their_sum);

    /* rank 0 of each side sends to rank 0 of the other, naming itself */
    if (lrank == 0) {
        unsigned char out[3000], in[3000];
        int from;
        MPI_Request req[2];
        mmc_fill(out, sizeof(out), 21, wrank);
        MPI_Irecv(in, sizeof(in), MPI_BYTE, 0, 21, sh, &req[0]);
        MPI_Isend(out, sizeof(out), MPI_BYTE, 0, 21, sh, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 22, &from, 1, MPI_INT, 0, 22, sh,
                     MPI_STATUS_IGNORE);
        if (!in_list(theirs, from) || node[from] != node[wrank])
            MMC_ERR("%s, %s: rank %d: the other side's rank 0 is world rank %d\n", p->name,
                    how_names[how], wrank, from);
        else
            mmc_check(in, sizeof(in), 21, from, "message over the split");
    }
    MPI_Barrier(sh);
    MPI_Comm_free(&sh);
}

/* A merge where both groups ask for the same side: MPICH orders the groups
 * by which one is low, which every process of both must agree on (5.0.1
 * did not where the groups interleave the world's ranks: doc/mpich-fixes.md).
 * The merged ranks are one group's in group order, then the other's. */
static void check_merge(MPI_Comm inter, const int *a, const int *b, const char *name,
                        int wrank)
{
    MPI_Comm merged;
    int msize, first, *w;
    MPI_Intercomm_merge(inter, 0, &merged);
    MPI_Comm_size(merged, &msize);
    w = malloc(msize * sizeof(int));
    MPI_Allgather(&wrank, 1, MPI_INT, w, 1, MPI_INT, merged);
    const int *lists[2] = { a, b };
    first = w[0] == a[0] ? 0 : 1;
    int k = 0;
    for (int g = 0; g < 2; g++)
        for (const int *l = lists[g ^ first]; *l >= 0; l++, k++)
            if (k >= msize || w[k] != *l)
                MMC_ERR("%s: rank %d: merged rank %d is world rank %d, expected %d\n", name,
                        wrank, k, k < msize ? w[k] : -1, *l);
    if (k != msize)
        MMC_ERR("%s: rank %d: merged size %d, expected %d\n", name, wrank, msize, k);
    free(w);
    MPI_Comm_free(&merged);
}

int main(int argc, char **argv)
{
    int wrank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the node of every rank: the world rank of its node's first rank */
    MPI_Comm node_comm;
    int leader = wrank, *node = malloc(size * sizeof(int));
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Bcast(&leader, 1, MPI_INT, 0, node_comm);
    MPI_Allgather(&leader, 1, MPI_INT, node, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&node_comm);
    if (wrank == 0) {
        printf("nodes:");
        for (int r = 0; r < size; r++)
            printf(" %d", node[r]);
        printf("\n");
    }

    int ran = 0;
    for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++) {
        const struct placement *p = &placements[i];
        if (!fits(p->a, size) || !fits(p->b, size))
            continue;
        ran++;
        int in_a = in_list(p->a, wrank), in_b = in_list(p->b, wrank);
        MPI_Comm intra, inter;
        MPI_Comm_split(MPI_COMM_WORLD, in_a ? 0 : in_b ? 1 : MPI_UNDEFINED, wrank, &intra);
        if (!in_a && !in_b) {
            MPI_Barrier(MPI_COMM_WORLD);
            continue;
        }
        MPI_Intercomm_create(intra, 0, MPI_COMM_WORLD, in_a ? p->b[0] : p->a[0], 7, &inter);
        for (int how = 0; how < NHOW; how++)
            check_split(inter, p, how, in_a, wrank, node);

        /* a split of the intercommunicator that leaves out each group's
         * first process (4.0.2 then exchanged a context id nobody used) */
        MPI_Comm rest;
        int lrank, lsize, rsize;
        MPI_Comm_rank(inter, &lrank);
        MPI_Comm_size(inter, &lsize);
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_split(inter, lrank ? 1 : MPI_UNDEFINED, 0, &rest);
        if ((rest != MPI_COMM_NULL) != (lrank > 0 && lsize > 1 && rsize > 1))
            MMC_ERR("%s: rank %d: split without the first processes is %snull\n", p->name,
                    wrank, rest == MPI_COMM_NULL ? "" : "not ");
        if (rest != MPI_COMM_NULL) {
            int one = 1, n = 0;
            MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, rest);
            if (n != rsize - 1)
                MMC_ERR("%s: rank %d: split without the first processes: allreduce gave %d, "
                        "expected %d\n", p->name, wrank, n, rsize - 1);
            MPI_Comm_free(&rest);
        }

        check_merge(inter, p->a, p->b, p->name, wrank);

        /* pairs of the i-th processes of the groups: where the groups
         * interleave, 5.0.1 had both sides of the second pair high, and a
         * barrier over it waited for good */
        MPI_Comm pair;
        MPI_Comm_split(inter, lrank, 0, &pair);
        if ((pair != MPI_COMM_NULL) != (lrank < rsize))
            MMC_ERR("%s: rank %d: the pair of rank %d is %snull\n", p->name, wrank, lrank,
                    pair == MPI_COMM_NULL ? "" : "not ");
        if (pair != MPI_COMM_NULL) {
            int pa[2] = { p->a[lrank], -1 }, pb[2] = { p->b[lrank], -1 };
            MPI_Barrier(pair);
            check_merge(pair, pa, pb, p->name, wrank);
            MPI_Comm_free(&pair);
        }

        MPI_Comm undef;
        MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &undef);
        if (undef != MPI_COMM_NULL)
            MMC_ERR("%s: rank %d: MPI_UNDEFINED gave a communicator\n", p->name, wrank);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&intra);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!ran)
        MMC_ERR("no placement fits %d ranks\n", size);
    free(node);
    return mmc_finish();
}
