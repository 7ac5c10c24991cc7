#!/usr/bin/python3
"""MPI_T in the trace, on real ranks, checked in the archive read back with python3-otf2.

    mpit_test.py --mpirun MPIRUN --preload LIB --app MPIT_COUNTS CASE

CASE:
  spc_counts    4 ranks of tests/apps/mpit_counts (SENDS=100, FLOOD=20) with Open MPI's software
                counters attached and MPITRACE_PVARS=runtime_spc_*,pml_ob1_*, read at every call:
                each sender's OMPI_SPC_SEND changes add up to exactly SENDS+FLOOD+1, every change
                inside an MPI_Send; each receiver's OMPI_SPC_RECV likewise inside MPI_Recv; when
                the receive of the last message returns, the receiver's unexpected queue holds
                exactly FLOOD messages by ob1's per-peer pml_ob1_unexpected_msgq_length of
                MPI_COMM_WORLD; the reset-on-read watermark OMPI_SPC_MAX_UNEXPECTED_IN_QUEUE has a
                value at each change, counted by its "moves".
  periodic      the same with MPITRACE_PVAR_READ=1000ms: the totals are the same exact numbers,
                from a handful of reads instead of one per call.
  cvar_bcast    MPITRACE_CVARS=coll_tuned_bcast_algorithm=1 (basic linear) and =6 (binomial)
                with dynamic rules on: Peruse sees the broadcast's internal sends only on the
                root with 1, on a non-root rank too with 6; the archive records the setting and
                what came of it.
  bad_input     a PVAR glob that matches nothing, a CVAR the MPI does not have and a bad
                MPITRACE_PVAR_READ each stop the run at MPI_Init with one clear message and no
                trace; a CVAR value of the wrong type is refused with a message, the run goes on.
"""
import collections
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402

SENDS, FLOOD = 100, 20
RANKS = 4
SPC = {"OMPI_MCA_mpi_spc_attach": "all"}
# Open MPI 5.0's OMPI_SPC_MAX_UNEXPECTED_IN_QUEUE never rises (see check_counts).
STUCK_WATERMARK = False
BCAST_TAG = -17  # Open MPI's internal tag of MPI_Bcast's messages
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 120


class Run:
    def __init__(self, opts, work):
        self.opts, self.work = opts, work

    def trace(self, name, env, args=(str(SENDS), str(FLOOD))):
        out = os.path.join(self.work, name)
        ranks_env = dict(env, MPITRACE_OUTPUT=out)
        command = mpi_launch.command(self.opts.mpirun, RANKS, ranks_env, self.opts.preload)
        run = mpi_launch.run(command + [self.opts.app, *args], timeout=RUN_TIMEOUT,
                             env=mpi_launch.launcher_env(ranks_env), cwd=self.work)
        return out, run


def metric_name(event):
    return event.raw.metric.members[0].name


def pvar_events(trace, rank, pvar):
    """(event, the MPI function it lies in or None) of every value of `pvar` on `rank`."""
    return [(e, region) for e, region in trace_checks.in_regions(trace.rank_events(rank))
            if e.kind == "Metric" and metric_name(e) == "MPI_T " + pvar]


def value_at_leave(trace, rank, pvar, region, visit):
    """The value `pvar` last had when the `visit`-th (0-based) call of `region` returned."""
    value, seen, stack = None, -1, []
    for e in trace.rank_events(rank):
        if e.kind == "Enter":
            stack.append(e.name)
        elif e.kind == "Leave" and stack:
            if stack.pop() == region:
                seen += 1
                if seen == visit:
                    return value
        elif e.kind == "Metric" and metric_name(e) == "MPI_T " + pvar:
            value = e.raw.values[0]
    return None


def load(out, run, failures):
    if run.returncode != 0 or not os.path.exists(os.path.join(out, "traces.otf2")):
        failures.append(f"the traced run failed (exit {run.returncode}): {run.stderr[-1500:]}")
        return None
    return trace_checks.load(os.path.join(out, "traces.otf2"))


def check_counts(trace, failures, most_reads=None):
    expected = SENDS + FLOOD + 1
    for rank in range(RANKS):
        counter, call = ("runtime_spc_OMPI_SPC_SEND", "MPI_Send") if rank % 2 == 0 else \
            ("runtime_spc_OMPI_SPC_RECV", "MPI_Recv")
        events = pvar_events(trace, rank, counter)
        total = sum(e.raw.values[0] for e, _ in events)
        if total != expected:
            failures.append(f"rank {rank}: {counter} changed by {total}, expected {expected}")
        if most_reads is None:
            outside = collections.Counter(where for _, where in events if where != call)
            if outside:
                failures.append(f"rank {rank}: {counter} changes outside {call}: {dict(outside)}")
        elif len(events) > most_reads:
            failures.append(f"rank {rank}: {len(events)} values of {counter} with a read every "
                            f"second, expected at most {most_reads}")
    if most_reads is not None:
        return
    for rank in range(1, RANKS, 2):
        # The receive of tag 2 is the receiver's MPI_Recv number SENDS (0-based): ob1's length
        # of the unexpected queue from the sender is then exactly FLOOD.
        pvar = f"pml_ob1_unexpected_msgq_length (MPI_COMM_WORLD) [peer {rank - 1}]"
        value = value_at_leave(trace, rank, pvar, "MPI_Recv", SENDS)
        if value != FLOOD:
            failures.append(f"rank {rank}: {pvar} was {value} when the last message's receive "
                            f"returned, expected {FLOOD}")
        # Open MPI's process-wide count and its reset-on-read maximum drift (they count down
        # messages they did not count up, docs/mpit.md): what is checked of the watermark is
        # perusetrace's part, a value at every change and "moves" counting those changes.
        mark = "runtime_spc_OMPI_SPC_MAX_UNEXPECTED_IN_QUEUE"
        values = pvar_events(trace, rank, mark)
        moves = pvar_events(trace, rank, mark + " moves")
        if STUCK_WATERMARK:
            # Open MPI 5.0.9's ompi_spc_update_watermark compares the maximum with itself
            # (ompi_spc.h reads the watermark where it means the value), so it never rises;
            # the queue length it should follow does.
            lengths = [e.raw.values[0] for e, _ in
                       pvar_events(trace, rank, "runtime_spc_OMPI_SPC_UNEXPECTED_IN_QUEUE")]
            if any(e.raw.values[0] for e, _ in values) or max(lengths, default=0) < FLOOD // 2:
                failures.append(f"rank {rank}: on Open MPI 5.0.9 the maximum was "
                                f"{[e.raw.values[0] for e, _ in values]}, the queue length rose "
                                f"to {max(lengths, default=0)} (expected 0, and {FLOOD // 2}+)")
        elif not values or not moves or moves[-1][0].raw.values[0] != len(values):
            failures.append(f"rank {rank}: the watermark changed {len(values)} times, but its "
                            f"moves say {moves[-1][0].raw.values[0] if moves else None}")



def case_spc_counts(r):
    global STUCK_WATERMARK
    STUCK_WATERMARK = (mpi_launch.open_mpi_version(r.opts.mpirun) or (0, 0)) >= (5, 0)
    failures = []
    out, run = r.trace("counts", dict(SPC, MPITRACE_PVARS="runtime_spc_*,pml_ob1_*"))
    trace = load(out, run, failures)
    if trace:
        check_counts(trace, failures)
    return failures


def case_periodic(r):
    failures = []
    out, run = r.trace("periodic", dict(SPC, MPITRACE_PVARS="runtime_spc_OMPI_SPC_*",
                                        MPITRACE_PVAR_READ="1000ms"))
    trace = load(out, run, failures)
    if trace:
        check_counts(trace, failures, most_reads=4)
    return failures


def case_cvar_bcast(r):
    failures = []
    non_root_sends = {}
    for algorithm in (1, 6):
        out, run = r.trace(f"bcast{algorithm}", {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "MPITRACE_CVARS": f"coll_tuned_bcast_algorithm={algorithm}",
            "MPITRACE_PERUSE_EVENTS": "REQ_ACTIVATE"}, args=("1", "0"))
        trace = load(out, run, failures)
        if not trace:
            continue
        wanted = f"coll_tuned_bcast_algorithm={algorithm}: set"
        if wanted not in run.stderr:
            failures.append(f"rank 0 did not say '{wanted}': {run.stderr[-500:]}")
        props = trace.properties
        if wanted not in props.get("PERUSETRACE::MPI_T_CVARS_SET", ""):
            failures.append(f"the archive does not record '{wanted}'")
        if f"coll_tuned_bcast_algorithm={algorithm}" not in props.get(
                "PERUSETRACE::MPI_T_CVARS", ""):
            failures.append(f"the archive's CVARs do not hold coll_tuned_bcast_algorithm="
                            f"{algorithm}")
        non_root_sends[algorithm] = sum(
            len(trace.peruse(rank, tag=BCAST_TAG, operation=0)) for rank in range(1, RANKS))
        root_sends = len(trace.peruse(0, tag=BCAST_TAG, operation=0))
        if root_sends == 0:
            failures.append(f"algorithm {algorithm}: Peruse saw no send of the root's broadcast")
    if non_root_sends.get(1, 1) != 0:
        failures.append(f"basic linear broadcast: {non_root_sends.get(1)} sends on non-root "
                        "ranks, expected none (was the CVAR set?)")
    if non_root_sends.get(6, 0) == 0:
        failures.append("binomial broadcast: no send on a non-root rank (was the CVAR set?)")
    return failures


def case_bad_input(r):
    failures = []
    stops = {
        "MPITRACE_PVARS=runtime_spc_OMPI_SPC_SNED": ("runtime_spc_OMPI_SPC_SEND",
                                                    {"MPITRACE_PVARS": "runtime_spc_OMPI_SPC_SNED"}),
        "MPITRACE_CVARS=no_such_cvar=1": ("no control variable no_such_cvar",
                                          {"MPITRACE_CVARS": "no_such_cvar=1"}),
        "MPITRACE_PVAR_READ=often": ("MPITRACE_PVAR_READ='often'",
                                     {"MPITRACE_PVARS": "all", "MPITRACE_PVAR_READ": "often"}),
    }
    for label, (words, env) in stops.items():
        out, run = r.trace(label.split("=")[0].lower(), env)
        if run.returncode in (0, None) or words not in run.stderr or \
                run.stderr.count(words) != 1:
            failures.append(f"{label}: exit {run.returncode}, expected a stop and '{words}' once: "
                            f"{run.stderr[-800:]}")
        if os.path.exists(os.path.join(out, "traces.otf2")):
            failures.append(f"{label}: a trace was written although the run stopped")
    out, run = r.trace("badvalue", {"MPITRACE_CVARS": "coll_tuned_bcast_algorithm=fast"})
    words = "coll_tuned_bcast_algorithm=fast: not set, 'fast' is not a value of its type (int)"
    if run.returncode != 0 or words not in run.stderr:
        failures.append(f"a CVAR value of the wrong type: exit {run.returncode}, expected the run "
                        f"to go on saying '{words}': {run.stderr[-800:]}")
    return failures


CASES = case_result.cases_of(globals())


def main():
    case_result.run_listing_case(CASES, "mpit", ["mpirun", "preload", "app"],
                                 lambda case, opts, work: case(Run(opts, work)))


if __name__ == "__main__":
    main()
