/*
 * The communicator matrix: point to point, collectives and RMA over every
 * kind of communicator an application makes from its world (world, self, a
 * dup, splits reversed, halved and odd/even, cartesian with a sub-grid,
 * graph, distributed graph, the shared-memory split, and intercommunicators:
 * created, merged, split and duplicated), in whatever placement the job has
 * (the testlist runs it 1+1, 1+2, 2+1 and 2+2 across 2 simulated hosts).
 * What each process must receive follows from the world ranks of the
 * members, so every message, every collective's result and every window's
 * contents is checked.
 *
 *   comm_matrix [dynamic]   dynamic: instead, the communicators of dynamic
 *                           processes: the intercommunicator of a spawn (2
 *                           children of this program) and one of
 *                           connect/accept between the parents and the
 *                           children and within each job, with what is made of
 *                           each; ranks then count in the parents' and
 *                           children's merged communicator
 */
#include "mmc_test.h"

#define NCHILD 2

/* the communicator whose ranks name the processes (the world, or the
 * parents and children merged) and this process' rank in it */
static MPI_Comm ref;
static int wrank;
static char cname[64];

/* the rank in ref of rank r of comm (remote: of its remote group) */
static int world_of(MPI_Comm comm, int r, int remote)
{
    MPI_Group g, wg;
    int w;
    if (remote)
        MPI_Comm_remote_group(comm, &g);
    else
        MPI_Comm_group(comm, &g);
    MPI_Comm_group(ref, &wg);
    MPI_Group_translate_ranks(g, 1, &r, wg, &w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return w;
}

/* messages that cross every path: a box, MPICH's queue, a rendezvous */
static const int sizes[] = { 8, 5000, 200000 };
#define NSIZES 3

static void intra_p2p(MPI_Comm c, int r, int n)
{
    int next = (r + 1) % n, prev = (r + n - 1) % n, wprev = world_of(c, prev, 0);
    unsigned char *out = malloc(200000), *in = malloc(200000);
    for (int k = 0; k < NSIZES; k++) {
        MPI_Request req[2];
        MPI_Status st;
        mmc_fill(out, sizes[k], 30 + k, wrank);
        MPI_Irecv(in, sizes[k], MPI_BYTE, prev, 30 + k, c, &req[0]);
        MPI_Isend(out, sizes[k], MPI_BYTE, next, 30 + k, c, &req[1]);
        MPI_Wait(&req[0], &st);
        MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        if (st.MPI_SOURCE != prev)
            MMC_ERR("%s: ring message from %d, expected %d\n", cname, st.MPI_SOURCE, prev);
        mmc_check(in, sizes[k], 30 + k, wprev, cname);
    }
    free(out);
    free(in);
}

/* MPI_Reduce to every root, from and in place: 1 int (by exchange on a
 * node), 1100 (MPICH's compositions between nodes); the root's receive
 * buffer holds its own data only in place */
static void intra_reduce(MPI_Comm c, int r, int n, int sum)
{
    static const int counts[] = { 1, 1100 };
    int *in = malloc(1100 * sizeof(int)), *out = malloc(1100 * sizeof(int));
    for (int root = 0; root < n; root++)
        for (int k = 0; k < 4; k++) {
            int cnt = counts[k % 2], inplace = k / 2 && r == root;
            for (int i = 0; i < cnt; i++) {
                in[i] = wrank + i;
                out[i] = inplace ? in[i] : -1000;
            }
            MPI_Reduce(inplace ? MPI_IN_PLACE : in, out, cnt, MPI_INT, MPI_SUM, root, c);
            for (int i = 0; r == root && i < cnt; i++)
                if (out[i] != sum + n * i) {
                    MMC_ERR("%s: reduce of %d ints to %d%s: element %d is %d, expected %d\n",
                            cname, cnt, root, inplace ? " in place" : "", i, out[i],
                            sum + n * i);
                    break;
                }
        }
    free(in);
    free(out);
}

static void intra_coll(MPI_Comm c, int r, int n)
{
    int *w = malloc(n * sizeof(int)), *got = malloc(n * sizeof(int));
    int sum = 0, prefix = 0, v;
    unsigned char buf[3000];
    for (int i = 0; i < n; i++) {
        w[i] = world_of(c, i, 0);
        sum += w[i];
        if (i <= r)
            prefix += w[i];
    }
    for (int root = 0; root < n; root++) {
        if (r == root)
            mmc_fill(buf, sizeof(buf), 40, w[root]);
        else
            memset(buf, 0, sizeof(buf));
        MPI_Bcast(buf, sizeof(buf), MPI_BYTE, root, c);
        mmc_check(buf, sizeof(buf), 40, w[root], "bcast");
    }
    MPI_Allreduce(&wrank, &v, 1, MPI_INT, MPI_SUM, c);
    if (v != sum)
        MMC_ERR("%s: allreduce %d, expected %d\n", cname, v, sum);
    intra_reduce(c, r, n, sum);
    MPI_Scan(&wrank, &v, 1, MPI_INT, MPI_SUM, c);
    if (v != prefix)
        MMC_ERR("%s: scan %d, expected %d\n", cname, v, prefix);
    MPI_Allgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < n; i++)
        if (got[i] != w[i])
            MMC_ERR("%s: allgather slot %d holds %d, expected %d\n", cname, i, got[i], w[i]);
    int *to = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        to[i] = wrank * 1000 + i;
    MPI_Alltoall(to, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < n; i++)
        if (got[i] != w[i] * 1000 + r)
            MMC_ERR("%s: alltoall from %d: %d, expected %d\n", cname, i, got[i],
                    w[i] * 1000 + r);
    MPI_Barrier(c);
    free(to);
    free(w);
    free(got);
}

/* RMA: each rank puts its world rank into slot r of the next rank's window,
 * adds 1 to slot n of rank 0's, and gets slot n+1 of the previous rank's,
 * which its owner set to its world rank * 7 */
static void intra_rma(MPI_Comm c, int r, int n)
{
    int *base, next = (r + 1) % n, prev = (r + n - 1) % n, got = -1, one = 1;
    int wprev = world_of(c, prev, 0);
    MPI_Win win;
    MPI_Win_allocate((n + 2) * sizeof(int), sizeof(int), MPI_INFO_NULL, c, &base, &win);
    for (int i = 0; i < n; i++)
        base[i] = -1;
    base[n] = 0;
    base[n + 1] = wrank * 7;
    MPI_Win_fence(0, win);
    MPI_Put(&wrank, 1, MPI_INT, next, r, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, n, 1, MPI_INT, MPI_SUM, win);
    MPI_Get(&got, 1, MPI_INT, prev, n + 1, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    if (base[prev] != wprev)
        MMC_ERR("%s: window slot %d holds %d, expected %d\n", cname, prev, base[prev], wprev);
    if (r == 0 && base[n] != n)
        MMC_ERR("%s: accumulate gave %d, expected %d\n", cname, base[n], n);
    if (got != wprev * 7)
        MMC_ERR("%s: get from %d gave %d, expected %d\n", cname, prev, got, wprev * 7);
    MPI_Win_free(&win);
}

static void check_intra(MPI_Comm c, const char *name)
{
    int r, n;
    snprintf(cname, sizeof(cname), "%s", name);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    intra_p2p(c, r, n);
    intra_coll(c, r, n);
    intra_rma(c, r, n);
}

/* an intercommunicator: local rank r to remote r mod m, collectives whose
 * results are the other group's */
static void check_inter(MPI_Comm c, const char *name)
{
    int r, n, m, v, low;
    snprintf(cname, sizeof(cname), "%s", name);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Comm_remote_size(c, &m);
    int *rw = malloc(m * sizeof(int)), *got = malloc(m * sizeof(int)), rsum = 0;
    for (int i = 0; i < m; i++) {
        rw[i] = world_of(c, i, 1);
        rsum += rw[i];
    }
    low = world_of(c, 0, 0) < rw[0];

    /* each remote rank q with q mod n == r sends to r; r sends to r mod m */
    unsigned char out[5000], in[5000];
    mmc_fill(out, sizeof(out), 50, wrank);
    MPI_Request sreq;
    MPI_Isend(out, sizeof(out), MPI_BYTE, r % m, 50, c, &sreq);
    for (int q = r; q < m; q += n) {
        MPI_Status st;
        MPI_Recv(in, sizeof(in), MPI_BYTE, q, 50, c, &st);
        mmc_check(in, sizeof(in), 50, rw[q], cname);
    }
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    MPI_Allreduce(&wrank, &v, 1, MPI_INT, MPI_SUM, c);
    if (v != rsum)
        MMC_ERR("%s: allreduce %d, expected the other group's %d\n", cname, v, rsum);
    MPI_Allgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c);
    for (int i = 0; i < m; i++)
        if (got[i] != rw[i])
            MMC_ERR("%s: allgather slot %d holds %d, expected %d\n", cname, i, got[i], rw[i]);
    /* the low group's rank 0 broadcasts, then the high group's */
    for (int side = 0; side < 2; side++) {
        unsigned char buf[3000];
        int mine = (side == 0) == low, root;
        if (mine)
            root = r == 0 ? MPI_ROOT : MPI_PROC_NULL;
        else
            root = 0;
        if (root == MPI_ROOT)
            mmc_fill(buf, sizeof(buf), 51, wrank);
        else
            memset(buf, 0, sizeof(buf));
        MPI_Bcast(buf, sizeof(buf), MPI_BYTE, root, c);
        if (!mine)
            mmc_check(buf, sizeof(buf), 51, rw[0], "intercommunicator bcast");
    }
    MPI_Barrier(c);
    free(rw);
    free(got);
}

/* an intercommunicator and what is made of it: a dup, its merge (this side
 * high or not), its split by local rank parity and its shared-memory split */
static void check_inter_family(MPI_Comm inter, int high, const char *name)
{
    char what[64];
    MPI_Comm d;
    check_inter(inter, name);
    MPI_Comm_dup(inter, &d);
    snprintf(what, sizeof(what), "%s dup", name);
    check_inter(d, what);
    MPI_Comm_free(&d);
    MPI_Intercomm_merge(inter, high, &d);
    snprintf(what, sizeof(what), "%s merged", name);
    check_intra(d, what);
    MPI_Comm_free(&d);
    int lr;
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_split(inter, lr % 2, lr, &d);
    if (d != MPI_COMM_NULL) {
        snprintf(what, sizeof(what), "%s split", name);
        check_inter(d, what);
        MPI_Comm_free(&d);
    }
    MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &d);
    if (d != MPI_COMM_NULL) {
        snprintf(what, sizeof(what), "%s shared-memory split", name);
        check_inter(d, what);
        MPI_Comm_free(&d);
    }
}

/* a port name in a buffer of MPI_MAX_PORT_NAME fits, or the error says how
 * to offer a larger one (5.0's ch4:ucx: the UCX address does not fit) */
static void port_in_standard_buffer(void)
{
    char port[MPI_MAX_PORT_NAME], msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Open_port(MPI_INFO_NULL, port);
    if (err == MPI_SUCCESS) {
        if (strnlen(port, MPI_MAX_PORT_NAME) == MPI_MAX_PORT_NAME)
            MMC_ERR("MPI_Open_port: the name fills its buffer without an end\n");
        MPI_Close_port(port);
    } else {
        MPI_Error_string(err, msg, &len);
        if (!strstr(msg, "port_name_size"))
            MMC_ERR("MPI_Open_port failed without naming port_name_size: %s\n", msg);
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* connect/accept: rank 0 of acc opens a port and sends its name to rank
 * dest of via (tag 60); acc accepts, con connects (each side passes
 * MPI_COMM_NULL for the other); the result checked with its family.  The
 * port's buffer is larger than MPI_MAX_PORT_NAME, offered through the info
 * key port_name_size (5.0; other versions ignore it) */
#define PORT_LEN 1024
static void joined(MPI_Comm acc, MPI_Comm con, MPI_Comm via, int dest, const char *name)
{
    char port[PORT_LEN] = "";
    MPI_Comm c;
    int r;
    if (acc != MPI_COMM_NULL) {
        MPI_Comm_rank(acc, &r);
        if (r == 0) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "port_name_size", "1024");
            MPI_Open_port(info, port);
            MPI_Info_free(&info);
            MPI_Send(port, PORT_LEN, MPI_CHAR, dest, 60, via);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, acc, &c);
        if (r == 0)
            MPI_Close_port(port);
    } else {
        MPI_Comm_rank(con, &r);
        if (r == 0)
            MPI_Recv(port, PORT_LEN, MPI_CHAR, MPI_ANY_SOURCE, 60, via, MPI_STATUS_IGNORE);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, con, &c);
    }
    check_inter_family(c, acc == MPI_COMM_NULL, name);
    MPI_Comm_disconnect(&c);
}

/* the dynamic part: parent is MPI_COMM_NULL in the parents */
static void dynamic(const char *self, MPI_Comm parent)
{
    int child = parent != MPI_COMM_NULL, size, r, errs;
    MPI_Comm inter = parent, all, half;

    if (!child) {
        char *args[] = { "dynamic", NULL };
        int codes[NCHILD];
        MPI_Comm_spawn(self, args, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        for (int i = 0; i < NCHILD; i++)
            if (codes[i] != MPI_SUCCESS)
                MMC_ERR("spawn: child %d failed with %d\n", i, codes[i]);
    }
    MPI_Intercomm_merge(inter, child, &all);
    ref = all;
    MPI_Comm_rank(all, &wrank);
    check_intra(all, "parents and children");
    check_inter_family(inter, child, "spawned");
    if (child)
        check_intra(MPI_COMM_WORLD, "children's world");

    port_in_standard_buffer();
    /* the parents accept, the children connect */
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    joined(child ? MPI_COMM_NULL : MPI_COMM_WORLD, child ? MPI_COMM_WORLD : MPI_COMM_NULL,
           inter, 0, "parents x children");

    /* within each job, its first half accepts and the rest connects */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        int low = r < (size + 1) / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, r, &half);
        joined(low ? half : MPI_COMM_NULL, low ? MPI_COMM_NULL : half, MPI_COMM_WORLD,
               (size + 1) / 2, child ? "children's halves" : "parents' halves");
        MPI_Comm_free(&half);
    }

    /* the parents' rank 0 reports for all */
    MPI_Reduce(&mmc_errs, &errs, 1, MPI_INT, MPI_SUM, 0, all);
    mmc_errs = wrank == 0 ? errs : 0;
    ref = MPI_COMM_WORLD;
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&inter);
    if (wrank == 0)
        printf("comm_matrix dynamic: %d parents, %d children\n", size, NCHILD);
}

/* MPI_Dist_graph_create from edges each rank gives: to its left, itself and
 * its right, weighted by who gave them.  MPICH received each rank's edges
 * from MPI_ANY_SOURCE after probing a count from one source: a message of
 * this node arriving in between took its place (5.0, 1 call in about 100
 * across hosts), so the degrees and every in-edge are checked over many
 * calls. */
#define DIST_ROUNDS 1000
static int edge_weight(int from, int slot)
{
    return 10 * from + slot;
}

static int by_int(const void *a, const void *b)
{
    return *(const int *) a - *(const int *) b;
}

static void dist_graph_by_edges(int size)
{
    int src[1] = { wrank }, deg[1] = { 3 };
    int dst[3] = { (wrank + size - 1) % size, wrank, (wrank + 1) % size };
    int w[3] = { edge_weight(wrank, 0), edge_weight(wrank, 1), edge_weight(wrank, 2) };
    /* the weights of this rank's in-edges: the right's slot 0, its own 1, the left's 2 */
    int want[3] = { edge_weight((wrank + 1) % size, 0), edge_weight(wrank, 1),
        edge_weight((wrank + size - 1) % size, 2)
    };
    qsort(want, 3, sizeof(int), by_int);
    int wrong = 0;
    /* every call is collective: a wrong one is counted, and the calls go on */
    for (int i = 0; i < DIST_ROUNDS; i++) {
        MPI_Comm g;
        int in, out, weighted, from[3], inw[3] = { -1, -1, -1 }, to[3], outw[3];
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, w, MPI_INFO_NULL, 0, &g);
        if (i == 0)
            check_intra(g, "distributed graph by edges");
        MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted);
        int ok = in == 3 && out == 3 && weighted;
        if (ok) {
            MPI_Dist_graph_neighbors(g, 3, from, inw, 3, to, outw);
            qsort(inw, 3, sizeof(int), by_int);
            ok = inw[0] == want[0] && inw[1] == want[1] && inw[2] == want[2];
        }
        if (!ok && wrong++ == 0)
            MMC_ERR("distributed graph by edges, call %d: %d in, %d out, weighted %d (expected "
                    "3, 3, 1), in-edge weights %d %d %d (expected %d %d %d)\n", i, in, out,
                    weighted, inw[0], inw[1], inw[2], want[0], want[1], want[2]);
        MPI_Comm_free(&g);
    }
    if (wrong > 1)
        MMC_ERR("distributed graph by edges: %d of %d calls wrong\n", wrong, DIST_ROUNDS);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    ref = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c, d, inter;

    if (argc > 1 && !strcmp(argv[1], "dynamic")) {
        MPI_Comm parent;
        MPI_Comm_get_parent(&parent);
        dynamic(argv[0], parent);
        if (parent != MPI_COMM_NULL) {
            /* the children report through the parents */
            MPI_Finalize();
            return 0;
        }
        return mmc_finish();
    }

    check_intra(MPI_COMM_WORLD, "world");
    check_intra(MPI_COMM_SELF, "self");
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    check_intra(c, "dup");
    MPI_Comm_free(&c);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &c);
    check_intra(c, "reversed");
    MPI_Comm_free(&c);
    MPI_Comm_split(MPI_COMM_WORLD, wrank < size / 2, wrank, &c);
    check_intra(c, "halved");
    MPI_Comm_free(&c);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c);
    check_intra(c, "odd/even");
    MPI_Comm_free(&c);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
    check_intra(c, "shared-memory split");
    MPI_Comm_free(&c);

    /* topologies, with their neighbours' messages */
    int dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c);
    check_intra(c, "cartesian");
    {
        int r, n, *nb = malloc(2 * 2 * sizeof(int)), *got = malloc(4 * sizeof(int));
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        MPI_Neighbor_allgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c);
        for (int dim = 0; dim < 2; dim++) {
            int src, dst;
            MPI_Cart_shift(c, dim, 1, &src, &dst);
            nb[2 * dim] = src;
            nb[2 * dim + 1] = dst;
        }
        for (int i = 0; i < 4; i++)
            if (nb[i] != MPI_PROC_NULL && got[i] != world_of(c, nb[i], 0))
                MMC_ERR("cartesian: neighbour %d (rank %d) sent %d\n", i, nb[i], got[i]);
        free(nb);
        free(got);
        int keep[2] = { 0, 1 };
        MPI_Cart_sub(c, keep, &d);
        check_intra(d, "cartesian sub-grid");
        MPI_Comm_free(&d);
    }
    MPI_Comm_free(&c);
    {
        /* a ring as a graph, and as a distributed graph */
        int *index = malloc(size * sizeof(int)), *edges = malloc(2 * size * sizeof(int));
        for (int i = 0; i < size; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + size - 1) % size;
            edges[2 * i + 1] = (i + 1) % size;
        }
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c);
        check_intra(c, "graph");
        MPI_Comm_free(&c);
        int srcs[2] = { (wrank + size - 1) % size, (wrank + 1) % size }, got[2];
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, srcs,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
        check_intra(c, "distributed graph");
        MPI_Neighbor_allgather(&wrank, 1, MPI_INT, got, 1, MPI_INT, c);
        if (size > 2 && (got[0] != srcs[0] || got[1] != srcs[1]))
            MMC_ERR("distributed graph: neighbours sent %d %d, expected %d %d\n", got[0],
                    got[1], srcs[0], srcs[1]);
        MPI_Comm_free(&c);
        free(index);
        free(edges);
        dist_graph_by_edges(size);
    }

    /* intercommunicators: the first half against the rest, then what is
     * made from one */
    if (size > 1) {
        int low = wrank < (size + 1) / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &c);
        MPI_Intercomm_create(c, 0, MPI_COMM_WORLD, low ? (size + 1) / 2 : 0, 9, &inter);
        check_inter_family(inter, !low, "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&c);
    }
    return mmc_finish();
}
