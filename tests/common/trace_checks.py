"""What the integration tests assert about perusetrace archives, read with python3-otf2.

Each check takes a loaded Trace and the finished mpirun process and returns a list of failure
messages (empty: the check holds).
"""
import collections
import os
import re

import otf2

PAPER_EARLY_RECEIVER = [  # the receiver of the Open MPI Peruse paper's first listing
    "REQ_ACTIVATE", "SEARCH_UNEX_Q_BEGIN", "SEARCH_UNEX_Q_END", "REQ_INSERT_IN_POSTED_Q",
    "MSG_ARRIVED", "SEARCH_POSTED_Q_BEGIN", "REQ_REMOVE_FROM_POSTED_Q", "MSG_MATCH_POSTED_REQ",
    "SEARCH_POSTED_Q_END", "REQ_XFER_BEGIN", "REQ_XFER_CONTINUE", "REQ_XFER_END", "REQ_COMPLETE"]
# The sender's own events (the paper's second listing). Open MPI 4.1.4 reports the fragments it
# pipelines right after the rendezvous header before XFER_BEGIN, so XFER_CONTINUE is checked
# for presence, not place.
PAPER_SENDER = ["REQ_ACTIVATE", "REQ_XFER_BEGIN", "REQ_XFER_END", "REQ_COMPLETE"]

# The Open MPI the checked run used, (major, minor), for the answers that differ between 4.1 and
# 5.0; run_traced.py sets it from its mpirun. Open MPI 5's shared memory lets the receiver pull a
# rendezvous message in one single copy: one XFER_CONTINUE of all its bytes, none on the sender.
OPEN_MPI = None


def pulls_messages():
    """Whether the run's Open MPI moves a rendezvous message over shared memory in one piece."""
    return OPEN_MPI is not None and OPEN_MPI >= (5, 0)

# Adjacent Peruse events of a location. Open MPI fires the first kind back to back, and the
# second takes the first one's time (events/back_to_back.hpp); the second kind lie on either
# side of a queue search and have a clock read each.
BACK_TO_BACK = {
    ("MSG_ARRIVED", "SEARCH_POSTED_Q_BEGIN"), ("REQ_REMOVE_FROM_POSTED_Q", "MSG_MATCH_POSTED_REQ"),
    ("MSG_MATCH_POSTED_REQ", "SEARCH_POSTED_Q_END"), ("MSG_INSERT_IN_UNEX_Q", "SEARCH_POSTED_Q_END"),
    ("REQ_MATCH_UNEX", "MSG_REMOVE_FROM_UNEX_Q"), ("MSG_REMOVE_FROM_UNEX_Q", "SEARCH_UNEX_Q_END"),
    ("SEARCH_UNEX_Q_END", "REQ_INSERT_IN_POSTED_Q")}
AROUND_A_SEARCH = {
    ("SEARCH_POSTED_Q_BEGIN", "REQ_REMOVE_FROM_POSTED_Q"),
    ("SEARCH_POSTED_Q_BEGIN", "MSG_INSERT_IN_UNEX_Q"),
    ("SEARCH_UNEX_Q_BEGIN", "REQ_MATCH_UNEX"), ("SEARCH_UNEX_Q_BEGIN", "SEARCH_UNEX_Q_END")}
# Under MPI_THREAD_MULTIPLE the search starts after Open MPI takes the matching lock.
AFTER_THE_LOCK = ("MSG_ARRIVED", "SEARCH_POSTED_Q_BEGIN")


class Event:
    __slots__ = ("kind", "time", "name", "attrs", "raw")

    def __init__(self, kind, time, name, attrs, raw):
        self.kind, self.time, self.name, self.attrs, self.raw = kind, time, name, attrs, raw

    def __repr__(self):
        return f"{self.kind}:{self.name}@{self.time}"


class Trace:
    def __init__(self):
        self.events = collections.defaultdict(list)  # (rank, thread) -> [Event]
        self.comms = []
        self.rma_wins = []
        self.io_files = []
        self.clock_resolution = 1
        self.global_offset = 0  # the archive's ClockProperties: every event lies in
        self.trace_length = 0   # [global_offset, global_offset + trace_length]
        self.properties = {}
        self.hosts = {}  # rank -> its system-tree node's name
        # Processes of other MPI jobs (MPI_Comm_spawn; docs/otf2-mapping.md, "Dynamic
        # processes"): their location group's name -> their events, kept apart from the ranks.
        self.other_jobs = collections.defaultdict(list)

    def ns(self, ticks):
        """A time span in the archive's clock ticks, in nanoseconds."""
        return round(ticks * 1e9 / self.clock_resolution)

    def rank_events(self, rank, thread=0):
        return self.events[(rank, thread)]

    def peruse(self, rank, tag=None, operation=None, thread=0):
        return [e for e in self.rank_events(rank, thread) if e.kind == "Peruse"
                and (tag is None or e.attrs["tag"] == tag)
                and (operation is None or e.attrs["operation"] == operation)]

    def regions(self, rank, name, thread=0):
        """(enter, leave) times of every visit of region `name`."""
        stack, out = [], []
        for e in self.rank_events(rank, thread):
            if e.kind == "Enter" and e.name == name:
                stack.append(e.time)
            elif e.kind == "Leave" and e.name == name:
                out.append((stack.pop(), e.time))
        return out

    def of_kind(self, kind):
        return [(loc, e) for loc, events in self.events.items() for e in events if e.kind == kind]


def calls_by_function(events):
    """MPI calls per function among EVENTS: an Enter each, and for the Leave of polls folded
    into one (MPITRACE_FOLD_POLLS) the calls it stands for beyond the first (poll_calls)."""
    counted = collections.Counter()
    for e in events:
        if e.kind == "Enter":
            counted[e.name] += 1
        elif e.kind == "Leave" and e.raw.attributes:
            n = attribute(e.raw, "poll_calls")
            if n:
                counted[e.name] += int(n) - 1
    return counted


def in_regions(events, counts=lambda name: True):
    """(event, the innermost region open at it, or None) for every event of EVENTS but the
    Enter and Leave of a region; counts(name) says which regions count."""
    stack = []
    for e in events:
        if e.kind in ("Enter", "Leave") and counts(e.name):
            if e.kind == "Enter":
                stack.append(e.name)
            elif stack:
                stack.pop()
            continue
        yield e, stack[-1] if stack else None


OTHER_JOB_NODE_CLASS = "other MPI job"  # record/archive_schema.hpp


def rank_of(location):
    return int(re.search(r"(\d+)$", location.group.name).group(1))


PERUSE_FIELDS = ("peer", "tag", "bytes", "operation", "comm")


def whole_peruse_fields(memory, present):
    """A Peruse event's fields, whole. perusetrace writes the request only when it changes on the
    location, and the other fields only when they differ from the request's previous event there
    (record/peruse_fields.hpp). `memory` is the location's [last request, {request: fields}];
    it remembers everything, so a field the writer left out without an earlier value is caught."""
    if "request" not in present and memory[0] is None:
        raise ValueError(f"first Peruse event of a location without peruse_request: {present}")
    request = present.get("request", memory[0])
    earlier = memory[1].get(request, {})
    fields = {"request": request}
    for name in PERUSE_FIELDS:
        if name not in present and name not in earlier:
            raise ValueError(f"Peruse event of request {request} without peruse_{name} and no "
                             f"earlier event of that request on its location: {present}")
        fields[name] = present.get(name, earlier.get(name))
    memory[0] = request
    memory[1][request] = fields
    return fields


def read_properties(path):
    """The anchor file's properties (python3-otf2 3.0.2 does not expose them): NAME -> value."""
    import subprocess
    out = subprocess.run(["otf2-print", "-I", path], capture_output=True, text=True).stdout
    props, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^\s*Property name:?\s+(\S+)", line)
        if m:
            name = m.group(1)
            continue
        m = re.match(r"^\s*Property value:?\s+(.*)$", line)
        if m and name:
            props[name] = m.group(1)
            name = None
    return props


def load(path):
    trace = Trace()
    memory = {}
    with otf2.reader.open(path) as archive:
        clock = archive.definitions.clock_properties
        trace.clock_resolution = clock.timer_resolution
        trace.global_offset, trace.trace_length = clock.global_offset, clock.trace_length
        trace.properties = read_properties(path)
        trace.comms = list(archive.definitions.comms)
        trace.rma_wins = list(archive.definitions.rma_wins)
        trace.io_files = list(archive.definitions.io_files)
        threads = {}
        for location, event in archive.events:
            node = location.group.system_tree_parent
            if node is not None and node.class_name == OTHER_JOB_NODE_CLASS:
                trace.other_jobs[location.group.name].append(event)
                continue
            rank = rank_of(location)
            if rank not in trace.hosts:
                node = location.group.system_tree_parent
                trace.hosts[rank] = node.name if node is not None else None
            key = (rank, threads.setdefault(location, sum(1 for l in threads if rank_of(l) == rank)))
            kind = type(event).__name__
            name, attrs = kind, {}
            if isinstance(event, (otf2.events.Enter, otf2.events.Leave)):
                name = event.region.name
                if name.startswith("PERUSE_COMM_"):
                    if isinstance(event, otf2.events.Leave):
                        continue  # a Peruse event is a zero-length region: keep its Enter
                    kind, name = "Peruse", name[len("PERUSE_COMM_"):]
                    present = {a.name[len("peruse_"):]: v
                               for a, v in (event.attributes or {}).items()}
                    attrs = whole_peruse_fields(memory.setdefault(location, [None, {}]), present)
            trace.events[key].append(Event(kind, event.time, name, attrs, event))
    return trace


def in_order(names, expected):
    """The first name of `expected` that `names` lacks in that order, or None."""
    i = 0
    for n in names:
        if i < len(expected) and n == expected[i]:
            i += 1
    return None if i == len(expected) else expected[i]


def world_rank(comm, rank_in_comm):
    return rank_of(comm.group.members[rank_in_comm])


def message_matrix(trace):
    """(sender, receiver world rank) -> [messages, bytes] of the archive's MpiSend/MpiIsend."""
    out = {}
    for (rank, _), events in trace.events.items():
        for e in events:
            if e.kind in ("MpiSend", "MpiIsend"):
                pair = out.setdefault((rank, world_rank(e.raw.communicator, e.raw.receiver)), [0, 0])
                pair[0] += 1
                pair[1] += e.raw.msg_length
    return out


# --- generic properties, used by most checks ---------------------------------------------

def clock_condition(trace):
    """No message is received before it was sent. MPI matches the messages of one sender, receiver,
    communicator and tag in order, so the k-th receive (its MpiRecv/MpiIrecv, written when the
    receive completed) must come after the k-th send (its MpiSend/MpiIsend, written when the send
    started). On the run's global clock this holds whatever the hosts' clocks are."""
    sends, recvs = collections.defaultdict(list), collections.defaultdict(list)
    for (rank, _), events in trace.events.items():
        entered = []  # a send starts when its MPI call does: MpiIsend is written at the call's
        for e in events:  # end, as its request id is known only then
            r = e.raw
            if e.kind == "Enter":
                entered.append(e.time)
            elif e.kind == "Leave" and entered:
                entered.pop()
            elif e.kind in ("MpiSend", "MpiIsend"):
                sends[(rank, world_rank(r.communicator, r.receiver), r.communicator._ref,
                       r.msg_tag)].append(entered[-1] if entered else e.time)
            elif e.kind in ("MpiRecv", "MpiIrecv"):
                recvs[(world_rank(r.communicator, r.sender), rank, r.communicator._ref,
                       r.msg_tag)].append(e.time)
    backwards, worst, pairs = 0, 0, collections.Counter()
    for key, sent in sends.items():
        for s_time, r_time in zip(sorted(sent), sorted(recvs.get(key, []))):
            if r_time < s_time:
                backwards += 1
                pairs[key[:2]] += 1
                worst = max(worst, s_time - r_time)
    if backwards:
        return [f"{backwards} of {sum(map(len, sends.values()))} messages were received before "
                f"they were sent, by up to {trace.ns(worst) / 1e6:.3f} ms (sender, receiver: "
                f"{dict(pairs.most_common(4))})"]
    return []


def clock_span(trace):
    """The archive's ClockProperties hold every event: none before the global offset, none after
    its end, and a length no longer than the events' span (with the time MPI_Init and
    MPI_Finalize took)."""
    first = min((e.time for ev in trace.events.values() for e in ev[:1]), default=None)
    last = max((e.time for ev in trace.events.values() for e in ev[-1:]), default=None)
    if first is None:
        return ["the trace holds no events"]
    f = []
    start, end = trace.global_offset, trace.global_offset + trace.trace_length
    if first < start:
        f.append(f"an event lies {trace.ns(start - first)} ns before the global offset")
    if last > end:
        f.append(f"an event lies {trace.ns(last - end)} ns after the trace's end")
    if first - start > trace.clock_resolution or end - last > trace.clock_resolution:
        f.append(f"the ClockProperties span {trace.ns(trace.trace_length) / 1e9:.3f} s, the "
                 f"events {trace.ns(last - first) / 1e9:.3f} s (from +"
                 f"{trace.ns(first - start) / 1e9:.3f} s)")
    return f


def messages_match(trace):
    """Every MpiSend has one MpiRecv with the same sender, receiver, communicator, tag, bytes;
    none received before it was sent; the clock's span is the events'."""
    sends, recvs = collections.Counter(), collections.Counter()
    for (rank, _), events in trace.events.items():
        for e in events:
            r = e.raw
            if e.kind in ("MpiSend", "MpiIsend"):
                sends[(rank, world_rank(r.communicator, r.receiver), r.communicator.name,
                       r.msg_tag, r.msg_length)] += 1
            elif e.kind in ("MpiRecv", "MpiIrecv"):
                recvs[(world_rank(r.communicator, r.sender), rank, r.communicator.name,
                       r.msg_tag, r.msg_length)] += 1
    failures = []
    if sends != recvs:
        only_sent = sends - recvs
        only_received = recvs - sends
        failures.append(f"unmatched messages: sent but not received {dict(only_sent)}; "
                        f"received but not sent {dict(only_received)}")
    if not sends:
        failures.append("the trace holds no MpiSend/MpiIsend at all")
    return failures + clock_condition(trace) + clock_span(trace)


def lifecycles(trace, per_rank=False):
    """Every Peruse request starts with ACTIVATE and ends with COMPLETE or NOTIFY. With
    `per_rank`, a request's events are gathered from all threads of its rank in time order:
    under MPI_THREAD_MULTIPLE, whichever thread drives the progress engine reports them."""
    failures = []
    streams = trace.events
    if per_rank:
        streams = collections.defaultdict(list)
        for (rank, _), events in trace.events.items():
            streams[(rank, "any")].extend(events)
        for events in streams.values():
            events.sort(key=lambda e: e.time)
    for key, events in streams.items():
        by_request = collections.defaultdict(list)
        for e in events:
            if e.kind == "Peruse" and e.attrs["request"] != 0:
                by_request[e.attrs["request"]].append(e.name)
        for request, names in by_request.items():
            if names[0] != "REQ_ACTIVATE" or names[-1] not in ("REQ_COMPLETE", "REQ_NOTIFY"):
                failures.append(f"rank {key[0]} thread {key[1]} request {request}: life cycle "
                                f"{names[:3]}...{names[-2:]} does not run ACTIVATE..COMPLETE")
                if len(failures) > 5:
                    return failures
        if not by_request:
            failures.append(f"rank {key[0]} thread {key[1]}: no Peruse request events")
    return failures


def first_by_name(events):
    first = {}
    for e in events:
        first.setdefault(e.name, e)
    return first


def waited_as_injected(what, waited_ns, delay_ns, at_least=True):
    """A measured wait must match the delay the example injected: no longer than a loaded machine
    stretches it, and, where the wait spans the example's sleep itself (`at_least`), no shorter
    than 90 % of it (a sleep is never shorter). A late sender's wait starts on the other rank
    than the sleep, after a barrier whose exit a loaded machine can delay: its lower bound is
    late_sender_in_trace's instead."""
    if (not at_least or 0.9 * delay_ns <= waited_ns) and waited_ns <= 3 * delay_ns + 50_000_000:
        return []
    return [f"{what} {waited_ns / 1e6:.1f} ms, expected about the injected "
            f"{delay_ns / 1e6:.0f} ms"]


def late_sender_in_trace(trace, delay_ns, tag=1):
    """The late sender as the trace's own times show it, whatever the machine's load: rank 0
    slept at least the injected delay between its MPI_Barrier and its MPI_Send, rank 1's receive
    was posted before that send began, and its wait in the posted queue ended after it."""
    barriers = trace.regions(0, "MPI_Barrier")
    sends = trace.regions(0, "MPI_Send")
    first = first_by_name(trace.peruse(1, tag=tag, operation=1))
    if not barriers or not sends or "REQ_INSERT_IN_POSTED_Q" not in first or \
            "MSG_ARRIVED" not in first:
        return ["the late sender's MPI_Barrier, MPI_Send or posted-queue events are missing"]
    send_begin = next((b for b, _ in sends if b >= barriers[0][1]), None)
    if send_begin is None:
        return ["rank 0 has no MPI_Send after its first MPI_Barrier"]
    before = max(e for _, e in barriers if e <= send_begin)
    f = []
    if trace.ns(send_begin - before) < delay_ns:
        f.append(f"rank 0 slept {trace.ns(send_begin - before) / 1e6:.1f} ms before MPI_Send, "
                 f"less than the injected {delay_ns / 1e6:.0f} ms")
    if not first["REQ_INSERT_IN_POSTED_Q"].time <= send_begin <= first["MSG_ARRIVED"].time:
        f.append("rank 1's receive was not posted before rank 0's MPI_Send began and matched "
                 "after it")
    return f


def delay_ms(run):
    m = re.search(r"delay (\d+) ms", run.stdout)
    return int(m.group(1)) if m else 0


def event_times(trace, rank, must_see, thread_multiple=False):
    """Back-to-back pairs share one time, pairs around a search (and, under
    MPI_THREAD_MULTIPLE, around the matching lock) differ; every pair in `must_see` occurs.

    Two clock reads a few ns apart can return the same nanosecond: this guest's time-stamp
    counter and CLOCK_MONOTONIC advance in steps of about 10 ns (two rdtsc in a row differ by 26
    ticks, now and then by 1). So a pair that reads the clock twice must never go backwards, and
    must differ in most of its occurrences; one that shared a read would be equal in all."""
    f, seen = [], set()
    own_reads = collections.Counter()  # pair -> occurrences
    equal = collections.Counter()      # pair -> occurrences at one nanosecond
    for (r, _), events in trace.events.items():
        if r != rank:
            continue
        # Metrics go with the Peruse event before them; anything else between two Peruse
        # events, such as a drain's flush region, leaves the second a clock read of its own.
        recorded = [e for e in events if e.kind != "Metric"]
        for a, b in zip(recorded, recorded[1:]):
            if a.kind != "Peruse" or b.kind != "Peruse":
                continue
            pair = (a.name, b.name)
            seen.add(pair)
            if pair in AROUND_A_SEARCH or (thread_multiple and pair == AFTER_THE_LOCK):
                own_reads[pair] += 1
                if b.time < a.time:
                    f.append(f"rank {rank}: {b.name} at {b.time} comes before {a.name} at "
                             f"{a.time}, which Open MPI fires before it")
                elif b.time == a.time:
                    equal[pair] += 1
            elif pair in BACK_TO_BACK and b.time != a.time:
                f.append(f"rank {rank}: {b.name} at {b.time} does not share the time of "
                         f"{a.name} at {a.time}, which Open MPI fires right before it")
    for pair, n in own_reads.items():
        if equal[pair] * 2 > n:
            f.append(f"rank {rank}: {pair[1]} shares the time of {pair[0]} before it in "
                     f"{equal[pair]} of {n} cases: no clock read of its own")
    missing = sorted(set(must_see) - seen)
    if missing:
        f.append(f"rank {rank}: no adjacent {missing} to check the times of")
    return f[:5]


# Open MPI's ob1 reports these for a message header, not a request: no request, no data.
MESSAGE_EVENTS = {"MSG_ARRIVED", "MSG_INSERT_IN_UNEX_Q", "MSG_REMOVE_FROM_UNEX_Q",
                  "SEARCH_POSTED_Q_BEGIN", "SEARCH_POSTED_Q_END"}


def peruse_fields(trace):
    """Message events carry request 0 and 0 bytes; a match reports the request removed from the
    posted queue right before it, with its bytes. perusetrace writes some of these events into the
    record before them (record/carried_followers.hpp): their fields must come out as Open MPI gave
    them."""
    f = []
    for (rank, thread), events in trace.events.items():
        peruse = [e for e in events if e.kind == "Peruse"]
        for e in peruse:
            if e.name in MESSAGE_EVENTS and (e.attrs["request"] != 0 or e.attrs["bytes"] != 0):
                f.append(f"rank {rank} thread {thread}: {e.name} at {e.time} carries request "
                         f"{e.attrs['request']} and {e.attrs['bytes']} bytes, expected none")
        for a, b in zip(peruse, peruse[1:]):
            if (a.name, b.name) == ("REQ_REMOVE_FROM_POSTED_Q", "MSG_MATCH_POSTED_REQ") and (
                    a.attrs["request"], a.attrs["bytes"]) != (b.attrs["request"], b.attrs["bytes"]):
                f.append(f"rank {rank} thread {thread}: MSG_MATCH_POSTED_REQ at {b.time} reports "
                         f"request {b.attrs['request']} ({b.attrs['bytes']} bytes), the removal "
                         f"before it {a.attrs['request']} ({a.attrs['bytes']} bytes)")
    return f[:5]


# --- checks ------------------------------------------------------------------------------

def check_late_sender(trace, run):
    f = messages_match(trace) + lifecycles(trace) + peruse_fields(trace)
    delay_ns = delay_ms(run) * 1_000_000
    receiver = trace.peruse(1, tag=1, operation=1)
    missing = in_order([e.name for e in receiver], PAPER_EARLY_RECEIVER)
    if missing:
        f.append(f"rank 1 lacks {missing} in the paper's early-receiver sequence: "
                 f"{[e.name for e in receiver]}")
        return f
    f += event_times(trace, 1, [
        ("SEARCH_UNEX_Q_BEGIN", "SEARCH_UNEX_Q_END"), ("SEARCH_UNEX_Q_END", "REQ_INSERT_IN_POSTED_Q"),
        ("MSG_ARRIVED", "SEARCH_POSTED_Q_BEGIN"), ("SEARCH_POSTED_Q_BEGIN", "REQ_REMOVE_FROM_POSTED_Q"),
        ("REQ_REMOVE_FROM_POSTED_Q", "MSG_MATCH_POSTED_REQ"),
        ("MSG_MATCH_POSTED_REQ", "SEARCH_POSTED_Q_END")])
    first = first_by_name(receiver)
    f += waited_as_injected("the receive waited in the posted queue",
                            first["MSG_ARRIVED"].time - first["REQ_INSERT_IN_POSTED_Q"].time,
                            delay_ns, at_least=False)
    f += late_sender_in_trace(trace, delay_ns)
    fragments = [e for e in receiver if e.name == "REQ_XFER_CONTINUE"]
    several = len(fragments) == 1 if pulls_messages() else len(fragments) >= 2
    if sum(e.attrs["bytes"] for e in fragments) != 40000 or not several:
        f.append(f"receiver fragments: {[e.attrs['bytes'] for e in fragments]}, expected "
                 f"{'one' if pulls_messages() else 'several'} adding up to 40000 bytes "
                 f"(Open MPI {OPEN_MPI})")
    requests = {e.attrs["request"] for e in receiver if e.attrs["request"]}
    if len(requests) != 1:
        f.append(f"the receive's Peruse events carry request ids {requests}, expected one id")
    recv_calls = trace.regions(1, "MPI_Recv")
    begin, end = first["REQ_XFER_BEGIN"].time, first["REQ_XFER_END"].time
    if not any(a <= begin <= end <= b for a, b in recv_calls):
        f.append("the physical transfer (XFER_BEGIN..END) is not inside rank 1's MPI_Recv")
    sender = trace.peruse(0, tag=1, operation=0)
    missing = in_order([e.name for e in sender], PAPER_SENDER)
    if missing:
        f.append(f"rank 0 lacks {missing} in the sender sequence: {[e.name for e in sender]}")
    sent = any(e.name == "REQ_XFER_CONTINUE" for e in sender)
    if sent == pulls_messages():
        f.append(f"rank 0 reports {'a' if sent else 'no'} fragment (XFER_CONTINUE) for a "
                 f"40000-byte message on Open MPI {OPEN_MPI}")
    if not [m for m in trace.rank_events(1) if m.kind == "Metric"]:
        f.append("no queue-depth metric on rank 1")
    return f


def metric_value(event, name):
    """The value a metric event gives the member called `name` (None: not in its class)."""
    for member, value in zip(event.raw.metric.members, event.raw.values):
        if member.name == name:
            return value
    return None


def check_late_receiver(trace, run):
    f = messages_match(trace) + lifecycles(trace) + peruse_fields(trace)
    delay_ns = delay_ms(run) * 1_000_000
    receiver = trace.peruse(1, tag=2, operation=1)
    names = [e.name for e in receiver]
    expected = ["MSG_ARRIVED", "MSG_INSERT_IN_UNEX_Q", "REQ_ACTIVATE", "SEARCH_UNEX_Q_BEGIN",
                "REQ_MATCH_UNEX", "MSG_REMOVE_FROM_UNEX_Q", "SEARCH_UNEX_Q_END", "REQ_COMPLETE"]
    missing = in_order(names, expected)
    if missing:
        f.append(f"rank 1 lacks {missing} in the late-receiver sequence: {names}")
        return f
    f += event_times(trace, 1, [
        ("MSG_ARRIVED", "SEARCH_POSTED_Q_BEGIN"), ("SEARCH_POSTED_Q_BEGIN", "MSG_INSERT_IN_UNEX_Q"),
        ("MSG_INSERT_IN_UNEX_Q", "SEARCH_POSTED_Q_END"), ("SEARCH_UNEX_Q_BEGIN", "REQ_MATCH_UNEX"),
        ("REQ_MATCH_UNEX", "MSG_REMOVE_FROM_UNEX_Q"), ("MSG_REMOVE_FROM_UNEX_Q", "SEARCH_UNEX_Q_END")])
    first = first_by_name(receiver)
    f += waited_as_injected("the message sat in the unexpected queue",
                            first["MSG_REMOVE_FROM_UNEX_Q"].time -
                            first["MSG_INSERT_IN_UNEX_Q"].time, delay_ns)
    depths = [metric_value(m, "unexpected queue depth") for m in trace.rank_events(1)
              if m.kind == "Metric" and metric_value(m, "unexpected queue depth") is not None]
    if not depths or max(depths) < 1:
        f.append(f"unexpected queue depth never reached 1: {depths[:10]}")
    return f


def check_late_wait(trace, run):
    f = messages_match(trace) + lifecycles(trace)
    delay_ns = delay_ms(run) * 1_000_000
    events = trace.rank_events(1)
    posted = [e for e in events if e.kind == "MpiIrecvRequest"]
    done = [e for e in events if e.kind == "MpiIrecv"]
    if len(posted) != 1 or len(done) != 1:
        return f + [f"rank 1: {len(posted)} MpiIrecvRequest and {len(done)} MpiIrecv, expected 1"]
    request = posted[0].raw.request_id
    if done[0].raw.request_id != request:
        f.append("MpiIrecv does not complete the MpiIrecvRequest's request id")
    complete = [e for e in trace.peruse(1, tag=3) if e.name == "REQ_COMPLETE"]
    if not complete:
        return f + ["rank 1 has no Peruse REQ_COMPLETE for the receive"]
    if complete[0].attrs["request"] != request:
        f.append(f"Peruse REQ_COMPLETE carries request {complete[0].attrs['request']}, the PMPI "
                 f"records {request}: the ids must be shared")
    waits = trace.regions(1, "MPI_Wait")
    if not waits:
        return f + ["rank 1 has no MPI_Wait region"]
    f += waited_as_injected("the request sat complete before MPI_Wait",
                            waits[-1][0] - complete[0].time, delay_ns)
    if not waits[-1][0] <= done[0].time <= waits[-1][1]:
        f.append("MpiIrecv is not recorded inside MPI_Wait")
    return f


def check_messages(trace, run):
    return messages_match(trace) + lifecycles(trace)


def check_pmpi_only(trace, run):
    """An MPI without Peruse: PMPI records only, and the user told once (events were asked)."""
    f = messages_match(trace)
    peruse = trace.of_kind("Peruse")
    if peruse:
        f.append(f"{len(peruse)} Peruse events in a trace that should have none")
    notices = run.stderr.count("has no Peruse") + run.stderr.count("against an MPI without Peruse")
    if notices != 1:
        f.append(f"the missing Peruse was reported {notices} times, expected once")
    return f


def known_counts_pmpi(trace, run):
    """tests/apps/known_counts.c prints what it did: 'expect KIND N' lines on rank 0."""
    f = messages_match(trace)
    expected = {m.group(1): int(m.group(2))
                for m in re.finditer(r"^expect (\w+) (\d+)$", run.stdout, re.M)}
    if not expected:
        return f + ["known_counts printed no 'expect' lines"]
    counts = collections.Counter(e.kind for events in trace.events.values() for e in events)
    for kind in ("MpiSend", "MpiRecv", "MpiIsend", "MpiIsendComplete", "MpiIrecvRequest",
                 "MpiIrecv", "MpiCollectiveBegin", "MpiCollectiveEnd",
                 "NonBlockingCollectiveRequest", "NonBlockingCollectiveComplete"):
        if counts[kind] != expected.get(kind, 0):
            f.append(f"{kind}: {counts[kind]} in the trace, the program did {expected.get(kind, 0)}")
    user_comms = [c for c in trace.comms if c.name not in ("MPI_COMM_WORLD", "MPI_COMM_SELF")]
    if len(user_comms) != expected.get("comms", -1):
        f.append(f"{len(user_comms)} user communicators defined "
                 f"({[c.name for c in user_comms]}), the program created {expected.get('comms')}")
    return f


def check_known_counts_pmpi_only(trace, run):
    """An MPI without Peruse: the same exact counts, no Peruse event, the user told once."""
    return known_counts_pmpi(trace, run) + check_pmpi_only(trace, run)[len(messages_match(trace)):]


def check_known_counts(trace, run):
    f = known_counts_pmpi(trace, run) + lifecycles(trace)
    expected = expected_values(run)
    tags = {e.attrs["tag"] for _, e in trace.of_kind("Peruse")}
    if not any(t < 0 for t in tags):
        f.append("no Peruse event with a negative tag: collectives' internal traffic is missing")
    comms_seen = {e.attrs["comm"].name for _, e in trace.of_kind("Peruse")}
    if len(comms_seen) < expected.get("peruse_comms", 0):
        f.append(f"Peruse events on {len(comms_seen)} communicators ({sorted(comms_seen)}), "
                 f"expected at least {expected['peruse_comms']}")
    return f


def check_fortran_counts(trace, run):
    """tests/apps/known_counts_fortran.F90 in any of its bindings: known_counts' exact counts,
    every call it counts one by one recorded once (its "expect_call NAME N" lines: a call that
    also went through the C wrapper would count twice), its communicator's blank-padded name
    without the blanks, and the paper's early receiver on rank 1 (tag 1, the sender late)."""
    f = check_known_counts(trace, run)
    enters = calls_by_function(e for events in trace.events.values() for e in events)
    wanted = re.findall(r"^expect_call (\w+) (\d+)$", run.stdout, re.M)
    if not wanted:
        f.append("the program printed no 'expect_call' lines")
    for name, n in wanted:
        if enters[name] != int(n):
            f.append(f"{name}: {enters[name]} calls in the trace, the program made {n}")
    # Its MPI_Iprobe calls in a row find nothing: folded into a few Enters (MPITRACE_FOLD_POLLS),
    # from the Fortran entry too.
    probes = sum(1 for events in trace.events.values() for e in events
                 if e.kind == "Enter" and e.name == "MPI_Iprobe")
    if enters["MPI_Iprobe"] and probes * 2 > enters["MPI_Iprobe"]:
        f.append(f"MPI_Iprobe: {probes} Enters for {enters['MPI_Iprobe']} calls: not folded")
    if not any(c.name == "fortran dup" for c in trace.comms):
        f.append(f"no communicator named 'fortran dup': {sorted(c.name for c in trace.comms)}")
    receiver = trace.peruse(1, tag=1, operation=1)
    missing = in_order([e.name for e in receiver], PAPER_EARLY_RECEIVER)
    if missing:
        f.append(f"rank 1 lacks {missing} in the paper's early-receiver sequence: "
                 f"{[e.name for e in receiver]}")
    return f + late_sender_in_trace(trace, delay_ms(run) * 1_000_000)


SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "wrappers",
                    "mpi.spec")


def spec_functions():
    """The MPI functions the wrappers know (lib/wrappers/mpi.spec)."""
    with open(SPEC) as f:
        return {line.split(" | ")[0] for line in f if line.startswith("MPI_")}


def check_fortran_counts_sampled(trace, run):
    """check_fortran_counts on a run sampled and reading Open MPI's MPI_T software counters at
    every call: the exact counts still hold, every rank has samples, and every counter Open MPI
    keeps of an MPI function's calls (runtime_spc_OMPI_SPC_ALLREDUCE: MPI_Allreduce) adds up
    over the rank's reads to the calls of that function in the trace: every call of the Fortran
    program recorded exactly once, as Open MPI itself counted them."""
    f = check_fortran_counts(trace, run)
    known = spec_functions()
    prefix = "MPI_T runtime_spc_OMPI_SPC_"
    compared = set()
    for rank in range(4):
        events = trace.rank_events(rank)
        if not any(e.kind == "CallingContextSample" for e in events):
            f.append(f"rank {rank}: no sample (MPITRACE_SAMPLING)")
        counted = collections.Counter()
        for e in events:
            if e.kind != "Metric":
                continue
            for member, value in zip(e.raw.metric.members, e.raw.values):
                if member.name.startswith(prefix):
                    spc = member.name[len(prefix):]
                    function = "MPI_" + spc[0] + spc[1:].lower()
                    if function in known:
                        counted[function] += value
        calls = calls_by_function(events)
        for function in sorted(set(counted) | {"MPI_Send"}):
            compared.add(function)
            if counted[function] != calls[function]:
                f.append(f"rank {rank}: Open MPI counted {counted[function]} {function} calls "
                         f"(MPI_T), the trace holds {calls[function]}")
    if len(compared) < 20:
        f.append(f"only {len(compared)} MPI functions have Open MPI counters to compare: "
                 f"{sorted(compared)}")
    return f


def check_mumps(trace, run):
    """Debian's MUMPS dsimpletest (Fortran, unmodified) on tests/apps/laplacian_input.py's
    system: the same output as untraced, its solution 1, 2, 3, ..., and its Fortran calls in the
    trace with every message matched. "The same" leaves out its timings and the count of memory
    compressions during factorization (INFOG(14)), which follows the order in which its ranks'
    contributions arrive and so any change in timing, traced or not; the solution must agree
    with the untraced one to 1e-12."""
    f = messages_match(trace)
    if run.baseline is None or run.baseline.returncode != 0:
        return f + ["no untraced run to compare with (run_traced.py --baseline)"]

    def steady(text):
        return [l for l in text.splitlines() if "time" not in l.lower() and
                "compress" not in l.lower() and "Solution is" not in l]

    def solution(text):
        m = re.search(r"Solution is(.*?)(?:\n\s*\n|Entering)", text, re.S)
        return [float(v.replace("D", "E")) for v in m.group(1).split()] if m else []
    traced, untraced = steady(run.stdout), steady(run.baseline.stdout)
    if traced != untraced:
        changed = [(a, b) for a, b in zip(untraced, traced) if a != b][:3]
        f.append(f"the traced output differs from the untraced one ({len(untraced)} and "
                 f"{len(traced)} lines; first changes {changed})")
    values, reference = solution(run.stdout), solution(run.baseline.stdout)
    if not values or any(abs(v - (i + 1)) > 1e-6 * (i + 1) for i, v in enumerate(values)):
        f.append(f"the solution is not 1, 2, 3, ...: {values[:5]} ({len(values)} values)")
    if len(values) != len(reference) or any(abs(a - b) > 1e-12 * abs(b)
                                            for a, b in zip(values, reference)):
        f.append("the traced solution differs from the untraced one")
    enters = collections.Counter(e.name for events in trace.events.values() for e in events
                                 if e.kind == "Enter")
    for name in ("MPI_Init", "MPI_Bcast", "MPI_Allreduce", "MPI_Iprobe", "MPI_Pack", "MPI_Send"):
        if not enters[name]:
            f.append(f"no {name} in the trace: the program's Fortran calls were not seen")
    return f


# --- checks on counts (trace_counts output), for traces too large to load in Python ----------

def expected_values(run):
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^expect (\w+) (\d+)$", run.stdout, re.M)}


def nothing_lost(counts):
    return [f"location {l['id']}: the definitions promise {l['defined']} events, "
            f"{l['read']} were read" for l in counts["locations"] if l["defined"] != l["read"]]


def check_threads(counts, run, baseline):
    f = nothing_lost(counts)
    want = expected_values(run)
    threads, messages = want.get("threads", 0), want.get("messages_per_thread", 0)
    for rank in (0, 1):
        locations = [l for l in counts["locations"] if l["rank"] == rank]
        if len(locations) != threads + 1:
            f.append(f"rank {rank}: {len(locations)} locations, expected {threads + 1} "
                     "(the main thread and one per thread)")
        workers = [l for l in locations if l["kinds"].get("MpiSend", 0)]
        if len(workers) != threads:
            f.append(f"rank {rank}: {len(workers)} locations send, expected {threads}")
        for l in workers:
            k = l["kinds"]
            if k.get("MpiSend") != messages // 2 or k.get("MpiRecv") != messages // 2:
                f.append(f"rank {rank} location {l['id']}: {k.get('MpiSend')} sends and "
                         f"{k.get('MpiRecv')} receives, expected {messages // 2} each")
        # A thread's requests are often progressed, and so reported, by another thread, and a
        # send that goes out inline has no request: count the receives' completions per rank.
        completes = sum(l["kinds"].get("PERUSE_COMM_REQ_COMPLETE", 0) for l in locations)
        if completes < threads * messages // 2:
            f.append(f"rank {rank}: {completes} REQ_COMPLETE for {threads * messages // 2} "
                     "receives")
    return f


def check_threads_sampled(counts, run, baseline):
    """check_threads, and the sampler reached every thread that sent: with a 100 us period
    (MPITRACE_SAMPLING), a thread sampled not at all was left out, and a sample that tore a
    record would have broken the exact message counts."""
    f = check_threads(counts, run, baseline)
    for l in counts["locations"]:
        if l["kinds"].get("MpiSend", 0) and not l["kinds"].get("CallingContextSample", 0):
            f.append(f"rank {l['rank']} location {l['id']}: sends but has no samples")
    return f


def check_memory(counts, run, baseline):
    """The tracer's peak memory stays within its buffers, however long the run."""
    f = nothing_lost(counts)
    total = sum(l["read"] for l in counts["locations"])
    if total < 10_000_000:
        f.append(f"the run wrote {total} events, the test needs at least 10^7")
    # 48-byte records in a 4 MiB buffer: a drain every 87 381 records, each one visible. A
    # record becomes at most 7 OTF2 events (a Peruse event's Enter and Leave, its metric, and two
    # events it carries), so fewer drains than that allows mean the buffer grew or was kept.
    most_events_per_drain = (4 << 20) // 48 * 7
    for l in counts["locations"]:
        if l["kinds"].get("flush", 0) < l["read"] // most_events_per_drain:
            f.append(f"location {l['id']}: {l['kinds'].get('flush', 0)} flush regions for "
                     f"{l['read']} events: the buffer was not drained while the program ran")
    peak = lambda out: {int(m.group(1)): int(m.group(2))
                        for m in re.finditer(r"^rank (\d+) peak_kib (\d+)$", out, re.M)}
    traced, untraced = peak(run.stdout), peak(baseline.stdout) if baseline else {}
    if not traced or not untraced:
        return f + ["no peak_kib lines from the traced and untraced runs"]
    # 4 MiB record buffer + 2 MiB OTF2 chunks per thread, plus a fixed allowance for the
    # tracer's tables and OTF2's own state.
    bound_kib = (4 + 2 + 16) * 1024
    for rank, kib in traced.items():
        extra = kib - untraced.get(rank, kib)
        print(f"rank {rank}: peak {kib} KiB traced, {untraced.get(rank)} KiB untraced, "
              f"+{extra} KiB for {total} events")
        if extra > bound_kib:
            f.append(f"rank {rank}: tracing added {extra} KiB, more than the {bound_kib} KiB "
                     "its buffers allow")
    return f


COUNT_CHECKS = {
    "threads": check_threads,
    "threads_sampled": check_threads_sampled,
    "memory": check_memory,
}


IO_KINDS = ("independent", "collective", "independent_nonblocking", "collective_nonblocking")
UNKNOWN_BYTES = 2**64 - 1  # OTF2's undefined size: a flush's, a size the MPI did not give
IO_COMMS = {"file_io.dat": "io", "file_io_meta.dat": "MPI_COMM_WORLD"}  # else MPI_COMM_SELF


def program_io(stdout):
    """tests/apps/file_io.c's tallies, {(rank, file): {key: value}}, from its lines
    'io RANK FILE KEY=VALUE ...'; sizes and resizes stay text ('0,1000', '-' for none)."""
    out = {}
    for m in re.finditer(r"^io (\d+) (\S+) (.*)$", stdout, re.M):
        fields = dict(item.split("=", 1) for item in m.group(3).split())
        out[(int(m.group(1)), m.group(2))] = {
            k: v if k in ("sizes", "resizes") else int(v) for k, v in fields.items()}
    return out


def attribute(event, name):
    return next((v for a, v in (event.attributes or {}).items() if a.name == name), None)


def archive_io(trace):
    """The same tallies from the archive's I/O events, and what does not hold on the way: every
    operation completes on its location with the bytes it asked for (a flush: OTF2's undefined
    size both ways), every seek reaches the offset it asked for."""
    tallies, failures = {}, []

    def tally(rank, name):
        return tallies.setdefault((rank, name), dict(
            {k: 0 for k in ("opens", "closes", "reads", "read_bytes", "writes", "write_bytes",
                            "flushes", "seeks", "deletes")},
            sizes=[], resizes=[], **{k: 0 for kind in IO_KINDS for k in (kind, kind + "_bytes")}))

    for (rank, thread), events in trace.events.items():
        begun = {}
        for e in events:
            r = e.raw
            if e.kind == "IoCreateHandle":
                t = tally(rank, r.handle.file.name)
                t["opens"] += 1
                t["sizes"].append(str(attribute(r, "io_size_at_open")))
                comm = IO_COMMS.get(r.handle.file.name, "MPI_COMM_SELF")
                if r.handle.comm is None or r.handle.comm.name != comm:
                    failures.append(f"rank {rank}: {r.handle.name} opened on "
                                    f"{r.handle.comm and r.handle.comm.name}, expected {comm}")
            elif e.kind == "IoDestroyHandle":
                tally(rank, r.handle.file.name)["closes"] += 1
            elif e.kind == "IoOperationBegin":
                begun[r.matching_id] = r
            elif e.kind == "IoOperationComplete":
                b = begun.pop(r.matching_id, None)
                if b is None or b.handle != r.handle:
                    failures.append(f"rank {rank}: IoOperationComplete {r.matching_id} without "
                                    "its begin on that handle")
                    continue
                t = tally(rank, r.handle.file.name)
                if b.mode == otf2.IoOperationMode.FLUSH:
                    t["flushes"] += 1
                    if (b.bytes_request, r.bytes_result) != (UNKNOWN_BYTES, UNKNOWN_BYTES):
                        failures.append(f"rank {rank}: a flush of {b.bytes_request} bytes, "
                                        f"{r.bytes_result} done, expected undefined both")
                    continue
                if r.bytes_result != b.bytes_request:
                    failures.append(f"rank {rank}: {b.bytes_request} bytes asked, "
                                    f"{r.bytes_result} done")
                op = "read" if b.mode == otf2.IoOperationMode.READ else "write"
                t[op + "s"] += 1
                t[op + "_bytes"] += r.bytes_result
                flags = int(b.operation_flags.value)  # NON_BLOCKING 1, COLLECTIVE 2
                kind = IO_KINDS[(1 if flags & 2 else 0) + (2 if flags & 1 else 0)]
                t[kind] += 1
                t[kind + "_bytes"] += r.bytes_result
            elif e.kind == "IoSeek":
                tally(rank, r.handle.file.name)["seeks"] += 1
                if r.whence != otf2.IoSeekOption.FROM_START or \
                        r.offset_result != r.offset_request:
                    failures.append(f"rank {rank}: a seek to {r.offset_request} ({r.whence}) "
                                    f"reached {r.offset_result}")
            elif e.kind == "Leave" and e.name in ("MPI_File_set_size", "MPI_File_preallocate"):
                handle = attribute(r, "io_handle")
                if handle is None:
                    failures.append(f"rank {rank}: {e.name}'s Leave names no handle")
                    continue
                tally(rank, handle.file.name)["resizes"].append(str(attribute(r, "io_size")))
            elif e.kind == "IoDeleteFile":
                tally(rank, r.file.name)["deletes"] += 1
        for matching in begun:
            failures.append(f"rank {rank} thread {thread}: operation {matching} never completed")
    for t in tallies.values():
        t["sizes"] = ",".join(t["sizes"]) or "-"
        t["resizes"] = ",".join(t["resizes"]) or "-"
    return tallies, failures


def io_files(trace):
    """The archive's I/O files: {name: initial size, or None without the property}."""
    out = {}
    for f in trace.io_files:
        try:
            out[f.name] = f["initial size"]
        except KeyError:
            out[f.name] = None
    return out


def check_file_io(trace, run):
    """tests/apps/file_io.c: what each rank did to each file, as its own tally says (opens and
    the sizes they saw, reads and writes of each kind with their bytes, flushes, seeks, sizes
    set, deletions), is what the archive holds, exactly; each file's initial size is the one its
    first opening saw; handles sit on the communicators the program opened them on."""
    program = program_io(run.stdout)
    if not program:
        return ["file_io printed no 'io RANK FILE ...' tallies"]
    ranks = {rank for rank, _ in trace.events}
    if {rank for rank, _ in program} != ranks:
        return [f"tallies of ranks {sorted({r for r, _ in program})}, trace of ranks "
                f"{sorted(ranks)}"]
    archive, f = archive_io(trace)
    for key in sorted(set(program) | set(archive)):
        want, got = program.get(key), archive.get(key)
        if want is None or got is None:
            f.append(f"rank {key[0]} {key[1]}: {'not in the program' if want is None else ''}"
                     f"{'not in the archive' if got is None else ''}")
            continue
        differ = {k: (want[k], got.get(k)) for k in want if want[k] != got.get(k)}
        if differ:
            f.append(f"rank {key[0]} {key[1]}: (program, archive) differ: {differ}")
    files = io_files(trace)
    for name in {n for _, n in program}:
        firsts = {t["sizes"].split(",")[0] for (r, n), t in program.items() if n == name}
        want = None if firsts == {"-"} else min(int(x) for x in firsts)
        if files.get(name, "absent") != want:
            f.append(f"file {name}: initial size {files.get(name, 'absent')}, expected {want}")
    print(f"{len(program)} (rank, file) tallies checked; files {files}")
    return f


def check_comm_names(trace, run):
    """tests/apps/comm_names.c: each communicator is defined once under the name the program
    gave it (rank 0's of the communicator where ranks disagree, else the lowest naming rank's,
    the latest name of a rank), MPI_COMM_WORLD and MPI_COMM_SELF renamed too, the one left
    unnamed under its made-up name; and each rank's ring message is on each of them."""
    want = sorted(re.findall(r"^expect_name (\S+)$", run.stdout, re.M))
    unnamed = expected_values(run).get("unnamed")
    if not want or unnamed is None:
        return ["comm_names printed no 'expect_name NAME' or 'expect unnamed N' lines"]
    f = messages_match(trace)
    names = [c.name for c in trace.comms]
    made_up = [n for n in names if re.fullmatch(r"comm \d+ \(MPI_Comm_dup\)", n)]
    given = sorted(n for n in names if n not in made_up)
    if given != want or len(made_up) != unnamed:
        f.append(f"communicators {sorted(names)}, expected {want} and {unnamed} made-up name")
    ringed = set(want) - {n for n in want if n.startswith("me-")} | set(made_up)
    ranks = {rank for rank, _ in trace.events}
    sends = collections.Counter((rank, e.raw.communicator.name)
                                for (rank, _), events in trace.events.items()
                                for e in events if e.kind == "MpiSend")
    expected = collections.Counter({(r, n): 1 for r in ranks for n in ringed})
    if sends != expected:
        f.append(f"sends per (rank, communicator) {dict(sends)}, expected one on each of "
                 f"{sorted(ringed)} per rank")
    return f


def check_comm_threads(trace, run):
    """tests/apps/comm_threads.c: THREADS threads per rank, each with its own duplicate of
    MPI_COMM_WORLD (its base) that in each of CYCLES cycles it duplicates and splits, sending
    MESSAGES messages on each child (rank 0 -> 1 blocking on the dup, 1 -> 0 nonblocking on the
    split, tag thread * 1000 + cycle). The ground truth follows from those three numbers: exact
    message counts per thread, one definition per communicator created, every message on the
    same communicator at both ends (one unified with another thread's would break that), and
    Peruse's view of every receive."""
    want = expected_values(run)
    threads, cycles, messages = (want.get(k, 0) for k in ("threads", "cycles", "messages"))
    if not threads or not cycles or not messages:
        return ["comm_threads printed no 'expect threads/cycles/messages' lines"]
    f = messages_match(trace) + lifecycles(trace, per_rank=True) + peruse_fields(trace)
    per_thread = cycles * messages
    # Per thread: the PMPI records of a call are the calling thread's. Rank 0 sends and
    # receives blocking; rank 1 posts, then completes, each of its receives and sends.
    own = {0: {"MpiSend": per_thread, "MpiRecv": per_thread},
           1: {"MpiIrecvRequest": per_thread, "MpiIrecv": per_thread, "MpiIsend": per_thread}}
    message_kinds = ("MpiSend", "MpiRecv", "MpiIsend", "MpiIrecvRequest", "MpiIrecv")
    for rank in (0, 1):
        locations = {t: collections.Counter(e.kind for e in events)
                     for (r, t), events in trace.events.items() if r == rank}
        if len(locations) != threads + 1:
            f.append(f"rank {rank}: {len(locations)} locations, expected the main thread and "
                     f"{threads} more")
        workers = [k for k in locations.values() if any(k[m] for m in message_kinds)]
        if len(workers) != threads:
            f.append(f"rank {rank}: {len(workers)} locations record messages, expected {threads}")
        for k in workers:
            got = {m: k[m] for m in message_kinds if k[m]}
            if got != own[rank]:
                f.append(f"rank {rank}: a thread recorded {got}, expected {own[rank]}")
        # Open MPI hands every send that leaves at once the same request (ompi_request_empty),
        # so whichever thread waits on it may record a completion: count those per rank.
        completions = sum(k["MpiIsendComplete"] for k in locations.values())
        if completions != (threads * per_thread if rank == 1 else 0):
            f.append(f"rank {rank}: {completions} MpiIsendComplete, expected "
                     f"{threads * per_thread if rank == 1 else 0}")
    f += request_ids_pair_up(trace)
    for rank in (0, 1):
        f += event_times(trace, rank, [AFTER_THE_LOCK, ("REQ_REMOVE_FROM_POSTED_Q",
                                                       "MSG_MATCH_POSTED_REQ")],
                         thread_multiple=True)
    f += comm_threads_comms(trace, threads, cycles, messages)
    f += comm_threads_peruse(trace, threads * per_thread)
    return f


def request_ids_pair_up(trace):
    """Each posted receive completes once, on its own thread; each send request once, on its
    rank. A request id shared by two requests, or a completion lost, shows here."""
    f = []
    for rank in (0, 1):
        events = [(t, e) for (r, t), es in trace.events.items() if r == rank for e in es]
        posted = collections.Counter((t, e.raw.request_id) for t, e in events
                                     if e.kind == "MpiIrecvRequest")
        done = collections.Counter((t, e.raw.request_id) for t, e in events if e.kind == "MpiIrecv")
        if posted != done or any(n != 1 for n in posted.values()):
            f.append(f"rank {rank}: {len(posted)} receive requests posted and {len(done)} "
                     f"completed do not pair up one to one: "
                     f"{list((posted - done).items())[:3]} {list((done - posted).items())[:3]}")
        sent = collections.Counter(e.raw.request_id for _, e in events if e.kind == "MpiIsend")
        sent_done = collections.Counter(e.raw.request_id for _, e in events
                                        if e.kind == "MpiIsendComplete")
        if sent != sent_done or any(n != 1 for n in sent.values()):
            f.append(f"rank {rank}: {sum(sent.values())} MpiIsend and {sum(sent_done.values())} "
                     f"MpiIsendComplete do not pair up one to one by request id: "
                     f"{list((sent - sent_done).items())[:3]} "
                     f"{list((sent_done - sent).items())[:3]}")
    return f


def comm_threads_comms(trace, threads, cycles, messages):
    """One definition per communicator the program created, each a child of the base of the
    thread that created it, and every message of a (thread, cycle) tag on that thread's two
    children of that cycle: rank 0 -> 1 on one, 1 -> 0 on the other, the same at both ends."""
    f = []
    ref = lambda comm: comm._ref
    comms = {c._ref: c for c in trace.comms}
    world = [c for c in trace.comms if c.name == "MPI_COMM_WORLD"]
    user = [c for c in trace.comms if c.name not in ("MPI_COMM_WORLD", "MPI_COMM_SELF")]
    if len(user) != threads + 2 * threads * cycles:
        f.append(f"{len(user)} user communicators defined, the program created "
                 f"{threads + 2 * threads * cycles}")
    for c in user:
        members = sorted(rank_of(l) for l in c.group.members)
        if members != [0, 1]:
            f.append(f"communicator '{c.name}' has members {members}, expected ranks 0 and 1")
    bases = [c for c in user if world and c.parent is not None and c.parent._ref == world[0]._ref]
    if len(bases) != threads:
        f.append(f"{len(bases)} communicators made from MPI_COMM_WORLD, expected {threads}")
    base_refs = {b._ref for b in bases}
    children = collections.Counter(c.parent._ref for c in user if c.parent is not None
                                   and c._ref not in base_refs)
    if set(children) != base_refs or \
            any(n != 2 * cycles for n in children.values()):
        f.append(f"children per base communicator {dict(children)}, expected {2 * cycles} of "
                 f"each of the {threads} bases")
    # (tag, direction) -> {comm ref: messages} for every send and every receive.
    sends, recvs = collections.defaultdict(collections.Counter), \
        collections.defaultdict(collections.Counter)
    undefined = 0
    for (rank, _), events in trace.events.items():
        for e in events:
            kind = e.kind
            if kind not in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
                continue
            comm = e.raw.communicator
            if comm is None or ref(comm) not in comms:
                undefined += 1
                continue
            send = kind in ("MpiSend", "MpiIsend")
            direction = (rank, 1 - rank) if send else (1 - rank, rank)
            (sends if send else recvs)[(e.raw.msg_tag, direction)][ref(comm)] += 1
    if undefined:
        f.append(f"{undefined} messages on a communicator the definitions do not hold")
    expected_tags = {t * 1000 + c for t in range(threads) for c in range(cycles)}
    for side, table in (("sent", sends), ("received", recvs)):
        tags = {tag for tag, _ in table}
        if tags != expected_tags:
            f.append(f"tags {side}: {len(tags)}, expected {len(expected_tags)} "
                     f"(extra {sorted(tags - expected_tags)[:5]}, "
                     f"missing {sorted(expected_tags - tags)[:5]})")
    used = collections.Counter()
    for tag in expected_tags:
        thread = tag // 1000
        pair = []
        for direction in ((0, 1), (1, 0)):
            s, r = sends.get((tag, direction), {}), recvs.get((tag, direction), {})
            if len(s) != 1 or s != r or sum(s.values()) != messages:
                f.append(f"tag {tag} {direction[0]}->{direction[1]}: sent on "
                         f"{ {comms[c].name: n for c, n in s.items()} }, received on "
                         f"{ {comms[c].name: n for c, n in r.items()} }, expected all {messages} "
                         "on one communicator at both ends")
                continue
            comm = comms[next(iter(s))]
            pair.append(comm._ref)
            used[comm._ref] += 1
            if comm.parent is None or bases[thread:thread + 1] and \
                    comm.parent._ref != bases[thread]._ref:
                f.append(f"tag {tag}: on '{comm.name}', not a child of thread {thread}'s base "
                         "communicator")
        if len(pair) == 2 and pair[0] == pair[1]:
            f.append(f"tag {tag}: both directions on one communicator, expected the dup and the "
                     "split")
    reused = [comms[c].name for c, n in used.items() if n != 1]
    if reused:
        f.append(f"communicators carrying more than one (tag, direction): {reused[:5]}")
    return f


def comm_threads_peruse(trace, receives_per_rank):
    """Peruse sees each program message arrive once and each receive request run its course,
    on the communicator the PMPI records name. The program sends on its own communicators
    only: what else shows is the MPI's and the tracer's own traffic (collectives' negative
    tags, the clock pings in MPI_Finalize on MPI_COMM_WORLD)."""
    f = []
    predefined = {c._ref for c in trace.comms if c.name in ("MPI_COMM_WORLD", "MPI_COMM_SELF")}
    for rank in (0, 1):
        peruse = [e for (r, _), es in trace.events.items() if r == rank for e in es
                  if e.kind == "Peruse" and e.attrs["tag"] >= 0
                  and e.attrs["comm"]._ref not in predefined]
        counts = collections.Counter((e.name, e.attrs["operation"]) for e in peruse)
        for name, operation in (("MSG_ARRIVED", 1), ("REQ_ACTIVATE", 1), ("REQ_COMPLETE", 1)):
            if counts[(name, operation)] != receives_per_rank:
                f.append(f"rank {rank}: {counts[(name, operation)]} Peruse {name} of program "
                         f"messages, expected {receives_per_rank}")
        pmpi = {(e.raw.msg_tag, e.raw.communicator._ref)
                for (r, _), es in trace.events.items() if r == rank for e in es
                if e.kind in ("MpiRecv", "MpiIrecv") and e.raw.communicator is not None}
        seen = {(e.attrs["tag"], e.attrs["comm"]._ref) for e in peruse
                if e.name == "REQ_COMPLETE" and e.attrs["operation"] == 1}
        if seen != pmpi:
            f.append(f"rank {rank}: Peruse completes receives on {len(seen)} (tag, communicator) "
                     f"pairs, the PMPI records on {len(pmpi)}; differing: "
                     f"{sorted(seen ^ pmpi)[:5]}")
    return f


def check_ring(trace, run):
    """tests/apps/ring.c on any number of ranks: every message matched, none backwards in time."""
    f = messages_match(trace)
    m = re.search(r"^expect messages (\d+)$", run.stdout, re.M)
    sends = len([1 for _, e in trace.of_kind("MpiSend")] + [1 for _, e in trace.of_kind("MpiIsend")])
    if not m or sends != int(m.group(1)):
        f.append(f"{sends} sends in the trace, the program made {m and m.group(1)}")
    return f


def check_nbc(trace, run):
    """tests/apps/nbc.c: on every rank, four nonblocking collectives as OTF2's request (in the
    starting call) and complete (in the MPI_Waitall or MPI_Test that completed it) with the same
    request ids, operation, root and bytes; none as a collective inside its starting call."""
    f = []
    ranks = sorted({rank for rank, _ in trace.events})
    for rank in ranks:
        requests, completes = {}, []
        for e, region in in_regions(trace.rank_events(rank)):
            if e.kind == "NonBlockingCollectiveRequest":
                requests[e.raw.request_id] = region
            elif e.kind == "NonBlockingCollectiveComplete":
                completes.append((region, e.raw))
            elif e.kind in ("MpiCollectiveBegin", "MpiCollectiveEnd") and region and \
                    region.startswith("MPI_I"):
                f.append(f"rank {rank}: a collective inside {region}")
        starts = sorted(requests.values())
        if starts != ["MPI_Iallreduce", "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ibcast"]:
            f.append(f"rank {rank}: requests started in {starts}")
        where = sorted(w for w, _ in completes)
        if where != ["MPI_Test", "MPI_Waitall", "MPI_Waitall", "MPI_Waitall"]:
            f.append(f"rank {rank}: completed in {where}")
        for _, c in completes:
            if c.request_id not in requests:
                f.append(f"rank {rank}: complete of request {c.request_id} never started")
        ops = {str(c.collective_op).split(".")[-1]: c for _, c in completes}
        bcast = [c for _, c in completes if str(c.collective_op).endswith("BCAST")]
        big = [c for c in bcast if c.root == 1]
        if len(bcast) != 2 or len(big) != 1:
            f.append(f"rank {rank}: broadcasts {[(c.root, c.size_sent, c.size_received) for c in bcast]}")
        elif rank == 1 and big[0].size_sent != 4000 * (len(ranks) - 1):
            f.append(f"rank 1 (root) sent {big[0].size_sent} bytes, expected {4000 * (len(ranks) - 1)}")
        elif rank != 1 and big[0].size_received != 4000:
            f.append(f"rank {rank} received {big[0].size_received} bytes, expected 4000")
        if "ALLREDUCE" not in " ".join(ops) or "BARRIER" not in " ".join(ops):
            f.append(f"rank {rank}: operations {sorted(ops)}")
    return f


def check_coll_bytes(trace, run):
    """tests/apps/coll_bytes.c: each MpiCollectiveEnd carries the bytes the program says its
    call sent and received, in call order per rank."""
    f = []
    want = collections.defaultdict(list)
    for m in re.finditer(r"^expect coll (\d+) (\w+) (\d+) (\d+)$", run.stdout, re.M):
        want[int(m.group(1))].append((m.group(2), int(m.group(3)), int(m.group(4))))
    if sorted(want) != [0, 1, 2, 3]:
        return [f"the program printed expectations for ranks {sorted(want)}"]
    for rank, expected in want.items():
        called = {name for name, _, _ in expected}
        got = [(region, e.raw.size_sent, e.raw.size_received)
               for e, region in in_regions(trace.rank_events(rank))
               if e.kind == "MpiCollectiveEnd" and region in called]
        if got != expected:
            f.append(f"rank {rank}: (function, sent, received) {got}, expected {expected}")
    return f


def check_comm_churn(trace, run):
    """bench/finalize_cost.c -c N: N/2 duplicates of MPI_COMM_WORLD, each one communicator for
    all ranks, and N/2 splits into pairs (ranks 2k, 2k+1; a last odd rank alone): the
    unification up a tree of ranks must define each exactly once, with its members."""
    args = list(run.args)
    n = int(args[args.index("-c") + 1])
    ranks = len({r for r, _ in trace.events})
    groups = (ranks + 1) // 2
    f = messages_match(trace)
    comms = [c for c in trace.comms if c.name not in ("MPI_COMM_WORLD", "MPI_COMM_SELF")]
    members = collections.Counter(tuple(rank_of(m) for m in c.group.members) for c in comms)
    want = collections.Counter({tuple(range(ranks)): (n + 1) // 2})
    for g in range(groups):
        want[tuple(range(2 * g, min(2 * g + 2, ranks)))] += n // 2
    if members != want:
        f.append(f"{len(comms)} communicators defined, expected {sum(want.values())}: "
                 f"differing member lists {dict((members - want) + (want - members))}")
    return f


CHECKS = {
    "ring": check_ring,
    "comm_churn": check_comm_churn,
    "ring": check_ring,
    "comm_threads": check_comm_threads,
    "late_sender": check_late_sender,
    "late_receiver": check_late_receiver,
    "nbc": check_nbc,
    "coll_bytes": check_coll_bytes,
    "late_wait": check_late_wait,
    "messages": check_messages,
    "pmpi_only": check_pmpi_only,
    "known_counts": check_known_counts,
    "fortran_counts": check_fortran_counts,
    "fortran_counts_sampled": check_fortran_counts_sampled,
    "mumps": check_mumps,
    "known_counts_pmpi_only": check_known_counts_pmpi_only,
    "file_io": check_file_io,
    "comm_names": check_comm_names,
}

# tests/apps/rma.c: its steps are listed in rma_checks.py, which the report test reads too.
from rma_checks import check_rma  # noqa: E402

CHECKS["rma"] = check_rma
