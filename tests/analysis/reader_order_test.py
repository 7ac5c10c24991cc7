#!/usr/bin/python3
"""The archive reader hands every event over in one order, whatever the number of threads that
decode the archive: a 4-rank trace with 3 exchanging threads per rank and requests handed between
threads (tests/apps/threads_mixed.c, every Peruse event, samples) is read with one thread and
with 2, 3, 4, 8 and the default, into a plain sink and into a PipelinedSink (which the reader
fills itself), and every callback with all its arguments (tests/common/reader_dump.cpp) must be the
same. The single thread's sequence is checked on its own too: times never go back, of equal
times the smaller OTF2 location id comes first (OTF2's global event reader's order), exact
message counts, and the datatypes of an MPI_Iallreduce and an MPI_File_iwrite_at started on one
thread and completed on another reach their completion. Then a trace whose one location holds
every event (bench/stream, one rank, several chunks of events), which threads read chunk by
chunk in turn: again the same sequence with 1, 2 and 3 threads.

    reader_order_test.py --mpirun MPIRUN --preload LIB --dump READER_DUMP --app THREADS_MIXED
                         --stream STREAM
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402

RANKS, THREADS, ROUNDS = 4, 3, 300
STREAM_RECORDS = 300000  # about 730 000 events, 13 MiB: 13 chunks of OTF2's 1 MiB
COLLECTIVE_SEND, FILE_WRITE = 2, 5  # archive::DatatypeUse
# A run still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 100


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def dump(opts, anchor, threads, pipelined):
    cmd = [opts.dump, anchor, str(threads)] + (["--pipelined"] if pipelined else [])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} exit {done.returncode}: {done.stderr[-800:]}")
    used = int(done.stderr.split("threads", 1)[1].split()[0])
    return done.stdout.splitlines(), used


def check_single(lines):
    """The one-thread sequence on its own terms; returns the number of events."""
    ids, ranks, events = {}, {}, []
    for line in lines:
        f = line.split()
        if f[0] == "location":
            ids[int(f[1])], ranks[int(f[1])] = int(f[2]), int(f[3])
        else:
            events.append((int(f[0]), int(f[1]), f[2], f[3:]))
    if len(ranks) < RANKS * (THREADS + 1) or set(ranks.values()) != set(range(RANKS)):
        fail(f"expected at least {THREADS + 1} locations on each of {RANKS} ranks: {ranks}")
    ties = 0
    for (t0, l0, _, _), (t1, l1, _, _) in zip(events, events[1:]):
        if t1 < t0:
            fail(f"time goes back: {t0} on location {l0}, then {t1} on location {l1}")
        if t1 == t0 and l1 != l0:
            ties += 1
            if ids[l1] < ids[l0]:
                fail(f"at {t0}, location id {ids[l0]} before the smaller {ids[l1]}")
    kinds = {}
    for _, _, kind, _ in events:
        kinds[kind] = kinds.get(kind, 0) + 1
    messages = RANKS * THREADS * ROUNDS * 2  # blocking and nonblocking, each way
    for kind in ("send", "recv"):
        if kinds.get(kind) != messages:
            fail(f"{kinds.get(kind)} {kind} callbacks, the program made {messages}")
    for kind in ("peruse", "sample", "rma", "collective_request", "io_begin", "io_complete"):
        if not kinds.get(kind):
            fail(f"no {kind} callback: the trace does not cover what the test is about")
    # Requests started on one thread and completed on another: the datatypes reach the completion.
    started = {}
    crossed = {COLLECTIVE_SEND: set(), FILE_WRITE: set()}
    for i, (t, loc, kind, args) in enumerate(events):
        if kind == "collective_request":
            started[(ranks[loc], int(args[0]))] = loc
        elif kind == "io_begin":
            started[(ranks[loc], "io", int(args[4]))] = loc
        elif kind == "datatype_use" and int(args[1]) in crossed:
            # The completion is the callback just before (a collective's send datatype comes
            # first of its two).
            key = None
            for back in range(1, 3):
                _, bloc, bkind, bargs = events[i - back]
                if bkind == "collective" and int(bargs[4]) != 0:
                    key = (ranks[bloc], int(bargs[4]))
                    break
                if bkind == "io_complete":
                    key = (ranks[bloc], "io", int(bargs[2]))
                    break
            if key is not None and key in started and started[key] != loc:
                crossed[int(args[1])].add(ranks[loc])
    for use, name in ((COLLECTIVE_SEND, "MPI_Iallreduce's send"), (FILE_WRITE, "the file write's")):
        if crossed[use] != set(range(RANKS)):
            fail(f"{name} datatype reached its completion on another thread on ranks "
                 f"{sorted(crossed[use])}, not on all {RANKS}")
    print(f"{len(events)} events on {len(ranks)} locations in order; {ties} equal times across "
          f"locations, ordered by location id")
    return len(events)


def compare(opts, anchor, reference, cases):
    for threads, pipelined in cases:
        lines, used = dump(opts, anchor, threads, pipelined)
        if used < 2:
            fail(f"asked for {threads} reading threads, the reader used {used}")
        if lines != reference:
            at = next((i for i, (a, b) in enumerate(zip(lines, reference)) if a != b),
                      min(len(lines), len(reference)))
            fail(f"{used} threads{' into a PipelinedSink' if pipelined else ''}: callback "
                 f"{at} differs from one thread's: {lines[at] if at < len(lines) else 'end'!r}"
                 f" against {reference[at] if at < len(reference) else 'end'!r}")
        print(f"{used} reading threads{', pipelined' if pipelined else ''}: the same "
              f"{len(lines)} lines")


def one_location(opts, work):
    out = os.path.join(work, "stream")
    cmd = mpi_launch.command(opts.mpirun, 1, {"MPITRACE_OUTPUT": out}) + [
        opts.stream, str(STREAM_RECORDS)]
    run = mpi_launch.run(cmd, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env())
    if run.returncode != 0:
        fail(f"bench/stream failed ({run.returncode}): {run.stderr[-1500:]}")
    events = [f for f in os.listdir(os.path.join(out, "traces")) if f.endswith(".evt")]
    chunks = os.path.getsize(os.path.join(out, "traces", events[0])) // 2**20 + 1
    if len(events) != 1 or chunks < 3:
        fail(f"the stream's trace has {len(events)} event files and {chunks} chunks, the test "
             "needs one location with at least 3")
    anchor = os.path.join(out, "traces.otf2")
    reference, used = dump(opts, anchor, 1, False)
    if used != 1:
        fail(f"asked for one reading thread, the reader used {used}")
    times = [int(line.split()[0]) for line in reference if not line.startswith("location")]
    if len(times) < STREAM_RECORDS or any(b < a for a, b in zip(times, times[1:])):
        fail(f"the stream's {len(times)} callbacks are fewer than its records or go back in time")
    print(f"one location in {chunks} chunks: {len(times)} callbacks")
    compare(opts, anchor, reference, ((2, False), (3, True)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--preload", required=True)
    parser.add_argument("--dump", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--stream", required=True)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perusetrace-reader-order-") as work:
        out = os.path.join(work, "trace")
        # osc sm: Open MPI's pt2pt one-sided component refuses MPI_THREAD_MULTIPLE.
        env = {"MPITRACE_OUTPUT": out, "MPITRACE_PERUSE_EVENTS": "all",
               "MPITRACE_SAMPLING": "1ms", "OMPI_MCA_osc": "sm"}
        cmd = mpi_launch.command(opts.mpirun, RANKS, env, opts.preload) + [
            opts.app, os.path.join(work, "written.dat"), str(THREADS), str(ROUNDS)]
        run = mpi_launch.run(cmd, timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env())
        if run.returncode != 0:
            fail(f"threads_mixed failed ({run.returncode}): {run.stderr[-1500:]}")
        anchor = os.path.join(out, "traces.otf2")
        reference, used = dump(opts, anchor, 1, False)
        if used != 1:
            fail(f"asked for one reading thread, the reader used {used}")
        check_single(reference)
        compare(opts, anchor, reference, ((2, False), (3, True), (4, False), (8, True),
                                          (0, False)))
        one_location(opts, work)
    print("every number of reading threads gives the same sequence")


if __name__ == "__main__":
    main()
