#!/usr/bin/python3
"""A traced program dies before MPI_Finalize; its trace must survive.

    crash_test.py --build BUILD_DIR --mpirun MPIRUN CASE

Every case runs tests/apps/dies.c on 2 ranks with a small buffer (many flushes during the run),
then checks: the program's own failure is what the user gets (no hang, no tracer crash), the
journal is there, `perusetrace report` points to `perusetrace recover`, recover says how each
rank ended, and the recovered archive reads back with otf2-print and python3-otf2 holding every
message the ranks exchanged before the end (all of them where a handler could save the buffer,
those up to the last flush for SIGKILL).
"""
import os
import signal
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import recovery  # noqa: E402
import trace_checks  # noqa: E402

MESSAGES = 3000
BUFFER = "64K"  # 1365 records: the journal is written to about 30 times per rank
# A run still going after this is a hang, not the death it waits for: its stacks are printed
# before meson's 180 s are up.
RUN_TIMEOUT = 90


expect = case_result.expect


def run_dying(c, mode, kill=None):
    out = os.path.join(c.work, mode)
    args = mpi_launch.command(c.mpirun, 2, {"MPITRACE_OUTPUT": out, "MPITRACE_BUFFER_SIZE": BUFFER},
                              c.library) + [os.path.join(c.build, "tests", "dies"), mode,
                                            str(MESSAGES)]
    program = mpi_launch.start(args, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(),
                               cwd=c.work)
    if kill is not None:  # rank 1 says its pid once the messages are exchanged
        for line in program.stdout:  # (ends early if the run hangs: the watchdog kills it)
            if line.startswith("pid "):
                os.kill(int(line.split()[1]), kill)
                break
    return out, mpi_launch.finish(program)


def launcher(c, *args):
    return subprocess.run([os.path.join(c.build, "tools", "perusetrace")] + list(args),
                          capture_output=True, text=True, timeout=300)


def run_to_death(c, out, np, program, ranks=None, job="ranks that never finalized"):
    """PROGRAM on NP ranks traced into OUT (RANKS for every rank too), which must end, not hang,
    and fail: the run."""
    args = mpi_launch.command(c.mpirun, np, dict(ranks or {}, MPITRACE_OUTPUT=out), c.library)
    run = mpi_launch.run(args + program, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(),
                         cwd=c.work)
    expect(run.returncode is not None, "the run hung instead of ending", run)
    expect(run.returncode != 0, f"mpirun reported success for {job}", run)
    return run


def recover(c, out):
    """`perusetrace recover OUT` (tests/common/recovery.py): (recover's run, the archive)."""
    return recovery.recover(os.path.join(c.build, "tools", "perusetrace"), out)


def expect_check(check_name, anchor, run):
    """The recovered archive passes trace_checks' check CHECK_NAME, as a live one would."""
    failures = trace_checks.CHECKS[check_name](trace_checks.load(anchor), run)
    expect(not failures, f"the recovered archive fails the {check_name} check:\n  " +
           "\n  ".join(failures[:10]))


def expect_readable(c, anchor, out):
    """report and prv read the recovered archive."""
    for tool in (["report", anchor], ["prv", anchor, "-q", "-o", os.path.join(out, "paraver")]):
        done = launcher(c, *tool)
        expect(done.returncode == 0, f"{tool[0]} cannot read the recovered archive", done)


def check(c, mode, ended, kill=None, exact=(True, True)):
    out, run = run_dying(c, mode, kill)
    expect(run.returncode is not None, "the run hung instead of dying", run)
    expect(run.returncode != 0, "mpirun reported success for a job that died", run)
    expect(os.path.isdir(os.path.join(out, "journal")), "no journal was left behind", run)
    expect(not os.path.exists(os.path.join(out, "traces.otf2")), "an archive appeared by itself")

    report = launcher(c, "report", os.path.join(out, "traces.otf2"))
    expect(report.returncode > 0,
           f"report on an unrecovered trace: exit {report.returncode}", report)
    expect("perusetrace recover" in report.stderr, "report does not point to recover", report)

    recovered = launcher(c, "recover", out)
    expect(recovered.returncode == 0, f"recover failed (exit {recovered.returncode})", recovered)
    for rank, how in enumerate(ended):
        expect(f"rank {rank}: {how}" in recovered.stdout, f"rank {rank} not said to have {how}",
               recovered)
    again = launcher(c, "recover", out)
    expect(again.returncode == 1 and "nothing to recover" in again.stderr,
           "a second recover did not say the archive is complete", again)

    anchor = os.path.join(out, "traces.otf2")
    printed = subprocess.run(["otf2-print", anchor], capture_output=True, text=True)
    expect(printed.returncode == 0 and "error" not in printed.stderr.lower()
           and "warning" not in printed.stderr.lower(),
           f"otf2-print rejects the recovered archive: {printed.stderr[:2000]}")
    trace = trace_checks.load(anchor)
    for rank in (0, 1):
        events = trace.rank_events(rank)
        sends = sum(1 for e in events if e.kind == "MpiSend")
        depth = 0
        for e in events:  # every region closed: a well-formed archive
            depth += 1 if e.kind == "Enter" else -1 if e.kind == "Leave" else 0
            expect(depth >= 0, f"rank {rank}: a Leave without its Enter")
        expect(depth == 0, f"rank {rank}: {depth} regions left open")
        if exact[rank]:
            expect(sends == MESSAGES, f"rank {rank}: {sends} of {MESSAGES} sends recovered")
        else:
            expect(0 < sends <= MESSAGES, f"rank {rank}: {sends} sends recovered")
            print(f"rank {rank}: {sends} of {MESSAGES} sends kept (killed with SIGKILL)")
    expect_readable(c, anchor, out)
    print(recovered.stdout)


def check_comm_threads(c):
    """8 threads per rank creating and freeing communicators while they send, then exit()
    without MPI_Finalize: the journal's communicators (with their parents) and messages make
    the same archive the in-memory path does, held to the same ground truth."""
    out = os.path.join(c.work, "comm-threads")
    run = run_to_death(c, out, 2, [os.path.join(c.build, "tests", "comm_threads"), "8", "6", "20",
                                   "exit"],
                       {"MPITRACE_BUFFER_SIZE": BUFFER, "MPITRACE_PERUSE_EVENTS": "all"})
    recovered, anchor = recover(c, out)
    for rank in (0, 1):
        expect(f"rank {rank}: exit() without MPI_Finalize" in recovered.stdout,
               f"rank {rank} not said to have exited without MPI_Finalize", recovered)
    expect_check("comm_threads", anchor, run)
    print(recovered.stdout)


def check_rma_epoch(c):
    """tests/apps/rma.c die-in-epoch: rank 1 calls abort() inside a passive-target epoch (its
    MPI_Win_lock and MPI_Put recorded, no MPI_Win_unlock). The journal's windows, names and RMA
    records make an archive otf2-print reads without a word, holding the windows created so
    far and rank 1's open epoch as it was."""
    import rma_checks
    out = os.path.join(c.work, "rma")
    run_to_death(c, out, 4, [os.path.join(c.build, "tests", "rma"), "die-in-epoch"],
                 job="a job that died")
    recovered, anchor = recover(c, out)
    expect("rank 1: killed by signal 6 (Aborted)" in recovered.stdout,
           "rank 1 not said to have aborted", recovered)
    trace = trace_checks.load(anchor)
    wins = [(w.name, w.comm.name) for w in trace.rma_wins]
    expect(wins == rma_checks.WINDOWS[:2], f"windows {wins}, expected {rma_checks.WINDOWS[:2]}")
    rma = [e for e in trace.rank_events(1) if e.kind.startswith("Rma")]
    last = [(e.kind, e.raw.win.name, e.raw.remote) for e in rma[-2:]]
    expect(last == [("RmaRequestLock", rma_checks.ALLOC, 2), ("RmaPut", rma_checks.ALLOC, 2)],
           f"rank 1's last RMA events {last}: not the open epoch's lock and put")
    put = rma[-1].raw
    expect(put.bytes == 8, f"the open epoch's MPI_Put carries {put.bytes} bytes, not 8")
    fenced = [e for e in rma if e.kind == "RmaOpCompleteRemote" and e.raw.win.name == "halo window"]
    expect(len(fenced) == 4, f"rank 1: {len(fenced)} remote completions in the fences, not 4")
    expect_readable(c, anchor, out)
    print(recovered.stdout)


def check_file_io_exit(c):
    """tests/apps/file_io.c exit on 4 ranks: each rank writes file_io.dat five ways (opened on a
    communicator it named "io") and syncs it, then exits with the file open, without
    MPI_Finalize. The journal's files, communicator names and I/O records make an archive that
    holds exactly what each rank's tally says: the handle created with its size, never
    destroyed, on "io"."""
    out = os.path.join(c.work, "file-io")
    run = run_to_death(c, out, 4, [os.path.join(c.build, "tests", "file_io"), "exit"],
                       {"MPITRACE_BUFFER_SIZE": BUFFER})
    expect(run.stdout.count("\nio ") + run.stdout.startswith("io ") == 4,
           "not every rank printed its tally", run)
    recovered, anchor = recover(c, out)
    # The first rank out of the last barrier exits; mpirun may then end one still leaving it,
    # with SIGTERM or, past its grace period, SIGKILL (Open MPI 5's prterun): its records are
    # all kept either way (expect_check below holds them to the tallies).
    for rank in range(4):
        expect(f"rank {rank}: exit() without MPI_Finalize" in recovered.stdout or
               f"rank {rank}: {KILLED}" in recovered.stdout or
               f"rank {rank}: {SILENT}" in recovered.stdout,
               f"rank {rank} not said to have exited without MPI_Finalize", recovered)
    expect_check("file_io", anchor, run)
    expect_readable(c, anchor, out)
    print(recovered.stdout)


KILLED = "killed by signal 15 (Terminated)"  # what mpirun does to the ranks left
SILENT = "no word from the rank (killed with SIGKILL, or its node failed): kept every record"
CASES = {
    "mpi_abort": lambda c: check(c, "mpi-abort", [KILLED, "MPI_Abort with error code 3"]),
    "abort": lambda c: check(c, "abort", [KILLED, "killed by signal 6 (Aborted)"]),
    "segfault": lambda c: check(c, "segv", [KILLED, "killed by signal 11 (Segmentation fault)"]),
    "exit_without_finalize": lambda c: check(c, "exit", ["exit() without MPI_Finalize"] * 2),
    "sigterm": lambda c: check(c, "wait", [KILLED, KILLED], kill=signal.SIGTERM),
    # The killed rank's buffer is a file the kernel keeps: every message it sent is there.
    "sigkill": lambda c: check(c, "wait", [KILLED, "no word from the rank (killed with SIGKILL, "
                                           "or its node failed): kept every record it committed"],
                               kill=signal.SIGKILL),
    "comm_threads_exit": check_comm_threads,
    "rma_abort_in_epoch": check_rma_epoch,
    "file_io_exit": check_file_io_exit,
}


class Context:
    def __init__(self, build, mpirun, work):
        self.build, self.mpirun, self.work = build, mpirun, work
        self.library = os.path.join(build, "lib", "libperusetrace.so")


def main():
    case_result.run_asserting_case(CASES, "perusetrace-crash-", Context)


if __name__ == "__main__":
    main()
