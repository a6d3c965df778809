#!/usr/bin/env bash
# Trainyard's dataset and model initializers: a file:// dataset and an
# http:// model (from a server on this machine) are fetched into the job's
# claim before the trainer starts, which reads them under /workspace; a
# source that needs the network fails the job with a clear line in the
# initializer's log. JobSet's volumeClaimPolicies (upstream's torchtune
# runtimes share their initializers' volume so): a PVC per template,
# mounted where a container names it, kept or collected with the job as
# its retentionPolicy says.
cd "$(dirname "$0")"
source ./lib.sh
start_server

mkdir -p "$E2E_TMP/src" "$E2E_TMP/www"
echo "a,b" >"$E2E_TMP/src/data.csv"
chmod -R a+rX "$E2E_TMP/src"
echo "weights-v1" >"$E2E_TMP/www/model.bin"
# port 0: the server binds a free port itself and prints it (a port picked
# here and bound later could be taken in between)
(cd "$E2E_TMP/www" && exec /usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 >"$E2E_TMP/http.out" 2>&1) &
HTTP_PID=$!
trap 'kill $HTTP_PID 2>/dev/null; cleanup' EXIT
port=""
up() {
    [ -n "$port" ] || port=$(sed -n 's/^Serving HTTP on [^ ]* port \([0-9]*\) .*/\1/p' "$E2E_TMP/http.out")
    [ -n "$port" ] && curl -fs "http://127.0.0.1:$port/model.bin" >/dev/null
}
wait_until 30 up || fail "the local HTTP server did not start: $(cat "$E2E_TMP/http.out")"

kubectl apply -f - >/dev/null <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: fetched}
spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    dataset: {storageUri: "file://$E2E_TMP/src/data.csv"}
    model: {storageUri: "http://127.0.0.1:$port/model.bin"}
  trainer:
    numNodes: 1
    command: ["/bin/sh", "-c", "cat /workspace/dataset/data.csv /workspace/model/model.bin"]
EOF2
state=$(wait_tj fetched Complete 180)
expect_eq "initialized job completes" Complete "$state"
[ "$state" = Complete ] || dump_job trainjob fetched
expect_eq "the trainer reads what the initializers fetched" "a,b
weights-v1" "$(kubectl logs fetched-node-0-0 -c node 2>&1)"
expect_match "dataset initializer's log" "initializer: file://.*data.csv -> /workspace/dataset" \
    "$(kubectl logs fetched-dataset-initializer-0-0 -c dataset-initializer 2>&1)"
expect_match "model initializer's log" "initializer: http://127.0.0.1:$port/model.bin -> /workspace/model" \
    "$(kubectl logs fetched-model-initializer-0-0 -c model-initializer 2>&1)"
expect_eq "the SDK's steps: both initializers and the node" "dataset-initializer model-initializer node" \
    "$(kubectl get pods -l 'jobset.sigs.k8s.io/jobset-name=fetched,jobset.sigs.k8s.io/replicatedjob-name in (dataset-initializer,model-initializer,launcher,node)' \
        -o jsonpath='{range .items[*]}{.metadata.labels.jobset\.sigs\.k8s\.io/replicatedjob-name}{"\n"}{end}' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "the claim is the job's" "TrainJob" \
    "$(kubectl get pvc fetched-initializer -o jsonpath='{.metadata.ownerReferences[0].kind}' 2>&1)"

kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: offline}
spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    model: {storageUri: "hf://meta-llama/Llama-3.2-1B"}
  trainer:
    numNodes: 1
    command: ["/bin/true"]
EOF2
state=$(wait_tj offline Failed 120)
expect_eq "a source that needs the network fails the job" Failed "$state"
expect_match "... saying why in the initializer's log" 'hf://meta-llama/Llama-3.2-1B needs a network service \(hf\)' \
    "$(kubectl logs offline-model-initializer-0-0 -c model-initializer 2>&1)"
expect_match "... and an Event naming the step" 'replicated job model-initializer failed' \
    "$(kubectl get events --field-selector involvedObject.name=offline 2>&1)"
expect_eq "... the trainer never started" 0 \
    "$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=offline,jobset.sigs.k8s.io/replicatedjob-name=node --no-headers 2>/dev/null | wc -l)"

# ---- volumeClaimPolicies ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: shared-volume
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      volumeClaimPolicies:
      - templates:
        - metadata: {name: cache, labels: {tier: fast}}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
        retentionPolicy: {whenDeleted: Delete}
      - templates:
        - metadata: {name: keep}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
      replicatedJobs:
      - name: writer
        template:
          spec:
            template:
              spec:
                containers:
                - name: writer
                  image: busybox
                  command: ["/bin/sh", "-c", "echo written-by-writer > /cache/msg && echo kept > /keep/msg"]
                  volumeMounts: [{name: cache, mountPath: /cache}, {name: keep, mountPath: /keep}]
      - name: node
        dependsOn: [{name: writer, status: Complete}]
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch
                  volumeMounts: [{name: cache, mountPath: /cache}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sharer}
spec:
  runtimeRef: {name: shared-volume, kind: TrainingRuntime}
  trainer: {command: ["/bin/sh", "-c", "cat /cache/msg"]}
EOF2
state=$(wait_tj sharer Complete 120)
expect_eq "volumeClaimPolicies: the job completes" Complete "$state"
[ "$state" = Complete ] || dump_job trainjob sharer
expect_eq "... the trainer read what the writer left in the shared claim" written-by-writer \
    "$(kubectl logs sharer-node-0-0 -c node 2>&1)"
expect_eq "... PVC cache-sharer, JobSet's name label and the template's" "sharer fast" \
    "$(kubectl get pvc cache-sharer -o jsonpath='{.metadata.labels.jobset\.sigs\.k8s\.io/jobset-name} {.metadata.labels.tier}' 2>&1)"
expect_eq "... the pod's volume names it" cache-sharer \
    "$(kubectl get pod sharer-node-0-0 -o jsonpath='{.spec.volumes[?(@.name=="cache")].persistentVolumeClaim.claimName}')"
expect_eq "... whenDeleted Delete: controlled by the job" TrainJob \
    "$(kubectl get pvc cache-sharer -o jsonpath='{.metadata.ownerReferences[0].kind}' 2>&1)"
expect_eq "... no retentionPolicy: owned by nobody" "" \
    "$(kubectl get pvc keep-sharer -o jsonpath='{.metadata.ownerReferences}' 2>&1)"
check "delete the job" kubectl delete trainjob sharer
cache_gone() { ! kubectl get pvc cache-sharer >/dev/null 2>&1; }
check "... its Delete claim is collected" wait_until 60 cache_gone
check "... its other claim stays" kubectl get pvc keep-sharer
out=$(kubectl apply -f - 2>&1 <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: bad-claims}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      volumeClaimPolicies:
      - templates: [{metadata: {name: x, namespace: other}}, {metadata: {}}]
        retentionPolicy: {whenDeleted: Sometimes}
      replicatedJobs:
      - name: node
        template: {spec: {template: {spec: {containers: [{name: node, image: x}]}}}}
EOF2
)
expect_match "a template with a namespace is refused" 'volumeClaimPolicies\[0\].templates\[0\].metadata: Invalid value: "other": namespace cannot be set' "$out"
expect_match "... one without a name" 'volumeClaimPolicies\[0\].templates\[1\].metadata.name: Required value' "$out"
expect_match "... an unknown whenDeleted" 'volumeClaimPolicies\[0\].retentionPolicy.whenDeleted: Unsupported value: "Sometimes"' "$out"
finish
