/*
 * mpich-multichannel: small collectives by exchange through shared memory
 * (exch_coll.h; the layout and its argument in exch_layout.h).
 *
 * An allreduce of n ranks costs one one-way latency: every rank publishes
 * its contribution, reads the others' and reduces them itself, all ranks in
 * the same order (rank 0's op rank 1's op ...), so every rank gets the same
 * bits, and MPI's order for operations that do not commute is kept.
 * MPICH's release_gather takes two (gather to a root, then release).
 */
#include "mpidimpl.h"
#include "mmc_compat.h"
#include "ch4_poll.h"
#include "exch_coll.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories:
    - name        : CH4_SHM_EXCH
      description : mpich-multichannel's small collectives by exchange through shared memory

cvars:
    - name        : MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE
      category    : CH4_SHM_EXCH
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Largest payload in bytes of an MPI_Allreduce, MPI_Reduce or MPI_Bcast that goes by
        exchange through shared memory on a communicator of 2 to 8 ranks of one node (each
        rank publishes its contribution and reduces everyone's itself: one one-way latency);
        MPI_Barrier on such a communicator goes the same way. Only predefined datatypes and
        operations, and only where MPICH's algorithm CVAR for the collective on shared memory
        (MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM and its kin) is auto. Default -1: 2048,
        chosen by measurement (doc/shm.md). 0 turns the exchange off: MPICH's own algorithms.
        Else at most 65536.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

typedef enum {
    EXCH_NEW,                   /* no exchange yet */
    EXCH_ALLOCATING,            /* the segment's allocation runs (its own collectives go
                                 * MPICH's way) */
    EXCH_UNAVAILABLE,           /* it could not be allocated: MPICH's way for good */
    EXCH_READY
} exch_state_t;

typedef struct {
    exch_state_t state;
    MPIDI_EXCH_layout_t l;
    char *base;                 /* the communicator's segment */
    uint64_t seq;               /* the last operation of this rank */
    uint64_t all_done;          /* an operation every rank is known to have left */
} exch_comm_t;

static struct {
    int registered;
    size_t max_bytes;
    unsigned long long ops;     /* pvar ch4_shm_exch_ops */
} exch;

#define EXCH(comm_) ((exch_comm_t *) MPIDI_POSIX_COMM(comm_, exch))

/* The state is allocated here, not at the first exchange, so that every
 * rank of a communicator either gets that far or fails its creation. */
int MPIDI_EXCH_comm_init(MPIR_Comm * comm)
{
    MPIDI_POSIX_COMM(comm, exch) = MPL_calloc(1, sizeof(exch_comm_t), MPL_MEM_COMM);
    if (!MPIDI_POSIX_COMM(comm, exch))
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_NO_MEM, "**nomem", 0);
    if (exch.registered)
        return MPI_SUCCESS;
    exch.registered = 1;
    if (MPIDI_EXCH_max_size(MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE, &exch.max_bytes)) {
        char v[32];
        snprintf(v, sizeof(v), "%d", MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE);
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                                    "MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE", v);
    }
    MMC_PVAR_COUNTER("CH4_SHM_EXCH", "ch4_shm_exch_ops", &exch.ops,
                     "Allreduces, reduces, bcasts and barriers done by exchange through shared "
                     "memory");
    return MPI_SUCCESS;
}

void MPIDI_EXCH_comm_free(MPIR_Comm * comm)
{
    exch_comm_t *s = EXCH(comm);
    if (s && s->state == EXCH_READY)
        MPIDU_shm_free(s->base);
    MPL_free(s);
    MPIDI_POSIX_COMM(comm, exch) = NULL;
}

/* The communicator's state once its segment exists, allocated (collectively:
 * every rank of comm comes here at the same operation) on its first
 * exchange; NULL while that allocation's own collectives run, or for good
 * where it failed (MPICH's allocation agrees on failure among the ranks):
 * MPICH's own algorithms then, as its release_gather falls back. */
static exch_comm_t *comm_state(MPIR_Comm * comm)
{
    exch_comm_t *s = EXCH(comm);
    bool failed = false;

    if (s && s->state == EXCH_NEW) {
        s->state = EXCH_ALLOCATING;
        MPIDI_EXCH_layout(comm->local_size, exch.max_bytes, &s->l);
        int mpi_errno = MMC_COMM_SHM_ALLOC(comm, s->l.total, (void **) &s->base, &failed);
        s->state = mpi_errno || failed ? EXCH_UNAVAILABLE : EXCH_READY;
    }
    return s && s->state == EXCH_READY ? s : NULL;
}

static inline uint64_t *word(exch_comm_t * s, int rank, uint64_t seq)
{
    return (uint64_t *) (s->base + MPIDI_EXCH_offset(&s->l, rank, seq));
}

static inline uint64_t *size_word(exch_comm_t * s, int rank, uint64_t seq)
{
    return (uint64_t *) (s->base + MPIDI_EXCH_offset(&s->l, rank, seq) + MPIDI_EXCH_SIZE_OFFSET);
}

static inline char *data(exch_comm_t * s, int rank, uint64_t seq)
{
    return s->base + MPIDI_EXCH_offset(&s->l, rank, seq) + MPIDI_EXCH_DATA_OFFSET;
}

/* Rank me's buffer of operation seq, holding bytes of data, made visible:
 * the size (and whether this rank came with an error) with the data, both
 * before the sequence word. */
static inline void publish(exch_comm_t * s, int me, uint64_t seq, size_t bytes, int failed)
{
    *size_word(s, me, seq) = bytes | (failed ? MPIDI_EXCH_FAILED : 0);
    __atomic_store_n(word(s, me, seq), seq, __ATOMIC_RELEASE);
}

/* What a reader makes of another rank's size word, as MPICH's point-to-point
 * algorithms do of a message: the error an earlier step of that rank had
 * (an error bit in the tag there), or sizes that differ (an erroneous
 * program, a truncation or a size mismatch there; MPICH's own errors tests
 * check it). */
static int check_peer(uint64_t theirs, size_t mine)
{
    if (theirs & MPIDI_EXCH_FAILED)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**coll_fail", 0);
    if (theirs != mine)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**collective_size_mismatch",
                                    "**collective_size_mismatch %d %d", (int) theirs,
                                    (int) mine);
    return MPI_SUCCESS;
}

/* Waits for rank r's word of operation seq to reach seq.  The spin yields
 * where ranks outnumber CPUs and makes progress passes now and then, so
 * that requests a peer waits for before it comes here move on. */
static void wait_rank(exch_comm_t * s, int r, uint64_t seq)
{
    uint64_t *w = word(s, r, seq);
    unsigned spins = 0;
    while (__atomic_load_n(w, __ATOMIC_ACQUIRE) < seq) {
        spins++;
        MPIDI_POLL_FLAG_SPUN(spins);
        if (spins % 1024 == 0)
            MPID_Progress_test(NULL);
    }
}

/* Waits until every other rank has published seq (a rank publishes an
 * operation only once it has left the one before). */
static void wait_all(exch_comm_t * s, int me, int n, uint64_t seq)
{
    for (int r = 0; r < n; r++)
        if (r != me)
            wait_rank(s, r, seq);
    s->all_done = seq - 1;
}

/* The next operation, once its buffers are free: their last readers left
 * the operation MPIDI_EXCH_DEPTH before, which every rank has when it has
 * published the one after that.  Allreduce and barrier wait for all, so
 * after them this costs nothing; bcasts and reduces let ranks run ahead.  A
 * rank that must wait waits for the others to come within half the depth,
 * so that it looks at their words once every few operations, not at each
 * (a look is a cache line that the other rank's core holds). */
static uint64_t next_op(exch_comm_t * s, int me, int n)
{
    uint64_t seq = ++s->seq;
    if (seq > MPIDI_EXCH_DEPTH && s->all_done < seq - MPIDI_EXCH_DEPTH)
        wait_all(s, me, n, seq - MPIDI_EXCH_DEPTH / 2);
    return seq;
}

/* The communicator's state where the exchange applies to an operation of
 * bytes: NULL goes MPICH's way. */
static exch_comm_t *begin(MPIR_Comm * comm, size_t bytes)
{
    if (MPIR_IS_THREADED || comm->comm_kind != MPIR_COMM_KIND__INTRACOMM ||
        !MPIDI_EXCH_applies(comm->local_size, bytes, exch.max_bytes))
        return NULL;
    return comm_state(comm);
}

/* count elements of a predefined (so contiguous) datatype: their bytes */
static int builtin_bytes(MPI_Aint count, MPI_Datatype datatype, size_t * bytes)
{
    MPI_Aint type_size;
    if (count <= 0 || !HANDLE_IS_BUILTIN(datatype))
        return 0;
    MPIR_Datatype_get_size_macro(datatype, type_size);
    if (type_size <= 0 || count > (MPI_Aint) (MPIDI_EXCH_SIZE_LIMIT / type_size))
        return 0;
    *bytes = (size_t) (count * type_size);
    return 1;
}

/* rank 0's op (rank 1's op (... op rank n-1's)) into recvbuf: the same
 * bits on every rank that computes it */
static int reduce_all(exch_comm_t * s, uint64_t seq, int n, void *recvbuf, MPI_Aint count,
                      MPI_Datatype datatype, MPI_Op op)
{
    int mpi_errno = MPI_SUCCESS;
    size_t bytes;
    builtin_bytes(count, datatype, &bytes);
    for (int r = 0; r < n && !mpi_errno; r++)
        mpi_errno = check_peer(*size_word(s, r, seq), bytes);
    if (mpi_errno)
        return mpi_errno;
    memcpy(recvbuf, data(s, n - 1, seq), bytes);
    for (int r = n - 2; r >= 0 && !mpi_errno; r--)
        mpi_errno = MPIR_Reduce_local(data(s, r, seq), recvbuf, count, datatype, op);
    return mpi_errno;
}

/* An allreduce (root -1) or a reduce: the ranks but a reduce's root leave
 * as soon as their data are in place. */
static int reduction(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPIR_Comm * comm, int failed, int *done)
{
    exch_comm_t *s;
    size_t bytes;

    *done = HANDLE_IS_BUILTIN(op) && builtin_bytes(count, datatype, &bytes) &&
        (s = begin(comm, bytes)) != NULL;
    if (!*done)
        return MPI_SUCCESS;
    int me = comm->rank, n = comm->local_size;
    uint64_t seq = next_op(s, me, n);
    memcpy(data(s, me, seq), sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, bytes);
    publish(s, me, seq, bytes, failed);
    exch.ops++;
    if (root >= 0 && me != root)
        return MPI_SUCCESS;
    wait_all(s, me, n, seq);
    return reduce_all(s, seq, n, recvbuf, count, datatype, op);
}

int MPIDI_EXCH_allreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                         MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm, int failed,
                         int *done)
{
    return reduction(sendbuf, recvbuf, count, datatype, op, -1, comm, failed, done);
}

int MPIDI_EXCH_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPIR_Comm * comm, int failed, int *done)
{
    return reduction(sendbuf, recvbuf, count, datatype, op, root, comm, failed, done);
}

/* A bcast's datatype may differ between ranks (only its signature must
 * match), so the choice rests on the bytes alone and the data travel
 * packed. */
int MPIDI_EXCH_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                     MPIR_Comm * comm, int failed, int *done)
{
    int mpi_errno;
    exch_comm_t *s;
    MPI_Aint type_size;

    MPIR_Datatype_get_size_macro(datatype, type_size);
    *done = count > 0 && type_size > 0 &&
        count <= (MPI_Aint) (MPIDI_EXCH_SIZE_LIMIT / type_size) &&
        (s = begin(comm, (size_t) (count * type_size))) != NULL;
    if (!*done)
        return MPI_SUCCESS;
    MPI_Aint bytes = count * type_size, sent = bytes;
    uint64_t theirs = (uint64_t) bytes;
    int me = comm->rank, n = comm->local_size;
    uint64_t seq = next_op(s, me, n);
    if (me != root) {
        wait_rank(s, root, seq);
        theirs = *size_word(s, root, seq);
        sent = (MPI_Aint) (theirs & ~MPIDI_EXCH_FAILED);
    }
    char *shared = data(s, root, seq);
    /* what both sides hold, where they disagree */
    MPI_Aint take = sent < bytes ? sent : bytes;
    /* a predefined datatype but the pair types is contiguous from its start:
     * no trip through MPICH's copy for the common case */
    mpi_errno = MPI_SUCCESS;
    if (HANDLE_IS_BUILTIN(datatype))
        memcpy(me == root ? shared : buffer, me == root ? buffer : shared, take);
    else if (me == root)
        mpi_errno = MPIR_Localcopy(buffer, count, datatype, shared, bytes, MMC_BYTE);
    else
        mpi_errno = MPIR_Localcopy(shared, take, MMC_BYTE, buffer, count, datatype);
    /* the root's at once, the others' once they have read it */
    publish(s, me, seq, bytes, failed);
    exch.ops++;
    if (!mpi_errno)
        mpi_errno = check_peer(theirs, bytes);
    return mpi_errno;
}

int MPIDI_EXCH_barrier(MPIR_Comm * comm, int failed, int *done)
{
    int mpi_errno = MPI_SUCCESS;
    exch_comm_t *s = begin(comm, 0);

    *done = s != NULL;
    if (!s)
        return MPI_SUCCESS;
    int me = comm->rank, n = comm->local_size;
    uint64_t seq = next_op(s, me, n);
    publish(s, me, seq, 0, failed);
    wait_all(s, me, n, seq);
    exch.ops++;
    for (int r = 0; r < n && !mpi_errno; r++)
        mpi_errno = check_peer(*size_word(s, r, seq), 0);
    return mpi_errno;
}

/* every rank of comm on this node: ch4's own test for sending an allreduce
 * to shared memory (its selection's comm_size=node_comm_size) */
static int one_node(MPIR_Comm * comm)
{
    return comm->comm_kind == MPIR_COMM_KIND__INTRACOMM && comm->node_comm &&
        comm->node_comm->local_size == comm->local_size;
}

int MPIDI_EXCH_bcast_direct(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                            MPIR_Comm * comm, int *mpi_errno)
{
    int done = 0;
    if (MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM == MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM_auto &&
        one_node(comm))
        *mpi_errno = MPIDI_EXCH_bcast(buffer, count, datatype, root, comm, 0, &done);
    return done || *mpi_errno;
}

int MPIDI_EXCH_reduce_direct(const void *sendbuf, void *recvbuf, MPI_Aint count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                             int *mpi_errno)
{
    int done = 0;
    if (MPIR_CVAR_REDUCE_POSIX_INTRA_ALGORITHM == MPIR_CVAR_REDUCE_POSIX_INTRA_ALGORITHM_auto &&
        one_node(comm))
        *mpi_errno = MPIDI_EXCH_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, 0,
                                       &done);
    return done || *mpi_errno;
}
