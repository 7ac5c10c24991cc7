#!/usr/bin/python3
"""Runs PROGRAM on NP ranks with the tests' mpirun line (mpi_launch.command), untraced, and
exits as mpirun did: for the tests whose check is the program's own exit code.

    mpi_run.py MPIRUN NP PROGRAM [ARGS...]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_launch  # noqa: E402


def main():
    mpirun, np, program = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    done = subprocess.run(mpi_launch.command(mpirun, np) + program,
                          env=mpi_launch.launcher_env())
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
