! tests/apps/known_counts.c in Fortran: MPI traffic known exactly, rank 0 printing "expect KIND N"
! lines with the totals over all ranks (tests/common/trace_checks.py, check fortran_counts), and
! "expect_call NAME N" for calls counted one by one. Built three times, one per binding:
!   -DBINDING_F08  use mpi_f08 | -DBINDING_MODULE  use mpi | neither: include 'mpif.h'
! and with -DMIXED a C file (known_counts_mixed.c) makes some of the calls from C.
! It starts with the Peruse paper's early receiver (tag 1, 40000 bytes, the sender 300 ms late),
! and checks what the conversions must get right itself (statuses, 1-based indices, MPI_BOTTOM,
! MPI_IN_PLACE, names): a wrong one stops it with MPI_Abort.
#if defined(BINDING_F08)
#define COMM type(MPI_Comm)
#define REQUEST type(MPI_Request)
#define DTYPE type(MPI_Datatype)
#define GROUP type(MPI_Group)
#define MESSAGE type(MPI_Message)
#define STATUS type(MPI_Status)
#define STATUSES(n) type(MPI_Status) :: sts(n)
#define SOURCE_OF(s) s%MPI_SOURCE
#define TAG_OF(s) s%MPI_TAG
#define SOURCE_AT(i) sts(i)%MPI_SOURCE
#define TAG_AT(i) sts(i)%MPI_TAG
#else
#define COMM integer
#define REQUEST integer
#define DTYPE integer
#define GROUP integer
#define MESSAGE integer
#define STATUS integer, dimension(MPI_STATUS_SIZE)
#define STATUSES(n) integer :: sts(MPI_STATUS_SIZE, n)
#define SOURCE_OF(s) s(MPI_SOURCE)
#define TAG_OF(s) s(MPI_TAG)
#define SOURCE_AT(i) sts(MPI_SOURCE, i)
#define TAG_AT(i) sts(MPI_TAG, i)
#endif

module binding
#if defined(BINDING_F08)
  use mpi_f08
#elif defined(BINDING_MODULE)
  use mpi
#endif
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
#if !defined(BINDING_F08) && !defined(BINDING_MODULE)
  include 'mpif.h'
#endif
  interface
    integer(c_int) function usleep(microseconds) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: microseconds
    end function usleep
  end interface
  integer :: rank, nranks
  integer :: sends = 0, recvs = 0, isends = 0, irecvs = 0, colls = 0, nbcs = 0, made_comms = 0
  ! Calls counted one by one (expect_call lines), per rank.
  integer :: n_comm_rank = 0, n_comm_size = 0, n_wtime = 0, n_type_commit = 0
  integer :: n_waitall = 0, n_get_address = 0, n_comm_set_name = 0, n_iprobe = 0
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: ierr
    print '(a, i0, 2a)', 'known_counts_fortran rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end subroutine fail

  subroutine check(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    if (ierr /= MPI_SUCCESS) call fail(what // ' returned an error')
  end subroutine check
end module binding

module phases
  use binding
  implicit none
contains
  ! The paper's first listing: rank 1's receive waits in the posted queue for rank 0's send.
  subroutine early_receiver()
    integer :: buf(10000), ierr, slept
    STATUS :: st
    buf = rank
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    colls = colls + 1
    if (rank == 0) then
      print '(a)', 'delay 300 ms'
      slept = usleep(300000_c_int)
      call MPI_Send(buf, 10000, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
      sends = sends + 1
    else if (rank == 1) then
      call MPI_Recv(buf, 10000, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, st, ierr)
      recvs = recvs + 1
      if (SOURCE_OF(st) /= 0 .or. TAG_OF(st) /= 1 .or. buf(10000) /= 0) &
        call fail('the early receiver''s status or data is wrong')
    end if
  end subroutine early_receiver

  subroutine exchange_blocking(comm, tag)
    COMM, intent(in) :: comm
    integer, intent(in) :: tag
    integer :: me, n, partner, value, ierr
    call MPI_Comm_rank(comm, me, ierr)
    call MPI_Comm_size(comm, n, ierr)
    n_comm_rank = n_comm_rank + 1
    n_comm_size = n_comm_size + 1
    partner = ieor(me, 1)
    if (partner >= n) return
    value = 7
    if (mod(me, 2) == 0) then
      call MPI_Send(value, 1, MPI_INTEGER, partner, tag, comm, ierr)
      call MPI_Recv(value, 1, MPI_INTEGER, partner, tag, comm, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Recv(value, 1, MPI_INTEGER, partner, tag, comm, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(value, 1, MPI_INTEGER, partner, tag, comm, ierr)
    end if
    call check(ierr, 'MPI_Send/MPI_Recv')
    sends = sends + 1
    recvs = recvs + 1
  end subroutine exchange_blocking

  subroutine ring_nonblocking()
    integer :: right, left, out(4), ierr, idx, done, outcount, indices(4), i
    ! written by the MPI while the program runs on: never kept in a register across calls
    integer, volatile :: in(4)
    logical :: flag
    REQUEST :: r(4)
    STATUSES(4)
    STATUS :: st
    right = mod(rank + 1, nranks)
    left = mod(rank + nranks - 1, nranks)
    out = [1, 2, 3, 4] + 10 * rank
    ! waitall, with statuses that must say who sent what
    call MPI_Irecv(in(1), 1, MPI_INTEGER, left, 20, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Isend(out(1), 1, MPI_INTEGER, right, 20, MPI_COMM_WORLD, r(2), ierr)
    call MPI_Waitall(2, r, sts, ierr)
    n_waitall = n_waitall + 1
    if (SOURCE_AT(1) /= left .or. TAG_AT(1) /= 20) &
      call fail('MPI_Waitall''s first status is wrong')
    if (r(1) /= MPI_REQUEST_NULL .or. r(2) /= MPI_REQUEST_NULL) &
      call fail('MPI_Waitall left a request set')
    ! wait, one by one
    call MPI_Irecv(in(2), 1, MPI_INTEGER, left, 21, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Isend(out(2), 1, MPI_INTEGER, right, 21, MPI_COMM_WORLD, r(2), ierr)
    call MPI_Wait(r(1), st, ierr)
    call MPI_Wait(r(2), MPI_STATUS_IGNORE, ierr)
    if (in(2) /= 2 + 10 * left .or. TAG_OF(st) /= 21) call fail('MPI_Wait''s message is wrong')
    ! waitany (a Fortran index counts from 1) then waitsome
    call MPI_Irecv(in(3), 1, MPI_INTEGER, left, 23, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Irecv(in(4), 1, MPI_INTEGER, left, 24, MPI_COMM_WORLD, r(2), ierr)
    call MPI_Isend(out(3), 1, MPI_INTEGER, right, 23, MPI_COMM_WORLD, r(3), ierr)
    call MPI_Isend(out(4), 1, MPI_INTEGER, right, 24, MPI_COMM_WORLD, r(4), ierr)
    call MPI_Waitany(4, r, idx, st, ierr)
    if (idx < 1 .or. idx > 4) call fail('MPI_Waitany''s index is not 1 to 4')
    if (r(idx) /= MPI_REQUEST_NULL) call fail('MPI_Waitany''s index names a live request')
    done = 1
    do while (done < 4)
      call MPI_Waitsome(4, r, outcount, indices, sts, ierr)
      do i = 1, outcount
        if (indices(i) < 1 .or. indices(i) > 4) call fail('MPI_Waitsome''s index is not 1 to 4')
        if (r(indices(i)) /= MPI_REQUEST_NULL) call fail('MPI_Waitsome''s index is live')
      end do
      done = done + outcount
    end do
    ! test and testall
    call MPI_Irecv(in(1), 1, MPI_INTEGER, left, 25, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Isend(out(1), 1, MPI_INTEGER, right, 25, MPI_COMM_WORLD, r(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(r(2), flag, MPI_STATUS_IGNORE, ierr)
    end do
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(1, r(1:1), flag, MPI_STATUSES_IGNORE, ierr)
    end do
    isends = isends + 5
    irecvs = irecvs + 5
  end subroutine ring_nonblocking

  subroutine persistent()
    integer :: right, left, out, ierr, i
    integer, volatile :: in
    REQUEST :: r(2)
    right = mod(rank + 1, nranks)
    left = mod(rank + nranks - 1, nranks)
    out = rank
    call MPI_Recv_init(in, 1, MPI_INTEGER, left, 30, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Send_init(out, 1, MPI_INTEGER, right, 30, MPI_COMM_WORLD, r(2), ierr)
    do i = 1, 3
      call MPI_Startall(2, r, ierr)
      call MPI_Waitall(2, r, MPI_STATUSES_IGNORE, ierr)
      n_waitall = n_waitall + 1
      if (in /= left) call fail('a persistent receive got the wrong value')
    end do
    call MPI_Request_free(r(1), ierr)
    call MPI_Request_free(r(2), ierr)
    isends = isends + 3
    irecvs = irecvs + 3
  end subroutine persistent

  subroutine misc_p2p()
    integer :: right, left, out, in, ierr, partner
    MESSAGE :: message
    REQUEST :: request
    logical :: flag
    right = mod(rank + 1, nranks)
    left = mod(rank + nranks - 1, nranks)
    out = rank
    call MPI_Sendrecv(out, 1, MPI_INTEGER, right, 40, in, 1, MPI_INTEGER, left, 40, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv_replace(out, 1, MPI_INTEGER, right, 41, left, 41, MPI_COMM_WORLD, &
                              MPI_STATUS_IGNORE, ierr)
    sends = sends + 2
    recvs = recvs + 2
    partner = ieor(rank, 1)
    call MPI_Send(out, 1, MPI_INTEGER, partner, 43, MPI_COMM_WORLD, ierr)
    call MPI_Mprobe(partner, 43, MPI_COMM_WORLD, message, MPI_STATUS_IGNORE, ierr)
    call MPI_Mrecv(in, 1, MPI_INTEGER, message, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(out, 1, MPI_INTEGER, partner, 44, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(partner, 44, MPI_COMM_WORLD, flag, message, MPI_STATUS_IGNORE, ierr)
    end do
    call MPI_Imrecv(in, 1, MPI_INTEGER, message, request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    sends = sends + 2
    recvs = recvs + 1
    irecvs = irecvs + 1
    ! to and from MPI_PROC_NULL: no messages
    call MPI_Send(out, 1, MPI_INTEGER, MPI_PROC_NULL, 42, MPI_COMM_WORLD, ierr)
    call MPI_Recv(in, 1, MPI_INTEGER, MPI_PROC_NULL, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end subroutine misc_p2p

  subroutine world_collectives()
    integer :: v, total, all(64), counts(64), displs(64), i, ierr, types(64), one(64)
    integer :: ones(64), zeros(64)
    DTYPE :: wtypes(64)
    REQUEST :: r
    double precision :: t
    t = MPI_Wtime()
    n_wtime = n_wtime + 1
    v = rank
    do i = 1, nranks
      counts(i) = 1
      displs(i) = i - 1
    end do
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Bcast(v, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Reduce(v, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    v = rank  ! the broadcast gave every rank rank 0's
    call MPI_Allreduce(v, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (total /= nranks * (nranks - 1) / 2) call fail('MPI_Allreduce''s sum is wrong')
    call MPI_Gather(v, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Gatherv(v, 1, MPI_INTEGER, all, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Allgather(v, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    ! MPI_IN_PLACE: the slot of this rank already holds its value
    all(1:nranks) = -1
    all(rank + 1) = rank
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INTEGER, &
                       MPI_COMM_WORLD, ierr)
    do i = 1, nranks
      if (all(i) /= i - 1) call fail('MPI_Allgather with MPI_IN_PLACE lost values')
    end do
    call MPI_Alltoall(all, 1, MPI_INTEGER, all(33), 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Scatter(all, 1, MPI_INTEGER, v, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call MPI_Reduce_scatter_block(all, v, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Scan(v, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    ! MPI_Alltoallw: an array of datatypes, one per rank
    do i = 1, nranks
      wtypes(i) = MPI_INTEGER
      ones(i) = 1
      zeros(i) = 4 * (i - 1)
      one(i) = rank
    end do
    call MPI_Alltoallw(one, ones, zeros, wtypes, types, ones, zeros, wtypes, MPI_COMM_WORLD, ierr)
    do i = 1, nranks
      if (types(i) /= i - 1) call fail('MPI_Alltoallw moved the wrong values')
    end do
    colls = colls + 13
    call neighbours()
    call MPI_Ibarrier(MPI_COMM_WORLD, r, ierr)
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    nbcs = nbcs + 1
  end subroutine world_collectives

  ! MPI_Neighbor_alltoallw on a periodic ring: arrays of datatypes as long as the ring's 2
  ! neighbours, not the 4 ranks.
  subroutine neighbours()
    COMM :: ring
    integer :: dims(1), got(2), counts(2), ierr
    integer(kind=MPI_ADDRESS_KIND) :: displs(2), rdispls(2)
    DTYPE :: types(2)
    logical :: periods(1)
    dims = nranks
    periods = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., ring, ierr)
    counts = 1
    displs = 0
    rdispls = [0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND]
    types = MPI_INTEGER
    got = -1
    call MPI_Neighbor_alltoallw(rank, counts, displs, types, got, counts, rdispls, types, ring, &
                                ierr)
    if (got(1) /= mod(rank + nranks - 1, nranks) .or. got(2) /= mod(rank + 1, nranks)) &
      call fail('MPI_Neighbor_alltoallw moved the wrong values')
    call MPI_Comm_free(ring, ierr)
    colls = colls + 1
    made_comms = made_comms + 1
  end subroutine neighbours

  ! Probes for a message never sent: each finds nothing, and the tracer folds them into one call
  ! that counts them.
  subroutine polls()
    integer :: i, ierr
    logical :: flag
    do i = 1, 50
      call MPI_Iprobe(MPI_ANY_SOURCE, 777, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
      if (flag) call fail('MPI_Iprobe found a message never sent')
      n_iprobe = n_iprobe + 1
    end do
  end subroutine polls

  ! A derived datatype over absolute addresses, sent from MPI_BOTTOM.
  subroutine datatypes()
    integer :: pair(2), got(2), ierr, partner
    integer(kind=MPI_ADDRESS_KIND) :: address(1)
    integer :: lengths(1)
    DTYPE :: kinds(1), absolute, column
    integer :: matrix(3, 4), row(4)
    partner = ieor(rank, 1)
    pair = [rank, 100 + rank]
    call MPI_Get_address(pair, address(1), ierr)
    n_get_address = n_get_address + 1
    lengths(1) = 2
    kinds(1) = MPI_INTEGER
    call MPI_Type_create_struct(1, lengths, address, kinds, absolute, ierr)
    call MPI_Type_commit(absolute, ierr)
    n_type_commit = n_type_commit + 1
    call MPI_Sendrecv(MPI_BOTTOM, 1, absolute, partner, 60, got, 2, MPI_INTEGER, partner, 60, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    if (got(1) /= partner .or. got(2) /= 100 + partner) call fail('MPI_BOTTOM sent the wrong data')
    call MPI_Type_free(absolute, ierr)
    ! a row of a column-major matrix: a strided vector
    call MPI_Type_vector(4, 1, 3, MPI_INTEGER, column, ierr)
    call MPI_Type_commit(column, ierr)
    n_type_commit = n_type_commit + 1
    matrix = rank
    call MPI_Sendrecv(matrix(2, 1), 1, column, partner, 61, row, 4, MPI_INTEGER, partner, 61, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    if (any(row /= partner)) call fail('a vector type sent the wrong data')
    call MPI_Type_free(column, ierr)
    sends = sends + 2
    recvs = recvs + 2
  end subroutine datatypes

  subroutine communicators(comms)
    integer, intent(out) :: comms
    COMM :: dup, half, cart, row, evens, inter, merged, idup
    GROUP :: world_group, even_group
    REQUEST :: r
    integer :: dims(2), ranges(3, 1), v, total, ierr, length
    logical :: periods(2), keep(2)
    character(len=MPI_MAX_OBJECT_NAME) :: name
    evens = MPI_COMM_NULL
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    ! a blank-padded Fortran name: the trace holds it without the blanks
    call MPI_Comm_set_name(dup, 'fortran dup   ', ierr)
    n_comm_set_name = n_comm_set_name + 1
    call MPI_Comm_get_name(dup, name, length, ierr)
    if (name(1:length) /= 'fortran dup') call fail('the communicator''s name is not ' // &
                                                   '"fortran dup": "' // name(1:length) // '"')
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
    dims = [2, nranks / 2]
    periods = .false.
    keep = [.false., .true.]
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
    call MPI_Cart_sub(cart, keep, row, ierr)
    call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
    ranges(:, 1) = [0, nranks - 1, 2]
    call MPI_Group_range_incl(world_group, 1, ranges, even_group, ierr)
    if (mod(rank, 2) == 0) call MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 5, evens, ierr)
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, merge(1, 0, mod(rank, 2) == 0), 6, &
                              inter, ierr)
    call MPI_Intercomm_merge(inter, mod(rank, 2) == 1, merged, ierr)
    call MPI_Comm_idup(MPI_COMM_WORLD, idup, r, ierr)
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    comms = 10

    call exchange_blocking(dup, 50)
    call exchange_blocking(half, 51)
    call exchange_blocking(merged, 52)
    call exchange_blocking(idup, 53)
    v = 1
    call MPI_Allreduce(v, total, 1, MPI_INTEGER, MPI_SUM, row, ierr)
    colls = colls + 1

    call MPI_Group_free(world_group, ierr)
    call MPI_Group_free(even_group, ierr)
    call MPI_Comm_free(idup, ierr)
    call MPI_Comm_free(merged, ierr)
    call MPI_Comm_free(inter, ierr)
    if (evens /= MPI_COMM_NULL) call MPI_Comm_free(evens, ierr)
    call MPI_Comm_free(row, ierr)
    call MPI_Comm_free(cart, ierr)
    call MPI_Comm_free(half, ierr)
    call MPI_Comm_free(dup, ierr)
    if (dup /= MPI_COMM_NULL) call fail('MPI_Comm_free left the handle set')
  end subroutine communicators
end module phases

program known_counts_fortran
  use phases
  implicit none
  integer :: ierr, i, comms, mine(14), total(14)
#if defined(MIXED)
  interface
    ! known_counts_mixed.c: C's own calls on the communicator Fortran gives it
    subroutine c_exchange(comm, sends, recvs, colls) bind(C, name='c_exchange')
      import :: c_int
      integer(c_int) :: comm, sends, recvs, colls
    end subroutine c_exchange
  end interface
#endif
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  n_comm_rank = n_comm_rank + 1
  n_comm_size = n_comm_size + 1
  if (nranks /= 4) call fail('run with 4 ranks')
  call early_receiver()
  do i = 1, 10
    call exchange_blocking(MPI_COMM_WORLD, 10)
  end do
  call ring_nonblocking()
  call persistent()
  call misc_p2p()
  call world_collectives()
  call datatypes()
  call polls()
  call communicators(comms)
#if defined(MIXED)
  call c_exchange(MPI_COMM_WORLD, sends, recvs, colls)
  n_comm_rank = n_comm_rank + 1
#endif
  mine = [sends, recvs, isends, irecvs, colls, nbcs, n_comm_rank, n_comm_size, n_wtime, &
          n_type_commit, n_waitall, n_get_address, n_comm_set_name, n_iprobe]
  call MPI_Reduce(mine, total, 14, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a, i0)', 'expect MpiSend ', total(1)
    print '(a, i0)', 'expect MpiRecv ', total(2)
    print '(a, i0)', 'expect MpiIsend ', total(3)
    print '(a, i0)', 'expect MpiIsendComplete ', total(3)
    print '(a, i0)', 'expect MpiIrecvRequest ', total(4)
    print '(a, i0)', 'expect MpiIrecv ', total(4)
    ! and the reduce above, on every rank
    print '(a, i0)', 'expect MpiCollectiveBegin ', total(5) + nranks
    print '(a, i0)', 'expect MpiCollectiveEnd ', total(5) + nranks
    print '(a, i0)', 'expect NonBlockingCollectiveRequest ', total(6)
    print '(a, i0)', 'expect NonBlockingCollectiveComplete ', total(6)
    print '(a, i0)', 'expect comms ', comms + made_comms
    print '(a, i0)', 'expect peruse_comms ', 6
    print '(a, i0)', 'expect_call MPI_Comm_rank ', total(7)
    print '(a, i0)', 'expect_call MPI_Comm_size ', total(8)
    print '(a, i0)', 'expect_call MPI_Wtime ', total(9)
    print '(a, i0)', 'expect_call MPI_Type_commit ', total(10)
    print '(a, i0)', 'expect_call MPI_Waitall ', total(11)
    print '(a, i0)', 'expect_call MPI_Get_address ', total(12)
    print '(a, i0)', 'expect_call MPI_Comm_set_name ', total(13)
    print '(a, i0)', 'expect_call MPI_Iprobe ', total(14)
    print '(a, i0)', 'expect_call MPI_Reduce ', 2 * nranks
    print '(a, i0)', 'expect_call MPI_Init ', nranks
  end if
  call MPI_Finalize(ierr)
end program known_counts_fortran
