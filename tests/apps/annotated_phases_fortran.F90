! tests/apps/annotated_phases.c's known phases, annotated from Fortran (use perusetrace) and
! calling MPI through mpi_f08, on 2 ranks (tests/runtime/annotate_test.py, case fortran):
!   annotated_phases_fortran ITERATIONS MESSAGES
! Each iteration opens "iteration" (nested), sets "step" (an integer), runs phase "compute"
! (20 ms of work, no MPI) then phase "exchange" (rank 0 sends MESSAGES messages of 1 KiB to
! rank 1); in iteration 3 rank 0 computes 200 ms more inside "exchange" first (a late sender).
! A second module's "lib:phase" brackets the run on rank 1.
program annotated_phases_fortran
  use mpi_f08
  use perusetrace
  implicit none
  integer :: iterations, messages, rank, it, m, phase, iteration, step, lib_phase
  character(len=16) :: arg
  character(len=1024) :: payload
  call get_command_argument(1, arg)
  read (arg, *) iterations
  call get_command_argument(2, arg)
  read (arg, *) messages
  payload = repeat('x', len(payload))
  phase = perusetrace_attribute('', 'phase', PERUSETRACE_ATTR_DEFAULT)
  iteration = perusetrace_attribute('', 'iteration', PERUSETRACE_ATTR_DEFAULT)
  step = perusetrace_attribute('', 'step', PERUSETRACE_ATTR_AS_VALUE)
  lib_phase = perusetrace_attribute('lib', 'phase', PERUSETRACE_ATTR_DEFAULT)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  if (rank == 1) call perusetrace_begin(lib_phase, 'library')
  call MPI_Barrier(MPI_COMM_WORLD)
  do it = 0, iterations - 1
    call perusetrace_begin(iteration, it)
    call perusetrace_set(step, it)
    call perusetrace_begin(phase, 'compute')
    call busy(0.02d0)
    call perusetrace_end(phase)
    call perusetrace_begin(phase, 'exchange')
    if (rank == 0) then
      if (it == 3) call busy(0.2d0)
      do m = 0, messages - 1
        call MPI_Send(payload, len(payload), MPI_CHARACTER, 1, m, MPI_COMM_WORLD)
      end do
    else
      do m = 0, messages - 1
        call MPI_Recv(payload, len(payload), MPI_CHARACTER, 0, m, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE)
      end do
    end if
    call perusetrace_end(phase)
    call perusetrace_end(iteration)
    call MPI_Barrier(MPI_COMM_WORLD)
  end do
  if (rank == 1) call perusetrace_end(lib_phase)
  call MPI_Finalize()
  if (rank == 0) print '(a)', 'annotated_phases: done'
contains
  ! Work outside MPI for `seconds` of wall time (the system clock, not MPI_Wtime).
  subroutine busy(seconds)
    double precision, intent(in) :: seconds
    integer(8) :: start, now, rate
    double precision :: x
    x = 1
    call system_clock(start, rate)
    do
      x = x * 1.0000001d0 + 1d-9
      call system_clock(now)
      if (dble(now - start) / dble(rate) >= seconds) exit
    end do
    if (x < 0) print *, x
  end subroutine busy
end program annotated_phases_fortran
