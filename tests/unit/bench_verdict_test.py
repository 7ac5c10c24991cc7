"""The ping-pong benchmark's verdict on the overhead targets (bench/run_pingpong.py): the
interval for the median of the per-cycle margins, and which side of zero it calls; the same for
the per-cycle difference between two builds (--against)."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("run_pingpong", sys.argv[1])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


# Ranks of the classic tables for a 95% interval: n = 6 -> 1 and 6, 10 -> 2 and 9,
# 25 -> 8 and 18; fewer than 6 values have none.
check("median of 4", bench.median([4, 1, 3, 2]), 2.5)
check("median of 5", bench.median([5, 1, 4, 2, 3]), 3)
check("interval of 5", bench.median_interval(range(1, 6)), None)
check("interval of 6", bench.median_interval(range(1, 7)), (1, 6))
check("interval of 10", bench.median_interval(range(1, 11)), (2, 9))
check("interval of 25", bench.median_interval(range(1, 26)), (8, 18))
check("interval, unsorted", bench.median_interval([9, 3, 7, 1, 5, 2, 8, 4, 6, 10]), (2, 9))

above = [0.01 * i for i in range(1, 26)]
check("all above zero", "met at 95%" in bench.margin_verdict(above), True)
check("all below zero", "missed at 95%" in bench.margin_verdict([-m for m in above]), True)
across = [0.01 * i - 0.12 for i in range(25)]
check("across zero", "neither met nor missed" in bench.margin_verdict(across), True)
check("too few", "needs 6 or more" in bench.margin_verdict([0.1, 0.2]), True)

check("faster", "faster at 95%" in bench.difference_verdict([-m for m in above]), True)
check("slower", "slower at 95%" in bench.difference_verdict(above), True)
check("no difference", "no difference at 95%" in bench.difference_verdict(across), True)
check("too few to compare", "needs 6 or more" in bench.difference_verdict([0.1]), True)

if failures:
    sys.exit("bench/run_pingpong.py's verdict is wrong:\n  " + "\n  ".join(failures))
print("verdict checks passed")
