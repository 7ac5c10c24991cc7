#!/usr/bin/python3
"""MPI state of each thread (include/perusetrace/mpi_state.h), on real ranks.

    state_test.py --mpirun MPIRUN --preload LIB --build BUILD CASE

CASE:
  external_sampler  tests/apps/state_phases on 2 ranks (300 ms phases: compute, a late sender,
                    64 MiB transfers, a late rank at a barrier) with tests/apps/state_sampler
                    preloaded next to the library: a SIGPROF handler that calls
                    perusetrace_mpi_state through dlsym, as an external profiler would. Both
                    ranks see NOT_IN_MPI and MPI_STALL, the receiver of the transfers MPI_WORK,
                    and no answer is outside the enum.
  ground_truth      the built-in sampler at 1 kHz on the same phases, 600 ms each: per rank the
                    archive's share of each state and activity (CallingContextSample attributes
                    mpi_state, mpi_activity) is its phases' share of the run within 5 points.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_result  # noqa: E402
import mpi_launch  # noqa: E402

COUNTS = re.compile(r"state_sampler: not_in_mpi (\d+) work (\d+) stall (\d+) other (\d+)")


def case_external_sampler(opts, work):
    failures = []
    env = {"MPITRACE_OUTPUT": os.path.join(work, "trace"), "MPITRACE_PERUSE_EVENTS": "all"}
    sampler = os.path.join(opts.build, "tests", "libstate_sampler.so")
    command = mpi_launch.command(opts.mpirun, 2, env, f"{opts.preload}:{sampler}")
    run = subprocess.run(command + [os.path.join(opts.build, "tests", "state_phases"), "300",
                                    "32"], env=mpi_launch.launcher_env(env), cwd=work,
                         capture_output=True, text=True, timeout=300)
    counts = [tuple(map(int, m)) for m in COUNTS.findall(run.stderr)]
    if run.returncode != 0 or len(counts) != 2:
        return [f"the run failed (exit {run.returncode}) or not both ranks reported: "
                f"{run.stderr[-1500:]}"]
    for not_in_mpi, work_, stall, other in counts:
        if not_in_mpi == 0 or stall == 0 or other != 0:
            failures.append(f"a rank saw not_in_mpi {not_in_mpi}, stall {stall}, other {other}: "
                            "expected the first two above 0 and no other answer")
    if max(c[1] for c in counts) == 0:
        failures.append(f"no rank was ever seen in MPI_WORK, although 2 GiB were transferred: "
                        f"{counts}")
    return failures


PHASES = re.compile(r"state_phases rank (\d+): compute ([\d.]+) late ([\d.]+) transfer ([\d.]+) "
                    r"barrier ([\d.]+) s")
STATES = {0: "not in MPI", 1: "work", 2: "stall"}
ACTIVITIES = {0: "", 1: "message", 2: "transfer", 3: "collective", 4: "I/O"}
TOLERANCE = 5.0  # percentage points


def sampled_shares(archive):
    """Per rank: {(state, activity): share of the rank's samples, %} and the sample count."""
    import otf2
    counts = collections.defaultdict(collections.Counter)
    with otf2.reader.open(archive) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.CallingContextSample):
                a = {k.name: v for k, v in (event.attributes or {}).items()}
                rank = int(location.group.name.split()[-1])
                counts[rank][(STATES[a["mpi_state"]], ACTIVITIES[a["mpi_activity"]])] += 1
    return {rank: ({k: 100.0 * v / sum(c.values()) for k, v in c.items()}, sum(c.values()))
            for rank, c in counts.items()}


def case_ground_truth(opts, work):
    """Phases of known state (tests/apps/state_phases: 600 ms each, 2.4 s in all) sampled at
    1 kHz: per rank the share of each state in the archive is the share of its phases' wall
    time, within 5 percentage points."""
    failures = []
    out = os.path.join(work, "trace")
    env = {"MPITRACE_OUTPUT": out, "MPITRACE_PERUSE_EVENTS": "all", "MPITRACE_SAMPLING": "1ms"}
    command = mpi_launch.command(opts.mpirun, 2, env, opts.preload)
    run = subprocess.run(command + [os.path.join(opts.build, "tests", "state_phases"), "600",
                                    "64"], env=mpi_launch.launcher_env(env), cwd=work,
                         capture_output=True, text=True, timeout=300)
    phases = {int(m[0]): list(map(float, m[1:])) for m in PHASES.findall(run.stdout)}
    if run.returncode != 0 or sorted(phases) != [0, 1]:
        return [f"the run failed (exit {run.returncode}): {run.stderr[-1500:]}"]
    shares = sampled_shares(os.path.join(out, "traces.otf2"))
    for rank in (0, 1):
        compute, late, transfer, barrier = phases[rank]
        share, samples = shares.get(rank, ({}, 0))
        seconds = samples / 1000.0  # one sample a millisecond
        if rank == 0:  # it computes in three phases and sends in the fourth
            expected = {("not in MPI", ""): compute + late + barrier, ("work", "transfer"): transfer}
        else:
            expected = {("not in MPI", ""): compute, ("stall", "message"): late,
                        ("work", "transfer"): transfer, ("stall", "collective"): barrier}
        print(f"rank {rank}: {samples} samples; " + ", ".join(
            f"{s} {a}: {share.get((s, a), 0):.1f}% (expected {100 * t / seconds:.1f}%)"
            for (s, a), t in expected.items()))
        for key, t in expected.items():
            want = 100.0 * t / seconds if seconds else 0
            got = share.get(key, 0.0)
            if abs(got - want) > TOLERANCE:
                failures.append(f"rank {rank}: {' '.join(key).strip()} is {got:.1f}% of the "
                                f"samples, expected {want:.1f}% +-{TOLERANCE}")
    return failures


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("case", choices=sorted(CASES))
    opts = parser.parse_args()
    work = tempfile.mkdtemp(prefix="perusetrace-state-")
    case_result.finish(f"state case '{opts.case}'", CASES[opts.case](opts, work), work)


if __name__ == "__main__":
    main()
