"""What tests/apps/rma.c does, step by step, and the check that its archive says exactly that.

The program's operations are listed here once (EXPECTED_OPERATIONS): the trace check compares
every RMA event of every rank with them, and the report test derives the numbers of the report's
RMA section from the same list.
"""
import collections
import re

RANKS = 4
ALL = 0xFFFFFFFF  # OTF2's "every target" (OTF2_UNDEFINED_UINT32)
WINDOWS = [  # (name, communicator), in creation order
    ("halo window", "MPI_COMM_WORLD"),
    ("win 1 (MPI_Win_allocate)", "MPI_COMM_WORLD"),
    ("win 2 (MPI_Win_allocate_shared)", "comm 2 (MPI_Comm_split_type)"),
    ("win 3 (MPI_Win_create_dynamic)", "MPI_COMM_WORLD"),
]
HALO, ALLOC, SHARED, DYNAMIC = (w[0] for w in WINDOWS)


class Op:
    """One operation: the MPI call, its OTF2 event, window, target, bytes sent to and received from the target,
    the MPI call its local completion is in and the one its remote completion is in (None:
    none is written, the target completes it in MPI_Win_wait)."""

    def __init__(self, call, kind, win, target, sent, received, local_in, remote_in,
                 atomic=None):
        self.call, self.kind, self.win, self.target = call, kind, win, target
        self.sent, self.received, self.atomic = sent, received, atomic
        self.local_in, self.remote_in = local_in, remote_in

    def key(self):
        return (self.kind, self.win, self.target, self.sent, self.received, self.atomic)


def expected_operations(rank):
    p = lambda k: (rank + k) % RANKS  # noqa: E731
    ops = [
        # A: fences
        Op("MPI_Put", "RmaPut", HALO, p(1), 16, 0, "MPI_Win_fence", "MPI_Win_fence"),
        Op("MPI_Get", "RmaGet", HALO, p(2), 0, 8, "MPI_Win_fence", "MPI_Win_fence"),
        Op("MPI_Accumulate", "RmaAtomic", HALO, p(3), 12, 0, "MPI_Win_fence", "MPI_Win_fence", "ACCUMULATE"),
        Op("MPI_Put", "RmaPut", HALO, p(1), 4, 0, "MPI_Win_fence", "MPI_Win_fence"),
    ]
    # B: PSCW, 0 -> 1 and 2 -> 3; a put completes at its target in MPI_Win_wait.
    if rank % 2 == 0:
        ops.append(Op("MPI_Put", "RmaPut", HALO, rank + 1, 32, 0, "MPI_Win_complete", None))
    if rank == 0:
        ops.append(Op("MPI_Get_accumulate", "RmaAtomic", HALO, 1, 8, 8, "MPI_Win_complete", "MPI_Win_complete",
                      "FETCH_AND_ACCUMULATE"))
    ops += [
        # C: passive target
        Op("MPI_Put", "RmaPut", ALLOC, p(1), 8, 0, "MPI_Win_unlock", "MPI_Win_unlock"),
        Op("MPI_Fetch_and_op", "RmaAtomic", ALLOC, p(1), 4, 4, "MPI_Win_unlock", "MPI_Win_unlock",
           "FETCH_AND_ACCUMULATE"),
        Op("MPI_Compare_and_swap", "RmaAtomic", ALLOC, rank, 4, 4, "MPI_Win_unlock", "MPI_Win_unlock",
           "COMPARE_AND_SWAP"),
        Op("MPI_Put", "RmaPut", ALLOC, p(1), 4, 0, "MPI_Win_flush", "MPI_Win_flush"),
        Op("MPI_Put", "RmaPut", ALLOC, p(2), 4, 0, "MPI_Win_flush_local", "MPI_Win_unlock_all"),
        Op("MPI_Get", "RmaGet", ALLOC, p(3), 0, 4, "MPI_Win_flush_local_all", "MPI_Win_flush_local_all"),
        Op("MPI_Put", "RmaPut", ALLOC, p(1), 4, 0, "MPI_Win_unlock_all", "MPI_Win_unlock_all"),
        # D: request-based
        Op("MPI_Rput", "RmaPut", ALLOC, p(1), 16, 0, "MPI_Wait", "MPI_Win_unlock_all"),
        Op("MPI_Rget", "RmaGet", ALLOC, p(2), 0, 16, "MPI_Test", "MPI_Test"),
        Op("MPI_Raccumulate", "RmaAtomic", ALLOC, p(3), 8, 0, "MPI_Waitall", "MPI_Win_unlock_all", "ACCUMULATE"),
        # Open MPI's osc/sm gives every request-based operation one shared, already complete
        # request: the second one pending on it completes in its own call.
        Op("MPI_Rget_accumulate", "RmaAtomic", ALLOC, p(1), 4, 4, "MPI_Rget_accumulate",
           "MPI_Rget_accumulate", "FETCH_AND_ACCUMULATE"),
        # E, F
        Op("MPI_Put", "RmaPut", SHARED, p(1), 4, 0, "MPI_Win_fence", "MPI_Win_fence"),
        Op("MPI_Put", "RmaPut", DYNAMIC, p(1), 4, 0, "MPI_Win_unlock_all", "MPI_Win_unlock_all"),
    ]
    return ops


def expected_locks(rank):
    """(event, window, remote, lock type) in order; the self locks are the program's own
    set-up and checks, the only ones whose lock is known to be held when MPI_Win_lock returns."""
    p1 = (rank + 1) % RANKS

    def self_lock(kind):
        return [("RmaRequestLock", ALLOC, rank, kind), ("RmaAcquireLock", ALLOC, rank, kind),
                ("RmaReleaseLock", ALLOC, rank, None)]

    def lock_all(win):
        return [("RmaRequestLock", win, ALL, "SHARED"), ("RmaReleaseLock", win, ALL, None)]

    return (self_lock("EXCLUSIVE") +
            [("RmaRequestLock", ALLOC, p1, "EXCLUSIVE"), ("RmaReleaseLock", ALLOC, p1, None)] +
            self_lock("SHARED") + lock_all(ALLOC) + self_lock("SHARED") + lock_all(ALLOC) +
            self_lock("SHARED") + lock_all(DYNAMIC))


def expected_syncs(rank):
    return [(ALLOC, (rank + 1) % RANKS), (ALLOC, (rank + 2) % RANKS), (ALLOC, ALL), (ALLOC, rank)]


def expected_collectives():
    """(operation, window) of every RmaCollectiveEnd, in order (each after its Begin)."""
    return ([("CREATE_HANDLE", HALO)] + [("BARRIER", HALO)] * 3 +
            [("CREATE_HANDLE_AND_ALLOCATE", ALLOC), ("CREATE_HANDLE_AND_ALLOCATE", SHARED)] +
            [("BARRIER", SHARED)] * 2 +
            [("CREATE_HANDLE", DYNAMIC), ("DESTROY_HANDLE", DYNAMIC),
             ("DESTROY_HANDLE_AND_DEALLOCATE", SHARED), ("DESTROY_HANDLE_AND_DEALLOCATE", ALLOC),
             ("DESTROY_HANDLE", HALO)])


PROCESS, MEMORY = 1, 2


def rank_of(location):
    return int(re.search(r"(\d+)$", location.group.name).group(1))


def enum_name(value):
    return str(value).split(".")[-1]


def check_rma(trace, run):
    """tests/apps/rma.c on 4 ranks: every RMA event of every rank, exactly: the windows'
    definitions and names, each operation's kind, window, target and bytes in program order,
    each matching id's local and remote completion once, later on the same location and in the
    MPI call where MPI completes it, locks, flushes, group synchronisations with their groups'
    members, and the windows' collective creation, fences and destruction."""
    f = []
    if "every check passed" not in run.stdout:
        f.append("the program's own data checks did not pass")
    wins = [(w.name, w.comm.name) for w in trace.rma_wins]
    if wins != WINDOWS:
        f.append(f"RmaWin definitions {wins}, expected {WINDOWS}")
    ranks = sorted({rank for rank, _ in trace.events})
    if ranks != list(range(RANKS)):
        return f + [f"ranks {ranks} in the trace"]
    for rank in ranks:
        f += check_rank(rank, trace.rank_events(rank))
    return f


def check_rank(rank, events):
    f = []
    stack = []
    ops, completions, tests = [], collections.defaultdict(list), []
    locks, syncs, groups, collectives, lifecycle = [], [], [], [], []
    open_collective = False
    for e in events:
        r = e.raw
        if e.kind == "Enter":
            stack.append(e.name)
            continue
        if e.kind == "Leave":
            stack.pop()
            continue
        if not e.kind.startswith("Rma"):
            continue
        where = stack[-1] if stack else None
        if e.kind in ("RmaPut", "RmaGet", "RmaAtomic"):
            sent = r.bytes if e.kind == "RmaPut" else 0 if e.kind == "RmaGet" else r.bytes_sent
            received = r.bytes if e.kind == "RmaGet" else 0 if e.kind == "RmaPut" \
                else r.bytes_received
            atomic = enum_name(r.type) if e.kind == "RmaAtomic" else None
            ops.append(((e.kind, r.win.name, r.remote, sent, received, atomic),
                        (r.win.name, r.matching_id), where))
        elif e.kind in ("RmaOpCompleteNonBlocking", "RmaOpCompleteRemote"):
            completions[(r.win.name, r.matching_id)].append((e.kind, where, len(ops)))
        elif e.kind == "RmaOpTest":
            tests.append(((r.win.name, r.matching_id), where))
        elif e.kind in ("RmaRequestLock", "RmaAcquireLock", "RmaReleaseLock"):
            kind = enum_name(r.lock_type) if e.kind != "RmaReleaseLock" else None
            locks.append((e.kind, r.win.name, r.remote, kind))
        elif e.kind == "RmaSync":
            syncs.append((r.win.name, r.remote))
        elif e.kind == "RmaGroupSync":
            groups.append((r.sync_level.value, r.win.name,
                           [rank_of(m) for m in r.group.members], where))
        elif e.kind == "RmaCollectiveBegin":
            if open_collective:
                f.append(f"rank {rank}: RmaCollectiveBegin inside another in {where}")
            open_collective = True
        elif e.kind == "RmaCollectiveEnd":
            if not open_collective:
                f.append(f"rank {rank}: RmaCollectiveEnd without its Begin in {where}")
            open_collective = False
            collectives.append((enum_name(r.collective_op), r.win.name))
        elif e.kind in ("RmaWinCreate", "RmaWinDestroy"):
            lifecycle.append((e.kind, r.win.name))

    expected = expected_operations(rank)
    got = [key for key, _, _ in ops]
    want = [op.key() for op in expected]
    if got != want:
        f.append(f"rank {rank}: operations {got}, expected {want}")
    else:
        for op, (_, match, where) in zip(expected, ops):
            if where != op.call:
                f.append(f"rank {rank}: {op.kind} recorded inside {where}, expected {op.call}")
            done = completions.get(match, [])
            local = [w for k, w, _ in done if k == "RmaOpCompleteNonBlocking"]
            remote = [w for k, w, _ in done if k == "RmaOpCompleteRemote"]
            if local != [op.local_in]:
                f.append(f"rank {rank}: {op.kind} to {op.target} on {op.win} (matching "
                         f"{match[1]}) completed locally in {local}, expected [{op.local_in}]")
            if remote != ([op.remote_in] if op.remote_in else []):
                f.append(f"rank {rank}: {op.kind} to {op.target} on {op.win} (matching "
                         f"{match[1]}) completed remotely in {remote}, expected "
                         f"{[op.remote_in] if op.remote_in else []}")
    issued_at = {}
    for i, (_, match, _) in enumerate(ops):
        issued_at.setdefault(match, i)
    for match, done in completions.items():
        if match not in issued_at:
            f.append(f"rank {rank}: completion of matching id {match} that no operation has")
        elif any(after <= issued_at[match] for _, _, after in done):
            f.append(f"rank {rank}: matching id {match} completed before it was issued")
    for match, where in tests:
        if where != "MPI_Test" or match not in issued_at:
            f.append(f"rank {rank}: RmaOpTest of {match} in {where}")
    if locks != expected_locks(rank):
        f.append(f"rank {rank}: locks {locks}, expected {expected_locks(rank)}")
    if syncs != expected_syncs(rank):
        f.append(f"rank {rank}: RmaSync {syncs}, expected {expected_syncs(rank)}")
    partner = rank + 1 if rank % 2 == 0 else rank - 1
    closing = "MPI_Win_complete" if rank % 2 == 0 else \
        "MPI_Win_wait" if rank == 1 else "MPI_Win_test"
    opening = "MPI_Win_start" if rank % 2 == 0 else "MPI_Win_post"
    want_groups = [(PROCESS, HALO, [partner], opening), (PROCESS | MEMORY, HALO, [partner], closing)]
    final = [g for g in groups if g[0] != 0]
    pending = [g for g in groups if g[0] == 0]
    if final != want_groups or any(g != (0, HALO, [partner], "MPI_Win_test") for g in pending) \
            or (pending and rank != 3):
        f.append(f"rank {rank}: group synchronisations {groups}, expected {want_groups} (rank 3: "
                 "and unfinished MPI_Win_test calls at level NONE)")
    if collectives != expected_collectives():
        f.append(f"rank {rank}: RMA collectives {collectives}, expected {expected_collectives()}")
    want_lifecycle = [("RmaWinCreate", w) for w, _ in WINDOWS] + \
        [("RmaWinDestroy", w) for w, _ in reversed(WINDOWS)]
    if lifecycle != want_lifecycle:
        f.append(f"rank {rank}: windows created and destroyed {lifecycle}")
    return f
