#!/usr/bin/env bash
# A TrainJob's lifecycle: created suspended (no pods, Suspended), resumed
# (pods, Suspended False/Resumed), suspended while running (pods deleted);
# activeDeadlineSeconds (Failed, DeadlineExceeded, upstream's message); a
# failing job restarted whole by its runtime's failurePolicy (maxRestarts)
# and then Failed; a gang too big for the machine waits with its reason on
# the TrainJob.
cd "$(dirname "$0")"
source ./lib.sh
start_server

npods() { kubectl get pods -l "jobset.sigs.k8s.io/jobset-name=$1" --no-headers 2>/dev/null | wc -l; }
npods_is() { [ "$(npods "$1")" = "$2" ]; }
running_is() { [ "$(kubectl get pods -l "jobset.sigs.k8s.io/jobset-name=$1" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)" = "$2" ]; }

# ---- suspend / resume ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sleeper}
spec:
  runtimeRef: {name: torch-distributed}
  suspend: true
  trainer:
    numNodes: 2
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]
EOF2
if wait_until 60 tj_cond_is sleeper Suspended "True Suspended"; then pass "created suspended: Suspended True"; else fail "created suspended: $(tj_cond sleeper Suspended)"; fi
expect_eq "suspended: no pods" 0 "$(npods sleeper)"
expect_eq "suspended: jobsStatus counts the suspended job" "node 1 0" \
    "$(kubectl get trainjob sleeper -o jsonpath='{.status.jobsStatus[0].name} {.status.jobsStatus[0].suspended} {.status.jobsStatus[0].active}')"
check "resume" kubectl patch trainjob sleeper --type=merge -p '{"spec":{"suspend":false}}'
if wait_until 60 running_is sleeper 2; then pass "resumed: both pods run"; else fail "resumed: $(npods sleeper) pods"; fi
expect_eq "resumed: Suspended False, Resumed" "False Resumed" "$(tj_cond sleeper Suspended)"
check "suspend while running" kubectl patch trainjob sleeper --type=merge -p '{"spec":{"suspend":true}}'
if wait_until 60 npods_is sleeper 0; then pass "suspended again: pods deleted"; else fail "suspended: $(npods sleeper) pods left"; fi
expect_eq "suspended again: Suspended True" "True Suspended" "$(tj_cond sleeper Suspended)"
expect_eq "no Running condition" "" "$(kubectl get trainjob sleeper -o jsonpath='{.status.conditions[?(@.type=="Running")].type}')"
check "delete sleeper" kubectl delete trainjob sleeper

# ---- activeDeadlineSeconds ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: late}
spec:
  runtimeRef: {name: torch-distributed}
  activeDeadlineSeconds: 3
  trainer:
    numNodes: 1
    command: ["/bin/sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]
EOF2
if wait_until 60 tj_cond_is late Failed "True DeadlineExceeded"; then pass "deadline: Failed, DeadlineExceeded"; else fail "deadline: $(tj_cond late Failed)"; fi
expect_eq "deadline: upstream's message" "TrainJob exceeded its active deadline" \
    "$(kubectl get trainjob late -o jsonpath='{.status.conditions[?(@.type=="Failed")].message}')"
if wait_until 60 npods_is late 0; then pass "deadline: the running pod is stopped"; else fail "deadline: pods left"; fi

# ---- failurePolicy: a whole-set restart, then Failed ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-retry
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      failurePolicy: {maxRestarts: 1}
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: flaky}
spec:
  runtimeRef: {name: torch-retry, kind: TrainingRuntime}
  trainer:
    numNodes: 2
    command: ["/bin/sh", "-c", "[ $PET_NODE_RANK = 0 ] && exit 3; trap 'exit 0' TERM; sleep 600 & wait"]
EOF2
if wait_until 120 tj_cond_is flaky Failed "True ReachedMaxRestarts"; then pass "failurePolicy: Failed after maxRestarts"; else fail "failurePolicy: $(tj_cond flaky Failed)"; dump_job trainjob flaky; fi
expect_eq "failurePolicy: one whole-set restart" 1 \
    "$(kubectl get trainjob flaky -o jsonpath='{.metadata.annotations.trainyard\.io/restarts}')"
# (the first attempt's pods may still be going when the second fails: the
# ones left in the end are waited for)
attempts() { kubectl get pods -l jobset.sigs.k8s.io/jobset-name=flaky -o jsonpath='{range .items[*]}{.metadata.labels.jobset\.sigs\.k8s\.io/restart-attempt} {end}' | sed 's/ $//'; }
attempts_are_1() { grep -Eq '^1( 1)*$' <<<"$(attempts)"; }
wait_until attempts_are_1
expect_match "failurePolicy: the pods left (the failed rank) carry restart-attempt 1" '^1( 1)*$' \
    "$(attempts)"
expect_match "failurePolicy: the restart is an Event" 'restarting every job \(1 of 1\)' \
    "$(kubectl get events --field-selector involvedObject.name=flaky 2>&1)"
if wait_until 60 running_is flaky 0; then pass "failed: no pod left running"; else fail "failed: pods still run"; fi
# the count is the controller's: a tenant cannot reset it (nor forge the
# runtime snapshot) to run a failing gang for ever
"$TRAINYARD" user add dave --namespace default --data-dir "$E2E_TMP/data" \
    -o "$E2E_TMP/dave.kc" >/dev/null || fail "user add dave"
KUBECONFIG=$E2E_TMP/dave.kc kubectl annotate trainjob flaky --overwrite trainyard.io/restarts=0 \
    'trainyard.io/runtime-snapshot={}' >/dev/null 2>&1
expect_eq "a tenant's reset of the restart count is ignored" 1 \
    "$(kubectl get trainjob flaky -o jsonpath='{.metadata.annotations.trainyard\.io/restarts}')"
expect_match "... and of the runtime snapshot" '"maxRestarts":1' \
    "$(kubectl get trainjob flaky -o jsonpath='{.metadata.annotations.trainyard\.io/runtime-snapshot}')"
KUBECONFIG=$E2E_TMP/dave.kc kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: headstart, annotations: {trainyard.io/restarts: "-50"}}
spec:
  suspend: true
  runtimeRef: {name: torch-retry, kind: TrainingRuntime}
  trainer: {numNodes: 1, command: ["true"]}
EOF2
expect_eq "... nor made with a head start" "" \
    "$(kubectl get trainjob headstart -o jsonpath='{.metadata.annotations.trainyard\.io/restarts}')"
# a snapshot a master wrote over is taken again, and written once (it was
# taken from the live runtime at every pass, never stored)
snap_of() { kubectl get trainjob headstart -o jsonpath='{.metadata.annotations.trainyard\.io/runtime-snapshot}' 2>/dev/null; }
has_snap() { grep -q '"maxRestarts":1' <<<"$(snap_of)"; }
check "headstart has its snapshot" wait_until 60 has_snap
kubectl annotate trainjob headstart --overwrite 'trainyard.io/runtime-snapshot={"spec":' >/dev/null
check "an unreadable snapshot is written again" wait_until 60 has_snap
check "delete headstart" kubectl delete trainjob headstart

# ---- a FailJobSet rule fails the set at once, maxRestarts or not ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-failfast
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      failurePolicy:
        maxRestarts: 3
        rules:
        - {name: fail-fast, action: FailJobSet, targetReplicatedJobs: [node]}
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
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: failfast}
spec:
  runtimeRef: {name: torch-failfast, kind: TrainingRuntime}
  trainer:
    command: ["/bin/sh", "-c", "exit 4"]
EOF2
if wait_until 120 tj_cond_is failfast Failed "True FailedJobs"; then pass "a FailJobSet rule: Failed at once"; else fail "FailJobSet: $(tj_cond failfast Failed)"; fi
expect_eq "a FailJobSet rule: no restart" "" \
    "$(kubectl get trainjob failfast -o jsonpath='{.metadata.annotations.trainyard\.io/restarts}')"

# ---- a gang too big waits, and says why ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: huge}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode: {requests: {cpu: "1000"}}
    command: ["/bin/true"]
EOF2
why() { kubectl get events --field-selector involvedObject.name=huge,involvedObject.kind=TrainJob 2>&1 | grep -q Unschedulable; }
if wait_until 60 why; then pass "gang: why pending is an Event on the TrainJob"; else fail "gang: no Unschedulable event on the TrainJob"; kubectl get events 2>&1 | tail -5; fi
expect_eq "gang: no pod made before the gang is admitted" 0 "$(npods huge)"
expect_match "gang: the PodGroup's minResources sum the nodes" '"cpu":"2k"|"cpu":"2000"' \
    "$(kubectl get podgroups.scheduling.volcano.sh huge -o jsonpath='{.spec.minResources}')"

# ---- the queue from a runtime patch (as Kueue or an admin writes it) ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: queued}
spec:
  runtimeRef: {name: torch-distributed}
  runtimePatches:
  - manager: example.com/placer
    trainingRuntimeSpec:
      template:
        metadata:
          annotations: {scheduling.volcano.sh/queue-name: team-q}
  trainer:
    numNodes: 1
    command: ["/bin/true"]
EOF2
pgq() { [ "$(kubectl get podgroups.scheduling.volcano.sh queued -o jsonpath='{.spec.queue}' 2>/dev/null)" = team-q ]; }
if wait_until 60 pgq; then pass "gang: queue from a runtime patch's annotation"; else fail "gang: queue $(kubectl get podgroups.scheduling.volcano.sh queued -o jsonpath='{.spec.queue}' 2>&1)"; fi
# ---- Trainyard's TTL after finish (trainyard.io/ttl-seconds-after-finished) ----
kubectl delete trainjob huge queued >/dev/null 2>&1 # the gang that never fits waits first in the queue
out=$(kubectl apply -f - 2>&1 <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: badttl
  annotations: {trainyard.io/ttl-seconds-after-finished: "soon"}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 1, command: ["/bin/true"]}
EOF2
)
expect_match "ttl: a value that is no number of seconds is refused at its field" \
    'metadata.annotations\[trainyard.io/ttl-seconds-after-finished\]: Invalid value: "soon"' "$out"
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: shortlived
  annotations: {trainyard.io/ttl-seconds-after-finished: "2"}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 1, command: ["/bin/true"]}
EOF2
done_or_gone() { tj_cond_is shortlived Complete "True AllJobsCompleted" || ! kubectl get trainjob shortlived >/dev/null 2>&1; }
if wait_until 120 done_or_gone; then pass "ttl: the job completes"; else fail "ttl: the job completes"; kubectl get trainjob shortlived -o yaml 2>&1 | tail -30; kubectl get pods -l jobset.sigs.k8s.io/jobset-name=shortlived 2>&1; fi
gone() { ! kubectl get trainjob shortlived >/dev/null 2>&1; }
check "ttl: ... and is deleted 2 s after" wait_until 60 gone
finish
