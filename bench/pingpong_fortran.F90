! bench/pingpong.c in Fortran (use mpi): what a traced call costs a Fortran program, whose calls
! go through the Fortran wrappers (lib/wrappers/fortran.py) before the C ones.
!   pingpong_fortran [-r REPS] [-i ITERS] [-m MAX_BYTES]      prints: size best_us median_us
program pingpong_fortran
  use mpi
  implicit none
  integer :: rank, reps, iters, ierr, i, r, n, size
  integer(8) :: max_bytes
  character(len=32) :: flag, value
  character, allocatable :: buf(:)
  double precision :: t0, times(99), sorted(99)
  reps = 9
  iters = 20000
  max_bytes = 4 * 1024 * 1024
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  do i = 1, command_argument_count() - 1, 2
    call get_command_argument(i, flag)
    call get_command_argument(i + 1, value)
    if (flag == '-r') read (value, *) reps
    if (flag == '-i') read (value, *) iters
    if (flag == '-m') read (value, *) max_bytes
  end do
  if (reps < 1 .or. reps > 99 .or. iters < 1) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  allocate (buf(max_bytes + 1))
  buf = 'x'
  size = 0
  do while (size <= max_bytes)
    ! fewer round trips for large messages, as pingpong.c does
    n = iters
    if (size > 0) n = int(max(10_8, min(int(iters, 8), (256_8 * 1024 * 1024) / size)))
    call exchange(n)  ! warm-up, as long as a repetition
    do r = 1, reps
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      call exchange(n)
      times(r) = (MPI_Wtime() - t0) / (2 * n) * 1d6
    end do
    if (rank == 0) then
      sorted(1:reps) = times(1:reps)
      call sort(sorted(1:reps))
      print '(i0, 2(1x, f0.3))', size, sorted(1), sorted((reps + 1) / 2)
    end if
    size = merge(1, size * 4, size == 0)
  end do
  call MPI_Finalize(ierr)
contains
  subroutine exchange(count)
    integer, intent(in) :: count
    integer :: k
    do k = 1, count
      if (rank == 0) then
        call MPI_Send(buf, size, MPI_CHARACTER, 1, 0, MPI_COMM_WORLD, ierr)
        call MPI_Recv(buf, size, MPI_CHARACTER, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      else if (rank == 1) then
        call MPI_Recv(buf, size, MPI_CHARACTER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(buf, size, MPI_CHARACTER, 0, 0, MPI_COMM_WORLD, ierr)
      end if
    end do
  end subroutine exchange

  subroutine sort(a)
    double precision, intent(inout) :: a(:)
    integer :: j, k
    double precision :: x
    do j = 2, ubound(a, 1)
      x = a(j)
      k = j - 1
      do while (k >= 1)
        if (a(k) <= x) exit
        a(k + 1) = a(k)
        k = k - 1
      end do
      a(k + 1) = x
    end do
  end subroutine sort
end program pingpong_fortran
