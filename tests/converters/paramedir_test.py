#!/usr/bin/python3
"""Our Paraver traces in Paraver's own kernel: paramedir computes the configurations of
tests/converters/paraver/ on `perusetrace prv` of traced scenarios, says nothing on stderr or stdout, and
its numbers equal ours.

    paramedir_test.py --repo DIR --mpirun MPIRUN --preload LIB --perusetrace EXE
                      --scenarios EXE CASE

CASE:
  late_sender  scenarios late-sender -d 300 on 4 ranks. state_profile.cfg: every thread's time
               in every state equals the .prv's state records; task 2's "Waiting a message" is
               rank 1's time in MPI_Recv in the archive; `perusetrace report`'s late-sender
               time on rank 1 is that state less the part of MPI_Recv outside the posted queue
               (the archive's REQ_INSERT_IN_POSTED_Q to REQ_REMOVE_FROM_POSTED_Q), so Paraver and
               the report agree on the wait.
  scenarios    scenarios all -d 50 on 4 ranks, all Peruse events. state_profile.cfg as above;
               messages_sent.cfg and bytes_sent.cfg: the messages and bytes from each rank to
               each rank are the archive's MPI send records; peruse_event_count.cfg, once per
               Peruse event type (64000200 + index): each thread has as many events of each
               type as its rank has of that Peruse event in the archive; mpi_call_time.cfg and
               mpi_call_count.cfg, which read MPI calls from Extrae's types 50000001-50000005
               as Paraver's stock MPI configurations do: every thread's time in and calls of each
               MPI function, labelled as Extrae labels them, are the archive's; the .pcf gives
               those functions Extrae's numbers and labels its types as Extrae does.
  unavailable  without the paraver-kernel source the helper says why and the tests skip;
               scripts/build-paramedir refuses a tarball with another checksum, and the helper
               makes that, and a build that failed before, a failure (not a skip); and a .prv
               with a record paramedir rejects fails the check (paramedir still exits 0).
  gzip         scenarios all -d 20: `perusetrace prv --gzip` writes PREFIX.prv.gz (and no
               .prv) holding exactly the plain conversion's bytes, and every configuration of
               tests/converters/paraver/ computes the same rows on it as on the plain .prv.
Exits 77 (skipped) only when there is no paraver-kernel source to build paramedir from
(scripts/build-paramedir says why); a failed build of paramedir fails every case, saying what
failed and how to fix it.
"""
import collections
import gzip
import json
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import paramedir  # noqa: E402
import prv_check  # noqa: E402
import trace_checks  # noqa: E402

SKIP = 77
RANKS = 4
# A run still going after this is a hang: its stacks are printed before meson's 3000 s are up.
RUN_TIMEOUT = 120
STATE_WAIT_MESSAGE = "Waiting a message"
PERUSE_EACH_FIRST = 64000200  # tools/prv/prv_codes.hpp: a type per Peruse event
PERUSE_EXAMPLE = (64000209, "MSG_ARRIVED")  # the type peruse_event_count.cfg counts


class Run:
    def __init__(self, opts, work, tool):
        self.opts, self.work, self.paramedir = opts, work, tool

    def trace(self, name, args):
        """scenarios ARGS on RANKS ranks, every Peruse event traced; returns the archive."""
        return mpi_launch.must_trace(self.opts.mpirun, RANKS, [self.opts.scenarios] + args,
                                     os.path.join(self.work, name), self.opts.preload,
                                     {"MPITRACE_PERUSE_EVENTS": "all"}, RUN_TIMEOUT, self.work)

    def prv(self, archive, name, extra=()):
        prefix = os.path.join(self.work, name)
        run = subprocess.run([self.opts.perusetrace, "prv", archive, "-o", prefix, *extra],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"perusetrace prv failed ({run.returncode}): {run.stderr}")
        return prefix

    def compute(self, prefix, configs, tolerate_absent_events=False, suffix=".prv"):
        """paramedir on PREFIX.prv (or PREFIX + suffix) with each configuration; returns
        (failures, {cfg: rows})."""
        jobs = [(cfg, os.path.join(self.work, f"{os.path.basename(prefix)}-"
                                   f"{os.path.basename(cfg)}.txt")) for cfg in configs]
        failures = paramedir.run(self.paramedir, prefix + suffix, jobs, tolerate_absent_events)
        results = {cfg: paramedir.histogram(out) for cfg, out in jobs if os.path.exists(out)}
        return failures, results


def thread(rank):
    return f"THREAD 1.{rank + 1}.1"


def prv_records(prefix):
    """What the strict parser reads in the .prv: ((task, thread, state label) -> ns in state,
    failures)."""
    labels = {}
    section = None
    with open(prefix + ".pcf") as pcf:
        for line in pcf:
            words = line.split(None, 1)
            if not words:
                continue
            if words[0] in ("STATES", "STATES_COLOR", "EVENT_TYPE", "DEFAULT_OPTIONS"):
                section = words[0]
            elif section == "STATES" and words[0].isdigit():
                labels[int(words[0])] = words[1].strip()
    in_state = collections.Counter()

    def on_record(v):
        if v[0] == 1:
            in_state[(f"THREAD 1.{v[3]}.{v[4]}", labels[v[7]])] += v[6] - v[5]

    failures, _ = prv_check.check(prefix, on_record)
    return in_state, failures


def check_state_profile(rows, in_state):
    """Paraver's time per thread and state against the .prv's state records, to the ns."""
    f = []
    for row, columns in rows.items():
        for state, ns in columns.items():
            if ns != in_state.get((row, state), 0):
                f.append(f"{row} '{state}': Paraver {ns:.0f} ns, the .prv's records "
                         f"{in_state.get((row, state), 0)} ns")
    return f


def in_mpi_recv(trace, rank):
    receives = trace.regions(rank, "MPI_Recv")
    return sum(trace.ns(e - b) for b, e in receives), len(receives)


def in_posted_queue(trace, rank):
    """The archive's posted-queue time of RANK's own receives (collectives' internal ones have
    negative tags): each request's REQ_INSERT_IN_POSTED_Q to its REQ_REMOVE_FROM_POSTED_Q."""
    inserted, total = {}, 0
    for e in trace.peruse(rank):
        if e.attrs["tag"] < 0:
            continue
        if e.name == "REQ_INSERT_IN_POSTED_Q":
            inserted[e.attrs["request"]] = e.time
        elif e.name == "REQ_REMOVE_FROM_POSTED_Q" and e.attrs["request"] in inserted:
            total += trace.ns(e.time - inserted.pop(e.attrs["request"]))
    return total


def case_late_sender(run):
    archive = run.trace("late_sender", ["late-sender", "-d", "300"])
    prefix = run.prv(archive, "late_sender")
    in_state, f = prv_records(prefix)
    failures, results = run.compute(prefix, [paramedir.config("state_profile.cfg")])
    f += failures
    if f:
        return f
    rows = results[paramedir.config("state_profile.cfg")]
    f += check_state_profile(rows, in_state)
    waited = rows[thread(1)][STATE_WAIT_MESSAGE]
    trace = trace_checks.load(archive)
    recv_ns, receives = in_mpi_recv(trace, 1)
    if abs(waited - recv_ns) > 2 * receives:  # a rounding per end
        f.append(f"Paraver: task 2 {waited:.0f} ns '{STATE_WAIT_MESSAGE}'; the archive: rank 1 "
                 f"{recv_ns} ns in MPI_Recv ({receives} calls)")
    report_json = os.path.join(run.work, "report.json")
    report = subprocess.run([run.opts.perusetrace, "report", os.path.dirname(archive),
                             "--json", report_json], capture_output=True, text=True)
    if report.returncode != 0:
        return f + [f"perusetrace report failed ({report.returncode}): {report.stderr}"]
    with open(report_json) as j:
        late_sender = json.load(j)["ranks"][1]["posted_queue_ns"]
    outside_queue = recv_ns - in_posted_queue(trace, 1)
    print(f"late sender on rank 1: Paraver '{STATE_WAIT_MESSAGE}' {waited / 1e6:.1f} ms "
          f"({waited:.0f} ns), report {late_sender / 1e6:.1f} ms ({late_sender} ns); "
          f"MPI_Recv outside the posted queue {outside_queue} ns")
    if abs(waited - late_sender - outside_queue) > 2 * receives + 2:
        f.append(f"Paraver's wait {waited:.0f} ns less the report's late sender {late_sender} ns "
                 f"is not the archive's MPI_Recv time outside the posted queue, "
                 f"{outside_queue} ns")
    if late_sender <= 0:
        f.append("the report found no late-sender time on rank 1")
    return f


def check_messages(results, trace):
    f = []
    sent = results[paramedir.config("messages_sent.cfg")]
    sent_bytes = results[paramedir.config("bytes_sent.cfg")]
    want = trace_checks.message_matrix(trace)
    for s in range(RANKS):
        for r in range(RANKS):
            count, size = want.get((s, r), [0, 0])
            got = sent.get(thread(s), {}).get(thread(r), 0)
            got_bytes = sent_bytes.get(thread(s), {}).get(thread(r), 0)
            if (got, got_bytes) != (count, size):
                f.append(f"{s} -> {r}: Paraver {got:.0f} messages, {got_bytes:.0f} bytes; the "
                         f"archive {count} messages, {size} bytes")
    print("messages (archive = Paraver): " + ", ".join(
        f"{s}->{r} {c} ({b} bytes)" for (s, r), (c, b) in sorted(want.items())))
    if not want:
        f.append("the archive has no MPI send record")
    return f


def check_peruse_counts(run, prefix, trace):
    """Every Peruse event type, counted by Paraver per thread, against the archive."""
    with open(paramedir.config("peruse_event_count.cfg")) as src:
        template = src.read()
    example_type, example_name = PERUSE_EXAMPLE
    names = {t: label[len("Peruse "):]
             for t, label in prv_check.pcf_types(prefix + ".pcf").items()
             if PERUSE_EACH_FIRST <= t < PERUSE_EACH_FIRST + 100}
    configs = {}
    for t, name in sorted(names.items()):
        if t == example_type:
            configs[paramedir.config("peruse_event_count.cfg")] = name
            continue
        path = os.path.join(run.work, f"peruse_{name}.cfg")
        with open(path, "w") as out:
            out.write(template.replace(str(example_type), str(t)).replace(example_name, name))
        configs[path] = name
    f, results = run.compute(prefix, list(configs))
    want = collections.Counter()
    for rank in range(RANKS):
        for e in trace.peruse(rank):
            want[(rank, e.name)] += 1
    for cfg, name in configs.items():
        rows = results.get(cfg, {})
        for rank in range(RANKS):
            got = rows.get(thread(rank), {}).get("occurred", 0)
            if got != want[(rank, name)]:
                f.append(f"rank {rank} {name}: Paraver counts {got:.0f}, the archive has "
                         f"{want[(rank, name)]}")
    totals = collections.Counter()
    for (rank, name), n in want.items():
        totals[name] += n
    print(f"Peruse events per type, archive = Paraver ({len(configs)} types): " +
          ", ".join(f"{n} {c}" for n, c in sorted(totals.items())))
    if len(configs) != 17 or sum(totals.values()) == 0:
        f.append(f"expected 17 Peruse event types with events, the .pcf has {len(configs)}")
    return f


def archive_mpi_calls(trace, rank):
    """MPI function -> [calls, ns] of all of RANK's visits of its region."""
    out = collections.defaultdict(lambda: [0, 0])
    stack = []
    for e in trace.rank_events(rank):
        if e.kind == "Enter" and e.name.startswith("MPI_"):
            stack.append((e.name, e.time))
        elif e.kind == "Leave" and e.name.startswith("MPI_") and stack:
            name, begin = stack.pop()
            out[name][0] += 1
            out[name][1] += trace.ns(e.time - begin)
    return out


# Extrae's type and value of the MPI functions the scenarios call (Extrae's Paraver merger,
# MPI_EventEncoding.h and mpi_prv_events.c): what stock configurations select by.
EXTRAE_MPI = {"MPI_Send": (50000001, 1), "MPI_Recv": (50000001, 2), "MPI_Isend": (50000001, 3),
              "MPI_Irecv": (50000001, 4), "MPI_Wait": (50000001, 5),
              "MPI_Barrier": (50000002, 8), "MPI_Comm_rank": (50000003, 19),
              "MPI_Comm_size": (50000003, 20), "MPI_Init": (50000003, 31),
              "MPI_Finalize": (50000003, 32)}
EXTRAE_LABELS = {50000001: "MPI Point-to-point", 50000002: "MPI Collective Comm",
                 50000003: "MPI Other", 50000004: "MPI One-sided", 50000005: "MPI I/O"}


def pcf_values(path):
    """{(event type, label of a value): value} and {type: label} of a .pcf."""
    values, types, current = {}, {}, None
    with open(path) as pcf:
        lines = pcf.read().splitlines()
    for i, line in enumerate(lines):
        words = line.split(None, 2)
        if line == "EVENT_TYPE":
            _, number, label = lines[i + 1].split(None, 2)
            current = int(number)
            types[current] = label
        elif line == "VALUES" or not words:
            continue
        elif current is not None and len(words) >= 2 and words[0].isdigit() and i > 0 \
                and lines[i - 1] != "EVENT_TYPE":
            values[(current, line.split(None, 1)[1].strip())] = int(words[0])
    return values, types


def check_extrae_encoding(prefix):
    f = []
    values, types = pcf_values(prefix + ".pcf")
    for t, label in EXTRAE_LABELS.items():
        if types.get(t) != label:
            f.append(f"the .pcf labels type {t} {types.get(t)!r}, Extrae {label!r}")
        if values.get((t, "Outside MPI")) != 0:
            f.append(f"the .pcf does not name value 0 of type {t} 'Outside MPI' as Extrae does")
    for name, (t, value) in EXTRAE_MPI.items():
        if values.get((t, name)) != value:
            f.append(f"{name}: the .pcf gives it value {values.get((t, name))} of type {t}, "
                     f"Extrae {value}")
    return f


def check_extrae_mpi(results, trace):
    f = []
    times = results[paramedir.config("mpi_call_time.cfg")]
    calls = results[paramedir.config("mpi_call_count.cfg")]
    shown = 0
    for rank in range(RANKS):
        want = archive_mpi_calls(trace, rank)
        for name, (count, ns) in sorted(want.items()):
            got_calls = calls.get(thread(rank), {}).get(name)
            got_ns = times.get(thread(rank), {}).get(name)
            if got_calls is None:
                f.append(f"rank {rank}: {name} has no column in Paraver's MPI call profile "
                         f"(Extrae's types and labels)")
                continue
            if got_calls != count or abs(got_ns - ns) > 2 * count:
                f.append(f"rank {rank} {name}: Paraver {got_calls:.0f} calls, {got_ns:.0f} ns; "
                         f"the archive {count} calls, {ns} ns")
            shown += 1
        if rank == 1:
            print("rank 1 MPI calls (archive = Paraver via Extrae's types): " + ", ".join(
                f"{n} {c}x {ns / 1e6:.3f} ms" for n, (c, ns) in sorted(want.items())))
        if "Outside MPI" not in calls.get(thread(rank), {}):
            f.append(f"rank {rank}: no 'Outside MPI' column: the .pcf does not label value 0 as "
                     f"Extrae does")
    if shown == 0:
        f.append("no MPI call of the archive appeared in Paraver's MPI call profile")
    return f


def case_scenarios(run):
    archive = run.trace("scenarios", ["all", "-d", "50"])
    prefix = run.prv(archive, "scenarios")
    in_state, f = prv_records(prefix)
    configs = [paramedir.config(c) for c in ("state_profile.cfg", "messages_sent.cfg",
                                             "bytes_sent.cfg")]
    failures, results = run.compute(prefix, configs)
    extrae = [paramedir.config(c) for c in ("mpi_call_time.cfg", "mpi_call_count.cfg")]
    # Paraver says the trace has no events of Extrae's one-sided and I/O types: it has no such
    # calls, as it says of an Extrae trace without them.
    extrae_failures, extrae_results = run.compute(prefix, extrae, tolerate_absent_events=True)
    f += failures + extrae_failures
    if f:
        return f
    results.update(extrae_results)
    f += check_state_profile(results[configs[0]], in_state)
    trace = trace_checks.load(archive)
    f += check_messages(results, trace)
    f += check_extrae_encoding(prefix)
    f += check_extrae_mpi(results, trace)
    f += check_peruse_counts(run, prefix, trace)
    return f


def case_unavailable(run):
    f = []
    cache = os.path.join(run.work, "cache")
    os.mkdir(cache)
    script = os.path.join(run.opts.repo, "scripts", "build-paramedir")
    env = {k: v for k, v in os.environ.items() if k != "MPITRACE_PARAVER_TARBALL"}
    env["XDG_CACHE_HOME"] = cache
    bad = os.path.join(run.work, "paraver-kernel-abbc7c3b48e5.tar.xz")
    with open(bad, "w") as out:
        out.write("not the paraver-kernel source\n")
    for tarball, status, words in (
            (None, 2, ["MPITRACE_PARAVER_TARBALL is not set", "paraver-kernel-abbc7c3b48e5"]),
            (os.path.join(run.work, "nowhere.tar.xz"), 2, ["does not exist"]),
            (bad, 1, ["checksum mismatch", "expected 273b9622"])):
        case_env = dict(env, **({"MPITRACE_PARAVER_TARBALL": tarball} if tarball else {}))
        done = subprocess.run([script], env=case_env, capture_output=True, text=True)
        print(f"build-paramedir ({tarball}): exit {done.returncode}: {done.stderr.strip()}")
        if done.returncode != status or not all(w in done.stderr for w in words):
            f.append(f"scripts/build-paramedir with MPITRACE_PARAVER_TARBALL={tarball}: exit "
                     f"{done.returncode}, {done.stderr.strip()!r}; expected exit {status} "
                     f"saying {words}")
        if done.stdout.strip():
            f.append(f"scripts/build-paramedir printed a path without paramedir: {done.stdout!r}")
    # The helper turns no source into the reason the tests skip (Unavailable), and a source it
    # could not build from into a failure (BuildFailed): a wrong tarball, and a build that failed
    # before (its log left in the cache).
    failed_log = os.path.join(cache, "perusetrace", "paramedir-abbc7c3b48e5.failed.log")
    for tarball, failed_before, want, words in (
            (None, False, paramedir.Unavailable, ["MPITRACE_PARAVER_TARBALL"]),
            (bad, False, paramedir.BuildFailed, ["checksum mismatch", "build-paramedir"]),
            (bad, True, paramedir.BuildFailed, ["an earlier build of paramedir failed",
                                                failed_log])):
        if failed_before:
            os.makedirs(os.path.dirname(failed_log), exist_ok=True)
            with open(failed_log, "w") as out:
                out.write("273b9622330ee98a1f025bb0bac0ed7b6a77fc90309c73246095f9e979778179\n"
                          "make: *** [all] Error 1\n")
        got = locate_with(run.opts.repo, cache, tarball)
        print(f"paramedir.locate (tarball {tarball}, failed before: {failed_before}): "
              f"{type(got).__name__}: {got}")
        if not isinstance(got, want) or not all(w in str(got) for w in words):
            f.append(f"paramedir.locate with MPITRACE_PARAVER_TARBALL={tarball}"
                     f"{' after a failed build' if failed_before else ''}: "
                     f"{type(got).__name__} {got!r}; expected {want.__name__} saying {words}")
    # A record paramedir rejects: it exits 0 and says so on stderr, which must fail the check.
    if run.paramedir is None:
        return f
    archive = run.trace("rejected", ["late-sender", "-d", "1"])
    prefix = run.prv(archive, "rejected")
    with open(prefix + ".prv") as src:
        lines = src.readlines()
    lines.insert(len(lines) // 2, "9:1:1:1:1:1:1\n")
    with open(prefix + ".prv", "w") as out:
        out.writelines(lines)
    failures, _ = run.compute(prefix, [paramedir.config("state_profile.cfg")])
    print(f"a .prv with an unknown record: {failures}")
    if not any("stderr" in x for x in failures):
        f.append(f"paramedir's rejection of an unknown record went unnoticed: {failures}")
    return f


def locate_with(repo, cache, tarball):
    """paramedir.locate with XDG_CACHE_HOME=cache and MPITRACE_PARAVER_TARBALL=tarball (unset for
    None): what it returned or raised."""
    saved = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "MPITRACE_PARAVER_TARBALL",
                                            "MPITRACE_PARAVER_PREFIX")}
    os.environ["XDG_CACHE_HOME"] = cache
    os.environ.pop("MPITRACE_PARAVER_PREFIX", None)
    os.environ.pop("MPITRACE_PARAVER_TARBALL", None)
    if tarball is not None:
        os.environ["MPITRACE_PARAVER_TARBALL"] = tarball
    try:
        return paramedir.locate(repo)
    except (paramedir.Unavailable, paramedir.BuildFailed) as e:
        return e
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def case_gzip(run):
    """`perusetrace prv --gzip`: PREFIX.prv.gz holds exactly the .prv's bytes, and Paraver's
    kernel computes every configuration on it as on the plain file."""
    archive = run.trace("gzip", ["all", "-d", "20"])
    plain = run.prv(archive, "plain")
    packed = run.prv(archive, "packed", ["--gzip"])
    f = []
    if os.path.exists(packed + ".prv"):
        f.append("--gzip also wrote an uncompressed .prv")
    with open(plain + ".prv", "rb") as a, gzip.open(packed + ".prv.gz", "rb") as b:
        if a.read() != b.read():
            f.append("the .prv.gz does not hold the .prv's bytes")
    configs = [paramedir.config(c) for c in sorted(os.listdir(paramedir.CONFIGS))
               if c.endswith(".cfg")]
    failures, plain_rows = run.compute(plain, configs, tolerate_absent_events=True)
    f += failures
    failures, packed_rows = run.compute(packed, configs, tolerate_absent_events=True,
                                        suffix=".prv.gz")
    f += failures
    for cfg in configs:
        if plain_rows.get(cfg) != packed_rows.get(cfg) or not plain_rows.get(cfg):
            f.append(f"{os.path.basename(cfg)}: Paraver computes {packed_rows.get(cfg)} on the "
                     f".prv.gz, {plain_rows.get(cfg)} on the .prv")
    return f


CASES = {"late_sender": case_late_sender, "scenarios": case_scenarios,
         "unavailable": case_unavailable, "gzip": case_gzip}


def locate(opts):
    """opts.tool: paramedir, built from its source; skips without the source, fails when the
    build does."""
    try:
        opts.tool = paramedir.locate(opts.repo)
    except paramedir.Unavailable as e:
        # Only when there is no paraver-kernel source at all; a failed build is BuildFailed.
        if opts.case != "unavailable":
            print(f"SKIP: {e}")
            sys.exit(SKIP)
        opts.tool = None
    except paramedir.BuildFailed as e:
        print(f"FAILED paramedir case '{opts.case}': Paraver's paramedir, a dependency of this "
              f"test, failed to build:\n{e}", file=sys.stderr)
        sys.exit(1)


def main():
    case_result.run_listing_case(CASES, "paramedir",
                                 ["repo", "mpirun", "preload", "perusetrace", "scenarios"],
                                 lambda case, opts, work: case(Run(opts, work, opts.tool)),
                                 prepare=locate)


if __name__ == "__main__":
    main()
