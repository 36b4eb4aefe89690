! Fortran through use mpi_f08 (compiled with mpifort): typed arrays around a
! ring at sizes that take each path (a fast box, MPICH's queue, above the pack
! buffers, CMA on one node and ch4:tcp's rendezvous across hosts), a strided
! array section as the buffer, REAL(16), nonblocking requests, and
! collectives over a split and an intercommunicator.  Every received value is
! checked; rank 0 prints " No Errors".
program fort_f08
  use mpi_f08
  implicit none
  integer, parameter :: NSIZES = 4
  ! doubles per message: a fast box, the queue, above the pack buffers, CMA
  integer, parameter :: COUNTS(NSIZES) = [3, 375, 25000, 625000]
  type(MPI_Comm) :: half, inter
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: status
  integer :: rank, nprocs, left, right, s, n, i, errs, hrank, hsize, got, remote, ierr
  real(8), allocatable :: d(:), dr(:)
  complex(8), allocatable :: z(:), zr(:)
  real(16) :: q(5), qr(5)
  integer :: isum

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  errs = 0
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  do s = 1, NSIZES
    n = COUNTS(s)
    allocate(d(n), dr(n), z(2 * n), zr(n))
    d = [(real(i * 3 + rank, 8), i = 1, n)]
    z = [(cmplx(i, -rank, 8), i = 1, 2 * n)]
    dr = -1
    zr = (-1, -1)
    call MPI_Irecv(dr, n, MPI_REAL8, left, 1, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(d, n, MPI_REAL8, right, 1, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    if (any(dr /= [(real(i * 3 + left, 8), i = 1, n)])) then
      print '(a, i0, a, i0)', 'MPI_REAL8 x ', n, ': wrong values on rank ', rank
      errs = errs + 1
    end if
    ! every other element of z: a section the bindings pass as noncontiguous
    call MPI_Sendrecv(z(1:2 * n:2), n, MPI_DOUBLE_COMPLEX, right, 2, zr, n, &
                      MPI_DOUBLE_COMPLEX, left, 2, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_DOUBLE_COMPLEX, got)
    if (got /= n .or. any(zr /= [(cmplx(2 * i - 1, -left, 8), i = 1, n)])) then
      print '(a, i0, a, i0)', 'MPI_DOUBLE_COMPLEX section x ', n, ': wrong values on rank ', rank
      errs = errs + 1
    end if
    deallocate(d, dr, z, zr)
  end do

  q = [(real(i, 16) / 3 + rank, i = 1, 5)]
  qr = 0
  call MPI_Sendrecv(q, 5, MPI_REAL16, right, 3, qr, 5, MPI_REAL16, left, 3, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  if (any(qr /= [(real(i, 16) / 3 + left, i = 1, 5)])) then
    print '(a, i0)', 'MPI_REAL16: wrong values on rank ', rank
    errs = errs + 1
  end if

  ! two halves, and the intercommunicator between them
  call MPI_Comm_split(MPI_COMM_WORLD, merge(0, 1, rank < nprocs / 2), rank, half)
  call MPI_Comm_rank(half, hrank)
  call MPI_Comm_size(half, hsize)
  if (hsize /= merge(nprocs / 2, nprocs - nprocs / 2, rank < nprocs / 2) .or. &
      hrank /= merge(rank, rank - nprocs / 2, rank < nprocs / 2)) then
    print '(a, i0, a, i0, a, i0)', 'rank ', rank, ': rank ', hrank, ' of ', hsize, ' in its half'
    errs = errs + 1
  end if
  call MPI_Allreduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, half)
  if (rank < nprocs / 2) then
    got = (nprocs / 2) * (nprocs / 2 - 1) / 2
  else
    got = (nprocs * (nprocs - 1) - (nprocs / 2) * (nprocs / 2 - 1)) / 2
  end if
  if (isum /= got) then
    print '(a, i0, a, i0)', 'MPI_Allreduce over a half: ', isum, ', expected ', got
    errs = errs + 1
  end if
  remote = merge(nprocs / 2, 0, rank < nprocs / 2)
  call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, 7, inter)
  ! an intercommunicator's allreduce gives each group the other's sum
  call MPI_Allreduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, inter)
  got = nprocs * (nprocs - 1) / 2 - got
  if (isum /= got) then
    print '(a, i0, a, i0)', 'MPI_Allreduce over an intercommunicator: ', isum, &
          ', expected ', got
    errs = errs + 1
  end if
  call MPI_Comm_free(inter)
  call MPI_Comm_free(half)

  include 'mmc_report.inc'
end program
