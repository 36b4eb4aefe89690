/*
 * mpich-multichannel: ch4:tcp entries that need nothing of the netmod:
 * communicator, window, datatype and op hooks, and windows, partitioned
 * communication and memory through MPIDIG's generic code (dynamic
 * processes: tcp_dynamic.c).
 */
#include "mpidimpl.h"
#include "tcp_types.h"

int MPIDI_TCP_comm_set_hints(MPIR_Comm * comm_ptr, MPIR_Info * info)
{
    return MPI_SUCCESS;
}

/* 5.0 sets up the world in the commit of a bootstrap communicator */
int MPIDI_TCP_mpi_comm_commit_pre_hook(MPIR_Comm * comm)
{
    return MMC_COMM_IS_BOOTSTRAP(comm) ? MPIDI_TCP_bootstrap(comm) : MPI_SUCCESS;
}

/* Communicators by the context id their messages carry, so that the sender
 * a message names can be checked against the connection it came on
 * (tcp_verify.c); the last one found is kept, as consecutive messages mostly
 * share a communicator. */
void *MPIDI_TCP_comm_lookup(uint64_t recvcontext_id)
{
    MPIDI_TCP_global_t *g = &MPIDI_TCP_global;
    if (g->last_comm && g->last_ctx == recvcontext_id)
        return g->last_comm;
    void *comm = g->comm_map ? MPIDIU_map_lookup(g->comm_map, recvcontext_id) :
        MPIDIU_MAP_NOT_FOUND;
    if (comm != MPIDIU_MAP_NOT_FOUND) {
        g->last_ctx = recvcontext_id;
        g->last_comm = comm;
    }
    return comm;
}

int MPIDI_TCP_mpi_comm_commit_post_hook(MPIR_Comm * comm)
{
    if (MPIDI_TCP_global.comm_map == NULL)
        MPIDIU_map_create(&MPIDI_TCP_global.comm_map, MPL_MEM_COMM);
    if (MPIDIU_map_lookup(MPIDI_TCP_global.comm_map, comm->recvcontext_id) != MPIDIU_MAP_NOT_FOUND)
        MPIDIU_map_erase(MPIDI_TCP_global.comm_map, comm->recvcontext_id);
    MPIDIU_map_set(MPIDI_TCP_global.comm_map, comm->recvcontext_id, comm, MPL_MEM_COMM);
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_comm_free_hook(MPIR_Comm * comm)
{
    if (MPIDI_TCP_global.last_comm == comm)
        MPIDI_TCP_global.last_comm = NULL;
    if (MPIDI_TCP_global.comm_map &&
        MPIDIU_map_lookup(MPIDI_TCP_global.comm_map, comm->recvcontext_id) == comm)
        MPIDIU_map_erase(MPIDI_TCP_global.comm_map, comm->recvcontext_id);
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_create_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_allocate_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_allocate_shared_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_create_dynamic_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_detach_hook(MPIR_Win * win, const void *base)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_win_free_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int rank, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** req_p)
{
    return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, rank, tag, comm, info, req_p);
}

int MPIDI_TCP_mpi_precv_init(void *buf, int partitions, MPI_Aint count, MPI_Datatype datatype,
                             int rank, int tag, MPIR_Comm * comm, MPIR_Info * info,
                             MPIDI_av_entry_t * av, MPIR_Request ** req_p)
{
    return MMC_PRECV_INIT(buf, partitions, count, datatype, rank, tag, comm, info, req_p);
}

void *MPIDI_TCP_mpi_alloc_mem(MPI_Aint size, MPIR_Info * info)
{
    return MPIDIG_mpi_alloc_mem(size, info);
}

int MPIDI_TCP_mpi_free_mem(void *ptr)
{
    return MPIDIG_mpi_free_mem(ptr);
}

int MPIDI_TCP_mpi_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    return MPIDIG_mpi_win_set_info(win, info);
}

int MPIDI_TCP_mpi_win_get_info(MPIR_Win * win, MPIR_Info ** info_p)
{
    return MPIDIG_mpi_win_get_info(win, info_p);
}

int MPIDI_TCP_mpi_win_free(MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_free(win_p);
}

int MPIDI_TCP_mpi_win_create(void *base, MPI_Aint length, int disp_unit, MPIR_Info * info,
                             MPIR_Comm * comm_ptr, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_create(base, length, disp_unit, info, comm_ptr, win_p);
}

int MPIDI_TCP_mpi_win_attach(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPIDIG_mpi_win_attach(win, base, size);
}

int MPIDI_TCP_mpi_win_allocate_shared(MPI_Aint size, int disp_unit, MPIR_Info * info,
                                      MPIR_Comm * comm_ptr, void **baseptr_p, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_allocate_shared(size, disp_unit, info, comm_ptr, baseptr_p, win_p);
}

int MPIDI_TCP_mpi_win_detach(MPIR_Win * win, const void *base)
{
    return MPIDIG_mpi_win_detach(win, base);
}

int MPIDI_TCP_mpi_win_allocate(MPI_Aint size, int disp_unit, MPIR_Info * info, MPIR_Comm * comm,
                               void *baseptr, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_allocate(size, disp_unit, info, comm, baseptr, win_p);
}

int MPIDI_TCP_mpi_win_create_dynamic(MPIR_Info * info, MPIR_Comm * comm, MPIR_Win ** win_p)
{
    return MPIDIG_mpi_win_create_dynamic(info, comm, win_p);
}

int MPIDI_TCP_mpi_type_commit_hook(MPIR_Datatype * datatype_p)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_type_free_hook(MPIR_Datatype * datatype_p)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_op_commit_hook(MPIR_Op * op_p)
{
    return MPI_SUCCESS;
}

int MPIDI_TCP_mpi_op_free_hook(MPIR_Op * op_p)
{
    return MPI_SUCCESS;
}
