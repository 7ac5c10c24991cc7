#!/usr/bin/python3
"""Trace the bundled example twice, compare the traces with `perusetrace diff`, check what it says.

    diff_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --scenarios EXE
                 --schema docs/diff.schema.json CASE

CASE:
  late_sender  scenarios late-sender -d 100 (A) and -d 300 (B) on 4 ranks: the wait states'
               late sender grows by the 200 ms the delay grew (+-20 ms), marked significant,
               and A's and B's figures (and the posted-queue measure's) are exactly those of
               `perusetrace report --json` on each archive; MPI_Recv's time grows
               significantly; the point-to-point messages do not change; every size class's
               messages and bandwidth (bytes over transfer time) are the report's. The two reports' JSON
               files compared instead of the archives give the same rows. The JSON is valid
               against docs/diff.schema.json and the text marks the late sender with '!'.
  identical    the same run twice (late-sender -d 100): no significant change in any message
               count, the point-to-point messages and bytes exactly equal; a trace compared
               with itself: no change at all and nothing significant.
  bad_input    one input, a missing trace, a JSON file that is no report, a file that is not
               JSON, a journal without an archive, a bad --threshold and a bad --min-time: one
               clear message each, exit code 1 (input) or 2 (usage).
"""
import json
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import report_test  # noqa: E402  (its JSON Schema validator)

RANKS = 4
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120


class Case:
    def __init__(self, opts, work):
        self.opts, self.work = opts, work

    def trace(self, name, delay_ms):
        out = os.path.join(self.work, name)
        mpi_launch.must_trace(self.opts.mpirun, RANKS,
                              [self.opts.scenarios, "late-sender", "-d", str(delay_ms)], out,
                              self.opts.preload, {"MPITRACE_PERUSE_EVENTS": "all"}, RUN_TIMEOUT,
                              self.work)
        return out

    def diff(self, a, b, name):
        """Runs diff A B --json; returns (text, JSON, failures)."""
        path = os.path.join(self.work, name + ".json")
        run = subprocess.run([self.opts.perusetrace, "diff", a, b, "--json", path],
                             capture_output=True, text=True)
        print(run.stdout)
        if run.returncode != 0:
            raise SystemExit(f"perusetrace diff failed ({run.returncode}): {run.stderr}")
        f = [f"diff wrote to stderr: {run.stderr[:300]!r}"] if run.stderr.strip() else []
        with open(path) as fh:
            data = json.load(fh)
        with open(self.opts.schema) as fh:
            schema = json.load(fh)
        f += [f"JSON: {e}" for e in report_test.validate(data, schema, schema)[:10]]
        return run.stdout, data, f

    def report(self, trace_dir):
        path = trace_dir + ".report.json"
        run = subprocess.run([self.opts.perusetrace, "report", trace_dir, "--json", path],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"perusetrace report failed ({run.returncode}): {run.stderr}")
        with open(path) as fh:
            return path, json.load(fh)


def rows(data):
    return {r["key"]: r for s in data["sections"] for r in s["rows"]}


def case_late_sender(c):
    a, b = c.trace("late100", 100), c.trace("late300", 300)
    text, data, f = c.diff(a, b, "diff")
    r = rows(data)
    total = r["wait.late_sender.total_ns"]
    change_ms = total["change"] / 1e6
    print(f"late sender: {total['a'] / 1e6:.3f} -> {total['b'] / 1e6:.3f} ms, "
          f"{change_ms:+.3f} ms")
    if not 180 <= change_ms <= 220 or not total["significant"]:
        f.append(f"late sender changed by {change_ms:.3f} ms (significant: "
                 f"{total['significant']}), expected +200 ms (the delays' difference) and "
                 f"significant")
    # A's and B's figures are the report's own.
    (ra_path, ra), (rb_path, rb) = c.report(a), c.report(b)
    for side, rep in (("a", ra), ("b", rb)):
        ls = rep["wait_states"]["patterns"]["late_sender"]
        want = ls["total_ns"] / ls["count"] if ls["count"] else 0
        if abs(r["wait.late_sender.per_case_ns"][side] - want) > 1e-6 * max(1, want) or \
                total[side] != ls["total_ns"]:
            f.append(f"late sender in {side.upper()}: diff says {total[side]} ns, the "
                     f"report {ls['total_ns']} ns over {ls['count']} cases")
        pq = rep["queue_measures"]["posted_queue"]
        if r["measure.posted_queue.total_ns"][side] != pq["total_ns"]:
            f.append(f"posted queue in {side.upper()}: diff "
                     f"{r['measure.posted_queue.total_ns'][side]}, report {pq['total_ns']}")
        recv = sum(fn["ns"] for rank in rep["ranks"] for fn in rank["functions"]
                   if fn["name"] == "MPI_Recv")
        if r["mpi.function.MPI_Recv"][side] != recv:
            f.append(f"MPI_Recv in {side.upper()}: diff {r['mpi.function.MPI_Recv'][side]}, "
                     f"report {recv}")
        for k, cls in enumerate(rep["messages"]["size_classes"]):
            if not cls["messages"]:
                continue
            bw = cls["transfer_bytes"] * 1e9 / cls["transfer_ns"] if cls["transfer_ns"] else None
            got = r.get(f"size.{k}.bandwidth", {}).get(side)
            if r.get(f"size.{k}.messages", {}).get(side) != cls["messages"] or \
                    (bw is None) != (got is None) or (bw and abs(got - bw) > 1e-9 * bw):
                f.append(f"size class {cls['label']} in {side.upper()}: diff "
                         f"{r.get(f'size.{k}.messages')}, {r.get(f'size.{k}.bandwidth')}; report "
                         f"{cls['messages']} messages, {bw} B/s")
    if not r["mpi.function.MPI_Recv"]["significant"] or r["mpi.function.MPI_Recv"]["change"] <= 0:
        f.append(f"MPI_Recv's time did not grow significantly: {r['mpi.function.MPI_Recv']}")
    p2p = r["messages.point_to_point"]
    if p2p["change"] != 0 or p2p["significant"] or p2p["a"] != 1:
        f.append(f"point-to-point messages {p2p}, expected 1 in both")
    if not any(line.startswith("! late sender: time") for line in text.splitlines()):
        f.append("the text does not mark the late sender's time per case with '!'")
    # The saved reports give the same comparison as the archives.
    _, from_json, more = c.diff(ra_path, rb_path, "diff-json")
    f += more
    if from_json["sections"] != data["sections"]:
        f.append("comparing the reports' JSON files gives other rows than comparing the archives")
    return f


def case_identical(c):
    a, b = c.trace("first", 100), c.trace("second", 100)
    _, data, f = c.diff(a, b, "diff")
    messages = next(s for s in data["sections"] if s["key"] == "messages")
    for row in messages["rows"]:
        if row["significant"]:
            f.append(f"identical runs: a significant change in {row['name']}: {row}")
    r = rows(data)
    for key in ("messages.point_to_point", "messages.point_to_point_bytes"):
        if r[key]["change"] != 0:
            f.append(f"identical runs: {key} changed: {r[key]}")
    _, same, more = c.diff(a, a, "self")
    f += more
    changed = [row["key"] for s in same["sections"] for row in s["rows"] if row["change"]]
    if same["significant"] != 0 or changed:
        f.append(f"a trace against itself: {same['significant']} significant, changed {changed}")
    return f


def case_bad_input(c):
    f = []
    trace_dir = c.trace("small", 10)
    not_report = os.path.join(c.work, "other.json")
    with open(not_report, "w") as fh:
        fh.write('{"traceEvents": []}\n')
    broken = os.path.join(c.work, "broken.json")
    with open(broken, "w") as fh:
        fh.write('{"schema_version": 1, "ranks": [\n')
    journal = os.path.join(c.work, "died")
    os.makedirs(os.path.join(journal, "journal"))

    def expect(args, code, words):
        run = subprocess.run([c.opts.perusetrace, "diff"] + args, capture_output=True, text=True)
        print(f"diff {' '.join(args)}: exit {run.returncode}: {run.stderr.strip()[:200]}")
        if run.returncode != code or words not in run.stderr or \
                not run.stderr.startswith("perusetrace diff: "):
            f.append(f"diff {args}: exit {run.returncode}, {run.stderr.strip()[:300]!r}; "
                     f"expected exit {code} and '{words}'")

    expect([trace_dir], 2, "two traces or reports to compare")
    expect([trace_dir, os.path.join(c.work, "no-such-trace")], 1, "does not exist")
    expect([trace_dir, not_report], 1, "is JSON but not a perusetrace report")
    expect([broken, trace_dir], 1, "is not valid JSON")
    expect([trace_dir, journal], 1, "perusetrace recover")
    expect([trace_dir, trace_dir, "--threshold", "ten"], 2, "--threshold 'ten'")
    expect([trace_dir, trace_dir, "--min-time", "5 parsecs"], 2, "--min-time '5 parsecs'")
    return f


CASES = case_result.cases_of(globals())


def main():
    case_result.run_listing_case(CASES, "diff",
                                 ["mpirun", "preload", "perusetrace", "scenarios", "schema"],
                                 lambda case, opts, work: case(Case(opts, work)))


if __name__ == "__main__":
    main()
