#!/usr/bin/env bash
# sweep-tuning.sh - the Slurm side of bench/run-launch-bench.sh alone, once
# per configuration: the default profile, then the tuned profile with each
# SchedulerParameters variant below (SLURM_SCHED_PARAMS). Prints one line per
# configuration: launch p50/p99 and throughput. How the tuned profile of
# start-slurm.sh was chosen; run as root.
#
#   sweep-tuning.sh [JOBS_LAUNCH [JOBS_THROUGHPUT]]   (default 10 and 300)
#   SLURM_CPUS   as run-launch-bench.sh (default 108: Trainyard's 27 jobs)
set -euo pipefail
cd "$(dirname "$0")/../.."
launch=${1:-10} tput=${2:-300}
export SLURM_CPUS=${SLURM_CPUS:-108}
variants=(
    ''
    'batch_sched_delay=0'
    'batch_sched_delay=0,defer'
    'batch_sched_delay=0,sched_min_interval=0,default_queue_depth=1000'
    'batch_sched_delay=0,sched_interval=1'
    'batch_sched_delay=0,max_rpc_cnt=16'
)
out=$(mktemp -d "${TMPDIR:-/tmp}/sweep-tuning.XXXXXX")
trap 'rm -rf "$out"' EXIT
one() { # one LABEL PROFILE [PARAMS]
    local label=$1 profile=$2
    if [[ $# -ge 3 ]]; then export SLURM_SCHED_PARAMS=$3; else unset SLURM_SCHED_PARAMS; fi
    SLURM_PROFILES=$profile bench/run-launch-bench.sh --only slurm --jobs-launch "$launch" \
        --jobs-throughput "$tput" --json-dir "$out" >"$out/log" 2>&1 || true
    /usr/bin/python3 - "$out/slurm-$profile.json" "$label" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    l, t = r["launch"]["latency"], r["throughput"]
    print("%-72s launch p50 %6.1f p99 %6.1f ms  %5.2f jobs/s%s" % (
        sys.argv[2], l["p50_ms"], l["p99_ms"], t["jobs_per_s"], "" if t.get("complete", True) else " (incomplete)"))
except Exception as e:
    print("%-72s no result (%s)" % (sys.argv[2], e))
PY
    rm -f "$out"/slurm-*.json
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); SLURM_CPUS=$SLURM_CPUS, $launch + $tput jobs"
one "default profile (Slurm's defaults, MinJobAge=300, debug info)" default
for v in "${variants[@]}"; do
    one "tuned: MinJobAge=2, debug error, SchedulerParameters=${v:-(none)}" tuned "$v"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
