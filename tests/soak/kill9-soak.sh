#!/usr/bin/env bash
# kill9-soak.sh - the server SIGKILLed at random moments while Volcano Jobs
# run, and restarted each time; at the end every job has its right end
# state, every replica ran exactly once, and every log line and exit code is
# there.
#
#   TRAINYARD=build/trainyard tests/soak/kill9-soak.sh [-j JOBS] [-k KILLS] [-s SEED]
#                                   [-g TENTHS] [-t SECONDS] [-K volcano|pytorch]
#
# JOBS jobs (default 30) of 3 or 4 replicas each; a replica appends a line to
# a file of its own outside the data directory each time it starts, prints
# a known number of numbered lines, and exits with its job's code (0, or 3
# for about a third of the jobs: those end Failed). minAvailable is 1 (job
# and task), so that a job fails only once all its replicas failed: a job
# that fails earlier kills the replicas still running, whose ends are then
# not known. Half the jobs are created first, the rest in shares after each
# restart. KILLS (default 20) kill -9s of the server, each at a random
# moment up to TENTHS tenths of a second (default 30) after the server is up
# again (SEED, default the time), each followed by a restart. SECONDS
# (default 600) bounds the wait for the jobs to end after the last restart.
# -K pytorch runs PyTorchJobs (a Master and 2 or 3 Workers,
# restartPolicy Never) instead of Volcano Jobs. Exit status 0 when
# everything checks out; the failures are listed otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${TRAINYARD:=$here/../../build/trainyard}"
export TRAINYARD
jobs=30 kills=20 seed=$(date +%s) secs=600 gap=30 kind=volcano
while getopts "j:k:s:t:g:K:" o; do
    case $o in
    j) jobs=$OPTARG ;; k) kills=$OPTARG ;; s) seed=$OPTARG ;; t) secs=$OPTARG ;;
    g) gap=$OPTARG ;; K) kind=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
    esac
done
. "$here/../e2e/lib.sh"
E2E_DATA="$E2E_TMP/data"
MARKS="$E2E_TMP/starts"
mkdir -p "$MARKS"
chmod 1777 "$MARKS" # the pods run as their users, not root
ctname=main
[ "$kind" = pytorch ] && ctname=pytorch
RANDOM=$seed
echo "# kill9-soak: jobs=$jobs kills=$kills seed=$seed"

# ctr INDENT: the replica's container list, indented (a PyTorchJob's
# container must be named pytorch).
ctr() {
    printf '%s\n' "containers:" "- name: $ctname" "  image: busybox" \
        "  env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]" \
        "  command: [sh, -c, \"$cmd\"]" | sed "s/^/$1/"
}

# The jobs, and what each must end with: name replicas lines code.
plan="$E2E_TMP/plan"
: >"$plan"
for j in $(seq "$jobs"); do
    reps=$((3 + RANDOM % 2)) lines=$((5 + RANDOM % 20)) code=0
    [ $((RANDOM % 3)) = 0 ] && code=3
    echo "soak-$j $reps $lines $code" >>"$plan"
    # A replica: one line per start outside the data directory, LINES
    # numbered lines, then its job's exit code.
    cmd="echo start >> $MARKS/\$POD_NAME; i=1; while [ \$i -le $lines ]; do echo line \$i of \$POD_NAME; i=\$((i + 1)); sleep 0.\$((RANDOM % 5)); done; exit $code"
    if [ "$kind" = pytorch ]; then
        cat >"$E2E_TMP/job-$j.yaml" <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: soak-$j}
spec:
  runPolicy: {cleanPodPolicy: None}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
$(ctr "          ")
    Worker:
      replicas: $((reps - 1))
      restartPolicy: Never
      template:
        spec:
$(ctr "          ")
YAML
        continue
    fi
    cat >"$E2E_TMP/job-$j.yaml" <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: soak-$j}
spec:
  minAvailable: 1
  tasks:
  - name: r
    replicas: $reps
    minAvailable: 1
    template:
      spec:
        restartPolicy: Never
$(ctr "        ")
YAML
done

# apply_jobs FROM TO: creates those jobs, retried until the server takes
# them (a kill may cut a request short; apply is idempotent).
apply_jobs() {
    local j
    for j in $(seq "$1" "$2"); do
        for _ in $(seq 120); do
            kubectl --request-timeout=20s apply -f "$E2E_TMP/job-$j.yaml" >"$E2E_TMP/apply.out" 2>&1 && continue 2
            sleep 0.5
        done
        echo "FAIL - job soak-$j could not be created:"; cat "$E2E_TMP/apply.out"; exit 1
    done
}

# Half the jobs before the first kill, the rest a share after each restart:
# kills land in job and pod creation too.
start_server --fake-gpus 0 --node-name soak-node
created=$(( (jobs + 1) / 2 ))
apply_jobs 1 "$created"
for k in $(seq "$kills"); do
    # Up to GAP tenths of a second after the server listens: some kills land
    # in its adoption, some in a burst of pod starts, some in their ends.
    t=$((RANDOM % gap))
    sleep "$((t / 10)).$((t % 10))"
    kill -9 "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
    start_server --fake-gpus 0 --node-name soak-node
    next=$(( created + (jobs - created + kills - k) / (kills - k + 1) ))
    [ "$next" -gt "$created" ] && apply_jobs $((created + 1)) "$next"
    created=$next
done
[ "$created" -lt "$jobs" ] && apply_jobs $((created + 1)) "$jobs"
echo "# $kills kills done; waiting for the jobs to end"

if [ "$kind" = pytorch ]; then
    resource=pytorchjobs.kubeflow.org state='{.status.conditions[-1:].type}'
else
    resource=jobs.batch.volcano.sh state='{.status.state.phase}'
fi
ended() {
    kubectl --request-timeout=20s get "$resource" -o jsonpath="{range .items[*]}$state{\"\\n\"}{end}" \
        2>/dev/null | grep -cE '^(Completed|Succeeded|Failed)$'
}
deadline=$((SECONDS + secs))
while [ "$(ended)" != "$jobs" ] && [ $SECONDS -lt $deadline ]; do sleep 1; done

kubectl --request-timeout=60s get "$resource" -o json >"$E2E_TMP/jobs.json"
kubectl --request-timeout=60s get pods -o json >"$E2E_TMP/pods.json"
/usr/bin/python3 - "$plan" "$E2E_TMP" "$MARKS" "$kind" <<'PY'
import json, os, subprocess, sys
plan, tmp, marks, kind = sys.argv[1:5]
jobs = {j["metadata"]["name"]: j for j in json.load(open(f"{tmp}/jobs.json"))["items"]}
pods = {p["metadata"]["name"]: p for p in json.load(open(f"{tmp}/pods.json"))["items"]}

def end_of(job):
    st = job.get("status", {})
    if kind == "pytorch":
        return ((st.get("conditions") or [{}])[-1]).get("type")
    return st.get("state", {}).get("phase")

def replicas(name, reps):
    if kind == "pytorch":
        return [f"{name}-master-0"] + [f"{name}-worker-{i}" for i in range(reps - 1)]
    return [f"{name}-r-{i}" for i in range(reps)]

bad, npods = [], 0
for row in open(plan):
    name, reps, lines, code = row.split()
    reps, lines, code = int(reps), int(lines), int(code)
    want = ("Succeeded" if kind == "pytorch" else "Completed") if code == 0 else "Failed"
    got = end_of(jobs.get(name, {}))
    if got != want:
        bad.append(f"{name}: phase {got}, want {want}")
    for pod in replicas(name, reps):
        npods += 1
        try:
            starts = len(open(f"{marks}/{pod}").read().splitlines())
        except OSError:
            starts = 0
        if starts != 1:
            bad.append(f"{pod}: started {starts} times")
        p = pods.get(pod)
        if not p:
            bad.append(f"{pod}: no such pod")
            continue
        term = ((p.get("status", {}).get("containerStatuses") or [{}])[0]
                .get("state", {}).get("terminated") or {})
        if term.get("exitCode") != code:
            bad.append(f"{pod}: exit code {term.get('exitCode')} ({term.get('reason')}: "
                       f"{term.get('message', '')}), want {code}")
        log = subprocess.run(["kubectl", "--request-timeout=20s", "logs", pod, "--all-containers"],
                             capture_output=True, text=True).stdout.splitlines()
        want_log = [f"line {n} of {pod}" for n in range(1, lines + 1)]
        if log != want_log:
            bad.append(f"{pod}: log has {len(log)} lines, want {lines}"
                       + (f" (first difference: {next((a, b) for a, b in zip(log + [''] * lines, want_log) if a != b)})"
                          if log[:lines] != want_log else ""))
print(f"# {len(jobs)} jobs, {npods} replicas checked")
if bad:
    for row in open(plan):
        name = row.split()[0]
        if not any(b.startswith(name + ":") or b.startswith(name + "-") for b in bad):
            continue
        st = jobs.get(name, {}).get("status", {})
        print(f"#   {row.strip()}: {json.dumps(st)[:400]}")
for b in bad:
    print("FAIL -", b)
sys.exit(1 if bad else 0)
PY
rc=$?
if [ $rc = 0 ]; then
    echo "ok   - kill9-soak jobs=$jobs kills=$kills seed=$seed: every end state, start, line and exit code right"
else
    echo "FAIL - kill9-soak jobs=$jobs kills=$kills seed=$seed"
    tail -20 "$E2E_TMP/server.err" | sed 's/^/     | /'
fi
exit $rc
