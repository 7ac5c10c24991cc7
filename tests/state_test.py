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
"""
import argparse
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
