#!/usr/bin/env bash
# run-cli-bench.sh - the researcher's commands at scale (issue 35): `trainyard
# list -A` over 10,000 training jobs and `trainyard get JOB` of a job of
# 1,000 replicas, each beside kubectl doing the nearest equal read in the
# same run (`kubectl get pytorchjobs -A`, `kubectl get pods -l
# job-name=...`), alternately, REPS times. Reports the median wall time of
# each command and the server's CPU seconds per command (from
# /proc/PID/stat), and the ratios trainyard/kubectl.
#
#   JOBS     training jobs listed (default 10000; suspended: no pods)
#   REPLICAS replicas of the big job (default 1000, on simulated nodes)
#   REPS     runs of each command (default 5)
#
#   bench/run-cli-bench.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
JOBS=${JOBS:-10000}
REPLICAS=${REPLICAS:-1000}
REPS=${REPS:-5}
TY=${TRAINYARD:-$PWD/build/trainyard}
[ -x "$TY" ] || make build >/dev/null || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cli-bench.XXXXXX")
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$TY" server --port 0 --data-dir "$tmp/data" --sim-nodes 125x8:cpu=64,memory=512Gi \
    --no-local-node >"$tmp/server.out" 2>"$tmp/server.err" &
pid=$!
for _ in $(seq 600); do grep -q '^listening on' "$tmp/server.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$tmp/server.out")
[ -n "$url" ] || { echo "server did not start" >&2; cat "$tmp/server.err" >&2; exit 1; }
"$TY" kubeconfig --data-dir "$tmp/data" --server "$url" -o "$tmp/kubeconfig" || exit 1
export KUBECONFIG=$tmp/kubeconfig
unset TRAINYARD_SERVER

echo "creating $JOBS suspended PyTorchJobs and one of $REPLICAS replicas ..." >&2
/usr/bin/python3 - "$url" "$tmp/kubeconfig" "$JOBS" "$REPLICAS" <<'PY' || exit 1
import http.client, json, re, ssl, sys, urllib.parse
url, kc, jobs, replicas = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
token = re.search(r'token: "?([^"\n]+)"?', open(kc).read()).group(1)
u = urllib.parse.urlparse(url)
ctx = ssl._create_unverified_context()
conn = (http.client.HTTPSConnection(u.hostname, u.port, context=ctx) if u.scheme == "https"
        else http.client.HTTPConnection(u.hostname, u.port))
hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
def job(name, workers, suspend):
    tmpl = {"metadata": {"annotations": {"trainyard.io/sim-duration": "3600"}},
            "spec": {"containers": [{"name": "pytorch", "image": "sim", "command": ["true"],
                                     "resources": {"requests": {"cpu": "100m"}}}]}}
    spec = {"runPolicy": {"suspend": suspend},
            "pytorchReplicaSpecs": {"Master": {"replicas": 1, "restartPolicy": "Never", "template": tmpl}}}
    if workers:
        spec["pytorchReplicaSpecs"]["Worker"] = {"replicas": workers, "restartPolicy": "Never", "template": tmpl}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}
def post(obj):
    conn.request("POST", "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", json.dumps(obj), hdr)
    r = conn.getresponse(); body = r.read()
    if r.status != 201:
        sys.exit("create %s: %d %s" % (obj["metadata"]["name"], r.status, body[:200]))
for i in range(jobs):
    post(job("j%05d" % i, 1, True))
post(job("big", replicas - 1, False))
PY
pods() { kubectl get pods -l training.kubeflow.org/job-name=big --no-headers 2>/dev/null | grep -c Running; }
for _ in $(seq 1200); do [ "$(pods)" -ge "$REPLICAS" ] && break; sleep 0.5; done
echo "the big job's pods running: $(pods)" >&2

calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
cpu_s() { awk '{printf "%.3f", ($14 + $15) / '"$(getconf CLK_TCK)"'}' "/proc/$pid/stat"; }
# measure NAME CMD...: one run; appends "wall cpu" to $tmp/NAME
measure() {
    local name=$1 t0 t1 c0 c1
    shift
    c0=$(cpu_s); t0=$(date +%s.%N)
    "$@" >/dev/null 2>"$tmp/err" || { echo "$name failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    t1=$(date +%s.%N); c1=$(cpu_s)
    echo "$(calc "$t1 - $t0") $(calc "$c1 - $c0")" >>"$tmp/$name"
}
for _ in $(seq "$REPS"); do
    measure ty-list "$TY" list -A
    measure kc-list kubectl get pytorchjobs -A
    measure ty-get "$TY" get big
    measure kc-get kubectl get pods -l training.kubeflow.org/job-name=big
done
med() { sort -n -k"$2" "$tmp/$1" | awk -v c="$2" '{v[NR]=$c} END {print v[int((NR+1)/2)]}'; }
printf '%-44s %10s %14s\n' "command (median of $REPS)" "wall s" "server CPU s"
for n in ty-list kc-list ty-get kc-get; do
    case $n in
    ty-list) what="trainyard list -A ($JOBS jobs)" ;;
    kc-list) what="kubectl get pytorchjobs -A" ;;
    ty-get) what="trainyard get big ($REPLICAS replicas)" ;;
    kc-get) what="kubectl get pods -l job-name=big" ;;
    esac
    printf '%-44s %10.3f %14.3f\n' "$what" "$(med $n 1)" "$(med $n 2)"
done
printf 'ratios trainyard/kubectl: list wall %.2f cpu %.2f; get wall %.2f cpu %.2f\n' \
    "$(calc "$(med ty-list 1) / $(med kc-list 1)")" \
    "$(calc "$(med ty-list 2) / ($(med kc-list 2) + 0.001)")" \
    "$(calc "$(med ty-get 1) / $(med kc-get 1)")" \
    "$(calc "$(med ty-get 2) / ($(med kc-get 2) + 0.001)")"
