#!/usr/bin/env bash
# Trainyard's dataset and model initializers: a file:// dataset and an
# http:// model (from a server on this machine) are fetched into the job's
# claim before the trainer starts, which reads them under /workspace; a
# source that needs the network fails the job with a clear line in the
# initializer's log.
cd "$(dirname "$0")"
source ./lib.sh
start_server

mkdir -p "$E2E_TMP/src" "$E2E_TMP/www"
echo "a,b" >"$E2E_TMP/src/data.csv"
chmod -R a+rX "$E2E_TMP/src"
echo "weights-v1" >"$E2E_TMP/www/model.bin"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$E2E_TMP/www" && exec /usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
HTTP_PID=$!
trap 'kill $HTTP_PID 2>/dev/null; cleanup' EXIT
up() { curl -fs "http://127.0.0.1:$port/model.bin" >/dev/null; }
wait_until 30 up || fail "the local HTTP server did not start"

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
finish
