"""How every case-based test script ends: the failures listed with where the files were kept,
or the case passed and its work directory removed."""
import shutil
import sys


def finish(what, failures, work, keep=False):
    if failures:
        print(f"\nFAILED {what} (files kept in {work}):", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
        sys.exit(1)
    print(f"{what} passed")
    if keep:
        print(f"files kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
