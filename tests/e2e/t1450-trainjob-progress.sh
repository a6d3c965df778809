#!/usr/bin/env bash
# The TrainJob progress endpoint (Kubeflow Trainer's KEP-2779) served by the
# API server: a training script POSTs {"trainerStatus": ...} with its job's
# token and status.trainerStatus of that job, and of no other, is written.
# The test makes the token Secret of suspended jobs (which the TrainJob
# controller leaves alone) itself, as the controller does (controller/trainer_progress.c: name
# <job>-progress-token, data key token, controlled by the TrainJob), as the
# admin, the one user the API lets make such a Secret. Checked: curl and
# Python's urllib (TLS with the server's CA), another job's token refused
# (401, a Status), bad bodies refused (422 with field paths), at most one
# update per 5 s (429 with Retry-After), a job made again under its name
# not reachable with the old token, and a user who may make Secrets unable
# to plant a token Secret; a pod of the local runtime with what the
# controller gives it posting its progress; a running TrainJob whose
# controller-made Secret and variables its script reports with. And
# `trainyard list` / `get` showing a TrainJob and its progress.
cd "$(dirname "$0")"
source ./lib.sh

start_server

job() { # job NAME [NS]
    kubectl apply -n "${2:-default}" -f - <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $1}
spec:
  suspend: true
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 1, command: [sleep, "600"]}
EOF
}
# token_secret NAME TOKEN [NS]: the Secret the controller would make.
token_secret() {
    local ns=${3:-default} uid
    uid=$(kubectl get trainjob "$1" -n "$ns" -o jsonpath='{.metadata.uid}')
    kubectl apply -n "$ns" -f - <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: $1-progress-token
  labels: {trainer.kubeflow.org/trainjob-name: $1}
  ownerReferences:
  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
stringData: {token: $2}
EOF
}
url() { echo "$SERVER/apis/trainer.kubeflow.org/v1alpha1/namespaces/${2:-default}/trainjobs/$1/status"; }
# post NAME TOKEN BODY: prints the HTTP code, the answer in $E2E_TMP/answer,
# its headers in $E2E_TMP/headers.
post() {
    acurl -s -o "$E2E_TMP/answer" -D "$E2E_TMP/headers" -w '%{http_code}' -X POST \
        -H "Authorization: Bearer $2" -H 'Content-Type: application/json' --data-binary "$3" \
        "$(url "$1")"
}
answer() { cat "$E2E_TMP/answer"; }

TA=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
TB=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
check "TrainJob a (suspended)" job a
check "TrainJob b (suspended)" job b
check "a's token Secret" token_secret a "$TA"
check "b's token Secret" token_secret b "$TB"

# ---- curl ----
body='{"trainerStatus": {"progressPercentage": 40, "estimatedRemainingSeconds": 120,
  "metrics": [{"name": "loss", "value": "0.25"}, {"name": "accuracy", "value": "0.9"}],
  "lastUpdatedTime": "2026-01-23T10:30:45Z"}}'
rv0=$(kubectl get trainjob a -o jsonpath='{.metadata.resourceVersion}')
# The first update and, at once, a second: the second is refused (429)
# unless the machine took 5 s between the two (then there is nothing to
# check; said so). The rest is looked at afterwards.
ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(ms)
code1=$(post a "$TA" "$body")
code2=$(post a "$TA" '{"trainerStatus": {"progressPercentage": 41}}')
took=$(($(ms) - t0))
cp "$E2E_TMP/headers" "$E2E_TMP/headers2"; cp "$E2E_TMP/answer" "$E2E_TMP/answer2"
expect_eq "curl posts a's progress with a's token: 200" 200 "$code1"
out=$(kubectl get trainjob a -o jsonpath='{.status.trainerStatus.progressPercentage} {.status.trainerStatus.estimatedRemainingSeconds} {.status.trainerStatus.metrics[0].name}={.status.trainerStatus.metrics[0].value} {.status.trainerStatus.metrics[1].name} {.status.trainerStatus.lastUpdatedTime}')
if [ "$code2" = 200 ] && [ "$took" -ge 5000 ]; then
    echo "# the two updates took ${took} ms: the 5 s limit not checked here"
    expect_match "status.trainerStatus of a written" "^41 " "$out"
else
    expect_eq "status.trainerStatus of a written" "40 120 loss=0.25 accuracy 2026-01-23T10:30:45Z" "$out"
    # ---- at most one update per 5 s ----
    expect_eq "a second update within 5 s: 429" 429 "$code2"
    expect_match "... with Retry-After" '^Retry-After: [1-5]' "$(tr -d '\r' <"$E2E_TMP/headers2")"
    expect_match "... and a Status TooManyRequests" '"reason":"TooManyRequests".*"retryAfterSeconds":[1-5]' "$(cat "$E2E_TMP/answer2")"
fi
rv1=$(kubectl get trainjob a -o jsonpath='{.metadata.resourceVersion} {.spec.suspend}')
expect_match "a status write: a new resourceVersion, the spec as it was" "^[0-9]+ true$" "$rv1"
[ "${rv1% *}" != "$rv0" ] && pass "... the resourceVersion moved" || fail "... the resourceVersion moved"
expect_eq "b untouched" "" "$(kubectl get trainjob b -o jsonpath='{.status.trainerStatus}')"
# a job's clock is its own
expect_eq "b may post meanwhile" 200 "$(post b "$TB" '{"trainerStatus": {"progressPercentage": 5}}')"
# once the 5 s are past, the next update goes (retried until then, as a
# client told Retry-After does; no sleep is assumed long enough)
again() { [ "$(post a "$TA" '{"trainerStatus": {"progressPercentage": 42}}')" = 200 ]; }
check "after Retry-After the next update of a is taken" wait_until 60 again
expect_eq "... and written, lastUpdatedTime filled when absent" "42 True" \
    "$(kubectl get trainjob a -o json | /usr/bin/python3 -c 'import json,sys; t=json.load(sys.stdin)["status"]["trainerStatus"]; print(t["progressPercentage"], t["lastUpdatedTime"].endswith("Z") and "metrics" not in t)')"

# ---- one job cannot write another's status ----
expect_eq "a's token for b: 401" 401 "$(post b "$TA" '{"trainerStatus": {"progressPercentage": 99}}')"
expect_match "... a Status Unauthorized" '"kind":"Status".*"reason":"Unauthorized"' "$(answer)"
expect_eq "... b not written" 5 "$(kubectl get trainjob b -o jsonpath='{.status.trainerStatus.progressPercentage}')"
expect_eq "no token: 401" 401 "$(acurl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$(url a)")"
expect_eq "the admin's own token is no job's: 401" 401 "$(post a "$E2E_TOKEN" '{"trainerStatus": {}}')"
expect_eq "a job that does not exist: 401" 401 "$(post nope "$TA" '{"trainerStatus": {}}')"
expect_eq "the job's token is no user of the API" 401 \
    "$(acurl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TA" "$SERVER/api/v1/namespaces/default/secrets")"

# ---- bad bodies: 422 with field paths (b's token: its clock is not started by them) ----
bad() { # bad NAME BODY FIELD-REGEX
    local code
    code=$(post b "$TB" "$2")
    expect_eq "$1: 422" 422 "$code"
    expect_match "... Invalid at $3" "\"reason\":\"Invalid\".*\"field\":\"$3\"" "$(answer)"
}
bad "progressPercentage 101" '{"trainerStatus": {"progressPercentage": 101}}' 'trainerStatus\.progressPercentage'
expect_match "... in kube-apiserver's words" 'TrainJob.trainer.kubeflow.org \\"b\\" is invalid: trainerStatus.progressPercentage: Invalid value: 101: trainerStatus.progressPercentage in body should be less than or equal to 100' "$(answer)"
bad "progressPercentage -1" '{"trainerStatus": {"progressPercentage": -1}}' 'trainerStatus\.progressPercentage'
bad "a percentage as text" '{"trainerStatus": {"progressPercentage": "50"}}' 'trainerStatus\.progressPercentage'
bad "estimatedRemainingSeconds < 0" '{"trainerStatus": {"estimatedRemainingSeconds": -5}}' 'trainerStatus\.estimatedRemainingSeconds'
long=$(printf 'x%.0s' $(seq 65))
bad "a metric name past 64 characters" "{\"trainerStatus\": {\"metrics\": [{\"name\": \"ok\", \"value\": \"1\"}, {\"name\": \"$long\", \"value\": \"1\"}]}}" 'trainerStatus\.metrics\[1\]\.name'
bad "a metric value past 64 characters" "{\"trainerStatus\": {\"metrics\": [{\"name\": \"loss\", \"value\": \"$long\"}]}}" 'trainerStatus\.metrics\[0\]\.value'
bad "a metric without a value" '{"trainerStatus": {"metrics": [{"name": "loss"}]}}' 'trainerStatus\.metrics\[0\]\.value'
many=$(/usr/bin/python3 -c 'import json; print(json.dumps({"trainerStatus": {"metrics": [{"name": "m%d" % i, "value": "1"} for i in range(257)]}}))')
bad "257 metrics" "$many" 'trainerStatus\.metrics'
expect_match "... Too many" 'Too many: 257: must have at most 256 items' "$(answer)"
bad "a field upstream does not have" '{"trainerStatus": {"progressPercent": 5}}' 'trainerStatus\.progressPercent'
bad "no trainerStatus" '{"progressPercentage": 5}' 'trainerStatus'
bad "a lastUpdatedTime that is no time" '{"trainerStatus": {"lastUpdatedTime": "yesterday"}}' 'trainerStatus\.lastUpdatedTime'
expect_eq "not JSON: 422" 422 "$(post b "$TB" 'not json')"
expect_eq "... b still as it was" 5 "$(kubectl get trainjob b -o jsonpath='{.status.trainerStatus.progressPercentage}')"

# ---- Python's urllib, as a training script (TLS with the CA, as injected) ----
cp "$(dirname "$0")/progress_report.py" "$E2E_TMP/report.py" && chmod 0644 "$E2E_TMP/report.py"
printf '%s' "$TB" >"$E2E_TMP/b.token"
py() {
    KUBEFLOW_TRAINER_SERVER_URL=$(url b) KUBEFLOW_TRAINER_SERVER_TOKEN=$E2E_TMP/b.token \
        KUBEFLOW_TRAINER_SERVER_CA_CERT=$E2E_CA /usr/bin/python3 "$E2E_TMP/report.py" "$1" epoch=3
}
pyok() { [ "$(py 77)" = 200 ]; }
check "python urllib posts b's progress (retried past b's 5 s)" wait_until 60 pyok
expect_eq "... written" "77 epoch=3" \
    "$(kubectl get trainjob b -o jsonpath='{.status.trainerStatus.progressPercentage} {.status.trainerStatus.metrics[0].name}={.status.trainerStatus.metrics[0].value}')"
expect_eq "... kubectl shows it in describe" 1 "$(kubectl describe trainjob b | grep -c 'Progress Percentage: *77')"

# ---- from a pod, as the controller sets it up ----
# The volume, mounts and variables trainer_progress_inject gives every
# container (controller/trainer_progress.c; its unit test checks that it
# makes exactly these), on a pod of the local runtime: the token and CA
# read from the mounted Secret, the server reached at its own address.
check "TrainJob p" job p
TP=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
puid=$(kubectl get trainjob p -o jsonpath='{.metadata.uid}')
/usr/bin/python3 - "$TP" "$puid" "${E2E_CA:-}" >"$E2E_TMP/p-secret.json" <<'EOF'
import json, sys
tok, uid, ca = sys.argv[1:4]
data = {"token": tok}
if ca:
    data["ca.crt"] = open(ca).read()
print(json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {
    "name": "p-progress-token", "labels": {"trainer.kubeflow.org/trainjob-name": "p"},
    "ownerReferences": [{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                         "name": "p", "uid": uid, "controller": True,
                         "blockOwnerDeletion": True}]},
    "type": "Opaque", "stringData": data}))
EOF
check "p's token Secret (with the CA under TLS)" kubectl apply -f "$E2E_TMP/p-secret.json"
cp "$E2E_TMP/report.py" "$E2E_TMP/pod-report.py" && chmod 0644 "$E2E_TMP/pod-report.py"
ca_env="" ca_item=""
if [ -n "${E2E_CA:-}" ]; then
    ca_env='{"name": "KUBEFLOW_TRAINER_SERVER_CA_CERT", "value": "/var/run/secrets/trainer.kubeflow.org/ca.crt"},'
    ca_item=', {"key": "ca.crt", "path": "ca.crt"}'
fi
check "a pod of p reporting 33% (urllib's default Content-Type)" kubectl apply -f - <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "p-node-0-0", "labels": {"jobset.sigs.k8s.io/jobset-name": "p", "jobset.sigs.k8s.io/replicatedjob-name": "node", "trainer.kubeflow.org/trainjob-name": "p"}},
 "spec": {"restartPolicy": "Never",
  "containers": [{"name": "node", "image": "local", "command": ["/usr/bin/python3", "$E2E_TMP/pod-report.py", "33", "epoch=3", "plain"],
   "env": [{"name": "KUBEFLOW_TRAINER_SERVER_URL", "value": "$(url p)"},
           {"name": "KUBEFLOW_TRAINER_SERVER_TOKEN", "value": "/var/run/secrets/trainer.kubeflow.org/token"}, $ca_env
           {"name": "X", "value": "1"}],
   "volumeMounts": [{"name": "kubeflow-trainer-progress", "mountPath": "/var/run/secrets/trainer.kubeflow.org", "readOnly": true}]}],
  "volumes": [{"name": "kubeflow-trainer-progress", "secret": {"secretName": "p-progress-token", "items": [{"key": "token", "path": "token"}$ca_item]}}]}}
EOF
podend() { case "$(kubectl get pod p-node-0-0 -o jsonpath='{.status.phase}')" in Succeeded|Failed) true ;; *) false ;; esac; }
check "the pod ran" wait_until podend
expect_eq "... and its script was answered 200" 200 "$(kubectl logs p-node-0-0 2>&1 | tail -1)"
expect_eq "... p's status.trainerStatus written from the pod" 33 \
    "$(kubectl get trainjob p -o jsonpath='{.status.trainerStatus.progressPercentage}')"
expect_eq "trainyard logs p: its node pod's" 200 "$("$TRAINYARD" logs p 2>&1 | tail -1)"

# ---- trainyard list / get ----
# a pod of a, as the TrainJob controller labels them (no controller runs
# here; a scheduler no one serves keeps it Pending)
check "a pod of a's node replicated job" kubectl apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: a-node-0-0-x
  labels: {jobset.sigs.k8s.io/jobset-name: a, jobset.sigs.k8s.io/replicatedjob-name: node, batch.kubernetes.io/job-completion-index: "0", trainer.kubeflow.org/trainjob-name: a}
spec:
  schedulerName: nobody
  containers: [{name: node, image: busybox, command: ["true"]}]
EOF
out=$("$TRAINYARD" list 2>&1)
expect_match "list: the columns with PROGRESS when a TrainJob reported one" '^NAME +STATUS +TRAINER +DURATION +GPU\(Requested\) +GPU\(Allocated\) +NODE +QUEUE +USER +PROGRESS$' "$out"
expect_match "list: a, a TrainJob, Suspended, 42%" '^a +Suspended +TrainJob +[0-9smhd]+ +0 +0 +N/A +default +admin +42%$' "$out"
expect_match "list: b with its progress" '^b +Suspended +TrainJob .* 77%$' "$out"
out=$("$TRAINYARD" list -o json 2>&1)
expect_match "list -o json: kind" '"trainer": "TrainJob"' "$out"
expect_match "... and progress" '"progress": "77%"' "$out"
out=$("$TRAINYARD" get a 2>&1)
expect_match "get a: Kind TrainJob" '^Kind: +TrainJob \(trainer.kubeflow.org/v1alpha1\)' "$out"
expect_match "get a: Progress" '^Progress: +42%, updated .* ago' "$out"
expect_match "get a: Replicas from its pods" '^Replicas: +node 1 x 0 GPU' "$out"
expect_match "get a: the pod, role node/0" 'a-node-0-0-x +Pending +.* node/0 ' "$out"
expect_match "get trainjob/b: Metrics" '^Metrics: +epoch=3$' "$("$TRAINYARD" get trainjob/b 2>&1)"
# a training script's metric may hold escape sequences (upstream's schema
# allows any string): the researcher's terminal gets them inert (termsafe.h)
esc_metric() { [ "$(post a "$TA" '{"trainerStatus": {"metrics": [{"name": "loss\u001b[2J", "value": "0.1\u001b]0;pwned\u0007"}]}}')" = 200 ]; }
check "a metric with escape sequences is accepted" wait_until 60 esc_metric
out=$("$TRAINYARD" get trainjob/a 2>&1)
expect_match "get: its escapes printed inert, as kubectl prints them" '^Metrics: +loss\^\[\[2J=0\.1\^\[\]0;pwned\^G$' "$out"
expect_eq "... no ESC or BEL reaches the terminal" 0 "$(printf '%s' "$out" | tr -cd '\033\007' | wc -c)"
check "kubectl delete the pod" kubectl delete pod a-node-0-0-x --wait=false
check "trainyard resume a" "$TRAINYARD" resume a
expect_eq "... spec.suspend false" false "$(kubectl get trainjob a -o jsonpath='{.spec.suspend}')"
check "trainyard suspend trainjob/a" "$TRAINYARD" suspend trainjob/a
expect_eq "... spec.suspend true" true "$(kubectl get trainjob a -o jsonpath='{.spec.suspend}')"

# ---- a job made again under its name: the old token is the old job's ----
check "delete b" kubectl delete trainjob b --wait=false
check "b again" job b
expect_eq "the old b's token does not write the new b" 401 "$(post b "$TB" '{"trainerStatus": {"progressPercentage": 1}}')"
expect_eq "... nothing written" "" "$(kubectl get trainjob b -o jsonpath='{.status.trainerStatus}')"

# ---- who may make a token Secret ----
check "user alice (edit in namespace alice)" "$TRAINYARD" user add alice --data-dir "$E2E_TMP/data" -o "$E2E_TMP/alice.kc"
check "a TrainJob in alice's namespace" job c alice
uid=$(kubectl get trainjob c -n alice -o jsonpath='{.metadata.uid}')
out=$(kubectl --kubeconfig "$E2E_TMP/alice.kc" create -f - 2>&1 <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: c-progress-token
  ownerReferences:
  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: c, uid: $uid, controller: true}
stringData: {token: planted}
EOF
)
expect_match "alice may not plant a token Secret controlled by the TrainJob" 'Forbidden|forbidden: a Secret controlled by a TrainJob is made by the trainer controller' "$out"
expect_eq "... and with it nobody writes c's progress" 401 \
    "$(acurl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer planted' -H 'Content-Type: application/json' -d '{"trainerStatus": {"progressPercentage": 1}}' "$(url c alice)")"
check "she still makes Secrets of her own" kubectl --kubeconfig "$E2E_TMP/alice.kc" create secret generic mine --from-literal=k=v
out=$(kubectl --kubeconfig "$E2E_TMP/alice.kc" create -f - 2>&1 <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: c-ssh-keys
  ownerReferences:
  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: c, uid: $uid, controller: true}
stringData: {k: v}
EOF
)
expect_match "... and one controlled by c under another name (no token: the MPI runtime's keys are such)" 'created' "$out"
check "the admin's token Secret for c" token_secret c planted2 alice
out=$(kubectl --kubeconfig "$E2E_TMP/alice.kc" patch secret c-progress-token --type merge -p '{"data": {"token": "cGxhbnRlZA=="}}' 2>&1)
expect_match "... whose token she may not change" 'forbidden' "$out"
check "... though she may label it" kubectl --kubeconfig "$E2E_TMP/alice.kc" label secret c-progress-token seen=yes

# ---- the whole way: the controller's token Secret and variables ----
# A TrainJob that runs: the TrainJob controller makes its token Secret and
# gives its node pod the variables; the training script reports with them.
cp "$E2E_TMP/report.py" "$E2E_TMP/run-report.py" && chmod 0644 "$E2E_TMP/run-report.py"
# running_tj NAME COMMAND: a one-node torch TrainJob that runs COMMAND (a
# YAML flow sequence)
running_tj() {
    kubectl apply -f - <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $1}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 1
    command: $2
EOF
}
check "TrainJob r, running a script that reports 55%" \
    running_tj r "[/usr/bin/python3, $E2E_TMP/run-report.py, \"55\", \"epoch=3\"]"
check "r completes" wait_until 120 tj_cond_is r Complete "True AllJobsCompleted"
expect_eq "... its script was answered 200" 200 "$(kubectl logs r-node-0-0 -c node 2>&1 | tail -1)"
expect_eq "... r's status.trainerStatus written by its own pod" 55 \
    "$(kubectl get trainjob r -o jsonpath='{.status.trainerStatus.progressPercentage}')"
expect_eq "... the controller made r's token Secret, controlled by r" \
    "$(kubectl get trainjob r -o jsonpath='{.metadata.uid}')" \
    "$(kubectl get secret r-progress-token -o jsonpath='{.metadata.ownerReferences[?(@.controller==true)].uid}')"

# ---- a token Secret deleted while its job runs ----
# The pods hold their token; it is the job's under the server's key, so it
# stays good (it was refused once the Secret was gone), and the Secret is
# made again, the same, when the controller next makes a pod.
check "TrainJob late, whose script reports once told to" running_tj late \
    "[/bin/sh, -c, \"until [ -e $E2E_TMP/go-late ]; do sleep 0.2; done; /usr/bin/python3 $E2E_TMP/run-report.py 70 epoch=4\"]"
check "late runs" wait_until 120 pods_in_phase Running late-node-0-0
check "its token Secret is deleted while it runs" kubectl delete secret late-progress-token
touch "$E2E_TMP/go-late"
check "late completes" wait_until 120 tj_cond_is late Complete "True AllJobsCompleted"
expect_eq "... its script's report was still answered 200" 200 \
    "$(kubectl logs late-node-0-0 -c node 2>&1 | tail -1)"
expect_eq "... and written" 70 \
    "$(kubectl get trainjob late -o jsonpath='{.status.trainerStatus.progressPercentage}')"

# ---- the token Secret goes with its job ----
check "delete a" kubectl delete trainjob a
gone() { ! kubectl get secret a-progress-token >/dev/null 2>&1; }
check "a's token Secret collected with it" wait_until gone

finish
