#!/usr/bin/python3
"""Traced runs across hosts simulated on this machine (scripts/fake-cluster): each host has its own
network, name, CLOCK_MONOTONIC and, with --scratch, its own disk. Root only; skipped (77) with
fake-cluster's reason where this machine cannot run it (`fake-cluster --check` exits 77 saying
"cannot run"); any other failure of the check (exit 2: a broken invocation, e.g. no mpirun) fails.

    cluster_test.py --fake-cluster PATH --mpirun MPIRUN --preload LIB --perusetrace EXE
                    --ring EXE --scenarios EXE CASE

  ring_auto, ring_monotonic  tests/apps/ring.c, 8 ranks on 4 hosts whose clocks are 5000 s
                 ahead, 1234.5 s behind and 60.25 s ahead of the first one's, with
                 MPITRACE_CLOCK=auto (the TSC)
                 and =monotonic: no message received before it was sent; one clock domain per
                 host; every offset measured within its own error bound of the configured one;
                 the ClockProperties span the run; the system tree holds the hosts
  late_sender_ahead, late_sender_behind  the paper's late sender across two hosts (1 rank each),
                 the receiver's host 5000 s ahead / 3000 s behind: the trace, `perusetrace
                 report` and Paraver's states (`perusetrace prv`) all show the injected 200 ms
  placement      tests/apps/ring.c, 3 ranks on 2 hosts of 2 slots (ranks 0, 1 on h1, rank 2 on
                 h2): `perusetrace report --json` splits the ring's messages into exactly the
                 intra-host and inter-host counts its pattern gives (4 ranks would split 50/50,
                 which a swapped split would pass)
  known_counts   the exact-count program on 2 hosts, the second 3000 s behind
  clock_repair   a rank's clock moved 20 ms behind the tracer's back: report, prv and export repair it;
                 prv --np and export --np refuse it (the repair runs in one process)
  placement      the report's intra-/inter-host split of a ring, exactly
  node_local     MPITRACE_OUTPUT on a disk of each host's own: the run goes untraced, saying
                 which hosts cannot see the directory and what to set
  wait_states    tests/apps/wait_states' late sender, late receiver and barrier on 4 ranks
                 round-robin over 2 hosts 5000 s apart: the wait states of one host's answers
  parallel_profile  `perusetrace-analyze profile`, `prv` and `export --perfetto` as 4 analysis
                 ranks on 2 hosts: one process's results, each rank on its host
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import export_test  # noqa: E402  (the Perfetto export's structural checks)
import mpi_launch  # noqa: E402
import prv_check  # noqa: E402
import parallel_conversion_test  # noqa: E402  (parallel against single conversion)
import trace_checks  # noqa: E402
import wait_checks  # noqa: E402
import wait_state_test  # noqa: E402

SKIP = 77
DELAY_MS = 200
STATE_WAIT_MESSAGE = 3  # tools/prv/prv_codes.hpp
# Four hosts: the fourth host's leader is measured against the second's, whose offset to rank
# 0's host was measured first (clock_sync.cpp's tree), so offsets and errors add up on its path.
FOUR_HOSTS = {"h1": 0.0, "h2": 5000.0, "h3": -1234.5, "h4": 60.25}
# A job still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120


class Cluster:
    def __init__(self, opts, work):
        self.opts, self.work = opts, work

    def run(self, name, hosts, slots, np, program, env=(), scratch=None):
        """Runs PROGRAM traced on the simulated hosts {name: clock offset in s}; returns
        (completed process, trace directory)."""
        trace_dir = os.path.join(scratch or self.work, name)
        ranks = dict({"MPITRACE_OUTPUT": trace_dir, "LD_PRELOAD": self.opts.preload}, **dict(env))
        spec = ",".join(f"{h}:{off:+.3f}" for h, off in hosts.items())
        cmd = [self.opts.fake_cluster, "--hosts", spec, "--slots", str(slots),
               "--mpirun", self.opts.mpirun]
        if scratch:
            cmd += ["--scratch", scratch]
        cmd += ["--", "-np", str(np)]
        for k, v in ranks.items():
            cmd += ["-x", f"{k}={v}"]
        run = mpi_launch.run(cmd + program, timeout=RUN_TIMEOUT, cwd=self.work)
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if run.returncode is None:
            raise SystemExit(f"the traced run {name} hung (stacks above)")
        cannot_run = mpi_launch.fake_cluster_cannot_run(run.returncode, run.stderr)
        if cannot_run:
            print(f"skipped: {cannot_run}")
            sys.exit(SKIP)
        return run, trace_dir

    def traced(self, name, hosts, slots, np, program, env=()):
        run, trace_dir = self.run(name, hosts, slots, np, program, env)
        archive = os.path.join(trace_dir, "traces.otf2")
        if run.returncode != 0 or not os.path.exists(archive):
            raise SystemExit(f"the traced run failed ({run.returncode}), no archive at {archive}")
        printed = subprocess.run(["otf2-print", archive], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        warnings = [line for line in printed.stderr.splitlines() if line.strip()]
        f = [f"otf2-print ({printed.returncode}): {warnings[:5]}"] if printed.returncode or \
            warnings else []
        return run, trace_dir, trace_checks.load(archive), f


def clock_domains(trace):
    """PERUSETRACE::CLOCK_DOMAINS: {host: (leader, ranks, [(offset ns, error ns, exchanges)])}."""
    text = trace.properties.get("PERUSETRACE::CLOCK_DOMAINS", "")
    domains = {}
    for line in text.split():
        fields = dict(item.split("=", 1) for item in line.split(";") if "=" in item)
        if not fields:
            continue
        offsets = [tuple(float(x) for x in o.split(":")) for o in fields["offsets"].split(",")
                   if o]
        domains[fields["host"]] = (int(fields["leader"]), int(fields["ranks"]), offsets)
    return domains


def offsets_as_configured(trace, hosts, ranks_per_host):
    """One domain per host; every offset measured (at init and at finalize) lies within its
    recorded error of the true one: time namespaces shift one clock by exactly what was set."""
    f = []
    domains = clock_domains(trace)
    if sorted(domains) != sorted(hosts):
        return [f"clock domains on hosts {sorted(domains)}, expected one per host "
                f"{sorted(hosts)} (property: {trace.properties.get('PERUSETRACE::CLOCK_DOMAINS')!r})"]
    first = next(iter(hosts.values()))
    for host, (leader, ranks, offsets) in sorted(domains.items()):
        want = round(-(hosts[host] - first) * 1e9)  # added to the host's clock: rank 0's
        if ranks != ranks_per_host:
            f.append(f"{host}: {ranks} ranks in its clock domain, expected {ranks_per_host}")
        if len(offsets) != 2:
            f.append(f"{host}: {len(offsets)} offsets, expected one at init, one at finalize")
        for when, (offset, error, exchanges) in zip(("init", "finalize"), offsets):
            off_by = offset - want
            print(f"{host} (leader rank {leader}) at {when}: offset {offset / 1e9:+.9f} s, "
                  f"configured {want / 1e9:+.9f} s, measured {off_by / 1e3:+.1f} us off, "
                  f"error bound {error / 1e3:.1f} us, {exchanges:.0f} round trips")
            if host == "h1" and (offset != 0 or error != 0 or exchanges != 0):
                f.append(f"rank 0's own host got offset {offset} +- {error}: it shares the clock")
            elif abs(off_by) > error + 1000:
                f.append(f"{host} at {when}: measured {offset:.0f} ns, configured {want} ns: "
                         f"{off_by:.0f} ns off, beyond the recorded error of {error:.0f} ns")
    return f


def system_tree(trace, hosts, ranks_per_host):
    """Every rank's location group sits under the system-tree node of its host."""
    seen = trace.hosts
    want = {r: h for i, h in enumerate(hosts) for r in range(i * ranks_per_host,
                                                            (i + 1) * ranks_per_host)}
    return [] if seen == want else [f"ranks under system-tree nodes {seen}, expected {want}"]


def case_ring(c, clock):
    run, _, trace, f = c.traced(f"ring_{clock}", FOUR_HOSTS, 2, 8, [c.opts.ring],
                                {"MPITRACE_PERUSE_EVENTS": "all", "MPITRACE_CLOCK": clock})
    f += trace_checks.check_ring(trace, run)
    f += offsets_as_configured(trace, FOUR_HOSTS, 2)
    return f + system_tree(trace, FOUR_HOSTS, 2)


def within(what, value_ns, want_ns, tolerance=0.10):
    print(f"{what}: {value_ns / 1e6:.3f} ms (injected {want_ns / 1e6:.0f} ms)")
    if abs(value_ns - want_ns) <= tolerance * want_ns:
        return []
    return [f"{what} is {value_ns / 1e6:.3f} ms, expected {want_ns / 1e6:.0f} ms +-"
            f"{tolerance:.0%}"]


def case_late_sender(c, receiver_offset):
    hosts = {"h1": 0.0, "h2": receiver_offset}
    run, trace_dir, trace, f = c.traced(
        "late_sender", hosts, 1, 2, [c.opts.scenarios, "late-sender", "-d", str(DELAY_MS)],
        {"MPITRACE_PERUSE_EVENTS": "all"})
    # The paper's early-receiver sequence, less the fragments: over the TCP transport ob1 reported
    # no REQ_XFER_CONTINUE on the receiver of this 40000-byte message (shared memory does).
    f += trace_checks.messages_match(trace) + trace_checks.lifecycles(trace)
    receiver = trace.peruse(1, tag=1, operation=1)
    missing = trace_checks.in_order([e.name for e in receiver], [
        n for n in trace_checks.PAPER_EARLY_RECEIVER if n != "REQ_XFER_CONTINUE"])
    if missing:
        return f + [f"rank 1 lacks {missing} in the early-receiver sequence: "
                    f"{[e.name for e in receiver]}"]
    first = trace_checks.first_by_name(receiver)
    f += within("the receive's wait in the posted queue (archive)",
                trace.ns(first["MSG_ARRIVED"].time - first["REQ_INSERT_IN_POSTED_Q"].time),
                DELAY_MS * 1_000_000)
    f += offsets_as_configured(trace, hosts, 1)
    delay = DELAY_MS * 1_000_000
    # Causal order of the request's Peruse events across the hosts.
    sent = trace_checks.first_by_name(trace.peruse(0, tag=1, operation=0))
    received = trace_checks.first_by_name(trace.peruse(1, tag=1, operation=1))
    if "REQ_XFER_BEGIN" in sent and "REQ_XFER_END" in received and \
            not sent["REQ_XFER_BEGIN"].time < received["REQ_XFER_END"].time:
        f.append("the receiver's REQ_XFER_END is not after the sender's REQ_XFER_BEGIN")

    report = subprocess.run([c.opts.perusetrace, "report", trace_dir, "--json",
                             trace_dir + ".json"], capture_output=True, text=True)
    print(report.stdout)
    if report.returncode != 0:
        return f + [f"perusetrace report failed: {report.stderr}"]
    traced = re.search(r"([\d.]+) s traced", report.stdout)
    if not traced or float(traced.group(1)) > 30:
        f.append(f"the report says {traced and traced.group(0)}: the run took seconds")
    with open(trace_dir + ".json") as js:
        worst = json.load(js)["queue_measures"]["posted_queue"]["worst"]
    if not worst or (worst[0]["sender"], worst[0]["receiver"]) != (0, 1):
        f.append(f"the report's worst late sender is {worst[:1]}, expected 0 -> 1")
    else:
        f += within("the report's late sender 0 -> 1", worst[0]["duration_ns"], delay)

    prefix = trace_dir + "-prv"
    prv = subprocess.run([c.opts.perusetrace, "prv", trace_dir, "-o", prefix],
                         capture_output=True, text=True)
    if prv.returncode != 0:
        return f + [f"perusetrace prv failed: {prv.stderr}"]
    waits = []

    def collect(v):
        if v[0] == 1 and v[3] == 2 and v[7] == STATE_WAIT_MESSAGE:
            waits.append(v[6] - v[5])
    failures, summary = prv_check.check(prefix, collect)
    f += [f"prv: {x}" for x in failures]
    f += within("Paraver's 'Waiting a message' of task 2", sum(waits), delay)
    with open(prefix + ".prv") as p:
        header = p.readline()
    end = re.match(r"#Paraver \([^)]*\):(\d+)(_ns)?:", header)
    if not end or int(end.group(1)) > 30e9:
        f.append(f"the .prv header's end time is {end and end.group(1)} ns: the run took seconds")
    with open(prefix + ".row") as row:
        names = row.read()
    if "h1" not in names or "h2" not in names:
        f.append("the .row file does not name the hosts h1 and h2")
    return f


def ring_placement(size, ranks_per_host, iterations):
    """(intra-host, inter-host) messages of ring.c: per iteration every rank sends twice to its
    right neighbour (MPI_Sendrecv, MPI_Isend) and once to its left one (MPI_Isend); ranks fill
    the hosts in order."""
    split = [0, 0]
    for rank in range(size):
        for peer, count in (((rank + 1) % size, 2), ((rank + size - 1) % size, 1)):
            split[rank // ranks_per_host != peer // ranks_per_host] += count * iterations
    return tuple(split)


def case_placement(c):
    hosts, slots, np, iterations = {"h1": 0.0, "h2": 0.0}, 2, 3, 40
    run, trace_dir, _, f = c.traced("placement", hosts, slots, np,
                                    [c.opts.ring, "-i", str(iterations)],
                                    {"MPITRACE_PERUSE_EVENTS": "all"})
    expect = re.search(r"expect messages (\d+)", run.stdout)
    if not expect:
        return f + ["the ring did not print 'expect messages N'"]
    total = int(expect.group(1))
    intra_want, inter_want = ring_placement(np, slots, iterations)
    if intra_want + inter_want != total:
        return f + [f"ring.c's pattern gives {intra_want} + {inter_want} messages, it says {total}"]
    report = subprocess.run([c.opts.perusetrace, "report", trace_dir, "--json",
                             trace_dir + ".json"], capture_output=True, text=True)
    print(report.stdout)
    if report.returncode != 0:
        return f + [f"perusetrace report failed: {report.stderr}"]
    with open(trace_dir + ".json") as js:
        data = json.load(js)
    p = data["placement"]
    intra, inter = p["intra_host"], p["inter_host"]
    print(f"placement: {p['hosts']} hosts {p['host_ranks']}; intra-host {intra['messages']} "
          f"messages (expected {intra_want}), inter-host {inter['messages']} (expected "
          f"{inter_want}), {total} in all; late sender intra {intra['posted_queue_ns']} ns, "
          f"inter {inter['posted_queue_ns']} ns; bandwidth medians intra "
          f"{intra['bandwidth_bytes_per_s']['median']:.3g}, inter "
          f"{inter['bandwidth_bytes_per_s']['median']:.3g} B/s")
    if p["hosts"] != 2:
        f.append(f"the report counts {p['hosts']} hosts, expected 2")
    placed = [(h["host"], h["ranks"]) for h in p["host_ranks"]]
    if placed != [("h1", [0, 1]), ("h2", [2])]:
        f.append(f"ranks per host {placed}, expected h1: 0, 1 and h2: 2")
    if intra["messages"] + inter["messages"] != total:
        f.append(f"intra-host {intra['messages']} + inter-host {inter['messages']} messages, "
                 f"the ring sent {total}")
    if (intra["messages"], inter["messages"]) != (intra_want, inter_want):
        f.append(f"intra-host / inter-host messages {intra['messages']} / {inter['messages']}, "
                 f"expected {intra_want} / {inter_want}")
    if (intra["bytes"], inter["bytes"]) != (intra_want * 64, inter_want * 64):  # ring's -n
        f.append(f"intra-host / inter-host bytes {intra['bytes']} / {inter['bytes']}, expected "
                 f"{intra_want * 64} / {inter_want * 64}")
    # Every late sender and every measured bandwidth has known ranks here, so each lands in one row.
    late = data["queue_measures"]["posted_queue"]
    if (intra["posted_queue_count"] + inter["posted_queue_count"],
            intra["posted_queue_ns"] + inter["posted_queue_ns"]) != (late["count"], late["total_ns"]):
        f.append(f"late sender split {intra['posted_queue_count']} + {inter['posted_queue_count']} "
                 f"cases, {intra['posted_queue_ns']} + {inter['posted_queue_ns']} ns; the pattern "
                 f"has {late['count']} / {late['total_ns']}")
    measured = sum(g["bandwidth_bytes_per_s"]["count"] for g in data["messages"]["groups"])
    split = intra["bandwidth_bytes_per_s"]["count"] + inter["bandwidth_bytes_per_s"]["count"]
    if split != measured or intra["bandwidth_bytes_per_s"]["count"] == 0:
        f.append(f"{split} bandwidths split by placement, the messages have {measured}")
    if not re.search(r"^\s+2 hosts: h1 \(2 ranks: 0-1\), h2 \(1 rank: 2\)$", report.stdout,
                     re.M) or \
            not re.search(rf"^\s+inter-host\s+{inter_want}\s+{inter_want * 64}\s", report.stdout,
                          re.M):
        f.append("the text does not list the hosts or the inter-host row")
    return f


def case_node_local(c):
    scratch = os.path.join(c.work, "scratch")
    os.mkdir(scratch)
    hosts = {"h1": 0.0, "h2": 0.0, "h3": 0.0}
    run, trace_dir = c.run("node_local", hosts, 2, 6, [c.opts.ring], scratch=scratch)
    f = [] if run.returncode == 0 else [f"the program exited {run.returncode}"]
    said = re.search(r"perusetrace: the trace directory (\S+) is not the same directory on "
                     r"every host: (\d+) rank\(s\) on (.*?) do not see", run.stderr)
    if not said:
        return f + ["no message saying the trace directory differs between hosts"]
    if said.group(1) != trace_dir or said.group(2) != "4" or said.group(3).strip() != "h2, h3":
        f.append(f"the message names {said.groups()}, expected {trace_dir}, 4 ranks, h2, h3")
    if "MPITRACE_OUTPUT" not in run.stderr or "runs untraced" not in run.stderr:
        f.append("the message does not say what to set, or that the run goes untraced")
    if "expect messages" not in run.stdout:
        f.append("the program did not run to its end")
    if os.listdir(scratch):
        f.append(f"the shared file system's {scratch} got {os.listdir(scratch)}")
    return f


def case_known_counts(c):
    """The exact-count program (tests/apps/known_counts.c) on 2 hosts, the second's clock 3000 s
    behind: every message, collective and communicator counted exactly, none backwards."""
    hosts = {"h1": 0.0, "h2": -3000.0}
    run, _, trace, f = c.traced("known_counts", hosts, 2, 4, [c.opts.known_counts],
                                {"MPITRACE_PERUSE_EVENTS": "all"})
    return f + trace_checks.check_known_counts(trace, run) + offsets_as_configured(trace, hosts, 2)


def case_clock_repair(c):
    """Rank 3 (not its host's clock leader) has its clock moved 20 ms back behind the tracer's
    back (tests/apps/clock_shift.c): its host's offset, measured by rank 2, does not fit it, so
    messages to it arrive before they were sent. `perusetrace report`, `perusetrace prv` and
    `perusetrace export --perfetto` must say so and move those receives after their sends (the
    controlled logical clock)."""
    shift_ms = 20
    hosts = {"h1": 0.0, "h2": 700.0}
    run, trace_dir, trace, f = c.traced(
        "clock_repair", hosts, 2, 4, [c.opts.ring],
        {"MPITRACE_PERUSE_EVENTS": "all", "MPITRACE_CLOCK": "monotonic",
         "LD_PRELOAD": f"{c.opts.clock_shift}:{c.opts.preload}",
         "CLOCK_SHIFT_RANK": "3", "CLOCK_SHIFT_NS": str(-shift_ms * 10**6)})
    broken = trace_checks.clock_condition(trace)
    print(f"the archive itself: {broken}")
    if not broken:
        return f + ["the shifted clock broke no message: the test cannot see the repair"]
    backwards = int(re.match(r"(\d+) of", broken[0]).group(1))

    report = subprocess.run([c.opts.perusetrace, "report", trace_dir, "--json",
                             trace_dir + ".json"], capture_output=True, text=True)
    print(report.stdout[:1500])
    if report.returncode != 0:
        return f + [f"perusetrace report failed: {report.stderr}"]
    with open(trace_dir + ".json") as js:
        cc = json.load(js)["clock_condition"]
    print(f"report: {cc}")
    if cc["backwards"] != backwards or not 0 < cc["repaired"] <= backwards:
        f.append(f"the report counts {cc['backwards']} backwards messages and {cc['repaired']} "
                 f"moved, the archive has {backwards} backwards")
    if cc["worst_receiver"] != 3 or not 0.5 * shift_ms * 1e6 <= cc["worst_ns"] <= shift_ms * 1e6:
        f.append(f"the worst gap is {cc['worst_ns'] / 1e6:.3f} ms to rank "
                 f"{cc['worst_receiver']}, expected up to {shift_ms} ms to rank 3")
    if not 0 < cc["max_move_ns"] <= shift_ms * 1e6:
        f.append(f"the largest move is {cc['max_move_ns'] / 1e6:.3f} ms, the clock was moved "
                 f"{shift_ms} ms")
    if "controlled logical clock" not in report.stdout:
        f.append("the report's text does not say the receives were moved")

    prefix = trace_dir + "-prv"
    prv = subprocess.run([c.opts.perusetrace, "prv", trace_dir, "-o", prefix],
                         capture_output=True, text=True)
    print(prv.stderr)
    if prv.returncode != 0:
        return f + [f"perusetrace prv failed: {prv.stderr}"]
    said = re.search(r"(\d+) of (\d+) messages were received before they were sent.*?(\d+) "
                     r"receives, each with the later events of its thread, were moved",
                     prv.stderr, re.S)
    if not said or int(said.group(1)) != backwards or int(said.group(3)) != cc["repaired"]:
        f.append(f"perusetrace prv did not say it found {backwards} backwards receives and moved "
                 f"{cc['repaired']}")
    # In parallel the conversion cannot move receives (a replay over every rank): it says so,
    # and leaves no file behind.
    prefix_np = trace_dir + "-prv-np2"
    parallel = subprocess.run([c.opts.perusetrace, "prv", trace_dir, "-o", prefix_np, "--np",
                               "2"], capture_output=True, text=True)
    print(f"prv --np 2: exit {parallel.returncode}: {parallel.stderr.strip()}")
    left = [x for x in os.listdir(os.path.dirname(prefix_np))
            if x.startswith(os.path.basename(prefix_np))]
    if parallel.returncode != 1 or "Convert without --np" not in parallel.stderr or left:
        f.append(f"prv --np 2 on an archive that needs the clock repair: exit "
                 f"{parallel.returncode} (expected 1, saying to convert without --np), left "
                 f"{left}: {parallel.stderr[-800:]!r}")
    exported_np = trace_dir + "-np2.perfetto.json"
    parallel = subprocess.run([c.opts.perusetrace, "export", "--perfetto", trace_dir, "-o",
                               exported_np, "--np", "2"], capture_output=True, text=True)
    print(f"export --np 2: exit {parallel.returncode}: {parallel.stderr.strip()}")
    left = [x for x in os.listdir(os.path.dirname(exported_np))
            if x.startswith(os.path.basename(exported_np))]
    if parallel.returncode != 1 or "Export without --np" not in parallel.stderr or left:
        f.append(f"export --np 2 on an archive that needs the clock repair: exit "
                 f"{parallel.returncode} (expected 1, saying to export without --np), left "
                 f"{left}: {parallel.stderr[-800:]!r}")
    late = []

    def collect(v):
        # Logical send and receive of a communication record: a receive may end a little before
        # the send's MpiIsend (written when MPI_Isend returns), never by the shift.
        if v[0] == 3 and v[11] + 1_000_000 < v[5]:
            late.append((v[3], v[9], v[5] - v[11]))
    failures, _ = prv_check.check(prefix, collect)
    f += [f"prv: {x}" for x in failures]
    if late:
        f.append(f"{len(late)} communication records still receive more than 1 ms before they "
                 f"send, e.g. {late[:3]}")

    # The Perfetto export moves the same receives: no arrow goes back by the shift, the
    # structure holds on every track, and each rank's process names its own host.
    exported = subprocess.run([c.opts.perusetrace, "export", "--perfetto", trace_dir, "-o",
                               trace_dir + ".json"], capture_output=True, text=True)
    print(exported.stderr)
    said = re.search(r"(\d+) of (\d+) messages were received before they were sent.*?(\d+) "
                     r"receives, each with the later events of its thread, were moved",
                     exported.stderr, re.S)
    if exported.returncode != 0 or not said or int(said.group(3)) != cc["repaired"]:
        return f + [f"export --perfetto did not say it moved {cc['repaired']} receives: "
                    f"{exported.stderr}"]
    with open(trace_dir + ".json") as js:
        events = json.load(js)["traceEvents"]
    failures, flows = export_test.structure(events, flow_slack_us=1000)
    f += [f"export: {x}" for x in failures[:5]]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    hosts = {rank: trace.hosts[rank] for rank in range(4)}
    if names != {r + 1: f"rank {r} ({h})" for r, h in hosts.items()} or \
            len(set(hosts.values())) != 2:
        f.append(f"export: processes named {names}, the ranks' hosts are {hosts}")
    if len(flows) != len(trace.of_kind("MpiSend")) + len(trace.of_kind("MpiIsend")):
        f.append(f"export: {len(flows)} messages, the archive has "
                 f"{len(trace.of_kind('MpiSend')) + len(trace.of_kind('MpiIsend'))} sends")
    return f


def case_wait_states(c):
    """tests/apps/wait_states' late sender, late receiver and barrier on 4 ranks over 2 hosts
    whose clocks are 5000 s apart, ranks placed round-robin (0 and 2 on h1, 1 and 3 on h2), so
    every wait crosses hosts: the same answers as on one host (wait_state_test.py's), within
    its tolerance plus the clocks' measured error."""
    hosts = {"h1": 0.0, "h2": 5000.0}
    f = []
    for scenario in ("late_sender", "late_receiver", "barrier"):
        run, trace_dir, trace, g = c.traced(
            scenario, hosts, 2, 4, ["--map-by", "node", c.opts.wait_states,
                                    scenario.replace("_", "-"), str(wait_state_test.DELAY_MS)],
            # Waiting ranks yield their core, as in wait_state_test.py.
            {"OMPI_MCA_mpi_yield_when_idle": "1"})
        f += g + offsets_as_configured(trace, hosts, 2)
        path = trace_dir + ".json"
        report = subprocess.run([c.opts.perusetrace, "report", trace_dir, "--json", path],
                                capture_output=True, text=True)
        if report.returncode != 0:
            f.append(f"perusetrace report failed: {report.stderr}")
            continue
        with open(path) as js:
            data = json.load(js)
        f += [f"{scenario}: {e}" for e in wait_state_test.check_patterns(data, scenario)]
        f += [f"{scenario}: {e}" for e in wait_checks.invariant(data)]
        w = data["wait_states"]["patterns"]
        print(f"{scenario} across hosts: " + ", ".join(
            f"{k} {[round(x / 1e6, 3) for x in p['ranks_ns']]} ms" for k, p in w.items()
            if p["total_ns"]))
    return f


def case_parallel_profile(c):
    """A ring sampled at 1 kHz on 4 ranks, then `perusetrace-analyze profile` as 4 analysis
    ranks on 2 hosts (2 each): the same JSON as one process, every analysis rank on the host
    its slot is on, every event read once. `perusetrace-analyze prv` the same way: the records
    of one process's conversion (parallel_conversion_test's comparison), the messages between the
    hosts' ranks included."""
    hosts = {"h1": 0.0, "h2": 0.0}
    _, trace_dir, _, f = c.traced("ring", hosts, 2, 4, [c.opts.ring],
                                  {"MPITRACE_SAMPLING": "1ms"})
    single = subprocess.run([c.opts.perusetrace, "profile", "-q", trace_dir, "--json",
                             trace_dir + ".single.json"], capture_output=True, text=True)
    if single.returncode != 0:
        return f + [f"perusetrace profile failed: {single.stderr}"]
    analyzer = os.path.join(os.path.dirname(c.opts.perusetrace), "analyze", "perusetrace-analyze")
    stats = trace_dir + ".stats.json"
    run = mpi_launch.run([c.opts.fake_cluster, "--hosts", "h1:0,h2:0", "--slots", "2",
                          "--mpirun", c.opts.mpirun, "--", "-np", "4", analyzer, "profile", "-q",
                          trace_dir, "--json", trace_dir + ".np4.json", "--analysis-stats",
                          stats], timeout=RUN_TIMEOUT, cwd=c.work)
    print(run.stdout, run.stderr)
    if run.returncode != 0:
        return f + [f"the analysis job failed ({run.returncode}): {run.stderr[-1500:]}"]
    with open(trace_dir + ".single.json") as a, open(trace_dir + ".np4.json") as b:
        want, got = json.load(a), json.load(b)
    if got.pop("analysis_ranks") != 4 or want.pop("analysis_ranks") != 1 or got != want:
        f.append("the profile of 4 analysis ranks on 2 hosts differs from one process's")
    with open(stats) as s:
        ranks = json.load(s)["ranks"]
    print("analysis ranks: " + "; ".join(f"{r['rank']} on {r['host']}: {r['events']} events, "
                                         f"{r['bytes_read']} B read" for r in ranks))
    if [r["host"] for r in ranks] != ["h1", "h1", "h2", "h2"]:
        f.append(f"the analysis ranks ran on {[r['host'] for r in ranks]}, not h1 h1 h2 h2")
    import otf2
    with otf2.reader.open(os.path.join(trace_dir, "traces.otf2")) as t:
        total = sum(loc.number_of_events for loc in t.definitions.locations)
    if sum(r["events"] for r in ranks) != total:
        f.append(f"the analysis ranks read {sum(r['events'] for r in ranks)} events, the "
                 f"archive holds {total}")

    single = subprocess.run([c.opts.perusetrace, "prv", "-q", trace_dir, "-o",
                             trace_dir + "-single"], capture_output=True, text=True)
    if single.returncode != 0:
        return f + [f"perusetrace prv failed: {single.stderr}"]
    run = mpi_launch.run([c.opts.fake_cluster, "--hosts", "h1:0,h2:0", "--slots", "2",
                          "--mpirun", c.opts.mpirun, "--", "-np", "4", analyzer, "prv", "-q",
                          trace_dir, "-o", trace_dir + "-np4", "--analysis-stats", stats],
                         timeout=RUN_TIMEOUT, cwd=c.work)
    if run.returncode != 0:
        return f + [f"the prv job failed ({run.returncode}): {run.stderr[-1500:]}"]
    f += [f"prv on 2 hosts: {x}" for x in
          parallel_conversion_test.compare("4 ranks", trace_dir + "-single", (trace_dir + "-np4", ".prv"))]
    with open(stats) as s:
        ranks = json.load(s)["ranks"]
    print("prv analysis ranks: " + "; ".join(f"{r['rank']} on {r['host']}: {r['events']} "
                                             f"events, {r['bytes_sent']} B sent" for r in ranks))
    if [r["host"] for r in ranks] != ["h1", "h1", "h2", "h2"]:
        f.append(f"the prv ranks ran on {[r['host'] for r in ranks]}, not h1 h1 h2 h2")

    single = subprocess.run([c.opts.perusetrace, "export", "--perfetto", "-q", trace_dir, "-o",
                             trace_dir + ".single.perfetto.json"], capture_output=True, text=True)
    run = mpi_launch.run([c.opts.fake_cluster, "--hosts", "h1:0,h2:0", "--slots", "2",
                          "--mpirun", c.opts.mpirun, "--", "-np", "4", analyzer, "export",
                          "--perfetto", "-q", trace_dir, "-o", trace_dir + ".np4.perfetto.json"],
                         timeout=RUN_TIMEOUT, cwd=c.work)
    if single.returncode != 0 or run.returncode != 0:
        return f + [f"the exports failed ({single.returncode}, {run.returncode}): "
                    f"{single.stderr[-800:]} {run.stderr[-800:]}"]
    with open(trace_dir + ".single.perfetto.json") as a, \
            open(trace_dir + ".np4.perfetto.json") as b:
        want, got = json.load(a), json.load(b)
    if parallel_conversion_test.canonical_events(want) != \
            parallel_conversion_test.canonical_events(got):
        f.append("the Perfetto export of 4 analysis ranks on 2 hosts has other events than one "
                 "process's")
    return f


CASES = {
    "parallel_profile": case_parallel_profile,
    "wait_states": case_wait_states,
    "clock_repair": case_clock_repair,
    "known_counts": case_known_counts,
    "ring_auto": lambda c: case_ring(c, "auto"),
    "ring_monotonic": lambda c: case_ring(c, "monotonic"),
    "late_sender_ahead": lambda c: case_late_sender(c, 5000.0),
    "late_sender_behind": lambda c: case_late_sender(c, -3000.0),
    "node_local": case_node_local,
    "placement": case_placement,
}


def main():
    parser = argparse.ArgumentParser()
    for name in ("fake-cluster", "mpirun", "preload", "perusetrace", "ring", "scenarios",
                 "clock-shift", "known-counts", "wait-states"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("case", choices=sorted(CASES))
    opts = parser.parse_args()
    for name in ("fake_cluster", "mpirun", "preload", "perusetrace", "ring", "scenarios",
                 "clock_shift", "known_counts", "wait_states"):
        setattr(opts, name, os.path.abspath(getattr(opts, name)))
    # Skipped only when this machine cannot simulate a cluster; a broken check fails.
    cannot_run = mpi_launch.fake_cluster_check(opts.fake_cluster, opts.mpirun)
    if cannot_run:
        print(f"skipped: {cannot_run}")
        sys.exit(SKIP)
    work = tempfile.mkdtemp(prefix="perusetrace-cluster-")
    case_result.finish(f"cluster case '{opts.case}'", CASES[opts.case](Cluster(opts, work)), work)


if __name__ == "__main__":
    main()
