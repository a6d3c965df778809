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

gang_job() { # name gpus-per-pod command
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
          containers: [{name: pytorch, image: local, command: [sh, -c, "$3"],
                        resources: {limits: {nvidia.com/gpu: $2}}}]
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers: [{name: pytorch, image: local, command: [sh, -c, "$3"],
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

# ---------------- part 1: one node, 4 fake GPUs
# gang-a holds its GPUs until the test opens its gate, so that gang-b's
# waiting is seen however slowly the machine runs.
G="$E2E_TMP/gates"
mkdir -p "$G"
start_server --fake-gpus 4
gang_job gang-a 1 "while [ ! -e $G/gang-a ]; do sleep 0.2; done"
expect_eq "the first 3-GPU gang is placed whole" 3 \
    "$(wait_bound training.kubeflow.org/job-name=gang-a 3)"
gang_job gang-b 1 "sleep 1"
# While gang-a holds 3 of the 4 GPUs no pod of gang-b may be bound: a
# partial gang would be one or two of them.
partial=0
msg=""
end=$((SECONDS + E2E_WAIT))
while [ -z "$msg" ] && [ $SECONDS -lt $end ]; do
    n=$(bound_pods training.kubeflow.org/job-name=gang-b)
    [ "$n" != 0 ] && partial=1
    msg=$(kubectl get podgroup gang-b -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}' 2>/dev/null)
    sleep 0.25
done
expect_eq "the second gang waits while the first runs" 0 \
    "$(bound_pods training.kubeflow.org/job-name=gang-b)"
expect_match "its PodGroup says why" 'no room|unschedulable' "$msg"
expect_match "kubectl describe of the job says why it waits" 'Unschedulable' \
    "$(kubectl describe pytorchjob gang-b)"
run=""
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    run=$(kubectl get podgroup gang-a -o jsonpath='{.status.running}' 2>/dev/null)
    [ "$run" = 3 ] && break
    sleep 0.25
done
expect_eq "the running gang's PodGroup counts its pods (status.running)" 3 "$run"
expect_match "kubectl get podgroups shows them as RUNNINGS" '^gang-a +Running +3 +3 ' \
    "$(kubectl get podgroups | grep '^gang-a')"
[ "$(bound_pods training.kubeflow.org/job-name=gang-b)" = 0 ] || partial=1
touch "$G/gang-a"
# (In operator mode the scheduler binds a gang's pods one request each, as
# Volcano does, so a look between them may see some bound: from here only
# the end counts.)
n=$(wait_bound training.kubeflow.org/job-name=gang-b 3)
expect_eq "the second gang starts whole when the first ends" 3 "$n"
expect_eq "never a partial gang" 0 "$partial"
stop_server

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
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    qs=$(kubectl get queue q3 -o jsonpath='{.status.allocated.nvidia\.com/gpu} {.status.running} {.status.inqueue}')
    grep -Eq '^6 6 [0-9]+$' <<<"$qs" && break
    sleep 0.25
done
expect_match "the Queue's status shows its allocation and PodGroups" '^6 6 [0-9]+$' "$qs"
kubectl delete vcjob --all >/dev/null
wait_until no_pods

# capability caps a queue
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: capped}
spec: {weight: 1, capability: {nvidia.com/gpu: 2}}
YAML
for i in 1 2 3; do vcjob c$i capped 1 1; done
sleep 2
expect_eq "a queue's capability caps it (2 of 3 one-GPU jobs run)" 2 \
    "$(wait_bound volcano.sh/queue-name=capped 2)"
sleep 1
expect_eq "the third keeps waiting under the cap" 2 "$(bound_pods volcano.sh/queue-name=capped)"
expect_eq "a Volcano Job's PodGroup carries its gang's minResources" '{"nvidia.com/gpu":"1"}' \
    "$(kubectl get podgroups -o jsonpath='{range .items[*]}{.metadata.name} {.spec.minResources}{"\n"}{end}' |
       sed -n 's/^c3-[^ ]* //p')"
expect_eq "so the third job's pods are not made while its group waits for room" 2 \
    "$(kubectl get pods -l volcano.sh/queue-name=capped -o name | grep -c .)"
pg_messages() { kubectl get podgroups -o jsonpath='{range .items[*]}{.status.conditions[*].message}{"\n"}{end}'; }
says_cap() { grep -Eq 'capability|deserved share' <<<"$(pg_messages)"; }
wait_until says_cap
expect_match "and its PodGroup says why" 'capability|deserved share' "$(pg_messages)"
kubectl delete vcjob --all >/dev/null

# a closed queue rejects new jobs
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: shut}
spec: {weight: 1}
YAML
kubectl patch queue shut --subresource=status --type=merge -p '{"status":{"state":"Closed"}}' >/dev/null
out=$(vcjob closed1 shut 1 1 2>&1); rc=$?
expect_eq "a job for a closed queue is rejected" 1 "$rc"
expect_match "with a clear error" 'queue `shut` status is `Closed`' "$out"

# only a leaf queue takes jobs (Volcano's rule): not one with a child queue
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: parentq}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: childq}
spec: {weight: 1, parent: parentq}
YAML
out=$(vcjob toparent parentq 1 1 2>&1); rc=$?
expect_eq "a job for a queue with a child queue is rejected" 1 "$rc"
expect_match "saying only a leaf queue takes jobs" \
    'can only submit job to leaf queue, queue `parentq` has 1 child queues' "$out"
for q in childq parentq; do
    kubectl patch queue $q --subresource=status --type=merge -p '{"status":{"state":"Closed"}}' >/dev/null
    kubectl delete queue $q >/dev/null
done

# Volcano's rules for deleting a Queue: never `default`, only a Closed one
out=$(kubectl delete queue default 2>&1); rc=$?
expect_eq "the default queue cannot be deleted" "1 Error from server (Forbidden): \`default\` queue can not be deleted" "$rc $out"
out=$(kubectl delete queue capped 2>&1); rc=$?
expect_eq "an Open queue cannot be deleted" "1 Error from server (Forbidden): only queue with state \`Closed\` can be deleted, queue \`capped\` state is \`Open\`" "$rc $out"
expect_eq "a Closed one can" 'queue.scheduling.volcano.sh "shut" deleted' "$(kubectl delete queue shut 2>&1)"

# a cycle of parents is refused (two queues naming each other froze the
# scheduler), on create and on update; the scheduler goes on
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qc1}\nspec: {parent: qc2}\n' |
    kubectl create -f - >/dev/null
out=$(printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qc2}\nspec: {parent: qc1}\n' |
    kubectl create -f - 2>&1); rc=$?
expect_eq "a queue that would close a cycle of parents is refused" 1 "$rc"
expect_match "with the field and why" \
    'Queue "qc2" is invalid: spec.parent: Invalid value: "qc1": the queue would be its own ancestor' "$out"
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qc2}\n' |
    kubectl create -f - >/dev/null
out=$(kubectl patch queue qc2 --type merge -p '{"spec":{"parent":"qc1"}}' 2>&1); rc=$?
expect_eq "and so is an update that would" 1 "$rc"
expect_match "with the same reason" 'spec.parent: Invalid value: "qc1"' "$out"
wait_until no_pods

# backfill: a 6-GPU job runs, an 8-GPU gang waits, a 1-GPU job fills the gap
vcjob mid default 3 2
expect_eq "mid runs" 2 "$(wait_bound volcano.sh/job-name=mid 2)"
vcjob big default 4 2
vcjob small default 1 1
expect_eq "backfill runs the small job beside the waiting gang" 1 \
    "$(wait_bound volcano.sh/job-name=small 1)"
expect_eq "the big gang still waits, whole" 0 "$(bound_pods volcano.sh/job-name=big)"
kubectl delete vcjob --all >/dev/null
wait_until no_pods

# nodeSelector and taints
kubectl label node sim-1 pool=blue >/dev/null
vcjob sel default 1 2 "" "nodeSelector: {pool: blue}"
expect_eq "nodeSelector: both pods bound" 2 "$(wait_bound volcano.sh/job-name=sel 2)"
expect_eq "nodeSelector: on the labelled node" "sim-1 sim-1" \
    "$(kubectl get pods -l volcano.sh/job-name=sel -o jsonpath='{.items[*].spec.nodeName}')"
kubectl delete vcjob sel >/dev/null
kubectl taint node sim-0 dedicated=infra:NoSchedule >/dev/null
vcjob untol default 1 3
expect_eq "taint: pods without a toleration go only to the untainted node" "sim-1 sim-1 sim-1" \
    "$(wait_bound volcano.sh/job-name=untol 3 >/dev/null; kubectl get pods -l volcano.sh/job-name=untol -o jsonpath='{.items[*].spec.nodeName}')"
vcjob tol default 1 2 "" "tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]"
expect_eq "taint: a tolerating job uses the tainted node" "sim-0 sim-0" \
    "$(wait_bound volcano.sh/job-name=tol 2 >/dev/null; kubectl get pods -l volcano.sh/job-name=tol -o jsonpath='{.items[*].spec.nodeName}')"
kubectl delete vcjob --all >/dev/null
kubectl taint node sim-0 dedicated- >/dev/null
wait_until no_pods

# priority preemption of a whole gang
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 1
YAML
vcjob low default 1 8 "priorityClassName: low"
expect_eq "the low-priority gang fills the cluster" 8 "$(wait_bound volcano.sh/job-name=low 8)"
vcjob high default 1 4 "priorityClassName: high"
expect_eq "the high-priority job is placed" 4 "$(wait_bound volcano.sh/job-name=high 4)"
# (victims go one delete each, and a simulated pod keeps its node until the
# runtime lets it go: wait for the last)
expect_eq "the low gang was preempted whole (none of it runs)" 0 \
    "$(wait_bound volcano.sh/job-name=low 0)"
expect_match "the victims were told why" 'Preempted' "$(kubectl get events -o wide 2>/dev/null)"
expect_eq "the victim's retry count is untouched" 0 \
    "$(kubectl get vcjob low -o jsonpath='{.status.retryCount}' | sed 's/^$/0/')"
conds=""
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    conds=$(kubectl get podgroups -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {range .status.conditions[*]}{.type}={.status} {end}{"\n"}{end}' |
        sed -n 's/^high-[^ ]* //p')
    case "$conds" in "Running "*Scheduled=True*) break ;; esac
    sleep 0.25
done
expect_match "the preemptor's PodGroup, running, says Scheduled" '^Running .*Scheduled=True' "$conds"
expect_eq "and no longer Unschedulable" "" "$(printf '%s' "$conds" | grep -o 'Unschedulable=True')"

# volcano.sh/preemptable: "false" on a job keeps its gang from being a victim
kubectl delete vcjob --all >/dev/null
wait_until no_pods
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: keep
  annotations: {volcano.sh/preemptable: "false"}
spec:
  queue: default
  minAvailable: 8
  priorityClassName: low
  tasks:
  - name: t
    replicas: 8
    template:
      metadata:
        annotations: {trainyard.io/sim-duration: "600"}
      spec:
        containers: [{name: c, image: sim, resources: {limits: {nvidia.com/gpu: 1}}}]
YAML
expect_eq "the non-preemptable low gang fills the cluster" 8 "$(wait_bound volcano.sh/job-name=keep 8)"
expect_eq "its PodGroup carries the job's annotation" false \
    "$(kubectl get podgroups -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.volcano\.sh/preemptable}{"\n"}{end}' |
        sed -n 's/^keep-[^ ]* //p')"
vcjob urgent default 1 4 "priorityClassName: high"
urgent_waits() {
    kubectl get podgroups -o jsonpath='{range .items[*]}{.metadata.name} {range .status.conditions[*]}{.type}={.status} {end}{"\n"}{end}' |
        grep -q '^urgent-.*Unschedulable=True'
}
check "the high-priority job waits, unschedulable" wait_until urgent_waits
expect_eq "and the non-preemptable gang keeps every pod" 8 "$(bound_pods volcano.sh/job-name=keep)"
expect_eq "none of the high-priority job is placed" 0 "$(bound_pods volcano.sh/job-name=urgent)"
finish
