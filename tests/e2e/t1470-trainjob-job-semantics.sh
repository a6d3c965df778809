#!/usr/bin/env bash
# The JobSet and Job semantics a runtime's template asks for: a Job
# template's backoffLimit (a failed pod made again, up to the limit per job,
# then the failurePolicy), startupPolicy InOrder (a replicated job's pods
# only once the ones before it are ready), and failurePolicy
# restartStrategy BlockingRecreate (no pod of a restart before every pod of
# the last attempt is gone).
cd "$(dirname "$0")"
source ./lib.sh
start_server

MARK=/dev/shm/ty-e2e-1470-$$-$RANDOM

# ---- backoffLimit ----
kubectl apply -f - >/dev/null <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-backoff
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
            backoffLimit: 2
            template:
              spec:
                containers:
                - {name: node, image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: third-time}
spec:
  runtimeRef: {name: torch-backoff, kind: TrainingRuntime}
  trainer:
    command: ["/bin/sh", "-c", "echo x >> $MARK.tries; [ \$(wc -l < $MARK.tries) -ge 3 ] || exit 5"]
EOF2
if wait_until 120 tj_cond_is third-time Complete "True AllJobsCompleted"; then pass "backoffLimit: the third try completes the job"; else fail "backoffLimit: $(tj_cond third-time Complete)"; dump_job trainjob third-time; fi
expect_eq "backoffLimit: three tries" 3 "$(wc -l < "$MARK.tries" 2>/dev/null)"
expect_eq "backoffLimit: two retries of job node-0 counted" '{"node-0":2}' \
    "$(kubectl get trainjob third-time -o jsonpath='{.metadata.annotations.trainyard\.io/job-retries}')"
expect_match "backoffLimit: each retry an Event" 'RetryingPod.*third-time-node-0-0 failed: making it again \(2 of the Job.s backoffLimit 2\)' \
    "$(kubectl get events --field-selector involvedObject.name=third-time 2>&1)"
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: hopeless}
spec:
  runtimeRef: {name: torch-backoff, kind: TrainingRuntime}
  trainer:
    command: ["/bin/sh", "-c", "exit 5"]
EOF2
if wait_until 120 tj_cond_is hopeless Failed "True FailedJobs"; then pass "backoffLimit: past the limit the job fails"; else fail "backoffLimit: $(tj_cond hopeless Failed)"; fi
expect_eq "backoffLimit: both retries used" '{"node-0":2}' \
    "$(kubectl get trainjob hopeless -o jsonpath='{.metadata.annotations.trainyard\.io/job-retries}')"
out=$(kubectl apply -f - 2>&1 <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: bad-backoff}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      startupPolicy: {startupPolicyOrder: Sometimes}
      replicatedJobs:
      - name: node
        template:
          spec:
            backoffLimit: -1
            template: {spec: {containers: [{name: node, image: x}]}}
EOF2
)
expect_match "a negative backoffLimit is refused at its path" \
    'spec.template.spec.replicatedJobs\[0\].template.spec.backoffLimit: Invalid value: -1' "$out"
expect_match "an unknown startupPolicyOrder is refused" \
    'spec.template.spec.startupPolicy.startupPolicyOrder: Unsupported value: "Sometimes"' "$out"

# ---- startupPolicy InOrder ----
kubectl apply -f - >/dev/null <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: in-order
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      startupPolicy: {startupPolicyOrder: InOrder}
      successPolicy: {operator: All, targetReplicatedJobs: [node]}
      replicatedJobs:
      - name: first
        template:
          spec:
            template:
              spec:
                initContainers:
                - {name: wait, image: busybox, command: ["/bin/sh", "-c", "while [ ! -e $MARK.go ]; do sleep 0.2; done"]}
                containers:
                - {name: first, image: busybox, command: ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]}
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: ordered}
spec:
  runtimeRef: {name: in-order, kind: TrainingRuntime}
  trainer: {command: ["/bin/true"]}
EOF2
first_pending() { [ "$(kubectl get pod ordered-first-0-0 -o jsonpath='{.status.phase}' 2>/dev/null)" = Pending ]; }
if wait_until 60 first_pending; then pass "InOrder: the first replicated job's pod is made"; else fail "InOrder: no first pod"; fi
expect_eq "InOrder: no node pod while the first is not ready" "" \
    "$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=ordered,jobset.sigs.k8s.io/replicatedjob-name=node --no-headers 2>/dev/null)"
expect_eq "InOrder: the gang is the first replicated job" 1 \
    "$(kubectl get podgroups.scheduling.volcano.sh ordered -o jsonpath='{.spec.minMember}')"
touch "$MARK.go"
if wait_until 120 tj_cond_is ordered Complete "True AllJobsCompleted"; then pass "InOrder: the nodes follow once it runs, and complete"; else fail "InOrder: $(tj_cond ordered Complete)"; dump_job trainjob ordered; fi

# ---- restartStrategy BlockingRecreate ----
# The gang alone keeps a restarted node from starting before the old nodes
# are gone (the new gang is whole only then); a replicated job outside it (a
# dependsOn one, `helper`) shows the difference: under Recreate the node
# would start again while the old helper still stops.
kubectl apply -f - >/dev/null <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: blocking
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      failurePolicy: {maxRestarts: 1, restartStrategy: BlockingRecreate}
      successPolicy: {operator: All, targetReplicatedJobs: [node]}
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - {name: node, image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime}
      - name: helper
        dependsOn: [{name: node, status: Ready}]
        template:
          spec:
            template:
              spec:
                containers:
                - name: helper
                  image: busybox
                  command:
                  - /bin/sh
                  - -c
                  - |
                    echo "start helper" >> $MARK.log
                    [ -e $MARK.helper ] && { trap 'exit 0' TERM; sleep 600 & wait; exit 0; }
                    # the first life takes 2 s to stop
                    trap 'sleep 2; echo "end helper" >> $MARK.log; exit 0' TERM
                    touch $MARK.helper
                    sleep 600 & wait
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: blocker}
spec:
  runtimeRef: {name: blocking, kind: TrainingRuntime}
  trainer:
    command:
    - /bin/sh
    - -c
    - |
      echo "start node" >> $MARK.log
      [ -e $MARK.failed ] && exit 0
      while [ ! -e $MARK.helper ]; do sleep 0.2; done
      touch $MARK.failed; exit 3
EOF2
if wait_until 180 tj_cond_is blocker Complete "True AllJobsCompleted"; then pass "BlockingRecreate: restarted once, then completes"; else fail "BlockingRecreate: $(tj_cond blocker Complete)"; dump_job trainjob blocker; fi
log=$(cat "$MARK.log" 2>/dev/null | tr '\n' ',')
# the restart's helper waits for its node to be Ready (Running), not for the
# node's first line: it may write its own first, or not start at all when
# the node ends the job before it
expect_match "BlockingRecreate: no pod of the restart before the last attempt's pods are gone" \
    '^start node,start helper,end helper,(start helper,)?start node,' "$log"
rm -f "$MARK".*
finish
