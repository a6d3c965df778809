#!/usr/bin/env bash
# Upstream's runtime-in-use protection: a ClusterTrainingRuntime or
# TrainingRuntime that TrainJobs name carries the finalizer
# trainer.kubeflow.org/resource-in-use, so deleting it waits (the runtime
# stays, marked) until the last of its TrainJobs is gone. A runtime nobody
# uses has no finalizer and goes at once.
cd "$(dirname "$0")"
source ./lib.sh

start_server --no-local-node --sim-nodes 1x4

fins() { kubectl get "$1" "$2" ${3:+-n "$3"} -o jsonpath='{.metadata.finalizers}' 2>/dev/null; }
has_fin() { [[ "$(fins "$@")" == *trainer.kubeflow.org/resource-in-use* ]]; }
no_fin() { kubectl get "$1" "$2" ${3:+-n "$3"} >/dev/null 2>&1 && ! has_fin "$@"; }
gone() { ! kubectl get "$1" "$2" ${3:+-n "$3"} >/dev/null 2>&1; }
marked() { [ -n "$(kubectl get "$1" "$2" ${3:+-n "$3"} -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]; }
job() { # job NAME KIND RUNTIME [NS]
    kubectl apply -n "${4:-default}" -f - <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $1}
spec:
  suspend: true
  runtimeRef: {name: $3, kind: $2}
  trainer: {numNodes: 1}
EOF2
}
runtime() { # runtime KIND NAME [NS]
    kubectl apply ${3:+-n "$3"} -f - <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: $1
metadata:
  name: $2
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: busybox, command: ["true"]}
EOF2
}

# ---- a ClusterTrainingRuntime ----
check "cluster runtime mine" runtime ClusterTrainingRuntime mine
check "... no finalizer while unused" wait_until 10 no_fin clustertrainingruntime mine
check "two TrainJobs on it" job j1 ClusterTrainingRuntime mine
check "... (second)" job j2 ClusterTrainingRuntime mine
check "in use: the finalizer comes" wait_until has_fin clustertrainingruntime mine
check "delete the runtime (no wait)" kubectl delete clustertrainingruntime mine --wait=false
check "... it stays, marked for deletion" marked clustertrainingruntime mine
check "... with its finalizer" has_fin clustertrainingruntime mine
check "delete one of its jobs" kubectl delete trainjob j1
check "... the other still holds it" has_fin clustertrainingruntime mine
check "... still there" marked clustertrainingruntime mine
check "delete the last job" kubectl delete trainjob j2
check "the runtime goes once no TrainJob names it" wait_until gone clustertrainingruntime mine

# ---- a built-in runtime: the same rule ----
check "a TrainJob on torch-distributed" job t1 ClusterTrainingRuntime torch-distributed
check "... torch-distributed gets the finalizer" wait_until has_fin clustertrainingruntime torch-distributed
check "the job goes" kubectl delete trainjob t1
check "... and the finalizer with it" wait_until no_fin clustertrainingruntime torch-distributed

# ---- a TrainingRuntime: its own namespace's jobs only ----
check "namespace other" kubectl create namespace other
check "TrainingRuntime local in default" runtime TrainingRuntime local default
check "TrainingRuntime local in other" runtime TrainingRuntime local other
check "a job on default's local" job n1 TrainingRuntime local default
check "default's local is in use" wait_until has_fin trainingruntime local default
check "other's local is not" no_fin trainingruntime local other
check "other's local deletes at once" kubectl delete trainingruntime local -n other --timeout=60s
check "... gone" gone trainingruntime local other
check "delete default's local (no wait)" kubectl delete trainingruntime local --wait=false
check "... held by n1" marked trainingruntime local default
check "delete n1" kubectl delete trainjob n1
check "... the runtime goes" wait_until gone trainingruntime local default

finish
