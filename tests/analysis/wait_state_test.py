#!/usr/bin/python3
"""The report's wait states against known answers (tests/apps/wait_states, 4 ranks).

    wait_state_test.py --mpirun MPIRUN --preload LIB --perusetrace EXE --build BUILD
                       --schema docs/report.schema.json CASE

Each CASE is a scenario of tests/apps/wait_states run traced with a delay of DELAY_MS injected
as computation on one rank; `perusetrace report --json` must charge the pattern the scenario
makes with the injected delay on the ranks that waited (within max(2 %, 2 ms)), every other
pattern with under 2 ms on every rank (completion patterns: 5 ms per collective the scenario
calls, the time the scheduler takes to run every rank out of it on 2 cores), and keep the invariant of tests/common/wait_checks.py. Beyond the patterns:
  chain        rank 0's delay in phase=A costs 1 x DELAY_MS directly (rank 1's wait) and
               1 x DELAY_MS propagated (rank 2's wait, through rank 1's waiting in phase=B), and
               rank 2's case names both
  nonblocking  the waiting is charged to MPI_Wait, where the Iallreduce completes
  probe_loop   the same for a loop of MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) before MPI_Recv
  test_loop    a receive collected by a busy MPI_Test loop: the late sender is the time in the
               loop's MPI_Test calls until the send began: at most the time in MPI_Test, and at
               least 90 % of the delay (the loop's own code outside MPI takes the rest)
  alternating  rank i computes DELAY_MS in phase=slow in iteration i, the others DELAY_MS / 4 in
               phase=fast, then MPI_Allreduce: each rank waits 3 x 3/4 x DELAY_MS; the critical
               path holds 4 x DELAY_MS of phase=slow, whose mean per rank is DELAY_MS
The text report opens with the largest pattern and its cause.
"""
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import report_test  # noqa: E402
import wait_checks  # noqa: E402

# 4 ranks share 2 cores: a rank may leave the scenario's starting MPI_Comm_dup some ms after the
# others, which shortens its wait by as much. 400 ms keeps that inside 2 % of the delay.
DELAY_MS = 400
D = DELAY_MS * 1_000_000
RANKS = 4
RUN_TIMEOUT = 90
COMPLETIONS = {"barrier_completion", "nxn_completion"}

# scenario -> ({pattern: {rank: ns}}, collectives the scenario calls)
EXPECTED = {
    "late_sender": ({"late_sender": {1: D}}, 0),
    "wrong_order": ({"late_sender_wrong_order": {2: D}}, 0),
    "late_receiver": ({"late_receiver": {0: D}}, 0),
    "late_receiver_ssend": ({"late_receiver": {0: D}}, 0),
    "late_receiver_isend": ({"late_receiver": {0: D}}, 0),
    "barrier": ({"wait_at_barrier": {0: D, 1: D, 3: D}}, 1),
    "nxn": ({"wait_at_nxn": {0: D, 1: D, 2: D}}, 1),
    "bcast": ({"late_broadcast": {0: D, 2: D, 3: D}}, 1),
    "reduce": ({"early_reduce": {0: D}}, 1),
    "chain": ({"late_sender": {1: D, 2: D}}, 0),
    "nonblocking": ({"wait_at_nxn": {0: D, 1: D, 2: D}}, 1),
    "fence": ({"wait_at_fence": {0: D, 2: D, 3: D}}, 1),
    "late_post": ({"late_post": {0: D}}, 0),
    "early_wait": ({"early_wait": {1: D}}, 0),
    "lock": ({"lock_contention": {1: D}}, 0),
    "test_loop": ({"late_sender": {1: None}}, 0),  # checked against the time in MPI_Test
    "probe_loop": ({"late_sender": {1: None}}, 0),  # checked against the time in MPI_Iprobe
    "alternating": ({"wait_at_nxn": {r: 3 * (D - D // 4) for r in range(RANKS)}}, RANKS),
}


def close(got, want):
    return abs(got - want) <= max(0.02 * want, 2e6)


def ms(ns):
    return f"{ns / 1e6:.3f} ms"


def trace_and_report(opts, work, scenario):
    out = os.path.join(work, "trace")
    # Waiting ranks yield their core: with more ranks than cores, a spinning rank would delay
    # the one computing the delay.
    env = {"MPITRACE_OUTPUT": out, "OMPI_MCA_mpi_yield_when_idle": "1"}
    command = mpi_launch.command(opts.mpirun, RANKS, env, opts.preload)
    run = mpi_launch.run(command + [os.path.join(opts.build, "tests", "wait_states"),
                                    scenario.replace("_", "-"), str(DELAY_MS)],
                         timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(env), cwd=work)
    if run.returncode != 0:
        raise AssertionError(f"wait_states {scenario} failed ({run.returncode}): "
                             f"{run.stderr[-1500:]}")
    return report_test.schema_checked_report(opts.perusetrace, out,
                                             os.path.join(work, "report.json"), opts.schema)


def check_patterns(data, scenario):
    expected, collectives = EXPECTED[scenario]
    w = data["wait_states"]
    f = []
    for key, p in w["patterns"].items():
        want = expected.get(key, {})
        for r in range(RANKS):
            got = p["ranks_ns"][r]
            if r in want:
                if want[r] is not None and not close(got, want[r]):
                    f.append(f"{key} on rank {r}: {ms(got)}, injected {ms(want[r])}")
                continue
            # Completion is the scheduler's: after the first rank leaves a collective, the
            # others need a core to leave it too.
            limit = 5e6 * max(1, collectives) if key in COMPLETIONS else 2e6
            if got >= limit:
                f.append(f"{key} on rank {r}: {ms(got)} where none was injected (limit "
                         f"{ms(limit)})")
    return f


def cause(w, rank, activity):
    for c in w["causes"]:
        if c["rank"] == rank and c["activity"] == activity:
            return c
    return {"direct_ns": 0, "propagated_ns": 0}


def run_case(opts, work, scenario):
    data, text = trace_and_report(opts, work, scenario)
    if "wait_states" not in data:
        return ["the report has no wait_states section"]
    w = data["wait_states"]
    f = check_patterns(data, scenario) + wait_checks.invariant(data)
    if scenario == "chain":
        a = cause(w, 0, "compute in phase=A")
        if not close(a["direct_ns"], D) or not close(a["propagated_ns"], D):
            f.append(f"rank 0's phase=A: direct {ms(a['direct_ns'])}, propagated "
                     f"{ms(a['propagated_ns'])}; injected {ms(D)} each")
        worst = [c for c in w["patterns"]["late_sender"]["worst"] if c["rank"] == 2]
        if not worst or "phase=A" not in worst[0]["cause"] or "phase=B" not in worst[0]["cause"]:
            f.append(f"rank 2's late sender names neither the root cause (phase=A) nor the "
                     f"propagation (phase=B): {worst}")
    if scenario == "nonblocking":
        fns = {fn["name"] for fn in w["patterns"]["wait_at_nxn"]["functions"]}
        if fns != {"MPI_Wait"}:
            f.append(f"the Iallreduce's waiting is charged to {sorted(fns)}, not MPI_Wait")
    if scenario in ("test_loop", "probe_loop"):
        poll = "MPI_Test" if scenario == "test_loop" else "MPI_Iprobe"
        got = w["patterns"]["late_sender"]["ranks_ns"][1]
        in_test = sum(fn["ns"] for fn in data["ranks"][1]["functions"] if fn["name"] == poll)
        if got > in_test + 2e6:
            f.append(f"{scenario}: late sender {ms(got)}, rank 1 spent {ms(in_test)} in {poll}")
        if got < 0.9 * D:
            f.append(f"{scenario}: late sender {ms(got)} on rank 1, its {poll} calls took "
                     f"{ms(in_test)}, the delay was {ms(D)}")
    if scenario == "alternating":
        path = {a["activity"]: a for a in w["critical_path"]["activities"]}
        slow = path.get("compute in phase=slow", {"ns": 0, "mean_rank_ns": 0})
        if not close(slow["ns"], 4 * D) or not close(slow["mean_rank_ns"], D):
            f.append(f"critical path: phase=slow {ms(slow['ns'])} (mean rank "
                     f"{ms(slow['mean_rank_ns'])}), want {ms(4 * D)} (mean {ms(D)})")
        if "caused 100 % by compute in phase=slow on ranks 0, 1, 2, 3 (most: " not in text:
            f.append("the summary does not name phase=slow on every rank as the cause")
    summary = text.split("\nRanks:")[0]
    expected = EXPECTED[scenario][0]
    if expected:
        title = {"late_sender": "Late sender in", "late_sender_wrong_order": "Late sender, wrong",
                 "late_receiver": "Late receiver", "wait_at_barrier": "Wait at barrier",
                 "wait_at_nxn": "Wait at N x N", "late_broadcast": "Late broadcast",
                 "early_reduce": "Early reduce",
                 "wait_at_fence": "Wait at fence", "late_post": "Late post",
                 "early_wait": "Early wait",
                 "lock_contention": "Lock contention"}[next(iter(expected))]
        first = [line for line in summary.splitlines() if "of all rank time is" in line]
        if not first or title not in first[0]:
            f.append(f"the report does not open with {title}: {first[:1]}")
    return f


def main():
    case_result.run_listing_case(
        EXPECTED, "wait-state", ["mpirun", "preload", "perusetrace", "build", "schema"],
        lambda expected, opts, work: run_case(opts, work, opts.case), asserting=True)


if __name__ == "__main__":
    main()
