#!/usr/bin/env bash
# run-simulate-bench.sh - how long `trainyard simulate` takes on the Philly
# extract (82,247 jobs) on 300 x 8 GPUs for each policy, and what each policy
# gives on the Tiresias 60-job trace on 32 x 4 GPUs (where it hardly queues)
# and on a loaded cluster of 2 x 4 GPUs.
#
# Builds if needed, then for each policy prints the wall time (from bash's
# `time`, one run each) and the JSON summary, and the ratio of LAS's average
# JCT to FIFO's for the 60-job runs.
#
#   --cluster SPEC   the cluster for the Philly runs (default 300x8)
#   --policies LIST  comma separated (default fifo,sjf,las)
#   --small-clusters LIST  clusters for the 60-job trace (default 32x4,2x4)
#
#   BUILD_DIR   build directory to use (default: build)
#   TRACES      the traces folder (default: ../shared/traces next to the repository)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
TRACES=${TRACES:-../shared/traces}
cluster=300x8 policies=fifo,sjf,las small=32x4,2x4
while (($#)); do
    case $1 in
    --cluster) cluster=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --small-clusters) small=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-simulate-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done

if [ ! -x "$BUILD_DIR/trainyard" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$BUILD_DIR" -j"$(nproc)" --target trainyard >/dev/null
fi
TY="$BUILD_DIR/trainyard"
PHILLY="$TRACES/pollux/philly.csv"
SMALL="$TRACES/tiresias/60_job.csv"
[ -r "$PHILLY" ] || { echo "run-simulate-bench: cannot read $PHILLY (set TRACES)" >&2; exit 1; }

field() { sed -n "s/^  \"$1\": \\([^,]*\\),\\{0,1\\}\$/\\1/p"; }

summary() {
    printf 'jobs %s  avg_jct %s  p99_jct %s  makespan %s  avg_queue_delay %s  gpu_utilization %s  preemptions %s\n' \
        "$(field jobs <<<"$1")" "$(field avg_jct <<<"$1")" "$(field p99_jct <<<"$1")" \
        "$(field makespan <<<"$1")" "$(field avg_queue_delay <<<"$1")" \
        "$(field gpu_utilization <<<"$1")" "$(field preemptions <<<"$1")"
}

echo "# trainyard simulate, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "## Philly extract on $cluster"
IFS=, read -ra plist <<<"$policies"
for p in "${plist[@]}"; do
    start=$(date +%s.%N)
    out=$("$TY" simulate --trace "$PHILLY" --cluster "$cluster" --policy "$p" --output json)
    end=$(date +%s.%N)
    printf '%-5s wall %6.2f s  %s\n' "$p" "$(echo "$end - $start" | bc)" "$(summary "$out")"
done

IFS=, read -ra clist <<<"$small"
for c in "${clist[@]}"; do
    echo "## Tiresias 60-job trace on $c"
    declare -A avg=()
    for p in "${plist[@]}"; do
        out=$("$TY" simulate --trace "$SMALL" --cluster "$c" --policy "$p" --output json)
        avg[$p]=$(field avg_jct <<<"$out")
        printf '%-5s %s\n' "$p" "$(summary "$out")"
    done
    if [ -n "${avg[fifo]:-}" ] && [ -n "${avg[las]:-}" ]; then
        echo "las / fifo average JCT: $(echo "scale=3; ${avg[las]} / ${avg[fifo]}" | bc)"
    fi
done
