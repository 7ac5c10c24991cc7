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


def expect(condition, message, run=None, error=AssertionError):
    """Raises `error` with `message`, and the stdout and the end of the stderr of `run` (a
    subprocess result) when given, unless `condition` holds."""
    if not condition:
        detail = f"\n--- stdout:\n{run.stdout}\n--- stderr:\n{run.stderr[-3000:]}" if run else ""
        raise error(message + detail)


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


def run_listing_case(cases, what, options, run_case=None, optional=None, keep=False,
                     asserting=False, prepare=None):
    """The main of a script whose cases return their failures: `SCRIPT --OPTION VALUE... CASE`
    with every option in `options` required and those of `optional` ({option: help}) not;
    `keep` adds --keep (the work directory stays). prepare(opts), when given, runs before the
    work directory is made: where a test skips (exit 77) or fails for a missing dependency.
    run_case(case function, opts, work directory) runs the chosen one (by default as
    case(opts, work); with `asserting`, an AssertionError it raises is its failure), and
    finish() reports it ("WHAT case 'CASE'")."""
    parser = argparse.ArgumentParser()
    for option in options:
        parser.add_argument(f"--{option}", required=True)
    for option, text in (optional or {}).items():
        parser.add_argument(f"--{option}", help=text)
    if keep:
        parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("case", choices=sorted(cases))
    opts = parser.parse_args()
    if prepare:
        prepare(opts)
    work = tempfile.mkdtemp(prefix=f"perusetrace-{what}-")
    try:
        case = cases[opts.case]
        failures = run_case(case, opts, work) if run_case else case(opts, work)
    except AssertionError as e:
        if not asserting:
            raise
        failures = [str(e)]
    finish(f"{what} case '{opts.case}'", failures, work, keep=keep and opts.keep)
