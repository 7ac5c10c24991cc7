#!/usr/bin/python3
"""ThreadSanitizer on perusetrace's own code: the library built with -fsanitize=thread in a
build directory of its own, preloaded into the 8-thread communicator test and the 8-thread
annotation test (also instrumented) under the Peruse Open MPI, which is not instrumented; and
the archive reader's decoding threads, merge and pipeline (tests/reader_dump, instrumented)
reading the communicator test's archive with 4 threads, whose every callback must equal a
one-thread read's. Open MPI's internals race as far as TSan
can tell (it cannot see their atomics), so a report counts against us only when one of its
racing accesses, or a lock it names, is in libperusetrace.

    tsan_test.py SOURCE_DIR BUILD_ROOT MPI_PREFIX [RUNS]
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402
import sanitized_build  # noqa: E402

LIBTSAN = "/usr/lib/x86_64-linux-gnu/libtsan.so.2"
# A run still going after this is a hang: its stacks are printed before meson's 900 s are up
# (after the build and the other runs).
RUN_TIMEOUT = 150
ACCESS = re.compile(r"^  (Read|Write|Atomic read|Atomic write|Previous read|Previous write|"
                    r"Previous atomic read|Previous atomic write|Mutex) .*$")


# What Open MPI 5 needs to run under ThreadSanitizer at all. Its PMIx maps its shared-memory data
# store (gds shmem2) at a fixed address that TSan's memory layout takes: MPI_Init fails; PMIx's
# hash store has no such need. Built with UCX, libmpi carries UCX's memory-event hooks, and both
# Open MPI's patcher and UCX's own relocation hooks intercept madvise; glibc calls it on a
# thread's stack after the thread has ended, when TSan's state for it is gone: a segfault. Both
# hooks only serve RDMA registration caches, which shared memory and TCP do not use.
MPI_UNDER_TSAN = {"PMIX_MCA_gds": "hash", "OMPI_MCA_memory": "^patcher",
                  "UCX_MEM_MMAP_HOOK_MODE": "none"}

def first_frame_ours(lines, start):
    """Whether the first frame after line `start` outside TSan's runtime is in perusetrace."""
    for line in lines[start + 1:start + 12]:
        if not line.strip().startswith("#"):
            return False
        if "libtsan.so" not in line:
            return "libperusetrace.so" in line
    return False


def own_reports(stderr):
    """The reports with a racing access, or a lock taken, in perusetrace's own code (the first
    frame outside TSan's runtime after the access or after pthread_mutex_lock)."""
    own, total = [], 0
    for report in stderr.split("==================\n"):
        if "WARNING: ThreadSanitizer" not in report:
            continue
        total += 1
        lines = report.splitlines()
        starts = [i for i, l in enumerate(lines) if ACCESS.match(l)]
        starts += [i - 1 for i, l in enumerate(lines) if "#0 pthread_mutex_lock" in l]
        if any(first_frame_ours(lines, i) for i in starts):
            own.append(report)
    return own, total


def read_in_threads(build, archive):
    """Failures of the instrumented reader_dump on `archive`: a TSan report (all its code is
    ours or OTF2's, each thread with a reader of its own), or a 4-thread read, plain or into a
    PipelinedSink, whose callbacks differ from one thread's."""
    failures, lines = [], {}
    env = dict(os.environ, TSAN_OPTIONS="exitcode=0 history_size=4")
    for threads, pipelined in ((1, False), (4, False), (4, True)):
        cmd = [os.path.join(build, "tests", "reader_dump"), archive, str(threads)]
        done = subprocess.run(cmd + (["--pipelined"] if pipelined else []), env=env,
                              capture_output=True, text=True, timeout=600)
        what = f"reader_dump with {threads} threads{', pipelined' if pipelined else ''}"
        reports = done.stderr.count("WARNING: ThreadSanitizer")
        print(f"{what}: {reports} ThreadSanitizer reports, {len(done.stdout.splitlines())} lines")
        if done.returncode != 0:
            failures.append(f"{what} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        elif reports:
            failures.append(f"{what}: a race in the archive reader:\n{done.stderr[:4000]}")
        lines[(threads, pipelined)] = done.stdout
    if len(set(lines.values())) != 1:
        failures.append("reader_dump's callbacks differ between 1 and 4 threads under TSan")
    return failures


def main():
    source, build_root, prefix = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    if not os.path.exists(LIBTSAN):
        sys.exit(f"{LIBTSAN} is missing: apt-get install libtsan2 (scripts/setup does)")
    build = sanitized_build.build(source, build_root, "tsan", prefix, "thread",
                                  ["lib/libperusetrace.so", "tests/comm_threads",
                                   "tests/annotated_threads", "tests/reader_dump"])
    library = os.path.join(build, "lib", "libperusetrace.so")
    failures = []
    with tempfile.TemporaryDirectory(prefix="perusetrace-tsan-") as work:
        for run in range(runs):
            out = os.path.join(work, f"trace-{run}")
            # MPI_T too: every thread reads the PVARs at its calls while others create and free
            # the communicators whose handles those reads walk.
            env = {"MPITRACE_PERUSE_EVENTS": "all", "MPITRACE_OUTPUT": out,
                   "MPITRACE_PVARS": "runtime_spc_*,pml_ob1_*", "OMPI_MCA_mpi_spc_attach": "all",
                   # and the sampler at 10 kHz on every thread
                   "MPITRACE_SAMPLING": "100us",
                   "TSAN_OPTIONS": "exitcode=0 report_signal_unsafe=0 history_size=4",
                   **MPI_UNDER_TSAN}
            cmd = mpi_launch.command(os.path.join(prefix, "bin", "mpirun"), 2, env,
                                     f"{LIBTSAN}:{library}")
            done = mpi_launch.run(cmd + [os.path.join(build, "tests", "comm_threads"), "8", "6",
                                         "20"], timeout=RUN_TIMEOUT,
                                  env=mpi_launch.launcher_env())
            own, total = own_reports(done.stderr)
            print(f"run {run + 1}: {total} ThreadSanitizer reports, {len(own)} in perusetrace")
            if done.returncode != 0 or "expect messages" not in done.stdout:
                failures.append(f"run {run + 1}: the program failed (exit {done.returncode}):\n"
                                f"{done.stderr[-2000:]}")
            archive = os.path.join(out, "traces.otf2")
            if not os.path.exists(archive):
                failures.append(f"run {run + 1}: no trace written")
            else:
                defs = subprocess.run(["otf2-print", "-G", archive], capture_output=True,
                                      text=True).stdout
                if "CALLING_CONTEXT " not in defs:
                    failures.append(f"run {run + 1}: no samples were recorded")
                if "MPI_T pml_ob1_posted_recvq_length (comm " not in defs:
                    failures.append(f"run {run + 1}: no PVAR of a thread's communicator was "
                                    "recorded: the reads were not exercised")
            for report in own[:3]:
                failures.append(f"run {run + 1}: a race in perusetrace:\n{report}")
            if run == 0 and os.path.exists(archive):
                failures += read_in_threads(build, archive)
        # Annotations from 8 threads at once: the first uses of each pair (the registry's lock)
        # race with the other threads' cache hits, next to a process-scope value.
        env = {"MPITRACE_OUTPUT": os.path.join(work, "annotated"),
               "TSAN_OPTIONS": "exitcode=0 report_signal_unsafe=0 history_size=4",
               **MPI_UNDER_TSAN}
        cmd = mpi_launch.command(os.path.join(prefix, "bin", "mpirun"), 2, env,
                                 f"{LIBTSAN}:{library}")
        done = mpi_launch.run(cmd + [os.path.join(build, "tests", "annotated_threads"), "8"],
                              timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env())
        own, total = own_reports(done.stderr)
        print(f"annotated threads: {total} ThreadSanitizer reports, {len(own)} in perusetrace")
        if done.returncode != 0 or "annotated_threads: done" not in done.stdout:
            failures.append(f"annotated threads: the program failed (exit {done.returncode}):\n"
                            f"{done.stderr[-2000:]}")
        for report in own[:3]:
            failures.append(f"annotated threads: a race in perusetrace:\n{report}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print("ThreadSanitizer: nothing in perusetrace's own code")


if __name__ == "__main__":
    main()
