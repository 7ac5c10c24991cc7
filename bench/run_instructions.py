#!/usr/bin/python3
"""The tracer's instructions per ping-pong round trip, counted by callgrind: repeatable where
timings on a shared guest are not, so that one build can be compared with another.

    run_instructions.py --build BUILD [--build OTHER ...] [--events all] [--iters 2000]
                        [--top 15] [--fortran]

Runs bench/pingpong (0 B, two ranks) under `valgrind --tool=callgrind` twice per build, with
ITERS and 3 x ITERS round trips, collecting only inside MPI_Send and MPI_Recv (the wrappers, the
Peruse callbacks they lead to, the drains), and subtracts: set-up, MPI_Init and MPI_Finalize
cancel out. Prints, per process, the instructions that libperusetrace executes per round trip:
those that record (wrappers, callbacks, the clock, the buffer) and those that pack records
(pack_ahead while the thread waits for its message, and the drains); then the functions that
execute most, with the difference to the first build (GCC's clone suffixes dropped). Instructions are not time (a clock read or a locked instruction
counts one), but a change that removes instructions shows here in every run.
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import bench_common
import mpi_launch  # on the path bench_common sets

LIBRARY = "libperusetrace.so"


def self_costs(path):
    """Self instructions per (object, function) in one callgrind output file."""
    names = {"ob": {}, "fn": {}}
    costs = collections.Counter()
    ob = fn = None
    after_calls = False
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            if key in ("ob", "fn", "cob", "cfn"):
                m = re.match(r"\((\d+)\)(?: (.*))?$", value)
                table = names["ob" if key in ("ob", "cob") else "fn"]
                if m:
                    if m.group(2) is not None:
                        table[m.group(1)] = m.group(2)
                    value = table[m.group(1)]
                if key == "ob":
                    ob = value
                elif key == "fn":
                    fn = value
                continue
            if key == "calls":
                after_calls = True  # the next cost line is the call's inclusive cost
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                if after_calls:
                    after_calls = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    costs[(ob, fn)] += int(fields[1])
    return costs


def run(build, iters, events, work, mpi_prefix, fortran=False):
    """Callgrind files of one ping-pong, one per process, in rank order of their pids. With
    `fortran`, bench/pingpong_fortran, collecting inside the Fortran wrappers (which call the C
    ones)."""
    out = tempfile.mkdtemp(dir=work)
    mpirun = os.path.join(mpi_prefix, "bin", "mpirun")
    env = {"MPITRACE_PERUSE_EVENTS": events, "MPITRACE_OUTPUT": os.path.join(out, "trace")}
    cmd = mpi_launch.command(mpirun, 2, env, os.path.join(build, "lib", LIBRARY)) + [
           "valgrind", "--tool=callgrind", "--collect-atstart=no",
           # A Fortran wrapper has many names (its aliases), of which callgrind shows one.
           *([f"--toggle-collect={n}" for n in ("fortran_MPI_Send", "fortran_MPI_Recv", "mpi_send*",
                                                  "mpi_recv*", "MPI_SEND*", "MPI_RECV*")]
             if fortran else ["--toggle-collect=MPI_Send", "--toggle-collect=MPI_Recv"]),
           f"--callgrind-out-file={os.path.join(out, 'cg.%p')}",
           os.path.join(build, "bench", "pingpong_fortran" if fortran else "pingpong"),
           "-r", "1", "-i", str(iters), "-m", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=out,
                          env=mpi_launch.without_tracer_settings())
    if done.returncode != 0:
        sys.exit(f"the ping-pong under callgrind failed ({done.returncode}):\n"
                 f"{done.stderr[-2000:]}")
    files = sorted(glob.glob(os.path.join(out, "cg.*")), key=lambda p: int(p.rsplit(".", 1)[1]))
    if len(files) != 2:
        sys.exit(f"expected two callgrind files in {out}, found {len(files)}")
    return [self_costs(p) for p in files]


def in_library(costs):
    """The library's share of one process's costs, per function."""
    functions = collections.Counter()
    for (ob, fn), n in costs.items():
        if ob and os.path.basename(ob).startswith(LIBRARY):
            functions[fn] += n
    return functions


def per_round_trip(build, opts, work):
    """Per process: the library's self instructions per round trip, per function."""
    short = run(build, opts.iters, opts.events, work, opts.mpi_prefix, opts.fortran)
    long = run(build, 3 * opts.iters, opts.events, work, opts.mpi_prefix, opts.fortran)
    # pingpong -r 1 runs a warm-up and one repetition: 2 x iters round trips per run.
    trips = 2 * (3 * opts.iters - opts.iters)
    result = []
    for a, b in zip(short, long):
        functions = in_library(b)
        functions.subtract(in_library(a))
        result.append({fn: n / trips for fn, n in merged(functions).items()})
    return result


def plain(fn):
    """A function's name without the suffixes of GCC's clones, so that builds compare."""
    return re.sub(r"(\s*\[clone [^]]*\])+$|\.(lto_priv|constprop|isra|part|cold)\.\d+", "", fn)


def merged(functions):
    out = collections.Counter()
    for fn, n in functions.items():
        out[plain(fn)] += n
    return out


def packs(fn):
    return "packing::" in fn or "pack_ahead" in fn


def split(functions):
    packing = sum(n for fn, n in functions.items() if packs(fn))
    return sum(functions.values()) - packing, packing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", action="append", required=True,
                        help="a build directory; give several to compare them")
    parser.add_argument("--mpi-prefix", default=bench_common.MPI_PREFIX)
    parser.add_argument("--events", default="all", help="MPITRACE_PERUSE_EVENTS (default all)")
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--fortran", action="store_true",
                        help="bench/pingpong_fortran: a Fortran program's calls, collected from "
                        "the Fortran wrappers in")
    opts = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed: apt-get install valgrind")
    builds = [os.path.abspath(b) for b in opts.build]
    for b in builds:
        if not os.path.exists(os.path.join(b, "lib", LIBRARY)):
            sys.exit(f"{b} has no lib/{LIBRARY}: give a perusetrace build directory")

    with tempfile.TemporaryDirectory(prefix="perusetrace-callgrind-") as work:
        results = []
        for b in builds:
            print(f"callgrind: {b}", file=sys.stderr)
            results.append(per_round_trip(b, opts, work))

    print(f"libperusetrace instructions per round trip, per process (0 B ping-pong, "
          f"MPITRACE_PERUSE_EVENTS={opts.events}, callgrind)")
    width = max(12, *(len(os.path.basename(b)) + 2 for b in builds))
    print(f"{'':<34}" + "".join(f"{os.path.basename(b):>{width}}" for b in builds))
    for rank in range(2):
        rows = [split(r[rank]) for r in results]
        print(f"process {rank}: recording{'':<15}" +
              "".join(f"{rec:>{width}.1f}" for rec, _ in rows))
        print(f"           packing{'':<17}" +
              "".join(f"{pack:>{width}.1f}" for _, pack in rows))
    first = results[0][0]
    print(f"\nprocess 0, the {opts.top} functions executing most in {builds[0]}" +
          (", and the difference in each other build:" if len(builds) > 1 else ":"))
    for fn, n in sorted(first.items(), key=lambda kv: -kv[1])[:opts.top]:
        others = "".join(f"{r[0].get(fn, 0.0) - n:>+9.1f}" for r in results[1:])
        print(f"{n:>9.1f}{others}  {fn[:110]}")


if __name__ == "__main__":
    main()
