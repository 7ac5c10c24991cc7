"""`perusetrace recover` as the crash, kill and poll-fold tests run it: it must succeed and
make an archive that otf2-print reads without a word (and, when asked, `perusetrace report`)."""
import os
import subprocess


class RecoveryFailed(AssertionError):
    pass


def recover(perusetrace, out, report=False):
    """`PERUSETRACE recover OUT`: (its completed run, the archive's traces.otf2)."""
    recovered = subprocess.run([perusetrace, "recover", out], capture_output=True, text=True,
                               timeout=300)
    if recovered.returncode != 0:
        raise RecoveryFailed(f"recover failed (exit {recovered.returncode})\n--- stdout:\n"
                             f"{recovered.stdout}\n--- stderr:\n{recovered.stderr[-3000:]}")
    anchor = os.path.join(out, "traces.otf2")
    printed = subprocess.run(["otf2-print", anchor], capture_output=True, text=True)
    if printed.returncode != 0 or printed.stderr.strip():
        raise RecoveryFailed(f"otf2-print rejects the recovered archive: {printed.stderr[:2000]}")
    if report:
        reported = subprocess.run([perusetrace, "report", anchor], capture_output=True,
                                  text=True, timeout=300)
        if reported.returncode != 0:
            raise RecoveryFailed(f"report cannot read the recovered archive: "
                                 f"{reported.stderr[-2000:]}")
    return recovered, anchor
