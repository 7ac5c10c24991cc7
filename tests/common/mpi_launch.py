"""How the tests start real ranks: one place that knows each mpirun's options."""
import os
import re
import shutil
import signal
import subprocess
import threading

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


def open_mpi_version(mpirun):
    """(major, minor) of the Open MPI that `mpirun` launches ("mpirun (Open MPI) 5.0.9"); None
    for another MPI. Tests whose known answers differ between Open MPI 4.1 and 5.0 (fragment
    sizes, transports) ask it."""
    try:
        out = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"\(Open MPI\) (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


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


def _command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


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


def start(cmd, timeout, **kwargs):
    """subprocess.Popen(cmd, stdout=PIPE, stderr=PIPE, text=True, ...) for a caller that acts on
    the run while it goes (reads its output, signals a rank), then calls finish(). A run still
    going `timeout` seconds after it started is ended as run() ends one, even while the caller
    is blocked reading its output (a watchdog thread)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)
    proc.hung_after = None
    proc.hung_commands = []  # the command lines still running when it hung
    proc.watchdog = threading.Timer(timeout, _end_hung, (proc, timeout))
    proc.watchdog.daemon = True
    proc.watchdog.start()
    return proc


def _end_hung(proc, timeout):
    if proc.poll() is not None:
        return
    proc.hung_after = timeout
    pids = _descendants(proc.pid)
    proc.hung_commands = [c for c in map(_command_line, pids) if c]
    cmd = list(proc.args)
    print(f"HANG: {' '.join(cmd[:1] + cmd[-3:])} still running after {timeout} s; the "
          f"stacks of its {len(pids)} processes:\n{_stacks(pids)}", flush=True)
    # The ranks are in process groups of their own (Open MPI's launcher puts them there).
    for pid in _descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def finish(proc):
    """The end of a run from start(), as a CompletedProcess; returncode None if it hung (its
    stacks printed, its processes killed), which its stderr then says."""
    stdout, stderr = proc.communicate()
    proc.watchdog.cancel()
    proc.watchdog.join()  # a hang being diagnosed is printed and killed first
    if proc.hung_after is None:
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    else:
        done = subprocess.CompletedProcess(
            proc.args, None, stdout,
            stderr + f"\n(hung: killed after {proc.hung_after} s; stacks above)\n")
    done.hung_commands = proc.hung_commands
    return done


def run(cmd, timeout, **kwargs):
    """subprocess.run(cmd, capture_output=True, text=True, ...), but a run still going after
    `timeout` seconds is a hang to diagnose, not only to kill: every process of it has its
    threads' stacks printed (gdb) before it is killed; the result then has returncode None
    and says so in its stderr. Keep `timeout` below the test's own, or meson kills first."""
    return finish(start(cmd, timeout, **kwargs))



def traced(mpirun, np, program, trace_dir, preload, env=None, timeout=120, cwd=None):
    """PROGRAM (a command line) on NP ranks with the tracer preloaded and ENV for every rank,
    writing its archive into TRACE_DIR. Returns (run, archive): the archive's path, or None when
    the run failed or wrote none (failed(run) says so)."""
    env = dict(env or {}, MPITRACE_OUTPUT=trace_dir)
    done = run(command(mpirun, np, env, preload) + list(program), timeout=timeout,
               env=launcher_env(env), cwd=cwd)
    archive = os.path.join(trace_dir, "traces.otf2")
    return done, archive if done.returncode == 0 and os.path.exists(archive) else None


# examples/scenarios' scenarios whose messages the converter tests check.
SCENARIOS = ["late-sender", "late-receiver", "late-wait", "long-message", "flood", "all"]


def each_scenario(scenarios, trace, check):
    """Each of SCENARIOS run by the program SCENARIOS on 2 ranks with 20 ms delays:
    trace(name, np, command) returns (archive, failures), check(name, scenario, archive) the
    failures of one that ran. Returns all the failures."""
    failures = []
    for scenario in SCENARIOS:
        name = scenario.replace("-", "_")
        archive, found = trace(name, 2, [scenarios, scenario, "-d", "20"])
        failures += found
        if archive:
            failures += check(name, scenario, archive)
    return failures


def failed(run, tail=2000):
    """The failure line of a traced run that wrote no archive: its exit status and output."""
    return (f"the traced run failed (exit {run.returncode}):\n{run.stdout.strip()[-tail:]}\n"
            f"{run.stderr.strip()[-tail:]}")


def must_trace(*args, **kwargs):
    """traced(), the archive's path; a failed run ends the test (SystemExit, saying why)."""
    done, archive = traced(*args, **kwargs)
    if archive is None:
        raise SystemExit(failed(done))
    return archive

# scripts/fake-cluster's exit status, with a line "fake-cluster: cannot run: REASON", when this
# machine lacks what a simulated cluster needs (root, time or network namespaces, tools).
FAKE_CLUSTER_CANNOT_RUN = 77


def fake_cluster_cannot_run(returncode, stderr):
    """fake-cluster's reason why this machine cannot simulate a cluster, or None when its exit
    status and stderr do not say that (a job's own failure, a broken invocation)."""
    reasons = [line for line in stderr.splitlines() if line.startswith("fake-cluster: cannot run:")]
    return reasons[-1] if returncode == FAKE_CLUSTER_CANNOT_RUN and reasons else None


def fake_cluster_check(fake_cluster, mpirun):
    """`fake-cluster --mpirun MPIRUN --check`: None when a simulated cluster can run here, and
    the reason when this machine lacks what it needs: the one case for a test to skip. Any other
    answer (a broken invocation, exit 2; a crash; 77 without its reason) ends the test as a
    failure, saying what --check said."""
    check = subprocess.run([fake_cluster, "--mpirun", mpirun, "--check"], capture_output=True,
                           text=True)
    if check.returncode == 0:
        return None
    reason = fake_cluster_cannot_run(check.returncode, check.stderr)
    if reason:
        return reason
    raise SystemExit(f"FAILED: `{fake_cluster} --mpirun {mpirun} --check` exited "
                     f"{check.returncode}, which is not 'this machine cannot run a fake cluster' "
                     f"(77 with a 'fake-cluster: cannot run:' line) but a broken set-up; it said:"
                     f"\n{(check.stderr + check.stdout).strip()}")
