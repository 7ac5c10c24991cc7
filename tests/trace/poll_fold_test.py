#!/usr/bin/python3
"""Polls folded (MPITRACE_FOLD_POLLS): unsuccessful tests and probes in a row are one call.

    poll_fold_test.py --build BUILD_DIR --mpirun MPIRUN CASE

tests/apps/poll_kinds on 4 ranks, every Peruse event: the even ranks poll with each of MPI_Test,
Testany, Testall, Testsome, Iprobe, Improbe and Request_get_status until their partner's
delayed message is there (computing 2 us between polls), then make 100 unsuccessful MPI_Test
calls that an MPI_Barrier ends. Each rank writes its own count of calls per function and the ns
it spent inside them.

CASE:
  folded  the default: the report's calls of each poll function on every rank are the program's
          own count exactly, and its time inside them at most the program's own (which also
          holds the time of the wrapper around the call) and at least half of it; the archive
          holds one Enter per fold (one per round and kind, two for MPI_Test; a few more where a rank
          lost its core for longer than the 50 us a fold bridges), whose Leave's
          poll_calls add up to the program's count; every probe's Peruse queue search is kept;
          the archive's settings say MPITRACE_FOLD_POLLS=on. `perusetrace prv` passes the strict
          reader and writes a type-64000120 event (calls folded) at the end of each folded call,
          whose values add up to the archive's poll_calls.
  off     MPITRACE_FOLD_POLLS=off: one Enter per call, no poll_calls, the same counts and bounds.
  killed  rank 0 killed with SIGKILL while it polls with MPI_Test (its partner sleeps 4 s):
          `perusetrace recover` closes the fold the rank had open, with its count so far (more
          than 1 000 calls) and time inside, at the last poll's exit.
  killed_memory  the same with MPITRACE_BUFFERS=memory and SIGTERM: the crash handler writes the
          buffer out with the fold's close after it (the head is not in a file there), so the
          count and time inside are kept as well.
"""
import os
import signal
import subprocess
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import prv_check  # noqa: E402
import recovery  # noqa: E402

NP, ROUNDS, POLLS = 4, 2, 100
PRV_POLL_CALLS = 64000120  # tools/prv/prv_codes.hpp
KINDS = ["MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome", "MPI_Iprobe", "MPI_Improbe",
         "MPI_Request_get_status"]
RUN_TIMEOUT = 120


expect = case_result.expect


class Context:
    def __init__(self, build, mpirun, work):
        self.build, self.mpirun, self.work = build, mpirun, work
        self.library = os.path.join(build, "lib", "libperusetrace.so")
        self.out = os.path.join(work, "trace")

    def command(self, env, *args):
        env = dict(env, MPITRACE_OUTPUT=self.out, MPITRACE_PERUSE_EVENTS="all")
        program = [os.path.join(self.build, "tests", "poll_kinds"), *args, self.work]
        return mpi_launch.command(self.mpirun, NP, env, self.library) + program, env

    def run(self, env, *args):
        command, env = self.command(env, *args)
        run = mpi_launch.run(command, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(env),
                             cwd=self.work)
        expect(run.returncode == 0, f"the traced run failed (exit {run.returncode})", run)
        return run

    def perusetrace(self, *args):
        run = subprocess.run([os.path.join(self.build, "tools", "perusetrace"), *args],
                             capture_output=True, text=True, timeout=300)
        expect(run.returncode == 0, f"perusetrace {args[0]} failed (exit {run.returncode})", run)
        return run

    def report(self):
        import json
        path = os.path.join(self.work, "report.json")
        self.perusetrace("report", "-q", self.out, "--json", path)
        with open(path) as f:
            return json.load(f)


def own_counts(work, rank):
    """RANK's own {function: (calls, ns inside)} from its side file."""
    with open(os.path.join(work, f"counts.{rank}")) as f:
        return {name: (int(calls), float(ns)) for name, calls, ns in
                (line.split() for line in f if line.strip())}


def check_report(c, data):
    for rank in range(0, NP, 2):
        own = own_counts(c.work, rank)
        functions = {f["name"]: f for f in data["ranks"][rank]["functions"]}
        for name in KINDS:
            calls, ns = own[name]
            got = functions.get(name, {"calls": 0, "ns": 0})
            print(f"rank {rank} {name}: {calls} calls, {ns / 1e3:.0f} us by its own clock; "
                  f"report {got['calls']} calls, {got['ns'] / 1e3:.0f} us")
            expect(got["calls"] == calls,
                   f"rank {rank}: the report counts {got['calls']} {name}, the program made {calls}")
            expect(0.5 * ns <= got["ns"] <= ns,
                   f"rank {rank}: {got['ns']} ns inside {name} in the report, the program's own "
                   f"clock says {ns:.0f} around the calls")


def archive_polls(anchor):
    """Per rank and poll function: (Enters, the calls their Leaves stand for, Leaves that carry
    poll_calls); per rank: Peruse unexpected-queue searches."""
    import otf2
    enters, stands, folded, searches, folded_calls = {}, {}, {}, {}, 0
    with otf2.reader.open(anchor) as trace:
        for location, event in trace.events:
            rank = int(location.group.name.split()[-1])
            name = getattr(getattr(event, "region", None), "name", None)
            if name == "PERUSE_COMM_SEARCH_UNEX_Q_BEGIN" and isinstance(event, otf2.events.Enter):
                searches[rank] = searches.get(rank, 0) + 1
            if name not in KINDS:
                continue
            key = (rank, name)
            if isinstance(event, otf2.events.Enter):
                enters[key] = enters.get(key, 0) + 1
            elif isinstance(event, otf2.events.Leave):
                calls = 1
                for attribute, value in (event.attributes or {}).items():
                    if attribute.name == "poll_calls":
                        calls = int(value)
                        folded[key] = folded.get(key, 0) + 1
                        folded_calls += calls
                stands[key] = stands.get(key, 0) + calls
    return enters, stands, folded, searches, folded_calls


def prv_poll_calls(c):
    """`perusetrace prv` of the archive, strictly read: (events of type PRV_POLL_CALLS, the sum
    of their values)."""
    prefix = os.path.join(c.work, "polls")
    c.perusetrace("prv", "-q", c.out, "-o", prefix)
    seen = [0, 0]

    def on_record(v):
        if v[0] == 2:
            for kind, value in zip(v[6::2], v[7::2]):
                if kind == PRV_POLL_CALLS:
                    seen[0] += 1
                    seen[1] += value
    failures, _ = prv_check.check(prefix, on_record)
    expect(not failures, f"the .prv of folded polls fails the strict reader: {failures}")
    return seen[0], seen[1]


def settings_line(c):
    first = c.perusetrace("report", "-q", c.out).stdout.splitlines()[:3]
    return " ".join(first)


def case_folded(c):
    c.run({})
    check_report(c, c.report())
    enters, stands, folded, searches, folded_calls = archive_polls(
        os.path.join(c.out, "traces.otf2"))
    for rank in range(0, NP, 2):
        own = own_counts(c.work, rank)
        for name in KINDS:
            key = (rank, name)
            # One per fold, and one more where the rank lost its core for more than the 50 us
            # a fold bridges (4 ranks on the 2 cores of CI): a few in thousands of calls.
            folds = ROUNDS * (2 if name == "MPI_Test" else 1)
            expect(folds <= enters.get(key, 0) <= folds + own[name][0] // 20,
                   f"rank {rank}: {enters.get(key, 0)} Enters of {name} for {own[name][0]} calls, "
                   f"expected one per fold ({folds}) and few more")
            expect(stands.get(key, 0) == own[name][0],
                   f"rank {rank}: the Leaves of {name} stand for {stands.get(key, 0)} calls, the "
                   f"program made {own[name][0]}")
        expect(folded.get((rank, "MPI_Test"), 0) >= ROUNDS,
               f"rank {rank}: no MPI_Test Leave carries poll_calls")
        probes = own["MPI_Iprobe"][0] + own["MPI_Improbe"][0]
        expect(searches.get(rank, 0) >= probes,
               f"rank {rank}: {searches.get(rank, 0)} unexpected-queue searches for {probes} probes:"
               " Peruse events inside folds were lost")
    expect("MPITRACE_FOLD_POLLS=on" in settings_line(c), "the report does not say polls were "
           "folded")
    events, calls = prv_poll_calls(c)
    print(f"prv: {events} folded calls ending, standing for {calls} calls")
    expect(events == sum(folded.values()) and calls == folded_calls,
           f"the .prv has {events} folded-call events for {calls} calls, the archive "
           f"{sum(folded.values())} folded Leaves for {folded_calls} calls")


def case_off(c):
    c.run({"MPITRACE_FOLD_POLLS": "off"})
    check_report(c, c.report())
    enters, stands, folded, _, _ = archive_polls(os.path.join(c.out, "traces.otf2"))
    for rank in range(0, NP, 2):
        own = own_counts(c.work, rank)
        for name in KINDS:
            expect(enters.get((rank, name), 0) == own[name][0],
                   f"rank {rank}: {enters.get((rank, name), 0)} Enters of {name} unfolded, the "
                   f"program made {own[name][0]}")
    expect(not folded, f"Leaves carry poll_calls with folding off: {folded}")
    expect("MPITRACE_FOLD_POLLS=off" in settings_line(c), "the report does not say polls were not "
           "folded")


def rank_pid(rank, program):
    """The pid of the process of `program` whose environment says it is world rank RANK."""
    for pid in subprocess.run(["pgrep", "-f", program], capture_output=True,
                              text=True).stdout.split():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return int(pid)
    return None


def case_killed(c):
    kill_while_polling(c, {}, signal.SIGKILL)


def case_killed_memory(c):
    kill_while_polling(c, {"MPITRACE_BUFFERS": "memory"}, signal.SIGTERM)


def kill_while_polling(c, settings, signum):
    command, env = c.command(settings, "-d", "4000000", "-r", "1")
    program = mpi_launch.start(command, RUN_TIMEOUT, env=mpi_launch.launcher_env(env), cwd=c.work)
    binary = os.path.join(c.build, "tests", "poll_kinds")
    deadline, pid = time.monotonic() + 30, None
    while pid is None and time.monotonic() < deadline:
        pid = rank_pid(0, binary)
        time.sleep(0.05)
    expect(pid is not None, "rank 0 never started")
    time.sleep(2.0)  # MPI_Init done, well inside the first fold of MPI_Test
    os.kill(pid, signum)
    run = mpi_launch.finish(program)
    expect(run.returncode != 0, "mpirun reported success for a killed job", run)
    recovered, _ = recovery.recover(os.path.join(c.build, "tools", "perusetrace"), c.out)
    print(recovered.stdout)
    data = c.report()
    tests = [f for f in data["ranks"][0]["functions"] if f["name"] == "MPI_Test"]
    expect(tests and tests[0]["calls"] > 1000,
           f"rank 0's fold of MPI_Test was not kept: {tests}")
    expect(0 < tests[0]["ns"], "rank 0's folded MPI_Test has no time inside")
    print(f"rank 0: {tests[0]['calls']} MPI_Test calls kept, {tests[0]['ns'] / 1e6:.1f} ms inside")
    # Folds end where the rank lost its core for more than the fold's gap, so the count above
    # holds the closed ones too: the fold open at the kill must be closed at its last poll's
    # exit (a fold not kept ends at its Enter, the rank's last record), with its count (almost
    # always more than one: a fold holds hundreds of polls here, the first alone only between
    # the end of one and its next poll).
    enter, leave, calls = last_poll(os.path.join(c.out, "traces.otf2"), 0, "MPI_Test")
    expect(leave > enter,
           f"rank 0's last MPI_Test (the fold open when it was killed) stands for {calls} "
           f"call(s) from {enter} to {leave}: its count was not kept")
    print(f"rank 0: the fold open at the kill stands for {calls} calls")


def last_poll(anchor, rank, name):
    """The last call of `name` on `rank`: its Enter's and Leave's times and the calls it stands
    for (its Leave's poll_calls, or 1)."""
    import otf2
    last = (0, 0, 0)
    with otf2.reader.open(anchor) as trace:
        for location, event in trace.events:
            if int(location.group.name.split()[-1]) != rank:
                continue
            if getattr(getattr(event, "region", None), "name", None) != name:
                continue
            if isinstance(event, otf2.events.Enter):
                last = (event.time, 0, 0)
            elif isinstance(event, otf2.events.Leave):
                calls = 1
                for attribute, value in (event.attributes or {}).items():
                    if attribute.name == "poll_calls":
                        calls = int(value)
                last = (last[0], event.time, calls)
    return last


CASES = case_result.cases_of(globals())


def main():
    case_result.run_asserting_case(CASES, "perusetrace-polls-", Context)


if __name__ == "__main__":
    main()
