#!/usr/bin/python3
"""Trace real runs, export them with `perusetrace export --perfetto`, check the JSON against the
archive read back with python3-otf2.

    export_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --scenarios EXE
                   --mpit-counts EXE --schema docs/export-perfetto.schema.json CASE

CASE:
  scenarios  scenarios all -d 50 on 4 ranks with every Peruse event. The output is one JSON
             document (Python's json) valid against the schema of the subset we write; per
             thread track every B has its E, in order, and times never go back; every flow id
             has exactly one start and one finish, the start inside an MPI call of the sender
             and the finish inside one of the receiver, not before the start. Exactly as many
             MPI calls (B of category mpi), Peruse events of each kind, messages (flows) and
             counter values as the archive has Enters of MPI functions, Peruse events,
             MpiSend/MpiIsend records and steps of its counters (counter_changes); each rank's
             Peruse events in the archive's order with the archive's fields and nanoseconds;
             each rank is a process named with its host, each thread a named thread. Written
             to standard output too (-o -): the same bytes.
  mpit       tests/apps/mpit_counts 100 20 on 4 ranks with Open MPI's software counters and
             MPITRACE_PVARS: the counter track of OMPI_SPC_SEND (written as changes) ends at the
             running total 100+20+1 = 121 on each sender, OMPI_SPC_RECV likewise on each
             receiver, and each counter has as many values as it has steps in the archive.
  threads    tests/apps/threads 4 400 on 2 ranks (MPI_THREAD_MULTIPLE; thread t of rank 0 and
             thread t of rank 1 ping-pong on tag t): one thread track per archive location, each
             its own tid and named, the structure above on every track, and every message's
             arrow between the one pair of threads of its tag.
  rma_io     tests/apps/rma and tests/apps/file_io on 4 ranks, sampled every 200 us: one async
             slice (b/e, category rma or io) per RmaPut/RmaGet/RmaAtomic and per
             IoOperationBegin of the archive, each ended once, not before it began, by its
             local completion (IoOperationComplete with its bytes); the slices' bytes sum to
             the archive's per kind; per thread, the "MPI state" counter steps through the
             archive's sampled states exactly (a step where the state changes).
  bad_input  a missing archive, no format, an unknown option and an output that cannot be
             written: one clear message and exit code 1 or 2, no output file left behind.

The Perfetto UI's own importer (the `perfetto` Python package's trace_processor) is not used:
the package registry it comes from is out of reach here, and its trace_processor downloads a
binary when it starts. Nor is chrome://tracing (it loads files only through its UI).
"""
import collections
import json
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import otf2  # noqa: E402  (Debian's python3-otf2)
import report_test  # noqa: E402  (its JSON Schema validator)
import trace_checks  # noqa: E402

RANKS = 4
UNKNOWN_SIZE = 2**64 - 1  # OTF2_UNDEFINED_UINT64
SENDS, FLOOD = 100, 20  # tests/apps/mpit_counts' arguments
THREADS, THREAD_MESSAGES = 4, 400  # tests/apps/threads' arguments
MPIT_ENV = {"OMPI_MCA_mpi_spc_attach": "all", "MPITRACE_PVARS": "runtime_spc_*,pml_ob1_*"}
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120


def trace(opts, work, name, program, env=None, ranks=RANKS):
    out = os.path.join(work, name)
    mpi_launch.must_trace(opts.mpirun, ranks, program, out, opts.preload,
                          dict(env or {}, MPITRACE_PERUSE_EVENTS="all"), RUN_TIMEOUT, work)
    return out


def export(opts, trace_dir):
    """Runs the export to its default output; returns (the parsed JSON, its path, failures)."""
    run = subprocess.run([opts.perusetrace, "export", "--perfetto", trace_dir],
                         capture_output=True, text=True)
    print(run.stderr.strip())
    path = trace_dir + ".perfetto.json"
    if run.returncode != 0 or not os.path.exists(path):
        raise SystemExit(f"export failed ({run.returncode}): {run.stderr}")
    with open(path) as f:
        data = json.load(f)
    with open(opts.schema) as f:
        schema = json.load(f)
    failures = [f"schema: {e}" for e in report_test.validate(data, schema, schema)[:10]]
    for e in data["traceEvents"]:
        part = {"i": "peruse_args", "s": "flow_args", "f": "flow_args"}.get(e["ph"])
        if e["ph"] == "b":
            part = {"io": "io_args", "rma": "rma_args"}.get(e.get("cat"))
        if part:
            failures += [f"schema ({e['ph']} args): {x}" for x in report_test.validate(
                e.get("args"), schema["$defs"][part], schema)[:3]]
    return data, path, failures[:20]


def structure(events, flow_slack_us=0.0):
    """The per-track checks a viewer relies on; returns (failures, flows by id). A flow may end
    up to `flow_slack_us` before it starts (hosts' clocks, repaired to within a call)."""
    f = []
    stacks = collections.defaultdict(list)  # (pid, tid) -> open B events
    last = {}
    flows = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "M":
            continue
        track = (e["pid"], e["tid"])
        if e["ts"] < last.get(track, 0):
            f.append(f"time goes back on track {track}: {e}")
        last[track] = e["ts"]
        if e["ph"] == "B":
            stacks[track].append(e)
        elif e["ph"] == "E":
            if not stacks[track]:
                f.append(f"an E without its B on track {track} at {e['ts']}")
            else:
                stacks[track].pop()
        elif e["ph"] in "sf":
            top = stacks[track][-1] if stacks[track] else None
            flows[e["id"]].append((e, top))
    for track, open_slices in stacks.items():
        if open_slices:
            f.append(f"track {track}: {len(open_slices)} slices never end, first "
                     f"{open_slices[0]['name']}")
    for fid, ends in flows.items():
        phases = sorted(e["ph"] for e, _ in ends)
        if phases != ["f", "s"]:
            f.append(f"flow {fid} has {phases}, expected one s and one f")
            continue
        (start, in_send), = [x for x in ends if x[0]["ph"] == "s"]
        (finish, in_recv), = [x for x in ends if x[0]["ph"] == "f"]
        if finish["ts"] < start["ts"] - flow_slack_us:
            f.append(f"flow {fid} ends before it starts: {start} {finish}")
        for end, call, who in ((start, in_send, "sender"), (finish, in_recv, "receiver")):
            if call is None or call.get("cat") != "mpi":
                f.append(f"flow {fid}: its {who} end at {end['ts']} lies in {call}, not in an "
                         "MPI call")
    return f, flows


def counter_changes(tr):
    """Per metric member, the values a counter track steps to: a Metric record gives one value
    per member of its class (the Peruse counters are one class, written together whenever one
    changes), a member holding changes is shown as its running total, and a value equal to the
    previous one of that member on that thread is no step."""
    changes = collections.Counter()
    for loc, events in tr.events.items():
        shown, totals = {}, collections.Counter()
        for e in events:
            if e.kind != "Metric":
                continue
            for member, value in zip(e.raw.metric.members, e.raw.values):
                if member.metric_mode == otf2.MetricMode.RELATIVE_LAST:
                    totals[member.name] += value
                    value = totals[member.name]
                if shown.get(member.name) != value:
                    shown[member.name] = value
                    changes[member.name] += 1
    return changes


def case_scenarios(opts, work):
    trace_dir = trace(opts, work, "all", [opts.scenarios, "all", "-d", "50"])
    data, path, f = export(opts, trace_dir)
    events = data["traceEvents"]
    more, flows = structure(events)
    f += more
    tr = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    by_phase = collections.Counter(e["ph"] for e in events)
    print(f"exported: {dict(by_phase)}")

    # Counts against the archive's.
    mpi_calls = sum(1 for _, e in tr.of_kind("Enter") if e.name.startswith("MPI_"))
    exported_calls = sum(1 for e in events if e["ph"] == "B" and e["cat"] == "mpi")
    peruse = collections.Counter(e.name for _, e in tr.of_kind("Peruse"))
    exported_peruse = collections.Counter(e["name"] for e in events if e["ph"] == "i")
    sends = len(tr.of_kind("MpiSend")) + len(tr.of_kind("MpiIsend"))
    receives = len(tr.of_kind("MpiRecv")) + len(tr.of_kind("MpiIrecv"))
    metrics = sum(counter_changes(tr).values())
    print(f"archive: {mpi_calls} MPI calls, {sum(peruse.values())} Peruse events, {sends} sends, "
          f"{receives} receives, {metrics} metric records")
    if exported_calls != mpi_calls or by_phase["E"] != by_phase["B"]:
        f.append(f"{exported_calls} MPI calls exported ({by_phase['B']} B, {by_phase['E']} E), "
                 f"the archive has {mpi_calls}")
    if exported_peruse != peruse:
        f.append(f"Peruse events per kind: exported {dict(exported_peruse)}, archive "
                 f"{dict(peruse)}")
    if len(peruse) < 13:
        f.append(f"only {len(peruse)} kinds of Peruse event in the archive: {sorted(peruse)}")
    if not len(flows) == sends == receives or sends < 71:
        f.append(f"{len(flows)} messages exported, the archive has {sends} sends and {receives} "
                 "receives (scenarios all sends 71)")
    if by_phase["C"] != metrics or metrics == 0:
        f.append(f"{by_phase['C']} counter values exported, the archive has {metrics}")

    # Every rank's Peruse events, in order, with the archive's fields and times.
    res = tr.clock_resolution
    for rank in range(RANKS):
        pid = rank + 1
        mine = [e for e in events if e["ph"] == "i" and e["pid"] == pid]
        theirs = tr.peruse(rank)
        if len(mine) != len(theirs):
            f.append(f"rank {rank}: {len(mine)} Peruse events exported, {len(theirs)} archived")
            continue
        for got, want in zip(mine, theirs):
            ns = round((want.time - tr.global_offset) * 1e9 / res)
            fields = {k: want.attrs[k] for k in ("request", "peer", "tag", "bytes")}
            fields["operation"] = "receive" if want.attrs["operation"] else "send"
            shown = {k: got["args"][k] for k in fields}
            if got["name"] != want.name or shown != fields or round(got["ts"] * 1000) != ns or \
                    got["args"].get("comm") != want.attrs["comm"].name:
                f.append(f"rank {rank}: exported {got}, archived {want.name} {want.attrs} at "
                         f"{ns} ns")
                break

    # Ranks as processes named with their host, threads as named threads.
    names = {(e["pid"], e["name"]): e["args"] for e in events if e["ph"] == "M"}
    for rank in range(RANKS):
        want = f"rank {rank} ({tr.hosts[rank]})"
        got = names.get((rank + 1, "process_name"), {}).get("name")
        if got != want:
            f.append(f"rank {rank}'s process is named {got!r}, expected {want!r}")
        if names.get((rank + 1, "thread_name"), {}).get("name") != f"rank {rank} thread 0":
            f.append(f"rank {rank}'s thread is not named")

    # The same document on standard output.
    piped = subprocess.run([opts.perusetrace, "export", "--perfetto", trace_dir, "-o", "-", "-q"],
                           capture_output=True)
    with open(path, "rb") as fh:
        if piped.returncode != 0 or piped.stdout != fh.read() or piped.stderr:
            f.append(f"-o - wrote other bytes than the file (exit {piped.returncode}, stderr "
                     f"{piped.stderr[:200]!r})")
    return f


def case_mpit(opts, work):
    trace_dir = trace(opts, work, "mpit", [opts.mpit_counts, str(SENDS), str(FLOOD)],
                      env=MPIT_ENV)
    data, _, f = export(opts, trace_dir)
    f += structure(data["traceEvents"])[0]
    last, values = {}, collections.Counter()
    for e in data["traceEvents"]:
        if e["ph"] == "C":
            (value,) = e["args"].values()
            last[(e["pid"], e["name"])] = value
            values[e["name"]] += 1
    expected = SENDS + FLOOD + 1
    for name, ranks in (("MPI_T runtime_spc_OMPI_SPC_SEND", (0, 2)),
                        ("MPI_T runtime_spc_OMPI_SPC_RECV", (1, 3))):
        got = {r: last.get((r + 1, name)) for r in ranks}
        print(f"{name}: last values {got}")
        if got != {r: expected for r in ranks}:
            f.append(f"{name}: the counter ends at {got}, expected the running total "
                     f"{expected} on ranks {ranks}")
    tr = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    archived = counter_changes(tr)
    if values != archived:
        diff = {k: (values[k], archived[k]) for k in set(values) | set(archived)
                if values[k] != archived[k]}
        f.append(f"counter values (exported, archived) differ: {dict(list(diff.items())[:5])}")
    return f


def case_threads(opts, work):
    trace_dir = trace(opts, work, "threads", [opts.threads, str(THREADS), str(THREAD_MESSAGES)],
                      ranks=2)
    data, _, f = export(opts, trace_dir)
    events = data["traceEvents"]
    more, flows = structure(events)
    f += more
    tr = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    want = {f"rank {rank} thread {thread}" for rank, thread in tr.events}
    print(f"{len(names)} threads exported for {len(tr.events)} archive locations")
    if sorted(names.values()) != sorted(want) or len(set(tid for _, tid in names)) != len(names):
        f.append(f"threads {sorted(names.items())}: expected one distinct tid per location, "
                 f"named {sorted(want)}")
    # Thread t of rank 0 talks only to thread t of rank 1, on tag t: one pair of tracks per tag.
    pairs = collections.defaultdict(set)
    for ends in flows.values():
        start = next(e for e, _ in ends if e["ph"] == "s")
        finish = next(e for e, _ in ends if e["ph"] == "f")
        if start["args"]["tag"] >= 0:
            pairs[start["args"]["tag"]].add(frozenset({(start["pid"], start["tid"]),
                                                       (finish["pid"], finish["tid"])}))
    if sorted(pairs) != list(range(THREADS)) or any(len(p) != 1 for p in pairs.values()) or \
            len({t for p in pairs.values() for pair in p for t in pair}) != 2 * THREADS:
        f.append(f"messages by tag between tracks: {dict(pairs)}, expected one pair of "
                 f"threads per tag, {2 * THREADS} threads in all")
    sends = len(tr.of_kind("MpiSend"))
    if len(flows) != sends or sends < THREADS * THREAD_MESSAGES:
        f.append(f"{len(flows)} messages exported, the archive has {sends} sends")
    return f


def operation_slices(events, cat):
    """(failures, [(b, e)]) for the async slices of category `cat`: each id one b, then one e."""
    f, by_id = [], collections.defaultdict(list)
    for e in events:
        if e["ph"] in "be" and e.get("cat") == cat:
            by_id[(e["pid"], e["id"])].append(e)
    pairs = []
    for key, ends in by_id.items():
        if [e["ph"] for e in ends] != ["b", "e"] or ends[1]["ts"] < ends[0]["ts"]:
            f.append(f"{cat} slice {key}: {ends}, expected a b and a later e")
        else:
            pairs.append(tuple(ends))
    return f, pairs


def sampled_states(tr):
    """Per (rank, thread): the sampled MPI states, one entry per change."""
    states = {}
    for loc, events in tr.events.items():
        seq = []
        for e in events:
            if e.kind == "CallingContextSample":
                attrs = {a.name: v for a, v in (e.raw.attributes or {}).items()}
                if not seq or seq[-1] != attrs["mpi_state"]:
                    seq.append(attrs["mpi_state"])
        states[loc] = seq
    return states


def case_rma_io(opts, work):
    f = []
    env = {"MPITRACE_SAMPLING": "200us"}
    for name, program in (("rma", [opts.rma]), ("io", [opts.file_io])):
        trace_dir = trace(opts, work, name, program, env=env)
        data, _, more = export(opts, trace_dir)
        f += more
        events = data["traceEvents"]
        f += structure(events)[0]
        tr = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
        if name == "rma":
            more, pairs = operation_slices(events, "rma")
            f += more
            ops = [e for kind in ("RmaPut", "RmaGet", "RmaAtomic") for _, e in tr.of_kind(kind)]
            sent = sum(e.raw.bytes for e in ops if e.kind == "RmaPut") + \
                sum(e.raw.bytes_sent for e in ops if e.kind == "RmaAtomic")
            received = sum(e.raw.bytes for e in ops if e.kind == "RmaGet") + \
                sum(e.raw.bytes_received for e in ops if e.kind == "RmaAtomic")
            got = (len(pairs), sum(b["args"]["sent"] for b, _ in pairs),
                   sum(b["args"]["received"] for b, _ in pairs))
            print(f"rma: {got[0]} operation slices, {got[1]} B sent, {got[2]} B received; "
                  f"archive {len(ops)}, {sent}, {received}")
            if got != (len(ops), sent, received) or len(ops) < 71:
                f.append(f"RMA slices (count, sent, received) {got}, archive "
                         f"{(len(ops), sent, received)}")
            if any(not b["args"]["window"] or b["args"]["target"] not in range(RANKS)
                   for b, _ in pairs):
                f.append("an RMA slice without its window's name or a world rank as target")
        else:
            more, pairs = operation_slices(events, "io")
            f += more
            begins = tr.of_kind("IoOperationBegin")
            done = sum(e.raw.bytes_result for _, e in tr.of_kind("IoOperationComplete")
                       if e.raw.bytes_result != UNKNOWN_SIZE)  # a sync moves no bytes
            got = (len(pairs), sum(e.get("args", {}).get("bytes", 0) for _, e in pairs))
            print(f"io: {got[0]} operation slices, {got[1]} B; archive {len(begins)}, {done}")
            if got != (len(begins), done) or not begins:
                f.append(f"I/O slices (count, bytes) {got}, archive {(len(begins), done)}")
            if any(not b["args"]["file"] for b, _ in pairs):
                f.append("an I/O slice without its file's name")
        # The sampled MPI state, per thread track, as the archive's samples change it.
        tids = {}
        for e in events:
            if e["ph"] == "M" and e["name"] == "thread_name":
                rank, thread = (int(x) for x in e["args"]["name"].split()[1::2])
                tids[(e["pid"], e["tid"])] = (rank, thread)
        shown = collections.defaultdict(list)
        for e in events:
            if e["ph"] == "C" and e["name"].startswith("MPI state (sampled"):
                (value,) = e["args"].values()
                shown[tids[(e["pid"], e["tid"])]].append(value)
        want = {loc: seq for loc, seq in sampled_states(tr).items() if seq}
        print(f"{name}: MPI state changes per thread {dict((k, len(v)) for k, v in shown.items())}")
        if dict(shown) != want or not want:
            f.append(f"{name}: sampled MPI states exported {dict(shown)}, archive {want}")
    return f


def case_bad_input(opts, work):
    f = []
    exe = opts.perusetrace
    trace_dir = trace(opts, work, "small", [opts.scenarios, "late-sender", "-d", "10"])

    def expect(args, code, words):
        run = subprocess.run([exe, "export"] + args, capture_output=True, text=True)
        print(f"export {' '.join(args)}: exit {run.returncode}: {run.stderr.strip()[:160]}")
        if run.returncode != code or words not in run.stderr or \
                not run.stderr.startswith("perusetrace export: "):
            f.append(f"export {args}: exit {run.returncode}, {run.stderr.strip()!r}; expected "
                     f"exit {code} and '{words}'")

    expect(["--perfetto", os.path.join(work, "no-such-trace")], 1, "does not exist")
    expect([trace_dir], 2, "no format given")
    expect(["--perfetto", trace_dir, "--bogus"], 2, "unknown option '--bogus'")
    out = os.path.join(work, "missing-dir", "x.json")
    expect(["--perfetto", trace_dir, "-o", out], 1, "cannot write")
    if os.path.exists(out):
        f.append(f"{out} was left behind")
    return f


CASES = case_result.cases_of(globals())


def main():
    case_result.run_listing_case(
        CASES, "export", ["mpirun", "preload", "perusetrace", "scenarios", "mpit-counts",
                          "threads", "rma", "file-io", "schema"])


if __name__ == "__main__":
    main()
