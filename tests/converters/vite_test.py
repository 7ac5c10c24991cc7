#!/usr/bin/python3
"""Traced runs rendered headless by ViTE (Debian's vite 1.2): every message is an arrow between
the right ranks.

    vite_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --scenarios EXE
                 --known-counts EXE CASE

CASE:
  scenarios   each scenario of examples/scenarios on 2 ranks, traced with
              MPITRACE_OTF2_COMMS=vite and exported to SVG by ViTE: as many arrows as the
              archive has MpiSend/MpiIsend events, each from the sender's rank to the
              receiver's, and no "cannot find" warning from ViTE's reader.
  comm_split  tests/apps/known_counts on 4 ranks, which sends in MPI_Comm_split, Cart_sub and
              Intercomm_merge communicators, whose ranks are not world ranks: the same checks,
              the standard layout (the default) traced too: otf2-print reads it without a
              warning, python3-otf2 reads the same messages from both layouts, and
              `perusetrace prv` and `perusetrace report` read the ViTE layout's archive.
Exits 77 (skipped) without /usr/bin/vite (scripts/setup installs it).
"""
import collections
import os
import re
import shutil
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402

SKIP = 77
VITE = "/usr/bin/vite"
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120
# ViTE's SVG export: container boxes left of x = 160, the timeline right of it.
TIMELINE_X = 160.0
NUMBER = r"(-?[0-9.e+-]+)"


class Run:
    def __init__(self, opts, work):
        self.opts, self.work = opts, work

    def trace(self, name, np, command, layout):
        """COMMAND on NP ranks, every Peruse event traced in LAYOUT: (archive, failures)."""
        env = {"MPITRACE_PERUSE_EVENTS": "all", "MPITRACE_OTF2_COMMS": layout}
        run, archive = mpi_launch.traced(self.opts.mpirun, np, command,
                                         os.path.join(self.work, name), self.opts.preload, env,
                                         RUN_TIMEOUT, self.work)
        return (archive, []) if archive else (None, [f"{name}: {mpi_launch.failed(run)}"])

    def vite(self, archive, svg):
        """ViTE's SVG export of ARCHIVE; returns its output (stdout and stderr)."""
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
                   XDG_RUNTIME_DIR=self.work, XDG_CONFIG_HOME=self.work)
        run = subprocess.run([VITE, archive, "-e", svg], env=env, capture_output=True,
                             text=True, timeout=300)
        return run.returncode, run.stdout + run.stderr


def trace_messages(archive):
    """(sender rank, receiver world rank) of every MpiSend/MpiIsend, read by python3-otf2."""
    trace = trace_checks.load(archive)
    out = collections.Counter()
    for (rank, _), events in trace.events.items():
        for e in events:
            if e.kind in ("MpiSend", "MpiIsend"):
                out[(rank, trace_checks.world_rank(e.raw.communicator, e.raw.receiver))] += 1
    return out, trace


def svg_arrows(svg):
    """(sender rank, receiver rank) of every arrow ViTE drew: a <polygon> head, then the
    <line> from the sender's row to the receiver's; a row's rank is that of the "MPI Rank N"
    box whose height spans it."""
    with open(svg) as f:
        text = f.read()
    boxes = []  # (top, bottom, rank)
    rects = [tuple(float(v) for v in m.groups()) for m in re.finditer(
        rf'<rect x="{NUMBER}" y="{NUMBER}" width="{NUMBER}" height="{NUMBER}"', text)]
    for m in re.finditer(rf'<text x="{NUMBER}" y="{NUMBER}"[^>]*>MPI Rank (\d+)_\d+</text>', text):
        x, y, rank = float(m.group(1)), float(m.group(2)), int(m.group(3))
        for rx, ry, rw, rh in rects:
            if rx + rw <= TIMELINE_X + 1 and rx <= x <= rx + rw and ry <= y <= ry + rh:
                boxes.append((ry, ry + rh, rank))
                break

    def rank_at(y):
        found = [r for top, bottom, r in boxes if top <= y <= bottom]
        return found[0] if len(found) == 1 else None

    arrows = collections.Counter()
    lines = re.finditer(rf'<polygon [^>]*/>\s*<line x1="{NUMBER}" y1="{NUMBER}" '
                        rf'x2="{NUMBER}" y2="{NUMBER}"', text)
    for m in lines:
        arrows[(rank_at(float(m.group(2))), rank_at(float(m.group(4))))] += 1
    return arrows, len(re.findall(r"<polygon ", text)), len(boxes)


def check_rendering(run, name, archive):
    """ViTE's arrows against the archive's messages."""
    f = []
    svg = os.path.join(run.work, name + ".svg")
    rc, output = run.vite(archive, svg)
    if rc != 0 or not os.path.exists(svg):
        return [f"{name}: vite exited {rc}: {output.strip()[-2000:]}"], None
    warnings = [l for l in output.splitlines() if "cannot find" in l]
    if warnings:
        f.append(f"{name}: ViTE warned {len(warnings)} times, first: {warnings[0]!r}")
    messages, _ = trace_messages(archive)
    arrows, heads, boxes = svg_arrows(svg)
    sent = sum(messages.values())
    print(f"{name}: {sent} messages, {heads} arrows, {len(warnings)} ViTE warnings")
    if boxes == 0:
        f.append(f"{name}: no 'MPI Rank N' box found in {svg}: has ViTE's SVG changed?")
    if sent == 0:
        f.append(f"{name}: the archive holds no MpiSend/MpiIsend")
    if heads != sent or sum(arrows.values()) != heads:
        f.append(f"{name}: {heads} arrow heads ({sum(arrows.values())} with their line) for "
                 f"{sent} messages")
    if arrows != messages:
        f.append(f"{name}: arrows (sender rank, receiver rank) {dict(arrows)} differ from the "
                 f"archive's messages {dict(messages)}")
    return f, messages


def case_scenarios(run):
    return mpi_launch.each_scenario(
        run.opts.scenarios, lambda name, np, command: run.trace(name, np, command, "vite"),
        lambda name, scenario, archive: check_rendering(run, name, archive)[0])


def case_comm_split(run):
    f = []
    archive, failures = run.trace("vite_layout", 4, [run.opts.known_counts], "vite")
    if failures:
        return failures
    rendered, messages = check_rendering(run, "known_counts", archive)
    f += rendered
    # Messages inside MPI_Comm_split's halves go between world ranks 0 and 2, 1 and 3: a reader
    # that takes a rank of the communicator for a world rank puts them between 0 and 1.
    if messages is not None and not (messages[(0, 2)] and messages[(1, 3)]):
        f.append(f"known_counts: no message 0->2 and 1->3 in the trace: {dict(messages)}")

    standard, failures = run.trace("otf2_layout", 4, [run.opts.known_counts], "otf2")
    if failures:
        return f + failures
    printed = subprocess.run(["otf2-print", standard], capture_output=True, text=True)
    if printed.returncode != 0 or printed.stderr.strip():
        f.append(f"otf2-print on the standard layout: exit {printed.returncode}, "
                 f"{printed.stderr.strip()[:1000]}")
    standard_messages, standard_trace = trace_messages(standard)
    if messages is not None and standard_messages != messages:
        f.append(f"python3-otf2 reads other messages from the two layouts: standard "
                 f"{dict(standard_messages)}, ViTE {dict(messages)}")
    vite_trace = trace_checks.load(archive)
    f += ["ViTE layout: " + x for x in trace_checks.messages_match(vite_trace)]
    f += ["standard layout: " + x for x in trace_checks.messages_match(standard_trace)]

    # perusetrace's own reader: every message finds its partner in the Paraver conversion.
    prefix = os.path.join(run.work, "known_counts")
    prv = subprocess.run([run.opts.perusetrace, "prv", archive, "-o", prefix],
                         capture_output=True, text=True)
    if prv.returncode != 0 or "found no partner" in prv.stderr:
        f.append(f"perusetrace prv on the ViTE layout: exit {prv.returncode}: "
                 f"{prv.stderr.strip()[:1000]}")
    report = subprocess.run([run.opts.perusetrace, "report", archive, "-q", "--json",
                             os.path.join(run.work, "report.json")],
                            capture_output=True, text=True)
    if report.returncode != 0:
        f.append(f"perusetrace report on the ViTE layout: exit {report.returncode}: "
                 f"{report.stderr.strip()[:1000]}")
    return f


CASES = {"scenarios": case_scenarios, "comm_split": case_comm_split}


def prepare(opts):
    if not os.access(VITE, os.X_OK) or shutil.which("otf2-print") is None:
        print(f"skipped: needs {VITE} and otf2-print (scripts/setup installs vite and otf2-tools)")
        sys.exit(SKIP)


if __name__ == "__main__":
    case_result.run_listing_case(
        CASES, "vite", ["mpirun", "preload", "perusetrace", "scenarios", "known-counts"],
        lambda case, opts, work: case(Run(opts, work)), keep=True, prepare=prepare)
