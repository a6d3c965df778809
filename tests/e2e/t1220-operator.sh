#!/usr/bin/env bash
# `trainyard operator` against the stand-in cluster (`trainyard server
# --api-only`), driven as a user would, with kubectl and curl:
#  1. probes and metrics: /healthz, /readyz; trainyard_operator_leader 1 on
#     the leader and 0 on a standby; the job controllers' counters;
#  2. leader election: of two replicas on one Lease exactly one leads; the
#     leader SIGKILLed while a gang runs and another gang waits: the standby
#     takes over, both jobs succeed, no pod is made twice and the waiting
#     gang is never partly bound; a SIGTERMed leader hands the Lease over
#     (holder changed, leaseTransitions up);
#  3. the API server restarted under a running operator: short outages
#     pass, a longer one ends the leader (by design, as controller-runtime:
#     its Lease may have gone to another) and its supervisor (as a
#     Deployment would) starts it again; jobs after the restart succeed;
#  4. a watch answered 410 Gone (the restart's new watch history) lists
#     again; a leader cut off by a hung API server stops at its renew
#     deadline, before the standby (which reaches the server) leads;
#  5. --enable-scheme pytorchjob: a TFJob is left alone; a bad scheme is a
#     usage error naming the known ones;
#  6. the admission webhook over HTTPS: /mutate's JSONPatch, /validate's
#     field errors as `kubectl apply` prints them on the embedded server;
#  7. usage errors: no kubeconfig and no cluster, an unreachable server;
#  and deploy/40-operator.yaml's args are flags the operator knows.
. "$(dirname "$0")/lib.sh"
unset E2E_OPERATOR # this test starts its operators itself

OPS="" # the pids of the operators (and supervisors) started here
stop_ops() {
    local p
    for p in $OPS; do kill "$p" 2>/dev/null; done
    for p in $OPS; do wait "$p" 2>/dev/null; done
    OPS=""
}
trap 'stop_ops; cleanup' EXIT

# op_start NAME [flags]: an operator with identity NAME (logs NAME.out,
# NAME.err; pid in OP_PID_NAME, probe URL in OP_URL_NAME once it listens).
op_start() {
    local name=$1
    shift
    "$TRAINYARD" operator --kubeconfig "$E2E_TMP/op.kc" --port 0 \
        --leader-elect-identity "$name" --leader-elect-namespace default \
        --scheduler-name volcano --scheduler-name default-scheduler "$@" \
        >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err" &
    local pid=$!
    OPS="$OPS $pid"
    eval "OP_PID_$name=$pid"
    if ! wait_until file_has "$E2E_TMP/$name.out" '^listening on http'; then
        echo "operator $name did not start:"; cat "$E2E_TMP/$name.err"; exit 1
    fi
    eval "OP_URL_$name=$(sed -n 's/^listening on //p' "$E2E_TMP/$name.out")"
}
# sup_start NAME [flags]: an operator under a supervisor that starts it
# again whenever it exits, a second later, as a Deployment's kubelet would
# (each exit's status is a line of NAME.exits).
sup_start() {
    local name=$1
    shift
    : >"$E2E_TMP/$name.exits"
    (
        child=""
        trap '[ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child"; exit 0' TERM
        while :; do
            "$TRAINYARD" operator --kubeconfig "$E2E_TMP/op.kc" --port 0 \
                --leader-elect-identity "$name" --leader-elect-namespace default \
                --scheduler-name volcano --scheduler-name default-scheduler "$@" \
                >>"$E2E_TMP/$name.out" 2>>"$E2E_TMP/$name.err" &
            child=$!
            wait "$child"
            echo "exit $?" >>"$E2E_TMP/$name.exits"
            child=""
            sleep 1
        done
    ) &
    OPS="$OPS $!"
    eval "OP_PID_$name=$!"
    if ! wait_until file_has "$E2E_TMP/$name.out" '^listening on http'; then
        echo "operator $name did not start:"; cat "$E2E_TMP/$name.err"; exit 1
    fi
}
exits() { grep -c . "$E2E_TMP/$1.exits"; }
op_url() {
    if [ -f "$E2E_TMP/$1.exits" ]; then
        sed -n 's/^listening on //p' "$E2E_TMP/$1.out" | tail -1
    else
        eval "echo \$OP_URL_$1"
    fi
}
op_pid() { eval "echo \$OP_PID_$1"; }
leads() { file_has "$E2E_TMP/$1.err" 'operator: leading'; }
holder() { kubectl get lease trainyard-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
holder_is() { [ "$(holder)" = "$1" ]; }
transitions() { kubectl get lease trainyard-operator -o jsonpath='{.spec.leaseTransitions}' 2>/dev/null; }
leader_gauge() { curl -s "$(op_url "$1")/metrics" | sed -n 's/^trainyard_operator_leader \([0-9]*\)$/\1/p'; }
gauge_is() { [ "$(leader_gauge "$1")" = "$2" ]; }
job_state() { kubectl get "$1" "$2" -o jsonpath='{.status.conditions[-1:].type}' 2>/dev/null; }
job_is() { [ "$(job_state "$1" "$2")" = "$3" ]; }
bound_pods() { # selector: how many of its pods are bound to a node
    kubectl get pods -l "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null |
        grep -c .
}
running_pods() { # selector count
    [ "$(kubectl get pods -l "$1" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' 2>/dev/null |
        grep -c Running)" = "$2" ]
}

# A gang of 3 (master + 2 workers), each pod with GPUS fake GPUs, running
# CMD. The stand-in's node has 4: one gang of 3 fits, two do not.
gang_job() { # name gpus cmd
    kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: $1}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 3}}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          schedulerName: volcano
          containers: [{name: pytorch, image: local, command: [sh, -c, "$3"],
                        resources: {limits: {nvidia.com/gpu: $2}}}]
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          schedulerName: volcano
          containers: [{name: pytorch, image: local, command: [sh, -c, "$3"],
                        resources: {limits: {nvidia.com/gpu: $2}}}]
YAML
}
GO=$E2E_TMP/go # the gangs' pods run until this file exists
WAIT_GO="while [ ! -e $GO ]; do sleep 0.2; done"

# ---------------- the stand-in cluster and two operators on one Lease
start_server --api-only --fake-gpus 4
cp "$KUBECONFIG" "$E2E_TMP/op.kc"
SERVER_PORT=${SERVER##*:}
op_start opa
wait_until leads opa || { fail "the first operator leads"; cat "$E2E_TMP/opa.err"; }
op_start opb
wait_until holder_is opa
expect_eq "the Lease names the leader (kubectl get lease)" "opa" "$(holder)"
expect_match "kubectl get leases shows the holder" '^trainyard-operator +opa ' "$(kubectl get leases)"
wait_until file_has "$E2E_TMP/opb.err" 'the leader is opa'
check "the second replica waits on the Lease" bash -c "! grep -q 'operator: leading' '$E2E_TMP/opb.err'"

# ---------------- 1. probes and metrics
for n in opa opb; do
    expect_eq "$n: /healthz answers 200" 200 \
        "$(curl -s -o /dev/null -w '%{http_code}' "$(op_url $n)/healthz")"
    expect_eq "$n: /readyz answers 200" 200 \
        "$(curl -s -o /dev/null -w '%{http_code}' "$(op_url $n)/readyz")"
done
wait_until gauge_is opa 1
expect_eq "the leader's /metrics: trainyard_operator_leader 1" 1 "$(leader_gauge opa)"
expect_eq "the standby's /metrics: trainyard_operator_leader 0" 0 "$(leader_gauge opb)"
expect_eq "an unknown path is 404" 404 \
    "$(curl -s -o /dev/null -w '%{http_code}' "$(op_url opa)/nope")"

# ---------------- 2. the leader SIGKILLed mid-run
gang_job gang-a 1 "$WAIT_GO"
wait_until running_pods training.kubeflow.org/job-name=gang-a 3 ||
    { fail "the first gang runs"; dump_job pytorchjob gang-a; }
expect_match "the leader's counters: training_operator_jobs_created_total" \
    'training_operator_jobs_created_total\{job_namespace="default",framework="pytorch"\} 1' \
    "$(curl -s "$(op_url opa)/metrics")"
uids_before=$(kubectl get pods -l training.kubeflow.org/job-name=gang-a \
    -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid}{"\n"}{end}' | sort)
gang_job gang-b 1 "true"
# gang-b cannot fit beside gang-a (3 + 3 GPUs on 4): it waits whole.
wait_until bash -c "kubectl get podgroup gang-b -o jsonpath='{.status.conditions[*].type}' | grep -q Unschedulable"
t0=$(transitions)
kill -KILL "$(op_pid opa)"
wait "$(op_pid opa)" 2>/dev/null
# Until the next leader runs and after: gang-b stays unbound while gang-a
# holds 3 of the 4 GPUs (a scheduler without gangs would bind one pod).
partial=0
end=$((SECONDS + E2E_WAIT))
until leads opb; do
    n=$(bound_pods training.kubeflow.org/job-name=gang-b)
    [ "$n" != 0 ] && partial=1
    [ $SECONDS -ge $end ] && break
    sleep 0.25
done
check "the standby takes over when the Lease expires" leads opb
wait_until holder_is opb
expect_eq "the Lease names the new leader" opb "$(holder)"
expect_eq "leaseTransitions went up" "$((t0 + 1))" "$(transitions)"
wait_until gauge_is opb 1
expect_eq "the new leader's trainyard_operator_leader is 1" 1 "$(leader_gauge opb)"
# A few passes of the new leader's scheduler over gang-b while gang-a runs.
wait_until file_has "$E2E_TMP/opb.err" 'operator: leading'
for _ in $(seq 20); do
    n=$(bound_pods training.kubeflow.org/job-name=gang-b)
    [ "$n" != 0 ] && partial=1
    sleep 0.25
done
expect_eq "the waiting gang is never partly bound while the other runs" 0 "$partial"
expect_eq "the running gang's pods are the same pods (none made again)" "$uids_before" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=gang-a \
        -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid}{"\n"}{end}' | sort)"
touch "$GO"
wait_until job_is pytorchjob gang-a Succeeded
expect_eq "the running gang succeeds under the new leader" Succeeded "$(job_state pytorchjob gang-a)"
[ "$(job_state pytorchjob gang-a)" = Succeeded ] || dump_job pytorchjob gang-a
wait_until job_is pytorchjob gang-b Succeeded
expect_eq "the waiting gang then runs whole and succeeds" Succeeded "$(job_state pytorchjob gang-b)"
[ "$(job_state pytorchjob gang-b)" = Succeeded ] || dump_job pytorchjob gang-b
expect_eq "3 pods for each gang, none duplicated" "3 3" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=gang-a -o name | wc -l) $(kubectl get pods -l training.kubeflow.org/job-name=gang-b -o name | wc -l)"
expect_eq "gang-b's pods were each created once (events)" 3 \
    "$(kubectl get events --field-selector involvedObject.name=gang-b,reason=SuccessfulCreatePod -o name | wc -l)"

# ---------------- a clean SIGTERM hands the Lease over
op_start opc
wait_until file_has "$E2E_TMP/opc.err" 'the leader is opb'
t1=$(transitions)
kill -TERM "$(op_pid opb)"
wait "$(op_pid opb)"
expect_eq "SIGTERM: the leader exits 0" 0 "$?"
wait_until leads opc
check "SIGTERM: the standby leads" leads opc
expect_eq "SIGTERM: the Lease names it" opc "$(holder)"
expect_eq "SIGTERM: leaseTransitions went up" "$((t1 + 1))" "$(transitions)"

# ---------------- 3. the API server restarted under the operators
kill -TERM "$(op_pid opc)"
wait "$(op_pid opc)"
sup_start opd
wait_until holder_is opd
wait_until leads opd
sup_start ope
wait_until file_has "$E2E_TMP/ope.err" 'the leader is opd'
# 3a. a restart: the leader rides it out when it is back within the renew
# deadline (10 s); if a loaded machine took longer, the leader exited as
# designed and its supervisor started it again. Either way jobs go on.
stop_server
start_server --api-only --fake-gpus 4 --port "$SERVER_PORT"
expect_eq "the stand-in is back on its port" "$SERVER_PORT" "${SERVER##*:}"
gang_job after-restart 1 "true"
wait_until job_is pytorchjob after-restart Succeeded
expect_eq "a job submitted after the restart succeeds" Succeeded "$(job_state pytorchjob after-restart)"
[ "$(job_state pytorchjob after-restart)" = Succeeded ] || dump_job pytorchjob after-restart
# (the node agent adopted the finished pods of before the restart; their
# GPUs were held for good, and two of these three were refused)
all_done() { [ "$(kubectl get pods -l "$1" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Succeeded)" = 3 ]; }
wait_until all_done training.kubeflow.org/job-name=after-restart
check "all its pods ran: the finished pods' GPUs were free after the restart" \
    all_done training.kubeflow.org/job-name=after-restart
expect_eq "the standby does not exit for a restart" 0 "$(exits ope)"
if [ "$(exits opd)" = 0 ]; then
    pass "the leader kept running through the restart"
else
    expect_match "the leader exited only for its Lease (renew deadline passed)" \
        'leadership lost' "$(cat "$E2E_TMP/opd.err")"
fi
# 3b. a longer outage: the leader cannot renew and exits (1) rather than
# write beside a leader it cannot see; the standby waits on.
h=$(holder)
other=opd
[ "$h" = opd ] && other=ope
# (what the standby did before this step: in 3a a slow restart may have
# made opd exit and ope lead)
other_exits=$(exits $other)
stop_server
wait_until file_has "$E2E_TMP/$h.err" 'leadership lost'
check "the leader ($h) exits once it cannot renew its Lease" file_has "$E2E_TMP/$h.err" 'leadership lost'
wait_until file_has "$E2E_TMP/$h.exits" '^exit 1$'
check "its exit status is 1" file_has "$E2E_TMP/$h.exits" '^exit 1$'
expect_eq "the standby ($other) does not exit" "$other_exits" "$(exits $other)"
start_server --api-only --fake-gpus 4 --port "$SERVER_PORT"
lead_again() { h2=$(holder); { [ "$h2" = opd ] || [ "$h2" = ope ]; } && gauge_is "$h2" 1; }
wait_until lead_again
check "after the outage a replica leads again" lead_again
gang_job after-outage 1 "true"
wait_until job_is pytorchjob after-outage Succeeded
expect_eq "a job submitted after the outage succeeds" Succeeded "$(job_state pytorchjob after-outage)"
[ "$(job_state pytorchjob after-outage)" = Succeeded ] || dump_job pytorchjob after-outage

# ---------------- 4. watches answered 410 Gone
# The stand-in's watch history starts at its start: a watch resumed from a
# version before it is answered 410 Gone. After a clean stop the watches
# are current (a bookmark ends each stream); a SIGKILL right after a write
# they did not see (a ConfigMap: no controller watches those) leaves them
# behind, and they must list again rather than resume or stop.
h=$(holder)
gone_before=$(grep -c 'fell behind the watch history' "$E2E_TMP/$h.err")
exits_before=$(exits "$h")
kubectl create configmap bump --from-literal=a=1 >/dev/null
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
start_server --api-only --fake-gpus 4 --port "$SERVER_PORT"
gone_more() { [ "$(grep -c 'fell behind the watch history' "$E2E_TMP/$1.err")" -gt "$gone_before" ]; }
# (a leader that lost its Lease meanwhile, on a loaded machine, starts
# again with fresh lists: nothing to tell then; test_kc_http and
# test_informer cover the 410 path without a server)
restarted() { [ "$(exits "$1")" -gt "$exits_before" ]; }
wait_until eval "gone_more $h || restarted $h"
if restarted "$h" && ! gone_more "$h"; then
    pass "a watch answered 410 Gone lists again (not told: the leader restarted)"
else
    check "a watch answered 410 Gone lists again (log: fell behind the watch history)" gone_more "$h"
fi
wait_until lead_again
gang_job after-gone 1 "true"
wait_until job_is pytorchjob after-gone Succeeded
expect_eq "a job submitted after the relist succeeds" Succeeded "$(job_state pytorchjob after-gone)"
[ "$(job_state pytorchjob after-gone)" = Succeeded ] || dump_job pytorchjob after-gone

# ---------------- a hung API server: the leader stops before the Lease goes
# The leader reaches the API server through a proxy that is then frozen
# (SIGSTOP: connections accepted, never answered); the standby reaches it
# directly and takes the Lease when it expires. The leader must have stopped
# by then (its renew deadline is shorter than the Lease), not when its
# stalled request times out a minute later, writing beside the new leader.
stop_ops # (a clean stop: the Lease is given up)
/usr/bin/python3 -u -c '
import socket, sys, threading
back = ("127.0.0.1", int(sys.argv[1]))
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(64)
print("listening on port %d" % ls.getsockname()[1], flush=True)
def pipe(a, b):
    try:
        while (d := a.recv(65536)):
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
while True:
    c, _ = ls.accept()
    u = socket.create_connection(back)
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
' "$SERVER_PORT" >"$E2E_TMP/proxy.out" 2>&1 &
PROXY_PID=$!
OPS="$OPS $PROXY_PID"
wait_until file_has "$E2E_TMP/proxy.out" '^listening on'
# (TLS passes through it: the same scheme as the server's)
PROXY=${SERVER%%://*}://127.0.0.1:$(sed -n 's/^listening on port //p' "$E2E_TMP/proxy.out")
cp "$E2E_TMP/op.kc" "$E2E_TMP/direct.kc"
sed "s#server: .*#server: $PROXY#" "$E2E_TMP/direct.kc" >"$E2E_TMP/op.kc"
op_start opg
wait_until leads opg || { fail "the operator behind the proxy leads"; cat "$E2E_TMP/opg.err"; }
cp "$E2E_TMP/direct.kc" "$E2E_TMP/op.kc"
op_start oph
wait_until file_has "$E2E_TMP/oph.err" 'the leader is opg'
kill -STOP "$PROXY_PID"
wait_until leads oph
check "the standby takes the Lease of a leader cut off by a hung API server" leads oph
wait_until file_has "$E2E_TMP/opg.err" 'leadership lost'
lost_at=$(sed -n 's/ .*operator: leadership lost.*//p' "$E2E_TMP/opg.err" | head -1)
led_at=$(sed -n 's/ .*operator: leading.*//p' "$E2E_TMP/oph.err" | head -1)
expect_match "the cut-off leader stops for its renew deadline" \
    'operator: leadership lost \(renew deadline passed\)' "$(cat "$E2E_TMP/opg.err")"
if [ -n "$lost_at" ] && [ -n "$led_at" ] && [[ ! "$lost_at" > "$led_at" ]]; then
    pass "it stopped before the standby led ($lost_at, $led_at): never two leaders"
else
    fail "it stopped before the standby led (stopped '$lost_at', the standby led '$led_at')"
fi
wait "$(op_pid opg)"
expect_eq "it exits 1" 1 "$?"
kill -CONT "$PROXY_PID"

# ---------------- 5. --enable-scheme; 6. the admission webhook
stop_ops # (a clean stop: the Lease is given up)
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$E2E_TMP/tls.key" -out "$E2E_TMP/tls.crt" 2>/dev/null ||
    fail "openssl makes a certificate"
op_start opf --enable-scheme pytorchjob --webhook-port 0 \
    --tls-cert-file "$E2E_TMP/tls.crt" --tls-private-key-file "$E2E_TMP/tls.key"
wait_until leads opf || { fail "the operator with --enable-scheme leads"; cat "$E2E_TMP/opf.err"; }
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf-left}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers: [{name: tensorflow, image: local, command: [sh, -c, "true"]}]
YAML
gang_job py-run 1 "true"
wait_until job_is pytorchjob py-run Succeeded
expect_eq "--enable-scheme pytorchjob: a PyTorchJob runs" Succeeded "$(job_state pytorchjob py-run)"
# (the TFJob was there first: had the controller run it, it would have by now)
expect_eq "--enable-scheme pytorchjob: a TFJob gets no pods" "" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=tf-left -o name)"
expect_eq "--enable-scheme pytorchjob: a TFJob gets no status" "" \
    "$(kubectl get tfjob tf-left -o jsonpath='{.status}')"
out=$("$TRAINYARD" operator --kubeconfig "$E2E_TMP/op.kc" --enable-scheme pytorch 2>&1)
expect_eq "a bad scheme is a usage error (exit 2)" 2 "$?"
expect_match "it names the bad scheme and the known ones" \
    'unknown scheme "pytorch": want tfjob, pytorchjob, .*msjob, volcano' "$out"
out=$("$TRAINYARD" operator --kubeconfig "$E2E_TMP/op.kc" --enable-scheme 'pytorchjob,' 2>&1)
expect_eq "an empty scheme name is a usage error (exit 2)" 2 "$?"

WH=$(sed -n 's/.*admission webhook on \(https:[^ ]*\).*/\1/p' "$E2E_TMP/opf.err")
expect_match "the webhook listens over HTTPS" '^https://127\.0\.0\.1:[0-9]+$' "$WH"
review() { # operation object-json: an admission.k8s.io/v1 AdmissionReview
    /usr/bin/python3 -c '
import json, sys
print(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {"uid": "e2e-1", "operation": sys.argv[1], "namespace": "default",
        "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"},
        "resource": {"group": "kubeflow.org", "version": "v1", "resource": "pytorchjobs"},
        "userInfo": {"username": "alice"}, "object": json.loads(sys.argv[2])}}))' "$1" "$2"
}
admit() { # path: the review on stdin, posted
    curl -s --cacert "$E2E_TMP/tls.crt" -H 'Content-Type: application/json' \
        --data-binary @- "$WH$1"
}
LC='{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"lc","namespace":"default"},
 "spec":{"pytorchReplicaSpecs":{"worker":{"replicas":1,"template":{"spec":{"containers":[
 {"name":"pytorch","image":"local","command":["true"]}]}}}}}}'
resp=$(review CREATE "$LC" | admit /mutate)
expect_eq "/mutate: allowed, a JSONPatch, the request's uid" "True JSONPatch e2e-1" \
    "$(/usr/bin/python3 -c 'import json, sys; r = json.loads(sys.argv[1])["response"]; print(r["allowed"], r["patchType"], r["uid"])' "$resp")"
patch=$(/usr/bin/python3 -c 'import json, sys, base64; print(base64.b64decode(json.loads(sys.argv[1])["response"]["patch"]).decode())' "$resp")
expect_match "/mutate: the patch removes worker" '"op":"remove","path":"/spec/pytorchReplicaSpecs/worker"' "$patch"
expect_match "/mutate: and adds it back as Worker" '"op":"add","path":"/spec/pytorchReplicaSpecs/Worker","value":\{"replicas":1' "$patch"
resp=$(review CREATE "$LC" | admit /validate)
expect_match "/validate: a good job is allowed" '"allowed":true' "$resp"
BAD='{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"bad","namespace":"default"},
 "spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":-1,"template":{"spec":{"containers":[
 {"name":"pytorch","image":"local"}]}}}}}}'
resp=$(review CREATE "$BAD" | admit /validate)
got=$(/usr/bin/python3 -c 'import json, sys; r = json.loads(sys.argv[1])["response"]; st = r["status"]; print(r["allowed"], st["code"], st["reason"], st["details"]["causes"][0]["field"])' "$resp")
expect_eq "/validate: an invalid job is refused, 422 Invalid, with its field" \
    "False 422 Invalid spec.pytorchReplicaSpecs.Worker.replicas" "$got"
applied=$(kubectl apply -f - <<<"$BAD" 2>&1)
msg=$(/usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1])["response"]["status"]["message"])' "$resp")
expect_match "kubectl apply on the stand-in names the same field" \
    'spec\.pytorchReplicaSpecs\.Worker\.replicas: Invalid value: -1' "$applied"
expect_eq "/validate's message is what kubectl apply prints" \
    "$(sed -n 's/^The \(PyTorchJob\) "bad" is invalid: /\1.kubeflow.org "bad" is invalid: /p' <<<"$applied")" "$msg"
expect_eq "the webhook over plain HTTP is refused" 000 \
    "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://${WH#https://}/mutate" -d '{}' || true)"
stop_ops

# ---------------- 7. usage errors
out=$(cd "$E2E_TMP" && env -u KUBECONFIG HOME="$E2E_TMP/nohome" \
    KUBERNETES_SERVICE_HOST= KUBERNETES_SERVICE_PORT= "$TRAINYARD" operator --port 0 2>&1)
expect_eq "no kubeconfig and no cluster: exit 1" 1 "$?"
expect_match "no kubeconfig and no cluster: says so" '^error: no API server to drive: ' "$out"
sed "s#server: .*#server: http://127.0.0.1:1#" "$E2E_TMP/op.kc" >"$E2E_TMP/gone.kc"
out=$("$TRAINYARD" operator --kubeconfig "$E2E_TMP/gone.kc" --port 0 2>&1)
expect_eq "an unreachable server: exit 1" 1 "$?"
expect_match "an unreachable server: the error names its URL" \
    'cannot reach the API server at http://127\.0\.0\.1:1' "$out"
out=$("$TRAINYARD" operator --kubeconfig "$E2E_TMP/no-such.kc" --port 0 2>&1)
expect_eq "a missing kubeconfig: exit 1" 1 "$?"
expect_match "a missing kubeconfig: the error names it" 'no-such\.kc' "$out"
out=$("$TRAINYARD" operator --tls-cert-file x 2>&1)
expect_eq "a certificate without its key: exit 2" 2 "$?"

# ---------------- deploy/40-operator.yaml: flags the operator knows
help=$("$TRAINYARD" operator --help)
DEPLOY=$(cd "$(dirname "$0")/../../deploy" && pwd)
args=$(/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "Deployment":
        print("\n".join(d["spec"]["template"]["spec"]["containers"][0]["args"]))' \
    "$DEPLOY/40-operator.yaml")
unknown=""
for a in $args; do
    case "$a" in --*) ;; *) continue ;; esac
    f=${a%%=*}
    grep -Eq -- "(^| )$f([ =,[]|$)" <<<"$help" || unknown="$unknown $f"
done
expect_eq "every flag of the Deployment's args is in operator --help" "" "$unknown"
expect_match "the Deployment's probe listener binds every address in the pod" \
    '^--address=0\.0\.0\.0$' "$args"

finish
