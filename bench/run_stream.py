#!/usr/bin/python3
"""The writer end to end: bench/stream writes N Peruse-shaped events through the tracer, one
rank; run once traced and once untraced (the memory baseline).

    run_stream.py --build BUILD [--events 10000000] [--buffer-size 8M]

Prints events/s while recording (drains to the journal included) and while encoding the OTF2
archive at MPI_Finalize, the archive's bytes per event, and the peak resident set above the
untraced run's against the configured buffer.
"""
import os
import subprocess
import sys
import tempfile

import bench_common
import mpi_launch  # on the path bench_common sets


def run(opts, env):
    cmd = mpi_launch.command(opts.mpirun, 1, env, None) + [
        os.path.join(opts.build, "bench", "stream"), str(opts.events)]
    done = subprocess.run(cmd, capture_output=True, text=True,
                          env=mpi_launch.without_tracer_settings())
    if done.returncode != 0:
        sys.exit(f"stream failed ({done.returncode}): {done.stderr[-1500:]}")
    return {k: float(v) for k, v in (line.split() for line in done.stdout.splitlines()
                                     if len(line.split()) == 2)}


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def main():
    parser = bench_common.options()
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--buffer-size", default="8M")
    opts = bench_common.parse(parser)
    with tempfile.TemporaryDirectory(prefix="perusetrace-stream-", dir=opts.build) as work:
        out = os.path.join(work, "t")
        traced = run(opts, {"MPITRACE_OUTPUT": out,
                            "MPITRACE_BUFFER_SIZE": opts.buffer_size})
        archive = bench_common.tree_bytes(out)
        untraced = run(opts, {"MPITRACE_ENABLED": "0"})
    n = traced["events"]
    buffer_mib = parse_size(opts.buffer_size) / 2**20
    extra_mib = (traced["peak_rss_kib"] - untraced["peak_rss_kib"]) / 1024
    print(f"events                          : {int(n):,}")
    print(f"recording (drains included)     : {n / traced['record_seconds'] / 1e6:.1f} M events/s "
          f"({traced['record_seconds'] * 1e9 / n:.1f} ns/event)")
    if traced.get("drained", 0) > 0:
        print(f"journal while recording         : {traced['journal_bytes'] / traced['drained']:.2f} "
              f"bytes/event (48 in memory)")
    print(f"encoding OTF2 at MPI_Finalize   : {n / traced['finalize_seconds'] / 1e6:.1f} M events/s "
          f"({traced['finalize_seconds']:.2f} s)")
    print(f"archive on disk                 : {archive / 2**20:.1f} MiB, "
          f"{archive / n:.2f} bytes/event")
    print(f"peak RSS above untraced         : {extra_mib:.1f} MiB with a {buffer_mib:g} MiB buffer "
          f"(untraced {untraced['peak_rss_kib'] / 1024:.1f} MiB)")
    print(f"target: peak RSS within the buffer plus a few MiB (<= buffer + 8 MiB): "
          f"{'met' if extra_mib <= buffer_mib + 8 else 'MISSED'}")


if __name__ == "__main__":
    main()
