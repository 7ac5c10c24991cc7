#!/usr/bin/python3
"""What an installed perusetrace gives a user who relinks: `meson install` into a scratch
directory, then pkg-config's flags (its prefix redefined to that directory) build a C program
with mpicc and an annotated Fortran program with mpifort, the Fortran one compiling the installed
module include/perusetrace/perusetrace.f90; both run on 2 ranks against the installed library
(LD_LIBRARY_PATH, no preload) and their archives hold every message they sent, the Fortran
one its annotation values.

    install_test.py --build BUILD --mpirun MPIRUN --perusetrace EXE
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import case_result  # noqa: E402
import mpi_launch  # noqa: E402
import trace_checks  # noqa: E402

APPS = os.path.join(HERE, "..", "apps")
ITERATIONS, MESSAGES = 5, 10  # annotated_phases_fortran's arguments
C_PROGRAM = r"""
#include <mpi.h>
int main(int argc, char** argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 7; ++i) {
    if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(&v, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
"""


def run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {done.returncode}: "
                           f"{done.stderr[-1500:]}")
    return done.stdout


def traced(opts, work, program, args, name):
    trace = os.path.join(work, name)
    env = {"MPITRACE_OUTPUT": trace, "LD_LIBRARY_PATH": opts.libdir}
    done = mpi_launch.run(mpi_launch.command(opts.mpirun, 2, env) + [program, *args],
                          timeout=120, env=mpi_launch.launcher_env(env), cwd=work)
    if done.returncode != 0:
        raise RuntimeError(f"{program} exited {done.returncode}: {done.stderr[-1500:]}")
    return trace_checks.load(os.path.join(trace, "traces.otf2"))


def sends(trace):
    return sum(1 for events in trace.events.values() for e in events if e.kind == "MpiSend")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--perusetrace", required=True)
    opts = parser.parse_args()
    bindir = os.path.dirname(opts.mpirun)
    work = tempfile.mkdtemp(prefix="perusetrace-install-")
    failures = []
    try:
        root = os.path.join(work, "root")
        run(["meson", "install", "-C", opts.build, "--destdir", root, "--no-rebuild", "--quiet"])
        pcs = glob.glob(os.path.join(root, "**", "pkgconfig", "perusetrace.pc"), recursive=True)
        if len(pcs) != 1:
            raise RuntimeError(f"meson install left {len(pcs)} perusetrace.pc under {root}")
        prefix = None
        for line in open(pcs[0]):
            if line.startswith("prefix="):
                prefix = root + line.split("=", 1)[1].strip()
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
        flags = run(["pkg-config", f"--define-variable=prefix={prefix}", "--cflags", "--libs",
                     "perusetrace"], env=env).split()
        libdir = [f[2:] for f in flags if f.startswith("-L")]
        if not libdir or not os.path.exists(os.path.join(libdir[0], "libperusetrace.so")):
            raise RuntimeError(f"pkg-config's flags {flags} name no directory holding "
                               "libperusetrace.so")
        opts.libdir = libdir[0]
        module = glob.glob(os.path.join(root, "**", "perusetrace", "perusetrace.f90"),
                           recursive=True)
        if len(module) != 1:
            raise RuntimeError("the Fortran module perusetrace.f90 is not installed")

        c_source = os.path.join(work, "seven.c")
        with open(c_source, "w") as f:
            f.write(C_PROGRAM)
        c_program = os.path.join(work, "seven")
        run([os.path.join(bindir, "mpicc"), c_source, "-o", c_program] + flags)
        trace = traced(opts, work, c_program, [], "c-trace")
        if sends(trace) != 7:
            failures.append(f"the relinked C program's trace holds {sends(trace)} sends, not 7")

        f_program = os.path.join(work, "annotated")
        run([os.path.join(bindir, "mpifort"), module[0],
             os.path.join(APPS, "annotated_phases_fortran.F90"), "-o", f_program] + flags,
            cwd=work)
        linked = run(["ldd", f_program])
        if os.path.join(opts.libdir, "libperusetrace.so") not in linked and \
                "libperusetrace.so" not in linked:
            failures.append(f"the Fortran program is not linked with libperusetrace: {linked}")
        trace = traced(opts, work, f_program, [str(ITERATIONS), str(MESSAGES)], "f-trace")
        if sends(trace) != ITERATIONS * MESSAGES:
            failures.append(f"the relinked Fortran program's trace holds {sends(trace)} sends, "
                            f"not {ITERATIONS * MESSAGES}")
        report = run([opts.perusetrace, "report", os.path.join(work, "f-trace"), "--by",
                      "phase", "-q"])
        if "phase=exchange" not in report:
            failures.append(f"the report has no phase=exchange context: {report[-1500:]}")
    except RuntimeError as e:
        failures.append(str(e))
    case_result.finish("relinking with pkg-config", failures, work)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
