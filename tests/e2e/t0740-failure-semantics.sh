#!/usr/bin/env bash
# Restart and failure rules with real processes: ExitCode (137 retried, 1
# permanent), backoffLimit, activeDeadlineSeconds, cleanPodPolicy, suspend and
# resume, ttlSecondsAfterFinished.
. "$(dirname "$0")/lib.sh"
start_server
job() { # job NAME RUNPOLICY_JSON MASTER_POLICY MASTER_SH [WORKER_SH]
    local workers=""
    [ -n "${5:-}" ] && workers=$(printf ',"Worker":{"replicas":1,"restartPolicy":"Never","template":{"spec":{"containers":[{"name":"pytorch","image":"x","command":["/bin/sh","-c",%s]}]}}}' "$(printf '%s' "$5" | /usr/bin/python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')")
    local msh; msh=$(printf '%s' "$4" | /usr/bin/python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')
    printf '{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"%s"},"spec":{"runPolicy":%s,"pytorchReplicaSpecs":{"Master":{"restartPolicy":"%s","template":{"spec":{"containers":[{"name":"pytorch","image":"x","command":["/bin/sh","-c",%s]}]}}}%s}}}' \
        "$1" "$2" "$3" "$msh" "$workers" | kubectl apply -f - >/dev/null
}
cond_reason() { kubectl get pytorchjob "$1" -o jsonpath='{.status.conditions[-1:].reason}'; }

M="$E2E_TMP/marker"
job exitcode '{}' ExitCode "if [ -e $M ]; then exit 0; fi; touch $M; exit 137"
job exit1 '{}' ExitCode "exit 1"
job backoff '{"backoffLimit":2}' OnFailure "exit 1"
job deadline '{"activeDeadlineSeconds":2}' Never "sleep 60"
job clean-running '{"cleanPodPolicy":"Running"}' Never "sleep 1" "sleep 600"
job clean-all '{"cleanPodPolicy":"All"}' Never "exit 0"
job clean-none '{"cleanPodPolicy":"None"}' Never "exit 0"
job suspended '{"suspend":true}' Never "exit 0"
job ttl '{"ttlSecondsAfterFinished":1}' Never "exit 0"

expect_eq "ExitCode: exit 137 is retried, then the job succeeds" "Succeeded" "$(wait_job pytorchjob exitcode Succeeded 60)"
expect_eq "ExitCode: the retry is counted" "1" "$(kubectl get pytorchjob exitcode -o jsonpath='{.metadata.annotations.trainyard\.io/restarts}')"
expect_match "ExitCode: a Restarting condition was recorded" 'Restarting' "$(kubectl get pytorchjob exitcode -o jsonpath='{.status.conditions[*].type}')"
expect_eq "ExitCode: exit 1 is permanent" "Failed" "$(wait_job pytorchjob exit1 Failed 60)"
expect_eq "backoffLimit reached fails the job" "Failed" "$(wait_job pytorchjob backoff Failed 120)"
expect_match "backoffLimit reason" 'BackoffLimitExceeded' "$(cond_reason backoff)"
expect_eq "activeDeadlineSeconds fails the job" "Failed" "$(wait_job pytorchjob deadline Failed 60)"
expect_match "deadline reason" 'DeadlineExceeded' "$(cond_reason deadline)"

expect_eq "cleanPodPolicy Running: job succeeds" "Succeeded" "$(wait_job pytorchjob clean-running Succeeded 60)"
kubectl wait --for=delete pod/clean-running-worker-0 --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "cleanPodPolicy Running deletes the running worker" "" "$(kubectl get pod clean-running-worker-0 -o name 2>/dev/null)"
expect_eq "cleanPodPolicy Running keeps the finished master" "pod/clean-running-master-0" "$(kubectl get pod clean-running-master-0 -o name 2>/dev/null)"
expect_eq "cleanPodPolicy All: job succeeds" "Succeeded" "$(wait_job pytorchjob clean-all Succeeded 60)"
kubectl wait --for=delete pod/clean-all-master-0 --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "cleanPodPolicy All deletes finished pods too" "" "$(kubectl get pod clean-all-master-0 -o name 2>/dev/null)"
expect_eq "cleanPodPolicy None: job succeeds" "Succeeded" "$(wait_job pytorchjob clean-none Succeeded 60)"
expect_eq "cleanPodPolicy None keeps pods" "pod/clean-none-master-0" "$(kubectl get pod clean-none-master-0 -o name 2>/dev/null)"

# once the controller said so, it made no pods
suspended_said() { kubectl get pytorchjob suspended -o jsonpath='{.status.conditions[*].type}' | grep -q Suspended; }
wait_until suspended_said
expect_match "suspended job says so" 'Suspended' "$(kubectl get pytorchjob suspended -o jsonpath='{.status.conditions[*].type}')"
expect_eq "suspended job has no pods" "" "$(kubectl get pods -l training.kubeflow.org/job-name=suspended -o name)"
kubectl patch pytorchjob suspended --type merge -p '{"spec":{"runPolicy":{"suspend":false}}}' >/dev/null
expect_eq "resumed job runs to Succeeded" "Succeeded" "$(wait_job pytorchjob suspended Succeeded 60)"

# Nothing else deletes the ttl job: by now (or within the wait) it is gone
# because it finished and its TTL ran out; its pod goes with it (GC).
kubectl wait --for=delete pytorchjob/ttl --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "ttlSecondsAfterFinished deletes the finished job" "" "$(kubectl get pytorchjob ttl -o name 2>/dev/null)"
kubectl wait --for=delete pod/ttl-master-0 --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "its pods go with it" "" "$(kubectl get pod ttl-master-0 -o name 2>/dev/null)"
expect_match "describe shows conditions and events" 'ExitedWithCode' "$(kubectl describe pytorchjob exit1)"

# Deleting a pod honours the grace period: a process that ignores SIGTERM is
# killed after it; --grace-period=0 does not wait for the pod's own 30 s.
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: stubborn}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - {name: c, image: x, command: ["/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done"]}
YAML
stubborn_runs() { [ "$(kubectl get pod stubborn -o jsonpath='{.status.phase}')" = Running ]; }
wait_until stubborn_runs
t0=$(date +%s)
kubectl delete pod stubborn --grace-period=0 --force >/dev/null 2>&1
kubectl wait --for=delete pod/stubborn --timeout=${E2E_WAIT}s >/dev/null 2>&1
t1=$(date +%s)
expect_eq "grace period 0 deletes a TERM-ignoring pod at once" "" "$(kubectl get pod stubborn -o name 2>/dev/null)"
if [ $((t1 - t0)) -lt 25 ]; then pass "... within $((t1 - t0)) s, not its own 30 s"; else fail "took $((t1 - t0)) s"; fi
finish
