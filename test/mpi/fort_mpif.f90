! Fortran through mpif.h (compiled with mpifort): a ring of every Fortran
! datatype at sizes that take each path (a fast box, MPICH's queue, above the
! pack buffers, CMA on one node and ch4:tcp's rendezvous across hosts), a
! vector with holes into a vector with holes, MPI_Allreduce sums and MINLOC
! on the Fortran pair types.  Every received byte is checked; rank 0 prints
! " No Errors".
module fort_values
  implicit none
  ! the Fortran types the ring sends
  integer, parameter :: K_INTEGER = 1, K_INTEGER8 = 2, K_REAL = 3, K_DOUBLE = 4, &
                        K_REAL16 = 5, K_COMPLEX = 6, K_DCOMPLEX = 7, K_LOGICAL = 8, &
                        K_CHARACTER = 9, NKINDS = 9
  character(len=20), parameter :: KIND_NAMES(NKINDS) = [character(len=20) :: &
       'MPI_INTEGER', 'MPI_INTEGER8', 'MPI_REAL', 'MPI_DOUBLE_PRECISION', 'MPI_REAL16', &
       'MPI_COMPLEX', 'MPI_DOUBLE_COMPLEX', 'MPI_LOGICAL', 'MPI_CHARACTER']
contains
  ! element i of what rank r sends, exact in every type (below 2**24)
  integer(8) function value_of(r, i)
    integer, intent(in) :: r
    integer(8), intent(in) :: i
    value_of = mod(i * 7_8 + r * 131_8, 100003_8)
  end function

  ! the bytes of value v as a Fortran value of kind k
  function encode(k, v) result(b)
    integer, intent(in) :: k
    integer(8), intent(in) :: v
    integer(1), allocatable :: b(:)
    integer(1) :: m(1)
    select case (k)
    case (K_INTEGER)
      b = transfer(int(v, 4), m)
    case (K_INTEGER8)
      b = transfer(v, m)
    case (K_REAL)
      b = transfer(real(v, 4), m)
    case (K_DOUBLE)
      b = transfer(real(v, 8), m)
    case (K_REAL16)
      b = transfer(real(v, 16), m)
    case (K_COMPLEX)
      b = transfer(cmplx(v, -v, 4), m)
    case (K_DCOMPLEX)
      b = transfer(cmplx(v, -v, 8), m)
    case (K_LOGICAL)
      b = transfer(mod(v, 2_8) == 0, m)
    case default
      b = transfer(achar(33 + mod(v, 90_8)), m)
    end select
  end function

  ! n elements of kind k from rank r, as bytes
  subroutine fill(k, r, n, buf)
    integer, intent(in) :: k, r
    integer(8), intent(in) :: n
    integer(1), intent(out) :: buf(:)
    integer(8) :: i, sz
    sz = size(encode(k, 0_8), kind=8)
    do i = 1, n
      buf((i - 1) * sz + 1:i * sz) = encode(k, value_of(r, i))
    end do
  end subroutine
end module

program fort_mpif
  use fort_values
  implicit none
  include 'mpif.h'
  integer, parameter :: NSIZES = 4
  ! message sizes in bytes: a fast box, the queue, above the pack buffers, CMA
  integer(8), parameter :: BYTES(NSIZES) = [24_8, 3000_8, 200000_8, 5000000_8]
  integer :: ierr, rank, nprocs, left, right, k, s, errs, req, vec, sz
  integer :: types(NKINDS)
  integer :: status(MPI_STATUS_SIZE)
  integer(8) :: n, i
  integer(1), allocatable :: sbuf(:), rbuf(:), want(:)
  double precision, allocatable :: dsend(:), drecv(:)
  double precision :: pairs(2, 3), pairsout(2, 3), total
  integer :: ipairs(2, 2), ipairsout(2, 2), got

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  errs = 0
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  types = [MPI_INTEGER, MPI_INTEGER8, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL16, &
           MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_CHARACTER]

  do k = 1, NKINDS
    if (types(k) == MPI_DATATYPE_NULL) then
      print '(a, a)', 'this MPICH has no ', trim(KIND_NAMES(k))
      errs = errs + 1
      cycle
    end if
    call MPI_Type_size(types(k), sz, ierr)
    if (sz /= size(encode(k, 0_8))) then
      print '(a, a, i0, a, i0)', trim(KIND_NAMES(k)), ': MPI_Type_size ', sz, &
            ', the compiler''s ', size(encode(k, 0_8))
      errs = errs + 1
      cycle
    end if
    do s = 1, NSIZES
      n = max(1_8, BYTES(s) / sz)
      allocate(sbuf(n * sz), rbuf(n * sz), want(n * sz))
      call fill(k, rank, n, sbuf)
      call fill(k, left, n, want)
      rbuf = -1
      call MPI_Irecv(rbuf, int(n), types(k), left, k, MPI_COMM_WORLD, req, ierr)
      call MPI_Send(sbuf, int(n), types(k), right, k, MPI_COMM_WORLD, ierr)
      call MPI_Wait(req, status, ierr)
      call MPI_Get_count(status, types(k), got, ierr)
      if (got /= n .or. any(rbuf /= want)) then
        print '(a, i0, a, a, a, i0, a, i0, a, i0)', 'rank ', rank, ': ', trim(KIND_NAMES(k)), &
              ' x ', n, ' from rank ', left, ': count ', got
        errs = errs + 1
      end if
      deallocate(sbuf, rbuf, want)
    end do
  end do

  ! every other element of 2n, sent as a vector, received into a vector: the
  ! holes of the receive keep what they held
  n = 40000
  allocate(dsend(2 * n), drecv(2 * n))
  do i = 1, 2 * n
    dsend(i) = real(value_of(rank, i), 8)
  end do
  drecv = -1.0d0
  call MPI_Type_vector(int(n), 1, 2, MPI_DOUBLE_PRECISION, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Sendrecv(dsend, 1, vec, right, 100, drecv, 1, vec, left, 100, MPI_COMM_WORLD, &
                    status, ierr)
  do i = 1, 2 * n
    if ((mod(i, 2_8) == 1 .and. drecv(i) /= real(value_of(left, i), 8)) .or. &
        (mod(i, 2_8) == 0 .and. drecv(i) /= -1.0d0)) then
      print '(a, i0, a, i0)', 'vector with holes: wrong element ', i, ' on rank ', rank
      errs = errs + 1
      exit
    end if
  end do
  call MPI_Type_free(vec, ierr)

  ! a sum, and MINLOC on MPI_2DOUBLE_PRECISION and MPI_2INTEGER
  call MPI_Allreduce(real(rank + 1, 8), total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                     MPI_COMM_WORLD, ierr)
  if (total /= nprocs * (nprocs + 1) / 2.0d0) then
    print '(a, f0.1)', 'MPI_Allreduce sum: ', total
    errs = errs + 1
  end if
  do s = 1, 3
    pairs(1, s) = real(mod(rank + s, nprocs), 8)
    pairs(2, s) = real(rank, 8)
  end do
  call MPI_Allreduce(pairs, pairsout, 3, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, &
                     ierr)
  do s = 1, 3
    ! value 0 is held by the rank r with mod(r + s, nprocs) == 0
    if (pairsout(1, s) /= 0.0d0 .or. pairsout(2, s) /= real(modulo(-s, nprocs), 8)) then
      print '(a, i0, a, 2f6.1)', 'MINLOC on MPI_2DOUBLE_PRECISION, element ', s, ': ', &
            pairsout(:, s)
      errs = errs + 1
    end if
  end do
  ipairs(1, :) = [rank * 10, -rank]
  ipairs(2, :) = rank
  call MPI_Allreduce(ipairs, ipairsout, 2, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (any(ipairsout(1, :) /= [(nprocs - 1) * 10, 0]) .or. &
      any(ipairsout(2, :) /= [nprocs - 1, 0])) then
    print '(a, 4i6)', 'MAXLOC on MPI_2INTEGER: ', ipairsout
    errs = errs + 1
  end if

  include 'mmc_report.inc'
end program
