#!/usr/bin/env bash
# t0920-gang-elastic.sh - Volcano Jobs whose minAvailable is below their
# replica count on this machine's node (issue 30): the shape of Volcano's
# MindSpore CPU example (8 replicas, minAvailable 1, RestartJob on
# PodEvicted, ssh/env/svc plugins) with each pod asking half the node's CPUs
# runs two pods at once, the other six wait as plain pending pods (the
# PodGroup is Running and Scheduled, each pod says why it waits), the next
# ones start as the first ones finish, and the job completes. Two such jobs
# side by side (Volcano's hierarchical-jobs shape, in one queue) both start.
# The pods wait on gate files, so nothing depends on how fast they run.
source "$(dirname "$0")/lib.sh"

start_server

# the node's allocatable CPUs, in millicores ("2", "1500m")
cpu=$(kubectl get nodes -o jsonpath='{.items[0].status.allocatable.cpu}')
case "$cpu" in
*m) milli=${cpu%m} ;;
*) milli=$((cpu * 1000)) ;;
esac
G="$E2E_TMP/gates"
mkdir -p "$G"

# vcjob NAME REPLICAS MILLICORES
vcjob() {
    kubectl apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: 1
  schedulerName: volcano
  policies:
    - {event: PodEvicted, action: RestartJob}
  plugins: {ssh: [], env: [], svc: []}
  maxRetry: 5
  queue: default
  tasks:
    - replicas: $2
      name: pod
      template:
        spec:
          containers:
            - name: mindspore-cpu-job
              image: local
              command: [sh, -c, "until [ -e $G/all ] || [ -e $G/\$(cat /proc/sys/kernel/hostname) ]; do sleep 0.2; done"]
              resources:
                limits: {cpu: "$3m"}
                requests: {cpu: "$3m"}
          restartPolicy: OnFailure
YAML
}

# pods of job $1 with a node, and those in phase $2 (optional)
bound() { kubectl get pods -l volcano.sh/job-name="$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .; }
in_phase() { kubectl get pods -l volcano.sh/job-name="$1" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c "^$2\$"; }
bound_is() { [ "$(bound "$1")" = "$2" ]; }
pods_are() { [ "$(kubectl get pods -l volcano.sh/job-name="$1" -o name | grep -c .)" = "$2" ]; }
running_is() { [ "$(in_phase "$1" Running)" = "$2" ]; }
vc_phase() { kubectl get vcjob "$1" -o jsonpath='{.status.state.phase}'; }
phase_is() { [ "$(vc_phase "$1")" = "$2" ]; }
pg_of() { kubectl get podgroups -o jsonpath="{range .items[*]}{.metadata.name}{\"\\n\"}{end}" | grep "^$1-"; }
pg_phase_is() { [ "$(kubectl get podgroup "$(pg_of "$1")" -o jsonpath='{.status.phase}')" = "$2" ]; }

# ---- the MindSpore CPU example's shape: two of eight fit at once
half=$((milli / 2))
vcjob mindspore-cpu 8 "$half"
check "all 8 pods are made" wait_until pods_are mindspore-cpu 8
check "two run (as many as fit in $cpu CPUs at ${half}m each)" wait_until running_is mindspore-cpu 2
expect_eq "the other six wait unbound" 2 "$(bound mindspore-cpu)"
check "the job is Running" wait_until phase_is mindspore-cpu Running
check "its PodGroup is Running" wait_until pg_phase_is mindspore-cpu Running
pg=$(pg_of mindspore-cpu)
expect_eq "the PodGroup is Scheduled, not Unschedulable" "True" \
    "$(kubectl get podgroup "$pg" -o jsonpath='{.status.conditions[?(@.type=="Scheduled")].status}')"
unsched=$(kubectl get podgroup "$pg" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].status}')
expect_eq "the PodGroup says nothing is unschedulable" "" "${unsched#False}"
waiting=$(kubectl get pods -l volcano.sh/job-name=mindspore-cpu -o jsonpath='{range .items[?(@.status.phase=="Pending")]}{.metadata.name}{"\n"}{end}' | head -1)
pod_why() { kubectl get pod "$waiting" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
pod_says() { pod_why | grep -q 'Insufficient cpu'; }
check "a waiting pod says why (Insufficient cpu)" wait_until pod_says
expect_match "as kube-scheduler words it" '^0/1 nodes are available: 1 Insufficient cpu\.$' "$(pod_why)"

# the first two finish: the next two start
for p in $(kubectl get pods -l volcano.sh/job-name=mindspore-cpu -o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{"\n"}{end}'); do
    touch "$G/$p"
done
two_done() { [ "$(in_phase mindspore-cpu Succeeded)" = 2 ]; }
check "the first two finish" wait_until two_done
check "... four have had a node" wait_until bound_is mindspore-cpu 4
check "... and the next two run" wait_until running_is mindspore-cpu 2
touch "$G/all"
check "the job completes" wait_until phase_is mindspore-cpu Completed
expect_eq "all eight pods ran to success" 8 "$(in_phase mindspore-cpu Succeeded)"

# ---- two elastic jobs side by side: both start, turn by turn. A pod holds
# all but less than one of their pods' room while both are made, so that
# the room comes when both wait (else the first made could take it all).
rm -f "$G/all"
kubectl delete vcjob mindspore-cpu >/dev/null
eighth=$((milli / 8))
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: blocker}
spec:
  restartPolicy: Never
  containers:
    - name: main
      image: local
      command: [sh, -c, "until [ -e $G/blocker ]; do sleep 0.2; done"]
      resources: {requests: {cpu: "$((milli - eighth + 1))m"}}
YAML
blocker_runs() { [ "$(kubectl get pod blocker -o jsonpath='{.status.phase}')" = Running ]; }
check "a pod holds the node" wait_until blocker_runs
vcjob eng-prod-job 6 "$eighth"
vcjob eng-dev-job 6 "$eighth"
check "both jobs' pods are made" wait_until pods_are eng-prod-job 6
check "... the second's too" wait_until pods_are eng-dev-job 6
expect_eq "none has room yet" 0 "$(($(bound eng-prod-job) + $(bound eng-dev-job)))"
touch "$G/blocker"
eight_bound() { [ "$(($(bound eng-prod-job) + $(bound eng-dev-job)))" = 8 ]; }
check "once it ends, eight pods of ${eighth}m run" wait_until eight_bound
expect_eq "... four of each job (not one job's six)" "4 4" "$(bound eng-prod-job) $(bound eng-dev-job)"
touch "$G/all"
check "both complete" wait_until phase_is eng-prod-job Completed
check "... the second too" wait_until phase_is eng-dev-job Completed

finish
