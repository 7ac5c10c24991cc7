#!/usr/bin/python3
"""What the sampler costs a compute-bound program: bench/compute_bound on 2 ranks (its compute
time only, the slower rank's), in modes run back to back in every cycle:

  a  untraced
  b  traced, no sampling
  c  traced, sampling every 1 ms (1 kHz)
  d  traced, sampling every 100 us (10 kHz)
  w  as c, with the timers on the wall clock (MPITRACE_SAMPLING_CLOCK=wall: a signal every
     period whether the thread runs or not) instead of the threads' CPU time

    run_sampling.py --build BUILD [--cycles 7] [--rounds 20] [--iterations 20000000] [--ranks 2]
                    [--workload compute|comm|hpcc] [--messages 20000] [--sample-events none]
                    [--hpcc-input hpccinf.txt]

With --workload comm, bench/comm_bound instead (without mode b) (ROUNDS rounds of MESSAGES 1 KiB exchanges
around a ring, its whole wall time): a run that is mostly inside MPI, where c and d sample in
sample-only mode (MPITRACE_MODE=sample, the mode for sampling at scale) and are compared with
a, untraced, as is e (sample-only every 100 ms: the mode's cost per call without its
signals); the samples each thread took per second are counted in mode c's archive. With
--workload hpcc --hpcc-input FILE, Debian's hpcc on 4 ranks (two per core, yielding when
idle) in modes a, c and e: its wall time.

With --ranks 4 the ranks share the 2 cores two by two (unpinned, mpi_yield_when_idle): what a
sample costs where a rank's signals wait for its core.

Prints per mode the median compute time over cycles, and from the per-cycle differences (c - b
and d - b over b) the overhead of sampling at 1 and 10 kHz, and the cost of one sample (signal
delivery, state, stack walk, copy into the thread's buffer): (w - b) / (samples taken in w, one a
period). The samples (signals) each thread took per second are counted in the archives of the
last cycle's c and w.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from statistics import median

import bench_common
import mpi_launch  # on the path bench_common sets

MODES = {"a": None, "b": "off", "c": "1ms", "d": "100us", "w": "1ms"}
# --workload comm adds e: sample-only mode sampling every 100 ms, nearly no signal: what the
# mode costs per call (the MPI state, the Peruse callbacks that tell work from stall).
COMM_MODES = {**MODES, "e": "100ms"}


def run_mode(mode, opts, work):
    env, preload = {}, None
    if COMM_MODES[mode] is not None:
        preload = os.path.join(opts.build, "lib", "libperusetrace.so")
        env = {"MPITRACE_OUTPUT": os.path.join(work, f"trace-{mode}"),
               "MPITRACE_SAMPLING": COMM_MODES[mode]}
        if mode == "w":
            env["MPITRACE_SAMPLING_CLOCK"] = "wall"
        if opts.workload != "compute" and mode in ("c", "d", "e", "w"):
            env["MPITRACE_MODE"] = "sample"
            if opts.sample_events:
                env["MPITRACE_PERUSE_EVENTS"] = opts.sample_events
    mpirun = os.path.join(opts.mpi_prefix, "bin", "mpirun")
    pinned = opts.ranks <= (os.cpu_count() or 1)
    cmd = mpi_launch.command(mpirun, opts.ranks, env, preload, bind="core" if pinned else "none")
    if not pinned:
        cmd += ["--mca", "mpi_yield_when_idle", "1"]
    if opts.workload == "hpcc":
        return run_hpcc(opts, work, cmd, env)
    if opts.workload == "comm":
        cmd += [os.path.join(opts.build, "bench", "comm_bound"), str(opts.rounds),
                str(opts.messages)]
    else:
        cmd += [os.path.join(opts.build, "bench", "compute_bound"), str(opts.rounds),
                str(opts.iterations)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=work,
                          env=mpi_launch.without_tracer_settings())
    if done.returncode != 0:
        sys.exit(f"mode {mode} failed: {done.stderr[-1500:]}")
    for line in done.stdout.splitlines():
        if line.startswith("compute_seconds "):
            return float(line.split()[1])
    sys.exit(f"mode {mode} printed no compute time: {done.stdout[-500:]}")


def run_hpcc(opts, work, cmd, env):
    """Debian's hpcc (a Debian binary: this build's Open MPI by LD_LIBRARY_PATH) in a directory
    of its own with --hpcc-input; its wall time, once it said Success=1."""
    run_dir, output = bench_common.hpcc_run_dir(work, opts.hpcc_input)
    library_path = ["-x", f"LD_LIBRARY_PATH={os.path.join(opts.mpi_prefix, 'lib')}"]
    start = time.monotonic()
    done = subprocess.run(cmd[:1] + library_path + cmd[1:] + ["/usr/bin/hpcc"],
                          capture_output=True, text=True, cwd=run_dir,
                          env=mpi_launch.without_tracer_settings())
    elapsed = time.monotonic() - start
    if done.returncode != 0 or not bench_common.hpcc_succeeded(output):
        sys.exit(f"hpcc failed ({done.returncode}): {done.stderr[-1500:]}")
    return elapsed


def main():
    parser = bench_common.options(mpi="--mpi-prefix")
    parser.add_argument("--cycles", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=20000000)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--workload", choices=("compute", "comm", "hpcc"), default="compute")
    parser.add_argument("--hpcc-input", help="the hpccinf.txt of --workload hpcc")
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--sample-events", help="MPITRACE_PERUSE_EVENTS of the sample-only "
                        "modes (none: no Peruse callback, every wait counted as a stall)")
    opts = bench_common.parse(parser)
    if opts.workload == "hpcc" and not opts.hpcc_input:
        parser.error("--workload hpcc needs --hpcc-input FILE (an hpccinf.txt)")
    # Full tracing (b) of a message-bound run takes longer than all the others: left out there.
    times = {m: [] for m in ({k: v for k, v in COMM_MODES.items() if k != "b"}
                             if opts.workload == "comm" else
                             {"a": None, "c": "1ms", "e": "100ms", "w": "1ms"}
                             if opts.workload == "hpcc"
                             else MODES)}
    with tempfile.TemporaryDirectory(prefix="perusetrace-sampling-") as work:
        for cycle in range(opts.cycles):
            for mode in times:
                print(f"cycle {cycle + 1}/{opts.cycles}, mode {mode}", file=sys.stderr)
                times[mode].append(run_mode(mode, opts, work))
        print("compute seconds, median over cycles: " +
              ", ".join(f"{m} {median(t):.4f}" for m, t in times.items()))
        if opts.workload == "hpcc":
            for mode, what in (("c", "sample-only at 1 kHz"), ("e", "sample-only at 10 Hz"),
                               ("w", "sample-only at 1 kHz on the wall clock")):
                ratio = [x / a for x, a in zip(times[mode], times["a"])]
                print(f"hpcc, {what}: x{median(ratio):.3f} of the untraced wall time (per "
                      f"cycle: {', '.join(f'{r:.3f}' for r in ratio)})")
            for mode in ("c", "w"):
                print(samples_per_second(opts, work, mode, times[mode][-1]))
        elif opts.workload == "comm":
            report_comm(opts, work, times)
        else:  # while the archives are there
            report_compute(opts, work, times)


def report_compute(opts, work, times):
    """Traced and sampled against traced, the cost of one sample, the samples per second."""
    for mode, rate in (("c", "1 kHz"), ("d", "10 kHz"), ("w", "1 kHz on the wall clock")):
        overhead = [100 * (x - b) / b for x, b in zip(times[mode], times["b"])]
        print(f"sampling at {rate}: {median(overhead):+.2f}% of the compute time "
              f"(per cycle: {', '.join(f'{o:+.2f}' for o in overhead)})")
    period = 1e-3
    per_sample = [(w - b) / (w / period) * 1e9 for w, b in zip(times["w"], times["b"])]
    print(f"one sample costs {median(per_sample):.0f} ns (median over cycles, from the wall "
          "clock's 1 kHz)")
    for mode in ("c", "w"):
        print(samples_per_second(opts, work, mode, times[mode][-1]))
    platform = {}
    for kind in ("monotonic", "cpu", "waker"):
        platform[kind] = median(
            float(subprocess.run([os.path.join(opts.build, "bench", "timer_signal_cost"), kind],
                                 capture_output=True, text=True).stdout.split()[1])
            for _ in range(3))
    print(f"of which the platform's timer signal with an empty handler: "
          f"{platform['monotonic']:.0f} ns (bench/timer_signal_cost); on a CPU-time timer "
          f"{platform['cpu']:.0f} ns; a thread woken every 100 us on the same core costs "
          f"{platform['waker']:.0f} ns a wake")
    tracing = [100 * (b - a) / a for a, b in zip(times["a"], times["b"])]
    print(f"tracing without sampling: {median(tracing):+.2f}% (a compute-bound run calls MPI "
          "rarely)")


def report_comm(opts, work, times):
    """Sample-only mode against untraced, and the samples per thread per second of mode c."""
    for mode, what in (("c", "sample-only at 1 kHz"), ("d", "sample-only at 10 kHz"),
                       ("e", "sample-only at 10 Hz (the mode without its signals)"),
                       ("w", "sample-only at 1 kHz on the wall clock")):
        overhead = [100 * (x - a) / a for x, a in zip(times[mode], times["a"])]
        print(f"{what} against untraced: {median(overhead):+.2f}% of the wall "
              f"time (per cycle: {', '.join(f'{o:+.2f}' for o in overhead)})")
    signals = [100 * (c - e) / a for c, e, a in zip(times["c"], times["e"], times["a"])]
    print(f"of which the 1 kHz signals (c - e over a): {median(signals):+.2f}%")
    for mode in ("c", "w"):
        print(samples_per_second(opts, work, mode, times[mode][-1]))


def samples_per_second(opts, work, mode, seconds):
    """The samples (each one signal) per sampled thread per second in the newest archive of
    MODE, which ran SECONDS."""
    archives = sorted(glob.glob(os.path.join(work, f"trace-{mode}*", "traces.otf2")),
                      key=os.path.getmtime)
    counted = subprocess.run([os.path.join(opts.build, "tests", "trace_counts"), archives[-1]],
                             capture_output=True, text=True) if archives else None
    if counted is None or counted.returncode != 0:
        return f"samples per thread: mode {mode}'s archive could not be counted"
    locations = json.loads(counted.stdout)["locations"]
    samples = [l["kinds"].get("CallingContextSample", 0) for l in locations]
    threads = [n for n in samples if n]
    return (f"samples (signals) per thread per second in mode {mode}: "
            f"{median(threads) / seconds:.0f} ({len(threads)} sampled threads, {sum(samples)} "
            f"samples in {seconds:.2f} s of the last cycle)")


if __name__ == "__main__":
    main()
