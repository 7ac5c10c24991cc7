#!/usr/bin/python3
"""Run an MPI program traced by perusetrace, then check the archive it wrote.

    run_traced.py --mpirun MPIRUN [--preload LIB] [--env NAME=VALUE ...] --check NAME
                  -np N -- PROGRAM ARGS...

The run uses real ranks (mpirun), the archive is read back twice: by otf2-print, which must
finish without a warning, and by Debian's python3-otf2, which hands the events to the check
NAME from trace_checks.py. With --perusetrace, `perusetrace report --json` on the archive must
keep the wait states' invariant (tests/common/wait_checks.py). Exits non-zero, saying why, when anything does not hold; exits 77
(skipped) when the program does, e.g. for an MPI without MPI_THREAD_MULTIPLE.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402
import wait_checks  # noqa: E402

SKIP = 77  # a program's and Meson's "this test cannot run here"
# A run still going after this is a hang: its stacks are printed before meson's 180 s are up.
RUN_TIMEOUT = 75


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--preload", help="LD_PRELOAD this library (unmodified binaries)")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for every rank")
    parser.add_argument("--check", required=True,
                        choices=sorted(trace_checks.CHECKS) + sorted(trace_checks.COUNT_CHECKS))
    parser.add_argument("--counts", help="the trace_counts program, for count-based checks")
    parser.add_argument("--baseline", action="store_true",
                        help="run the program once untraced first (for the memory check)")
    parser.add_argument("--stdin", help="a file mpirun gives rank 0 as its standard input")
    parser.add_argument("--expect-exit", type=int, default=0)
    parser.add_argument("--style", choices=("openmpi", "mpich"), default="openmpi",
                        help="how the mpirun takes its options")
    parser.add_argument("-np", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the trace directory")
    parser.add_argument("--perusetrace", help="check the report's wait states on the archive")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    command = opts.command[1:] if opts.command[:1] == ["--"] else opts.command

    work = tempfile.mkdtemp(prefix="perusetrace-test-")
    trace_dir = os.path.join(work, "trace")
    ranks = {"MPITRACE_OUTPUT": trace_dir}
    for item in opts.env:
        name, _, value = item.partition("=")
        ranks[name] = value
    trace_checks.OPEN_MPI = mpi_launch.open_mpi_version(opts.mpirun)
    args = mpi_launch.command(opts.mpirun, opts.np, ranks, opts.preload, opts.style)
    env = mpi_launch.launcher_env(ranks)
    baseline = None
    if opts.baseline:
        untraced = mpi_launch.command(opts.mpirun, opts.np, dict(ranks, MPITRACE_ENABLED="0"),
                                      opts.preload, opts.style)
        baseline = mpi_launch.run(untraced + command, timeout=RUN_TIMEOUT, env=env, cwd=work,
                                  stdin=open(opts.stdin) if opts.stdin else subprocess.DEVNULL)
    run = mpi_launch.run(args + command, timeout=RUN_TIMEOUT, env=env, cwd=work,
                         stdin=open(opts.stdin) if opts.stdin else subprocess.DEVNULL)
    run.baseline = baseline  # for the checks that compare the program's output
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode == SKIP and opts.expect_exit != SKIP:
        print("skipped: the program says it cannot run here (exit code 77)")
        sys.exit(SKIP)
    failures = []
    if run.returncode != opts.expect_exit:
        failures.append(f"the traced run exited {run.returncode}, expected {opts.expect_exit}")
    archive = os.path.join(trace_dir, "traces.otf2")
    if not os.path.exists(archive):
        failures.append(f"no archive at {archive}")
    else:
        printed = subprocess.run(["otf2-print", archive], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        if printed.returncode != 0:
            failures.append(f"otf2-print failed ({printed.returncode}): {printed.stderr[:500]}")
        warnings = [l for l in printed.stderr.splitlines() if l.strip()]
        if warnings:
            failures.append("otf2-print warned:\n  " + "\n  ".join(warnings[:10]))
        if not failures and opts.check in trace_checks.COUNT_CHECKS:
            counted = subprocess.run([opts.counts, archive], capture_output=True, text=True)
            if counted.returncode != 0:
                failures.append(f"trace_counts failed: {counted.stderr[:500]}")
            else:
                failures += trace_checks.COUNT_CHECKS[opts.check](
                    json.loads(counted.stdout), run, baseline)
        elif not failures:
            trace = trace_checks.load(archive)
            failures += trace_checks.CHECKS[opts.check](trace, run)
        if opts.perusetrace and not failures:
            path = os.path.join(work, "report.json")
            report = subprocess.run([opts.perusetrace, "report", archive, "--json", path, "-q"],
                                    capture_output=True, text=True, timeout=120)
            if report.returncode != 0:
                failures.append(f"perusetrace report exited {report.returncode}: "
                                f"{report.stderr[-500:]}")
            else:
                with open(path) as f:
                    failures += [f"wait states: {e}" for e in wait_checks.invariant(json.load(f))]
    case_result.finish(f"check '{opts.check}'", failures, work, keep=opts.keep)


if __name__ == "__main__":
    main()
