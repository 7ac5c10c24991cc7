#!/usr/bin/python3
"""perusetrace report, prv, export, profile and recover on damaged input: a real trace (with samples,
MPITRACE_SAMPLING) and a real journal (of a run that died), then many damaged copies —
truncated, bytes flipped, files missing or empty. Each tool must end within a time limit with
exit 0 (it could still read it) or 1 and one clear message (profile: or 2, no samples left); a
signal, a sanitizer report, a hang or an exit code of anything else fails the test.

    bad_archive_test.py --build BUILD --mpirun MPIRUN
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402

TIMEOUT = 30  # seconds: far beyond what an intact trace of this size needs (< 1 s)
# A traced run still going after this is a hang: its stacks are printed before meson's 300 s.
RUN_TIMEOUT = 100


def make_trace(opts, work):
    out = os.path.join(work, "trace")
    cmd = mpi_launch.command(opts.mpirun, 2, {"MPITRACE_OUTPUT": out,
                                              "MPITRACE_PERUSE_EVENTS": "all",
                                              "MPITRACE_SAMPLING": "1ms"}, opts.library)
    run = mpi_launch.run(cmd + [os.path.join(opts.build, "examples", "scenarios"), "all", "-d",
                                "5"], timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env())
    if run.returncode != 0 or not os.path.exists(os.path.join(out, "traces.otf2")):
        sys.exit(f"could not make the trace to damage:\n{run.stderr[-2000:]}")
    return out


def make_journal(opts, work):
    """A run that dies by a segfault: its journal, before any recover."""
    out = os.path.join(work, "died")
    cmd = mpi_launch.command(opts.mpirun, 2, {"MPITRACE_OUTPUT": out,
                                              "MPITRACE_BUFFER_SIZE": "64K"}, opts.library)
    run = mpi_launch.run(cmd + [os.path.join(opts.build, "tests", "dies"), "segv", "1000"],
                         timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env())
    if run.returncode is None:
        sys.exit(f"the dying run hung:\n{run.stderr[-2000:]}")
    if not os.path.isdir(os.path.join(out, "journal")):
        sys.exit(f"the dying run left no journal in {out}")
    return out


def files_of(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, names in os.walk(root) for f in names)


def variants(original, rng):
    """(name, function damaging a copy) for every file of the directory."""
    out = []
    for rel in files_of(original):
        size = os.path.getsize(os.path.join(original, rel))

        def truncate(path, at):
            with open(path, "r+b") as f:
                f.truncate(at)

        def flip(path, positions):
            with open(path, "r+b") as f:
                for p in positions:
                    f.seek(p)
                    b = f.read(1)
                    f.seek(p)
                    f.write(bytes([(b[0] if b else 0) ^ 0xFF]))

        out.append((f"{rel}: missing", lambda d, r=rel: os.remove(os.path.join(d, r))))
        for at in sorted({0, 1, size // 3, size // 2, max(size - 1, 0)}):
            out.append((f"{rel}: cut at {at} of {size}",
                        lambda d, r=rel, a=at: truncate(os.path.join(d, r), a)))
        for n in range(6 if size else 0):
            positions = sorted(rng.sample(range(size), min(size, 1 + n * 3)))
            out.append((f"{rel}: bytes flipped at {positions[:4]}...",
                        lambda d, r=rel, p=positions: flip(os.path.join(d, r), p)))
        if size:
            out.append((f"{rel}: random bytes",
                        lambda d, r=rel, s=size, g=rng.randbytes(size): open(
                            os.path.join(d, r), "wb").write(g)))
    return out


def run_tool(args):
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return None
    return done


def judge(what, done, failures, stats, allowed=(0, 1)):
    if done is None:
        failures.append(f"{what}: still running after {TIMEOUT} s")
        return
    stats[done.returncode] = stats.get(done.returncode, 0) + 1
    if done.returncode < 0:
        failures.append(f"{what}: killed by signal {-done.returncode}\n{done.stderr[-800:]}")
    elif done.returncode not in allowed:
        failures.append(f"{what}: exit {done.returncode}\n{done.stderr[-800:]}")
    elif "Sanitizer" in done.stderr or "terminate called" in done.stderr:
        failures.append(f"{what}: {done.stderr[-800:]}")
    elif done.returncode != 0:
        lines = [l for l in done.stderr.splitlines() if l.startswith("perusetrace")]
        if not lines:
            failures.append(f"{what}: exit {done.returncode} without a perusetrace message: "
                            f"{done.stderr[-400:]!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--verbose", action="store_true")
    opts = parser.parse_args()
    opts.library = os.path.join(opts.build, "lib", "libperusetrace.so")
    tool = os.path.join(opts.build, "tools", "perusetrace")
    rng = random.Random(opts.seed)
    failures, stats = [], {}
    with tempfile.TemporaryDirectory(prefix="perusetrace-bad-") as work:
        trace = make_trace(opts, work)
        journal = make_journal(opts, work)
        cases = 0
        for name, damage in variants(trace, rng):
            copy = os.path.join(work, "copy")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(trace, copy)
            damage(copy)
            anchor = os.path.join(copy, "traces.otf2")
            done = run_tool([tool, "report", anchor])
            judge(f"report, {name}", done, failures, stats)
            if opts.verbose and done is not None:
                print(f"report exit {done.returncode}: {name}: {done.stderr.strip()[:150]}")
            judge(f"prv, {name}", run_tool([tool, "prv", anchor, "-o",
                                             os.path.join(work, "out")]), failures, stats)
            judge(f"export, {name}", run_tool([tool, "export", "--perfetto", anchor, "-o",
                                                os.path.join(work, "out.json")]), failures, stats)
            out = os.path.join(work, "profile")
            judge(f"profile, {name}", run_tool([tool, "profile", anchor, "--json", out + ".json",
                                                 "--html", out + ".html", "--folded",
                                                 out + ".folded"]), failures, stats, (0, 1, 2))
            cases += 1
        for name, damage in variants(journal, rng):
            copy = os.path.join(work, "copy")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(journal, copy)
            damage(copy)
            done = run_tool([tool, "recover", copy])
            judge(f"recover, {name}", done, failures, stats)
            if done is not None and done.returncode == 0:
                # What recover wrote must itself be readable.
                judge(f"report after recover, {name}",
                      run_tool([tool, "report", os.path.join(copy, "traces.otf2")]), failures,
                      stats)
            cases += 1
    print(f"{cases} damaged copies, tool exits: {dict(sorted(stats.items()))}")
    if failures:
        print(f"{len(failures)} failures:", file=sys.stderr)
        for f in failures[:25]:
            print(f"  - {f}", file=sys.stderr)
        sys.exit(1)
    print("every damaged input was refused or read, none crashed or hung")


if __name__ == "__main__":
    main()
