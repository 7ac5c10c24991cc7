#!/usr/bin/python3
"""Dynamic processes (lib/spawn.hpp): a traced job that spawns children, on real ranks.

    spawn_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --app SPAWN CASE

tests/apps/spawn: the parent job spawns two children of the same program; over the
intercommunicator each parent sends each child 3 messages (tag 10) and receives 2 from each
(tag 20), both sides meet in one MPI_Barrier on it; the children send each other 4 messages
each way (tag 30) in their own MPI_COMM_WORLD. CASE:
  single             1 parent (MPI_Comm_spawn): the parent's archive in DIR, the children's in
                     DIR/spawn-1 (no DIR.1, no "already exists"), both read by otf2-print
                     (under valgrind) without a word on stderr and by python3-otf2: on each side
                     the intercommunicator is a Comm over this job's ranks and the other job's
                     processes (location groups "spawn-1 MPI Rank c" / "parent MPI Rank p", whose
                     one event is measurement off at the trace's start, named by the
                     PERUSETRACE::MPI_JOBS property), every message across it counted exactly
                     per (sender, receiver, tag) on both sides, its Peruse receive events naming
                     the other job's rank as -2 - rank, the children's own messages matched in
                     their archive; `perusetrace report --json` counts the traffic with the other
                     job (and finds its archive), `perusetrace prv` and `export --perfetto`
                     convert each archive with this job's own messages and name the other.
  multiple           the same with 2 parents, MPI_Comm_spawn_multiple (one command per child) and
                     the last parent rank as root: the children's intercommunicator names both
                     parents' world ranks.
  untraced_children  the spawn's own info asks for "LD_PRELOAD=" (kept beside the tracer's
                     addition): the children run untraced, the parent is not held up, its archive
                     names spawn-1/traces.otf2, which the report says is not found, and DIR/spawn-1
                     holds only the parent's note.
  recover            the children leave with exit() after disconnecting, without MPI_Finalize:
                     their journal stays in DIR/spawn-1 (and the parent's in DIR when mpirun
                     stopped it inside MPI_Finalize; the parent's report says to recover the
                     children's), and `perusetrace recover` makes archives
                     with the same intercommunicator, other-job processes and message counts as
                     in `single`.
  long_path          MPITRACE_OUTPUT's absolute path too long for the spawn's "env" (255
                     characters): the parent says so once and leaves no DIR/spawn-1; the children
                     trace as a run of their own (DIR.1, their inherited MPITRACE_OUTPUT); each
                     archive still names the other job, its archive not known.
  nested             the 2 children spawn 2 children of their own: their archive in
                     DIR/spawn-1/spawn-1, and the children's archive names both other jobs (its
                     parent, its spawn-1) with every message to each counted.
"""
import collections
import json
import os
import re
import subprocess
import sys

import otf2

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import prv_check  # noqa: E402
import report_test  # noqa: E402
import trace_checks  # noqa: E402

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                      "report.schema.json")
CHILDREN, TO_CHILD, TO_PARENT, AMONG, BYTES = 2, 3, 2, 4, 32  # tests/apps/spawn.c
INTER_NAME = {"parent": "MPI_Comm_spawn", "child": "MPI_COMM_PARENT"}
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120


def run(opts, work, parents, args, trace=None):
    trace = trace or os.path.join(work, "trace")
    env = {"MPITRACE_OUTPUT": trace}
    command = mpi_launch.command(opts.mpirun, parents, env, opts.preload)
    done = mpi_launch.run(command + [opts.app, *args], timeout=RUN_TIMEOUT,
                          env=mpi_launch.launcher_env(env), cwd=work)
    return done, trace


def otf2_print(archive):
    """otf2-print reads the archive without a word on stderr, under valgrind: OTF2 3.0.2's global
    event reader reads freed memory for a location without events (otf2_writer/internal.hpp,
    kOtherJobEvents), which otherwise crashes readers only now and then."""
    printed = subprocess.run(["valgrind", "-q", "--error-exitcode=99", "otf2-print", archive],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             timeout=600)
    failures = []
    if printed.returncode != 0 or printed.stderr.strip():
        failures.append(f"otf2-print {archive}: exit {printed.returncode}, stderr "
                        f"{printed.stderr.strip()[:400]!r}")
    return failures


def job_of(location):
    """(job, rank): ("", r) for a rank of the archive's own job, (NAME, r) for another job's."""
    name = location.group.name
    m = re.match(r"^(?:(\S+) )?MPI Rank (\d+)$", name)
    return (m.group(1) or "", int(m.group(2)))


def member(comm, rank_in_comm):
    return job_of(comm.group.members[rank_in_comm])


def message_counts(trace):
    """(kind, rank, (job, peer), tag, bytes) -> how many, of every point-to-point record."""
    counts = collections.Counter()
    for (rank, _), events in trace.events.items():
        for e in events:
            r = e.raw
            if e.kind in ("MpiSend", "MpiIsend"):
                counts[(e.kind, rank, member(r.communicator, r.receiver), r.msg_tag,
                        r.msg_length)] += 1
            elif e.kind in ("MpiRecv", "MpiIrecv"):
                counts[(e.kind, rank, member(r.communicator, r.sender), r.msg_tag,
                        r.msg_length)] += 1
    return counts


def archive_side(archive, side, parents):
    """What one archive says: (failures, per-kind message counter, its trace)."""
    other = "spawn-1" if side == "parent" else "parent"
    mine, theirs = (parents, CHILDREN) if side == "parent" else (CHILDREN, parents)
    f = otf2_print(archive)
    trace = trace_checks.load(archive)
    expected_jobs = (f"job={other};relation={'spawned' if side == 'parent' else 'parent'};"
                     f"archive={'spawn-1/traces.otf2' if side == 'parent' else '../traces.otf2'};"
                     f"first_group={mine};ranks={','.join(str(r) for r in range(theirs))}")
    jobs = trace.properties.get("PERUSETRACE::MPI_JOBS")
    if jobs != expected_jobs:
        f.append(f"{side}: PERUSETRACE::MPI_JOBS is {jobs!r}, expected {expected_jobs!r}")
    # The intercommunicator: this job's ranks, then the other job's processes.
    inter = [c for c in trace.comms if INTER_NAME[side] in c.name]
    if len(inter) != 1:
        return f + [f"{side}: {len(inter)} intercommunicators named {INTER_NAME[side]}: "
                    f"{[c.name for c in trace.comms]}"], None, trace
    members = [member(inter[0], i) for i in range(len(inter[0].group.members))]
    want = [("", r) for r in range(mine)] + [(other, r) for r in range(theirs)]
    if members != want:
        f.append(f"{side}: the intercommunicator's members are {members}, expected {want}")
    # Each of the other job's processes holds one event: measurement off from the trace's start.
    names = sorted(f"{other} MPI Rank {r}" for r in range(theirs))
    if sorted(trace.other_jobs) != names:
        f.append(f"{side}: the other job's processes are {sorted(trace.other_jobs)}, expected "
                 f"{names}")
    for name, events in trace.other_jobs.items():
        off = [e for e in events if isinstance(e, otf2.events.MeasurementOnOff)
               and e.measurement_mode == otf2.MeasurementMode.OFF
               and e.time == trace.global_offset]
        if len(events) != 1 or len(off) != 1:
            f.append(f"{side}: {name} (another job's process) has events {events}, expected one "
                     f"MeasurementOnOff OFF at the trace's start")
    counts = message_counts(trace)
    peruse_peers = collections.Counter()
    barriers = 0
    for (rank, _), events in trace.events.items():
        for e in events:
            r = e.raw
            if e.kind == "MpiCollectiveEnd" and r.communicator.name == inter[0].name:
                barriers += 1
            elif (e.kind == "Peruse" and e.name == "REQ_ACTIVATE" and e.attrs["operation"] == 1
                  and e.attrs["tag"] >= 0 and e.attrs["comm"] is not None
                  and e.attrs["comm"].name == inter[0].name):
                peruse_peers[(rank, e.attrs["peer"])] += 1
    if barriers != mine:
        f.append(f"{side}: {barriers} MPI_Barrier ends on the intercommunicator, expected {mine}")
    # Every receive posted on the intercommunicator names the other job's rank as -2 - rank.
    per_peer = TO_CHILD if side == "child" else TO_PARENT
    want_peers = {(r, -2 - p): per_peer for r in range(mine) for p in range(theirs)}
    if dict(peruse_peers) != want_peers:
        f.append(f"{side}: receives' REQ_ACTIVATE (rank, peer) on the intercommunicator "
                 f"{dict(peruse_peers)}, expected {want_peers}")
    return f, counts, trace


def expected_counts(side, parents):
    c = collections.Counter()
    if side == "parent":
        for p in range(parents):
            for k in range(CHILDREN):
                c[("MpiSend", p, ("spawn-1", k), 10, BYTES)] = TO_CHILD
                c[("MpiIrecv", p, ("spawn-1", k), 20, BYTES)] = TO_PARENT
    else:
        for k in range(CHILDREN):
            for p in range(parents):
                c[("MpiRecv", k, ("parent", p), 10, BYTES)] = TO_CHILD
                c[("MpiIsend", k, ("parent", p), 20, BYTES)] = TO_PARENT
            other = (k + 1) % CHILDREN
            c[("MpiSend", k, ("", other), 30, BYTES)] = AMONG
            c[("MpiRecv", k, ("", other), 30, BYTES)] = AMONG
    return c


def report_jobs(opts, work, archive, name):
    path = os.path.join(work, f"report-{name}.json")
    done = subprocess.run([opts.perusetrace, "report", archive, "--json", path, "-q"],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return [f"report {archive}: exit {done.returncode}: {done.stderr[:400]}"], None, ""
    with open(path) as f:
        data = json.load(f)
    with open(SCHEMA) as f:
        schema = json.load(f)
    problems = report_test.validate(data, schema, schema)
    return [f"report {archive}: {p}" for p in problems[:5]], data, done.stdout


def check_report(opts, work, trace_dir, parents):
    f = []
    parent_archive = os.path.join(trace_dir, "traces.otf2")
    child_archive = os.path.join(trace_dir, "spawn-1", "traces.otf2")
    for side, archive, other, other_archive, sent, received, matrix in (
            ("parent", parent_archive, "spawn-1", child_archive,
             parents * CHILDREN * TO_CHILD, parents * CHILDREN * TO_PARENT,
             [[0] * parents for _ in range(parents)]),
            ("child", child_archive, "parent", parent_archive,
             CHILDREN * parents * TO_PARENT, CHILDREN * parents * TO_CHILD,
             [[0, AMONG], [AMONG, 0]])):
        problems, data, text = report_jobs(opts, work, archive, side)
        f += problems
        if data is None:
            continue
        want = [{"name": other, "relation": "spawned" if side == "parent" else "parent",
                 "archive": other_archive, "archive_found": True,
                 "processes": CHILDREN if side == "parent" else parents, "sent": sent,
                 "sent_bytes": sent * BYTES, "received": received,
                 "received_bytes": received * BYTES}]
        if data["jobs"] != want:
            f.append(f"report {side}: jobs {data['jobs']}, expected {want}")
        if data["matrix"]["messages"] != matrix:
            f.append(f"report {side}: matrix {data['matrix']['messages']}, expected {matrix}")
        if f"{other}: " not in text or other_archive not in text:
            f.append(f"report {side}: the text does not name {other} and {other_archive}")
        prefix = os.path.join(work, f"prv-{side}")
        done = subprocess.run([opts.perusetrace, "prv", archive, "-o", prefix], text=True,
                              capture_output=True, timeout=300)
        if done.returncode != 0 or other_archive not in done.stderr:
            f.append(f"prv {side}: exit {done.returncode}, stderr does not name "
                     f"{other_archive}: {done.stderr[:400]}")
            continue
        prv_failures, summary = prv_check.check(prefix)
        f += [f"prv {side}: {p}" for p in prv_failures]
        comms = 0 if side == "parent" else CHILDREN * AMONG
        if summary["comms"] != comms:
            f.append(f"prv {side}: {summary['comms']} communication records, expected {comms}")
        across = (sent + received) if side == "parent" else CHILDREN * parents * (TO_CHILD +
                                                                                  TO_PARENT)
        if f"; {across} sends and receives with the others" not in done.stderr:
            f.append(f"prv {side}: does not count {across} sends and receives with the other "
                     f"job: {done.stderr[:400]}")
        # The Perfetto export: arrows for this job's own messages only, the others named.
        out = os.path.join(work, f"export-{side}.json")
        done = subprocess.run([opts.perusetrace, "export", "--perfetto", archive, "-o", out, "-q"],
                              text=True, capture_output=True, timeout=300)
        if (done.returncode != 0 or f"{across} sends and receives with other MPI jobs have no "
                f"arrow" not in done.stderr or other_archive not in done.stderr):
            f.append(f"export {side}: exit {done.returncode}: {done.stderr[:400]}")
        else:
            with open(out) as j:
                flows = sum(1 for e in json.load(j)["traceEvents"] if e.get("ph") == "s")
            if flows != comms:
                f.append(f"export {side}: {flows} message arrows, expected {comms}")
    return f


def spawned(opts, work, parents, mode):
    done, trace_dir = run(opts, work, parents, [mode])
    f = []
    if done.returncode != 0:
        return [f"the run exited {done.returncode}: {done.stderr[-800:]}"]
    for line in (f"spawn parent ranks {parents} children {CHILDREN} to_child {TO_CHILD} "
                 f"to_parent {TO_PARENT}", f"spawn child ranks {CHILDREN} parents {parents} "
                 f"among {AMONG}"):
        if line not in done.stdout:
            f.append(f"the program did not print {line!r}: {done.stdout!r}")
    if "already exists" in done.stderr or os.path.exists(trace_dir + ".1"):
        f.append(f"the children wrote a trace of their own next to the parent's: {done.stderr}")
    for side, archive in (("parent", os.path.join(trace_dir, "traces.otf2")),
                          ("child", os.path.join(trace_dir, "spawn-1", "traces.otf2"))):
        if not os.path.exists(archive):
            f.append(f"no {side} archive at {archive}")
            continue
        problems, counts, trace = archive_side(archive, side, parents)
        f += problems
        if counts is None:
            continue
        want = expected_counts(side, parents)
        if counts != want:
            f.append(f"{side}: messages {dict(counts)}, expected {dict(want)} (missing "
                     f"{dict(want - counts)}, extra {dict(counts - want)})")
        if side == "child":  # the children's own messages pair up in their archive
            own = trace_checks.Trace()
            own.events = {k: [e for e in v if e.kind not in ("MpiRecv", "MpiIsend")
                              or e.raw.communicator.name == "MPI_COMM_WORLD"]
                          for k, v in trace.events.items()}
            own.clock_resolution, own.global_offset = trace.clock_resolution, trace.global_offset
            own.trace_length = trace.trace_length
            f += [f"child: {p}" for p in trace_checks.messages_match(own)]
    if not f:
        f += check_report(opts, work, trace_dir, parents)
    return f


def case_single(opts, work):
    return spawned(opts, work, 1, "single")


def case_multiple(opts, work):
    return spawned(opts, work, 2, "multiple")


def case_untraced_children(opts, work):
    done, trace_dir = run(opts, work, 1, ["single", "untraced-children"])
    f = []
    if done.returncode != 0:
        return [f"the run exited {done.returncode}: {done.stderr[-800:]}"]
    archive = os.path.join(trace_dir, "traces.otf2")
    f += otf2_print(archive)
    spawn_dir = os.path.join(trace_dir, "spawn-1")
    left = sorted(os.listdir(spawn_dir)) if os.path.isdir(spawn_dir) else None
    if left != [".perusetrace-spawn"]:
        f.append(f"{spawn_dir} holds {left}, expected the parent's note alone")
    problems, data, text = report_jobs(opts, work, archive, "parent")
    f += problems
    if data is not None:
        job = data["jobs"][0] if len(data["jobs"]) == 1 else {}
        if (job.get("name"), job.get("archive_found"), job.get("sent")) != \
                ("spawn-1", False, CHILDREN * TO_CHILD):
            f.append(f"report: jobs {data['jobs']}")
        if "not found" not in text:
            f.append("the report does not say the children's archive is not found")
    return f


def case_recover(opts, work):
    done, trace_dir = run(opts, work, 1, ["single", "children-exit"])
    if done.returncode is None:
        return [f"the run hung: {done.stderr[-800:]}"]
    if "spawn child ranks" not in done.stdout:
        return [f"the children did not finish their part: {done.stdout!r} {done.stderr[-800:]}"]
    f = []
    spawn_dir = os.path.join(trace_dir, "spawn-1")
    # mpirun ends the whole run once the children left without MPI_Finalize: the parent may be
    # stopped inside its own MPI_Finalize, before its archive was whole. Either journal left
    # behind is recovered; the children's always is.
    for side, directory in (("parent", trace_dir), ("child", spawn_dir)):
        if not os.path.isdir(os.path.join(directory, "journal")):
            if side == "child":
                f.append(f"no journal in {spawn_dir}: {os.listdir(spawn_dir)}")
            continue
        if side == "child":  # the parent's report sends the user to the children's journal
            text = subprocess.run([opts.perusetrace, "report", trace_dir, "-q"],
                                  capture_output=True, text=True, timeout=300).stdout
            if f"run `perusetrace recover {spawn_dir}`" not in text:
                f.append(f"the parent's report does not say to recover {spawn_dir}: "
                         f"{[l for l in text.splitlines() if 'spawn-1' in l]}")
        recovered = subprocess.run([opts.perusetrace, "recover", directory],
                                   capture_output=True, text=True, timeout=300)
        if recovered.returncode != 0:
            f.append(f"recover {directory} exited {recovered.returncode}: "
                     f"{recovered.stderr[:400]}")
    if f:
        return f
    for side, directory in (("parent", trace_dir), ("child", spawn_dir)):
        problems, counts, _ = archive_side(os.path.join(directory, "traces.otf2"), side, 1)
        f += problems
        want = expected_counts(side, 1)
        if counts is not None and counts != want:
            f.append(f"{side}: messages {dict(counts)}, expected {dict(want)}")
    return f


def case_nested(opts, work):
    # On Open MPI 5 this also checks that the tracer ends its MPI_T session before MPI_Finalize:
    # otherwise the top parent exits with its TCP connections still open and its children, still
    # running, abort with "Socket closed" (lib/mpit_variables.hpp).
    done, trace_dir = run(opts, work, 1, ["single", "nested"])
    if done.returncode != 0:
        return [f"the run exited {done.returncode}: {done.stderr[-800:]}"]
    f = []
    middle = os.path.join(trace_dir, "spawn-1")
    problems, counts, _ = archive_side(os.path.join(trace_dir, "traces.otf2"), "parent", 1)
    f += problems
    if counts is not None and counts != expected_counts("parent", 1):
        f.append(f"parent: messages {dict(counts)}")
    # The grandchildren: children of the 2 children, in DIR/spawn-1/spawn-1.
    problems, counts, _ = archive_side(os.path.join(middle, "spawn-1", "traces.otf2"), "child", 2)
    f += problems
    if counts is not None and counts != expected_counts("child", 2):
        f.append(f"grandchildren: messages {dict(counts)}")
    # The children: a child of the parent and the parent of the grandchildren.
    archive = os.path.join(middle, "traces.otf2")
    f += otf2_print(archive)
    trace = trace_checks.load(archive)
    want = ("job=parent;relation=parent;archive=../traces.otf2;first_group=2;ranks=0 "
            "job=spawn-1;relation=spawned;archive=spawn-1/traces.otf2;first_group=3;ranks=0,1")
    if trace.properties.get("PERUSETRACE::MPI_JOBS") != want:
        f.append(f"children: PERUSETRACE::MPI_JOBS {trace.properties.get('PERUSETRACE::MPI_JOBS')!r},"
                 f" expected {want!r}")
    counts, want = message_counts(trace), expected_counts("child", 1) + expected_counts("parent", 2)
    if counts != want:
        f.append(f"children: messages {dict(counts)}, expected {dict(want)}")
    return f


def case_long_path(opts, work):
    # An absolute trace path longer than Open MPI's 255 characters of "env" cannot be passed on.
    deep = os.path.join(work, "d" * 200, "trace")
    os.makedirs(os.path.dirname(deep))
    done, trace_dir = run(opts, work, 1, ["single"], trace=deep)
    if done.returncode != 0:
        return [f"the run exited {done.returncode}: {done.stderr[-800:]}"]
    f = []
    if done.stderr.count("are traced as a run of their own") != 1 or "does not fit" not in done.stderr:
        f.append(f"the parent did not say once why its children trace on their own: "
                 f"{done.stderr[-800:]}")
    if os.path.exists(os.path.join(trace_dir, "spawn-1")):
        f.append("DIR/spawn-1 was left behind")
    children = trace_dir + ".1"  # their inherited MPITRACE_OUTPUT, taken: the next one
    for archive, want in ((os.path.join(trace_dir, "traces.otf2"),
                           "job=remote-2;relation=spawned;archive=-;first_group=1;ranks=0,1"),
                          (os.path.join(children, "traces.otf2"),
                           "job=parent;relation=parent;archive=-;first_group=2;ranks=0")):
        if not os.path.exists(archive):
            f.append(f"no archive at {archive}")
            continue
        f += otf2_print(archive)
        jobs = trace_checks.load(archive).properties.get("PERUSETRACE::MPI_JOBS")
        if jobs != want:
            f.append(f"{archive}: PERUSETRACE::MPI_JOBS {jobs!r}, expected {want!r}")
    return f


def main():
    case_result.run_listing_case(case_result.cases_of(globals()), "spawn",
                                 ["mpirun", "preload", "perusetrace", "app"])


if __name__ == "__main__":
    main()
