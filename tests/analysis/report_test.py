#!/usr/bin/python3
"""Trace the bundled example, run `perusetrace report` on the trace, check what it reports.

    report_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --scenarios EXE
                   --schema docs/report.schema.json CASE

CASE:
  late_sender   scenarios late-sender -d 300: a late sender 0 -> 1 exactly as long as the receive
                sat in rank 1's posted queue in the archive, and about the 300 ms injected;
                both ranks on one host, so all traffic and late-sender time are intra-host
  late_wait     scenarios late-wait -d 300: a late wait on rank 1 exactly from the receive's
                completion to MPI_Wait's start in the archive, and about the 300 ms injected
  flood         scenarios flood -r 64 -d 100: rank 1's unexpected queue 64 deep (+-2)
  long_message  scenarios long-message -r 4: rendezvous messages (eager ones have no XFER_CONTINUE),
                bandwidth 100 MB/s..100 GB/s
  no_events     MPITRACE_PERUSE_EVENTS=none: every Peruse analysis names the setting instead
  bad_input     a missing path and a file that is not OTF2: a clear error, exit 1
  rma           tests/apps/rma on 4 ranks: the RMA section's operations and bytes per window and
                per origin/target pair are the program's (tests/common/rma_checks.py), its calls and time
                per kind of synchronisation the archive's regions summed
  io            tests/apps/file_io on 4 ranks: per file and rank the MPI-IO section's operations
                and bytes read and written, by kind (independent, collective, and their
                nonblocking ones), syncs, seeks, size changes, deletions and openings are the
                program's own tally, each file's initial size the one its first opening saw;
                operation, sync and call times are the archive's, summed
  mpit          tests/apps/mpit_counts 100 20 on 4 ranks with Open MPI's software counters and
                MPITRACE_PVARS=runtime_spc_*,pml_ob1_*: each sender's OMPI_SPC_SEND changed by
                exactly 100+20+1 = 121, 100% of it in MPI_Send, each receiver's OMPI_SPC_RECV
                likewise in MPI_Recv; every counter's total per rank and per MPI function equals
                the sums read from the archive, every value's range and every watermark's
                highest value and rises too; the text says so, the HTML plots the counters.
                Traced again with MPITRACE_CVARS: the report names the setting. The other cases'
                reports have no MPI_T section.
  timeline      scenarios all on 4 ranks, its HTML page in headless Chromium (through the
                DevTools protocol, tests/common/chromium_page.py): no JavaScript error; one row per
                location; in the whole trace's view one message line per message (71) and, per
                Peruse event kind, as many markers as the archive holds; the late-sender
                table's first row is the report's worst case, 0 -> 1 on rank 1
  timeline_jump scenarios late-sender -d 300 on 4 ranks: clicking the late-sender row shows that
                wait (its whole time, at most 1.4 times as long plus 2 us) with rank 1
                marked; sorting; the wheel, drag-to-zoom, Shift+drag and Home move the view
                as they should
Every traced case also writes --json (validated against the schema, by the small validator
below: Python's standard library only) and --html (self-contained, with its four plots and
the placement table).
"""
import collections
import json
import os
import re
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import otf2  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402
import wait_checks  # noqa: E402

PLOTS = ("plot-bandwidth", "plot-fragment-intervals", "plot-queue-depth", "plot-matrix")
SENDS, FLOOD, MPIT_RANKS = 100, 20, 4  # tests/apps/mpit_counts' arguments, and its ranks
IO_RANKS = 4  # tests/apps/file_io's
# A run still going after this is a hang: its stacks are printed before meson's 180 s are up.
RUN_TIMEOUT = 90
MPIT_ENV = {"OMPI_MCA_mpi_spc_attach": "all", "MPITRACE_PVARS": "runtime_spc_*,pml_ob1_*"}


def schema_checked_report(perusetrace, trace, json_path, schema_path, args=(), timeout=120):
    """`perusetrace report TRACE [ARGS...] --json JSON_PATH`: its data, validated against the
    schema at SCHEMA_PATH, and its text; AssertionError when the report fails or breaks the
    schema."""
    rep = subprocess.run([perusetrace, "report", trace, *args, "--json", json_path],
                         capture_output=True, text=True, timeout=timeout)
    if rep.returncode != 0:
        raise AssertionError(f"perusetrace report {' '.join(args)} failed: {rep.stderr[-1500:]}")
    with open(json_path) as f:
        data = json.load(f)
    with open(schema_path) as f:
        schema = json.load(f)
    problems = validate(data, schema, schema)
    if problems:
        raise AssertionError(f"the JSON breaks docs/report.schema.json: {problems[:5]}")
    return data, rep.stdout


def validate(value, schema, root, path="$"):
    """The JSON Schema keywords docs/report.schema.json uses; returns a list of problems."""
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return validate(value, target, root, path)
    errors = []
    kind = schema.get("type")
    checks = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)}
    if kind and not checks[kind](value):
        return [f"{path}: {type(value).__name__} where the schema wants {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} is below {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: lacks '{key}'")
        props = schema.get("properties", {})
        for key, v in value.items():
            if key in props:
                errors += validate(v, props[key], root, f"{path}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += validate(v, schema["additionalProperties"], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected '{key}'")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        for i, item in enumerate(value):
            if "items" in schema:
                errors += validate(item, schema["items"], root, f"{path}[{i}]")
    return errors


class Case:
    def __init__(self, opts, work):
        self.opts, self.work = opts, work

    def trace(self, name, args, events="all", env=None, preload=None):
        trace_dir = os.path.join(self.work, name)
        env = dict(env or {}, MPITRACE_OUTPUT=trace_dir, MPITRACE_PERUSE_EVENTS=events)
        return self.traced(trace_dir, 2, env, preload or self.opts.preload,
                           [self.opts.scenarios] + args)

    def traced(self, trace_dir, ranks, env, preload, program):
        """Runs `program` on `ranks` ranks under the tracer; the trace directory, or the run's
        failure as the test's."""
        mpi_launch.must_trace(self.opts.mpirun, ranks, program, trace_dir, preload, env,
                              RUN_TIMEOUT, self.work)
        return trace_dir

    def trace_mpit(self, name, env):
        """tests/apps/mpit_counts SENDS FLOOD on MPIT_RANKS ranks; returns the trace directory."""
        trace_dir = os.path.join(self.work, name)
        env = dict(env, MPITRACE_OUTPUT=trace_dir)
        return self.traced(trace_dir, MPIT_RANKS, env, self.opts.preload,
                           [self.opts.mpit_counts, str(SENDS), str(FLOOD)])

    def report(self, trace_dir, mpit=False):
        """Runs the report with --json and --html; returns (text, json, failures). Without
        `mpit` the report must have no MPI_T section (the archive has no MPI_T values)."""
        js, html = trace_dir + ".json", trace_dir + ".html"
        run = subprocess.run([self.opts.perusetrace, "report", trace_dir, "--json", js,
                              "--html", html], capture_output=True, text=True)
        print(run.stdout)
        if run.returncode != 0:
            raise SystemExit(f"perusetrace report failed ({run.returncode}): {run.stderr}")
        failures = []
        if run.stderr.strip():  # not a terminal: no progress bar, nothing else either
            failures.append(f"the report wrote to stderr: {run.stderr[:300]!r}")
        with open(js) as f:
            data = json.load(f)
        with open(self.opts.schema) as f:
            schema = json.load(f)
        failures += [f"JSON: {e}" for e in validate(data, schema, schema)[:10]]
        failures += [f"wait states: {e}" for e in wait_checks.invariant(data)]
        with open(html) as f:
            page = f.read()
        for plot in PLOTS:
            if f'id="{plot}"' not in page:
                failures.append(f"HTML: no plot with id {plot}")
        if '<table id="placement">' not in page:
            failures.append("HTML: no traffic-by-placement table")
        if '<pre id="summary">What matters most' not in page:
            failures.append("HTML: the page does not open with what matters most")
        if re.search(r"<script[^>]*src=|<link[^>]*href=|https?://(?!www\.w3\.org/2000/svg)", page):
            failures.append("HTML: refers to something outside the page")
        if not mpit and ("mpit" in data or re.search(r"\bMPI_T\b", run.stdout) or
                         "plot-mpit" in page):
            failures.append("a trace without MPI_T values got an MPI_T section")
        return run.stdout, data, failures


TAG_LATE_SENDER, TAG_LATE_WAIT, TAG_LONG = 1, 3, 4  # examples/scenarios.c
DELAY_MS = 300


def as_measured(value_ns, archive_ns, what, at_least=True):
    """A time the report derived against the same time read from the archive with python3-otf2
    (the same nanoseconds), and loosely against the delay the example injected: a loaded
    machine stretches the measured wait (two busy ranks sharing a core), and the report must
    say what was measured, not what was meant."""
    print(f"{what}: {value_ns / 1e6:.3f} ms (archive {archive_ns / 1e6:.3f} ms, injected "
          f"{DELAY_MS} ms)")
    f = [] if abs(value_ns - archive_ns) <= 2 else [
        f"{what} is {value_ns} ns, but the archive says {archive_ns} ns"]
    return f + trace_checks.waited_as_injected(what, value_ns, DELAY_MS * 1_000_000, at_least)


def first_received(trace, tag):
    """Rank 1's first Peruse event of each name for the receive of `tag`."""
    return trace_checks.first_by_name(trace.peruse(1, tag=tag, operation=1))


def one_host(text, data):
    """Both ranks on this machine: one host, every message and all late-sender time intra-host."""
    p, f = data["placement"], []
    sent = sum(map(sum, data["matrix"]["messages"]))
    sent_bytes = sum(map(sum, data["matrix"]["bytes"]))
    intra, inter = p["intra_host"], p["inter_host"]
    print(f"placement: {p['hosts']} host(s) {p['host_ranks']}, intra-host {intra['messages']} "
          f"messages {intra['bytes']} bytes, inter-host {inter['messages']} messages")
    if p["hosts"] != 1 or [h["ranks"] for h in p["host_ranks"]] != [[0, 1]]:
        f.append(f"placement: {p['hosts']} hosts {p['host_ranks']}, expected one with ranks 0, 1")
    if sent == 0 or (intra["messages"], intra["bytes"]) != (sent, sent_bytes):
        f.append(f"intra-host traffic {intra['messages']} messages / {intra['bytes']} bytes, "
                 f"the matrix holds {sent} / {sent_bytes}")
    if intra["posted_queue_ns"] != data["queue_measures"]["posted_queue"]["total_ns"] or \
            intra["posted_queue_count"] != data["queue_measures"]["posted_queue"]["count"]:
        f.append(f"intra-host late sender {intra['posted_queue_count']} cases "
                 f"{intra['posted_queue_ns']} ns, the pattern has "
                 f"{data['queue_measures']['posted_queue']['count']} / "
                 f"{data['queue_measures']['posted_queue']['total_ns']}")
    if intra["bandwidth_bytes_per_s"]["count"] == 0:
        f.append("no intra-host bandwidth measured")
    if any(inter[k] for k in ("messages", "bytes", "posted_queue_count", "posted_queue_ns")) or \
            inter["bandwidth_bytes_per_s"]["count"]:
        f.append(f"inter-host traffic on one host: {inter}")
    if "all ranks on one host: no inter-host traffic" not in text or \
            re.search(r"^\s+inter-host\s", text, re.M):
        f.append("the text does not say all ranks are on one host, or prints an inter-host row")
    return f


def case_late_sender(c):
    trace_dir = c.trace("late_sender", ["late-sender", "-d", str(DELAY_MS)])
    text, data, f = c.report(trace_dir)
    f += one_host(text, data)
    f += clock_condition(data, text, sum(map(sum, data["matrix"]["messages"])))
    worst = data["queue_measures"]["posted_queue"]["worst"]
    if not worst:
        return f + ["no late sender reported"]
    w = worst[0]
    if (w["sender"], w["receiver"], w["rank"]) != (0, 1, 1):
        f.append(f"worst late sender is {w}, expected sender 0 -> receiver 1 on rank 1")
    # The program's own messages only: a collective's internal waits are filed apart.
    if any(case["tag"] < 0 for case in worst):
        f.append(f"collective-internal messages among the program's late senders: {worst}")
    inside = data["queue_measures"]["posted_queue_in_collectives"]["worst"]
    if any(case["tag"] >= 0 for case in inside):
        f.append(f"a program message among the collectives' late senders: {inside}")
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    first = first_received(trace, TAG_LATE_SENDER)
    if "REQ_INSERT_IN_POSTED_Q" not in first or "REQ_REMOVE_FROM_POSTED_Q" not in first:
        return f + ["the archive lacks rank 1's posted-queue insertion or removal of tag 1"]
    queued = first["REQ_REMOVE_FROM_POSTED_Q"].time - first["REQ_INSERT_IN_POSTED_Q"].time
    f += trace_checks.late_sender_in_trace(trace, DELAY_MS * 1_000_000)
    return f + as_measured(w["duration_ns"], trace.ns(queued), "late sender 0 -> 1", at_least=False)


def clock_condition(data, text, matrix_total):
    """Every matched message pairs up, none received before it was sent (one host)."""
    cc = data["clock_condition"]
    f = []
    if cc["backwards"] != 0 or cc["messages"] != matrix_total:
        f.append(f"clock_condition {cc}: expected {matrix_total} messages, none backwards")
    if f"all {matrix_total} matched messages received after they were sent" not in text:
        f.append("the text does not say the clock condition holds")
    return f


def case_broken_clock(c):
    """Rank 1's clock moved 50 ms back behind the tracer's back (tests/apps/clock_shift.c): the
    report must say that messages were received before they were sent, by about that much."""
    shift_ms = 50
    trace_dir = c.trace("broken_clock", ["late-sender", "-d", "100"],
                        env={"CLOCK_SHIFT_RANK": "1", "CLOCK_SHIFT_NS": str(-shift_ms * 10**6),
                             "MPITRACE_CLOCK": "monotonic"},
                        preload=f"{c.opts.clock_shift}:{c.opts.preload}")
    text, data, f = c.report(trace_dir)
    cc = data["clock_condition"]
    print(f"clock condition: {cc}")
    if cc["backwards"] == 0 or cc["messages"] == 0:
        f.append(f"no message reported received before it was sent: {cc}")
    elif not (cc["worst_sender"], cc["worst_receiver"]) == (0, 1):
        f.append(f"the worst case is {cc['worst_sender']} -> {cc['worst_receiver']}, expected 0 -> 1")
    elif not 0 < cc["worst_ns"] <= shift_ms * 1e6:
        f.append(f"the worst case is {cc['worst_ns'] / 1e6:.3f} ms back, the clock was moved "
                 f"{shift_ms} ms")
    else:
        # How far back the message is depends on how late the receive completed after the send
        # began (a loaded machine delays it by tens of ms): the report must say what the archive
        # shows, the send's MpiSend (its call's start) against the receive's MpiRecv.
        trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
        sends = [e for e in trace.rank_events(0) if e.kind == "MpiSend"
                 and e.raw.msg_tag == TAG_LATE_SENDER]
        recvs = [e for e in trace.rank_events(1) if e.kind == "MpiRecv"
                 and e.raw.msg_tag == TAG_LATE_SENDER]
        if not sends or not recvs:
            f.append("the archive lacks the late sender's MpiSend or MpiRecv")
        elif abs(cc["worst_ns"] - trace.ns(sends[0].time - recvs[0].time)) > 2:
            f.append(f"the worst case is {cc['worst_ns']} ns back, the archive's message "
                     f"{trace.ns(sends[0].time - recvs[0].time)} ns")
    if "clock condition BROKEN" not in text:
        f.append("the text does not say the clock condition is broken")
    return f


def case_late_wait(c):
    trace_dir = c.trace("late_wait", ["late-wait", "-d", str(DELAY_MS)])
    _, data, f = c.report(trace_dir)
    worst = data["queue_measures"]["complete_before_wait"]["worst"]
    if not worst:
        return f + ["no late wait reported"]
    if worst[0]["rank"] != 1:
        f.append(f"worst late wait is on rank {worst[0]['rank']}, expected rank 1")
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    completed = first_received(trace, TAG_LATE_WAIT).get("REQ_COMPLETE")
    waits = trace.regions(1, "MPI_Wait")
    if completed is None or not waits:
        return f + ["the archive lacks rank 1's REQ_COMPLETE of tag 3 or its MPI_Wait"]
    lost = trace.ns(waits[0][0] - completed.time)
    f += as_measured(worst[0]["duration_ns"], lost, "late wait on rank 1")
    return f + as_measured(data["ranks"][1]["complete_before_wait_ns"], lost, "rank 1's late wait in total")


def case_flood(c):
    _, data, f = c.report(c.trace("flood", ["flood", "-r", "64", "-d", "100"]))
    depth = data["queues"]["ranks"][1]["unexpected"]["max_depth"]
    print(f"rank 1 unexpected queue depth: {depth}")
    if abs(depth - 64) > 2:
        f.append(f"rank 1's unexpected queue was {depth} deep, expected 64 (+-2)")
    if max(data["queues"]["ranks"][1]["unexpected"]["depth_over_time"]) != depth:
        f.append("the depth over time does not reach the maximum depth")
    # The 64 messages waited in the unexpected queue while rank 1 slept 100 ms: that is message
    # time, reported as such, and no rank's lost time.
    uq = data["unexpected_queue"]
    print(f"unexpected queue: {uq['messages']} messages, {uq['bytes']} bytes, median "
          f"{uq['queue_ns']['median'] / 1e6:.1f} ms")
    if uq["messages"] < 64 or not 50e6 <= uq["queue_ns"]["median"] <= 1e9:
        f.append(f"unexpected queue {uq['messages']} messages, median {uq['queue_ns']['median']} "
                 "ns: expected the 64 flood messages, each about the 100 ms the receiver slept")
    if data["ranks"][1]["unexpected_queue_ns"] == 0 or data["ranks"][1]["posted_queue_ns"] > 50e6:
        f.append(f"rank 1: unexpected queue {data['ranks'][1]['unexpected_queue_ns']} ns, late "
                 f"sender {data['ranks'][1]['posted_queue_ns']} ns: queue time counted as lost")
    return f


def receive_bandwidths(trace, tag):
    """Rank 1's receive requests of `tag` as the archive times them: bytes over the span from
    the first of REQ_XFER_BEGIN and the first REQ_XFER_CONTINUE to REQ_XFER_END, B/s."""
    spans = {}
    for e in trace.peruse(1, tag=tag, operation=1):
        s = spans.setdefault(e.attrs["request"], {"bytes": 0})
        if e.name in ("REQ_XFER_BEGIN", "REQ_XFER_CONTINUE"):
            s.setdefault("start", e.time)
        elif e.name == "REQ_XFER_END":
            s["end"], s["bytes"] = e.time, e.attrs["bytes"]
    return sorted(s["bytes"] * 1e9 / trace.ns(s["end"] - s["start"]) for s in spans.values()
                  if "start" in s and "end" in s and s["end"] > s["start"])


def case_long_message(c):
    trace_dir = c.trace("long_message", ["long-message", "-r", "4"])
    _, data, f = c.report(trace_dir)
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    archive = receive_bandwidths(trace, TAG_LONG)
    frag = data["messages"]["fragments"]
    if frag["count"] == 0:
        f.append("no fragments reported")
    for g in data["messages"]["groups"]:
        if g["protocol"] == "eager" and g["fragments"]["count"] and g["fragments"]["max"] > 0:
            f.append(f"{g['operation']} messages of {g['fragments']['max']:.0f} fragments "
                     "classified as eager")
    groups = [g for g in data["messages"]["groups"] if g["protocol"] == "rendezvous"]
    for g in groups:
        if g["count"] == 0:
            f.append(f"no rendezvous {g['operation']} messages")
            continue
        bw = g["bandwidth_bytes_per_s"]["median"]
        print(f"{g['operation']}: {g['count']} rendezvous messages, median bandwidth "
              f"{bw / 1e6:.0f} MB/s, {g['fragments']['median']:.0f} fragments each")
        # Against the archive's own times, not a floor a loaded machine can go below. With four
        # messages whose speeds a loaded machine spreads several times apart, the report's
        # median (from its histogram's bins) and the archive's middle message need not agree;
        # the median must lie among the messages' own speeds, give or take one bin.
        if g["operation"] == "receive" and archive and \
                not archive[0] / 1.5 <= bw <= archive[-1] * 1.5:
            f.append(f"receive bandwidth median {bw:.3g} B/s, the archive's transfers give "
                     f"{archive[0]:.3g} .. {archive[-1]:.3g} B/s")
        if not 0 < bw <= 100e9:
            f.append(f"{g['operation']} bandwidth {bw:.3g} B/s outside 0 .. 100 GB/s")
    print(f"fragment interval median {frag['interval_ns']['median']:.0f} ns, "
          f"{frag['per_second']:.0f} fragments/s")
    if max(data["messages"]["bandwidth_over_time_bytes_per_s"]) <= 0:
        f.append("the bandwidth over time is empty")
    return f


def case_no_events(c):
    text, data, f = c.report(c.trace("no_events", ["late-sender", "-d", "50"], events="none"))
    missing = {m["analysis"]: m for m in data["missing"]}
    for analysis in ("messages", "posted_queue", "unexpected_queue", "complete_before_wait", "queue_search",
                     "queue_depth", "collectives"):
        if analysis not in missing:
            f.append(f"{analysis} is not reported missing")
        elif missing[analysis]["setting"] not in text:
            f.append(f"the text does not name the setting for {analysis}")
    if "MPITRACE_PERUSE_EVENTS=REQ_INSERT_IN_POSTED_Q:REQ_REMOVE_FROM_POSTED_Q" not in text:
        f.append("the late-sender hint is not the expected setting")
    if data["queue_measures"]["posted_queue"]["available"]:
        f.append("late sender claims to be available")
    if re.search(r"Receives in the posted queue[^\n]*\n\s+none found", text):
        f.append("the late-sender section prints a result instead of the setting")
    return f


def case_bad_input(c):
    f = []
    garbage = os.path.join(c.work, "garbage.otf2")
    with open(garbage, "w") as out:
        out.write("not an archive\n")
    for path, expect in ((os.path.join(c.work, "no-such-trace"), "does not exist"),
                         (garbage, "not a readable OTF2 archive")):
        run = subprocess.run([c.opts.perusetrace, "report", path], capture_output=True, text=True)
        print(f"{os.path.basename(path)}: exit {run.returncode}: {run.stderr.strip()}")
        if run.returncode != 1 or expect not in run.stderr or \
                not run.stderr.startswith("perusetrace report: "):
            f.append(f"{path}: exit {run.returncode}, {run.stderr.strip()!r}; expected exit 1 "
                     f"and '{expect}'")
    usage = subprocess.run([c.opts.perusetrace, "report"], capture_output=True, text=True)
    if usage.returncode != 2 or "usage: perusetrace report" not in usage.stderr:
        f.append(f"'perusetrace report' without an archive: exit {usage.returncode}")
    return f


def archive_mpit(trace):
    """Per MPI_T member of the archive (name without "MPI_T "): its values per rank as (value,
    innermost MPI function open or "outside MPI"), read with python3-otf2."""
    values = {}
    for rank in range(MPIT_RANKS):
        in_mpi = trace_checks.in_regions(trace.rank_events(rank),
                                         lambda name: name.startswith("MPI_"))
        for e, function in in_mpi:
            if e.kind == "Metric":
                name = e.raw.metric.members[0].name
                if name.startswith("MPI_T "):
                    values.setdefault(name[len("MPI_T "):], {}).setdefault(rank, []).append(
                        (e.raw.values[0], function or "outside MPI"))
    return values


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_pvar(p, by_rank, f):
    """One report entry against the archive's values of that member."""
    name = p["name"]
    ranks = {r["rank"]: r for r in p["ranks"]}
    if set(ranks) != set(by_rank):
        f.append(f"{name}: ranks {sorted(ranks)} in the report, {sorted(by_rank)} in the archive")
        return
    places = {q["name"]: q for q in p["places"]}
    if p["kind"] == "delta":
        per_place = {}
        for rank, values in by_rank.items():
            total = sum(v for v, _ in values)
            if not close(ranks[rank]["total"], total):
                f.append(f"{name}: rank {rank} changed by {ranks[rank]['total']} in the report, "
                         f"{total} in the archive")
            for v, where in values:
                per_place[where] = per_place.get(where, 0) + v
        if set(per_place) != set(places) or not all(
                close(places[w]["change"], c) for w, c in per_place.items()):
            f.append(f"{name}: changes by MPI function {per_place} in the archive, "
                     f"{ {w: q['change'] for w, q in places.items()} } in the report")
    else:
        for rank, values in by_rank.items():
            got = (ranks[rank]["min"], ranks[rank]["max"], ranks[rank]["last"])
            want = (min(v for v, _ in values), max(v for v, _ in values), values[-1][0])
            if got != want:
                f.append(f"{name}: rank {rank} min/max/last {got} in the report, {want} in the "
                         "archive")
        if p["kind"] == "watermark":
            rises = {}
            for values in by_rank.values():
                before = 0
                for v, where in values:
                    if v > before:
                        rises[where] = rises.get(where, 0) + v - before
                    before = v
            got = {w: q["change"] for w, q in places.items() if q["change"]}
            if got != rises:
                f.append(f"{name}: rises by MPI function {rises} in the archive, {got} in the "
                         "report")


def case_mpit(c):
    trace_dir = c.trace_mpit("mpit", MPIT_ENV)
    text, data, f = c.report(trace_dir, mpit=True)
    m = data.get("mpit")
    if m is None:
        return f + ["the report of an archive with MPI_T values has no 'mpit' section"]
    pvars = {p["name"]: p for p in m["pvars"]}
    expected = SENDS + FLOOD + 1
    for counter, call, ranks in (("runtime_spc_OMPI_SPC_SEND", "MPI_Send", (0, 2)),
                                 ("runtime_spc_OMPI_SPC_RECV", "MPI_Recv", (1, 3))):
        p = pvars.get(counter)
        if p is None:
            f.append(f"{counter} is not in the report")
            continue
        totals = {r["rank"]: r["total"] for r in p["ranks"]}
        if totals != {r: expected for r in ranks} or p["kind"] != "delta":
            f.append(f"{counter}: changes per rank {totals} ({p['kind']}), expected {expected} on "
                     f"each of the ranks {ranks}")
        if [(q["name"], q["share"]) for q in p["places"]] != [(call, 1)]:
            f.append(f"{counter}: written in {p['places']}, expected 100% in {call}")
        line = f"{counter}: {2 * expected} (rank {ranks[0]}: {expected}, rank {ranks[1]}: " \
               f"{expected}); 100.0% {call}"
        if line not in text:
            f.append(f"the text lacks '{line}'")
    archive = archive_mpit(trace_checks.load(os.path.join(trace_dir, "traces.otf2")))
    folded = {n for n in archive if n.endswith((" moves", " change")) and
              n.rsplit(" ", 1)[0] in pvars and pvars[n.rsplit(" ", 1)[0]]["kind"] == "watermark"}
    if set(pvars) != set(archive) - folded:
        f.append(f"members with values: {sorted(set(archive) - folded - set(pvars))[:5]} missing "
                 f"from the report, {sorted(set(pvars) - set(archive))[:5]} not in the archive")
    checked = [check_pvar(p, archive[name], f) for name, p in pvars.items() if name in archive]
    # A watermark's " moves" and " change" (a double member: the reader's real_metric path).
    for name, p in pvars.items():
        for part in ("moves", "change") if p["kind"] == "watermark" else ():
            for r in p["ranks"]:
                last = archive.get(f"{name} {part}", {}).get(r["rank"], [(0, "")])[-1][0]
                if r[part] != last:
                    f.append(f"{name}: rank {r['rank']} {part} {r[part]} in the report, {last} "
                             "in the archive")
    print(f"{len(checked)} MPI_T values checked against the archive "
          f"({sum(p['kind'] == 'delta' for p in pvars.values())} counters)")
    mark = pvars.get("runtime_spc_OMPI_SPC_MAX_UNEXPECTED_IN_QUEUE")
    if (mpi_launch.open_mpi_version(c.opts.mpirun) or (0, 0)) >= (5, 0):
        # Open MPI 5.0.9's maximum never rises (ompi_spc.h compares it with itself), so the
        # report has nothing of it; the queue length it should follow does rise.
        length = pvars.get("runtime_spc_OMPI_SPC_UNEXPECTED_IN_QUEUE")
        if (mark is not None and mark["highest"] > 0) or length is None or \
                length["highest"] < FLOOD // 2:
            f.append(f"on Open MPI 5.0.9: the maximum {mark and mark['highest']}, the queue "
                     f"length {length and length['highest']}; expected none and {FLOOD // 2}+")
    elif mark is None or mark["kind"] != "watermark" or mark["highest"] < FLOOD // 2 or \
            not any(r["moves"] > 0 for r in mark["ranks"]) or \
            mark["places"][0]["name"] != "MPI_Recv":
        shown = mark and {k: mark[k] for k in ("kind", "highest", "ranks", "places")}
        f.append(f"the unexpected-queue watermark: {shown}, expected a watermark of "
                 f"{FLOOD // 2} or more, moved, rising most in MPI_Recv")
    for item in m["cvars_differ"]:
        if item["value"] == item["rank0_value"] or not 1 <= item["rank"] < MPIT_RANKS:
            f.append(f"a control variable listed as differing does not: {item}")
    if m["cvars"] < 1 or m["cvars_set"]:
        f.append(f"{m['cvars']} control variables recorded, set: {m['cvars_set']}; expected some "
                 "recorded and none set")
    with open(trace_dir + ".html") as page:
        if 'id="plot-mpit"' not in page.read():
            f.append("HTML: no plot of the MPI_T counters")

    # MPITRACE_CVARS alone (no PVARs): the section is there for the setting.
    cvar = "coll_tuned_bcast_algorithm"
    text, data, more = c.report(c.trace_mpit("cvars", {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "MPITRACE_CVARS": f"{cvar}=1"}), mpit=True)
    f += more
    wanted = [{"name": cvar, "value": "1", "set": True, "note": ""}]
    if data.get("mpit", {}).get("cvars_set") != wanted:
        f.append(f"MPITRACE_CVARS={cvar}=1: the report has {data.get('mpit')!r:.300}, expected "
                 f"cvars_set {wanted}")
    if f"MPITRACE_CVARS {cvar}=1: set" not in text:
        f.append("the text does not say the control variable was set")
    return f


def case_rma(c):
    """tests/apps/rma.c on 4 ranks: the report's RMA section gives, per window and per origin and
    target, the operations and bytes the program made (the steps tests/common/rma_checks.py lists),
    and per rank the calls and the time in each kind of synchronisation call that the archive's
    own MPI regions add up to; nothing is left uncompleted; text and HTML say so."""
    import collections
    import rma_checks
    trace_dir = os.path.join(c.work, "rma")
    c.traced(trace_dir, rma_checks.RANKS, {"MPITRACE_OUTPUT": trace_dir}, c.opts.preload,
             [c.opts.rma])
    text, data, f = c.report(trace_dir)
    rma = data.get("rma")
    if rma is None:
        return f + ["the report has no rma section"]
    traffic = lambda: {"operations": 0, "puts": 0, "gets": 0, "atomics": 0,  # noqa: E731
                       "bytes_sent": 0, "bytes_received": 0}
    windows = {name: dict(traffic(), name=name, comm=comm) for name, comm in rma_checks.WINDOWS}
    pairs = collections.defaultdict(traffic)
    for rank in range(rma_checks.RANKS):
        for op in rma_checks.expected_operations(rank):
            kind = {"RmaPut": "puts", "RmaGet": "gets", "RmaAtomic": "atomics"}[op.kind]
            for t in (windows[op.win], pairs[(rank, op.target)]):
                t["operations"] += 1
                t[kind] += 1
                t["bytes_sent"] += op.sent
                t["bytes_received"] += op.received
    want_windows = [windows[name] for name, _ in rma_checks.WINDOWS]
    if rma["windows"] != want_windows:
        f.append(f"windows {rma['windows']}, expected {want_windows}")
    want_pairs = [dict(v, origin=o, target=t) for (o, t), v in sorted(pairs.items())]
    if rma["pairs"] != want_pairs:
        f.append(f"pairs {rma['pairs']}, expected {want_pairs}")
    if rma["never_completed"] != 0:
        f.append(f"{rma['never_completed']} operations never completed")
    # The synchronisation calls as the archive has them: the same regions, summed here.
    kinds = {"fence": ("MPI_Win_fence",),
             "pscw": ("MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait",
                      "MPI_Win_test"),
             "lock": ("MPI_Win_lock", "MPI_Win_lock_all", "MPI_Win_unlock", "MPI_Win_unlock_all"),
             "flush": ("MPI_Win_flush", "MPI_Win_flush_all", "MPI_Win_flush_local",
                       "MPI_Win_flush_local_all", "MPI_Win_sync")}
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    program_calls = {"fence": 5, "lock": 16, "flush": 4}  # pscw: rank 3's MPI_Win_test loop varies
    for row in rma["sync"]:
        rank = row["rank"]
        for kind, names in kinds.items():
            visits = [v for name in names for v in trace.regions(rank, name)]
            seconds = sum(trace.ns(b - a) for a, b in visits) / 1e9
            got = row[kind]
            want_calls = program_calls.get(kind, len(visits))
            if kind == "pscw" and (rank != 3 and len(visits) != 2 or rank == 3 and len(visits) < 2):
                f.append(f"rank {rank}: {len(visits)} PSCW calls in the archive")
            if got["calls"] != want_calls or got["calls"] != len(visits) or \
                    abs(got["seconds"] - seconds) > 1e-6 * max(1, len(visits)):
                f.append(f"rank {rank} {kind}: {got}, the archive has {len(visits)} calls taking "
                         f"{seconds:.9f} s (the program made {want_calls})")
    if "One-sided communication (RMA)" not in text or "halo window (MPI_COMM_WORLD)" not in text:
        f.append("the text has no RMA section naming the windows")
    with open(trace_dir + ".html") as page:
        ops = sum(len(rma_checks.expected_operations(r)) for r in range(rma_checks.RANKS))
        if f"One-sided communication: 4 windows, {ops} operations" not in page.read():
            f.append(f"HTML: no line saying 4 windows and {ops} operations")
    return f


# ---- the HTML page's timeline, in headless Chromium --------------------------------------

TIMELINE_RANKS = 4
ALL_MESSAGES = 1 + 1 + 1 + 4 + 64  # scenarios all: late sender, receiver, wait; 4 long; flood


def timeline_report(c, name, program_args):
    """The scenarios on TIMELINE_RANKS ranks with every Peruse event, reported with --html;
    returns (trace directory, report JSON, failures)."""
    trace_dir = os.path.join(c.work, name)
    env = {"MPITRACE_OUTPUT": trace_dir, "MPITRACE_PERUSE_EVENTS": "all"}
    c.traced(trace_dir, TIMELINE_RANKS, env, c.opts.preload, [c.opts.scenarios] + program_args)
    _, data, f = c.report(trace_dir)
    return trace_dir, data, f


def page_state(page):
    """What the page shows: its rows, the status line's data, the legend's counts, errors."""
    return page.evaluate("""(() => {
      const s = document.getElementById('tl-status').dataset;
      const counts = {};
      document.querySelectorAll('#tl-legend label[data-event]').forEach((l) => {
        counts[l.dataset.event] = Number(l.querySelector('.tl-count').textContent.replace(/[()]/g, ''));
      });
      return {rows: Array.from(document.querySelectorAll('.tl-label[data-row]:not(.tl-lane)'))
                .map((e) => e.textContent),
              from: Number(s.from), to: Number(s.to), mode: s.mode, detail: s.detail,
              lines: Number(s.lines),
              markers: Number(s.markers), counts,
              errors: document.getElementById('tl-errors').textContent,
              highlighted: Array.from(document.querySelectorAll('.tl-label.tl-highlight'))
                .map((e) => e.textContent)};
    })()""")


def open_page(path):
    import chromium_page
    return chromium_page.ChromiumPage(path)


def case_timeline(c):
    """The page of scenarios all on 4 ranks: no JavaScript error; one row per location; in the
    whole-trace view the legend counts every Peruse event of each kind the archive holds, one
    message line per message the program sent (71), the late-sender table's first row is the
    program's late sender 0 -> 1 with the report's lost time."""
    import chromium_page
    trace_dir, data, f = timeline_report(c, "timeline", ["all", "-d", "100"])
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    f += trace_checks.messages_match(trace)
    peruse = collections.Counter(e.name for events in trace.events.values() for e in events
                                 if e.kind == "Peruse")
    sends = sum(1 for events in trace.events.values() for e in events
                if e.kind in ("MpiSend", "MpiIsend"))
    if chromium_page.browser() is None:
        return f + ["chromium is not installed (scripts/setup installs it)"]
    with open_page(trace_dir + ".html") as page:
        state = page_state(page)
        first = page.evaluate("""Array.from(document.querySelectorAll(
            '#table-posted-queue tbody tr:first-child td')).map((td) => Number(td.dataset.value))""")
        errors = page.errors + ([state["errors"]] if state["errors"] else [])
    print(f"page: rows {state['rows']}, {state['lines']} message lines, {state['markers']} "
          f"Peruse events, mode '{state['mode']}'; archive: {len(trace.events)} locations, "
          f"{sends} sends, {sum(peruse.values())} Peruse events")
    if errors:
        f.append(f"JavaScript errors: {errors[:5]}")
    if len(state["rows"]) != len(trace.events) or len(trace.events) != TIMELINE_RANKS:
        f.append(f"{len(state['rows'])} rows for {len(trace.events)} locations "
                 f"(expected {TIMELINE_RANKS}): {state['rows']}")
    if state["lines"] != sends or sends != ALL_MESSAGES:
        f.append(f"{state['lines']} message lines in the whole trace's view, the archive has "
                 f"{sends} sends, the program sent {ALL_MESSAGES}")
    shown = {k: v for k, v in state["counts"].items() if v}
    if shown != dict(peruse):
        f.append(f"Peruse markers per kind {shown}, the archive holds {dict(peruse)}")
    if state["mode"] != "summary, with the kept detail's markers and lines":
        f.append(f"the whole trace's view is drawn as '{state['mode']}'")
    worst = data["queue_measures"]["posted_queue"]["worst"]
    if not worst or not first:
        return f + [f"no late-sender table row ({first}) or case ({worst})"]
    # lost, from, on rank, sender, receiver, tag, bytes
    want = [worst[0][k] for k in ("duration_ns", "time_ns", "rank", "sender", "receiver", "tag")]
    if first[:6] != want or first[2:5] != [1, 0, 1]:
        f.append(f"the late-sender table's first row is {first}, the report's worst case {want}")
    return f


def case_timeline_jump(c):
    """scenarios late-sender -d 300 on 4 ranks: clicking the late-sender row shows that
    occurrence (the view holds the wait and is at most 1.4 times as long, plus 2 us) with rank 1
    marked; sorting a table by a column orders its rows; the wheel zooms at the pointer, a drag
    zooms into the range dragged over, Shift+drag pans, Home shows the whole trace again."""
    import chromium_page
    trace_dir, data, f = timeline_report(c, "jump", ["late-sender", "-d", str(DELAY_MS)])
    worst = data["queue_measures"]["posted_queue"]["worst"]
    if not worst:
        return f + ["no late sender reported"]
    w = worst[0]
    if chromium_page.browser() is None:
        return f + ["chromium is not installed (scripts/setup installs it)"]
    with open_page(trace_dir + ".html") as page:
        whole = page_state(page)
        row = page.evaluate("""(() => {
            const tr = document.querySelector('#table-posted-queue tbody tr');
            tr.scrollIntoView({block: 'center'});
            const r = tr.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2];
        })()""")
        page.click(*row)
        jumped = page_state(page)
        current = page.evaluate("!!document.querySelector('#table-posted-queue tr.tl-current')")
        # Sorting: by "from" (column 1), twice: descending, then ascending.
        order = []
        for _ in range(2):
            order.append(page.evaluate("""(() => {
                const th = document.querySelectorAll('#table-posted-queue-in-collectives th')[1];
                if (!th) return null;
                th.click();
                return Array.from(document.querySelectorAll(
                    '#table-posted-queue-in-collectives tbody tr td:nth-child(2)'))
                    .map((td) => Number(td.dataset.value));
            })()"""))
        # The mouse on the canvas.
        box = page.evaluate("""(() => {
            const c = document.getElementById('tl-canvas');
            c.scrollIntoView({block: 'start'});
            const r = c.getBoundingClientRect();
            return [r.left, r.top, r.width, r.height];
        })()""")
        left, top, width, _ = box
        y = top + 40
        page.evaluate("perusetraceTimeline.setView(0, %d)" % data["trace_ns"])
        before = page_state(page)
        px = left + width * 0.25
        under = before["from"] + (before["to"] - before["from"]) * 0.25
        page.wheel(px, y, -240)
        wheeled = page_state(page)
        page.drag(left + 100, y, left + 300, y)
        dragged_from_to = (wheeled["from"] + (wheeled["to"] - wheeled["from"]) * 100 / width,
                           wheeled["from"] + (wheeled["to"] - wheeled["from"]) * 300 / width)
        selected = page_state(page)
        page.drag(left + 300, y, left + 200, y, modifiers=8)  # Shift: pan right by 100 px
        panned = page_state(page)
        page.evaluate("document.getElementById('tl-canvas').focus()")
        page.evaluate("""document.getElementById('tl-canvas').dispatchEvent(
            new KeyboardEvent('keydown', {key: 'Home', bubbles: true}))""")
        home = page_state(page)
        errors = page.errors + [s["errors"] for s in (whole, jumped, home) if s["errors"]]
    if errors:
        f.append(f"JavaScript errors: {errors[:5]}")
    start, end = w["time_ns"], w["time_ns"] + w["duration_ns"]
    print(f"late sender {w['duration_ns'] / 1e6:.3f} ms from {start / 1e6:.3f} ms; view after the "
          f"click {jumped['from'] / 1e6:.3f} - {jumped['to'] / 1e6:.3f} ms ({jumped['mode']}), "
          f"marked {jumped['highlighted']}")
    if not (jumped["from"] <= start and jumped["to"] >= end and
            jumped["to"] - jumped["from"] <= 1.4 * w["duration_ns"] + 2000 + 2):
        f.append(f"clicking the late sender [{start}, {end}] showed [{jumped['from']}, "
                 f"{jumped['to']}]")
    if not current or jumped["highlighted"] != [whole["rows"][1]]:
        f.append(f"after the click the row is not marked current ({current}) or the rank "
                 f"marked is {jumped['highlighted']}, not {whole['rows'][1]}")
    if jumped["detail"] != "all" or jumped["lines"] < 1:
        f.append(f"the occurrence's view has detail '{jumped['detail']}' and {jumped['lines']} "
                 f"message lines")
    if None in order or len(order[0]) < 2 or order[0] != sorted(order[0], reverse=True) or \
            order[1] != sorted(order[1]):
        f.append(f"sorting the collectives' late senders by 'from' gave {order}")
    width_before = before["to"] - before["from"]
    width_wheeled = wheeled["to"] - wheeled["from"]
    under_after = wheeled["from"] + width_wheeled * 0.25
    if not (0.5 < width_wheeled / width_before < 0.75) or abs(under_after - under) > \
            0.01 * width_before:
        f.append(f"the wheel zoomed {width_before} ns to {width_wheeled} ns, the time under "
                 f"the pointer moved from {under} to {under_after}")
    got = (selected["from"], selected["to"])
    if any(abs(a - b) > 0.01 * width_wheeled for a, b in zip(got, dragged_from_to)):
        f.append(f"dragging over 100..300 px showed {got}, expected {dragged_from_to}")
    shift = (panned["from"] - selected["from"], panned["to"] - selected["to"])
    want_shift = (selected["to"] - selected["from"]) * 100 / width
    if any(abs(s - want_shift) > 0.02 * want_shift for s in shift):
        f.append(f"Shift+dragging 100 px panned by {shift}, expected {want_shift}")
    if (home["from"], home["to"]) != (0, data["trace_ns"]):
        f.append(f"Home showed [{home['from']}, {home['to']}], not the whole trace")
    return f


def archive_io_times(trace):
    """From the archive: per (rank, file) the reads' and writes' begin-to-completion time and
    the flushes', summed (ns); per rank its MPI_File_* calls (none is inside another MPI call in
    file_io.c)."""
    ops, flushes, calls = collections.Counter(), collections.Counter(), collections.Counter()
    for (rank, _), events in trace.events.items():
        begun = {}
        for e in events:
            if e.kind == "Enter" and e.name.startswith("MPI_File_"):
                calls[rank] += 1
            elif e.kind == "IoOperationBegin":
                begun[e.raw.matching_id] = e
            elif e.kind == "IoOperationComplete" and e.raw.matching_id in begun:
                b = begun.pop(e.raw.matching_id)
                key = (rank, b.raw.handle.file.name)
                ns = trace.ns(e.time - b.time)
                if b.raw.mode == otf2.IoOperationMode.FLUSH:
                    flushes[key] += ns
                else:
                    ops[key] += ns
    return ops, flushes, calls


def case_io(c):
    """tests/apps/file_io.c on 4 ranks: the report's MPI-IO numbers per file and rank equal the
    program's own tally (operations and bytes read and written, by kind, syncs, seeks, size
    changes, deletions, openings; the files' initial sizes) and, for times, the archive's
    (each operation's begin to completion; the MPI_File_* calls per rank)."""
    trace_dir = os.path.join(c.work, "io")
    env = {"MPITRACE_OUTPUT": trace_dir}
    cmd = mpi_launch.command(c.opts.mpirun, IO_RANKS, env, c.opts.preload)
    run = mpi_launch.run(cmd + [c.opts.file_io], timeout=RUN_TIMEOUT,
                         env=mpi_launch.launcher_env(env), cwd=c.work)
    if run.returncode != 0:
        raise SystemExit(f"the traced run failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    program = trace_checks.program_io(run.stdout)
    text, data, f = c.report(trace_dir)
    io = data.get("io")
    if io is None or not program:
        return f + [f"no 'io' section ({io is None}) or no tallies from the program"]
    files = {x["name"]: x for x in io["files"]}
    ops_ns, flush_ns, calls = archive_io_times(
        trace_checks.load(os.path.join(trace_dir, "traces.otf2")))
    for (rank, name), want in sorted(program.items()):
        entry = next((r for r in files.get(name, {}).get("ranks", []) if r["rank"] == rank), None)
        if entry is None:
            f.append(f"rank {rank} {name}: not in the report")
            continue
        got = {"opens": entry["opens"], "closes": entry["closes"],
               "reads": entry["reads"]["operations"], "read_bytes": entry["reads"]["bytes"],
               "writes": entry["writes"]["operations"], "write_bytes": entry["writes"]["bytes"],
               "flushes": entry["flushes"]["operations"], "seeks": entry["seeks"],
               "resizes": entry["resizes"], "deletes": entry["deletes"]}
        for kind in trace_checks.IO_KINDS:
            got[kind] = entry["kinds"][kind]["operations"]
            got[kind + "_bytes"] = entry["kinds"][kind]["bytes"]
        expected = dict(want, resizes=0 if want["resizes"] == "-" else
                        len(want["resizes"].split(",")))
        del expected["sizes"]
        differ = {k: (v, got.get(k)) for k, v in expected.items() if got.get(k) != v}
        if differ:
            f.append(f"rank {rank} {name}: (program, report) differ: {differ}")
        times = (entry["reads"]["ns"] + entry["writes"]["ns"], entry["flushes"]["ns"])
        if times != (ops_ns[(rank, name)], flush_ns[(rank, name)]):
            f.append(f"rank {rank} {name}: operation and sync time {times} ns, the archive's "
                     f"{(ops_ns[(rank, name)], flush_ns[(rank, name)])}")
        if entry["unfinished"] or (want["opens"] or want["deletes"]) and not entry["calls"]:
            f.append(f"rank {rank} {name}: {entry['unfinished']} unfinished, {entry['calls']} calls")
    reported = {(r["rank"], x["name"]) for x in io["files"] for r in x["ranks"]}
    if reported != set(program):
        f.append(f"(rank, file) pairs reported but not in the program: "
                 f"{sorted(reported - set(program))}")
    for name, entry in files.items():
        firsts = {int(t["sizes"].split(",")[0]) for (_, n), t in program.items()
                  if n == name and t["sizes"] != "-"}
        want = min(firsts) if firsts else -1
        if entry["initial_size"] != want:
            f.append(f"{name}: initial size {entry['initial_size']}, expected {want}")
    per_rank = {r["rank"]: r["calls"] for r in io["ranks"]}
    if per_rank != dict(calls):
        f.append(f"MPI_File_* calls per rank {per_rank}, the archive's {dict(calls)}")
    if "file_io.dat (initial size 12345 bytes)" not in text:
        f.append("the text does not give file_io.dat's initial size")
    for rank in range(IO_RANKS):
        line = re.compile(rf"^ +{rank} +5/18000 +5/18000 .* 3/12000 +2/8000 +2/4000 +3/12000 ",
                          re.M)
        if not line.search(text):
            f.append(f"the text has no line for rank {rank} of file_io.dat with its reads, "
                     "writes and kinds")
    with open(trace_dir + ".html") as page:
        html = page.read()
    table = html[html.find('<table id="io">'):]
    rows = table[:table.find("</table>")].count("<tr><td>")
    if rows != len(program):
        f.append(f"HTML: {rows} rows in the MPI-IO table, expected {len(program)}")
    prv = subprocess.run([c.opts.perusetrace, "prv", trace_dir, "-q", "-o",
                          os.path.join(c.work, "io-paraver")], capture_output=True, text=True)
    if prv.returncode != 0 or prv.stderr.strip():
        f.append(f"prv on the MPI-IO archive: exit {prv.returncode}, {prv.stderr[:300]!r}")
    print(f"{len(program)} (rank, file) pairs checked against the program's tally")
    return f


CASES = {"mpit": case_mpit, "io": case_io, "rma": case_rma, "timeline": case_timeline,
         "timeline_jump": case_timeline_jump,
         "broken_clock": case_broken_clock, "late_sender": case_late_sender, "late_wait": case_late_wait, "flood": case_flood,
         "long_message": case_long_message, "no_events": case_no_events,
         "bad_input": case_bad_input}


def main():
    case_result.run_listing_case(
        CASES, "report", ["mpirun", "preload", "perusetrace", "scenarios", "schema"],
        lambda case, opts, work: case(Case(opts, work)),
        optional={"clock-shift": "tests/apps/clock_shift.c's library",
                  "mpit-counts": "tests/apps/mpit_counts, for the mpit case",
                  "file-io": "tests/apps/file_io, for the io case",
                  "rma": "tests/apps/rma, for the rma case"})


if __name__ == "__main__":
    main()
