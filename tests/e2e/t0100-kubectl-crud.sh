#!/usr/bin/env bash
# kubectl against the real server: apply/get/describe/label/annotate/patch/delete/wait.
. "$(dirname "$0")/lib.sh"
start_server
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
k() { kubectl --request-timeout=20s "$@"; }

out=$(k version -o json 2>&1)
expect_match "kubectl version talks to the server" '"gitVersion": "v1.32' "$out"

out=$(k api-resources 2>&1)
expect_match "api-resources lists pytorchjobs" 'pytorchjobs +kubeflow.org/v1 +true +PyTorchJob' "$out"
expect_match "api-resources lists volcano jobs with short names" 'jobs +vcjob,vj +batch.volcano.sh/v1alpha1 +true +Job' "$out"
expect_match "api-resources lists queues cluster-scoped" 'queues +q.* +scheduling.volcano.sh/v1beta1 +false +Queue' "$out"

# apply: created, unchanged, configured (suspended, so the job engine starts no pods here)
sed 's/    backoffLimit: 2/    backoffLimit: 2\n    suspend: true/' "$EX/pytorch-ddp.yaml" >"$E2E_TMP/job.yaml"
expect_eq "apply creates" "pytorchjob.kubeflow.org/pytorch-ddp created" "$(k apply -f "$E2E_TMP/job.yaml" 2>&1)"
expect_eq "apply again is unchanged" "pytorchjob.kubeflow.org/pytorch-ddp unchanged" "$(k apply -f "$E2E_TMP/job.yaml" 2>&1)"
sed 's/backoffLimit: 2/backoffLimit: 5/' "$E2E_TMP/job.yaml" >"$E2E_TMP/changed.yaml"
expect_eq "apply a change configures" "pytorchjob.kubeflow.org/pytorch-ddp configured" "$(k apply -f "$E2E_TMP/changed.yaml" 2>&1)"
expect_eq "the change is stored" "5" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.spec.runPolicy.backoffLimit}')"
expect_eq "defaulting: restartPolicy stored" "OnFailure" \
    "$(k get pytorchjob pytorch-ddp -o jsonpath='{.spec.pytorchReplicaSpecs.Worker.restartPolicy}')"
expect_eq "generation bumped by the spec change" "2" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.metadata.generation}')"

# get in every output format
out=$(k get pytorchjobs 2>&1)
expect_match "get prints upstream columns" '^NAME +STATE +AGE' "$out"
expect_match "get lists the job" '^pytorch-ddp ' "$out"
expect_match "get -o json" '"kind": "PyTorchJob"' "$(k get pytorchjob pytorch-ddp -o json)"
expect_match "get -o yaml" 'kind: PyTorchJob' "$(k get pytorchjob pytorch-ddp -o yaml)"
expect_eq "get -o name" "pytorchjob.kubeflow.org/pytorch-ddp" "$(k get pytorchjobs -o name)"
expect_match "get -o wide" '^NAME +STATE +AGE' "$(k get pytorchjobs -o wide)"
expect_eq "get -o jsonpath" "pytorch-ddp" "$(k get pytorchjobs -o jsonpath='{.items[0].metadata.name}')"

# pods: wide columns
cat >"$E2E_TMP/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels: {app: demo, tier: web}
spec:
  schedulerName: someone-else   # not ours: the pod stays Pending, as on a cluster
  containers:
  - name: main
    image: busybox:1.36
    command: ["sleep", "3600"]
    env:
    - {name: A, value: "1"}
  - name: side
    image: busybox:1.36
YAML
check "create a pod" k create -f "$E2E_TMP/pod.yaml"
out=$(k get pods 2>&1)
expect_match "pods: NAME READY STATUS RESTARTS AGE" '^NAME +READY +STATUS +RESTARTS +AGE' "$out"
expect_match "pod row" '^p1 +0/2 +Pending +0 ' "$out"
expect_match "pods -o wide adds IP and NODE" '^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE' "$(k get pods -o wide)"

# label, annotate, selectors
check "label" k label pytorchjob pytorch-ddp team=vision
check "annotate" k annotate pytorchjob pytorch-ddp owner=alice
expect_eq "label stored" "vision" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.metadata.labels.team}')"
expect_eq "annotation stored" "alice" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.metadata.annotations.owner}')"
expect_eq "label selector =" "pytorch-ddp" "$(k get pytorchjobs -l team=vision -o name | sed 's|.*/||')"
expect_eq "label selector notin" "" "$(k get pytorchjobs -l 'team notin (vision)' -o name 2>/dev/null)"
expect_eq "field selector on pods" "p1" "$(k get pods --field-selector status.phase=Pending -o name | sed 's|.*/||')"
expect_eq "field selector excludes" "" "$(k get pods --field-selector status.phase=Running,metadata.name=p1 -o name 2>/dev/null)"

# patch: merge, json, strategic
check "patch --type merge" k patch pytorchjob pytorch-ddp --type merge -p '{"spec":{"runPolicy":{"ttlSecondsAfterFinished":60}}}'
expect_eq "merge patch applied" "60" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.spec.runPolicy.ttlSecondsAfterFinished}')"
check "patch --type json" k patch pytorchjob pytorch-ddp --type json -p '[{"op":"replace","path":"/spec/pytorchReplicaSpecs/Worker/replicas","value":3}]'
expect_eq "json patch applied" "3" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.spec.pytorchReplicaSpecs.Worker.replicas}')"
check "patch strategic (pod container image by name)" k patch pod p1 -p '{"spec":{"containers":[{"name":"side","image":"busybox:1.37"}]}}'
expect_eq "strategic merge kept the other container" "busybox:1.36 busybox:1.37" "$(k get pod p1 -o jsonpath='{.spec.containers[0].image} {.spec.containers[1].image}')"
out=$(k patch pytorchjob pytorch-ddp --type strategic -p '{"spec":{}}' 2>&1)
expect_match "strategic merge on a custom resource is refused" 'UnsupportedMediaType|unsupported|not supported' "$out"

# status subresource: a write to the object ignores status (a Queue: no
# controller writes its state)
cat >"$E2E_TMP/q.yaml" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: qstatus
spec:
  weight: 2
YAML
k apply -f "$E2E_TMP/q.yaml" >/dev/null
k patch queue qstatus --type merge -p '{"status":{"state":"Closed"}}' >/dev/null 2>&1
expect_eq "status ignored on main resource" "Open" "$(k get queue qstatus -o jsonpath='{.status.state}')"
check "patch --subresource status" k patch queue qstatus --subresource status --type merge -p '{"status":{"state":"Closed"}}'
expect_eq "the status write took" "Closed" "$(k get queue qstatus -o jsonpath='{.status.state}')"
# a bare PodGroup is admitted by the gang scheduler; its table shows the phase
cat >"$E2E_TMP/pg.yaml" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: pg1
spec:
  minMember: 2
YAML
k apply -f "$E2E_TMP/pg.yaml" >/dev/null
pg_inqueue() { [ "$(k get podgroup pg1 -o jsonpath='{.status.phase}')" = Inqueue ]; }
wait_until pg_inqueue
expect_match "STATUS column shows the admitted PodGroup" '^pg1 +Inqueue ' "$(k get podgroups)"
k patch pytorchjob pytorch-ddp --type merge -p '{"status":{"conditions":[{"type":"Injected","status":"True"}]}}' >/dev/null 2>&1
expect_eq "status ignored on a job too" "" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.status.conditions[?(@.type=="Injected")].type}')"
# (the job engine writes the Suspended condition in its own time: waited for)
job_suspended() { grep -Eq '^pytorch-ddp +Suspended ' <<<"$(k get pytorchjobs)"; }
wait_until job_suspended
expect_match "State column = last condition type" '^pytorch-ddp +Suspended ' "$(k get pytorchjobs)"

# describe
out=$(k describe pytorchjob pytorch-ddp 2>&1)
expect_match "describe shows name" 'Name: +pytorch-ddp' "$out"
expect_match "describe shows the kind" 'Kind: +PyTorchJob' "$out"

# errors that read like a real cluster's
out=$(k get pytorchjob nope 2>&1)
expect_eq "not found error" 'Error from server (NotFound): pytorchjobs.kubeflow.org "nope" not found' "$out"
cat >"$E2E_TMP/bad.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bad-job
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: x
YAML
out=$(k apply -f "$E2E_TMP/bad.yaml" 2>&1)
expect_match "invalid manifest names the field" 'spec.pytorchReplicaSpecs.Master.replicas' "$out"
expect_match "invalid manifest reads like kube" 'is invalid' "$out"
expect_eq "nothing written for a bad manifest" "" "$(k get pytorchjob bad-job -o name 2>/dev/null)"
sed 's/replicas: 2/replicaz: 1/' "$E2E_TMP/bad.yaml" >"$E2E_TMP/unknown.yaml"
out=$(k apply -f "$E2E_TMP/unknown.yaml" 2>&1)
expect_match "strict validation names the unknown field" 'unknown field "spec.pytorchReplicaSpecs.Master.replicaz"' "$out"
k create namespace other >/dev/null 2>&1
out=$(k create -f "$E2E_TMP/pod.yaml" 2>&1)
expect_match "already exists" 'AlreadyExists.*pods "p1" already exists' "$out"
out=$(k get pods -n missing-ns p1 2>&1)
expect_match "missing namespace reads NotFound" 'NotFound' "$out"

# get -w shows live changes. Plain kubectl, not k: --request-timeout would
# end the watch after 20 s, before a loaded machine has shown the change; the
# outer bound lasts past both waits (the watch is killed once they are done).
timeout $((E2E_WAIT * 2 + 60)) kubectl get pytorchjobs -w --output-watch-events >"$E2E_TMP/watch.out" 2>&1 &
WPID=$!
wait_until file_has "$E2E_TMP/watch.out" 'ADDED +pytorch-ddp'
k label pytorchjob pytorch-ddp stage=two >/dev/null
wait_until file_has "$E2E_TMP/watch.out" 'MODIFIED +pytorch-ddp'
kill $WPID 2>/dev/null; wait $WPID 2>/dev/null
expect_match "get -w shows the initial state" 'ADDED +pytorch-ddp' "$(cat "$E2E_TMP/watch.out")"
expect_match "get -w shows a live change" 'MODIFIED +pytorch-ddp' "$(cat "$E2E_TMP/watch.out")"

# delete, delete -f, wait --for=delete
check "delete pod" k delete pod p1
expect_eq "pod gone" "" "$(k get pod p1 -o name 2>/dev/null)"
k apply -f "$EX/tfjob.yaml" >/dev/null
( sleep 1; k delete -f "$EX/tfjob.yaml" >"$E2E_TMP/del.out" 2>&1 ) &
DPID=$!
check "wait --for=delete" k wait --for=delete tfjob/tf-ps --timeout=${E2E_WAIT}s
wait $DPID
expect_match "delete -f prints what it deleted" 'tfjob.kubeflow.org "tf-ps" deleted' "$(cat "$E2E_TMP/del.out")"

# Priority admission, as kube-apiserver's: a pod's priority comes from the
# PriorityClass it names (or the globalDefault one); a missing class is
# Forbidden (before, it was stored and its pod ran).
prio_pod() { # name [spec lines]
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n%b  containers: [{name: c, image: busybox, command: [sleep, "600"]}]\n' "$1" "${2:-}" | k apply -f - 2>&1
}
expect_match "a pod naming a missing PriorityClass is forbidden" \
    'pods "pp1" is forbidden: no PriorityClass with name nonexistent was found' \
    "$(prio_pod pp1 '  priorityClassName: nonexistent\n')"
expect_eq "and not stored" "" "$(k get pod pp1 -o name 2>/dev/null)"
printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: usual}\nvalue: 10\nglobalDefault: true\n' | k apply -f - >/dev/null
prio_pod pp2 '  priorityClassName: high\n' >/dev/null
expect_eq "its value and preemption policy go into the pod" "1000 Never" \
    "$(k get pod pp2 -o jsonpath='{.spec.priority} {.spec.preemptionPolicy}')"
prio_pod pp3 >/dev/null
expect_eq "a pod naming none gets the globalDefault class" "usual 10" \
    "$(k get pod pp3 -o jsonpath='{.spec.priorityClassName} {.spec.priority}')"
expect_match "a priority that differs from its class's is forbidden" \
    'the integer value of priority \(5\) must not be provided in pod spec; priority admission controller computed 1000' \
    "$(prio_pod pp4 '  priorityClassName: high\n  priority: 5\n')"
k delete pod pp2 pp3 --wait=false >/dev/null 2>&1
k delete priorityclass high usual >/dev/null 2>&1

finish
