! tests/apps/rma.c in Fortran (use mpi_f08): the same windows, synchronisations and operations in
! the same order on 4 ranks, each step's data checked, so that tests/common/rma_checks.py holds
! the archive of a Fortran program to the counts it knows. Window memory the MPI writes while the
! program runs on is VOLATILE, so that the checks read it again.
program rma_fortran
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: AK = MPI_ADDRESS_KIND
  integer :: rank, size, i, other, one, expected_old, swap_in, node_rank
  integer :: node_size, rga_in, racc(2), partner_rank(1)
  integer, volatile, target :: halo(0:63), attached, rget(0:3), got(0:1), fetched2(0:1)
  integer, volatile :: old, swapped, fetched, rga_out
  integer, target :: mine(0:7)
  integer, pointer, volatile :: shared(:), node_base(:)
  logical :: done, flag
  type(MPI_Win) :: win_a, win_c, win_e, win_f
  type(MPI_Group) :: world_group, partner
  type(MPI_Request) :: put_request, get_request, pair(2)
  type(MPI_Comm) :: node
  type(c_ptr) :: base
  integer(kind=AK) :: address, addresses(0:3)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (size /= 4) then
    print '(a)', 'rma_fortran: run on 4 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if

  ! A: fences.
  do i = 0, 63
    halo(i) = 1000 * rank + i
  end do
  do i = 0, 7
    mine(i) = 100 * rank + i
  end do
  call MPI_Win_create(halo, int(64 * 4, AK), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win_a)
  call MPI_Win_set_name(win_a, 'halo window')
  call MPI_Win_fence(0, win_a)
  call MPI_Put(mine, 4, MPI_INTEGER, peer(1), 0_AK, 4, MPI_INTEGER, win_a)
  call MPI_Get(got, 2, MPI_INTEGER, peer(2), 10_AK, 2, MPI_INTEGER, win_a)
  call MPI_Accumulate(mine, 3, MPI_INTEGER, peer(3), 20_AK, 3, MPI_INTEGER, MPI_SUM, win_a)
  call MPI_Put(mine, 4, MPI_INTEGER, MPI_PROC_NULL, 0_AK, 4, MPI_INTEGER, win_a)
  call MPI_Win_fence(0, win_a)
  call check(got(0) == 1000 * peer(2) + 10 .and. got(1) == 1000 * peer(2) + 11, 'MPI_Get''s data')
  call check(halo(0) == 100 * peer(3) .and. halo(3) == 100 * peer(3) + 3, 'MPI_Put''s data')
  call check(halo(20) == 1000 * rank + 20 + 100 * peer(1), 'MPI_Accumulate''s data')
  call MPI_Put(mine(7), 1, MPI_INTEGER, peer(1), 30_AK, 1, MPI_INTEGER, win_a)
  call MPI_Win_fence(0, win_a)
  call check(halo(30) == 100 * peer(3) + 7, 'the second epoch''s MPI_Put')

  ! B: PSCW between 0 -> 1 and 2 -> 3.
  call MPI_Comm_group(MPI_COMM_WORLD, world_group)
  other = merge(rank + 1, rank - 1, mod(rank, 2) == 0)
  partner_rank(1) = other
  call MPI_Group_incl(world_group, 1, partner_rank, partner)
  if (mod(rank, 2) == 0) then
    call MPI_Win_start(partner, 0, win_a)
    call MPI_Put(mine, 8, MPI_INTEGER, other, 40_AK, 8, MPI_INTEGER, win_a)
    if (rank == 0) call MPI_Get_accumulate(mine, 2, MPI_INTEGER, fetched2, 2, MPI_INTEGER, &
                                           other, 50_AK, 2, MPI_INTEGER, MPI_SUM, win_a)
    call MPI_Win_complete(win_a)
    if (rank == 0) call check(fetched2(0) == 1000 + 50, 'MPI_Get_accumulate''s result')
  else
    call MPI_Win_post(partner, 0, win_a)
    if (rank == 1) then
      call MPI_Win_wait(win_a)
    else
      done = .false.
      do while (.not. done)
        call MPI_Win_test(win_a, done)
      end do
    end if
    call check(halo(47) == 100 * other + 7, 'the PSCW MPI_Put')
    if (rank == 1) call check(halo(50) == 1000 + 50, 'MPI_Get_accumulate''s sum')
  end if
  call MPI_Group_free(partner)
  call MPI_Group_free(world_group)
  call MPI_Barrier(MPI_COMM_WORLD)

  ! C: passive target, on memory MPI_Win_allocate gives back as a C pointer.
  call MPI_Win_allocate(int(64 * 4, AK), 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win_c)
  call c_f_pointer(base, shared, [64])
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win_c)
  shared = 0
  call MPI_Win_unlock(rank, win_c)
  call MPI_Barrier(MPI_COMM_WORLD)
  ! The self lock above is the program's own: the trace checks count from here.
  one = 1
  old = -1
  expected_old = 0
  swap_in = 7
  swapped = -1
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer(1), 0, win_c)
  call MPI_Put(mine, 2, MPI_INTEGER, peer(1), 0_AK, 2, MPI_INTEGER, win_c)
  call MPI_Fetch_and_op(one, old, MPI_INTEGER, peer(1), 10_AK, MPI_SUM, win_c)
  call MPI_Win_unlock(peer(1), win_c)
  call check(old == 0, 'MPI_Fetch_and_op''s old value')
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_c)
  call MPI_Compare_and_swap(swap_in, expected_old, swapped, MPI_INTEGER, rank, 11_AK, win_c)
  call MPI_Win_unlock(rank, win_c)
  call check(swapped == 0, 'MPI_Compare_and_swap''s old value')
  call MPI_Barrier(MPI_COMM_WORLD)
  fetched = -1
  call MPI_Win_lock_all(0, win_c)
  call MPI_Put(mine(1), 1, MPI_INTEGER, peer(1), 20_AK, 1, MPI_INTEGER, win_c)
  call MPI_Win_flush(peer(1), win_c)
  call MPI_Put(mine(2), 1, MPI_INTEGER, peer(2), 21_AK, 1, MPI_INTEGER, win_c)
  call MPI_Win_flush_local(peer(2), win_c)
  call MPI_Get(fetched, 1, MPI_INTEGER, peer(3), 0_AK, 1, MPI_INTEGER, win_c)
  call MPI_Win_flush_local_all(win_c)
  call MPI_Win_sync(win_c)
  call MPI_Put(mine(3), 1, MPI_INTEGER, peer(1), 22_AK, 1, MPI_INTEGER, win_c)
  call MPI_Win_unlock_all(win_c)
  call check(fetched == 100 * peer(2), 'the passive MPI_Get')
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_c)
  ! shared(1) is displacement 0
  call check(shared(1) == 100 * peer(3) .and. shared(11) == 1 .and. shared(12) == 7 .and. &
             shared(21) == 100 * peer(3) + 1 .and. shared(22) == 100 * peer(2) + 2 .and. &
             shared(23) == 100 * peer(3) + 3, 'the passive-target data')
  call MPI_Win_unlock(rank, win_c)
  call MPI_Barrier(MPI_COMM_WORLD)

  ! D: request-based operations.
  racc = [5, 6]
  rga_in = 2
  rga_out = -1
  flag = .false.
  call MPI_Win_lock_all(0, win_c)
  call MPI_Rput(mine, 4, MPI_INTEGER, peer(1), 30_AK, 4, MPI_INTEGER, win_c, put_request)
  call MPI_Wait(put_request, MPI_STATUS_IGNORE)
  call MPI_Rget(rget, 4, MPI_INTEGER, peer(2), 0_AK, 4, MPI_INTEGER, win_c, get_request)
  do while (.not. flag)
    call MPI_Test(get_request, flag, MPI_STATUS_IGNORE)
  end do
  call MPI_Raccumulate(racc, 2, MPI_INTEGER, peer(3), 40_AK, 2, MPI_INTEGER, MPI_SUM, win_c, &
                       pair(1))
  call MPI_Rget_accumulate(rga_in, 1, MPI_INTEGER, rga_out, 1, MPI_INTEGER, peer(1), 50_AK, 1, &
                           MPI_INTEGER, MPI_SUM, win_c, pair(2))
  call MPI_Waitall(2, pair, MPI_STATUSES_IGNORE)
  call MPI_Win_unlock_all(win_c)
  call check(rget(0) == 100 * peer(1), 'MPI_Rget''s data')
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_c)
  call check(shared(34) == 100 * peer(3) + 3 .and. shared(41) == 5 .and. shared(51) == 2, &
             'the request-based data')
  call MPI_Win_unlock(rank, win_c)
  call MPI_Barrier(MPI_COMM_WORLD)

  ! E: a shared-memory window.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node)
  call MPI_Comm_rank(node, node_rank)
  call MPI_Comm_size(node, node_size)
  call MPI_Win_allocate_shared(4_AK, 4, MPI_INFO_NULL, node, base, win_e)
  call c_f_pointer(base, node_base, [1])
  call MPI_Win_fence(0, win_e)
  call MPI_Put(node_rank, 1, MPI_INTEGER, mod(node_rank + 1, node_size), 0_AK, 1, MPI_INTEGER, &
               win_e)
  call MPI_Win_fence(0, win_e)
  call check(node_base(1) == mod(node_rank + node_size - 1, node_size), &
             'the shared window''s data')

  ! F: a dynamic window.
  attached = -1
  call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win_f)
  call MPI_Win_attach(win_f, attached, 4_AK)
  call MPI_Get_address(attached, address)
  call MPI_Allgather(address, 1, MPI_AINT, addresses, 1, MPI_AINT, MPI_COMM_WORLD)
  call MPI_Win_lock_all(0, win_f)
  call MPI_Put(rank, 1, MPI_INTEGER, peer(1), addresses(peer(1)), 1, MPI_INTEGER, win_f)
  call MPI_Win_unlock_all(win_f)
  call MPI_Barrier(MPI_COMM_WORLD)
  call check(attached == peer(3), 'the dynamic window''s data')
  call MPI_Win_detach(win_f, attached)

  call MPI_Win_free(win_f)
  call MPI_Win_free(win_e)
  call MPI_Win_free(win_c)
  call MPI_Win_free(win_a)
  call MPI_Comm_free(node)
  if (rank == 0) print '(a)', 'rma: every check passed'
  call MPI_Finalize()

contains

  integer function peer(k)
    integer, intent(in) :: k
    peer = mod(rank + k, size)
  end function peer

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    print '(a, i0, 3a)', 'rma_fortran: rank ', rank, ': ', what, ' is wrong'
    call MPI_Abort(MPI_COMM_WORLD, 3)
  end subroutine check
end program rma_fortran
