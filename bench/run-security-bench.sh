#!/usr/bin/env bash
# run-security-bench.sh - what authentication, TLS, RBAC and the audit log
# cost: API creates/s (bench/api_bench) and job launch latency
# (bench/launch_bench) against one build's server in two configurations,
# run alternately in one run (ABBA order, so that neither always goes
# first: on these machines the second run of a pair is often the slower):
#
#   off  --no-tls --authorization-mode AlwaysAllow, no audit log (a bearer
#        token is still checked: the server has no way to skip that)
#   on   the defaults (TLS, RBAC) as a user bound to edit (RBAC asked on
#        every request; the admin's system:masters would skip it) with
#        --audit-log-path (Metadata level, every request)
#
#   PAIRS=N   rounds (default 3; each runs both configurations twice)
#   JOBS=N    api_bench jobs per run (default 2000), CLIENTS=N (default 8)
#   LAUNCH=0  skip the launch benchmark
#   BUILD_DIR build directory (default: build)
# Prints every run's figures and the medians' ratios (on / off).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PAIRS=${PAIRS:-3} JOBS=${JOBS:-2000} CLIENTS=${CLIENTS:-8} LAUNCH=${LAUNCH:-1}
export BUILD_DIR
out=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-secbench.XXXXXX")
trap 'rm -rf "$out"' EXIT
OFF_FLAGS="--no-tls --authorization-mode AlwaysAllow"

api() { # CONFIG N
    local f="$out/api-$1-$2.json"
    if [[ $1 == off ]]; then
        SERVER_FLAGS=$OFF_FLAGS bench/run-api-bench.sh --jobs "$JOBS" --clients "$CLIENTS" \
            --namespace bench --json="$f" >"$out/api-$1-$2.log" 2>&1
    else
        SERVER_FLAGS="--audit-log-path $out/audit-$2/audit.log" BENCH_AS_USER=bench \
            bench/run-api-bench.sh --jobs "$JOBS" --clients "$CLIENTS" --namespace bench \
            --json="$f" >"$out/api-$1-$2.log" 2>&1
    fi || { echo "api $1 run $2 failed:"; tail -20 "$out/api-$1-$2.log"; exit 1; }
    rm -rf "$out/audit-$2"
}
launch() { # CONFIG N
    local flags=$OFF_FLAGS
    [[ $1 == on ]] && flags="--audit-log-path $out/audit-l$2/audit.log"
    SERVER_FLAGS=$flags bench/run-launch-bench.sh --only trainyard --jobs-launch 200 \
        --jobs-throughput 200 --json-dir "$out/launch-$1-$2" >"$out/launch-$1-$2.log" 2>&1 ||
        { echo "launch $1 run $2 failed:"; tail -20 "$out/launch-$1-$2.log"; exit 1; }
    rm -rf "$out/audit-l$2"
}

echo "== machine: $(nproc) cpus, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "== commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
n=0
for ((p = 0; p < PAIRS; p++)); do
    for c in off on on off; do
        n=$((n + 1))
        api "$c" "$n"
        [[ $LAUNCH == 1 ]] && launch "$c" "$n"
        echo "run $n ($c) done"
    done
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, re, statistics, sys
out = sys.argv[1]
def num(d, *keys):
    for k in keys:
        if isinstance(d, dict) and k in d: d = d[k]
        else: return None
    return d
rows = {"off": {"creates": [], "p99": [], "p50": []}, "on": {"creates": [], "p99": [], "p50": []}}
for f in sorted(glob.glob(os.path.join(out, "api-*.json"))):
    c = re.search(r"api-(on|off)-", f).group(1)
    d = json.load(open(f))
    rows[c]["creates"].append(num(d, "create", "per_s"))
for f in sorted(glob.glob(os.path.join(out, "launch-*/trainyard.json"))):
    c = re.search(r"launch-(on|off)-", f).group(1)
    d = json.load(open(f))
    rows[c]["p99"].append(num(d, "launch", "latency", "p99_ms"))
    rows[c]["p50"].append(num(d, "launch", "latency", "p50_ms"))
for c in ("off", "on"):
    print(c, {k: v for k, v in rows[c].items() if v})
def med(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else None
for k, name in (("creates", "API creates/s"), ("p50", "launch p50 ms"), ("p99", "launch p99 ms")):
    a, b = med(rows["off"][k]), med(rows["on"][k])
    if a and b: print(f"{name}: off {a:.1f}, on {b:.1f}, on/off {b / a:.3f}")
PY
