#!/usr/bin/python3
"""The hot path's cost: bench/hot_path under the tracer and untraced, one rank.

    run_hot_path.py --build BUILD [--buffer-size 8M]

Prints ns per record (no drain in the measurement; with the drains it causes; two threads
at once) and ns a traced MPI_Comm_rank adds over an untraced one (one Enter/Leave pair).
"""
import argparse
import os
import subprocess
import sys
import tempfile


def run(opts, env):
    prefix = opts.mpi_prefix
    cmd = [os.path.join(prefix, "bin", "mpirun"), "--allow-run-as-root", "-np", "1"]
    for name, value in env.items():
        cmd += ["-x", f"{name}={value}"]
    done = subprocess.run(cmd + [os.path.join(opts.build, "bench", "hot_path")],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"hot_path failed: {done.stderr[-1500:]}")
    return {k: float(v) for k, v in (line.split() for line in done.stdout.splitlines()
                                     if len(line.split()) == 2)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--buffer-size", default="8M")
    parser.add_argument("--mpi-prefix", default=os.path.expanduser(
        os.environ.get("MPITRACE_OMPI_PREFIX", "~/.cache/perusetrace/openmpi-4.1.4-peruse")))
    opts = parser.parse_args()
    opts.build = os.path.abspath(opts.build)
    library = os.path.join(opts.build, "lib", "libperusetrace.so")
    with tempfile.TemporaryDirectory(prefix="perusetrace-hot-") as work:
        traced = run(opts, {"LD_PRELOAD": library, "MPITRACE_OUTPUT": os.path.join(work, "t"),
                            "MPITRACE_BUFFER_SIZE": opts.buffer_size, "MPITRACE_GROUPS": "all"})
        untraced = run(opts, {"LD_PRELOAD": library, "MPITRACE_ENABLED": "0"})
    print(f"ns per record, no drain measured : {traced['record_ns_hot']:.1f}")
    print(f"ns per record, drains included   : {traced['record_ns_with_drains']:.1f}")
    print(f"ns per record, two threads at once: {traced['record_ns_two_threads']:.1f}")
    print(f"ns a traced MPI_Comm_rank adds   : "
          f"{traced['mpi_comm_rank_ns'] - untraced['mpi_comm_rank_ns']:.1f} "
          f"({untraced['mpi_comm_rank_ns']:.1f} untraced, {traced['mpi_comm_rank_ns']:.1f} traced)")
    print(f"target: <= 20 ns per recorded event on the hot path: "
          f"{'met' if traced['record_ns_hot'] <= 20 else 'MISSED'}")


if __name__ == "__main__":
    main()
