#!/usr/bin/python3
"""A parallel analysis (`perusetrace profile --np N`, `prv --np N`, `export --perfetto --np N`)
against one process on a large trace: what each analysis rank read, sent, used and computed.

    run_parallel_analysis.py --build BUILD [--command profile|prv|export] [--trace polls|ring]
                             [--np 1,2,3,4] [--poll-us 1600000] [--ring-iterations 120000]
                             [--keep DIR]

--trace polls (the default): tests/apps/poll_kinds on 4 ranks with polls not folded (every
MPI_Test* and probe its own Enter and Leave: about 12 bytes per event) and
MPITRACE_SAMPLING=1ms; --poll-us sets how long each of its 21 polling phases lasts (the default
gives about 4*10^7 events). The even ranks poll, so they hold almost every event: whole-rank
shares give no analysis rank less than the larger of them.
--trace ring: tests/apps/ring on 4 ranks with the default Peruse selection, three messages per
rank and iteration to its neighbours: the most messages per event a trace has, and with 4
analysis ranks every one of them crosses to another (the exchange's worst case for prv and
export). The one-process run of export writes no --analysis-stats: its peak RSS is
/usr/bin/time's.
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
    if opts.keep and os.path.exists(os.path.join(out, "traces.otf2")):
        return out  # the trace an earlier run kept (--keep DIR)
    if opts.trace == "ring":
        env = {"MPITRACE_OUTPUT": out}
        program = [os.path.join(opts.build, "tests", "ring"), "-i", str(opts.ring_iterations)]
    else:
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


def analyse(opts, trace, stats, np=None):
    exe = os.path.join(opts.build, "tools", "perusetrace")
    cmd = ["/usr/bin/time", "-f", "TIME %e %M %U %S", exe, opts.command, "-q", trace]
    if opts.command == "prv":
        cmd += ["-o", os.path.join(os.path.dirname(stats), "out")]
    elif opts.command == "export":
        cmd += ["--perfetto", "-o", os.path.join(os.path.dirname(stats), "out.json")]
    if np or opts.command != "export":
        cmd += ["--analysis-stats", stats]
    cmd += ["--np", str(np)] if np else []
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{opts.command} {'--np ' + str(np) if np else ''} failed ({done.returncode}): "
                 f"{done.stderr[-1500:]}")
    wall, rss, user, system = re.search(r"TIME (\S+) (\S+) (\S+) (\S+)", done.stderr).groups()
    if not np and opts.command == "export":
        # One process: what /usr/bin/time saw of it.
        ranks = [{"rank": 0, "traced_ranks": 4, "events": None, "bytes_read": None,
                  "bytes_sent": 0, "peak_rss_kb": int(rss),
                  "pass_cpu_s": float(user) + float(system),
                  "cpu_s": float(user) + float(system)}]
    else:
        with open(stats, encoding="utf-8") as f:
            ranks = json.load(f)["ranks"]
    return float(wall), ranks


def main():
    parser = bench_common.options()
    parser.add_argument("--np", default="1,2,3,4", help="analysis ranks to try, e.g. 1,2,4")
    parser.add_argument("--command", choices=("profile", "prv", "export"),
                        default="profile")
    parser.add_argument("--trace", choices=("polls", "ring"), default="polls")
    parser.add_argument("--poll-us", type=int, default=1_600_000)
    parser.add_argument("--ring-iterations", type=int, default=120_000)
    parser.add_argument("--keep", help="keep the trace in this directory, and use the one an "
                        "earlier run kept there")
    opts = bench_common.parse(parser)
    work = opts.keep or tempfile.mkdtemp(prefix="perusetrace-parallel-bench-", dir=opts.build)
    os.makedirs(work, exist_ok=True)
    try:
        trace = make_trace(opts, work)
        archive = bench_common.tree_bytes(trace)
        runs = [("one process", *analyse(opts, trace, os.path.join(work, "single.json")))]
        for n in (int(x) for x in opts.np.split(",")):
            runs.append((f"--np {n}", *analyse(opts, trace, os.path.join(work, f"np{n}.json"),
                                               n)))
        events = sum(r["events"] for r in runs[-1][2])
        print(f"archive: {events:,} events, {archive / 1e6:.1f} MB")
        print("| run | wall s | rank | traced ranks | events | MB read | read / share | "
              "bytes sent | peak RSS MiB | pass CPU s | CPU s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, wall, ranks in runs:
            wall_text = f"{wall:.2f}"
            for r in ranks:
                if r["events"] is None:  # export in one process: all of it
                    r = dict(r, events=events, bytes_read=archive)
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
