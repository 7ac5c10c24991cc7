#!/usr/bin/python3
"""Runs PROGRAM on NP ranks with the tests' mpirun line (mpi_launch.command), untraced, and
exits as mpirun did: for the tests whose check is the program's own exit code. A run that
hangs has its stacks printed and exits 124.

    mpi_run.py MPIRUN NP PROGRAM [ARGS...]

Untraced on purpose (peruse_smoke registers Peruse callbacks of its own). A program run traced,
its archive read back and reported on, goes through run_traced.py (scenarios_all does).
"""
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402

# A run still going after this is a hang: its stacks are printed before meson's 120 s are up.
RUN_TIMEOUT = 60
HUNG = 124  # the exit status of timeout(1) for a command it stopped


def main():
    mpirun, np, program = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    done = mpi_launch.run(mpi_launch.command(mpirun, np) + program, timeout=RUN_TIMEOUT,
                          env=mpi_launch.launcher_env())
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    if done.returncode is None:
        print(f"{os.path.basename(program[0])} hung on {np} ranks (stacks above)", file=sys.stderr)
        sys.exit(HUNG)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
