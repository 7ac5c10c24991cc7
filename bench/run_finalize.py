#!/usr/bin/python3
"""What MPI_Finalize costs a traced run as ranks grow, on hosts simulated by scripts/fake-cluster
(root only): bench/finalize_cost.c on 4 hosts, every rank creating and freeing COMMS
communicators, untraced and traced, oversubscribed (mpi_yield_when_idle).

    run_finalize.py [--build DIR] [--ranks 2,8,32,64] [--comms 1000] [--cycles N]

Prints, per rank count, MPI_Finalize's wall time and rank 0's CPU time in it, rank 0's peak
memory (medians over cycles) and the archive's size; the traced columns are the differences to
the untraced run of the same cycle. On 2 cores the wall time grows with the ranks' total work,
which they share out two at a time; rank 0's CPU time and memory are its own.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import bench_common
import mpi_launch  # on the path bench_common sets

HERE = bench_common.HERE

HOSTS = "h1:0,h2:+5000,h3:-1234.5,h4:+60"


def run_once(opts, ranks, traced, trace_dir):
    cmd = [os.path.join(HERE, "..", "scripts", "fake-cluster"), "--hosts", HOSTS,
           "--slots", str(max(1, ranks // 4)), "--mpirun", opts.mpirun, "--",
           "-np", str(ranks), "--mca", "mpi_yield_when_idle", "1",
           "-x", f"LD_PRELOAD={os.path.join(opts.build, 'lib', 'libperusetrace.so')}",
           "-x", f"MPITRACE_ENABLED={1 if traced else 0}", "-x", f"MPITRACE_OUTPUT={trace_dir}",
           os.path.join(opts.build, "bench", "finalize_cost"), "-c", str(opts.comms)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                         env=mpi_launch.without_tracer_settings())
    if run.returncode == 77:
        sys.exit(f"run_finalize: {run.stderr.strip()}")
    m = re.search(r"finalize_ns (\d+) cpu_ns (\d+) maxrss_kib (\d+)", run.stdout)
    if run.returncode != 0 or not m:
        sys.exit(f"run_finalize: {ranks} ranks, traced={traced} failed ({run.returncode}):\n"
                 f"{run.stdout}\n{run.stderr}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), bench_common.tree_bytes(trace_dir)


def main():
    parser = bench_common.options(build=os.path.join(HERE, "..", "build"))
    parser.add_argument("--ranks", default="2,8,32,64")
    parser.add_argument("--comms", type=int, default=1000)
    parser.add_argument("--cycles", type=int, default=1)
    opts = bench_common.parse(parser)
    work = tempfile.mkdtemp(prefix="perusetrace-finalize-")
    print(f"MPI_Finalize on 4 simulated hosts, {opts.comms} communicators created and freed per "
          f"rank, medians of {opts.cycles} cycle(s); build {opts.build}")
    print(f"{'ranks':>5} | {'untraced ms':>11} | {'traced +ms':>10} | {'rank 0 CPU +ms':>14} | "
          f"{'rank 0 RSS MiB':>14} | {'traced +MiB':>11} | {'archive MiB':>11}")
    try:
        for ranks in (int(r) for r in opts.ranks.split(",")):
            rows = []
            for cycle in range(opts.cycles):
                d = os.path.join(work, f"t{ranks}-{cycle}")
                plain = run_once(opts, ranks, False, d + "-plain")
                traced = run_once(opts, ranks, True, d)
                rows.append((plain[0], traced[0] - plain[0], traced[1] - plain[1], plain[2],
                             traced[2] - plain[2], traced[3]))
                shutil.rmtree(d, ignore_errors=True)
            med = [statistics.median(col) for col in zip(*rows)]
            print(f"{ranks:>5} | {med[0] / 1e6:>11.1f} | {med[1] / 1e6:>+10.1f} | "
                  f"{med[2] / 1e6:>+14.1f} | {med[3] / 1024:>14.1f} | {med[4] / 1024:>+11.1f} | "
                  f"{med[5] / 2**20:>11.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
