#!/usr/bin/env bash
# Writes the small archives tests/wait_states_test.cpp reads: tests/apps/wait_states' scenarios
# chain, late-receiver-isend, wrong-order, nonblocking and alternating (400 ms delays)
# on 4 ranks, traced without Peruse events (the wait states need none) so each stays small.
# Run from a configured build:   tests/data/make_wait_state_archives.sh [BUILD_DIR]
# It replaces tests/data/wait_states/*/; re-run it when the archive format changes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build}
mpirun=${MPITRACE_MPIRUN:-${XDG_CACHE_HOME:-$HOME/.cache}/perusetrace/openmpi-4.1.4-peruse/bin/mpirun}
out=$repo/tests/data/wait_states
mkdir -p "$out"
export OMPI_MCA_btl_vader_single_copy_mechanism=none
for scenario in chain late-receiver-isend wrong-order nonblocking alternating; do
  rm -rf "$out/$scenario"
  "$build/tools/perusetrace" run --mpirun "$mpirun" --events none -o "$out/$scenario" \
    --mpirun-arg=--oversubscribe --mpirun-arg=--allow-run-as-root \
    --mpirun-arg=-x --mpirun-arg=OMPI_MCA_mpi_yield_when_idle=1 \
    -np 4 -- "$build/tests/wait_states" "$scenario" 400 >/dev/null
  echo "$scenario: $(du -sk "$out/$scenario" | cut -f1) KiB"
done
