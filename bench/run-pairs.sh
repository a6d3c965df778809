#!/usr/bin/env bash
# run-pairs.sh - two builds benchmarked alternately, in both orders: the API,
# 40,000 and 150,000 simulated pods, launch and 1,000 short jobs (see
# docs/benchmarks.md, "The client and runtime interfaces"). BASE and NEW are
# checkouts with their build/ built. Results in $OUT.
set -uo pipefail
BASE=${BASE:?set BASE to the base checkout (built)}; NEW=${NEW:-.}; OUT=${OUT:-/tmp/bench-pairs}
PAIRS=${PAIRS:-2}
mkdir -p "$OUT"
run() { # name dir cmd...
    local name=$1 dir=$2; shift 2
    echo "=== $name $(date +%T)" >> "$OUT/log"
    (cd "$dir" && "$@") > "$OUT/$name.out" 2>&1
    echo "rc=$? $(date +%T)" >> "$OUT/log"
}
for p in $(seq 1 "$PAIRS"); do
    if (( p % 2 )); then order="base new"; else order="new base"; fi
    for w in $order; do
        d=$BASE; [[ $w == new ]] && d=$NEW
        run "api-$w-$p" "$d" bench/run-api-bench.sh
        run "sched40k-$w-$p" "$d" bench/run-sched-e2e-bench.sh --jobs 5000 --duration 5
        # On tmpfs: on ext4 each run left the next one recently deleted
        # inodes to pay for in its creates (docs/benchmarks.md, issue 31).
        run "launch-$w-$p" "$d" env TMPDIR="${LAUNCH_TMPDIR:-/dev/shm}" \
            bench/run-launch-bench.sh --only trainyard --jobs-launch 1000 --jobs-throughput 1000
    done
done
for p in $(seq 1 "$PAIRS"); do
    if (( p % 2 )); then order="base new"; else order="new base"; fi
    for w in $order; do
        d=$BASE; [[ $w == new ]] && d=$NEW
        run "sched150k-$w-$p" "$d" bench/run-sched-e2e-bench.sh --jobs 18750 --duration 5
    done
done
echo done >> "$OUT/log"
