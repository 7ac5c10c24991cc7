#!/usr/bin/env bash
# Builds the libFuzzer target for perusetrace's readers (report, prv, recover) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, in BUILD_ROOT/fuzz, and runs it.
#   run_fuzz.sh SOURCE_DIR BUILD_ROOT MPI_PREFIX [libFuzzer options, e.g. -runs=1000 or
#               -max_total_time=600]
# Findings land in BUILD_ROOT/fuzz/findings (crash-*, timeout-*), with the input that caused
# them; rerun one with: BUILD_ROOT/fuzz/tests/fuzz/archive_fuzz FILE
set -euo pipefail
source_dir=$(cd "$1" && pwd)
build_root=$(cd "$2" && pwd)
mpi_prefix=$3
shift 3
for tool in clang clang++; do
  command -v $tool >/dev/null || {
    echo "run_fuzz.sh: $tool is missing: apt-get install clang libclang-rt-14-dev (scripts/setup does)" >&2
    exit 1
  }
done
build=$build_root/fuzz
if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ meson setup "$build" "$source_dir" -Dmpi_prefix="$mpi_prefix" -Dfuzz=true \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$build" tests/fuzz/archive_fuzz >/dev/null

# The corpus to start from: each file of the seed trace and journal, behind its index byte
# (the order of kTargets in archive_fuzz.cpp).
corpus=$build/corpus
mkdir -p "$corpus" "$build/findings"
seeds=$source_dir/tests/fuzz/seeds
i=0
for f in trace/traces.otf2 trace/traces.def trace/traces/0.def trace/traces/0.evt \
  trace/traces/1.evt died/journal/rank-0.defs died/journal/rank-0.thread-0.records \
  died/journal/rank-1.defs; do
  { printf "\\x$(printf %02x $i)"; cat "$seeds/$f"; } >"$corpus/seed-$i"
  { printf "\\x$(printf %02x $((i + 128)))"; cat "$seeds/$f"; } >"$corpus/seed-prv-$i"
  i=$((i + 1))
done
# Huge allocations OTF2 attempts for a damaged count return null instead of ending the run
# (OTF2 then reports an error); leaks inside libotf2 on its error paths are not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$source_dir/tests/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Its scratch copies go to a TMPDIR of their own, which must be empty again afterwards: a run
# here leaves nothing in the machine's /tmp.
scratch=$(mktemp -d)
status=0
TMPDIR=$scratch "$build/tests/fuzz/archive_fuzz" -close_fd_mask=3 -timeout=20 -rss_limit_mb=0 \
  -len_control=0 -artifact_prefix="$build/findings/" "$@" "$corpus" || status=$?
left=$(ls -A "$scratch")
rm -rf "$scratch"
if [[ $status -eq 0 && -n $left ]]; then
  echo "run_fuzz.sh: the fuzzer left its scratch files behind in TMPDIR: $left;" \
    "archive_fuzz.cpp removes them at exit (remove_work, registered with atexit): see that it" \
    "still is" >&2
  exit 1
fi
exit $status
