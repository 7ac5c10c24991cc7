#!/usr/bin/python3
"""`perusetrace export --perfetto` on large traces: time, throughput, peak memory and the JSON's
size per event.

    run_export.py --build BUILD [--trace stream|ping-pong] [--events 10000000] [--keep DIR]

`stream` traces bench/stream (N Peruse-shaped records on one rank: the writer's 10^7-event
stream of docs/performance.md); `ping-pong` traces tests/apps/many_events on 2 ranks, whose
events are MPI calls, messages and every Peruse event of a small message (about 50 events per
round trip). The export runs twice: to /dev/null (what reading and formatting cost) and to a
file beside the trace (what writing adds), each under /usr/bin/time for its peak resident set.
"""
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
    env = {"MPITRACE_OUTPUT": out, "MPITRACE_BUFFER_SIZE": "8M"}
    if opts.trace == "stream":  # the runtime is linked into bench/stream
        program, ranks, preload = [os.path.join(opts.build, "bench", "stream"),
                                   str(opts.events)], 1, None
    else:
        env["MPITRACE_PERUSE_EVENTS"] = "all"
        program = [os.path.join(opts.build, "tests", "many_events"), str(max(1, opts.events // 50))]
        ranks, preload = 2, os.path.join(opts.build, "lib", "libperusetrace.so")
    cmd = mpi_launch.command(opts.mpirun, ranks, env, preload) + program
    done = subprocess.run(cmd, capture_output=True, text=True,
                          env=mpi_launch.without_tracer_settings())
    if done.returncode != 0 or not os.path.exists(os.path.join(out, "traces.otf2")):
        sys.exit(f"tracing failed ({done.returncode}): {done.stderr[-1500:]}")
    return out


def timed_export(opts, trace, output):
    exe = os.path.join(opts.build, "tools", "perusetrace")
    done = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S %M", exe, "export",
                           "--perfetto", trace, "-o", output],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"export failed ({done.returncode}): {done.stderr[-1500:]}")
    wall, user, system, rss = re.search(r"TIME (\S+) (\S+) (\S+) (\d+)", done.stderr).groups()
    summary = re.search(r"(\d+) slices, (\d+) Peruse events, (\d+) messages, (\d+) counter "
                        r"values from (\d+) archive events", done.stderr)
    return float(wall), float(user), float(system), int(rss), [int(x) for x in summary.groups()]


def main():
    parser = bench_common.options()
    parser.add_argument("--trace", choices=("stream", "ping-pong"), default="stream")
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--keep", help="keep the trace and the JSON in this directory")
    opts = bench_common.parse(parser)
    work = opts.keep or tempfile.mkdtemp(prefix="perusetrace-export-bench-", dir=opts.build)
    os.makedirs(work, exist_ok=True)
    try:
        trace = make_trace(opts, work)
        archive_bytes = bench_common.tree_bytes(trace)
        null = timed_export(opts, trace, "/dev/null")
        output = os.path.join(work, "trace.perfetto.json")
        real = timed_export(opts, trace, output)
        size = os.path.getsize(output)
        slices, instants, flows, counters, archived = real[4]
        # Every exported line but the metadata is one event.
        json_events = 2 * slices + instants + 2 * flows + counters
        print(f"trace                      : {opts.trace}, {archived:,} archive events, "
              f"{archive_bytes / 2**20:.1f} MiB OTF2 ({archive_bytes / archived:.1f} bytes/event)")
        print(f"exported                   : {slices:,} slices, {instants:,} Peruse events, "
              f"{flows:,} messages, {counters:,} counter values = {json_events:,} JSON events")
        for label, (wall, user, system, rss, _) in (("to /dev/null", null), ("to a file", real)):
            print(f"export {label:<20}: {wall:.2f} s wall ({user:.2f} user, {system:.2f} sys), "
                  f"{archived / wall / 1e6:.2f} M archive events/s, peak RSS {rss / 1024:.1f} MiB")
        print(f"JSON                       : {size / 2**20:.1f} MiB, {size / json_events:.1f} "
              f"bytes per JSON event, {size / archived:.1f} per archive event, "
              f"{size / real[0] / 2**20:.0f} MiB/s written")
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
