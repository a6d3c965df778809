#!/usr/bin/env bash
# trainyard simulate: a job trace through the real scheduler core on a virtual
# clock (no server). Traces come from tests/data/traces (copies of the small
# Tiresias files in ../shared/traces).
. "$(dirname "$0")/lib.sh"
DATA="$(cd "$(dirname "$0")/../data/traces" && pwd)"
ty() { "$TRAINYARD" "$@"; }

out=$(ty simulate --trace "$DATA/60_job.csv" --cluster 32x4 --policy fifo 2>&1); rc=$?
expect_eq "60-job trace on 32x4 (fifo) exits 0" 0 "$rc"
expect_match "the table has the average JCT" '^AVG JCT +[0-9.]+ s$' "$out"
expect_match "the table has the p99 JCT" '^P99 JCT +[0-9.]+ s$' "$out"
expect_match "the table has the GPU utilisation" '^GPU UTILIZATION +[0-9.]+ %$' "$out"
expect_match "the table counts the jobs" '^JOBS +60 finished$' "$out"

for p in fifo sjf las; do
    a=$(ty simulate --trace "$DATA/60_job.csv" --cluster 32x4 --policy $p --output json 2>&1)
    b=$(ty simulate --trace "$DATA/60_job.csv" --cluster 32x4 --policy $p --output json 2>&1)
    expect_eq "$p: the JSON is the same on two runs" "$a" "$b"
    for k in avg_jct p99_jct makespan avg_queue_delay gpu_utilization; do
        expect_match "$p: JSON has $k" "\"$k\": [0-9]+\\.[0-9]+,?\$" "$a"
    done
    expect_match "$p: every job finished" '"jobs": 60,' "$a"
done

# The cluster as a Tiresias cluster CSV: n32g4 is the same 32 x 4 GPUs.
a=$(ty simulate --trace "$DATA/60_job.csv" --cluster 32x4 --policy las --output json | grep -v gpus_per_node)
b=$(ty simulate --trace "$DATA/60_job.csv" --cluster "$DATA/n32g4.csv" --policy las --output json | grep -v gpus_per_node)
expect_eq "--cluster n32g4.csv reads as 32x4" "$a" "$b"

# A case worked by hand (one node of 4 GPUs, FIFO head of line):
# A 0-100, B (4 GPUs) 100-150, C held behind B 150-180, D 150-190.
cat >"$E2E_TMP/hand.csv" <<'EOF'
job_id,num_gpu,submit_time,iterations,model_name,duration,interval
0,2,0,1,m,100,0
1,4,10,1,m,50,10
2,1,20,1,m,30,10
3,2,30,1,m,40,10
EOF
out=$(ty simulate --trace "$E2E_TMP/hand.csv" --cluster 1x4 --policy fifo --output json)
expect_match "hand case: average JCT" '"avg_jct": 140.000,' "$out"
expect_match "hand case: p99 JCT" '"p99_jct": 160.000,' "$out"
expect_match "hand case: makespan" '"makespan": 190.000,' "$out"
expect_match "hand case: queueing delay" '"avg_queue_delay": 85.000,' "$out"
expect_match "hand case: GPU utilisation" '"gpu_utilization": 0.671053,' "$out"

# Usage errors exit 2 with a usage line.
usage_err() {
    local name=$1 want=$2; shift 2
    local out rc
    out=$(ty simulate "$@" 2>&1); rc=$?
    expect_eq "$name: exit 2" 2 "$rc"
    expect_match "$name: says why" "$want" "$out"
    expect_match "$name: usage line" '^usage: trainyard simulate ' "$out"
}
usage_err "unknown policy" "unknown policy 'lottery'" --trace "$DATA/60_job.csv" --cluster 32x4 --policy lottery
usage_err "missing --trace" "missing --trace" --cluster 32x4
usage_err "missing --cluster" "missing --cluster" --trace "$DATA/60_job.csv"
usage_err "unreadable trace" "cannot read $E2E_TMP/none.csv" --trace "$E2E_TMP/none.csv" --cluster 32x4
usage_err "bad cluster spec" "bad cluster spec '32by4'" --trace "$DATA/60_job.csv" --cluster 32by4
usage_err "bad output" "unknown output 'xml'" --trace "$DATA/60_job.csv" --cluster 32x4 --output xml
printf 'name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\n' >"$E2E_TMP/pollux.csv"
usage_err "trace without durations" "no job durations" --trace "$E2E_TMP/pollux.csv" --cluster 32x4
expect_match "simulate is in the command list" '^  simulate ' "$(ty --help)"

finish
