#!/usr/bin/env bash
# Simulated nodes: `--sim-nodes 4x8 --no-local-node` registers four 8-GPU
# nodes and no local one; a PyTorchJob whose pods carry
# trainyard.io/sim-duration runs on them to Succeeded without running anything;
# a label added with kubectl survives a restart; a bad spec is a usage error.
. "$(dirname "$0")/lib.sh"

out=$("$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/bad" --sim-nodes 4x 2>&1); rc=$?
expect_eq "a bad --sim-nodes spec exits 2" "2" "$rc"
expect_match "and says what is wrong" 'invalid --sim-nodes 4x' "$out"
out=$("$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/bad" --no-local-node 2>&1); rc=$?
expect_eq "--no-local-node alone exits 2" "2" "$rc"

start_server --sim-nodes 4x8:cpu=16,memory=64Gi --no-local-node
nodes=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}')
expect_eq "kubectl get nodes shows the 4 sim nodes only" "sim-0 sim-1 sim-2 sim-3 " "$nodes"
expect_eq "each has 8 GPUs allocatable" "8 8 8 8" \
    "$(kubectl get nodes -o jsonpath='{.items[*].status.allocatable.nvidia\.com/gpu}')"
expect_eq "and the cpu of the spec" "16" \
    "$(kubectl get node sim-2 -o jsonpath='{.status.allocatable.cpu}')"
expect_match "they are Ready" '^sim-0 +Ready' "$(kubectl get nodes --no-headers)"

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: simjob
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            trainyard.io/sim-duration: "1.5"
        spec:
          containers:
          - name: pytorch
            image: x
            command: ["/bin/false"]   # never run: the nodes are simulated
            resources:
              limits:
                nvidia.com/gpu: 4
    Worker:
      replicas: 3
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            trainyard.io/sim-duration: "1.5"
        spec:
          containers:
          - name: pytorch
            image: x
            command: ["/bin/false"]
            resources:
              limits:
                nvidia.com/gpu: 8
YAML
state=$(wait_job pytorchjob simjob Running 30)
expect_match "the job starts" '^(Running|Succeeded)$' "$state"
expect_match "its pods are bound to sim nodes" '^(sim-[0-3] ){4}$' \
    "$(kubectl get pods -l training.kubeflow.org/job-name=simjob -o jsonpath='{range .items[*]}{.spec.nodeName}{" "}{end}')"
expect_match "a running pod has a pod IP and a host IP" '^100\.[0-9.]+ 10\.0\.0\.[1-4]$' \
    "$(kubectl get pod simjob-master-0 -o jsonpath='{.status.podIP} {.status.hostIP}')"
state=$(wait_job pytorchjob simjob Succeeded 30)
expect_eq "the job runs to Succeeded on sim nodes" "Succeeded" "$state"
[ "$state" = Succeeded ] || dump_job pytorchjob simjob
# (the job's end is its master's: a worker may end a moment later)
wait_until pods_in_phase Succeeded simjob-worker-0
expect_eq "its containers ended with exit code 0, reason Completed" "0 Completed" \
    "$(kubectl get pod simjob-worker-0 -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode} {.status.containerStatuses[0].state.terminated.reason}')"

kubectl label node sim-1 team=vision >/dev/null
kubectl cordon sim-2 >/dev/null
kubectl delete pytorchjob simjob >/dev/null
# (the garbage collector deletes them one by one: the last is waited for)
no_simjob_pods() { [ -z "$(kubectl get pods -l training.kubeflow.org/job-name=simjob -o name 2>/dev/null)" ]; }
wait_until no_simjob_pods
expect_eq "deleted pods go away (the sim node lets go)" "" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=simjob -o name 2>/dev/null)"
stop_server
start_server --sim-nodes 4x8:cpu=16,memory=64Gi --no-local-node
expect_eq "a label added with kubectl survives a restart" "vision" \
    "$(kubectl get node sim-1 -o jsonpath='{.metadata.labels.team}')"
expect_eq "so does a cordon" "true" "$(kubectl get node sim-2 -o jsonpath='{.spec.unschedulable}')"
finish
