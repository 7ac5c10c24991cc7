#!/usr/bin/python3
"""What only Peruse shows, against known answers (tests/apps/inside_mpi), and the report's
"what to try" items checked by applying them: `perusetrace diff` of the run before and after.

    inside_mpi_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --build BUILD
                       --schema docs/report.schema.json --fake-cluster PATH CASE

  stall          4 ranks on one host (shared memory; on Open MPI 5, whose receivers pull the message
                 themselves, no stall is the answer): ranks 0 and 2 post a 4 MiB MPI_Isend and
                 compute DELAY_MS in phase=compute; ranks 1 and 3 wait in MPI_Wait. The report
                 charges each receiver a progress stall of the delay (within 10 %), caused by its
                 sender's phase=compute, no late sender, and opens "what to try" with it. Fixed
                 (MPI_Test every ms in the computation): the diff shows the stall more than
                 halved.
  stall_receiver the other way round: ranks 1 and 3 post MPI_Irecv and compute; ranks 0 and 2
                 wait in MPI_Wait of their MPI_Isend: each sender's progress stall is the delay,
                 caused by its receiver's phase=compute, and no late receiver (the receive was
                 posted first). Fixed with MPI_Test every ms: the diff shows it more than halved.
  stall_cluster  the same as stall on two simulated hosts (TCP, 1 rank each): the stall is the delay; fixed,
                 under 5 % of it (the first MPI_Test lets the transfer finish).
  protocol       4 ranks, 50 round trips of 8 KiB per pair, above the shared-memory eager limit
                 (4 KiB): all 200 receives rendezvous with a handshake each (at least 190: one over
                 1 ms counts as a stall), and "what to try"
                 names the eager limit with a value; rerun with `perusetrace run --mca` of that
                 value: all 200 eager, and the diff shows the rendezvous receives gone. 2 KiB
                 messages: all eager, no protocol item.
  unexpected     3 ranks send 20 messages of 1 KiB to rank 0 while it computes: the copies
                 counted equal the program's REQ_MATCH_UNEX events in the archive (at least 20),
                 all posted late by MPI_Recv in the diagnosis; pre-posted (-p 1): the diff shows
                 none copied twice.
  deep_posted    rank 0 posts 600 wildcard receives; rank 1 sends their tags from the highest
                 down: searches of 256 or more receives take longer on average than those of
                 under 16, and "what to try" names the deep posted queue; sent in the order they
                 were posted (-p 1): each message matches the first receive, and the diff shows
                 the time of searches in a queue of 64+ receives cut by more than 4x.
"""
import json
import os
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import report_test  # noqa: E402
import trace_checks  # noqa: E402
import wait_checks  # noqa: E402

DELAY_MS = 300
D = DELAY_MS * 1_000_000
RUN_TIMEOUT = 120
# deep_posted's receives, the same in both runs so that the diff compares like with like; enough
# that walking the queue, not each search's fixed cost, is most of a reversed-order search.
DEEP_POSTED = "600"
SKIP = 77


def ms(ns):
    return f"{ns / 1e6:.3f} ms"


def program(opts):
    return os.path.join(opts.build, "tests", "inside_mpi")


def report(opts, work, trace):
    path = os.path.join(work, os.path.basename(trace) + ".json")
    data, _ = report_test.schema_checked_report(opts.perusetrace, trace, path, opts.schema)
    return data, path


def traced(opts, work, name, np, args, mca=()):
    """Runs inside_mpi ARGS on NP ranks of this host through `perusetrace run` (every Peruse
    event, `--mca NAME VALUE` for each pair of MCA); returns (report data, its JSON path)."""
    out = os.path.join(work, name)
    cmd = [opts.perusetrace, "run", "--events", "all", "-o", out, "--mpirun", opts.mpirun,
           "--mpirun-arg=--oversubscribe", "--mpirun-arg=--allow-run-as-root",
           "--mpirun-arg=--bind-to", "--mpirun-arg=none"]
    for name_value in mca:
        cmd += ["--mca", *name_value]
    cmd += ["-np", str(np), "--", program(opts), *args]
    env = dict(mpi_launch.launcher_env(), OMPI_MCA_mpi_yield_when_idle="1")
    run = mpi_launch.run(cmd, timeout=RUN_TIMEOUT, env=env, cwd=work)
    if run.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({run.returncode}): {run.stderr[-1500:]}")
    return report(opts, work, out) + (out,)


def on_cluster(opts, work, name, args):
    """Runs inside_mpi ARGS traced on two simulated hosts, one rank each (TCP between them)."""
    out = os.path.join(work, name)
    cmd = [opts.fake_cluster, "--hosts", "h1:0,h2:+10", "--slots", "1", "--mpirun", opts.mpirun,
           "--", "-np", "2", "-x", f"MPITRACE_OUTPUT={out}", "-x", f"LD_PRELOAD={opts.preload}",
           "-x", "MPITRACE_PERUSE_EVENTS=all", program(opts), *args]
    run = mpi_launch.run(cmd, timeout=RUN_TIMEOUT, cwd=work)
    cannot = mpi_launch.fake_cluster_cannot_run(run.returncode, run.stderr)
    if cannot:
        print(f"skipped: {cannot}")
        sys.exit(SKIP)
    if run.returncode != 0:
        raise AssertionError(f"{' '.join(args)} on the cluster failed ({run.returncode}): "
                             f"{run.stderr[-1500:]}")
    return report(opts, work, out)


def diff_rows(opts, before, after):
    """`perusetrace diff BEFORE AFTER --json`: its rows by key, (before, after)."""
    path = after + ".diff.json"
    d = subprocess.run([opts.perusetrace, "diff", before, after, "--json", path],
                       capture_output=True, text=True, timeout=120)
    if d.returncode not in (0, 1):
        raise AssertionError(f"perusetrace diff failed ({d.returncode}): {d.stderr[-1500:]}")
    with open(path) as f:
        data = json.load(f)
    return {r["key"]: (r.get("a"), r.get("b")) for s in data["sections"] for r in s["rows"]}


def stall_ns(data):
    return data["wait_states"]["patterns"]["progress_stall"]


def advice(data, words):
    return [a for a in data["what_to_try"] if all(w in a["finding"] + a["change"] for w in words)]


def case_stall(opts, work, scenario="stall", waiters=(1, 3), computers=(0, 2)):
    data, path, _ = traced(opts, work, scenario, 4, [scenario.replace("_", "-"), "-d",
                                                     str(DELAY_MS)])
    p, f = stall_ns(data), wait_checks.invariant(data)
    if scenario == "stall" and (mpi_launch.open_mpi_version(opts.mpirun) or (0, 0)) >= (5, 0):
        # Open MPI 5's shared memory lets the receiver pull the message itself (single copy):
        # nothing waits for the computing sender, and the report must not say otherwise.
        if p["total_ns"] > 2e6:
            f.append(f"progress stall of {ms(p['total_ns'])} where the receivers pull the data")
        print(f"Open MPI 5 on one host: progress stall {ms(p['total_ns'])} (the receivers pull)")
        return f
    for r in waiters:
        if abs(p["ranks_ns"][r] - D) > 0.1 * D:
            f.append(f"progress stall on rank {r}: {ms(p['ranks_ns'][r])}, injected {ms(D)}")
    for r in computers:
        if p["ranks_ns"][r] > 2e6:
            f.append(f"progress stall on rank {r}, which computed: {ms(p['ranks_ns'][r])}")
    causes = {(c["rank"], c["activity"]): c["ns"] for c in p["causes"]}
    for r in computers:
        if causes.get((r, "compute in phase=compute"), 0) < 0.9 * D:
            f.append(f"rank {r}'s phase=compute is not the stall's cause: {causes}")
    for other in ("late_sender", "late_receiver"):
        late = data["wait_states"]["patterns"][other]["total_ns"]
        if late > 0.1 * D:
            f.append(f"{other} {ms(late)}: both sides were posted at once")
    first = data["what_to_try"][:1]
    if not first or "progress stall" not in first[0]["finding"] or \
            "phase=compute" not in first[0]["change"] or "MPI_Test" not in first[0]["change"]:
        f.append(f"'what to try' does not open with the stall and MPI_Test: {first}")
    fixed, fixed_path, _ = traced(opts, work, scenario + "_fixed", 4,
                                  [scenario.replace("_", "-"), "-d", str(DELAY_MS), "-t", "1"])
    rows = diff_rows(opts, path, fixed_path)
    before, after = rows.get("wait.progress_stall.total_ns", (None, None))
    print(f"progress stall: {ms(p['total_ns'])} before, {ms(stall_ns(fixed)['total_ns'])} with "
          f"MPI_Test every ms; diff row {before} -> {after}")
    if before is None or after is None or after > 0.5 * before:
        f.append(f"the diff does not show the stall more than halved: {before} -> {after}")
    return f


def case_stall_receiver(opts, work):
    return case_stall(opts, work, "stall_receiver", waiters=(0, 2), computers=(1, 3))


def case_stall_cluster(opts, work):
    data, _ = on_cluster(opts, work, "stall", ["stall", "-d", str(DELAY_MS)])
    got = stall_ns(data)["ranks_ns"][1]
    f = wait_checks.invariant(data)
    if abs(got - D) > 0.1 * D:
        f.append(f"progress stall across hosts: {ms(got)}, injected {ms(D)}")
    fixed, _ = on_cluster(opts, work, "stall_fixed", ["stall", "-d", str(DELAY_MS), "-t", "1"])
    after = stall_ns(fixed)["ranks_ns"][1]
    print(f"progress stall across hosts: {ms(got)}; with MPI_Test every ms {ms(after)}")
    if after > 0.05 * D:
        f.append(f"with MPI_Test every ms the stall is still {ms(after)}")
    return f


def case_protocol(opts, work):
    # Open MPI 5 calls its shared memory "sm" (4.1's "vader" names are its synonyms), and pulls a
    # rendezvous message in one piece: its handshake is the pull, from the match to the data.
    limit = "btl_sm_eager_limit" if (mpi_launch.open_mpi_version(opts.mpirun) or (0, 0)) >= (5, 0) \
        else "btl_vader_eager_limit"
    data, path, _ = traced(opts, work, "protocol", 4, ["protocol", "-b", "8192", "-n", "50"])
    intra = data["inside_mpi"]["intra_host"]
    f = []
    classes = {c["label"]: c for c in intra["size_classes"]}
    c = classes["1 KiB - 16 KiB"]
    # A handshake over 1 ms is left out as a stall: on a loaded machine the scheduler makes a
    # few.
    if (c["rendezvous"], c["eager"]) != (200, 0) or not 190 <= c["handshakes"] <= 200:
        f.append(f"8 KiB receives: {c['rendezvous']} rendezvous, {c['eager']} eager, "
                 f"{c['handshakes']} handshakes; want 200, 0, 190-200")
    items = [a for a in data["what_to_try"] if a["kind"] == "setting"]
    if not items or f"--mca {limit} 9216" not in items[0]["change"]:
        return f + [f"no eager-limit advice with a value: {items}"]
    fixed, fixed_path, _ = traced(opts, work, "protocol_fixed", 4,
                                  ["protocol", "-b", "8192", "-n", "50"],
                                  mca=[(limit, "9216")])
    c = {x["label"]: x for x in fixed["inside_mpi"]["intra_host"]["size_classes"]}["1 KiB - 16 KiB"]
    if (c["rendezvous"], c["eager"]) != (0, 200):
        f.append(f"with the limit raised: {c['rendezvous']} rendezvous, {c['eager']} eager")
    if any(a["kind"] == "setting" for a in fixed["what_to_try"]):
        f.append("the eager-limit advice stays after it was applied")
    rows = diff_rows(opts, path, fixed_path)
    before, after = rows.get("messages.requests.receive.rendezvous", (None, None))
    print(f"8 KiB receives: rendezvous {before} -> {after} with the advised eager limit")
    if not before or after is None or after >= before:
        f.append(f"the diff does not show the rendezvous receives gone: {before} -> {after}")
    small, _, _ = traced(opts, work, "protocol_small", 4, ["protocol", "-b", "2048", "-n", "50"])
    c = {x["label"]: x for x in small["inside_mpi"]["intra_host"]["size_classes"]}["1 KiB - 16 KiB"]
    if (c["rendezvous"], c["eager"]) != (0, 200):
        f.append(f"2 KiB receives: {c['rendezvous']} rendezvous, {c['eager']} eager; want 0, 200")
    return f


def match_unex_events(trace_dir, rank, tag):
    trace = trace_checks.load(os.path.join(trace_dir, "traces.otf2"))
    return sum(1 for e in trace.peruse(rank, tag=tag) if e.name.endswith("REQ_MATCH_UNEX"))


def case_unexpected(opts, work):
    data, path, trace_dir = traced(opts, work, "unexpected", 4,
                                ["unexpected", "-d", "100", "-n", "20", "-b", "1024"])
    u = data["inside_mpi"]["unexpected_copies"]
    want = match_unex_events(trace_dir, 0, 8)
    f = []
    print(f"copied twice: {u['messages']} messages ({u['bytes']} bytes, {ms(u['copy_ns'])}); "
          f"the archive's REQ_MATCH_UNEX of tag 8 on rank 0: {want}")
    # 3 senders x 20 messages, all in the queue: rank 0 makes progress while they arrive.
    if u["messages"] != want or want != 60 or u["bytes"] != 1024 * want:
        f.append(f"copies {u['messages']} ({u['bytes']} bytes), the archive has {want} matches "
                 "in the unexpected queue (60 expected)")
    paths = {p["path"]: p["count"] for p in u["receives"]}
    if paths != {"MPI_Recv": want}:
        f.append(f"the late receives' call paths: {paths}, want MPI_Recv: {want}")
    if not advice(data, ["copied twice", "post those receives"]) and u["copy_ns"] * 10_000 >= \
            data["trace_ns"] * 4:
        f.append("no advice to post the receives earlier")
    _, fixed_path, _ = traced(opts, work, "unexpected_fixed", 4,
                              ["unexpected", "-d", "100", "-n", "20", "-b", "1024", "-p", "1"])
    before, after = diff_rows(opts, path, fixed_path).get("inside.copies.count", (None, None))
    print(f"copied twice: {before} -> {after} with the receives posted first")
    if before != want or after != 0:
        f.append(f"the diff does not show the copies gone: {before} -> {after}")
    return f


def case_deep_posted(opts, work):
    data, path, _ = traced(opts, work, "deep_posted", 2, ["deep-posted", "-n", DEEP_POSTED])
    depths = {d["from_depth"]: d for d in data["inside_mpi"]["posted_searches"]}
    shallow, deep = depths[0], depths[256]
    f = []
    if deep["searches"] == 0 or shallow["searches"] == 0:
        return [f"no searches at depth 256+ or below 16: {depths}"]
    mean = lambda d: d["ns"] / d["searches"]  # noqa: E731
    print(f"posted-queue search: mean {mean(shallow):.0f} ns below 16 receives, "
          f"{mean(deep):.0f} ns at 256 or more")
    if mean(deep) <= mean(shallow):
        f.append(f"searches of 256+ receives ({mean(deep):.0f} ns) are not slower than of "
                 f"under 16 ({mean(shallow):.0f} ns)")
    if not advice(data, ["posted queue of 64 or more", "in the order"]):
        f.append(f"no advice on the deep posted queue: {data['what_to_try']}")
    _, fixed_path, _ = traced(opts, work, "deep_posted_fixed", 2,
                              ["deep-posted", "-n", DEEP_POSTED, "-p", "1"])
    rows = diff_rows(opts, path, fixed_path)
    before, after = rows.get("inside.deep_searches.ns", (None, None))
    print(f"searches in a queue of 64+ receives: {before} ns -> {after} ns sent in the posted "
          "order")
    if not before or after is None or after * 4 > before:
        f.append(f"the diff does not show the deep searches cut by 4x: {before} -> {after}")
    return f


CASES = {"stall": case_stall, "stall_receiver": case_stall_receiver,
         "stall_cluster": case_stall_cluster, "protocol": case_protocol,
         "unexpected": case_unexpected, "deep_posted": case_deep_posted}


def main():
    case_result.run_listing_case(
        CASES, "inside-MPI",
        ["mpirun", "preload", "perusetrace", "build", "schema", "fake-cluster"],
        asserting=True)


if __name__ == "__main__":
    main()
