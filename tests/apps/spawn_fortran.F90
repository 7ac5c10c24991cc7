! tests/apps/spawn.c's single and multiple cases in Fortran (use mpi), for tests/trace/spawn_test.py:
! the parent job spawns two children of this program from its last rank (MPI_Comm_spawn with an
! argument vector ended by a blank entry, or MPI_Comm_spawn_multiple with a 2-D one and
! MPI_ERRCODES_IGNORE), then the same messages as spawn.c, checked on receipt.
!   spawn_fortran [single|multiple]
module spawn_protocol
  use mpi
  implicit none
  integer, parameter :: kChildren = 2, kToChild = 3, kToParent = 2, kAmong = 4, kInts = 8
contains
  subroutine fill(buf, sender, index)
    integer, intent(out) :: buf(kInts)
    integer, intent(in) :: sender, index
    integer :: i
    do i = 1, kInts
      buf(i) = sender * 1009 + index * 31 + (i - 1)
    end do
  end subroutine fill

  integer function damaged(buf, sender, index)
    integer, intent(in) :: buf(kInts), sender, index
    integer :: want(kInts)
    call fill(want, sender, index)
    damaged = merge(0, 1, all(buf == want))
  end function damaged

  integer function parent(self, multiple)
    character(len=*), intent(in) :: self
    logical, intent(in) :: multiple
    integer :: rank, size, root, inter, ierr, codes(kChildren), children, bad, c, i
    integer :: buf(kInts), in(kInts, kChildren * kToParent), reqs(kChildren * kToParent)
    integer :: counts(kChildren), infos(kChildren)
    character(len=16) :: args(2), argvs(kChildren, 2)
    character(len=len(self)) :: commands(kChildren)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
    root = size - 1
    if (multiple) then
      commands = self
      argvs(:, 1) = 'child'
      argvs(:, 2) = ' '
      counts = 1
      infos = MPI_INFO_NULL
      call MPI_Comm_spawn_multiple(kChildren, commands, argvs, counts, infos, root, &
                                   MPI_COMM_WORLD, inter, MPI_ERRCODES_IGNORE, ierr)
    else
      args(1) = 'child'
      args(2) = ' '
      codes = -1
      call MPI_Comm_spawn(self, args, kChildren, MPI_INFO_NULL, root, MPI_COMM_WORLD, inter, &
                          codes, ierr)
      if (any(codes /= MPI_SUCCESS)) then
        print '(a, 2i6)', 'spawn_fortran: error codes ', codes
        parent = 1
        return
      end if
    end if
    call MPI_Comm_remote_size(inter, children, ierr)
    if (children /= kChildren) then
      print '(a, i0)', 'spawn_fortran: children ', children
      parent = 1
      return
    end if
    bad = 0
    do c = 0, kChildren - 1
      do i = 0, kToChild - 1
        call fill(buf, rank, i)
        call MPI_Send(buf, kInts, MPI_INTEGER, c, 10, inter, ierr)
      end do
    end do
    do c = 0, kChildren - 1
      do i = 0, kToParent - 1
        call MPI_Irecv(in(:, c * kToParent + i + 1), kInts, MPI_INTEGER, c, 20, inter, &
                       reqs(c * kToParent + i + 1), ierr)
      end do
    end do
    call MPI_Waitall(kChildren * kToParent, reqs, MPI_STATUSES_IGNORE, ierr)
    do c = 0, kChildren - 1
      do i = 0, kToParent - 1
        bad = bad + damaged(in(:, c * kToParent + i + 1), c, i)
      end do
    end do
    call MPI_Barrier(inter, ierr)
    call MPI_Comm_disconnect(inter, ierr)
    if (rank == 0) print '(a, i0, a, i0, a, i0, a, i0)', 'spawn parent ranks ', size, &
      ' children ', kChildren, ' to_child ', kToChild, ' to_parent ', kToParent
    if (bad /= 0) print '(a, i0)', 'spawn_fortran: damaged messages at a parent: ', bad
    parent = merge(1, 0, bad /= 0)
  end function parent

  integer function child(inter)
    integer, intent(inout) :: inter
    integer :: rank, size, parents, bad, p, i, ierr, req, other
    integer :: buf(kInts), out(kInts)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
    call MPI_Comm_remote_size(inter, parents, ierr)
    bad = 0
    do p = 0, parents - 1
      do i = 0, kToChild - 1
        call MPI_Recv(buf, kInts, MPI_INTEGER, p, 10, inter, MPI_STATUS_IGNORE, ierr)
        bad = bad + damaged(buf, p, i)
      end do
    end do
    do p = 0, parents - 1
      do i = 0, kToParent - 1
        call fill(buf, rank, i)
        call MPI_Isend(buf, kInts, MPI_INTEGER, p, 20, inter, req, ierr)
        call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
      end do
    end do
    other = mod(rank + 1, size)
    do i = 0, kAmong - 1
      call fill(out, rank, i)
      call MPI_Sendrecv(out, kInts, MPI_INTEGER, other, 30, buf, kInts, MPI_INTEGER, other, 30, &
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      bad = bad + damaged(buf, other, i)
    end do
    call MPI_Barrier(inter, ierr)
    call MPI_Comm_disconnect(inter, ierr)
    if (rank == 0) print '(a, i0, a, i0, a, i0)', 'spawn child ranks ', size, ' parents ', &
      parents, ' among ', kAmong
    if (bad /= 0) print '(a, i0)', 'spawn_fortran: damaged messages at a child: ', bad
    child = merge(1, 0, bad /= 0)
  end function child
end module spawn_protocol

program spawn_fortran
  use spawn_protocol
  implicit none
  integer :: inter, ierr, failed
  character(len=4096) :: self, mode
  call MPI_Init(ierr)
  call MPI_Comm_get_parent(inter, ierr)
  call get_command_argument(0, self)
  call get_command_argument(1, mode)
  if (inter == MPI_COMM_NULL) then
    if (mode /= 'single' .and. mode /= 'multiple' .and. mode /= ' ') then
      print '(a)', 'usage: spawn_fortran [single|multiple]'
      call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    failed = parent(trim(self), mode == 'multiple')
  else
    failed = child(inter)
    ! the argument vector the parent gave, blank-padded in Fortran, arrives as C strings
    if (mode /= 'child' .or. command_argument_count() /= 1) then
      print '(3a, i0)', 'spawn_fortran: a child''s arguments are "', trim(mode), '", count ', &
        command_argument_count()
      failed = 1
    end if
  end if
  call MPI_Finalize(ierr)
  if (failed /= 0) stop 1
end program spawn_fortran
