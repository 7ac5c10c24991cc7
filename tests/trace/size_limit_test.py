#!/usr/bin/python3
"""MPITRACE_MAX_SIZE: recording stops on the rank whose journal reaches it, and on no other.

    size_limit_test.py --build BUILD_DIR --mpirun MPIRUN CASE

CASE:
  one_rank  tests/apps/size_cut on 4 ranks, every Peruse event, 64 KiB buffers: a ring, and on
            rank 2 alone 200 MPI_Iprobe calls a step, under MPITRACE_MAX_SIZE=1M. The program's
            output is the untraced run's; rank 2 says it stopped, rank 0 says which rank did;
            the archive reads back with otf2-print and python3-otf2, names rank 2 alone in
            PERUSETRACE::RECORDING_CUT, has no rank 2 event after its cut and the other ranks'
            events to their MPI_Finalize, rank 2 some of its MPI_Iprobe calls, not all;
            `perusetrace report` says where and why, and its analyses (JSON analysed_until_ns) stop at the
            cut, with the wait states' invariant kept.
  off       the same program with MPITRACE_MAX_SIZE=off: every Iprobe of rank 2 is there, no
            cut is named.
  recovered the capped run ends in MPI_Abort instead of MPI_Finalize: `perusetrace recover`
            builds the archive, which names rank 2's cut as the finalized one does, and the
            report says so.
"""
import json
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import wait_checks  # noqa: E402

STEPS, EXTRA, HEAVY = 3000, 200, 2
RUN_TIMEOUT = 120


expect = case_result.expect


class Context:
    def __init__(self, build, mpirun, work):
        self.build, self.mpirun, self.work = build, mpirun, work
        self.library = os.path.join(build, "lib", "libperusetrace.so")
        self.program = [os.path.join(build, "tests", "size_cut"), str(STEPS), str(EXTRA),
                        str(HEAVY)]

    def run(self, name, env=None, extra=()):
        ranks = dict(env or {})
        library = None
        if env is not None:
            ranks["MPITRACE_OUTPUT"] = os.path.join(self.work, name)
            library = self.library
        args = mpi_launch.command(self.mpirun, 4, ranks, library) + self.program + list(extra)
        return mpi_launch.run(args, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(ranks),
                              cwd=self.work)

    def perusetrace(self, *args):
        return subprocess.run([os.path.join(self.build, "tools", "perusetrace"), *args],
                              capture_output=True, text=True, timeout=300)


def events_by_rank(archive):
    """Per rank: (the MPI_Iprobe calls its Leaves stand for, polls folded or not, its last
    event's time in ns since the start)."""
    import otf2
    probes, last = {}, {}
    with otf2.reader.open(archive) as trace:
        offset = trace.definitions.clock_properties.global_offset
        for location, event in trace.events:
            rank = int(location.group.name.split()[-1])
            last[rank] = max(last.get(rank, 0), event.time - offset)
            if isinstance(event, otf2.events.Leave) and event.region.name == "MPI_Iprobe":
                calls = next((int(v) for a, v in (event.attributes or {}).items()
                              if a.name == "poll_calls"), 1)
                probes[rank] = probes.get(rank, 0) + calls
    return probes, last


def probes_in_report(data, rank):
    """RANK's MPI_Iprobe calls as the report counted them."""
    return sum(f["calls"] for f in data["ranks"][rank]["functions"] if f["name"] == "MPI_Iprobe")


def traced(c, name, limit):
    plain = c.run("plain")
    expect(plain.returncode == 0 and "size_cut checksum" in plain.stdout,
           "the untraced run failed", plain)
    env = {"MPITRACE_MAX_SIZE": limit, "MPITRACE_BUFFER_SIZE": "64K",
           "MPITRACE_PERUSE_EVENTS": "all"}
    run = c.run(name, env)
    expect(run.returncode == 0, f"the traced run failed (exit {run.returncode})", run)
    expect(run.stdout.strip() == plain.stdout.strip(),
           f"the program's output changed: {run.stdout!r} traced, {plain.stdout!r} untraced", run)
    archive = os.path.join(c.work, name, "traces.otf2")
    printed = subprocess.run(["otf2-print", archive], capture_output=True, text=True)
    expect(printed.returncode == 0 and "warning" not in printed.stderr.lower(),
           f"otf2-print: {printed.stderr[-1500:]}")
    report_json = os.path.join(c.work, f"{name}.json")
    report = c.perusetrace("report", archive, "--json", report_json)
    expect(report.returncode == 0, f"perusetrace report failed: {report.stderr[-1500:]}")
    with open(report_json) as f:
        data = json.load(f)
    failures = wait_checks.invariant(data)
    expect(not failures, f"wait states: {failures}")
    return run, archive, report, data


def case_one_rank(c):
    run, archive, report, data = traced(c, "capped", "1M")
    expect(f"perusetrace rank {HEAVY}: its journal reached MPITRACE_MAX_SIZE" in run.stderr,
           f"rank {HEAVY} did not say it stopped", run)
    expect("recording stopped early on 1 of 4 ranks" in run.stderr and
           f"the first rank {HEAVY}," in run.stderr, "rank 0 did not say which rank stopped", run)
    cuts = data["recording_cuts"]
    expect([cut["rank"] for cut in cuts] == [HEAVY], f"the archive names the cuts {cuts}")
    cut_ns = cuts[0]["at_ns"]
    expect(data["analysed_until_ns"] == cut_ns == data["trace_ns"],
           f"the analyses read up to {data['analysed_until_ns']} ns of a run of "
           f"{data['trace_ns']} ns, the cut is at {cut_ns} ns")
    expect("recording stopped early" in report.stdout and f"rank {HEAVY} at" in report.stdout,
           f"the report does not say where recording stopped:\n{report.stdout[:1500]}")
    probes, last = events_by_rank(archive)
    print(f"rank {HEAVY} stopped at {cut_ns / 1e9:.3f} s after {probes.get(HEAVY, 0)} of "
          f"{STEPS * EXTRA} MPI_Iprobe calls; the last events: " +
          ", ".join(f"rank {r} {t / 1e9:.3f} s" for r, t in sorted(last.items())))
    expect(last[HEAVY] <= cut_ns, f"rank {HEAVY} has events until {last[HEAVY]} ns, after its "
                                  f"cut at {cut_ns} ns")
    expect(0 < probes.get(HEAVY, 0) < STEPS * EXTRA,
           f"rank {HEAVY} recorded {probes.get(HEAVY, 0)} of its {STEPS * EXTRA} MPI_Iprobe calls")
    expect(probes_in_report(data, HEAVY) == probes[HEAVY],
           f"the report counts {probes_in_report(data, HEAVY)} MPI_Iprobe calls of rank {HEAVY}, "
           f"the archive has {probes[HEAVY]}")
    for rank in range(4):
        if rank != HEAVY:
            expect(last[rank] > cut_ns, f"rank {rank} stopped recording too ({last[rank]} ns)")


def case_off(c):
    _, archive, report, data = traced(c, "whole", "off")
    expect(data["recording_cuts"] == [] and data["analysed_until_ns"] == 0,
           f"cuts named without a limit: {data['recording_cuts']}")
    expect("recording stopped early" not in report.stdout, "the report names a cut")
    probes = probes_in_report(data, HEAVY)  # 600 000 calls: python3-otf2 would take a minute
    expect(probes == STEPS * EXTRA,
           f"rank {HEAVY} recorded {probes} of its {STEPS * EXTRA} MPI_Iprobe calls")


def case_recovered(c):
    env = {"MPITRACE_MAX_SIZE": "1M", "MPITRACE_BUFFER_SIZE": "64K",
           "MPITRACE_PERUSE_EVENTS": "all"}
    run = c.run("aborted", env, ["abort"])
    expect(run.returncode != 0 and "size_cut checksum" in run.stdout,
           f"the run was to end in MPI_Abort (exit {run.returncode})", run)
    expect(f"perusetrace rank {HEAVY}: its journal reached MPITRACE_MAX_SIZE" in run.stderr,
           f"rank {HEAVY} did not say it stopped", run)
    directory = os.path.join(c.work, "aborted")
    recovered = c.perusetrace("recover", directory)
    expect(recovered.returncode == 0, f"perusetrace recover failed: {recovered.stderr[-1500:]}")
    report_json = os.path.join(c.work, "aborted.json")
    report = c.perusetrace("report", directory, "--json", report_json)
    expect(report.returncode == 0, f"perusetrace report failed: {report.stderr[-1500:]}")
    with open(report_json) as f:
        data = json.load(f)
    cuts = data["recording_cuts"]
    expect([cut["rank"] for cut in cuts] == [HEAVY] and data["analysed_until_ns"] > 0,
           f"the recovered archive names the cuts {cuts}")
    expect("recording stopped early" in report.stdout, "the report does not say so")
    print(f"recovered: rank {HEAVY}'s cut at {cuts[0]['at_ns'] / 1e9:.3f} s")


CASES = case_result.cases_of(globals())


def main():
    case_result.run_asserting_case(CASES, "perusetrace-size-", Context)


if __name__ == "__main__":
    main()
