#!/usr/bin/python3
"""`perusetrace info` on the small archives of tests/data (no mpirun): what each was traced with
and on how many ranks, hosts and clocks, as tests/data/make_archives.sh made them; a clear error
and exit code 1 for what is no trace.

    info_test.py PERUSETRACE DATA_DIR
"""
import os
import subprocess
import sys


def info(exe, path):
    return subprocess.run([exe, "info", path], capture_output=True, text=True, timeout=60)


def main():
    exe, data = sys.argv[1], sys.argv[2]
    failures = []
    want = {
        # archive: lines the output must hold
        "known_counts": ["(archive version 1)", "ranks           4 on 1 host, 4 threads traced",
                         "ranks 0-3", "Peruse events   none", "MPI_T values    none",
                         "1 clock domain"],
        "late_sender": ["ranks           2 on 1 host", "REQ_XFER_BEGIN", "MSG_ARRIVED",
                        "MPI_T values    none"],
        "mpit": ["Peruse events   none", "variables and places"],
        "rma": ["RMA windows     4"],
        "file_io": ["files           "],
    }
    for archive, lines in want.items():
        run = info(exe, os.path.join(data, archive))
        if run.returncode != 0:
            failures.append(f"{archive}: exit {run.returncode}: {run.stderr}")
            continue
        for line in lines:
            if line not in run.stdout:
                failures.append(f"{archive}: no '{line}' in:\n{run.stdout}")
    missing = info(exe, os.path.join(data, "no-such-trace"))
    if missing.returncode != 1 or "perusetrace info: " not in missing.stderr or \
            "does not exist" not in missing.stderr:
        failures.append(f"a missing trace: exit {missing.returncode}, '{missing.stderr}'")
    usage = subprocess.run([exe, "info"], capture_output=True, text=True, timeout=60)
    if usage.returncode != 2 or "usage: perusetrace info" not in usage.stderr:
        failures.append(f"no archive: exit {usage.returncode}, '{usage.stderr}'")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"info read {len(want)} archives as they were traced")


if __name__ == "__main__":
    main()
