#!/usr/bin/env bash
# t0800-vcjob.sh - Volcano Jobs (batch.volcano.sh/v1alpha1) on a real server:
# the TF ps/worker example with the env and svc plugins completes through
# TaskCompleted -> CompleteJob; PodFailed -> RestartJob fails after maxRetry;
# exitCode 3 -> AbortJob aborts, and the ResumeJob annotation brings it back;
# a task that can no longer reach minAvailable fails the job; dependsOn
# orders tasks; PodPending with a timeout waits for it; ttlSecondsAfterFinished
# deletes the job.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."

start_server

# wait_phase NAME PHASE [SECONDS]: waits for status.state.phase; prints the last seen.
wait_phase() {
    local name=$1 want=$2 secs=${3:-$E2E_WAIT} phase="" end
    [ "$secs" -lt "$E2E_WAIT" ] && secs=$E2E_WAIT
    end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        phase=$(kubectl get vcjob "$name" -o jsonpath='{.status.state.phase}' 2>/dev/null)
        [ "$phase" = "$want" ] && break
        sleep 0.25
    done
    echo "$phase"
}

# --- the TF ps/worker example
kubectl apply -f examples/volcano-tf.yaml >/dev/null
expect_eq "tf example completes" Completed "$(wait_phase tf-ps-worker Completed)"
expect_match "kubectl get vcjob shows STATUS Completed" \
    '^tf-ps-worker +Completed +3 ' "$(kubectl get vcjob tf-ps-worker --no-headers)"
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    pg=$(kubectl get podgroups -o jsonpath='{.items[0].metadata.name} {.items[0].spec.minMember} {.items[0].status.phase}')
    case "$pg" in *Completed) break ;; esac
    sleep 0.25
done
uid=$(kubectl get vcjob tf-ps-worker -o jsonpath='{.metadata.uid}')
# admitted by the gang scheduler; Completed once every pod has finished
expect_eq "podgroup <job>-<uid>, minMember, phase" "tf-ps-worker-$uid 3 Completed" "$pg"
expect_match "worker sees the svc and env plugins" \
    '^tf-ps-worker-ps-0.tf-ps-worker tf-ps-worker-worker-0.tf-ps-worker,tf-ps-worker-worker-1.tf-ps-worker 1$' \
    "$(kubectl logs tf-ps-worker-worker-1)"
ann=$(kubectl get pod tf-ps-worker-worker-1 -o jsonpath='{.metadata.annotations.volcano\.sh/task-spec} {.metadata.annotations.volcano\.sh/task-index} {.metadata.annotations.scheduling\.k8s\.io/group-name} {.spec.hostname} {.spec.subdomain} {.spec.schedulerName}')
expect_eq "pod annotations, hostname, subdomain" \
    "worker 1 tf-ps-worker-$uid tf-ps-worker-worker-1 tf-ps-worker volcano" "$ann"
check "headless service <job>" kubectl get service tf-ps-worker
check "configmap <job>-svc" kubectl get configmap tf-ps-worker-svc

# --- PodFailed -> RestartJob, maxRetry 2
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: restarter}
spec:
  minAvailable: 1
  maxRetry: 2
  policies: [{event: PodFailed, action: RestartJob}]
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 1"]}]
YAML
expect_eq "RestartJob job ends Failed" Failed "$(wait_phase restarter Failed)"
expect_eq "retryCount reaches maxRetry" 2 \
    "$(kubectl get vcjob restarter -o jsonpath='{.status.retryCount}')"

# --- exitCode 3 -> AbortJob, then ResumeJob
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: aborter}
spec:
  minAvailable: 2
  policies: [{exitCode: 3, action: AbortJob}]
  tasks:
  - name: quits
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 3"]}]
  - name: waits
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "sleep 300"]}]
YAML
expect_eq "exitCode 3 aborts the job" Aborted "$(wait_phase aborter Aborted)"
kubectl annotate vcjob aborter trainyard.io/action=ResumeJob >/dev/null
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    rc=$(kubectl get vcjob aborter -o jsonpath='{.status.retryCount}')
    [ "$rc" = 1 ] && break
    sleep 0.25
done
expect_eq "ResumeJob restarts it (retryCount 1)" 1 "$rc"
expect_eq "the action annotation is consumed" "" \
    "$(kubectl get vcjob aborter -o jsonpath='{.metadata.annotations.trainyard\.io/action}')"
expect_eq "resumed job aborts again on exit 3" Aborted "$(wait_phase aborter Aborted)"

# --- no policy: a task that can no longer reach minAvailable fails the job at
# once, and the task that would run for minutes is killed
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: unreachable}
spec:
  tasks:
  - name: bad
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 1"]}]
  - name: long
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "sleep 300"]}]
YAML
expect_eq "a failed task without policy fails the job" Failed "$(wait_phase unreachable Failed 30)"
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    kubectl get pod unreachable-long-0 >/dev/null 2>&1 || break
    sleep 0.25
done
check "the long task's pod is killed" bash -c '! kubectl get pod unreachable-long-0'

# --- dependsOn, waiting for the dependency to have succeeded
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: ordered
  annotations: {trainyard.io/depends-on: Succeeded}
spec:
  tasks:
  - name: first
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "sleep 4"]}]
  - name: second
    replicas: 1
    dependsOn: {name: [first]}
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 0"]}]
YAML
expect_eq "dependsOn job completes" Completed "$(wait_phase ordered Completed 30)"
# told by the objects' own times, not by looking while first runs (a loaded
# machine could look after its 4 s): second's pod was made once first ended
first_end=$(kubectl get pod ordered-first-0 -o jsonpath='{.status.containerStatuses[0].state.terminated.finishedAt}')
second_made=$(kubectl get pod ordered-second-0 -o jsonpath='{.metadata.creationTimestamp}')
if [ -n "$first_end" ] && [ -n "$second_made" ] && ! [[ "$second_made" < "$first_end" ]]; then
    pass "dependsOn: second's pod made after first ended ($second_made >= $first_end)"
else
    fail "dependsOn: second's pod made at '${second_made}', first ended at '${first_end}'"
fi

# --- PodPending with a timeout fires only after the timeout (no scheduler
# takes these pods, so they stay Pending)
applied_ms=$(date +%s%3N)
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: stuck}
spec:
  schedulerName: nobody
  policies: [{event: PodPending, action: AbortJob, timeout: 4s}]
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 0"]}]
YAML
stuck_has_phase() { [ -n "$(kubectl get vcjob stuck -o jsonpath='{.status.state.phase}')" ]; }
wait_until stuck_has_phase
phase=$(kubectl get vcjob stuck -o jsonpath='{.status.state.phase}')
# The 4 s count from the pod's creationTimestamp, which has whole seconds:
# the abort may come 3 s after the pod was made. Only a look within 2 s of
# the job's creation (in ms, from before the apply) must see Pending.
took=$(( $(date +%s%3N) - applied_ms ))
if [ "$took" -lt 2000 ]; then
    expect_eq "PodPending: still Pending before the timeout" Pending "$phase"
else
    pass "PodPending: (looked $took ms after the apply on a loaded machine: not before the timeout)"
fi
expect_eq "PodPending: Aborted after the timeout" Aborted "$(wait_phase stuck Aborted 20)"

# --- an update of task replicas and minAvailable: pods and the PodGroup follow
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: scaled}
spec:
  minAvailable: 1
  tasks:
  - name: w
    replicas: 3
    minAvailable: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "sleep 300"]}]
YAML
expect_eq "scaled job runs" Running "$(wait_phase scaled Running 30)"
kubectl patch vcjob scaled --type=json -p '[{"op":"replace","path":"/spec/tasks/0/replicas","value":2},{"op":"replace","path":"/spec/minAvailable","value":2}]' >/dev/null
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    kubectl get pod scaled-w-2 >/dev/null 2>&1 || break
    sleep 0.25
done
check "scale down removes the pod past replicas" bash -c '! kubectl get pod scaled-w-2'
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    mm=$(kubectl get podgroups -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].name=="scaled")]}{.spec.minMember}{end}')
    [ "$mm" = 2 ] && break
    sleep 0.25
done
expect_eq "the PodGroup follows minAvailable" 2 "$mm"
kubectl delete vcjob scaled >/dev/null

# --- spec.volumes: a scratch directory at mountPath in every container
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: scratch}
spec:
  volumes: [{mountPath: /scratch}]
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "echo hi >/scratch/f && cat /scratch/f"]}]
YAML
expect_eq "a job with volumes completes" Completed "$(wait_phase scratch Completed 30)"
expect_eq "the pod wrote to its scratch volume" hi "$(kubectl logs scratch-main-0 2>&1)"

# --- ttlSecondsAfterFinished deletes the finished job
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: shortlived}
spec:
  ttlSecondsAfterFinished: 1
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "exit 0"]}]
YAML
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    kubectl get vcjob shortlived >/dev/null 2>&1 || break
    sleep 0.25
done
check "ttlSecondsAfterFinished deletes the job" bash -c '! kubectl get vcjob shortlived'

# --- the job's schedulerName and priorityClassName fill in what a task's
# template leaves out; a template's own stay (upstream's createJobPod)
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: vc-high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: vc-low}
value: 10
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: names}
spec:
  priorityClassName: vc-high
  tasks:
  - name: plain
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "true"]}]
  - name: own
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        schedulerName: volcano
        priorityClassName: vc-low
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "true"]}]
YAML
pod_sched() { kubectl get pod "$1" -o jsonpath='{.spec.schedulerName} {.spec.priorityClassName}' 2>/dev/null; }
check "the job's pods exist" wait_until bash -c 'kubectl get pod names-plain-0 names-own-0 >/dev/null 2>&1'
expect_eq "a template naming neither gets the job's" "volcano vc-high" "$(pod_sched names-plain-0)"
expect_eq "a template's own priorityClassName stays" "volcano vc-low" \
    "$(pod_sched names-own-0)"
kubectl delete vcjob names >/dev/null 2>&1

[ "$E2E_FAILS" -eq 0 ] || { kubectl get vcjob,pods 2>&1 | sed 's/^/     | /'; }
finish
