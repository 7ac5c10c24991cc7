#!/usr/bin/python3
"""What a user sees: the launcher, the settings, the output directory.

    cli_test.py --build BUILD_DIR --mpirun MPIRUN CASE
"""
import os
import shutil
import subprocess
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402

ENV = mpi_launch.launcher_env()
# A run still going after this is a hang (the longest, the full-disk case's, takes about 22 s):
# its stacks are printed before meson's 180 s are up.
RUN_TIMEOUT = 75


class Context:
    def __init__(self, build, mpirun, work):
        self.build, self.mpirun, self.work = build, mpirun, work
        self.library = os.path.join(build, "lib", "libperusetrace.so")
        self.scenarios = os.path.join(build, "examples", "scenarios")
        self.launcher = os.path.join(build, "tools", "perusetrace")

    def mpirun_traced(self, env_vars, args, np=2):
        run = mpi_launch.run(mpi_launch.command(self.mpirun, np, env_vars, self.library) + args,
                             timeout=RUN_TIMEOUT, env=ENV, cwd=self.work)
        expect(run.returncode is not None, "the run hung", run)
        return run

    def launch(self, args):
        """`perusetrace ARGS`; `run` starts mpirun."""
        run = mpi_launch.run([self.launcher] + args, timeout=RUN_TIMEOUT, env=ENV, cwd=self.work)
        expect(run.returncode is not None, f"perusetrace {args[0]} hung", run)
        return run


expect = case_result.expect


def case_launcher_rejects_bad_events(c):
    run = c.launch(["run", "--events", "REQ_XFER_BEGNI", "-np", "2", "--", c.scenarios,
                    "late-sender"])
    expect(run.returncode == 2, f"exit {run.returncode}, expected 2", run)
    expect("unknown event 'REQ_XFER_BEGNI'" in run.stderr, "the bad entry is not named", run)
    expect("Did you mean REQ_XFER_BEGIN?" in run.stderr, "no suggestion", run)
    expect("nothing started" in run.stderr, "does not say that no rank started", run)
    expect(not os.path.exists(os.path.join(c.work, "scenarios-trace")), "a trace was written")


def case_launcher_rejects_bad_usage(c):
    for args, words in ((["run", "-np", "2"], "no program"),
                        (["run", "-np", "zero", "--", c.scenarios], "-np needs"),
                        (["run", "--colour", "-np", "2", "--", c.scenarios], "unknown option"),
                        (["run", "-np", "2", "--", "/no/such/program"], "not an executable"),
                        (["frobnicate"], "unknown command"),
                        (["run", "--pvar-read", "often", "-np", "2", "--", c.scenarios],
                         "MPITRACE_PVAR_READ='often'"),
                        (["run", "--cvar", "novalue", "-np", "2", "--", c.scenarios],
                         "MPITRACE_CVARS item 'novalue' is not NAME=VALUE"),
                        (["mpit", "--all"], "mpit: takes --pvars or --cvars"),
                        (["run", "--sampling", "10us", "-np", "2", "--", c.scenarios],
                         "MPITRACE_SAMPLING='10us'"),
                        (["run", "--mode", "profile", "-np", "2", "--", c.scenarios],
                         "MPITRACE_MODE='profile'"),
                        (["run", "--ranks", "3-1", "-np", "2", "--", c.scenarios],
                         "MPITRACE_RANKS='3-1'")):
        run = c.launch(args)
        expect(run.returncode == 2 and words in run.stderr,
               f"perusetrace {' '.join(args)}: exit {run.returncode}, expected 2 and '{words}'",
               run)


def case_launcher_passes_hosts(c):
    """--host, --hostfile and --mpirun-arg reach mpirun with the settings for remote ranks
    (an mpirun that prints its arguments stands in for a cluster's)."""
    hostfile = os.path.join(c.work, "hosts")
    run = c.launch(["run", "--mpirun", "/bin/echo", "--host", "node1:2,node2:2", "--hostfile",
                    hostfile, "--mpirun-arg", "--map-by", "--mpirun-arg=node", "--events", "all",
                    "--pvars", "runtime_spc_*", "--pvar-read", "10ms", "--cvar", "a=1", "--cvar",
                    "b=2", "-np", "4", "--", c.scenarios, "late-sender"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    args = run.stdout.split()
    for seq in (["--host", "node1:2,node2:2"], ["--hostfile", hostfile], ["--map-by", "node"],
                ["-x", "MPITRACE_PERUSE_EVENTS=all"], ["-np", "4"],
                ["-x", "MPITRACE_PVARS=runtime_spc_*"], ["-x", "MPITRACE_PVAR_READ=10ms"],
                ["-x", "MPITRACE_CVARS=a=1,b=2"]):
        expect(any(args[i:i + len(seq)] == seq for i in range(len(args))),
               f"mpirun was not given {seq}", run)
    expect(args[-2:] == [c.scenarios, "late-sender"], "the program is not last", run)
    # The launcher (C++, for users) and mpi_launch.command (for tests and benchmarks) build their
    # mpirun lines apart: they must hand the ranks their settings and the library the same way.
    passed = {args[i + 1] for i in range(len(args) - 1) if args[i] == "-x"}
    helper = mpi_launch.command("mpirun", 4, {"MPITRACE_PERUSE_EVENTS": "all"}, c.library)
    wanted = {helper[i + 1] for i in range(len(helper) - 1) if helper[i] == "-x"}
    wanted -= {f"{k}={v}" for k, v in mpi_launch.RANK_ENV.items()}  # the tests' container fix
    expect(wanted <= passed, f"the launcher does not pass {sorted(wanted - passed)}", run)


def case_launcher_lists_mpit_variables(c):
    """`perusetrace mpit` lists this MPI's PVARs and CVARs with their properties."""
    pvars = c.launch(["mpit", "--pvars"])
    expect(pvars.returncode == 0, f"mpit --pvars: exit {pvars.returncode}", pvars)
    rows = {line.split("\t")[1]: line.split("\t") for line in pvars.stdout.splitlines()
            if line.startswith("pvar\t")}
    expect(rows.get("pml_ob1_posted_recvq_length", [])[2:4] == ["SIZE", "MPI_COMM"],
           "pml_ob1_posted_recvq_length is not listed as SIZE, bound to MPI_COMM", pvars)
    expect(f"# {len(rows)} performance variables" in pvars.stdout, "the count is not said", pvars)
    cvars = c.launch(["mpit", "--cvars"])
    expect(cvars.returncode == 0 and "pvar\t" not in cvars.stdout,
           f"mpit --cvars: exit {cvars.returncode}, or PVARs listed too", cvars)
    expect("cvar\tcoll_tuned_bcast_algorithm\t0\tint\tALL\t" in cvars.stdout,
           "coll_tuned_bcast_algorithm (0, int, scope ALL) is not listed", cvars)


def case_launcher_traces_the_paper_events(c):
    out = os.path.join(c.work, "paper")
    events = "REQ_XFER_BEGIN:REQ_XFER_END:REQ_XFER_CONTINUE:REQ_NOTIFY"
    run = c.launch(["run", "--events", events, "-o", out, "-np", "2", "--", c.scenarios,
                    "long-message", "-n", "100000", "-r", "2"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    trace = trace_checks.load(os.path.join(out, "traces.otf2"))
    seen = {e.name for _, e in trace.of_kind("Peruse")}
    expect(seen == set(events.split(":")) - {"REQ_NOTIFY"} or seen == set(events.split(":")),
           f"Peruse events in the trace: {sorted(seen)}, selected: {events}")
    fragments = [e for e in trace.peruse(1, tag=4) if e.name == "REQ_XFER_CONTINUE"]
    expect(sum(e.attrs["bytes"] for e in fragments) == 2 * 400000,
           f"the receiver's fragments add up to {sum(e.attrs['bytes'] for e in fragments)} "
           "bytes, not the 800000 sent")


def case_output_path_with_spaces(c):
    out = os.path.join(c.work, "my traces", "run one")
    os.makedirs(os.path.dirname(out))
    run = c.launch(["run", "-o", out, "-np", "2", "--", c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    trace = trace_checks.load(os.path.join(out, "traces.otf2"))
    expect(trace.of_kind("MpiSend"), "the trace in a path with spaces holds no message")


def remove_output_during_run(c, name, rounds, appears, then_wait=0.0, watch=False):
    """Runs tests/many_events ROUNDS traced into c.work/NAME (64 KiB buffers, so drains come
    often), removes that directory `then_wait` seconds after NAME/APPEARS shows up, and returns
    the finished run. With `watch`, the program runs until it sees the directory gone and then
    200 000 rounds more (ROUNDS bounds it): the removal lands while the ranks record, however
    fast or slow the machine."""
    out = os.path.join(c.work, name)
    args = mpi_launch.command(c.mpirun, 2, {"MPITRACE_OUTPUT": out,
                                            "MPITRACE_BUFFER_SIZE": "64K"}, c.library)
    program = mpi_launch.start(args + [os.path.join(c.build, "tests", "many_events"), str(rounds)]
                               + ([out] if watch else []),
                               timeout=RUN_TIMEOUT, env=ENV, cwd=c.work)
    # A run hung before APPEARS shows up is ended (with its stacks) by mpi_launch's watchdog.
    while program.poll() is None and not os.path.isdir(os.path.join(out, appears)):
        time.sleep(0.002)
    appeared = os.path.isdir(os.path.join(out, appears))
    time.sleep(then_wait)
    # The journal first: a rank that finds the archive's directory gone then also finds the
    # journal gone, whatever order rmtree would have taken (the messages name what is left).
    shutil.rmtree(os.path.join(out, "journal"), ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    run = mpi_launch.finish(program)
    expect(run.returncode is not None,
           "the run hung" + ("" if appeared else f" before {appears}/ appeared"), run)
    expect(run.returncode == 0, f"the program failed (exit {run.returncode})", run)
    expect(run.stdout.count("peak_kib") == 2, "the ranks did not run to their end", run)
    return run


def case_vanishing_output_directory(c):
    """The output directory is removed while the program runs: 0.3 s after the ranks first wrote
    into it, and the ranks go on recording after that (many_events watches the directory), not
    writing the archive at MPI_Finalize already."""
    run = remove_output_during_run(c, "vanishing", 20_000_000, "journal", then_wait=0.3,
                                   watch=True)
    # A rank that had not opened its journal file yet when the directory went (a loaded machine
    # can delay one) says it cannot create it instead; either way, one message per rank.
    for rank in (0, 1):
        said = [line for line in run.stderr.splitlines() if line.startswith(
            f"perusetrace rank {rank}: ") and ("is gone or no longer writable" in line or
                                                "is not traced" in line)]
        expect(len(said) == 1, f"not one message from rank {rank}", run)
    expect("trace written" not in run.stderr, "a vanished trace was reported as written", run)


def case_directory_removed_at_finalize(c):
    """The output directory is removed while MPI_Finalize writes the archive (OTF2 creates
    traces/ when it opens it): the ranks finish, the user hears that the directory went, not that
    the disk is full, and is not sent to a journal that went with it."""
    run = remove_output_during_run(c, "removed_at_finalize", 300_000, "traces")
    expect("is gone or no longer writable" in run.stderr or
           "was removed while the archive was written" in run.stderr,
           "not told that the output directory went away", run)
    expect("was full" not in run.stderr and "Free space" not in run.stderr,
           "a removed directory was reported as a full disk", run)
    expect("records are kept" not in run.stderr and "which is gone too" in run.stderr,
           "sent to a journal that was removed with the directory", run)
    expect("trace written" not in run.stderr, "a removed trace was reported as written", run)


def case_bad_settings_stop_at_init(c):
    run = c.mpirun_traced({"MPITRACE_PERUSE_EVENTS": "BOGUS", "MPITRACE_BUFFER_SIZE": "huge"},
                          [c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode != 0, "the run went on with bad settings", run)
    expect(run.stderr.count("stops at MPI_Init") == 1, "not told once that the run stops", run)
    expect("unknown event 'BOGUS'" in run.stderr, "the bad event is not named", run)
    expect("MPITRACE_BUFFER_SIZE='huge'" in run.stderr, "the bad size is not named", run)
    expect("done on" not in run.stdout, "the program ran its work anyway", run)


# Garbage for every variable the ranks read: each must be refused before any rank starts, with
# the variable, the value as given and what is allowed. Values are checked by the launcher and
# at MPI_Init by the same code, so the launcher covers the table and a few go through mpirun.
GARBAGE = {
    "MPITRACE_ENABLED": ["", "maybe", "2", " 1", "-1"],
    "MPITRACE_PERUSE_EVENTS": ["", ":", "REQ_XFER_BEGIN:", "REQ XFER BEGIN", "17", "all;none"],
    "MPITRACE_BUFFER_SIZE": ["", "huge", "-8M", "0", "8T", "1e6", "8 M", "99999999999999999999999",
                             "63K", "1025M"],
    "MPITRACE_GROUPS": ["", "p2p,,coll", "p2p;coll", "P2P,nope", "-"],
    "MPITRACE_OUTPUT": [""],
    "MPITRACE_CLOCK": ["", "rdtsc", "tsc ", "0"],
}


def case_garbage_settings_are_refused(c):
    for name, values in GARBAGE.items():
        for value in values:
            run = mpi_launch.run([c.launcher, "run", "-np", "2", "--", c.scenarios, "late-sender"],
                                 timeout=RUN_TIMEOUT, env={**ENV, name: value}, cwd=c.work)
            what = f"{name}={value!r}"
            expect(run.returncode == 2, f"{what}: exit {run.returncode}, expected 2", run)
            expect(name in run.stderr and "nothing started" in run.stderr,
                   f"{what}: the variable is not named", run)
            # An event list is judged entry by entry: the message quotes the bad entry, or
            # says which one is empty.
            quoted = (any(f"'{e}'" in run.stderr for e in value.split(":") if e) or
                      "is empty" in run.stderr) if name == "MPITRACE_PERUSE_EVENTS" else \
                value in run.stderr
            expect(value.strip() == "" or quoted, f"{what}: the value is not quoted", run)
            expect(any(w in run.stderr for w in ("Allowed", "allowed", "Valid", "Unset", "Set ")),
                   f"{what}: does not say what is allowed", run)
            expect("scenarios-trace" not in os.listdir(c.work), f"{what}: a trace was written")
    # The same refusal from inside the ranks, for a value the launcher never saw.
    for name, value in (("MPITRACE_BUFFER_SIZE", "-8M"), ("MPITRACE_GROUPS", "p2p;coll")):
        run = c.mpirun_traced({name: value}, [c.scenarios, "late-sender", "-d", "10"])
        expect(run.returncode != 0 and run.stderr.count("stops at MPI_Init") == 1 and
               name in run.stderr, f"{name}={value!r} under mpirun was not refused once", run)


def case_misspelt_variable_is_named(c):
    out = os.path.join(c.work, "out")
    run = c.mpirun_traced({"MPITRACE_BUFER_SIZE": "4M", "MPITRACE_OUTPUT": out},
                          [c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    expect(run.stderr.count("MPITRACE_BUFER_SIZE is not a perusetrace setting") == 1,
           "the misspelt variable is not named once", run)
    expect("did you mean MPITRACE_BUFFER_SIZE?" in run.stderr, "no suggestion", run)
    expect(os.path.exists(os.path.join(out, "traces.otf2")), "no trace written", run)
    run = mpi_launch.run([c.launcher, "run", "-o", os.path.join(c.work, "o2"), "-np", "1", "--",
                          c.scenarios, "late-sender"], timeout=RUN_TIMEOUT,
                         env={**ENV, "MPITRACE_GRUOPS": "p2p"}, cwd=c.work)
    expect(run.returncode is not None, "the launched run hung", run)
    expect("did you mean MPITRACE_GROUPS?" in run.stderr, "the launcher says nothing", run)


def case_disabled_writes_nothing(c):
    run = c.mpirun_traced({"MPITRACE_ENABLED": "0"}, [c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    expect(not os.path.exists(os.path.join(c.work, "scenarios-trace")), "a trace was written")


def case_groups_switch_regions_off(c):
    out = os.path.join(c.work, "p2p-only")
    run = c.mpirun_traced({"MPITRACE_GROUPS": "p2p", "MPITRACE_OUTPUT": out},
                          [c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    trace = trace_checks.load(os.path.join(out, "traces.otf2"))
    regions = {e.name for events in trace.events.values() for e in events if e.kind == "Enter"}
    expect("MPI_Recv" in regions and "MPI_Send" in regions, f"p2p regions missing: {regions}")
    expect("MPI_Barrier" not in regions and "MPI_Comm_rank" not in regions,
           f"regions of switched-off groups were traced: {sorted(regions)}")
    expect(trace.of_kind("Peruse"), "Peruse events must not depend on the groups")


def case_never_overwrites_a_trace(c):
    out = os.path.join(c.work, "kept")
    os.makedirs(out)
    with open(os.path.join(out, "precious"), "w") as f:
        f.write("an earlier trace")
    run = c.mpirun_traced({"MPITRACE_OUTPUT": out}, [c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    expect(os.listdir(out) == ["precious"], f"{out} was written into: {os.listdir(out)}")
    expect(os.path.exists(os.path.join(out + ".1", "traces.otf2")), "no trace in kept.1", run)
    expect("already exists" in run.stderr, "the user is not told where the trace went", run)


def case_unwritable_output_runs_untraced(c):
    run = c.mpirun_traced({"MPITRACE_OUTPUT": "/nonexistent/dir/trace"},
                          [c.scenarios, "late-sender", "-d", "10"])
    expect(run.returncode == 0, f"the program failed (exit {run.returncode})", run)
    expect("done on" in run.stdout, "the program did not finish its work", run)
    expect(run.stderr.count("does not exist") == 1, "not told once what is wrong", run)
    expect("MPITRACE_OUTPUT" in run.stderr, "the message does not name the fix", run)


def case_full_disk_keeps_the_program_running(c):
    """Root only: a 2 MiB tmpfs fills up while the program runs."""
    tiny = os.path.join(c.work, "tiny")
    os.makedirs(tiny)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", tiny],
                             capture_output=True, text=True)
    expect(mounted.returncode == 0, f"cannot mount a tmpfs (run as root): {mounted.stderr}")
    kept = os.path.join(c.work, "kept")
    try:
        run = c.mpirun_traced({"MPITRACE_OUTPUT": os.path.join(tiny, "trace"),
                               "MPITRACE_BUFFER_SIZE": "64K"},
                              [os.path.join(c.build, "tests", "many_events"), "100000"])
        # What was written before the disk filled, moved where there is room (the user's fix).
        shutil.copytree(os.path.join(tiny, "trace"), kept)
    finally:
        subprocess.run(["umount", tiny])
    expect(run.returncode == 0, f"the program did not survive a full disk (exit "
                                f"{run.returncode})", run)
    expect(run.stdout.count("peak_kib") == 2, "the ranks did not run to their end", run)
    expect(run.stderr.count("No space left on device") == 2, "not one message per rank", run)
    expect("[OTF2]" not in run.stderr, "OTF2's own error messages reached the user", run)
    # Either the archive still fitted at MPI_Finalize (the journal it came from is then gone)
    # or the journal is kept and the user is told to recover it.
    if "trace written incompletely" in run.stderr:
        recovered = run
    else:
        expect("perusetrace recover" in run.stderr, "the user is not told how to get the trace",
               run)
        recovered = c.launch(["recover", kept])
        expect(recovered.returncode == 0, "what was written before the disk filled is lost",
               recovered)
    trace = trace_checks.load(os.path.join(kept, "traces.otf2"))
    entered = sum(1 for events in trace.events.values() for e in events if e.kind == "Enter")
    expect(entered > 100, f"only {entered} regions survived the full disk", recovered)


def case_pml_ucx_says_no_peruse(c):
    """Peruse fires only in pml ob1: under pml ucx (Open MPI 5 built with UCX, set-up's default)
    rank 0 says once that the trace has no Peruse event and how to get them, and the MPI calls
    and messages are all there (the exact-count program, 4 ranks)."""
    version = mpi_launch.open_mpi_version(c.mpirun)
    info = os.path.join(os.path.dirname(os.path.realpath(c.mpirun)), "ompi_info")
    components = subprocess.run([info], capture_output=True, text=True).stdout if \
        os.path.exists(info) else ""
    if version is None or version < (5, 0) or "MCA pml: ucx" not in components:
        print(f"skipped: this Open MPI ({version}) has no pml ucx (set-up builds 5.0.9 with it)")
        sys.exit(77)
    out = os.path.join(c.work, "ucx")
    # UCX keeps itself to InfiniBand-class devices unless told that any transport will do.
    run = c.launch(["run", "--events", "all", "--mca", "pml", "ucx", "--mca", "pml_ucx_tls",
                    "any", "--mca", "pml_ucx_devices", "any", "--mpirun-arg=--oversubscribe",
                    "-o", out, "-np", "4", "--",
                    os.path.join(c.build, "tests", "known_counts")])
    expect(run.returncode == 0, f"exit {run.returncode}", run)
    said = [line for line in run.stderr.splitlines() if "selected pml ucx" in line]
    expect(len(said) == 1 and "--mca pml ob1" in said[0],
           f"rank 0 does not say once that pml ucx has no Peruse: {said}", run)
    trace = trace_checks.load(os.path.join(out, "traces.otf2"))
    peruse = sum(1 for _, e in trace.of_kind("Peruse"))
    expect(peruse == 0, f"{peruse} Peruse events under pml ucx")
    problems = trace_checks.known_counts_pmpi(trace, run)
    expect(not problems, f"the MPI calls and messages under pml ucx: {problems}", run)


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    case_result.run_asserting_case(CASES, "perusetrace-cli-", Context)


if __name__ == "__main__":
    main()
