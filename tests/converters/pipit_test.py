#!/usr/bin/python3
"""Traced runs read by pipit (hpcgroup's trace analysis library), unmodified:
`pipit.Trace.from_otf2(DIR)` loads the archive, its message matrix equals the known one, and the
Peruse counters come out as metric columns.

    pipit_test.py --mpirun MPIRUN --preload LIB --scenarios EXE --ring EXE CASE

CASE:
  scenarios  each scenario of examples/scenarios on 2 ranks with every Peruse event: pipit's
             comm_matrix (counts and bytes) equals the MpiSend/MpiIsend events python3-otf2
             reads, every message goes from rank 0 to rank 1, and the late receiver's
             "unexpected queue depth" column reaches 1.
  ring       tests/apps/ring on 4 ranks, 40 iterations of 64 bytes, every Peruse event: pipit's
             matrix is the ring's (80 messages to the right neighbour, 40 to the left, 64 bytes
             each), and each counter column holds as many values as the archive has counter
             events.

pipit is not packaged: its source is the tarball `pipit-05d95634b225.tar.xz`, found through
MPITRACE_PIPIT_TARBALL or in ../shared/deps beside the checkout (.ci/run sets it), checked against the SHA-256
below and unpacked into the build directory. Without it (or without python3-pandas) the test is
skipped (77) and says what is missing.
"""
import collections
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402

SKIP = 77
TARBALL = "pipit-05d95634b225.tar.xz"
COUNTERS = ["posted queue depth", "unexpected queue depth", "bytes in flight"]
# A run still going after this is a hang: its stacks are printed before meson's 600 s are up.
RUN_TIMEOUT = 120
RING_RANKS, RING_ITERATIONS, RING_BYTES = 4, 40, 64


def skip(why):
    print(f"skipped: {why}")
    sys.exit(SKIP)


def pipit_source(build):
    """The directory to put on PYTHONPATH for pipit, unpacked once into `build`."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tarball = os.environ.get("MPITRACE_PIPIT_TARBALL") or os.path.join(
        repo, "..", "shared", "deps", TARBALL)
    if not os.path.exists(tarball):
        skip(f"pipit's source {tarball} not found: set MPITRACE_PIPIT_TARBALL to its path")
    sums = os.path.join(os.path.dirname(tarball), "SHA256SUMS")
    want = None
    if os.path.exists(sums):
        with open(sums) as f:
            want = next((line.split()[0] for line in f if line.split()[-1:] == [TARBALL]), None)
    with open(tarball, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if want is None or got != want:
        sys.exit(f"{tarball}: SHA-256 {got} does not match SHA256SUMS ({want}): "
                 "use the verified copy of ../shared/deps")
    target = os.path.join(build, "pipit-" + got[:12])
    if not os.path.isdir(target):
        # Unpacked beside and renamed, so an interrupted unpacking is never taken for a whole one
        # (the tarball is checksummed: its member paths are trusted).
        partial = tempfile.mkdtemp(dir=build, prefix="pipit-unpacking-")
        with tarfile.open(tarball) as t:
            t.extractall(partial)
        os.rename(partial, target)
    return os.path.join(target, "pipit")


# Runs inside a python3 with pipit on its path; prints one line per result for the test.
PIPIT_PROBE = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import pipit
trace = pipit.Trace.from_otf2(sys.argv[1])
counts = trace.comm_matrix(output="count")
sizes = trace.comm_matrix(output="size")
events = trace.events
columns = {c: int(events[c].notna().sum()) for c in sys.argv[2:] if c in events.columns}
maxima = {c: float(np.nanmax(events[c])) for c in columns}
print(json.dumps({"counts": counts.tolist(), "sizes": sizes.tolist(), "rows": len(events),
                  "columns": columns, "maxima": maxima}))
"""


class Run:
    def __init__(self, opts, work):
        self.opts, self.work, self.pythonpath = opts, work, opts.pythonpath

    def trace(self, name, np, command):
        """COMMAND on NP ranks, every Peruse event traced: (trace directory, failures)."""
        run, archive = mpi_launch.traced(self.opts.mpirun, np, command,
                                         os.path.join(self.work, name), self.opts.preload,
                                         {"MPITRACE_PERUSE_EVENTS": "all"}, RUN_TIMEOUT, self.work)
        if archive is None:
            return None, [f"{name}: {mpi_launch.failed(run)}"]
        return os.path.dirname(archive), []

    def pipit(self, trace_dir):
        """What pipit makes of the archive, or a failure."""
        import json
        env = dict(os.environ, PYTHONPATH=self.pythonpath)
        run = subprocess.run([sys.executable, "-c", PIPIT_PROBE, trace_dir] + COUNTERS,
                             env=env, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            return None, f"pipit could not read {trace_dir}: {run.stderr.strip()[-2000:]}"
        return json.loads(run.stdout.strip().splitlines()[-1]), None


def archive_messages(trace_dir):
    """(sender, receiver world rank) -> [count, bytes], and the number of values per counter,
    as python3-otf2 reads the archive."""
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    counters = collections.Counter(member.name for _, e in trace.of_kind("Metric")
                                   for member in e.raw.metric.members)
    return trace_checks.message_matrix(trace), counters


def matrix_of(got):
    out = {}
    for s, row in enumerate(got["counts"]):
        for r, n in enumerate(row):
            if n:
                out[(s, r)] = [int(n), int(got["sizes"][s][r])]
    return out


def check(run, name, trace_dir):
    got, failure = run.pipit(trace_dir)
    if failure:
        return [f"{name}: {failure}"], None
    want, counters = archive_messages(trace_dir)
    print(f"{name}: pipit read {got['rows']} rows, {sum(n for n, _ in want.values())} "
          f"messages, counter columns {got['columns']}")
    f = []
    if not want:
        f.append(f"{name}: the archive holds no MpiSend/MpiIsend")
    if matrix_of(got) != want:
        f.append(f"{name}: pipit's message matrix {matrix_of(got)} differs from the archive's "
                 f"{want} ((sender, receiver): [messages, bytes])")
    for counter in COUNTERS:
        if got["columns"].get(counter, 0) != counters[counter]:
            f.append(f"{name}: pipit has {got['columns'].get(counter, 0)} values of "
                     f"{counter!r}, the archive {counters[counter]}")
    return f, got


def case_scenarios(run):
    def check_scenario(name, scenario, trace_dir):
        f, got = check(run, name, trace_dir)
        if got and set(matrix_of(got)) != {(0, 1)}:
            f.append(f"{name}: messages other than rank 0 -> 1 in pipit: {matrix_of(got)}")
        if got and scenario == "late-receiver" and \
                got["maxima"].get("unexpected queue depth", 0) < 1:
            f.append(f"{name}: pipit's 'unexpected queue depth' never reaches 1: "
                     f"{got['maxima']}")
        return f
    return mpi_launch.each_scenario(run.opts.scenarios, run.trace, check_scenario)


def case_ring(run):
    trace_dir, f = run.trace("ring", RING_RANKS, [run.opts.ring, "-i", str(RING_ITERATIONS),
                                                  "-n", str(RING_BYTES)])
    if not trace_dir:
        return f
    found, got = check(run, "ring", trace_dir)
    f += found
    if got:
        want = {}
        for r in range(RING_RANKS):
            want[(r, (r + 1) % RING_RANKS)] = [2 * RING_ITERATIONS, 2 * RING_ITERATIONS * RING_BYTES]
            want[(r, (r - 1) % RING_RANKS)] = [RING_ITERATIONS, RING_ITERATIONS * RING_BYTES]
        if matrix_of(got) != want:
            f.append(f"ring: pipit's matrix {matrix_of(got)} is not the ring's {want}")
    return f


CASES = {"scenarios": case_scenarios, "ring": case_ring}


def prepare(opts):
    """Skips without pipit's dependencies; unpacks pipit (opts.pythonpath)."""
    probe = subprocess.run([sys.executable, "-c", "import pandas, numpy, otf2"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        skip("pipit needs python3-pandas, python3-numpy and python3-otf2 "
             "(scripts/setup installs them)")
    opts.pythonpath = pipit_source(opts.build)


if __name__ == "__main__":
    case_result.run_listing_case(
        CASES, "pipit", ["mpirun", "preload", "scenarios", "ring", "build"],
        lambda case, opts, work: case(Run(opts, work)), keep=True, prepare=prepare)
