#!/usr/bin/python3
"""The README's main command, scripts/demo, run as the demo test always ran it (its set-up
skipped, MPITRACE_DEMO_NO_SETUP=1, on this build: MPITRACE_BUILD_DIR), and checked on what it
says and what it leaves, not only on its exit status.

    demo_test.py --demo scripts/demo --build BUILD

It must exit 0 and
  - trace both programs: `perusetrace run` says "trace written in" the demo's trace/ and
    stencil/ archives, the scenarios say they are all done on 2 ranks, the stencil its 20
    iterations;
  - report both: each `== ... ==` section of the script in order; the scenarios' report headed
    by its archive, "2 ranks, N events" (N > 0), a clock condition that holds, "What matters
    most" naming the late sender the scenarios inject, the ranks, the message matrix and the
    wait states; the stencil's by "4 ranks", with its "By context (phase,iteration)" table
    holding the halo and residual phases of every iteration;
  - leave what its closing lines name: both archives read by otf2-print without a warning and
    by python3-otf2 (every message matched, every Peruse request's life cycle whole), the JSON
    reports of 2 and 4 ranks for those archives whose wait states add up, and the HTML report.
The demo's output directory goes to a temporary directory of the test's, removed when it passes.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402
import wait_checks  # noqa: E402

# A demo still going after this is a hang, its stacks printed before meson's 600 s are up; it
# takes seconds on an idle machine.
RUN_TIMEOUT = 500
ITERATIONS = 20  # scripts/demo: annotated_stencil 20
SECTIONS = [
    r"== perusetrace run --events all -np 2 -- scenarios all -d 200 ==",
    r"== perusetrace report (?P<trace>\S+) ==",
    r"== an annotated program: perusetrace run -np 4 -- annotated_stencil 20 ==",
    r"== perusetrace report (?P<stencil>\S+) --by phase,iteration .*==",
]


def sections(stdout):
    """The demo's stdout cut at its `== ... ==` headings: ([heading match], [text after each]),
    and the failures when they are not the script's, in its order."""
    headings = [m for m in re.finditer(r"^== .* ==$", stdout, re.M)]
    found = [h.group(0) for h in headings]
    if len(found) != len(SECTIONS) or not all(re.fullmatch(p, h) for p, h in zip(SECTIONS, found)):
        return None, None, [f"the demo's sections are {found}, expected {SECTIONS}"]
    matches = [re.fullmatch(p, h) for p, h in zip(SECTIONS, found)]
    ends = [h.start() for h in headings[1:]] + [len(stdout)]
    return matches, [stdout[h.end():end] for h, end in zip(headings, ends)], []


def report_headline(text, archive, ranks, what):
    """The text report's first lines: its archive, RANKS ranks and some events, the clock
    condition holding."""
    f = []
    if f"perusetrace report: {archive}" not in text:
        f.append(f"{what}: the report does not name its archive {archive}")
    m = re.search(r"^  (\d+) ranks, (\d+) events, ", text, re.M)
    if not m or int(m.group(1)) != ranks or int(m.group(2)) == 0:
        f.append(f"{what}: the report's headline is not '{ranks} ranks, N events' with N > 0: "
                 f"{m.group(0) if m else 'none'}")
    if not re.search(r"^  clock condition: all \d+ matched messages received after they were "
                     r"sent$", text, re.M):
        f.append(f"{what}: the report does not say the clock condition holds")
    for heading in ("What matters most", "Ranks: time in MPI", "Message matrix",
                    "Wait states"):
        if not re.search(rf"^{heading}", text, re.M):
            f.append(f"{what}: the report has no '{heading}' section")
    return f


def archive_readable(archive, what):
    """otf2-print reads it without a word on stderr; python3-otf2 reads every message matched
    and every Peruse request's life cycle whole."""
    if not os.path.isfile(archive):
        return [f"{what}: no archive at {archive}"]
    printed = subprocess.run(["otf2-print", archive], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    warnings = [line for line in printed.stderr.splitlines() if line.strip()]
    if printed.returncode != 0 or warnings:
        return [f"{what}: otf2-print {archive} exited {printed.returncode}: {warnings[:5]}"]
    try:
        trace = trace_checks.load(archive)
    except Exception as e:  # python3-otf2's errors have no common base
        return [f"{what}: python3-otf2 cannot read {archive}: {e!r}"]
    return [f"{what}: {e}" for e in trace_checks.check_messages(trace, None)]


def json_report(path, archive, ranks, what):
    """The JSON report the demo wrote: of ARCHIVE, RANKS ranks, its wait states adding up."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return None, [f"{what}: no readable JSON report at {path}: {e}"]
    f = []
    if os.path.realpath(data.get("archive", "")) != os.path.realpath(archive):
        f.append(f"{what}: {path} reports on {data.get('archive')}, not {archive}")
    if len(data.get("ranks", [])) != ranks or not data.get("events"):
        f.append(f"{what}: {path} has {len(data.get('ranks', []))} ranks and "
                 f"{data.get('events')} events, expected {ranks} ranks and some events")
    f += [f"{what}: wait states: {e}" for e in wait_checks.invariant(data)]
    return data, f


def check(run, out_root):
    f = []
    if run.returncode is None:
        return [f"scripts/demo hung: killed after {RUN_TIMEOUT} s (stacks above)"]
    if run.returncode != 0:
        f.append(f"scripts/demo exited {run.returncode}")
    matches, texts, f_sections = sections(run.stdout)
    f += f_sections
    dirs = [os.path.join(out_root, d) for d in os.listdir(out_root)] if os.path.isdir(
        out_root) else []
    if len(dirs) != 1:
        return f + [f"expected one demo directory in {out_root}, found {dirs}"]
    out = dirs[0]
    trace, stencil = os.path.join(out, "trace"), os.path.join(out, "stencil")
    archives = {"scenarios": os.path.join(trace, "traces.otf2"),
                "annotated_stencil": os.path.join(stencil, "traces.otf2")}
    for what, archive in archives.items():
        if f"perusetrace: trace written in {archive}" not in run.stderr:
            f.append(f"{what}: `perusetrace run` did not say 'trace written in {archive}'")
        f += archive_readable(archive, what)
    if matches:
        run_text, trace_report, stencil_run, stencil_report = texts
        if matches[1].group("trace") != trace or matches[3].group("stencil") != stencil:
            f.append(f"the reports are of {matches[1].group('trace')} and "
                     f"{matches[3].group('stencil')}, not of {trace} and {stencil}")
        if not re.search(r"^scenarios: all done on 2 ranks", run_text, re.M):
            f.append("the scenarios did not say 'all done on 2 ranks'")
        if not re.search(rf"^annotated_stencil: {ITERATIONS} iterations", stencil_run, re.M):
            f.append(f"the stencil did not say it ran {ITERATIONS} iterations")
        f += report_headline(trace_report, archives["scenarios"], 2, "scenarios")
        most = trace_report.split("What matters most", 1)[-1].split("\n\n", 1)[0]
        if "Late sender" not in most:
            f.append(f"scenarios: 'What matters most' does not name the injected late sender:"
                     f"{most}")
        f += report_headline(stencil_report, archives["annotated_stencil"], 4,
                             "annotated_stencil")
        table = stencil_report.split("By context (phase,iteration)", 1)
        if len(table) != 2:
            f.append("annotated_stencil: the report has no 'By context (phase,iteration)' table")
        else:
            for phase in ("halo", "residual"):
                rows = set(re.findall(rf"^  phase={phase} iteration=(\d+) ", table[1], re.M))
                if rows != {str(i) for i in range(ITERATIONS)}:
                    f.append(f"annotated_stencil: the by-context table has phase={phase} for "
                             f"iterations {sorted(rows, key=int)}, expected 0-{ITERATIONS - 1}")
    # What its closing lines point at.
    for line, path in ((f"The trace:        {archives['scenarios']}", archives["scenarios"]),
                       (f"The report:       {out}/report.html (plots), {out}/report.json",
                        os.path.join(out, "report.html"))):
        if line not in run.stdout:
            f.append(f"the demo does not end saying '{line}'")
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            f.append(f"{path}, which the demo names, is missing or empty")
    _, f_json = json_report(os.path.join(out, "report.json"), archives["scenarios"], 2,
                            "scenarios")
    data, f_stencil = json_report(os.path.join(out, "stencil-report.json"),
                                  archives["annotated_stencil"], 4, "annotated_stencil")
    f += f_json + f_stencil
    if data is not None and data.get("by_context", {}).get("attributes") != ["phase",
                                                                              "iteration"]:
        f.append(f"annotated_stencil: the JSON report's by_context is not by phase,iteration: "
                 f"{str(data.get('by_context'))[:200]}")
    return f


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--demo", required=True, help="scripts/demo")
    parser.add_argument("--build", required=True, help="the build directory it runs")
    opts = parser.parse_args()
    work = tempfile.mkdtemp(prefix="perusetrace-demo-test-")
    out_root = os.path.join(work, "tmp")
    os.mkdir(out_root)
    # As the demo test ran it: no set-up, this build; its mktemp directory under our own TMPDIR.
    env = dict(os.environ, MPITRACE_DEMO_NO_SETUP="1", MPITRACE_BUILD_DIR=opts.build,
               TMPDIR=out_root)
    # A hang has every process's stacks printed and is killed (mpi_launch.run).
    run = mpi_launch.run(["bash", opts.demo], timeout=RUN_TIMEOUT, env=env)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    case_result.finish("demo", check(run, out_root), work)


if __name__ == "__main__":
    main()
