/*
 * mpich-multichannel: small collectives by exchange through shared memory
 * (doc/shm.md, *Small collectives by exchange*).  The overlay calls these at
 * the top of posix's MPIDI_POSIX_mpi_allreduce, _reduce, _bcast and _barrier
 * when MPICH's algorithm CVAR for them is auto; an operation that does not apply
 * (more than MPIDI_EXCH_MAX_RANKS ranks, a payload above
 * MPIR_CVAR_CH4_SHM_EXCH_MAX_SIZE, a derived datatype or a user's operation,
 * MPI_THREAD_MULTIPLE) returns with *done 0 and goes MPICH's way.
 */
#ifndef EXCH_COLL_H_INCLUDED
#define EXCH_COLL_H_INCLUDED

#include "exch_layout.h"

/* from the posix comm commit and free hooks of every intracommunicator */
int MPIDI_EXCH_comm_init(MPIR_Comm * comm);
void MPIDI_EXCH_comm_free(MPIR_Comm * comm);

/* failed: this rank comes with an error of an earlier step of ch4's
 * composition (MMC_POSIX_COLL_FAILED), which the others then report, as
 * MPICH's algorithms pass it on in their messages' tags */
int MPIDI_EXCH_allreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                         MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm, int failed,
                         int *done);
int MPIDI_EXCH_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPIR_Comm * comm, int failed, int *done);
int MPIDI_EXCH_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                     MPIR_Comm * comm, int failed, int *done);
int MPIDI_EXCH_barrier(MPIR_Comm * comm, int failed, int *done);

/* A bcast or a reduce on a communicator whose ranks are all on this node,
 * from ch4's MPID_Bcast and MPID_Reduce before their composition (overlay
 * hooks): ch4 sends such an allreduce to shared memory at once, while its
 * bcast and reduce compositions add an inter-node step over one rank
 * (MPICH's selection again, a temporary buffer at a reduce's root).
 * Returns 1 where the exchange took it or failed (*mpi_errno). */
int MPIDI_EXCH_bcast_direct(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                            MPIR_Comm * comm, int *mpi_errno);
int MPIDI_EXCH_reduce_direct(const void *sendbuf, void *recvbuf, MPI_Aint count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                             int *mpi_errno);

#endif /* EXCH_COLL_H_INCLUDED */
