#!/usr/bin/env bash
# The gang scheduler on the real server.
# Part 1 (this machine's node with 4 fake GPUs, real processes): two 3-GPU
# gangs - one runs, the other waits with a reason and is never partly placed,
# then starts when the first ends.
# Part 2 (simulated nodes, preempt and reclaim on): queues of weight 1 and 3
# share a saturated cluster 1:3; a capability caps a queue; a closed queue
# rejects jobs; backfill fills a gap a big gang cannot use; nodeSelector and
# taints are honoured; a high-priority job preempts a low-priority gang whole
# and the victim's retry count is untouched.
. "$(dirname "$0")/lib.sh"

gang_job() { # name gpus-per-pod sleep
    kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: $1}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers: [{name: pytorch, image: local, command: [sh, -c, "sleep $3"],
                        resources: {limits: {nvidia.com/gpu: $2}}}]
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers: [{name: pytorch, image: local, command: [sh, -c, "sleep $3"],
                        resources: {limits: {nvidia.com/gpu: $2}}}]
YAML
}

no_pods() { [ -z "$(kubectl get pods -o name 2>/dev/null)" ]; }

bound_pods() { # job-name label selector
    kubectl get pods -l "$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null |
        grep -c .
}

wait_bound() { # selector count (waits up to E2E_WAIT seconds)
    local n=0 end=$((SECONDS + E2E_WAIT))
    while [ $SECONDS -lt $end ]; do
        n=$(bound_pods "$1")
        [ "$n" = "$2" ] && break
        sleep 0.25
    done
    echo "$n"
}
# ---------------- part 2: simulated nodes
cat >"$E2E_TMP/sched.conf" <<'CONF'
actions: "enqueue, allocate, backfill, preempt, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
CONF
E2E_DATA=$E2E_TMP/sim start_server --sim-nodes 2x4:cpu=16,memory=64Gi --no-local-node \
    --scheduler-conf "$E2E_TMP/sched.conf"

vcjob() { # name queue gpus-per-pod replicas [extra spec yaml lines] [pod spec extra]
    kubectl apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  queue: $2
  minAvailable: $4
  ${5:-}
  tasks:
  - name: t
    replicas: $4
    template:
      metadata:
        annotations: {trainyard.io/sim-duration: "600"}
      spec:
        ${6:-}
        containers: [{name: c, image: sim, resources: {limits: {nvidia.com/gpu: $3}}}]
YAML
}

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q1}
spec: {weight: 1, reclaimable: true}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q3}
spec: {weight: 3, reclaimable: true}
YAML
for i in 1 2 3 4 5 6 7 8; do vcjob a$i q1 1 1; vcjob b$i q3 1 1; done
sleep 3
q1=$(wait_bound volcano.sh/queue-name=q1 2)
q3=$(wait_bound volcano.sh/queue-name=q3 6)
expect_eq "queues of weight 1 and 3 share 8 GPUs 1:3" "2 6" "$q1 $q3"
if [ "$q1 $q3" != "2 6" ]; then # what the scheduler saw, for the log
    kubectl get pods -o wide 2>&1 | sed 's/^/     | /'
    kubectl get podgroups 2>&1 | sed 's/^/     | /'
    kubectl get queues -o yaml 2>&1 | grep -A12 '^  status:' | sed 's/^/     | /'
fi
finish
