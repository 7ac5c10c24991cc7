"""Paraver's own kernel for the tests: paramedir, BSC's command-line Paraver, which reads
.prv/.pcf/.row exactly as Paraver does and computes a configuration's (.cfg) histogram.

Debian does not package Paraver. scripts/build-paramedir builds paramedir from the paraver-kernel
source tarball (MPITRACE_PARAVER_TARBALL; .ci/run points it at ../shared/deps) into a cache
outside the checkout, once; scripts/setup runs it, and locate() runs it again, which reuses the
cache or builds when only the tarball is there.

    locate(repo)                 -> paramedir's path; raises Unavailable(why) when there is
                                    no paraver-kernel source at all (the tests skip), and
                                    BuildFailed(why) when there is one but paramedir could not
                                    be built from it (the tests fail)
    run(paramedir, prv, jobs)    -> failures: paramedir computes each (cfg, output) of `jobs`
    histogram(output)            -> {row label: {column label: value}}
"""
import os
import subprocess

CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "converters", "paraver")
# What paramedir prints on stdout when a configuration names an event type the trace has no
# event of, and goes on: Paraver's stock MPI configurations say it on any trace without, say,
# MPI-IO calls. Every other word on stdout, and anything on stderr, is a failure.
SOME_EVENTS_ABSENT = "Some of the events specified in the filter doesn't appear in the trace."
# scripts/build-paramedir's exit status when it has no source to build from (and no cache).
NO_SOURCE = 2


class Unavailable(Exception):
    """paramedir cannot be had on this machine: no paraver-kernel source and nothing cached.
    The one reason to skip."""


class BuildFailed(Exception):
    """A paraver-kernel source was there but paramedir was not built from it (a failed build, a
    tarball with the wrong checksum, an unwritable cache, no executable): a failure, never a
    skip."""


def config(name):
    """The path of a configuration of tests/converters/paraver/."""
    return os.path.join(CONFIGS, name)


def locate(repo):
    """paramedir from the cache, built first when only its source is there (about 6 minutes on
    2 cores). Raises Unavailable with scripts/build-paramedir's reason when there is neither
    (its exit status 2), BuildFailed with its reason and what to do when anything else went
    wrong."""
    script = os.path.join(repo, "scripts", "build-paramedir")
    build = subprocess.run([script], capture_output=True, text=True)
    path = build.stdout.strip()
    said = build.stderr.strip()
    if build.returncode == NO_SOURCE:
        raise Unavailable(f"paramedir is not available (scripts/build-paramedir exit "
                          f"{build.returncode}: no paraver-kernel source): {said}")
    if build.returncode != 0:
        raise BuildFailed(f"scripts/build-paramedir failed (exit {build.returncode}): the "
                          f"paramedir tests need Paraver's paramedir and it could not be built. "
                          f"{said}\nFix what it says, then run {script} again (scripts/setup "
                          f"runs it too).")
    if not os.access(path, os.X_OK):
        raise BuildFailed(f"scripts/build-paramedir exited 0 but printed no executable "
                          f"paramedir ({path!r}; stderr: {said!r}). Remove the prefix it "
                          f"names (MPITRACE_PARAVER_PREFIX, default ~/.cache/perusetrace/"
                          f"paramedir-abbc7c3b48e5) and run {script} again.")
    return path


def run(paramedir, prv, jobs, tolerate_absent_events=False):
    """paramedir PRV CFG OUTPUT [CFG OUTPUT...] in one load of the trace. paramedir exits 0 even
    when it rejects records or a configuration, so its words are the verdict: any stderr, or
    stdout other than SOME_EVENTS_ABSENT where `tolerate_absent_events`, is a failure, as is an
    output it did not write."""
    args = [paramedir, prv]
    for cfg, output in jobs:
        args += [cfg, output]
        if os.path.exists(output):
            os.remove(output)
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    failures = []
    if done.returncode != 0:
        failures.append(f"paramedir exited {done.returncode}")
    if done.stderr.strip():
        failures.append(f"paramedir wrote on stderr: {done.stderr.strip()[:2000]}")
    for line in done.stdout.splitlines():
        said = line.split(": ", 1)[-1].strip()
        if line.strip() and not (tolerate_absent_events and said == SOME_EVENTS_ABSENT):
            failures.append(f"paramedir said: {line.strip()}")
    for cfg, output in jobs:
        if not os.path.exists(output):
            failures.append(f"paramedir wrote no {os.path.basename(output)} for "
                            f"{os.path.basename(cfg)}")
    return failures


def histogram(path):
    """A histogram paramedir wrote: a header line of column labels, then a row per object
    ("THREAD 1.2.1"), tab-separated, then totals (Total, Average, ...) after an empty line."""
    with open(path) as f:
        lines = f.read().split("\n")
    columns = lines[0].rstrip("\t").split("\t")[1:]
    rows = {}
    for line in lines[1:]:
        if not line.strip():
            break
        cells = line.rstrip("\t").split("\t")
        rows[cells[0]] = {c: float(v) for c, v in zip(columns, cells[1:])}
    return rows
