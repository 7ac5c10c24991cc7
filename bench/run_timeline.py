#!/usr/bin/python3
"""`perusetrace report --html` on a large trace: what the page's timeline costs the report, how
large the page is, and how fast headless Chromium loads and draws it.

    run_timeline.py --build BUILD [--trace DIR | --rounds 200000] [--runs 3]

Without --trace, traces tests/many_events ROUNDS on 2 ranks with every Peruse event (200000
rounds: about 1.4 * 10^7 events). Runs the report with and without --html in turns and prints,
per run, wall time and CPU time, and the CPU time of its busiest thread (the archive's reading:
the report's wall time on two idle cores); then the page's size and what it keeps, and in
Chromium the time to the first drawn timeline and the time to draw views of several widths.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import bench_common
import chromium_page  # on the path bench_common sets
import mpi_launch


def trace(opts, work):
    out = os.path.join(work, "many-events-trace")
    env = {"MPITRACE_OUTPUT": out, "MPITRACE_PERUSE_EVENTS": "all"}
    cmd = mpi_launch.command(opts.mpirun, 2, env, os.path.join(opts.build, "lib",
                                                               "libperusetrace.so"))
    run = subprocess.run(cmd + [os.path.join(opts.build, "tests", "many_events"),
                                str(opts.rounds)],
                         env=dict(mpi_launch.without_tracer_settings(), **mpi_launch.RANK_ENV,
                                  **env),
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"many_events failed ({run.returncode}): {run.stderr[-1500:]}")
    return out


def thread_cpu(pid):
    """CPU seconds of each live thread of `pid` (user + system), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[tid] = (int(fields[11]) + int(fields[12])) / ticks
    except OSError:
        pass
    return out


def report(opts, trace_dir, html):
    """(wall s, CPU s, busiest thread's CPU s, events) of one report."""
    cmd = [os.path.join(opts.build, "tools", "perusetrace"), "report", trace_dir, "-q"]
    if html:
        cmd += ["--html", html]
    before = os.times()
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    threads = {}
    while p.poll() is None:  # threads' CPU as last seen before they end
        threads.update(thread_cpu(p.pid))
        time.sleep(0.02)
    wall = time.monotonic() - start
    out, err = p.communicate()
    after = os.times()
    if p.returncode != 0:
        sys.exit(f"report failed ({p.returncode}): {err[-1500:]}")
    cpu = (after.children_user - before.children_user) + \
        (after.children_system - before.children_system)
    events = int(re.search(r"(\d+) events", out).group(1))
    return wall, cpu, max(threads.values(), default=cpu), events


def rate(events, seconds):
    """M events/s; "-" for a time under the clock's 10 ms tick (a small smoke-test trace)."""
    return f"{events / seconds / 1e6:.2f}" if seconds > 0 else "-"


def page_figures(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    data = json.loads(re.search(r'id="timeline-data">(.*?)</script>', text, re.S).group(1))
    return len(text.encode()), data


def browser_figures(path, data):
    with chromium_page.ChromiumPage(path) as page:
        status = page.evaluate("Object.assign({}, document.getElementById('tl-status').dataset)")
        rows = []
        span = data["span_ns"]
        first_occurrence = next((t["rows"][0]["view"] for t in data["tables"] if t["rows"]), None)
        views = [("whole trace", 0, span), ("1/100 of it", span * 0.45, span * 0.46),
                 ("1/10^4 of it", span * 0.45, span * 0.45 + span / 1e4),
                 ("1/10^6 of it", span * 0.45, span * 0.45 + span / 1e6)]
        if first_occurrence:
            views.append(("the first table row's occurrence", *first_occurrence))
        for name, a, b in views:
            page.evaluate(f"perusetraceTimeline.setView({a}, {b})")
            times = [page.evaluate("perusetraceTimeline.draw()") for _ in range(5)]
            mode = page.evaluate("document.getElementById('tl-status').dataset.mode")
            rows.append((name, statistics.median(times), mode))
        errors = page.errors
    return status, rows, errors


def main():
    parser = bench_common.options()
    parser.add_argument("--trace", help="an existing trace directory instead of tracing")
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    opts = bench_common.parse(parser)
    with tempfile.TemporaryDirectory(prefix="perusetrace-timeline-", dir=opts.build) as work:
        trace_dir = opts.trace or trace(opts, work)
        html = os.path.join(work, "report.html")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'run':<14}{'wall s':>8}{'CPU s':>8}{'busiest thread s':>18}{'M events/s':>12}"
              f"{' (busiest)':>11}")
        for run in range(opts.runs):
            for label, out in (("report", None), ("report --html", html)):
                wall, cpu, busiest, events = report(opts, trace_dir, out)
                print(f"{label:<14}{wall:>8.2f}{cpu:>8.2f}{busiest:>18.2f}"
                      f"{rate(events, wall):>12}{rate(events, busiest):>11}")
        size, data = page_figures(html)
        print(f"{events} events; page {size / 2**20:.2f} MiB; summary {data['buckets']} buckets "
              f"x {len(data['rows'])} rows; detail {data['items_kept']} of {data['items_seen']} "
              f"items ({'whole trace' if data['complete'] else 'windows'}), "
              f"{len(data['coverage'])} covered ranges")
        if chromium_page.browser() is None:
            print("chromium is not installed: no load and draw times")
            return
        status, rows, errors = browser_figures(html, data)
        print(f"Chromium: timeline drawn {float(status['loadMs']):.0f} ms after navigation "
              f"started (first draw {float(status['drawMs']):.1f} ms)")
        for name, ms, mode in rows:
            print(f"  draw {name:<34}{ms:>8.1f} ms  ({mode})")
        if errors:
            print(f"JavaScript errors: {errors[:3]}")


if __name__ == "__main__":
    main()
