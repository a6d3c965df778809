#!/usr/bin/env bash
# run-security-parts.sh - where the API's create cost of issue 32 goes: API
# creates/s (bench/run-api-bench.sh, 2,000 jobs, 8 clients) with nothing
# (off: --no-tls, AlwaysAllow), TLS as the admin (RBAC skipped for
# system:masters), TLS + RBAC as a tenant bound to edit, and all of that plus
# the audit log; two ABBA rounds; medians and ratios to off.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-secparts.XXXXXX")
trap 'rm -rf "$out"' EXIT
run() { # name n
  case $1 in
    off) SERVER_FLAGS="--no-tls --authorization-mode AlwaysAllow" bench/run-api-bench.sh --jobs 2000 --clients 8 --namespace bench --json=$out/$1-$2.json >/dev/null 2>&1 ;;
    tls) bench/run-api-bench.sh --jobs 2000 --clients 8 --namespace bench --json=$out/$1-$2.json >/dev/null 2>&1 ;;
    rbac) BENCH_AS_USER=bench bench/run-api-bench.sh --jobs 2000 --clients 8 --namespace bench --json=$out/$1-$2.json >/dev/null 2>&1 ;;
    all) SERVER_FLAGS="--audit-log-path $out/a$2/audit.log" BENCH_AS_USER=bench bench/run-api-bench.sh --jobs 2000 --clients 8 --namespace bench --json=$out/$1-$2.json >/dev/null 2>&1; rm -rf $out/a$2 ;;
  esac
}
n=0
for p in 1 2; do for c in off tls rbac all all rbac tls off; do n=$((n+1)); run $c $n; done; done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, re, sys
r={}
for f in glob.glob(sys.argv[1] + '/*.json'):
    c=re.search(r'/(\w+)-\d+\.json',f).group(1)
    r.setdefault(c,[]).append(json.load(open(f))['create']['per_s'])
base=statistics.median(r['off'])
for c in ('off','tls','rbac','all'):
    m=statistics.median(r[c]); print(c, [round(x) for x in sorted(r[c])], 'median', round(m), 'ratio', round(m/base,3))
PY
