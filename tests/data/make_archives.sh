#!/usr/bin/env bash
# Writes the small real archives the unit tests read without mpirun (tests/reader_test.cpp,
# tests/analyses_test.cpp, tests/wait_states_test.cpp), each a few ranks of a test program with a
# known answer, traced by this build:
#   wait_states/SCENARIO  tests/apps/wait_states' scenarios, 4 ranks, 400 ms delays, no Peruse
#   known_counts          tests/apps/known_counts, 4 ranks, no Peruse event; expect.txt holds
#                         the totals the program prints ("expect KIND N")
#   late_sender           examples/scenarios late-sender -d 100, 2 ranks, every Peruse event
#   broken_clock          the same with rank 1's clock moved 50 ms back (tests/apps/clock_shift.c)
#   file_io               tests/apps/file_io, 4 ranks; truth.txt holds each rank's own tally
#   rma                   tests/apps/rma, 4 ranks
#   mpit                  tests/apps/mpit_counts 100 20, 2 ranks, every MPI_T PVAR
#   annotated             tests/apps/annotated_phases 5 20, 2 ranks
#   datatypes             tests/apps/datatypes, 4 ranks
#   polls                 tests/apps/poll_kinds -d 300 -r 1 -n 20, 4 ranks, polls folded (the
#                         default); truth.txt holds each rank's own count ("RANK FUNCTION CALLS NS")
# Run from a configured build, on an idle machine (the wait states are held to their delays
# within 2 %):   tests/data/make_archives.sh [BUILD_DIR]
# It replaces what it writes; run it again when the archive format changes (the reader then says
# which archives it cannot read, and the unit tests fail until they are written again).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build}
# The archives were written with Open MPI 4.1.4: their known answers are its.
mpirun=${MPITRACE_MPIRUN:-${XDG_CACHE_HOME:-$HOME/.cache}/perusetrace/openmpi-4.1.4-peruse/bin/mpirun}
out=$repo/tests/data
export OMPI_MCA_btl_vader_single_copy_mechanism=none
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# trace NAME NP EVENTS PROGRAM ARGS...: the archive in $out/NAME, the program's stdout in $work.
trace() {
  local name=$1 np=$2 events=$3
  shift 3
  rm -rf "${out:?}/$name"
  mkdir -p "$(dirname "$out/$name")"
  (cd "$work" && "$build/tools/perusetrace" run --mpirun "$mpirun" --events "$events" \
    -o "$out/$name" --mpirun-arg=--oversubscribe --mpirun-arg=--allow-run-as-root \
    --mpirun-arg=-x --mpirun-arg=OMPI_MCA_mpi_yield_when_idle=1 "${extra[@]}" \
    -np "$np" -- "$@" >"$work/$(basename "$name").out")
  echo "$name: $(du -sk "$out/$name" | cut -f1) KiB"
}

extra=()
for scenario in chain late-receiver-isend wrong-order nonblocking alternating; do
  trace "wait_states/$scenario" 4 none "$build/tests/wait_states" "$scenario" 400
done
trace known_counts 4 none "$build/tests/known_counts"
grep '^expect ' "$work/known_counts.out" >"$out/known_counts/expect.txt"
trace late_sender 2 all "$build/examples/scenarios" late-sender -d 100
trace file_io 4 none "$build/tests/file_io"
grep '^io ' "$work/file_io.out" | sort >"$out/file_io/truth.txt"
rm -f "$work"/file_io*.dat
trace rma 4 none "$build/tests/rma"
trace annotated 2 none "$build/tests/annotated_phases" 5 20
trace datatypes 4 none "$build/tests/datatypes"
mkdir -p "$work/polls"
trace polls 4 none "$build/tests/poll_kinds" -d 300 -r 1 -n 20 "$work/polls"
for r in 0 1 2 3; do sed "s/^/$r /" "$work/polls/counts.$r"; done >"$out/polls/truth.txt"
extra=(--pvars all)
trace mpit 2 none "$build/tests/mpit_counts" 100 20
# The clock moved behind the tracer's back needs a preload of its own before the tracer's.
rm -rf "$out/broken_clock"
(cd "$work" && "$mpirun" --oversubscribe --allow-run-as-root -np 2 \
  -x OMPI_MCA_btl_vader_single_copy_mechanism=none -x OMPI_MCA_mpi_yield_when_idle=1 \
  -x LD_PRELOAD="$build/tests/libclock_shift.so:$build/lib/libperusetrace.so" \
  -x CLOCK_SHIFT_RANK=1 -x CLOCK_SHIFT_NS=-50000000 -x MPITRACE_CLOCK=monotonic \
  -x MPITRACE_PERUSE_EVENTS=all -x MPITRACE_OUTPUT="$out/broken_clock" \
  "$build/examples/scenarios" late-sender -d 100 >/dev/null)
echo "broken_clock: $(du -sk "$out/broken_clock" | cut -f1) KiB"
