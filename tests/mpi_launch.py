"""How the tests start real ranks: one place that knows each mpirun's options."""
import os
import shutil
import signal
import subprocess

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


def _descendants(pid):
    """`pid` and every process below it, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def _stacks(pids):
    """Every thread's stack of each process, by gdb when there is one, else the kernel's view
    (where each thread sleeps)."""
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                name = f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
        except OSError:
            continue
        out.append(f"== pid {pid}: {name}")
        if shutil.which("gdb"):
            run = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                                 capture_output=True, text=True, timeout=60)
            out += [line for line in run.stdout.splitlines()
                    if line.startswith(("#", "Thread "))][:200]
        else:
            for tid in sorted(os.listdir(f"/proc/{pid}/task")):
                try:
                    with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                        out.append(f"thread {tid}: waits in {f.read().strip() or '(running)'}")
                except OSError:
                    pass
    return "\n".join(out)


def run(cmd, timeout, **kwargs):
    """subprocess.run(cmd, capture_output=True, text=True, ...), but a run still going after
    `timeout` seconds is a hang to diagnose, not only to kill: every process of it has its
    threads' stacks printed (gdb) before it is killed; the result then has returncode None
    and says so in its stderr. Keep `timeout` below the test's own, or meson kills first."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    except subprocess.TimeoutExpired:
        pids = _descendants(proc.pid)
        print(f"HANG: {' '.join(cmd[:1] + cmd[-3:])} still running after {timeout} s; the "
              f"stacks of its {len(pids)} processes:\n{_stacks(pids)}", flush=True)
        # The ranks are in process groups of their own (Open MPI's launcher puts them there).
        for pid in _descendants(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        stdout, stderr = proc.communicate()
        return subprocess.CompletedProcess(
            cmd, None, stdout, stderr + f"\n(hung: killed after {timeout} s; stacks above)")
