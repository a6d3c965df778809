#!/usr/bin/env bash
# run-sched-core-bench.sh - the gang scheduler core alone (no server): pods
# placed per second, steady-state cycle time and memory, in three runs:
#
#   1. 5,000 nodes x 8 GPUs, 100,000 pods in gangs of 8 (1 GPU each): only
#      40,000 fit; then 200 steady-state cycles (one gang finishes, the next
#      is placed) on the full cluster with 7,500 gangs waiting;
#   2. 12,500 nodes x 8 GPUs, the same 100,000 pods: every one fits;
#   3. 5,000 nodes x 8 GPUs, 150,000 pods: memory at Kubernetes' limits.
#
# Extra arguments go to every bench_sched_core run (e.g. --conf FILE).
#
#   BUILD_DIR   build directory to use (default: build)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
log="${TMPDIR:-/tmp}/run-sched-core-bench.build.$$"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD_DIR" >/dev/null
fi
if ! cmake --build "$BUILD_DIR" -j2 --target bench_sched_core >"$log" 2>&1; then
    if [[ ! -x "$BUILD_DIR/bench_sched_core" ]]; then
        cat "$log" >&2
        rm -f "$log"
        exit 1
    fi
    echo "run-sched-core-bench: WARNING: the build failed; measuring the binary already in $BUILD_DIR" >&2
fi
rm -f "$log"

echo "== machine"
echo "cpus:    $(nproc)"
echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "build:   $BUILD_DIR ($(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null))"
echo

"$BUILD_DIR/bench_sched_core" --nodes 5000 --pods 100000 --gang 8 --steady 200 "$@"
echo
"$BUILD_DIR/bench_sched_core" --nodes 12500 --pods 100000 --gang 8 "$@"
echo
"$BUILD_DIR/bench_sched_core" --nodes 5000 --pods 150000 --gang 8 "$@"
