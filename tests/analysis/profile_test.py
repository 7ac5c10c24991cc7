#!/usr/bin/python3
"""`perusetrace profile` on real ranks.

    profile_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --build BUILD CASE

CASE:
  phases      tests/apps/state_phases on 2 ranks (300 ms phases, a 900 ms late sender, 8
              transfers of 64 MiB) sampled at 1 kHz, profiled with --json --folded --html:
              rank 1's stall/message time is its printed late phase within 5 points of the run
              (as tests/runtime/state_test.py ground_truth), the folded lines add up to the archive's
              sampling periods (CallingContextSample events by their sample_weight, counted
              with python3-otf2) and each ends in a state frame, the text names MPI_Recv under
              main as rank 1's top stall, the HTML is well-formed and headless Chromium renders
              its root frame (scripts/setup installs chromium).
  no_samples  an archive traced without MPITRACE_SAMPLING: a message naming the setting, exit 2;
              a path that does not exist: exit 1.
  parallel    state_phases on 4 ranks, profiled by one process and with --np 1, 2, 3, 4, 8
              (case_parallel says what is compared).
  parallel_unreadable_share  --np 3 and 4 with the last rank's event file removed: one
              message naming it, exit 1, no output files.
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402

PHASES = re.compile(r"state_phases rank (\d+): compute ([\d.]+) late ([\d.]+) transfer ([\d.]+) "
                    r"barrier ([\d.]+) s")
STATE_FRAMES = ("not in MPI", "work", "work message", "work transfer", "work collective",
                "work io", "stall", "stall message", "stall transfer", "stall collective",
                "stall io", "unknown state")
FOLDED_LINE = re.compile(r"^(?:[^;\n]+;)*\[(" + "|".join(STATE_FRAMES) + r")\] (\d+)$")
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120
TOLERANCE = 5.0  # percentage points of the rank's sampled run, as state_test.py ground_truth
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


def trace(opts, work, sampling, args, ranks=2):
    out = os.path.join(work, "trace")
    env = {"MPITRACE_OUTPUT": out, "MPITRACE_PERUSE_EVENTS": "all"}
    if sampling:
        env["MPITRACE_SAMPLING"] = sampling
    command = mpi_launch.command(opts.mpirun, ranks, env, opts.preload)
    run = mpi_launch.run(command + [os.path.join(opts.build, "tests", "state_phases")] + args,
                         timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(env), cwd=work)
    return out, run


def archive_samples(archive):
    """The sampling periods the archive's samples stand for: 1 each, or their sample_weight."""
    import otf2
    n = 0
    with otf2.reader.open(archive) as t:
        for _, event in t.events:
            if isinstance(event, otf2.events.CallingContextSample):
                a = {k.name: v for k, v in (event.attributes or {}).items()}
                n += a.get("sample_weight", 1)
    return n


class WellFormed(html.parser.HTMLParser):
    """Every element closed in order; the text of the profile's data script kept."""

    def __init__(self):
        super().__init__()
        self.open, self.problems, self.data, self._in_data = [], [], "", False

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.open.append(tag)
        self._in_data = tag == "script" and ("id", "profile-data") in attrs

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()
        self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.data += data


def check_html(path, failures):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text):
        failures.append("the HTML loads something from the network")
    parser = WellFormed()
    parser.feed(text)
    parser.close()
    if parser.problems or parser.open:
        failures.append(f"the HTML is not well-formed: {parser.problems[:3]}, left open "
                        f"{parser.open}")
    try:
        data = json.loads(parser.data)
        if data["nodes"][0]["n"] != "all" or not any(n["n"] == "MPI_Recv" for n in data["nodes"]):
            failures.append("the HTML's data has no root 'all' or no MPI_Recv frame")
    except (ValueError, KeyError, IndexError) as e:
        failures.append(f"the HTML's embedded profile is not readable JSON: {e}")
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if browser is None:
        failures.append("chromium is not installed (scripts/setup installs it): the HTML could "
                        "not be rendered")
        return
    run = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                          "--virtual-time-budget=5000", "--dump-dom", "file://" + path],
                         capture_output=True, text=True, timeout=120)
    dom = run.stdout
    if not re.search(r'<g id="frame-0">.*?<text[^>]*>all</text>', dom, re.S):
        failures.append(f"headless {browser} rendered no root frame 'all' (exit "
                        f"{run.returncode}): {run.stderr[-500:]}")
    elif "MPI_Recv" not in dom:
        failures.append(f"headless {browser} rendered no MPI_Recv frame")
    else:
        frames = dom.count('<g id="frame-')
        print(f"{browser} rendered {frames} frames")


def case_phases(opts, work):
    failures = []
    out, run = trace(opts, work, "1ms", ["300", "8", "900"])
    phases = {int(m[0]): list(map(float, m[1:])) for m in PHASES.findall(run.stdout)}
    if run.returncode != 0 or sorted(phases) != [0, 1]:
        return [f"the traced run failed (exit {run.returncode}): {run.stderr[-1500:]}"]
    files = {k: os.path.join(work, "profile." + k) for k in ("json", "folded", "html")}
    prof = subprocess.run([opts.perusetrace, "profile", out, "--json", files["json"],
                           "--folded", files["folded"], "--html", files["html"]],
                          capture_output=True, text=True, timeout=300)
    print(prof.stdout)
    if prof.returncode != 0:
        return [f"perusetrace profile failed (exit {prof.returncode}): {prof.stderr[-1500:]}"]
    with open(files["json"], encoding="utf-8") as f:
        doc = json.load(f)

    # Rank 1 waits in MPI_Recv through the late phase: stall/message.
    rank1 = doc["ranks"][1]
    seconds = rank1["total_ns"] / 1e9
    late = phases[1][1]
    got = 100.0 * rank1["ns"].get("stall/message", 0) / 1e9 / seconds if seconds else 0
    want = 100.0 * late / seconds if seconds else 100
    print(f"rank 1: stall/message {got:.1f}% of its {seconds:.3f} s sampled, late phase "
          f"{want:.1f}% ({late:.3f} s)")
    if abs(got - want) > TOLERANCE:
        failures.append(f"rank 1's stall/message is {got:.1f}% of its run, its late phase "
                        f"{want:.1f}% +-{TOLERANCE}")

    # The folded stacks hold every sample of the archive once.
    samples = archive_samples(os.path.join(out, "traces.otf2"))
    total, bad = 0, []
    with open(files["folded"], encoding="utf-8") as f:
        for line in f.read().splitlines():
            m = FOLDED_LINE.match(line)
            if m is None:
                bad.append(line)
            else:
                total += int(m.group(2))
    print(f"archive: {samples} sampling periods; folded: {total}; json: "
          f"{doc['samples']}")
    if bad:
        failures.append(f"{len(bad)} folded lines do not end in a state frame: {bad[:3]}")
    if samples == 0 or total != samples or doc["samples"] != samples:
        failures.append(f"the folded counts add up to {total} and the JSON says "
                        f"{doc['samples']}, the archive holds {samples} samples")

    # The text: rank 1 stalls most in MPI_Recv called from main.
    line = next((l for l in prof.stdout.splitlines() if l.strip().startswith("rank 1:")), "")
    if not re.search(r"most in (\.\.\. > )?(\S+ > )*main > MPI_Recv \(", line):
        failures.append(f"the text does not name main > MPI_Recv as rank 1's top stall: "
                        f"'{line}'")
    check_html(files["html"], failures)
    return failures


def case_no_samples(opts, work):
    failures = []
    out, run = trace(opts, work, None, ["10", "1"])
    if run.returncode != 0:
        return [f"the traced run failed (exit {run.returncode}): {run.stderr[-1500:]}"]
    prof = subprocess.run([opts.perusetrace, "profile", out], capture_output=True, text=True,
                          timeout=120)
    if prof.returncode != 2 or "MPITRACE_SAMPLING" not in prof.stderr:
        failures.append(f"an archive without samples: exit {prof.returncode}, expected 2 with "
                        f"a message naming MPITRACE_SAMPLING: {prof.stderr!r}")
    missing = subprocess.run([opts.perusetrace, "profile", os.path.join(work, "nothing")],
                             capture_output=True, text=True, timeout=60)
    if missing.returncode != 1 or "does not exist" not in missing.stderr:
        failures.append(f"a missing archive: exit {missing.returncode}, expected 1: "
                        f"{missing.stderr!r}")
    return failures


def profile_files(opts, work, archive, name, extra=(), env=None):
    """`perusetrace profile ARCHIVE --json --folded [EXTRA]`: the run and its files' paths."""
    files = {k: os.path.join(work, f"{name}.{k}") for k in ("json", "folded", "stats")}
    run = subprocess.run([opts.perusetrace, "profile", "-q", archive, "--json", files["json"],
                          "--folded", files["folded"], *extra], capture_output=True, text=True,
                         timeout=300, env=env)
    return run, files


def share_bytes(archive, locations):
    """The bytes of the archive every analysis rank reads (anchor, global definitions) and
    those of the given location ids' event and local definition files."""
    size = lambda name: os.path.getsize(os.path.join(archive, name))  # noqa: E731
    common = size("traces.otf2") + size("traces.def")
    own = sum(size(f"traces/{loc}.{kind}") for loc in locations for kind in ("evt", "def"))
    return common, own


def case_parallel(opts, work):
    """`profile --np N` for N = 1, 2, 3, 4 and 8 analysis ranks on a 4-rank archive: the JSON is
    the single process's but for analysis_ranks, the folded file and the text are the same but
    for the header's word on the ranks; each analysis rank read whole traced ranks, together
    every event once, and no more bytes than its share's (x1.3) besides the definitions
    every rank reads (the reader opens them, its decoding threads the anchor again); a libperusetrace
    preloaded into the launching shell traces nothing of the analysis; `report --np` says it
    does not run in parallel yet."""
    failures = []
    out, run = trace(opts, work, "1ms", ["100", "2", "200"], ranks=4)
    if run.returncode != 0:
        return [f"the traced run failed (exit {run.returncode}): {run.stderr[-1500:]}"]
    single, base = profile_files(opts, work, out, "single")
    if single.returncode != 0:
        return [f"perusetrace profile failed (exit {single.returncode}): {single.stderr[-1500:]}"]
    with open(base["json"], encoding="utf-8") as f:
        want = json.load(f)
    with open(base["folded"], encoding="utf-8") as f:
        want_folded = f.read()
    total = sum(1 for _ in os.listdir(os.path.join(out, "traces")) if _.endswith(".evt"))
    import otf2
    with otf2.reader.open(os.path.join(out, "traces.otf2")) as t:
        rank_of = {loc._ref: int(loc.group.name.split()[-1]) for loc in t.definitions.locations}
        events = {loc._ref: loc.number_of_events for loc in t.definitions.locations}
    if want.get("analysis_ranks") != 1 or len(rank_of) != total or len(set(rank_of.values())) != 4:
        failures.append(f"single process: analysis_ranks {want.get('analysis_ranks')}, "
                        f"{len(rank_of)} locations of {len(set(rank_of.values()))} ranks")
    # A preloaded tracer in the caller's environment must not trace the analysis job.
    env = dict(os.environ, LD_PRELOAD=opts.preload, MPITRACE_OUTPUT=os.path.join(work, "traced"))
    for n in (1, 2, 3, 4, 8):
        run, files = profile_files(opts, work, out, f"np{n}",
                                   ["--np", str(n), "--analysis-stats", os.path.join(
                                       work, f"np{n}.stats")], env=env if n == 3 else None)
        if run.returncode != 0:
            failures.append(f"--np {n}: exit {run.returncode}: {run.stderr[-1500:]}")
            continue
        with open(files["json"], encoding="utf-8") as f:
            got = json.load(f)
        if got.pop("analysis_ranks", None) != n:
            failures.append(f"--np {n}: the JSON does not say analysis_ranks {n}")
        if got != {k: v for k, v in want.items() if k != "analysis_ranks"}:
            diff = [k for k in want if k != "analysis_ranks" and want[k] != got.get(k)]
            failures.append(f"--np {n}: the JSON differs from the single process's in {diff}")
        with open(files["folded"], encoding="utf-8") as f:
            if f.read() != want_folded:
                failures.append(f"--np {n}: the folded stacks differ")
        head, _, rest = run.stdout.partition("\n")
        want_head, _, want_rest = single.stdout.partition("\n")
        word = "rank" if n == 1 else "ranks"
        if rest != want_rest or head != f"{want_head} (computed by {n} analysis {word})":
            failures.append(f"--np {n}: the text differs: '{head}'")
        with open(os.path.join(work, f"np{n}.stats"), encoding="utf-8") as f:
            stats = json.load(f)
        ranks = stats["ranks"]
        print(f"--np {n}: " + "; ".join(
            f"rank {r['rank']}: {r['traced_ranks']} ranks {r['events']} events "
            f"{r['bytes_read']} B read {r['bytes_sent']} B sent" for r in ranks))
        if stats["analysis_ranks"] != n or [r["rank"] for r in ranks] != list(range(n)):
            failures.append(f"--np {n}: the stats name {len(ranks)} ranks")
            continue
        if sum(r["events"] for r in ranks) != sum(events.values()) or \
                sum(r["traced_ranks"] for r in ranks) != 4:
            failures.append(f"--np {n}: the shares hold {sum(r['events'] for r in ranks)} "
                            f"events of {sum(r['traced_ranks'] for r in ranks)} ranks, the "
                            f"archive {sum(events.values())} of 4")
        first = 0
        for r in ranks:
            owned = [loc for loc, rank in rank_of.items()
                     if first <= rank < first + r["traced_ranks"]]
            first += r["traced_ranks"]
            if r["events"] != sum(events[loc] for loc in owned):
                failures.append(f"--np {n}: rank {r['rank']} read {r['events']} events, its "
                                f"traced ranks hold {sum(events[loc] for loc in owned)}")
            common, own = share_bytes(out, owned)
            # The reader opens the anchor and the definitions, and each decoding thread the
            # anchor again: one thread per rank where the ranks share the cores.
            threads = min(8, len(owned), max(1, (os.cpu_count() or 1) // n))
            if r["bytes_read"] > 1.3 * own + (2 + threads) * common:
                failures.append(f"--np {n}: rank {r['rank']} read {r['bytes_read']} bytes, its "
                                f"share is {own} and the definitions {common}")
    if os.path.exists(os.path.join(work, "traced")):
        failures.append("the analysis job was traced by the preloaded libperusetrace")
    # The commands that do not run in parallel yet say so.
    report = subprocess.run([opts.perusetrace, "report", out, "--np", "2"], capture_output=True,
                            text=True, timeout=60)
    if report.returncode != 2 or "only `perusetrace profile`" not in report.stderr:
        failures.append(f"report --np 2: exit {report.returncode}, expected 2 saying only "
                        f"profile runs in parallel: {report.stderr!r}")
    return failures


def case_parallel_unreadable_share(opts, work):
    """An analysis rank whose share cannot be read (the last traced rank's event file is gone)
    fails the whole run: exit 1, one message naming the file, no output file written."""
    failures = []
    out, run = trace(opts, work, "1ms", ["20", "1", "50"], ranks=4)
    if run.returncode != 0:
        return [f"the traced run failed (exit {run.returncode}): {run.stderr[-1500:]}"]
    import otf2
    with otf2.reader.open(os.path.join(out, "traces.otf2")) as t:
        last = max(t.definitions.locations, key=lambda loc: int(loc.group.name.split()[-1]))._ref
    missing = os.path.join("traces", f"{last}.evt")
    os.remove(os.path.join(out, missing))
    for n in (3, 4):
        run, files = profile_files(opts, work, out, f"np{n}", ["--np", str(n)])
        said = [line for line in run.stderr.splitlines() if line.startswith("perusetrace")]
        print(f"--np {n}: exit {run.returncode}: {run.stderr.strip()}")
        if run.returncode != 1 or len(said) != 1 or missing not in said[0]:
            failures.append(f"--np {n}: exit {run.returncode} (expected 1) with "
                            f"{len(said)} messages (expected one naming {missing}): "
                            f"{run.stderr[-1500:]!r}")
        left = [k for k in ("json", "folded") if os.path.exists(files[k])]
        if left:
            failures.append(f"--np {n}: a failed run left its {', '.join(left)} output behind")
    return failures


CASES = case_result.cases_of(globals())


def main():
    case_result.run_listing_case(CASES, "profile", ["mpirun", "preload", "perusetrace", "build"])


if __name__ == "__main__":
    main()
