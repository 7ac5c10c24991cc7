"""What the benchmark scripts share: the test helpers (tests/common: mpi_launch) on the path,
the Open MPI they run with, the options every one of them takes, and a trace's size on disk."""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "common"))



def default_mpi_prefix():
    """The Open MPI built with Peruse by scripts/setup (5.0.9 if it built one, else 4.1.4),
    unless MPITRACE_OMPI_PREFIX names another."""
    if "MPITRACE_OMPI_PREFIX" in os.environ:
        return os.environ["MPITRACE_OMPI_PREFIX"]
    for version in ("5.0.9", "4.1.4"):
        prefix = os.path.expanduser(f"~/.cache/perusetrace/openmpi-{version}-peruse")
        if os.path.exists(os.path.join(prefix, "bin", "mpirun")):
            return prefix
    return os.path.expanduser("~/.cache/perusetrace/openmpi-4.1.4-peruse")


MPI_PREFIX = default_mpi_prefix()


def options(mpi="--mpirun", build="build", **parser_args):
    """A parser taking --build and the MPI: `--mpirun` (its launcher) or `--mpi-prefix` (its
    folder, for scripts that run more of it than mpirun)."""
    parser = argparse.ArgumentParser(**parser_args)
    parser.add_argument("--build", default=build)
    parser.add_argument(mpi, default=os.path.join(MPI_PREFIX, "bin", "mpirun")
                        if mpi == "--mpirun" else MPI_PREFIX)
    return parser


def parse(parser):
    """The options, with --build absolute: the runs start in other folders."""
    opts = parser.parse_args()
    opts.build = os.path.abspath(opts.build)
    return opts


def tree_bytes(path):
    """What the files below `path` (a trace directory) take on disk."""
    return sum(os.path.getsize(os.path.join(root, f))
               for root, _, files in os.walk(path) for f in files)


def hpcc_run_dir(work, hpcc_input):
    """A directory under `work` where Debian's hpcc runs with `hpcc_input` as its hpccinf.txt
    and no output of an earlier run: (the directory, the path of the hpccoutf.txt it writes)."""
    run_dir = os.path.join(work, "hpcc")
    os.makedirs(run_dir, exist_ok=True)
    shutil.copy(hpcc_input, os.path.join(run_dir, "hpccinf.txt"))
    output = os.path.join(run_dir, "hpccoutf.txt")
    if os.path.exists(output):
        os.remove(output)
    return run_dir, output


def hpcc_succeeded(output):
    """Whether hpcc's output says its checks passed."""
    with open(output) as f:
        return "Success=1" in f.read()
