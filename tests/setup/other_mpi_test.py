#!/usr/bin/python3
"""perusetrace under an MPI without Peruse: build it against that MPI in a build directory of
its own (PMPI-only, -Dperuse=disabled), run the exact-count program traced, check the trace.
Then MPI_T on that MPI: every PVAR selected (MPITRACE_PVARS=all) on 4 ranks of mpit_counts. The
run must finish and write its trace with the MPI's CVARs; Debian's Open MPI lists mtl_psm2_*
PVARs that kill a process reading them: they are said once and skipped, the others recorded;
MPICH has no PVARs: said once.

    other_mpi_test.py SOURCE_DIR BUILD_ROOT openmpi|mpich
"""
import os
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402

# run_traced.py prints the stacks of its MPI run if that hangs (after 75 s); this catches it
# hung anywhere else. Each run still going after its timeout is a hang: its stacks are printed
# before meson's 600 s are up (the build first takes a share of them).
TRACED_TIMEOUT = 240
RUN_TIMEOUT = 120
FLAVOURS = {  # Debian's stock MPIs: the compiler wrapper, the launcher, its option style
    "openmpi": ("/usr/bin/mpicc.openmpi", "/usr/bin/mpirun.openmpi", "openmpi"),
    "mpich": ("/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.hydra", "mpich"),
}


def main():
    source, build_root, flavour = sys.argv[1:4]
    mpicc, mpirun, style = FLAVOURS[flavour]
    for program in (mpicc, mpirun):
        if not os.access(program, os.X_OK):
            sys.exit(f"{program} is missing: apt-get install openmpi-bin libopenmpi-dev "
                     "libmpich-dev mpich (scripts/setup does)")
    build = os.path.join(build_root, "other-mpi", flavour)
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, source, f"-Dmpicc={mpicc}", f"-Dmpirun={mpirun}",
                        "-Dperuse=disabled", "-Dwerror=true"], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build, "lib/libperusetrace.so", "tests/known_counts",
                    "tests/trace_counts", "tests/mpit_counts"], check=True,
                   stdout=subprocess.DEVNULL)
    run = mpi_launch.run(
        ["/usr/bin/python3", os.path.join(source, "tests", "common", "run_traced.py"), "--mpirun", mpirun,
         "--style", style, "--preload", os.path.join(build, "lib", "libperusetrace.so"),
         "--env", "MPITRACE_PERUSE_EVENTS=all", "--check", "known_counts_pmpi_only", "-np", "4",
         "--", os.path.join(build, "tests", "known_counts")], timeout=TRACED_TIMEOUT)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode is None:
        sys.exit("run_traced.py hung (stacks above)")
    if run.returncode != 0:
        sys.exit(run.returncode)
    sys.exit(check_mpit(build, mpirun, style, flavour))


def check_mpit(build, mpirun, style, flavour):
    import trace_checks
    with tempfile.TemporaryDirectory(prefix="perusetrace-other-mpit-") as work:
        out = os.path.join(work, "trace")
        env = {"MPITRACE_OUTPUT": out, "MPITRACE_PVARS": "all"}
        command = mpi_launch.command(mpirun, 4, env, os.path.join(build, "lib",
                                     "libperusetrace.so"), style=style)
        run = mpi_launch.run(command + [os.path.join(build, "tests", "mpit_counts")],
                             timeout=RUN_TIMEOUT, env=mpi_launch.launcher_env(env))
        failures = []
        archive = os.path.join(out, "traces.otf2")
        if run.returncode != 0 or not os.path.exists(archive):
            return f"MPITRACE_PVARS=all under {flavour}: exit {run.returncode}: {run.stderr[-1500:]}"
        trace = trace_checks.load(archive)
        if "=" not in trace.properties.get("PERUSETRACE::MPI_T_CVARS", ""):
            failures.append("the archive holds no CVARs")
        names = {e.raw.metric.members[0].name for _, e in trace.of_kind("Metric")}
        pvars = sorted(n for n in names if n.startswith("MPI_T "))
        if flavour == "mpich":
            said = "this MPI offers no MPI_T performance variables"
            if run.stderr.count(said) != 1 or pvars:
                failures.append(f"MPICH: expected '{said}' once and no PVAR values, got "
                                f"{len(pvars)}: {run.stderr[-800:]}")
        else:
            said = "kill a process that reads them"
            if run.stderr.count(said) != 1 or "mtl_psm2_tx_num" not in run.stderr:
                failures.append(f"Open MPI: the mtl_psm2 PVARs were not said once to be "
                                f"skipped: {run.stderr[-800:]}")
            if not any("pml_ob1_posted_recvq_length" in n for n in pvars):
                failures.append(f"Open MPI: no pml_ob1 PVAR values in the trace: {pvars[:10]}")
        for failure in failures:
            print(f"FAILED {flavour} MPI_T: {failure}", file=sys.stderr)
        return 1 if failures else 0


if __name__ == "__main__":
    main()
