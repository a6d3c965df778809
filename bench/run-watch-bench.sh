#!/usr/bin/env bash
# run-watch-bench.sh - 1,000 watchers on one server while jobs run (issue 29).
#
# Starts a fresh server on simulated nodes, keeps JOBS_RUNNING PyTorchJobs
# (1 master + 3 workers each) running on them for the whole run (each runs
# 20-60 s; a finished one is replaced, so pods start, end and are scheduled
# throughout), and meanwhile runs bench/api_bench's watch phase: WATCHERS
# watch streams on their own connections while one client PATCHes jobs at a
# steady rate. api_bench reports delivery latency over every watcher and
# update, checks every event arrived exactly once, and the PATCH latency; the
# server's RSS and threads are sampled with the streams open.
#
#   BUILD_DIR     where api_bench is (default: build)
#   SERVER_BIN    the trainyard binary to measure (default: $BUILD_DIR/trainyard)
#   WATCHERS      default 1000
#   JOBS_RUNNING  default 100
#   UPDATES       PATCHes sent (default 2000), one every UPDATE_US µs (default 10000)
# Extra arguments go to api_bench.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
SERVER_BIN=${SERVER_BIN:-$BUILD_DIR/trainyard}
WATCHERS=${WATCHERS:-1000}
JOBS_RUNNING=${JOBS_RUNNING:-100}
UPDATES=${UPDATES:-2000}
UPDATE_US=${UPDATE_US:-10000}

cmake --build "$BUILD_DIR" -j2 --target trainyard api_bench >/dev/null
tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-watch-bench.XXXXXX")
server_pid= feeder_pid=
cleanup() {
    if [[ -n "$feeder_pid" ]]; then kill "$feeder_pid" 2>/dev/null || true; wait "$feeder_pid" 2>/dev/null || true; fi
    if [[ -n "$server_pid" ]]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmpdir"
}
trap cleanup EXIT INT TERM

echo "== machine"
echo "cpus:    $(nproc), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (before the run)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "server:  $SERVER_BIN"
echo "run:     $WATCHERS watchers, $JOBS_RUNNING jobs running, $UPDATES PATCHes every ${UPDATE_US} µs"
echo

# Nodes enough for every running job's 4 pods; the server's own limits are
# not what is measured here.
"$SERVER_BIN" server --port 0 --data-dir "$tmpdir/data" --log-level warn --no-local-node \
    --sim-nodes "$((JOBS_RUNNING / 2 + 1))x8:cpu=64,memory=512Gi,pods=110" \
    >"$tmpdir/server.out" 2>"$tmpdir/server.err" &
server_pid=$!
url=
for _ in $(seq 600); do
    url=$(sed -n 's/^listening on \(https\{0,1\}:\/\/[0-9.]*:[0-9]*\).*/\1/p' "$tmpdir/server.out" | head -n1)
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmpdir/server.err" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$url" ]] || { echo "the server did not listen" >&2; exit 1; }
"$SERVER_BIN" kubeconfig --data-dir "$tmpdir/data" --server "$url" -o "$tmpdir/kubeconfig"
# curl as the admin: the server's CA and the token of its data directory
token=$(cut -d, -f1 "$tmpdir/data/tokens.csv" | head -n1)
curl() { command curl --cacert "$tmpdir/data/pki/ca.crt" -H "Authorization: Bearer $token" "$@"; }

curl -sf -XPOST -H 'Content-Type: application/json' "$url/api/v1/namespaces" \
    -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"running"}}' >/dev/null
JOBS_URL="$url/apis/kubeflow.org/v1/namespaces/running/pytorchjobs"
job_json() { # job_json NAME SECONDS
    local tpl='{"metadata":{"annotations":{"trainyard.io/sim-duration":"'$2'"}},"spec":{"containers":[{"name":"pytorch","image":"x","resources":{"requests":{"cpu":"1"}}}]}}'
    printf '{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"%s"},"spec":{"runPolicy":{"cleanPodPolicy":"None"},"pytorchReplicaSpecs":{"Master":{"replicas":1,"restartPolicy":"OnFailure","template":%s},"Worker":{"replicas":3,"restartPolicy":"OnFailure","template":%s}}}}' \
        "$1" "$tpl" "$tpl"
}
# Keeps JOBS_RUNNING jobs that have not finished: each pass lists the jobs,
# deletes the finished ones and creates as many new ones.
feeder() {
    local seq=0
    while :; do
        local fin active
        fin=$(curl -sf "$JOBS_URL" | /usr/bin/python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
done = [j["metadata"]["name"] for j in items
        if any(c["type"] in ("Succeeded", "Failed") and c["status"] == "True"
               for c in j.get("status", {}).get("conditions", []))]
print(len(items) - len(done)); print(" ".join(done))')
        active=$(sed -n 1p <<<"$fin")
        for name in $(sed -n 2p <<<"$fin"); do
            curl -sf -XDELETE "$JOBS_URL/$name" >/dev/null || true
        done
        for _ in $(seq $((JOBS_RUNNING - active))); do
            seq=$((seq + 1))
            job_json "job-$seq" "$((20 + RANDOM % 41))" |
                curl -sf -XPOST -H 'Content-Type: application/json' --data-binary @- "$JOBS_URL" >/dev/null || true
        done
        echo "$seq" >"$tmpdir/jobs-created"
        sleep 2
    done
}
feeder &
feeder_pid=$!
# The run starts once every job has its pods running.
for _ in $(seq 600); do
    running=$(curl -sf "$url/api/v1/namespaces/running/pods?fieldSelector=status.phase=Running" |
        /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
    [[ "$running" -ge $((JOBS_RUNNING * 4 * 9 / 10)) ]] && break
    sleep 1
done
echo "== $running pods running before the watchers open"
rc=0
"$BUILD_DIR/api_bench" --server "$url" --kubeconfig "$tmpdir/kubeconfig" --server-pid "$server_pid" --jobs 100 --clients 4 \
    --watchers "$WATCHERS" --updates "$UPDATES" --update-interval-us "$UPDATE_US" \
    --list-runs 1 "$@" || rc=$?
echo "== jobs created by the feeder during the run: $(cat "$tmpdir/jobs-created" 2>/dev/null)"
echo "== pods running at the end: $(curl -sf "$url/api/v1/namespaces/running/pods?fieldSelector=status.phase=Running" |
    /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')"
kill -0 "$server_pid" 2>/dev/null || { echo "the server died" >&2; rc=1; }
exit "$rc"
