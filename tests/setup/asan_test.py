#!/usr/bin/python3
"""AddressSanitizer and UndefinedBehaviorSanitizer on perusetrace's runtime: the library and
the traced test programs built with -fsanitize=address,undefined in a build directory of their
own (build/asan), then a share of the trace suite's checks run with them under the Peruse Open
MPI (not instrumented). Any sanitizer report stops the rank (halt_on_error), which fails its
check. Leak checking is off: Open MPI does not free everything at MPI_Finalize.

    asan_test.py SOURCE_DIR BUILD_ROOT MPI_PREFIX
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import mpi_launch  # noqa: E402
import sanitized_build  # noqa: E402
LIBASAN = "/usr/lib/x86_64-linux-gnu/libasan.so.8"
OPTIONS = ["ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0",
           "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"]
TARGETS = ["lib/libperusetrace.so", "examples/scenarios", "tests/ring", "tests/known_counts",
           "tests/comm_threads", "tests/file_io", "tests/rma"]
# run_traced.py prints the stacks of its MPI run if that hangs (after 75 s); this catches a
# check hung anywhere else, with the stacks of all its processes.
CHECK_TIMEOUT = 240


def main():
    source, build_root, prefix = sys.argv[1:4]
    if not os.path.exists(LIBASAN):
        sys.exit(f"{LIBASAN} is missing: apt-get install libasan8 (it comes with gcc)")
    build = sanitized_build.build(source, build_root, "asan", prefix, "address,undefined",
                                  TARGETS, ["-Db_lundef=false"])
    library = os.path.join(build, "lib", "libperusetrace.so")
    env = []
    for option in OPTIONS:
        env += ["--env", option]
    # The sanitizers' runtime first, as the programs (instrumented) expect it.
    common = [sys.executable, os.path.join(HERE, "..", "common", "run_traced.py"), "--mpirun",
              os.path.join(prefix, "bin", "mpirun"), "--preload", f"{LIBASAN}:{library}"] + env
    all_events = ["--env", "MPITRACE_PERUSE_EVENTS=all"]
    program = lambda name: os.path.join(build, name)  # noqa: E731
    checks = {
        "late sender": all_events + ["--check", "late_sender", "-np", "2", "--",
                                     program("examples/scenarios"), "late-sender", "-d", "50"],
        "exact counts": ["--check", "known_counts", "-np", "4", "--",
                         program("tests/known_counts")],
        "ring of 4": all_events + ["--check", "ring", "-np", "4", "--", program("tests/ring")],
        "8 threads and communicators": all_events + [
            "--check", "comm_threads", "-np", "2", "--", program("tests/comm_threads"), "8", "3",
            "10"],
        "MPI-IO": ["--check", "file_io", "-np", "2", "--", program("tests/file_io")],
        "one-sided": ["--check", "rma", "-np", "4", "--", program("tests/rma")],
    }
    failed = [name for name, args in checks.items() if not passes(name, common + args)]
    if failed:
        sys.exit(f"sanitizer reports or failures in: {', '.join(failed)} (output above)")
    print("AddressSanitizer and UndefinedBehaviorSanitizer: nothing reported")


def passes(name, command):
    done = mpi_launch.run(command, timeout=CHECK_TIMEOUT)
    print(f"{name}: {'passed' if done.returncode == 0 else 'FAILED'}")
    if done.returncode != 0:
        # All of it when a run hung: the stacks come first.
        stdout = done.stdout if "HANG: " in done.stdout else done.stdout[-3000:]
        print(f"{stdout}\n{done.stderr[-3000:]}", file=sys.stderr)
    return done.returncode == 0


if __name__ == "__main__":
    main()
