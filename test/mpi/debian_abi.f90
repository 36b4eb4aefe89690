! Built with Debian's own MPICH (mpifort.mpich, linked to libmpichfort.so.12
! and libmpich.so.12, through mpif.h), run on ours with
! LD_LIBRARY_PATH=PREFIX/lib alone: the library that answers is this
! install's (MPI_Get_library_version names its prefix, MMC_PREFIX), and a
! ring of MPI_DOUBLE_PRECISION values and an allreduce arrive whole.
program debian_abi
  implicit none
  include 'mpif.h'
  integer, parameter :: N = 3000
  integer :: ierr, rank, nprocs, left, right, errs, len, i, total
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  character(len=4096) :: prefix
  double precision :: out(N), in(N)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  errs = 0
  call get_environment_variable('MMC_PREFIX', prefix)
  call MPI_Get_library_version(version, len, ierr)
  if (len_trim(prefix) == 0 .or. index(version(1:len), trim(prefix)) == 0) then
    print '(a, i0, a, a)', 'rank ', rank, ': not this install''s library: ', version(1:100)
    errs = errs + 1
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  out = [(rank * 0.5d0 + i, i = 1, N)]
  in = -1
  call MPI_Sendrecv(out, N, MPI_DOUBLE_PRECISION, right, 0, in, N, MPI_DOUBLE_PRECISION, &
                    left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (any(in /= [(left * 0.5d0 + i, i = 1, N)])) then
    print '(a, i0, a, i0)', 'rank ', rank, ': wrong values from rank ', left
    errs = errs + 1
  end if
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nprocs * (nprocs - 1) / 2) errs = errs + 1
  include 'mmc_report.inc'
end program
