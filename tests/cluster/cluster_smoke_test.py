#!/usr/bin/python3
"""Ranks on a simulated cluster (scripts/fake-cluster): where they run, their clocks, their
node-local disks, and that nothing of the cluster is left behind.

    cluster_smoke_test.py FAKE_CLUSTER CLOCK_PROBE [--mpirun MPIRUN]

Exits 77 (skipped) with fake-cluster's own reason when this machine cannot simulate a cluster
(not root, no time namespaces, no iproute2, ...: `fake-cluster --check` exits 77 saying "cannot
run"); any other failure of the check (exit 2: a broken invocation, e.g. no mpirun) fails.
"""
import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", d)
                for d in ("common", "analysis", "converters")]
import mpi_launch  # noqa: E402

SKIP = 77
HOSTS = {"h1": 0.0, "h2": 5000.0, "h3": -1234.5}
TOLERANCE = 0.5  # seconds: barrier exits on an oversubscribed machine are far closer
# A job still going after this is a hang: its stacks are printed before meson's 300 s are up.
RUN_TIMEOUT = 90
LINE = re.compile(r"^rank (\d+) host (\S+) monotonic_offset_vs_rank0 (-?\d+\.\d+)$", re.M)
SCRATCH_LINE = re.compile(r"^rank (\d+) scratch_entries (\d+) foreign (\d+)$", re.M)


def expect(condition, message, run=None):
    if not condition:
        detail = f"\n--- stdout:\n{run.stdout}\n--- stderr:\n{run.stderr}" if run else ""
        raise AssertionError(message + detail)


def network_state():
    """What a run could leave behind in the root namespace: named netns and links."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return (sorted(netns.split("\n")),
            sorted(re.findall(r"^\d+: ([^:@]+)", links, re.M)))


def fake_cluster(a, args):
    run = mpi_launch.run([a.fake_cluster, "--mpirun", a.mpirun] + args, timeout=RUN_TIMEOUT,
                         env=a.env)
    expect(run.returncode is not None, "the job hung", run)
    cannot_run = mpi_launch.fake_cluster_cannot_run(run.returncode, run.stderr)
    if cannot_run:
        print(cannot_run)
        sys.exit(SKIP)
    return run


def offsets_case(a):
    spec = "h1:0,h2:+5000,h3:-1234.5"
    run = fake_cluster(a, ["--hosts", spec, "--slots", "2", "--", "-np", "6", a.probe])
    expect(run.returncode == 0, f"fake-cluster exited {run.returncode}", run)
    for name, offset in HOSTS.items():
        expect(re.search(rf"^fake-cluster: host {name} 198\.18\.0\.\d+ ", run.stderr, re.M),
               f"no line for host {name} on stderr", run)
    ranks = {int(r): (host, float(off)) for r, host, off in LINE.findall(run.stdout)}
    expect(sorted(ranks) == list(range(6)), "not one line per rank", run)
    per_host = collections.Counter(host for host, _ in ranks.values())
    expect(per_host == {"h1": 2, "h2": 2, "h3": 2}, f"ranks per host: {dict(per_host)}", run)
    root_host = ranks[0][0]
    for rank, (host, offset) in sorted(ranks.items()):
        want = HOSTS[host] - HOSTS[root_host]
        expect(abs(offset - want) < TOLERANCE,
               f"rank {rank} on {host}: clock offset {offset} s, configured {want} s", run)
    expect("ring ok" in run.stdout, "the ring of messages between hosts failed", run)
    print(run.stdout, end="")


def scratch_case(a):
    with tempfile.TemporaryDirectory(prefix="cluster-scratch-") as scratch:
        run = fake_cluster(a, ["--hosts", "h1:0,h2:+7.25", "--scratch", scratch, "--", "-np", "4",
                               a.probe, scratch])
        expect(run.returncode == 0, f"fake-cluster --scratch exited {run.returncode}", run)
        counts = SCRATCH_LINE.findall(run.stdout)
        expect(len(counts) == 4, "not one scratch line per rank", run)
        for rank, entries, foreign in counts:
            # Two ranks per host: each sees its own file and its neighbour's, nobody else's.
            expect((entries, foreign) == ("2", "0"),
                   f"rank {rank} saw {entries} files, {foreign} from other hosts", run)
        left = os.listdir(scratch)
        expect(not left, f"the writes reached the real {scratch}: {left}", run)
        expect(not os.path.ismount(scratch), f"{scratch} is still a mount point")
        print("scratch: private per host, real directory untouched")


def failure_case(a):
    run = fake_cluster(a, ["--", "-np", "2", "false"])
    expect(run.returncode != 0, "a failing job must fail fake-cluster too", run)


def sigterm_case(a):
    """Stopped mid-job, it still ends the job and takes the cluster down."""
    job = mpi_launch.start([a.fake_cluster, "--mpirun", a.mpirun, "--", "-np", "4", "sleep",
                            "300"], timeout=5 + 60, env=a.env)
    time.sleep(5)
    job.send_signal(signal.SIGTERM)
    run = mpi_launch.finish(job)
    expect(run.returncode is not None, "fake-cluster did not end within 60 s of SIGTERM", run)
    expect(run.returncode == 128 + signal.SIGTERM,
           f"exit {run.returncode} after SIGTERM\n{run.stderr}")


def leftover_processes(work):
    """Processes whose command line names the runs' temp files: holders, say."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if work.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("fake_cluster")
    p.add_argument("probe")
    p.add_argument("--mpirun", default="/usr/bin/mpirun")
    a = p.parse_args()
    a.fake_cluster, a.probe = os.path.abspath(a.fake_cluster), os.path.abspath(a.probe)

    # Skipped only when this machine cannot simulate a cluster; a broken check fails.
    cannot_run = mpi_launch.fake_cluster_check(a.fake_cluster, a.mpirun)
    if cannot_run:
        print(cannot_run)
        return SKIP

    before = network_state()
    # The runs' temp files go to a directory of our own, to see that they are all removed.
    with tempfile.TemporaryDirectory(prefix="cluster-smoke-") as work:
        a.env = dict(os.environ, TMPDIR=work)
        offsets_case(a)
        scratch_case(a)
        failure_case(a)
        sigterm_case(a)
        expect(not os.listdir(work), f"temp files left behind: {os.listdir(work)}")
        expect(not leftover_processes(work), f"processes left: {leftover_processes(work)}")
    after = network_state()
    expect(after == before, f"left behind: netns/links before {before}, after {after}")
    print("cluster_smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
