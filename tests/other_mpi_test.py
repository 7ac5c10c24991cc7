#!/usr/bin/python3
"""perusetrace under an MPI without Peruse: build it against that MPI in a build directory of
its own (PMPI-only, -Dperuse=disabled), run the exact-count program traced, check the trace.

    other_mpi_test.py SOURCE_DIR BUILD_ROOT openmpi|mpich
"""
import os
import subprocess
import sys

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
                     "libmpich-dev mpich (tools/setup does)")
    build = os.path.join(build_root, "other-mpi", flavour)
    if not os.path.exists(os.path.join(build, "build.ninja")):
        subprocess.run(["meson", "setup", build, source, f"-Dmpicc={mpicc}", f"-Dmpirun={mpirun}",
                        "-Dperuse=disabled", "-Dwerror=true"], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build, "lib/libperusetrace.so", "tests/known_counts",
                    "tests/trace_counts"], check=True, stdout=subprocess.DEVNULL)
    run = subprocess.run(
        ["/usr/bin/python3", os.path.join(source, "tests", "run_traced.py"), "--mpirun", mpirun,
         "--style", style, "--preload", os.path.join(build, "lib", "libperusetrace.so"),
         "--env", "MPITRACE_PERUSE_EVENTS=all", "--check", "known_counts_pmpi_only", "-np", "4",
         "--", os.path.join(build, "tests", "known_counts")])
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
