! tests/apps/file_io.c in Fortran (use mpi_f08, no ierror arguments): the same files, calls and
! tallies ("io RANK FILE KEY=VALUE ..."), which tests/common/trace_checks.py's file_io check holds
! the archive to. Blank-padded file names, MPI_Offset arguments, requests, split collectives
! and statuses go through the Fortran wrappers' conversions.
module io_tally
  use mpi_f08
  implicit none
  integer, parameter :: N = 1000, SELF_BYTES = 100, NFILES = 4, KINDS = 4
  integer, parameter :: RD = 1, WR = 2
  integer, parameter :: INDEPENDENT = 1, COLLECTIVE = 2, INDEPENDENT_NB = 3, COLLECTIVE_NB = 4
  integer(kind=MPI_OFFSET_KIND), parameter :: PRESIZE = 12345, PREALLOCATED = 65536
  integer(kind=MPI_OFFSET_KIND), parameter :: RESIZED = 1000
  character(len=*), parameter :: KIND_NAMES(KINDS) = [character(len=23) :: 'independent', &
    'collective', 'independent_nonblocking', 'collective_nonblocking']
  type :: tally
    character(len=64) :: name = ''
    integer :: opens = 0, closes = 0, ops(2) = 0, kind_ops(KINDS) = 0, flushes = 0, seeks = 0
    integer :: resizes = 0, deletes = 0
    integer(8) :: bytes(2) = 0, kind_bytes(KINDS) = 0
    character(len=64) :: sizes = '', resized = ''
  end type tally
  type(tally), target :: files(NFILES)
contains
  subroutine io(t, mode, kind, bytes)
    type(tally), intent(inout) :: t
    integer, intent(in) :: mode, kind, bytes
    t%ops(mode) = t%ops(mode) + 1
    t%bytes(mode) = t%bytes(mode) + bytes
    t%kind_ops(kind) = t%kind_ops(kind) + 1
    t%kind_bytes(kind) = t%kind_bytes(kind) + bytes
  end subroutine io

  function text(i) result(s)
    integer(8), intent(in) :: i
    character(len=24) :: s
    write (s, '(i0)') i
  end function text

  subroutine opened(t, comm, amode, fh)
    type(tally), intent(inout) :: t
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: amode
    type(MPI_File), intent(out) :: fh
    integer(kind=MPI_OFFSET_KIND) :: size
    integer :: ierr
    ! the name as Fortran holds it, blank-padded to 64 characters
    call MPI_File_open(comm, t%name, amode, MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 2)
    call MPI_File_get_size(fh, size)
    call MPI_Barrier(comm)
    if (t%opens > 0) t%sizes = trim(t%sizes) // ','
    t%sizes = trim(t%sizes) // trim(text(int(size, 8)))
    t%opens = t%opens + 1
  end subroutine opened

  subroutine closed(t, fh)
    type(tally), intent(inout) :: t
    type(MPI_File), intent(inout) :: fh
    integer :: ierr
    call MPI_File_close(fh, ierr)
    if (ierr /= MPI_SUCCESS .or. fh /= MPI_FILE_NULL) call MPI_Abort(MPI_COMM_WORLD, 3)
    t%closes = t%closes + 1
  end subroutine closed

  subroutine note_resize(t, size)
    type(tally), intent(inout) :: t
    integer(kind=MPI_OFFSET_KIND), intent(in) :: size
    if (t%resizes > 0) t%resized = trim(t%resized) // ','
    t%resized = trim(t%resized) // trim(text(int(size, 8)))
    t%resizes = t%resizes + 1
  end subroutine note_resize

  subroutine print_tallies(rank)
    integer, intent(in) :: rank
    integer :: f, k
    character(len=1024) :: line
    character(len=64) :: sizes, resized
    do f = 1, NFILES
      associate (t => files(f))
        if (t%opens == 0 .and. t%deletes == 0) cycle
        sizes = merge(t%sizes, '-' // repeat(' ', 63), t%opens > 0)
        resized = merge(t%resized, '-' // repeat(' ', 63), t%resizes > 0)
        write (line, '(a, i0, 1x, a, a, i0, a, i0, 2a, a, i0, 2a, a, i0, 2a, a, i0, a, i0, 3a, i0)') &
          'io ', rank, trim(t%name), ' opens=', t%opens, ' closes=', t%closes, ' sizes=', &
          trim(sizes), ' reads=', t%ops(RD), ' read_bytes=', trim(text(t%bytes(RD))), &
          ' writes=', t%ops(WR), ' write_bytes=', trim(text(t%bytes(WR))), ' flushes=', &
          t%flushes, ' seeks=', t%seeks, ' resizes=', trim(resized), ' deletes=', t%deletes
        do k = 1, KINDS
          write (line, '(a, 1x, 2a, i0, 1x, 2a, a)') trim(line), trim(KIND_NAMES(k)), '=', &
            t%kind_ops(k), trim(KIND_NAMES(k)), '_bytes=', trim(text(t%kind_bytes(k)))
        end do
        print '(a)', trim(line)
      end associate
    end do
  end subroutine print_tallies
end module io_tally

program file_io_fortran
  use io_tally
  implicit none
  integer :: rank, data(N), back(N), i, u, ierr
  integer(kind=MPI_OFFSET_KIND) :: at, block
  type(MPI_Comm) :: io_comm
  type(MPI_File) :: fh
  type(MPI_Request) :: request
  logical :: exists
  character(len=16) :: digits
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  files(1)%name = 'file_io.dat'
  files(2)%name = 'file_io_meta.dat'
  write (digits, '(i0)') rank
  files(3)%name = 'file_io_self.' // trim(digits) // '.dat'
  files(4)%name = 'file_io_other.dat'
  if (rank == 0) then  ! Fortran's own I/O, not MPI-IO: the file's size before the run opens it
    open (newunit=u, file=trim(files(1)%name), access='stream', form='unformatted', &
          status='replace')
    write (u) repeat('x', int(PRESIZE))
    close (u)
    inquire (file=trim(files(2)%name), exist=exists)
    if (exists) then
      open (newunit=u, file=trim(files(2)%name))
      close (u, status='delete')
    end if
  end if
  if (rank == 1) then
    open (newunit=u, file=trim(files(4)%name), status='replace')
    close (u)
  end if
  call MPI_Barrier(MPI_COMM_WORLD)

  call MPI_Comm_dup(MPI_COMM_WORLD, io_comm)
  call MPI_Comm_set_name(io_comm, 'io')
  do i = 1, N
    data(i) = rank * N + i - 1
  end do
  block = 4 * N
  at = PRESIZE + block * 5 * rank
  call opened(files(1), io_comm, MPI_MODE_RDWR, fh)
  call MPI_File_write_at(fh, at, data, N, MPI_INTEGER, MPI_STATUS_IGNORE)
  call io(files(1), WR, INDEPENDENT, 4 * N)
  call MPI_File_write_at_all(fh, at + block, data, N, MPI_INTEGER, MPI_STATUS_IGNORE)
  call io(files(1), WR, COLLECTIVE, 4 * N)
  call MPI_File_iwrite_at(fh, at + 2 * block, data, N / 2, MPI_INTEGER, request)
  call MPI_Wait(request, MPI_STATUS_IGNORE)
  call io(files(1), WR, INDEPENDENT_NB, 2 * N)
  call MPI_File_iwrite_at_all(fh, at + 3 * block, data, N, MPI_INTEGER, request)
  call MPI_Wait(request, MPI_STATUS_IGNORE)
  call io(files(1), WR, COLLECTIVE_NB, 4 * N)
  call MPI_File_write_at_all_begin(fh, at + 4 * block, data, N, MPI_INTEGER)
  call MPI_File_write_at_all_end(fh, data, MPI_STATUS_IGNORE)
  call io(files(1), WR, COLLECTIVE_NB, 4 * N)
  call MPI_File_sync(fh)
  files(1)%flushes = files(1)%flushes + 1

  call MPI_File_read_at_all_begin(fh, at + block, back, N, MPI_INTEGER)
  call MPI_File_read_at_all_end(fh, back, MPI_STATUS_IGNORE)
  call io(files(1), RD, COLLECTIVE_NB, 4 * N)
  if (any(back /= data)) call MPI_Abort(MPI_COMM_WORLD, 4)
  call MPI_File_read_at(fh, at, back, N, MPI_INTEGER, MPI_STATUS_IGNORE)
  call io(files(1), RD, INDEPENDENT, 4 * N)
  if (any(back /= data)) call MPI_Abort(MPI_COMM_WORLD, 4)
  call MPI_File_iread_at(fh, at + 2 * block, back, N / 2, MPI_INTEGER, request)
  call MPI_Wait(request, MPI_STATUS_IGNORE)
  call io(files(1), RD, INDEPENDENT_NB, 2 * N)
  if (any(back(1:N / 2) /= data(1:N / 2))) call MPI_Abort(MPI_COMM_WORLD, 4)
  call MPI_File_read_at_all(fh, at + 3 * block, back, N, MPI_INTEGER, MPI_STATUS_IGNORE)
  call io(files(1), RD, COLLECTIVE, 4 * N)
  if (any(back /= data)) call MPI_Abort(MPI_COMM_WORLD, 4)
  call MPI_File_seek(fh, at + 4 * block, MPI_SEEK_SET)
  files(1)%seeks = files(1)%seeks + 1
  call MPI_File_read(fh, back, N, MPI_INTEGER, MPI_STATUS_IGNORE)
  call io(files(1), RD, INDEPENDENT, 4 * N)
  if (any(back /= data)) call MPI_Abort(MPI_COMM_WORLD, 4)
  call closed(files(1), fh)

  call opened(files(2), MPI_COMM_WORLD, ior(MPI_MODE_CREATE, MPI_MODE_RDWR), fh)
  call MPI_File_preallocate(fh, PREALLOCATED)
  call note_resize(files(2), PREALLOCATED)
  call MPI_File_set_size(fh, RESIZED)
  call note_resize(files(2), RESIZED)
  call closed(files(2), fh)
  call opened(files(2), MPI_COMM_WORLD, MPI_MODE_RDONLY, fh)
  call closed(files(2), fh)

  call opened(files(3), MPI_COMM_SELF, ior(ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), &
              MPI_MODE_DELETE_ON_CLOSE), fh)
  call MPI_File_write(fh, data, SELF_BYTES, MPI_BYTE, MPI_STATUS_IGNORE)
  call io(files(3), WR, INDEPENDENT, SELF_BYTES)
  call closed(files(3), fh)
  files(3)%deletes = files(3)%deletes + 1

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_File_delete(files(2)%name, MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 5)
    call MPI_File_delete(files(1)%name, MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 5)
    files(2)%deletes = files(2)%deletes + 1
    files(1)%deletes = files(1)%deletes + 1
  end if
  if (rank == 1) then
    call MPI_File_delete(files(4)%name, MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 5)
    files(4)%deletes = files(4)%deletes + 1
  end if
  call MPI_Comm_free(io_comm)
  call print_tallies(rank)
  call MPI_Finalize()
end program file_io_fortran
