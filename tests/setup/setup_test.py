#!/usr/bin/python3
"""scripts/setup fails loudly and helpfully: each case runs it against an empty cache of its own
(no Debian packages touched, nothing built) and checks the message.

    setup_test.py REPO CASE
"""
import os
import subprocess
import sys
import tempfile


def run_setup(repo, cache, **env):
    # The caller's choice of Open MPI (CI sets one for each of its runs) is not the case's.
    inherited = {k: v for k, v in os.environ.items() if k != "MPITRACE_OMPI_VERSION"}
    full = dict(inherited, XDG_CACHE_HOME=cache, MPITRACE_SETUP_SKIP_APT="1",
                MPITRACE_OMPI_PREFIX=os.path.join(cache, "prefix"), **env)
    return subprocess.run([os.path.join(repo, "scripts", "setup")], env=full, capture_output=True,
                          text=True, timeout=120)


def case_missing_tarball(repo, cache):
    run = run_setup(repo, cache, MPITRACE_OMPI_VERSION="4.1.4",
                    MPITRACE_OMPI_TARBALL=os.path.join(cache, "nowhere.tar.xz"))
    return run, ["does not exist", "unset it to use 'apt-get source openmpi'"]


def case_checksum_mismatch(repo, cache):
    bad = os.path.join(cache, "openmpi_4.1.4.orig.tar.xz")
    with open(bad, "wb") as f:
        f.write(b"not the Open MPI source")
    run = run_setup(repo, cache, MPITRACE_OMPI_VERSION="4.1.4", MPITRACE_OMPI_TARBALL=bad)
    return run, ["checksum mismatch", "expected ddaee7db", "Fetch openmpi_4.1.4.orig.tar.xz again"]


def case_missing_tarball5(repo, cache):
    run = run_setup(repo, cache, MPITRACE_OMPI_VERSION="5.0.9", MPITRACE_OMPI5_TARBALL="")
    return run, ["needs Open MPI 5.0.9's source", "MPITRACE_OMPI5_TARBALL"]


def case_checksum_mismatch5(repo, cache):
    bad = os.path.join(cache, "openmpi-5.0.9-git.tar.xz")
    with open(bad, "wb") as f:
        f.write(b"not the Open MPI source")
    run = run_setup(repo, cache, MPITRACE_OMPI_VERSION="5.0.9", MPITRACE_OMPI5_TARBALL=bad)
    return run, ["checksum mismatch", "expected 96d8becb", "Copy openmpi-5.0.9-git.tar.xz again"]


def case_fallback_to_4(repo, cache):
    # Without 5.0.9's source set-up takes 4.1.4 and says so in one line (here it then stops at
    # the missing 4.1.4 source, before building anything).
    run = run_setup(repo, cache, MPITRACE_OMPI5_TARBALL="",
                    MPITRACE_OMPI_TARBALL=os.path.join(cache, "nowhere.tar.xz"))
    return run, ["Open MPI 5.0.9's source not given", "using 4.1.4", "does not exist"]


def case_unknown_version(repo, cache):
    run = run_setup(repo, cache, MPITRACE_OMPI_VERSION="4.0")
    return run, ["MPITRACE_OMPI_VERSION=4.0 is not a version", "5.0.9 or 4.1.4"]


def case_unusable_cache(repo, cache):
    blocker = os.path.join(cache, "file")
    open(blocker, "w").close()
    run = run_setup(repo, blocker)  # XDG_CACHE_HOME is a file: nothing can be created under it
    return run, ["cannot create", "XDG_CACHE_HOME"]


CASES = {n[len("case_"):]: f for n, f in globals().items() if n.startswith("case_")}

if __name__ == "__main__":
    repo, case = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="perusetrace-setup-") as cache:
        run, words = CASES[case](repo, cache)
    missing = [w for w in words if w not in run.stdout + run.stderr]
    if run.returncode == 0 or missing:
        print(f"FAILED {case}: exit {run.returncode}, message lacks {missing}\n{run.stderr}",
              file=sys.stderr)
        sys.exit(1)
    print(f"{case} passed: {run.stderr.strip().splitlines()[0]}")
