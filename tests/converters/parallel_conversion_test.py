#!/usr/bin/python3
"""`perusetrace prv --np N` and `perusetrace export --perfetto|--hdtrace --np N` (MPI jobs of
analysis ranks) against the conversion in one process.

    parallel_conversion_test.py --perusetrace EXE --data DIR CASE

CASE:
  prv_equal  every archive of tests/data (DIR) converted in one process and with --np 1, 2, 3
             and 4 (and 8 on one, more analysis ranks than traced ranks; --gzip on one): the
             .pcf and .row are byte-identical, the .prv's header too, and its records are the
             same (equal after sorting the lines), in time order, and in the same order for
             each thread: they differ, if at all, in the order of records of different threads
             at one time. Messages between ranks of different shares are written (by the rank
             converting the receiver) as often as in one process (with --np 3 in rounds of 40
             archive events, so that halves come before and after their receives), and what crossed ranks
             (--analysis-stats' bytes_sent) is the message halves, a few dozen bytes each.
  perfetto_equal  every archive of DIR exported in one process and with --np 1, 2, 3, 4 (8 on
             one): the same events, once flow and operation ids are named by where their
             first end lies (the ids are each rank's own); "otherData" the same; each thread's
             events, arrow ends included, in the same order; the structural checks viewers
             rely on (export_test.structure), on the events ordered by time as viewers order
             them, find what they find in one process's file (nothing, but where clocks broke).
             `-o -` with --np is refused: the parts need a file to be joined in.
  hdtrace_equal  every archive of DIR exported with --hdtrace in one process and with --np 1,
             2, 3, 4 (8 on one): the same files, byte for byte.
  unreadable_share  an archive whose last rank's event file is gone fails prv and both
             exports with --np 3 and 4, with one message naming the file, and leaves no output
             or part behind.
(Ranks on several clocks whose messages need the clock repair: tests/cluster's clock_repair.)
Exits non-zero, saying why, on failure.
"""
import gzip
import itertools
import json
import re
import os
import shutil
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "converters")]
import case_result  # noqa: E402
import prv_check  # noqa: E402

# A message crossing shares travels as its send half, encoded in about a dozen bytes
# (reader/message_halves.hpp); never more than the 80 of the struct.
HALF_BYTES = 80


def archives(data):
    out = []
    for root, _dirs, files in os.walk(data):
        if "traces.otf2" in files:
            out.append(root)
    return sorted(out)


# With --np 3 the halves travel in rounds of 40 events of the archive (tools/common/
# exchange_rounds.hpp), dozens in a pass: halves come before and after their receives.
SMALL_ROUNDS = dict(os.environ, PERUSETRACE_EVENTS_PER_ROUND="40")


def round_bytes(ranks, n):
    """The lengths the exchange rounds send (8 bytes per rank, round and other rank)."""
    events = sum(r["events"] for r in ranks)
    rounds = max(1, min(4096, events // 40)) if n == 3 else 1
    return 8 * n * (n - 1) * (rounds + 1)


def env_for(extra):
    extra = list(extra)
    np = extra[extra.index("--np") + 1] if "--np" in extra else None
    return SMALL_ROUNDS if np == "3" else None


def convert(opts, archive, prefix, extra=()):
    return subprocess.run([opts.perusetrace, "prv", "-q", archive, "-o", prefix, *extra],
                          capture_output=True, text=True, timeout=300, env=env_for(extra))


def read_prv(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="ascii") as f:
        text = f.read()
    header, _, body = text.partition("\n")
    # "#Paraver (dd/mm/yyyy at hh:mm):...": the minute of the conversion is no difference.
    header = re.sub(r"^#Paraver \([^)]*\)", "#Paraver (DATE)", header)
    # The header's communicator lines ("c:...") come before the records.
    lines = body.splitlines()
    head = [header] + [x for x in lines if x.startswith("c:")]
    records = [x for x in lines if not x.startswith("c:")]
    return head, records


def thread_sequences(records):
    """{cpu:appl:task:thread: its state and event records in file order}."""
    out = {}
    for r in records:
        f = r.split(":")
        if f[0] in ("1", "2"):
            out.setdefault(":".join(f[1:5]), []).append(r)
    return out


def compare(name, want, got):
    """The failures of `got` (prefix) against `want` (prefix), as this file's docstring says."""
    failures = []
    for ext in (".pcf", ".row"):
        with open(want + ext, "rb") as a, open(got[0] + ext, "rb") as b:
            if a.read() != b.read():
                failures.append(f"{name}: the {ext} differs from the single process's")
    want_head, want_records = read_prv(want + ".prv")
    got_head, got_records = read_prv(got[0] + got[1])
    if got_head != want_head:
        failures.append(f"{name}: the header differs: {got_head[0]!r} vs {want_head[0]!r}")
    if sorted(got_records) != sorted(want_records):
        extra = set(got_records) - set(want_records)
        missing = set(want_records) - set(got_records)
        failures.append(f"{name}: {len(got_records)} records vs {len(want_records)}; not in "
                        f"the single process's: {sorted(extra)[:3]}, missing: "
                        f"{sorted(missing)[:3]}")
    times = [int(r.split(":")[5]) for r in got_records]
    if any(a > b for a, b in zip(times, times[1:])):
        failures.append(f"{name}: the records are not in time order")
    if thread_sequences(got_records) != thread_sequences(want_records):
        failures.append(f"{name}: a thread's records come in another order")
    return failures


def case_prv_equal(opts, work):
    failures = []
    found = archives(opts.data)
    if len(found) < 10:
        return [f"{opts.data} holds {len(found)} archives, expected the 15 of make_archives.sh"]
    for archive in found:
        name = os.path.relpath(archive, opts.data)
        base = os.path.join(work, name.replace("/", "_"))
        single = convert(opts, archive, base + "-single")
        if single.returncode != 0:
            failures.append(f"{name}: prv failed (exit {single.returncode}): {single.stderr}")
            continue
        failures += [f"{name}: single: {e}" for e in prv_check.check(base + "-single")[0]]
        _, records = read_prv(base + "-single.prv")
        comms = sum(1 for r in records if r.startswith("3:"))
        ns = [1, 2, 3, 4] + ([8] if name == "wait_states/chain" else [])
        for n in ns:
            prefix = f"{base}-np{n}"
            gz = name == "late_sender" and n == 2
            stats = prefix + ".stats"
            run = convert(opts, archive, prefix, ["--np", str(n), "--analysis-stats", stats] +
                          (["--gzip"] if gz else []))
            if run.returncode != 0:
                failures.append(f"{name} --np {n}: exit {run.returncode}: {run.stderr[-1500:]}")
                continue
            if not gz:
                failures += [f"{name} --np {n}: {e}" for e in prv_check.check(prefix)[0]]
            failures += compare(f"{name} --np {n}", base + "-single",
                                (prefix, ".prv.gz" if gz else ".prv"))
            with open(stats, encoding="utf-8") as f:
                ranks = json.load(f)["ranks"]
            sent = sum(r["bytes_sent"] for r in ranks)
            # Each message crossing shares costs one half (and the counts, the parts' directory
            # and the lengths a few hundred bytes per rank, and 8 bytes per round and pair):
            # never more than every message's.
            if sent > HALF_BYTES * comms + 512 * n + round_bytes(ranks, n):
                failures.append(f"{name} --np {n}: the ranks sent {sent} bytes for {comms} "
                                f"messages")
            leftovers = [f for f in os.listdir(work) if os.path.basename(prefix) in f
                         and ("parts-" in f or "sort-" in f)]
            if leftovers:
                failures.append(f"{name} --np {n}: left {leftovers} behind")
            print(f"{name} --np {n}: {len(records)} records, {comms} messages, {sent} B sent, "
                  f"events per rank {[r['events'] for r in ranks]}")
    return failures


def export(opts, archive, path, extra=(), format="--perfetto"):
    return subprocess.run([opts.perusetrace, "export", format, "-q", archive, "-o", path,
                           *extra], capture_output=True, text=True, timeout=300,
                          env=env_for(extra))


def tree(path):
    """{relative file name: bytes} of a directory."""
    out = {}
    for name in sorted(os.listdir(path)):
        with open(os.path.join(path, name), "rb") as f:
            out[name] = f.read()
    return out


def case_hdtrace_equal(opts, work):
    failures = []
    found = archives(opts.data)
    if len(found) < 10:
        return [f"{opts.data} holds {len(found)} archives, expected the 15 of make_archives.sh"]
    for archive in found:
        name = os.path.relpath(archive, opts.data)
        base = os.path.join(work, name.replace("/", "_"))
        single = export(opts, archive, base + "-single", ["--program", "app"], "--hdtrace")
        if single.returncode != 0:
            failures.append(f"{name}: export failed (exit {single.returncode}): {single.stderr}")
            continue
        want = tree(base + "-single")
        for n in [1, 2, 3, 4] + ([8] if name == "wait_states/chain" else []):
            out = f"{base}-np{n}"
            run = export(opts, archive, out, ["--program", "app", "--np", str(n)], "--hdtrace")
            if run.returncode != 0:
                failures.append(f"{name} --np {n}: exit {run.returncode}: {run.stderr[-1500:]}")
                continue
            got = tree(out)
            if got != want:
                differ = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
                failures.append(f"{name} --np {n}: files differ from one process's: {differ[:4]}")
        print(f"{name}: {len(want)} files, the same for --np 1-4")
    return failures


def canonical_events(doc):
    """The JSON's events as sorted strings, each flow and operation id replaced by where its
    first end lies (a flow's "s", else its "f"; an operation's "b"), and the events per thread
    (slices, instants, counters) in file order."""
    events = doc["traceEvents"]
    first_end = {}
    for e in events:
        if e["ph"] in ("s", "f", "b", "e") and "id" in e:
            key = (e["cat"], e["id"])
            place = (e["ph"] in ("s", "b"), e["pid"], e["tid"], e["ts"])
            if key not in first_end or (place[0] and not first_end[key][0]):
                first_end[key] = place
    out, per_thread = [], {}
    for e in events:
        e = dict(e)
        if "id" in e and e["ph"] in ("s", "f", "b", "e"):
            e["id"] = repr(first_end[(e["cat"], e["id"])][1:])
        out.append(json.dumps(e, sort_keys=True))
        if e["ph"] != "M":
            per_thread.setdefault((e["pid"], e["tid"]), []).append(out[-1])
    return sorted(out), per_thread


def case_perfetto_equal(opts, work):
    import export_test
    failures = []
    found = archives(opts.data)
    if len(found) < 10:
        return [f"{opts.data} holds {len(found)} archives, expected the 15 of make_archives.sh"]
    for archive in found:
        name = os.path.relpath(archive, opts.data)
        base = os.path.join(work, name.replace("/", "_"))
        single = export(opts, archive, base + "-single.json")
        if single.returncode != 0:
            failures.append(f"{name}: export failed (exit {single.returncode}): {single.stderr}")
            continue
        with open(base + "-single.json", encoding="utf-8") as f:
            want = json.load(f)
        want_events, want_threads = canonical_events(want)
        by_time = lambda events: sorted(events, key=lambda e: e.get("ts", 0))  # noqa: E731
        want_problems, _ = export_test.structure(by_time(want["traceEvents"]))
        flows = sum(1 for e in want["traceEvents"] if e["ph"] == "f")
        for n in [1, 2, 3, 4] + ([8] if name == "wait_states/chain" else []):
            path = f"{base}-np{n}.json"
            run = export(opts, archive, path, ["--np", str(n), "--analysis-stats",
                                               path + ".stats"])
            if run.returncode != 0:
                failures.append(f"{name} --np {n}: exit {run.returncode}: {run.stderr[-1500:]}")
                continue
            with open(path, encoding="utf-8") as f:
                got = json.load(f)
            got_events, got_threads = canonical_events(got)
            if got_events != want_events:
                extra = set(got_events) - set(want_events)
                missing = set(want_events) - set(got_events)
                failures.append(f"{name} --np {n}: {len(got_events)} events vs "
                                f"{len(want_events)}; not in one process's: {sorted(extra)[:2]}, "
                                f"missing: {sorted(missing)[:2]}")
            if got_threads != want_threads:
                failures.append(f"{name} --np {n}: a thread's events come in another order")
            if got.get("otherData") != want.get("otherData"):
                failures.append(f"{name} --np {n}: otherData differs")
            problems, _ = export_test.structure(by_time(got["traceEvents"]))
            if len(problems) != len(want_problems):
                failures.append(f"{name} --np {n}: {len(problems)} structural problems, one "
                                f"process's file {len(want_problems)}: {problems[:3]}")
            with open(path + ".stats", encoding="utf-8") as f:
                ranks = json.load(f)["ranks"]
            sent = sum(r["bytes_sent"] for r in ranks)
            if sent > HALF_BYTES * flows + 512 * n + round_bytes(ranks, n):
                failures.append(f"{name} --np {n}: the ranks sent {sent} bytes for {flows} "
                                f"messages")
            leftovers = [x for x in os.listdir(work) if os.path.basename(path) in x
                         and "parts-" in x]
            if leftovers:
                failures.append(f"{name} --np {n}: left {leftovers} behind")
            print(f"{name} --np {n}: {len(got_events)} events, {flows} arrows, {sent} B sent")
    # Parts joined by rank 0 need a file: standard output is refused, saying so.
    run = export(opts, found[0], "-", ["--np", "2"])
    if run.returncode != 1 or "give -o FILE" not in run.stderr or run.stdout:
        failures.append(f"export --np 2 -o -: exit {run.returncode}, expected 1 asking for a "
                        f"file: {run.stderr[-500:]!r}")
    return failures


def no_outputs(prefix):
    d, base = os.path.split(prefix)
    return [f for f in os.listdir(d) if f.startswith(base)]


def case_unreadable_share(opts, work):
    failures = []
    # The last traced rank's event file gone: the rank reading it fails, and so does the run.
    damaged = os.path.join(work, "damaged")
    shutil.copytree(os.path.join(opts.data, "wait_states", "chain"), damaged)
    import otf2
    with otf2.reader.open(os.path.join(damaged, "traces.otf2")) as t:
        last = max(t.definitions.locations, key=lambda loc: int(loc.group.name.split()[-1]))._ref
    missing = os.path.join("traces", f"{last}.evt")
    os.remove(os.path.join(damaged, missing))
    for n, command in itertools.product((3, 4), ("prv", "perfetto", "hdtrace")):
        prefix = os.path.join(work, f"damaged-{command}-np{n}")
        run = convert(opts, damaged, prefix, ["--np", str(n)]) if command == "prv" else \
            export(opts, damaged, prefix + ".json", ["--np", str(n)]) if command == "perfetto" \
            else export(opts, damaged, prefix, ["--np", str(n), "--program", "app"], "--hdtrace")
        said = [line for line in run.stderr.splitlines() if line.startswith("perusetrace")]
        print(f"damaged {command} --np {n}: exit {run.returncode}: {run.stderr.strip()}")
        if run.returncode != 1 or len(said) != 1 or missing not in said[0]:
            failures.append(f"damaged {command} --np {n}: exit {run.returncode} (expected 1) "
                            f"with {len(said)} messages (expected one naming {missing}): "
                            f"{run.stderr[-1500:]!r}")
        left = no_outputs(prefix)
        if command == "hdtrace" and left == [os.path.basename(prefix)]:
            left = [os.path.join(left[0], x) for x in os.listdir(prefix)]  # the directory stays
        if left:
            failures.append(f"damaged {command} --np {n} left {left}")
    return failures


CASES = case_result.cases_of(globals())


def main():
    case_result.run_listing_case(CASES, "parallel-conversion", ["perusetrace", "data"])


if __name__ == "__main__":
    main()
