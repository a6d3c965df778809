#!/usr/bin/env bash
# Preemption on the Slurm runtime (one node pre-1 at 127.0.13.1, 4 CPUs): a
# high-priority Volcano Job that needs the whole node is admitted by
# Trainyard's scheduler because evicting a lower-priority gang makes room;
# the low gang is evicted whole (never a part of it: Slurm frees nothing
# while one step of a job runs), its Slurm job leaves squeue, Slurm starts
# the high job, and the low job comes back whole afterwards without a retry
# counted against it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
start_cluster SLURM_NODES=1 SLURM_NODE_PREFIX=pre- SLURM_ADDR_BASE=127.0.13 \
    SLURM_CPUS=4 SLURM_MEM_MB=4000 SLURM_GPUS=0 SLURM_PARTITION=work
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
start_server --runtime slurm --slurm-partition work --scheduler-conf "$E2E_TMP/sched.conf"
expect_match "the scheduler keeps preempt and reclaim, not allocate" \
    'actions enqueue, preempt, reclaim' "$(cat "$E2E_TMP/server.err")"

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
vcjob() { # name priorityclass command
    kubectl apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: 2
  priorityClassName: $2
  tasks:
  - name: t
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: [sh, -c, "$3"]
          resources: {requests: {cpu: "2"}}
YAML
}
running() { # selector count
    [ "$(kubectl get pods -l "$1" -o jsonpath='{range .items[*]}{.status.phase}{" "}{end}' 2>/dev/null)" = "$(printf 'Running %.0s' $(seq "$2"))" ]
}
vcjob low low 'echo low up; exec sleep 3600'
if wait_until running volcano.sh/job-name=low 2; then
    pass "the low gang runs: it fills the node"
else
    fail "the low gang did not start: $(kubectl get pods -o wide 2>&1)"
fi
low_job=$(squeue -h -t RUNNING -o %i)
low_uids=$(kubectl get pods -l volcano.sh/job-name=low -o jsonpath='{.items[*].metadata.uid}')

vcjob high high 'echo high ran'
vc_phase() { kubectl get vcjob "$1" -o jsonpath='{.status.state.phase}' 2>/dev/null; }
vc_done() { case "$(vc_phase high)" in Completed | Failed | Aborted) true ;; *) false ;; esac; }
wait_until vc_done
state=$(vc_phase high)
expect_eq "the high-priority job runs to the end" "Completed" "$state"
if [ "$state" != Completed ]; then
    dump_job vcjob high
    kubectl get pods -l volcano.sh/job-name=high -o jsonpath='{range .items[*]}{.metadata.name} {.status.containerStatuses}{"\n"}{end}' | sed 's/^/     | /'
    tail -30 "$E2E_TMP/server.err" | sed 's/^/     | /'
    squeue_active
fi
expect_match "the victims were told why" 'Preempted.*by pod group default/high' \
    "$(kubectl get events 2>&1)"
gone() { ! squeue -h -o '%i|%T' | grep -q "^$low_job|\(RUNNING\|COMPLETING\)"; }
if wait_until gone; then pass "the low gang's Slurm job ended"; else fail "still in squeue: $(squeue_active)"; fi
expect_match "the log says the gang went whole" "evicted default/low-t-0" "$(cat "$E2E_TMP/server.err")"
expect_match "both members" "evicted default/low-t-1" "$(cat "$E2E_TMP/server.err")"

# the low job comes back whole, as new pods in a new Slurm job
back() {
    running volcano.sh/job-name=low 2 &&
        [ "$(kubectl get pods -l volcano.sh/job-name=low -o jsonpath='{.items[*].metadata.uid}')" != "$low_uids" ]
}
if wait_until back; then pass "the low gang runs again"; else fail "the low gang did not come back: $(kubectl get pods -o wide 2>&1)"; fi
expect_eq "eviction is not a retry" 0 \
    "$(kubectl get vcjob low -o jsonpath='{.status.retryCount}' | sed 's/^$/0/')"
expect_eq "one Slurm job runs: the low gang's new one" 1 "$(squeue -h -t RUNNING -o %i | wc -l)"
kubectl delete vcjob --all >/dev/null
empty_queue() { [ -z "$(squeue_active)" ]; }
if wait_until empty_queue; then pass "deleted: nothing left in squeue"; else fail "left in squeue: $(squeue_active)"; fi
finish
