#!/usr/bin/env bash
# Runs the libFuzzer targets of build-fuzz (make fuzz-build), each for
# SECONDS, after replaying every file of its committed corpus
# (tests/fuzz/corpus/<target>: the seeds and each crash found so far, which
# must never crash again). Prints one line per target: runs, execs/s and
# coverage (libFuzzer's cov:, edges reached). Exits 1 if any target found a
# crash; the input is in $FUZZ_OUT/crashes/<target>/ (add it to the corpus as
# crash-<what> with the fix that makes it pass).
#
#   tests/fuzz/run.sh [-k] SECONDS [TARGET...]
#   -k  keep what the run found interesting in $FUZZ_OUT/corpus/<target>
#       (make fuzz); without it that goes in a directory removed at the end.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
keep=0
if [ "${1:-}" = -k ]; then keep=1; shift; fi
secs=${1:?usage: run.sh [-k] SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$here"/fuzz_*.c; do targets+=("$(basename "$f" .c | sed 's/^fuzz_//')"); done
fi
out=${FUZZ_OUT:-$build}
work=$(mktemp -d /tmp/ty-fuzz-run-XXXXXX)
trap 'rm -rf "$work"' EXIT
# Leaks are reported at exit, which the targets reach; a UBSan report
# aborts (-fno-sanitize-recover) and so becomes a crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
printf '%-10s %10s %10s %8s\n' target runs execs/s cov
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  seeds=$here/corpus/$t
  if [ ! -x "$bin" ]; then echo "$t: $bin missing (make fuzz-build)" >&2; failed+=("$t"); continue; fi
  mkdir -p "$out/crashes/$t" "$seeds"
  if [ $keep = 1 ]; then corpus=$out/corpus/$t; else corpus=$work/$t; fi
  mkdir -p "$corpus"
  log=$work/$t.log
  # the committed inputs, each once: the regression tests of the crashes found
  if ! "$bin" -runs=0 -rss_limit_mb=2048 -timeout=60 "$seeds" >"$log" 2>&1; then
    echo "$t: a committed input fails:" >&2; tail -40 "$log" >&2; failed+=("$t"); continue
  fi
  "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=60 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$out/crashes/$t/" "$corpus" "$seeds" >"$log" 2>&1
  rc=$?
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  eps=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log" | tail -1)
  cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$done_line")
  printf '%-10s %10s %10s %8s\n' "$t" "${runs:-?}" "${eps:-?}" "${cov:-?}"
  if [ $rc -ne 0 ]; then
    echo "$t: crashed (exit $rc); input in $out/crashes/$t/" >&2
    grep -E 'ERROR|invariant|SUMMARY|runtime error' "$log" | head -5 >&2
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
