#!/usr/bin/python3
"""The hot path's cost: bench/hot_path under the tracer and untraced, one rank.

    run_hot_path.py --build BUILD [--buffer-size 8M] [--runs 5]

Prints ns per record (no drain in the measurement; with the drains it causes; two threads
at once, each on its own CPU; without its clock read), ns per clock read, ns a traced
MPI_Comm_rank adds over an untraced one (one Enter/Leave pair; and under MPI_THREAD_MULTIPLE on
one thread and on two at once), and what tracing adds to a 0-byte message a rank sends
itself, PMPI only and with all Peruse events, per message and per event it records. The self
message runs every callback and wrapper of a receive and a send on one core, packing included:
the whole cost a rank pays per event, where a ping-pong shows only the part on its critical path.
"""
import os
import statistics
import subprocess
import sys
import tempfile

import bench_common
import mpi_launch  # on the path bench_common sets


def run(opts, env, *args):
    # Unbound (as mpi_launch starts every rank): the program pins its threads itself, one per
    # CPU (bench/hot_path.cpp); bound to a core, as mpirun binds one rank by default, its two
    # threads would take turns on it.
    cmd = mpi_launch.command(os.path.join(opts.mpi_prefix, "bin", "mpirun"), 1, env)
    done = subprocess.run(cmd + [os.path.join(opts.build, "bench", "hot_path"), str(opts.scale)]
                          + list(args),
                          capture_output=True, text=True, env=mpi_launch.without_tracer_settings())
    if done.returncode != 0:
        sys.exit(f"hot_path failed: {done.stderr[-1500:]}")
    return {k: float(v) for k, v in (line.split() for line in done.stdout.splitlines()
                                     if len(line.split()) == 2)}


def main():
    parser = bench_common.options(mpi="--mpi-prefix")
    parser.add_argument("--buffer-size", default="8M")
    # Whole processes run in faster or slower states of this guest (untraced self messages took
    # 102 to 184 ns from one process to the next): the configurations run in turn, a figure
    # measured inside one process is the best over the runs, and what tracing adds is the
    # median over the runs of the difference within each run (paired, never best against best).
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=int, default=1,
                        help="divide every loop's length (a quick check that it runs: the "
                        "counts of records and events stay exact, the times mean nothing)")
    opts = bench_common.parse(parser)
    if opts.scale < 1:
        sys.exit(f"--scale {opts.scale}: give 1 (a measurement, the default) or more (a quick "
                 f"run whose loops are divided by it)")
    with tempfile.TemporaryDirectory(prefix="perusetrace-hot-") as work:
        def traced_run(events, name, *args):
            return run(opts, {"MPITRACE_OUTPUT": os.path.join(work, name),
                              "MPITRACE_BUFFER_SIZE": opts.buffer_size, "MPITRACE_GROUPS": "all",
                              "MPITRACE_PERUSE_EVENTS": events}, *args)
        runs = {"all": [], "pmpi": [], "untraced": [], "mt": [], "mt untraced": []}
        for i in range(opts.runs):
            runs["all"].append(traced_run("all", f"all-{i}"))
            runs["pmpi"].append(traced_run("none", f"pmpi-{i}"))
            runs["untraced"].append(run(opts, {"MPITRACE_ENABLED": "0"}))
            runs["mt"].append(traced_run("none", f"mt-{i}", "multiple"))
            runs["mt untraced"].append(run(opts, {"MPITRACE_ENABLED": "0"}, "multiple"))
        traced, pmpi, untraced, mt, mt_untraced = (
            {k: min(r[k] for r in results) for k in results[0]}
            for results in (runs["all"], runs["pmpi"], runs["untraced"], runs["mt"],
                            runs["mt untraced"]))

    def added(mode, baseline, key):
        """What `mode` adds to `baseline` for `key`: the median of the runs' differences."""
        return statistics.median(r[key] - b[key] for r, b in zip(runs[mode], runs[baseline]))
    print(f"ns per record, no drain measured : {traced['record_ns_hot']:.1f}")
    print(f"ns per record, drains included   : {traced['record_ns_with_drains']:.1f}")
    if "record_ns_two_threads" in traced:
        print(f"ns per record, two threads at once: {traced['record_ns_two_threads']:.1f} "
              f"(each on its own CPU)")
    else:
        print("ns per record, two threads at once: not measured (one CPU only)")
    print(f"ns per record, no clock read     : {traced['record_ns_without_clock']:.1f} "
          f"(one clock read alone: {traced['clock_read_ns']:.1f})")
    print(f"ns the MPI state costs per call  : {traced['state_ns']:.2f} (kept for the sampler "
          "and perusetrace_mpi_state)")
    print(f"ns a traced MPI_Comm_rank adds   : "
          f"{added('all', 'untraced', 'mpi_comm_rank_ns'):.1f} "
          f"({untraced['mpi_comm_rank_ns']:.1f} untraced, {traced['mpi_comm_rank_ns']:.1f} traced)")
    if "mt_mpi_comm_rank_ns" in mt_untraced:
        print(f"  MPI_THREAD_MULTIPLE, one thread : "
              f"{added('mt', 'mt untraced', 'mt_mpi_comm_rank_ns'):.1f} "
              f"({mt_untraced['mt_mpi_comm_rank_ns']:.1f} untraced)")
        if "mt_mpi_comm_rank_ns_two_threads" in mt_untraced:
            untraced_two = mt_untraced["mt_mpi_comm_rank_ns_two_threads"]
            print(f"  two threads at once, per thread : "
                  f"{added('mt', 'mt untraced', 'mt_mpi_comm_rank_ns_two_threads'):.1f} "
                  f"({untraced_two:.1f} untraced)")
        else:
            print("  two threads at once             : not measured (one CPU only)")
    else:
        print("  MPI_THREAD_MULTIPLE             : not measured (the MPI does not provide it)")
    base = untraced["self_message_ns"]
    print(f"0-byte self message, untraced    : {base:.1f} ns")
    # A Peruse record may carry events Open MPI fired right after it (carried_followers.hpp):
    # costs are per event, the records they take are shown beside.
    for name, mode, result in (("PMPI only", "pmpi", pmpi), ("all Peruse events", "all", traced)):
        cost, events = added(mode, "untraced", "self_message_ns"), result["events_per_self_message"]
        print(f"  traced, {name:<18}: +{cost:.1f} ns for {events:.0f} events "
              f"({result['records_per_self_message']:.0f} records), "
              f"{cost / events if events else 0:.1f} ns per event")
    peruse_events = traced["events_per_self_message"] - pmpi["events_per_self_message"]
    peruse_records = traced["records_per_self_message"] - pmpi["records_per_self_message"]
    real = None  # ns per Peruse event, dispatch, packing and writing included
    if peruse_events > 0:
        real = added("all", "pmpi", "self_message_ns") / peruse_events
        print(f"  the Peruse events alone        : {real:.1f} ns per event "
              f"({peruse_events:.0f} per message in {peruse_records:.0f} records)")
    hot = traced["record_ns_hot"]
    if opts.scale != 1:
        print(f"--scale {opts.scale}: loops cut short, so the times above measure nothing; no "
              f"verdict")
        return
    print(f"target: <= 20 ns per recorded event on the hot path: record path {hot:.1f} ns, "
          f"{'met' if hot <= 20 else 'MISSED'}")
    if real is not None:
        print(f"        a real Peruse callback, dispatch, packing and writing included: "
              f"{real:.1f} ns, {'met' if real <= 20 else 'MISSED'}")


if __name__ == "__main__":
    main()
