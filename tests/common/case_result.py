"""How every case-based test script ends: the failures listed with where the files were kept,
or the case passed and its work directory removed."""
import argparse
import shutil
import sys
import tempfile


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


def run_asserting_case(cases, prefix, make_context):
    """The main of a script whose cases assert: `SCRIPT --build DIR --mpirun MPIRUN CASE` runs
    one case as cases[CASE](make_context(build, mpirun, work)) in a fresh work directory, removed
    afterwards, and turns its AssertionError into a FAILED line and exit status 1."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("case", choices=sorted(cases))
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=prefix) as work:
        try:
            cases[opts.case](make_context(opts.build, opts.mpirun, work))
        except AssertionError as e:
            print(f"FAILED {opts.case}: {e}", file=sys.stderr)
            sys.exit(1)
    print(f"{opts.case} passed")


def cases_of(module_globals):
    """The test cases a script defines: its functions case_NAME, by NAME."""
    return {name[len("case_"):]: fn for name, fn in module_globals.items()
            if name.startswith("case_")}


def run_listing_case(cases, what, options, run_case):
    """The main of a script whose cases return their failures: `SCRIPT --OPTION VALUE... CASE`
    with every option in `options` required; run_case(case function, opts, work directory)
    runs the chosen one, and finish() reports it ("WHAT case 'CASE'")."""
    parser = argparse.ArgumentParser()
    for option in options:
        parser.add_argument(f"--{option}", required=True)
    parser.add_argument("case", choices=sorted(cases))
    opts = parser.parse_args()
    work = tempfile.mkdtemp(prefix=f"perusetrace-{what}-")
    finish(f"{what} case '{opts.case}'", run_case(cases[opts.case], opts, work), work)
