"""How the tests start real ranks: one place that knows each mpirun's options."""
import os

# Containers forbid the cross-memory attach Open MPI's shared memory uses by default.
RANK_ENV = {"OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def command(mpirun, np, env=None, preload=None, style="openmpi", bind="none"):
    """The mpirun command line (up to the program) that gives every rank `env` and, with
    `preload`, LD_PRELOAD — only the ranks load the tracer, not mpirun itself. Every mpirun line
    of the tests and benchmarks comes from here; `bind` is Open MPI's --bind-to."""
    env = dict(RANK_ENV, **(env or {}))
    if preload:
        env["LD_PRELOAD"] = preload
    if style == "openmpi":  # as root, more ranks than cores, no binding to busy cores
        args = [mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to", bind,
                "-np", str(np)]
        for name, value in env.items():
            args += ["-x", f"{name}={value}"]
    else:  # MPICH's hydra
        args = [mpirun, "-np", str(np)]
        for name, value in env.items():
            args += ["-genv", name, value]
    return args


def launcher_env(env=None):
    """The environment for mpirun itself: the caller's, plus the ranks' settings."""
    return dict(os.environ, **RANK_ENV, **(env or {}))


def without_tracer_settings():
    """The caller's environment without its MPITRACE_* variables, for benchmarks: local ranks
    inherit mpirun's environment, so a setting left in the shell would reach every rank and
    change what is measured without a word."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MPITRACE_")}
