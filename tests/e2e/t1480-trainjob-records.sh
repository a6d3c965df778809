#!/usr/bin/env bash
# JobRecords (a Trainyard extension): a deleted TrainJob leaves a record of
# what it was (spec, final status, its pods' phases and exit codes), listed
# by kubectl; the job is held by a finalizer only until its record is
# written; its logs stay readable; a job made again under its name gets a
# record of its own; records older than the retention are swept (checked
# by restarting with a retention of 1 s).
cd "$(dirname "$0")"
source ./lib.sh
start_server

tj() { # tj NAME COMMAND
    kubectl apply -f - >/dev/null <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $1}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command:
    - /bin/sh
    - -c
    - |
      $2
EOF2
}
MARK=/dev/shm/ty-e2e-1480-$$-$RANDOM
# node 1 fails only once node 0 has ended (as the API sees it): a job that
# fails deletes its pods still running
tj done "echo \"node \$PET_NODE_RANK says bye\"; [ \$PET_NODE_RANK = 0 ] && exit 0; while [ ! -e $MARK ]; do sleep 0.2; done; exit 1"
node0_done() { [ "$(kubectl get pod done-node-0-0 -o jsonpath='{.status.phase}' 2>/dev/null)" = Succeeded ]; }
check "node 0 ends" wait_until 120 node0_done
out=$("$TRAINYARD" get done 2>&1)
expect_match "get: a TrainJob whose pods started is not 'waiting'" '^Duration: +[0-9]' "$out"
expect_eq "... not 'not started'" "" "$(grep 'not started' <<<"$out")"
touch "$MARK"
state=$(wait_tj done Failed 120)
expect_eq "a job whose node 1 exits 1 fails" Failed "$state"
uid=$(kubectl get trainjob done -o jsonpath='{.metadata.uid}')
expect_eq "the controller holds the job for its record" trainyard.io/job-record \
    "$(kubectl get trainjob done -o jsonpath='{.metadata.finalizers[*]}')"
check "delete the job" kubectl delete trainjob done --timeout=120s
expect_eq "... it is gone" "" "$(kubectl get trainjob done --ignore-not-found -o name 2>&1)"
rec="done-${uid:0:8}"
expect_match "kubectl lists its record" "^$rec +TrainJob +done +Failed +[0-9TZ:-]+ " \
    "$(kubectl get jobrecords --no-headers 2>&1)"
expect_eq "... labelled with the job's kind and name" "TrainJob done" \
    "$(kubectl get jobrecord "$rec" -o jsonpath='{.metadata.labels.trainyard\.io/job-kind} {.metadata.labels.trainyard\.io/job-name}')"
expect_eq "... the job's spec, uid and final condition" "torch-distributed $uid FailedJobs" \
    "$(kubectl get jobrecord "$rec" -o jsonpath='{.spec.job.spec.runtimeRef.name} {.spec.job.metadata.uid} {.spec.job.status.conditions[-1:].reason}')"
expect_eq "... its pods' phases and exit codes" "done-node-0-0 Succeeded 0;done-node-0-1 Failed 1;" \
    "$(kubectl get jobrecord "$rec" -o jsonpath='{range .spec.pods[*]}{.name} {.phase} {.exitCode};{end}')"
expect_eq "... no finalizer copied into the record" "" \
    "$(kubectl get jobrecord "$rec" -o jsonpath='{.spec.job.metadata.finalizers}')"
out=$("$TRAINYARD" get done 2>&1)
expect_match "trainyard get shows the deleted job from its record" 'Name: +done \(deleted\)' "$out"
expect_match "... its end" 'Status: +Failed \(FailedJobs\)' "$out"
expect_match "... its pods' exit codes" 'done-node-0-1 +Failed +exit 1' "$out"
expect_match "... and trainjob/NAME too" 'Name: +done \(deleted\)' "$("$TRAINYARD" get trainjob/done 2>&1)"
expect_match "a name with no job and no record is still an error" 'no training job nosuch' "$("$TRAINYARD" get nosuch 2>&1)"
expect_match "the deleted job's logs are still there" 'node 1 says bye' "$("$TRAINYARD" logs done-node-0-1 2>&1)"
expect_match "... and by the job's name: node 0's, as for a live job" 'node 0 says bye' \
    "$("$TRAINYARD" logs done 2>/dev/null)"
expect_match "... any node's with --instance" 'node 1 says bye' \
    "$("$TRAINYARD" logs done -i done-node-0-1 2>/dev/null)"
# (a pod's log is marked gone once the pod is, after the job)
deleted_row() { "$TRAINYARD" logs --deleted 2>&1 | grep -Eq 'done-node-0-1 +done +node-0 '; }
wait_until deleted_row
expect_match "logs --deleted names the TrainJob and the replica" 'done-node-0-1 +done +node-0 ' \
    "$("$TRAINYARD" logs --deleted 2>&1)"

tj done 'true'
state=$(wait_tj done Complete 120)
expect_eq "a job made again under the name completes" Complete "$state"
uid2=$(kubectl get trainjob done -o jsonpath='{.metadata.uid}')
check "... deleted too" kubectl delete trainjob done --timeout=120s
expect_eq "... a record each" "$(printf '%s\n' "done-${uid:0:8}" "done-${uid2:0:8}" | sort | tr '\n' ' ')" \
    "$(kubectl get jobrecords -o name | sed 's|.*/||' | sort | tr '\n' ' ')"
expect_eq "the second record says Complete" Complete \
    "$(kubectl get jobrecord "done-${uid2:0:8}" -o jsonpath='{.spec.job.status.conditions[-1:].type}')"
expect_match "trainyard get tells it as a live job's: Succeeded" 'Status: +Succeeded \(AllJobsCompleted\)' \
    "$("$TRAINYARD" get done 2>&1)"

# ---- a record is the controller's: a tenant reads and deletes, never writes ----
"$TRAINYARD" user add bob --namespace default --data-dir "$E2E_TMP/data" \
    -o "$E2E_TMP/bob.kc" >/dev/null || fail "user add bob"
bob() { KUBECONFIG=$E2E_TMP/bob.kc kubectl "$@"; }
expect_match "a tenant (edit) reads the records" "done-${uid2:0:8}" "$(bob get jobrecords -o name 2>&1)"
rewrite='[{"op":"replace","path":"/spec/pods/1/exitCode","value":0}]'
expect_match "... edit may not rewrite one" 'forbidden' \
    "$(bob patch jobrecord "done-${uid:0:8}" --type=json -p "$rewrite" 2>&1)"
# granted the verbs by a Role of its own, still not: admission refuses
check "a Role granting writes of records" kubectl create role record-writer \
    --verb=create,update,patch --resource=jobrecords.trainyard.io
check "... bound to the tenant" kubectl create rolebinding bob-writes-records \
    --role=record-writer --user=bob
expect_match "... a rewrite is refused all the same" \
    "jobrecords.trainyard.io \"done-${uid:0:8}\" is forbidden: a JobRecord is written by the trainer controller" \
    "$(bob patch jobrecord "done-${uid:0:8}" --type=json -p "$rewrite" 2>&1)"
expect_match "... and so is a forged one" 'is forbidden: a JobRecord is written by the trainer controller' \
    "$(bob apply -f - 2>&1 <<'EOF2'
apiVersion: trainyard.io/v1
kind: JobRecord
metadata: {name: ghost, labels: {trainyard.io/job-kind: TrainJob, trainyard.io/job-name: ghost}}
spec: {deletedAt: "2030-01-01T00:00:00Z"}
EOF2
)"
expect_eq "... the record says what happened" "1" \
    "$(kubectl get jobrecord "done-${uid:0:8}" -o jsonpath='{.spec.pods[1].exitCode}')"
check "the tenant deletes a record" bob delete jobrecord "done-${uid:0:8}"

# ---- a namespace deleted with its jobs: nothing holds it ----
check "namespace scratch" kubectl create namespace scratch
check "a TrainJob in it" kubectl apply -n scratch -f - <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: brief}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 1, command: ["true"]}
EOF2
held() { [ "$(kubectl get trainjob brief -n scratch -o jsonpath='{.metadata.finalizers[*]}' 2>/dev/null)" = trainyard.io/job-record ]; }
check "... held for its record" wait_until 60 held
check "delete the namespace" kubectl delete namespace scratch --wait=false
ns_gone() { ! kubectl get namespace scratch >/dev/null 2>&1; }
check "... it goes, its TrainJob with it" wait_until 120 ns_gone

# ---- the retention ----
stop_server
start_server --job-record-retention 1s
gone() { [ -z "$(kubectl get jobrecords -o name 2>/dev/null)" ]; }
check "records past a retention of 1 s are swept" wait_until 60 gone
rm -f "$MARK"
finish
