#!/usr/bin/env bash
# The TrainJob progress endpoint in operator mode: `trainyard operator
# --progress-url` serves it on the webhook's HTTPS listener, and the
# TrainJob controller gives the jobs' pods its URL, CA and a token derived
# from the operator's key (a cluster lets anyone who may make Secrets make
# one named <job>-progress-token: the endpoint never trusts that Secret).
# Checked: a running TrainJob's script reports its progress with what the
# controller gave it; a planted token Secret, another job's token and no
# token are refused (401); a bad body (422 with its field path); at most
# one update per 5 s (429, Retry-After); the flags' checks.
cd "$(dirname "$0")"
source ./lib.sh

start_server --api-only
data=$E2E_TMP/data
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$("$TRAINYARD" operator --kubeconfig "$KUBECONFIG" --progress-url https://127.0.0.1:$port 2>&1)
expect_match "--progress-url needs the webhook's certificate" 'needs --tls-cert-file' "$out"
out=$("$TRAINYARD" operator --kubeconfig "$KUBECONFIG" --tls-cert-file "$data/pki/apiserver.crt" \
    --tls-private-key-file "$data/pki/apiserver.key" --progress-url "https://127.0.0.1:$port/x" 2>&1)
expect_match "--progress-url takes no path" 'want https://HOST\[:PORT\], no path' "$out"
# The URL names the webhook's port, so the port is picked here: another
# process may take it before the operator binds it, then try another.
started=""
for try in 1 2 3 4 5; do
    try_operator --scheduler-name volcano --scheduler-name default-scheduler \
        --tls-cert-file "$data/pki/apiserver.crt" --tls-private-key-file "$data/pki/apiserver.key" \
        --webhook-port "$port" --progress-url "https://127.0.0.1:$port" --progress-ca-file "$data/pki/ca.crt" &&
        { started=1; break; }
    grep -q 'in use' "$E2E_TMP/operator.err" || break
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
done
[ -n "$started" ] || { cat "$E2E_TMP/operator.err"; fail "the operator did not start"; finish; exit 1; }
expect_match "the operator serves the endpoint" 'TrainJob progress' "$(cat "$E2E_TMP/operator.err")"
EP="https://127.0.0.1:$port/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs"
# ep_post JOB TOKEN BODY: the HTTP code; answer and headers in $E2E_TMP
ep_post() {
    curl -s --cacert "$data/pki/ca.crt" -o "$E2E_TMP/answer" -D "$E2E_TMP/headers" -w '%{http_code}' \
        -X POST -H "Authorization: Bearer $2" -H 'Content-Type: application/json' --data-binary "$3" "$EP/$1/status"
}

cp "$(dirname "$0")/progress_report.py" "$E2E_TMP/report.py" && chmod 0644 "$E2E_TMP/report.py"
check "TrainJob r, whose script reports 40%" kubectl apply -f - <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: r}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 1
    command: [/usr/bin/python3, $E2E_TMP/report.py, "40", "loss=0.5"]
EOF2
check "r completes" wait_until 120 tj_cond_is r Complete "True AllJobsCompleted"
expect_eq "... its script was answered 200 by the operator" 200 "$(kubectl logs r-node-0-0 -c node 2>&1 | tail -1)"
expect_eq "... r's status.trainerStatus written" "40 loss=0.5" \
    "$(kubectl get trainjob r -o jsonpath='{.status.trainerStatus.progressPercentage} {.status.trainerStatus.metrics[0].name}={.status.trainerStatus.metrics[0].value}')"
expect_eq "... the pod was given the operator's URL" "$EP/r/status" \
    "$(kubectl get pod r-node-0-0 -o jsonpath='{.spec.containers[0].env[?(@.name=="KUBEFLOW_TRAINER_SERVER_URL")].value}')"
TR=$(kubectl get secret r-progress-token -o jsonpath='{.data.token}' | base64 -d)
expect_match "... its token is derived (64 hex digits)" '^[0-9a-f]{64}$' "$TR"

# ---- what is refused ----
check "TrainJob v (suspended)" kubectl apply -f - <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: v}
spec:
  suspend: true
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 1, command: [sleep, "600"]}
EOF2
vuid=$(kubectl get trainjob v -o jsonpath='{.metadata.uid}')
check "a token Secret for v planted by hand" kubectl apply -f - <<EOF2
apiVersion: v1
kind: Secret
metadata:
  name: v-progress-token
  ownerReferences:
  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: v, uid: $vuid, controller: true}
stringData: {token: planted}
EOF2
body='{"trainerStatus": {"progressPercentage": 9}}'
expect_eq "the planted token is refused" 401 "$(ep_post v planted "$body")"
expect_match "... with a Status" '"reason":"Unauthorized"' "$(cat "$E2E_TMP/answer")"
expect_eq "r's token does not write v" 401 "$(ep_post v "$TR" "$body")"
expect_eq "no token is refused" 401 "$(ep_post v "" "$body")"
expect_eq "... and nothing was written to v" "" "$(kubectl get trainjob v -o jsonpath='{.status.trainerStatus}')"
expect_eq "a bad body: 422" 422 "$(ep_post r "$TR" '{"trainerStatus": {"progressPercentage": 140}}')"
expect_match "... naming the field" 'trainerStatus.progressPercentage' "$(cat "$E2E_TMP/answer")"
# r reported less than 5 s ago, unless the machine took that long since:
# then the first post is taken and the second refused
ok=""
for _ in 1 2 3; do
    c1=$(ep_post r "$TR" '{"trainerStatus": {"progressPercentage": 50}}')
    c2=$(ep_post r "$TR" '{"trainerStatus": {"progressPercentage": 60}}')
    if [ "$c2" = 429 ]; then ok=1; break; fi
done
if [ -n "$ok" ]; then pass "a second update within 5 s: 429"; else fail "no 429 ($c1 $c2)"; fi
expect_match "... with Retry-After" '^Retry-After: [1-5]' "$(tr -d '\r' <"$E2E_TMP/headers")"
finish
