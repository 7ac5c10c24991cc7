#!/usr/bin/python3
"""Trace a program, convert the trace with `perusetrace prv`, check the Paraver files.

    prv_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE CASE [-- PROGRAM ARGS...]

CASE:
  late_sender  scenarios late-sender -d MS: the receiver (task 2) is in "Waiting a message"
               exactly as long as rank 1 is in MPI_Recv in the archive, which is the sender's
               delay or more (trace_checks.waited_as_injected); its message's physical receive
               (Peruse XFER_END) lies inside that MPI_Recv state and after the physical send; the
               strict parser (prv_check.py) also rejects corrupted copies of the files.
  messages     scenarios all: every message found its partner, every file passes the parser;
               every Peruse event has as many events of its type as the archive; every MPI
               call with an Extrae value is an event of Extrae's type (50000001-50000005) with
               the value the .pcf names by the function, ended by a 0 of that type, as many per
               task as the archive's calls.
  bad_input    a missing path, a non-OTF2 file, a directory without an archive, an OTF2
               archive another tool wrote and a bad --sort-memory each give a clear error,
               never a crash.
  scaling      PROGRAM ROUNDS (tests/apps/many_events) traced with 4 MiB buffers at ROUNDS
               (>= 10^7 events): the converter's peak RSS stays under 64 MiB. Traced again at
               ROUNDS/40 and ROUNDS/10 and converted under callgrind: the instructions per
               event of the 4x larger trace are at most 1.25x those of the smaller one, so
               the conversion is linear up to the merge's log factor. Instructions, not
               seconds: a wall-time ratio on a shared 2-core machine swung past any bound
               that still told linear from quadratic. The smaller trace converted with
               --sort-memory 64K (hundreds of buffers streamed out as they settle) gives the
               same records. (Sorted runs and their merge in groups: tests/unit/prv_writer_test.)
  rma          tests/apps/rma on 4 ranks: each RMA operation an event record (types
               64000300-64000303) on its task with the program's kind, window, target and bytes.
  mpit         tests/apps/mpit_counts SENDS FLOOD with Open MPI's software counters and
               MPITRACE_PVARS=runtime_spc_*,pml_ob1_*: the .pcf names one type per MPI_T value of
               the archive (64100000 and up), each labelled with its name; the .prv has exactly
               as many events of each type per task as the archive has values of that member,
               with the archive's values (negative ones as 0), so task 1's OMPI_SPC_SEND events
               add up to SENDS+FLOOD+1 and task 2's OMPI_SPC_RECV too.
Every file the test produces must pass prv_check.py. Exits non-zero, saying why, on failure.
"""
import argparse
import collections
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import prv_check  # noqa: E402
import trace_checks  # noqa: E402

STATE_WAIT_MESSAGE = 3
PERUSE_EACH_FIRST = 64000200  # tools/prv/prv_codes.hpp: a type per Peruse event
EXTRAE_MPI_FIRST, EXTRAE_MPI_LAST = 50000001, 50000005  # tools/prv/extrae_mpi.hpp
RSS_BOUND_KIB = 64 * 1024
# n log n from 2.6e5 to 1.04e6 events would be ~1.11x per event, n^2 about 4x.
PER_EVENT_GROWTH_BOUND = 1.25
# A run still going after this is a hang: its stacks are printed before meson's 180 s are up
# (600 s for case scaling, whose runs of 10^7 events have a timeout of their own).
RUN_TIMEOUT, SCALING_RUN_TIMEOUT = 90, 240


class Run:
    def __init__(self, opts, work):
        self.opts = opts
        self.work = work

    def trace(self, name, command, env=(), ranks=2, timeout=RUN_TIMEOUT):
        """Runs COMMAND on `ranks` ranks under the tracer; returns the trace directory."""
        trace_dir = os.path.join(self.work, name)
        mpi_launch.must_trace(self.opts.mpirun, ranks, command, trace_dir, self.opts.preload,
                              dict(env), timeout, self.work)
        return trace_dir

    def prv(self, archive, prefix, options=()):
        return [self.opts.perusetrace, "prv", archive, "-o", prefix, *options]

    def convert(self, archive, prefix, options=()):
        """perusetrace prv ARCHIVE -o PREFIX; returns (returncode, stderr, seconds, peak KiB)."""
        start = time.monotonic()
        with tempfile.TemporaryFile() as err:
            child = subprocess.Popen(self.prv(archive, prefix, options),
                                     stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            seconds = time.monotonic() - start
            err.seek(0)
            stderr = err.read().decode(errors="replace")
        return child.returncode, stderr, seconds, usage.ru_maxrss

    def converted_counting(self, archive, prefix):
        """Converts under callgrind; returns (converter stderr, instructions executed)."""
        out = os.path.join(self.work, "callgrind.out")
        child = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                *self.prv(archive, prefix)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        refs = re.search(r"I\s+refs:\s+([\d,]+)", child.stderr)
        if child.returncode != 0 or refs is None:
            raise SystemExit(f"perusetrace prv {archive} under callgrind failed "
                             f"({child.returncode}): {child.stderr}")
        os.remove(out)
        return child.stderr, int(refs.group(1).replace(",", ""))

    def converted(self, archive, prefix, options=()):
        rc, stderr, seconds, rss = self.convert(archive, prefix, options)
        if rc != 0:
            raise SystemExit(f"perusetrace prv {archive} failed ({rc}): {stderr}")
        return stderr, seconds, rss


def strict(prefix, on_record=None):
    failures, summary = prv_check.check(prefix, on_record)
    print(f"{os.path.basename(prefix)}: {summary}")
    return [f"{os.path.basename(prefix)}: {x}" for x in failures], summary


def delay_ms(command):
    return int(command[command.index("-d") + 1]) if "-d" in command else 1000


def corrupted_copies(prefix, work):
    """The parser must reject a trace with unsorted records, a short END, or an unknown type."""
    f = []
    with open(prefix + ".prv") as src:
        lines = src.readlines()
    body = [i for i, l in enumerate(lines) if l[:2] in ("1:", "2:", "3:")]
    header = lines[0]
    end = int(re.search(r"\):(\d+)_ns:", header).group(1))
    a, b = body[len(body) // 3], body[2 * len(body) // 3]
    unsorted = list(lines)
    unsorted[a], unsorted[b] = unsorted[b], unsorted[a]
    short_end = [header.replace(f"):{end}_ns:", f"):{end // 2}_ns:", 1)] + lines[1:]
    unknown_type = lines + [f"2:1:1:1:1:{end}:99999999:1\n"]
    for name, content, expect in (("unsorted", unsorted, "not sorted"),
                                  ("short_end", short_end, "after the header's END"),
                                  ("unknown_type", unknown_type, "not described")):
        bad = os.path.join(work, "corrupt_" + name)
        with open(bad + ".prv", "w") as out:
            out.writelines(content)
        shutil.copy(prefix + ".pcf", bad + ".pcf")
        shutil.copy(prefix + ".row", bad + ".row")
        failures, _ = prv_check.check(bad)
        if not any(expect in x for x in failures):
            f.append(f"prv_check.py accepted a corrupted copy ({name}): {failures}")
    return f


def case_late_sender(run, command):
    archive = run.trace("late_sender", command, [("MPITRACE_PERUSE_EVENTS", "all")])
    prefix = os.path.join(run.work, "late_sender")
    stderr, _, _ = run.converted(archive, prefix)
    waits, comms = [], []

    def collect(v):
        if v[0] == 1 and v[3] == 2 and v[7] == STATE_WAIT_MESSAGE:
            waits.append((v[5], v[6]))
        elif v[0] == 3 and v[3] == 1 and v[9] == 2 and v[14] == 1:
            comms.append(v)

    f, _ = strict(prefix, collect)
    delay = delay_ms(command) * 1_000_000
    waited = sum(e - b for b, e in waits)
    print(f"task 2 waited {waited / 1e6:.1f} ms in 'Waiting a message' for a {delay / 1e6:.0f} "
          f"ms delay")
    # The converter's state against the archive it read: the same nanoseconds. Against the
    # injected delay only loosely: two busy ranks sharing a core on a loaded machine made one
    # MPI_Send take 30 ms and the receive 331 ms for a 300 ms delay, a true measurement.
    trace = trace_checks.load(os.path.join(archive, "traces.otf2"))
    receives = trace.regions(1, "MPI_Recv")
    in_recv = sum(trace.ns(e - b) for b, e in receives)
    if abs(waited - in_recv) > 2 * len(receives):  # a rounding per end, with a coarser clock
        f.append(f"task 2 is {waited} ns in 'Waiting a message', but rank 1 is {in_recv} ns in "
                 f"MPI_Recv in the archive ({len(receives)} calls)")
    f += trace_checks.waited_as_injected("task 2's time in 'Waiting a message'", waited, delay,
                                         at_least=False)
    f += trace_checks.late_sender_in_trace(trace, delay)
    if len(comms) != 1:
        return f + [f"expected one communication record 1 -> 2 with tag 1, got {comms}"]
    c = comms[0]
    lsend, psend, lrecv, precv = c[5], c[6], c[11], c[12]
    print(f"message: logical send {lsend}, physical send {psend}, physical receive {precv}, "
          f"logical receive {lrecv}")
    # ob1 reports the eager send's XFER_BEGIN when the send completes; a sender descheduled
    # before that reports it after the receive, and the converter says it fell back to the
    # logical send (the receive's XFER_END still counts).
    late_send = "reported REQ_XFER_BEGIN after their message was received" in stderr
    if late_send:
        print("the sender's XFER_BEGIN came after the receive: physical send = logical send")
    if (psend == lsend and not late_send) or precv == lrecv:
        f.append("the physical times equal the logical ones: Peruse's XFER_BEGIN/XFER_END "
                 "were not used")
    if late_send and psend != lsend:
        f.append(f"the converter says it fell back to the logical send {lsend}, yet wrote "
                 f"{psend}")
    if not any(b <= precv <= e for b, e in waits):
        f.append(f"the physical receive {precv} is not inside task 2's MPI_Recv state {waits}")
    if not precv > psend:
        f.append(f"the physical receive {precv} is not after the physical send {psend}")
    return f + corrupted_copies(prefix, run.work)


def case_messages(run, command):
    archive = run.trace("messages", command, [("MPITRACE_PERUSE_EVENTS", "all")])
    prefix = os.path.join(run.work, "messages")
    stderr, _, _ = run.converted(archive, prefix)
    each = {}  # Peruse event type -> records
    extrae = collections.Counter()  # (task, Extrae type, value) -> events; 0 counted as "end"

    def on_record(v):
        if v[0] == 2:
            for k in range(6, len(v), 2):
                if PERUSE_EACH_FIRST <= v[k] < PERUSE_EACH_FIRST + 17:
                    each[v[k]] = each.get(v[k], 0) + 1
                elif EXTRAE_MPI_FIRST <= v[k] <= EXTRAE_MPI_LAST:
                    extrae[(v[3], v[k], v[k + 1])] += 1

    f, summary = strict(prefix, on_record)
    if "found no partner" in stderr:
        f.append(f"unmatched messages: {stderr.strip()}")
    # Every Peruse event is countable in Paraver: its own type, as many as the archive holds.
    names = {label[len("Peruse "):]: t
             for t, label in prv_check.pcf_types(prefix + ".pcf").items()
             if PERUSE_EACH_FIRST <= t < PERUSE_EACH_FIRST + 17}
    trace = trace_checks.load(os.path.join(archive, "traces.otf2"))
    in_archive = {}
    for _, e in trace.of_kind("Peruse"):
        in_archive[e.name] = in_archive.get(e.name, 0) + 1
    for name, count in sorted(in_archive.items()):
        got = each.get(names.get(name), 0)
        if got != count:
            f.append(f"Peruse {name}: {got} Paraver events of its type, the archive has {count}")
    print("Peruse events per type, archive = Paraver: " +
          ", ".join(f"{n} {c}" for n, c in sorted(in_archive.items())))
    if summary["comms"] == 0:
        f.append("no communication record")
    return f + extrae_calls(prefix, trace, extrae)


def extrae_calls(prefix, trace, extrae):
    """Every MPI call Extrae has a value for is an event of Extrae's type with that value (named
    in the .pcf by the function's name), ended by a 0 of the same type: as many per task as the
    archive has calls of that function on the rank."""
    f = []
    value_of = {}  # function -> (type, value), from the .pcf
    with open(prefix + ".pcf") as pcf:
        lines = pcf.read().splitlines()
    current = None
    for i, line in enumerate(lines):
        words = line.split(None, 1)
        if line == "EVENT_TYPE":
            current = int(lines[i + 1].split()[1])
        elif (current and EXTRAE_MPI_FIRST <= current <= EXTRAE_MPI_LAST and len(words) == 2
              and words[0].isdigit() and int(words[0]) != 0 and lines[i - 1] != "EVENT_TYPE"):
            value_of[words[1].strip()] = (current, int(words[0]))
    calls, ends = collections.Counter(), collections.Counter()
    for (rank, _), events in trace.events.items():
        for e in events:
            if e.kind == "Enter" and e.name in value_of:
                calls[(rank + 1,) + value_of[e.name]] += 1
                ends[(rank + 1, value_of[e.name][0])] += 1
    got = {k: n for k, n in extrae.items() if k[2] != 0}
    got_ends = collections.Counter()
    for (task, t, value), n in extrae.items():
        if value == 0:
            got_ends[(task, t)] += n
    if got != dict(calls):
        differ = sorted(k for k in set(got) | set(calls) if got.get(k) != calls.get(k))
        f.append(f"Extrae-typed MPI call events (task, type, value) differ from the archive's "
                 f"calls: {[(k, got.get(k), calls.get(k)) for k in differ[:5]]}")
    if got_ends != ends:
        f.append(f"Extrae-typed MPI calls not each ended by a 0 of their type: {dict(got_ends)} "
                 f"vs {dict(ends)}")
    print(f"MPI calls in Extrae's types: {sum(calls.values())} in the archive, "
          f"{sum(got.values())} in the .prv, {sum(got_ends.values())} ends")
    if not calls:
        f.append("no MPI call of the archive has an Extrae value in the .pcf")
    return f


def case_bad_input(run, _command):
    f = []
    work = run.work
    garbage = os.path.join(work, "garbage.otf2")
    with open(garbage, "w") as out:
        out.write("this is not an OTF2 anchor file\n")
    empty_dir = os.path.join(work, "empty")
    os.mkdir(empty_dir)
    foreign = os.path.join(work, "foreign")
    writer = subprocess.run([sys.executable, "-c", f"""
import otf2
with otf2.writer.open({foreign!r}, timer_resolution=1000000000) as trace:
    node = trace.definitions.system_tree_node("node")
    group = trace.definitions.location_group("Process", system_tree_parent=node)
    location = trace.definitions.location("Main", group=group)
    region = trace.definitions.region("main")
    events = trace.event_writer_from_location(location)
    events.enter(1000, region)
    events.leave(2000, region)
"""], capture_output=True, text=True)
    cases = [(os.path.join(work, "no-such-trace"), "does not exist"),
             (garbage, "not a readable OTF2 archive"),
             (empty_dir, "without traces.otf2")]
    if writer.returncode == 0:
        cases.append((os.path.join(foreign, "traces.otf2"), "not one perusetrace wrote"))
    else:
        f.append(f"python3-otf2 could not write a foreign archive: {writer.stderr[-300:]}")
    for path, expect in cases:
        rc, stderr, _, _ = run.convert(path, os.path.join(work, "out"))
        print(f"{os.path.basename(path)}: exit {rc}: {stderr.strip()}")
        if rc != 1 or expect not in stderr or not stderr.startswith("perusetrace prv: "):
            f.append(f"{path}: exit {rc} with {stderr.strip()!r}; expected exit 1 and an error "
                     f"saying '{expect}'")
    usage = subprocess.run([run.opts.perusetrace, "prv"], capture_output=True, text=True)
    if usage.returncode != 2 or "usage: perusetrace prv" not in usage.stderr:
        f.append(f"'perusetrace prv' without an archive: exit {usage.returncode}, "
                 f"{usage.stderr!r}")
    for size in ("12K", "lots", "16Q"):
        rc, stderr, _, _ = run.convert(empty_dir, os.path.join(work, "out"),
                                       ["--sort-memory", size])
        if rc != 2 or f"--sort-memory '{size}' is not a size of at least 64K" not in stderr:
            f.append(f"--sort-memory {size}: exit {rc} with {stderr.strip()!r}; expected exit "
                     f"2 naming the option and the smallest size")
    if any(os.path.exists(os.path.join(work, "out" + ext)) for ext in (".prv", ".pcf", ".row")):
        f.append("a failed conversion left output files behind")
    return f


def shorten_trace_length(defs_path):
    """Halves the trace length in the ClockProperties of an OTF2 3.0 global definitions file,
    in place: as an archive damaged there says its events end before they do. OTF2 writes the
    record as type 5, its length, then compressed integers (a byte count, then as many bytes,
    little-endian): timer resolution (10^9 here), global offset, trace length."""
    with open(defs_path, "r+b") as f:
        data = bytearray(f.read())
        at = data.find(bytes([4, 0x00, 0xca, 0x9a, 0x3b]))  # 10^9 in 4 bytes
        if at < 2 or data[at - 2] != 5:
            return None
        at += 5
        at += 1 + data[at]  # the global offset
        n = data[at]
        length = int.from_bytes(data[at + 1:at + 1 + n], "little")
        data[at + 1:at + 1 + n] = (length // 2).to_bytes(n, "little")
        f.seek(0)
        f.write(data)
    return length


def case_damaged_end(run, _command):
    """An archive whose clock properties end at half its events (tests/data/polls, damaged in a
    copy): converted all the same, its header's end after every record, the records those of
    the intact archive but the threads' last states, which run to the trace's (damaged) end."""
    f = []
    work = run.work
    intact = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "polls")
    damaged = os.path.join(work, "damaged")
    shutil.copytree(intact, damaged)
    length = shorten_trace_length(os.path.join(damaged, "traces.def"))
    if length is None:
        return ["could not find the clock properties in tests/data/polls/traces.def"]
    run.converted(os.path.join(intact, "traces.otf2"), os.path.join(work, "intact"))
    rc, stderr, _, _ = run.convert(os.path.join(damaged, "traces.otf2"),
                                   os.path.join(work, "damaged"))
    print(f"trace length {length} ns halved: exit {rc} {stderr.strip()[-300:]}")
    if rc != 0:
        return [f"the archive whose clock properties end early was not converted: exit {rc}, "
                f"{stderr.strip()[-500:]}"]
    f += strict(os.path.join(work, "damaged"))[0]
    with open(os.path.join(work, "intact.prv")) as a, open(os.path.join(work, "damaged.prv")) as b:
        intact_lines = collections.Counter(a.read().splitlines()[1:])
        damaged_lines = collections.Counter(b.read().splitlines()[1:])
    extra = damaged_lines - intact_lines
    missing = intact_lines - damaged_lines
    if extra or sum(missing.values()) > 4 or any(not m.startswith("1:") for m in missing):
        f.append(f"the damaged archive's records are not the intact one's: {sum(extra.values())} "
                 f"more ({list(extra)[:3]}), {sum(missing.values())} fewer ({list(missing)[:5]})")
    return f


def events_of(stderr):
    return int(re.search(r"from (\d+) events", stderr).group(1))


def merged_in_groups(run, archive, prefix):
    """The archive converted with --sort-memory 64K: hundreds of full buffers, each streamed out
    up to where the records still to come may sort. Every record must come out where the
    default conversion (PREFIX.prv, made just before) put it."""
    single, grouped = prefix + ".prv", prefix + "-64k.prv"
    run.converted(archive, prefix + "-64k", ["--sort-memory", "64K"])
    body = os.path.getsize(single) - len(first_line(single))
    if body < 66 * 64 * 1024:
        return [f"{single} has {body} bytes of records, too few for more than 64 buffers of 64K"]
    with open(single, "rb") as a, open(grouped, "rb") as b:
        a.readline(), b.readline()  # the headers hold the minute of the conversion
        for number, (x, y) in enumerate(itertools.zip_longest(a, b), start=2):
            if x != y:
                return [f"line {number} of the .prv differs when sorted in 64K buffers: "
                        f"{y!r} instead of {x!r}"]
    print(f"--sort-memory 64K: the same {body} bytes of records as with the default")
    return []


def first_line(path):
    with open(path, "rb") as f:
        return f.readline()


def case_scaling(run, command):
    rounds = int(command[-1])
    f = []
    env = [("MPITRACE_BUFFER_SIZE", "4M")]
    archive = run.trace("scaling_large", command[:-1] + [str(rounds)], env,
                        timeout=SCALING_RUN_TIMEOUT)
    prefix = os.path.join(run.work, "scaling_large")
    stderr, seconds, rss = run.converted(archive, prefix)
    events = events_of(stderr)
    print(f"large: {events} events converted in {seconds:.2f} s, peak RSS {rss} KiB")
    if events < 10_000_000:
        f.append(f"the large trace has {events} events, the test needs at least 10^7")
    if rss > RSS_BOUND_KIB:
        f.append(f"converting {events} events took {rss} KiB, over the {RSS_BOUND_KIB} KiB "
                 f"bound: the converter's memory grows with the trace")
    f += strict(prefix)[0]
    shutil.rmtree(archive, ignore_errors=True)
    for ext in (".prv", ".pcf", ".row"):
        os.remove(prefix + ext)

    if not shutil.which("valgrind"):
        return f + ["valgrind is not installed (scripts/setup installs it; or apt-get install "
                    "valgrind): the growth check counts instructions with callgrind"]
    per_event = {}
    for label, n in (("small", rounds // 40), ("medium", rounds // 10)):
        archive = run.trace(f"scaling_{label}", command[:-1] + [str(n)], env,
                            timeout=SCALING_RUN_TIMEOUT)
        prefix = os.path.join(run.work, f"scaling_{label}")
        stderr, instructions = run.converted_counting(archive, prefix)
        events = events_of(stderr)
        per_event[label] = (events, instructions / events)
        print(f"{label}: {events} events, {instructions} instructions, "
              f"{instructions / events:.1f} per event")
        f += strict(prefix)[0]
        if label == "small":
            f += merged_in_groups(run, archive, prefix)
    (small_events, small), (medium_events, medium) = per_event["small"], per_event["medium"]
    growth = medium / small
    print(f"instructions per event grew {growth:.3f}x for "
          f"{medium_events / small_events:.2f}x the events")
    if growth > PER_EVENT_GROWTH_BOUND:
        f.append(f"instructions per event grew {growth:.2f}x ({small:.0f} -> {medium:.0f}) "
                 f"from {small_events} to {medium_events} events, over "
                 f"{PER_EVENT_GROWTH_BOUND}x: the conversion is not linear")
    return f


MPIT_FIRST, MPIT_LAST = 64100000, 64199999  # tools/prv/prv_codes.hpp


def case_mpit(run, command):
    sends, flood = int(command[1]), int(command[2])
    archive = run.trace("mpit", command, [("OMPI_MCA_mpi_spc_attach", "all"),
                                          ("MPITRACE_PVARS", "runtime_spc_*,pml_ob1_*")])
    prefix = os.path.join(run.work, "mpit")
    run.converted(archive, prefix)
    events = {}  # (task, type) -> values

    def on_record(v):
        if v[0] == 2:
            for k in range(6, len(v), 2):
                if MPIT_FIRST <= v[k] <= MPIT_LAST:
                    events.setdefault((v[3], v[k]), []).append(v[k + 1])

    f, _ = strict(prefix, on_record)
    types = {label.rsplit(" (", 1)[0][len("MPI_T "):]: t for t, label in
             prv_check.pcf_types(prefix + ".pcf").items() if MPIT_FIRST <= t <= MPIT_LAST}
    trace = trace_checks.load(os.path.join(archive, "traces.otf2"))
    want = {}  # (task, type) -> values in the archive
    for rank in range(2):
        for e in trace.rank_events(rank):
            name = e.raw.metric.members[0].name if e.kind == "Metric" else ""
            if not name.startswith("MPI_T "):
                continue
            if name[len("MPI_T "):] not in types:
                f.append(f"the .pcf has no type for the archive's metric {name!r}")
                return f
            want.setdefault((rank + 1, types[name[len("MPI_T "):]]), []).append(
                max(0, round(e.raw.values[0])))
    print(f"{len(types)} MPI_T types in the .pcf, {sum(map(len, events.values()))} of their "
          f"events in the .prv, {sum(map(len, want.values()))} values in the archive")
    if events != want:
        differ = sorted(k for k in set(events) | set(want) if events.get(k) != want.get(k))
        f.append(f"{len(differ)} (task, type) pairs whose .prv events are not the archive's "
                 f"values, e.g. {differ[:3]}")
    expected = sends + flood + 1
    for task, counter in ((1, "runtime_spc_OMPI_SPC_SEND"), (2, "runtime_spc_OMPI_SPC_RECV")):
        total = sum(events.get((task, types.get(counter, 0)), []))
        if total != expected:
            f.append(f"task {task}: the {counter} events add up to {total}, expected {expected}")
        label = prv_check.pcf_types(prefix + ".pcf").get(types.get(counter, 0), "")
        if "change since the previous read" not in label:
            f.append(f"the .pcf label of {counter} does not say it holds changes: {label!r}")
    return f


def case_rma(run, command):
    """tests/apps/rma on 4 ranks: one event record per RMA operation the program made
    (tests/common/rma_checks.py), on its task, with its kind, window, target (world rank + 1) and
    bytes; the .pcf names the windows."""
    import rma_checks
    archive = run.trace("rma", command, ranks=rma_checks.RANKS)
    prefix = os.path.join(run.work, "rma")
    run.converted(archive, prefix)
    got = {}  # task -> [(operation, window, target, bytes)]

    def on_record(v):
        if v[0] == 2:
            fields = dict(zip(v[6::2], v[7::2]))
            if 64000300 in fields:
                got.setdefault(v[3], []).append(tuple(fields.get(t) for t in range(64000300,
                                                                                    64000304)))

    f, _ = strict(prefix, on_record)
    names = [name for name, _ in rma_checks.WINDOWS]
    kinds = {"RmaPut": 1, "RmaGet": 2, "RmaAtomic": 3}
    for rank in range(rma_checks.RANKS):
        want = [(kinds[op.kind], names.index(op.win) + 1, op.target + 1, op.sent + op.received)
                for op in rma_checks.expected_operations(rank)]
        if got.get(rank + 1) != want:
            f.append(f"task {rank + 1}: RMA events {got.get(rank + 1)}, expected {want}")
    types = prv_check.pcf_types(prefix + ".pcf")
    if types.get(64000301) != "RMA window":
        f.append(f"the .pcf has no RMA window type: {types.get(64000301)!r}")
    with open(prefix + ".pcf") as pcf:
        if "halo window" not in pcf.read():
            f.append("the .pcf does not name the window set with MPI_Win_set_name")
    return f


CASES = {"damaged_end": case_damaged_end, "mpit": case_mpit, "rma": case_rma, "late_sender": case_late_sender, "messages": case_messages,
         "bad_input": case_bad_input, "scaling": case_scaling}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--perusetrace", required=True)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    command = opts.command[1:] if opts.command[:1] == ["--"] else opts.command
    work = tempfile.mkdtemp(prefix="perusetrace-prv-")
    case_result.finish(f"prv case '{opts.case}'", CASES[opts.case](Run(opts, work), command), work,
                       keep=opts.keep)


if __name__ == "__main__":
    main()
