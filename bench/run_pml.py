#!/usr/bin/python3
"""What a user trades for Peruse: Open MPI 5's production PML (ucx) against ob1, the only PML
Peruse fires in, untraced and traced, on one host and on two hosts simulated by
scripts/fake-cluster (root only). Modes, interleaved in every cycle to spread the noise:

  ucx        untraced, pml ucx (what a production run of Open MPI 5 uses)
  ob1        untraced, pml ob1
  ob1+trace  perusetrace with every Peruse event, pml ob1
  ucx+trace  perusetrace under pml ucx: MPI calls and messages (PMPI), no Peruse event

For each placement and mode: bench/pingpong's half round trip at 0 B, 1 KiB and 64 KiB, its
bandwidth at 4 MiB, and, with --app hpcc (Debian's HPC Challenge, unmodified, 4 ranks, the
hpccinf.txt of --hpcc-input), the program's wall time on the placement's hosts. Each cell is the
median over the cycles of each run's median of repetitions.

    run_pml.py [--build BUILD] [--mpirun MPIRUN] [--cycles 5] [--app hpcc --hpcc-input FILE]

pml ucx only sees transports Open MPI lists as supported (InfiniBand, RoCE); on machines with
shared memory and TCP only it is given `pml_ucx_tls any` and `pml_ucx_devices any`.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from statistics import median

import bench_common
import mpi_launch  # noqa: E402  (on the path bench_common sets)

HERE = bench_common.HERE
MODES = ("ucx", "ob1", "ob1+trace", "ucx+trace")
# One host: this machine, the ranks pinned to its two cores; two hosts: scripts/fake-cluster,
# unpinned (its hosts share the cores), TCP over a simulated switch.
PLACEMENTS = {"one host": None, "two hosts": "h1:0,h2:0"}
SIZES = (0, 1024, 65536)
BANDWIDTH_SIZE = 4 << 20
UCX_ANY = ["--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any"]


def mode_args(mode, opts, trace_dir):
    pml = mode.split("+")[0]
    args = ["--mca", "pml", pml] + (UCX_ANY if pml == "ucx" else [])
    if mode.endswith("+trace"):
        args += ["-x", f"LD_PRELOAD={os.path.join(opts.build, 'lib', 'libperusetrace.so')}",
                 "-x", f"MPITRACE_OUTPUT={trace_dir}", "-x", "MPITRACE_PERUSE_EVENTS=all"]
    return args


def launch(opts, hosts, ranks, args, program, cwd):
    prefix = os.path.dirname(os.path.dirname(opts.mpirun))
    library_path = ["-x", f"LD_LIBRARY_PATH={os.path.join(prefix, 'lib')}"]
    if hosts is None:
        cmd = mpi_launch.command(opts.mpirun, ranks, bind="core" if ranks <= 2 else "none")
        cmd += library_path + args + program
    else:
        cmd = [os.path.join(HERE, "..", "scripts", "fake-cluster"), "--hosts", hosts,
               "--slots", str(ranks), "--mpirun", opts.mpirun, "--", "-np", str(ranks),
               "--map-by", "node", *library_path, *args, *program]
    env = dict(mpi_launch.without_tracer_settings(),
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    started = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=cwd, env=env)
    elapsed = time.monotonic() - started
    if run.returncode == 77:
        sys.exit(f"run_pml: {run.stderr.strip()}")
    if run.returncode != 0:
        sys.exit(f"run_pml: {' '.join(cmd)} failed ({run.returncode}):\n"
                 f"{run.stdout[-1500:]}\n{run.stderr[-1500:]}")
    return run.stdout, elapsed


def pingpong(opts, hosts, mode, work):
    trace = os.path.join(work, "pp-trace")
    shutil.rmtree(trace, ignore_errors=True)
    out, _ = launch(opts, hosts, 2, mode_args(mode, opts, trace),
                    [os.path.join(opts.build, "bench", "pingpong"), "-r", "5", "-i", "2000",
                     "-m", str(BANDWIDTH_SIZE)], work)
    half = {}
    for line in out.splitlines():
        m = re.match(r"^(\d+) ([\d.]+) ([\d.]+)$", line.strip())
        if m:
            half[int(m.group(1))] = float(m.group(3))
    return half


def hpcc(opts, hosts, mode, work):
    trace = os.path.join(work, "hpcc-trace")
    shutil.rmtree(trace, ignore_errors=True)
    run_dir, output = bench_common.hpcc_run_dir(work, opts.hpcc_input)
    _, elapsed = launch(opts, hosts, 4, mode_args(mode, opts, trace) +
                        ["--mca", "mpi_yield_when_idle", "1"], [opts.app], run_dir)
    if not bench_common.hpcc_succeeded(output):
        sys.exit(f"run_pml: hpcc under {mode} on {hosts} did not end with Success=1")
    return elapsed


def main():
    parser = bench_common.options(build=os.path.join(HERE, "..", "build"),
                                  description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--app", help="hpcc: also time Debian's HPC Challenge on 4 ranks")
    parser.add_argument("--hpcc-input", help="the hpccinf.txt hpcc reads")
    opts = bench_common.parse(parser)
    if opts.app and not opts.hpcc_input:
        sys.exit("run_pml: --app hpcc needs --hpcc-input FILE (an hpccinf.txt)")
    latency = {(p, m): {} for p in PLACEMENTS for m in MODES}
    wall = {(p, m): [] for p in PLACEMENTS for m in MODES}
    with tempfile.TemporaryDirectory(prefix="perusetrace-pml-") as work:
        for cycle in range(opts.cycles):
            order = MODES if cycle % 2 == 0 else tuple(reversed(MODES))
            for placement, hosts in PLACEMENTS.items():
                for mode in order:
                    for size, us in pingpong(opts, hosts, mode, work).items():
                        latency[placement, mode].setdefault(size, []).append(us)
                    if opts.app:
                        wall[placement, mode].append(hpcc(opts, hosts, mode, work))
            print(f"cycle {cycle + 1} of {opts.cycles} done", file=sys.stderr)
    for placement in PLACEMENTS:
        print(f"\n{placement} (pingpong: 2 ranks" +
              (", hpcc: 4 ranks" if opts.app else "") + f"; median of {opts.cycles} cycles)")
        head = "| mode | " + " | ".join(f"{s} B half RTT (us)" for s in SIZES) + \
            " | 4 MiB bandwidth (MB/s) |" + (" hpcc wall (s) |" if opts.app else "")
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        base = latency[placement, "ucx"]
        for mode in MODES:
            half = latency[placement, mode]
            cells = []
            for s in SIZES:
                us = median(half[s])
                ratio = us / median(base[s])
                cells.append(f"{us:.2f} (x{ratio:.2f})")
            mbps = BANDWIDTH_SIZE / median(half[BANDWIDTH_SIZE])  # bytes per us: MB/s
            bw_ratio = median(base[BANDWIDTH_SIZE]) / median(half[BANDWIDTH_SIZE])
            row = f"| {mode} | " + " | ".join(cells) + f" | {mbps:.0f} (x{bw_ratio:.2f}) |"
            if opts.app:
                w = median(wall[placement, mode])
                row += f" {w:.1f} (x{w / median(wall[placement, 'ucx']):.2f}) |"
            print(row)


if __name__ == "__main__":
    main()
