#!/usr/bin/python3
"""A parallel analysis (`perusetrace profile --np N`) against one process on a large sampled
trace: what each analysis rank read, sent, used and computed.

    run_parallel_analysis.py --build BUILD [--np 1,2,3,4] [--poll-us 1600000] [--keep DIR]

The trace: tests/apps/poll_kinds on 4 ranks with polls not folded (every MPI_Test* and probe
its own Enter and Leave: about 12 bytes per event) and MPITRACE_SAMPLING=1ms; --poll-us sets
how long each of its 21 polling phases lasts (the default gives about 4*10^7 events). The
even ranks poll, so they hold almost every event: whole-rank shares give no analysis rank
less than the larger of them.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import bench_common
import mpi_launch  # on the path bench_common sets


def make_trace(opts, work):
    out = os.path.join(work, "trace")
    counts = os.path.join(work, "counts")
    os.makedirs(counts)
    env = {"MPITRACE_OUTPUT": out, "MPITRACE_SAMPLING": "1ms", "MPITRACE_FOLD_POLLS": "off"}
    program = [os.path.join(opts.build, "tests", "poll_kinds"), "-g", "0", "-d",
               str(opts.poll_us), "-r", "3", counts]
    cmd = mpi_launch.command(opts.mpirun, 4, env,
                             os.path.join(opts.build, "lib", "libperusetrace.so")) + program
    done = subprocess.run(cmd, capture_output=True, text=True,
                          env=mpi_launch.without_tracer_settings())
    if done.returncode != 0 or not os.path.exists(os.path.join(out, "traces.otf2")):
        sys.exit(f"tracing failed ({done.returncode}): {done.stderr[-1500:]}")
    return out


def profile(opts, trace, stats, np=None):
    exe = os.path.join(opts.build, "tools", "perusetrace")
    cmd = ["/usr/bin/time", "-f", "TIME %e", exe, "profile", "-q", trace,
           "--analysis-stats", stats] + (["--np", str(np)] if np else [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"profile {'--np ' + str(np) if np else ''} failed ({done.returncode}): "
                 f"{done.stderr[-1500:]}")
    with open(stats, encoding="utf-8") as f:
        ranks = json.load(f)["ranks"]
    return float(re.search(r"TIME (\S+)", done.stderr).group(1)), ranks


def main():
    parser = bench_common.options()
    parser.add_argument("--np", default="1,2,3,4", help="analysis ranks to try, e.g. 1,2,4")
    parser.add_argument("--poll-us", type=int, default=1_600_000)
    parser.add_argument("--keep", help="keep the trace in this directory")
    opts = bench_common.parse(parser)
    work = opts.keep or tempfile.mkdtemp(prefix="perusetrace-parallel-bench-", dir=opts.build)
    os.makedirs(work, exist_ok=True)
    try:
        trace = make_trace(opts, work)
        archive = bench_common.tree_bytes(trace)
        runs = [("one process", *profile(opts, trace, os.path.join(work, "single.json")))]
        for n in (int(x) for x in opts.np.split(",")):
            runs.append((f"--np {n}", *profile(opts, trace, os.path.join(work, f"np{n}.json"),
                                               n)))
        events = runs[0][2][0]["events"]
        print(f"archive: {events:,} events, {archive / 1e6:.1f} MB")
        print("| run | wall s | rank | traced ranks | events | MB read | read / share | "
              "bytes sent | peak RSS MiB | pass CPU s | CPU s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, wall, ranks in runs:
            wall_text = f"{wall:.2f}"
            for r in ranks:
                share = r["events"] / events * archive
                ratio = f"{r['bytes_read'] / share:.3f}" if r["events"] else "-"
                print(f"| {name} | {wall_text} | {r['rank']} | {r['traced_ranks']} | "
                      f"{r['events']:,} | {r['bytes_read'] / 1e6:.1f} | {ratio} | "
                      f"{r['bytes_sent']:,} | {r['peak_rss_kb'] / 1024:.1f} | "
                      f"{r['pass_cpu_s']:.2f} | {r['cpu_s']:.2f} |")
                name, wall_text = "", ""
        sent = max(sum(r["bytes_sent"] for r in ranks) for _, _, ranks in runs)
        print(f"most bytes exchanged in a run: {sent:,} ({100 * sent / archive:.5f} % of the "
              f"archive)")
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
