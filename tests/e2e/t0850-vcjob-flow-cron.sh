#!/usr/bin/env bash
# t0850-vcjob-flow-cron.sh - Volcano's JobFlow / JobTemplate
# (flow.volcano.sh/v1alpha1) and CronJob (batch.volcano.sh/v1alpha1, 1.13):
# a flow of two templates runs the second only after the first completed
# (the first holds until the test lets it go, and the second must not exist
# meanwhile), the flow's status says Succeed with both jobs, a template lists
# the jobs made from it, jobRetainPolicy delete removes them; a failed job
# fails its flow and what depends on it never starts; a cycle or an unknown
# target is refused; an every-minute CronJob starts a job named
# <cronjob>-<minutes> within two minutes, which completes and sets
# lastSuccessfulTime; bad schedules, zones and names are refused.
source "$(dirname "$0")/lib.sh"
start_server

# jsonpath KIND NAME PATH
jp() { kubectl get "$1" "$2" -o jsonpath="$3" 2>/dev/null; }
# wait_for KIND NAME PATH WANT [SECS]: prints the last value seen.
wait_for() {
    local v="" end=$((SECONDS + ${5:-$E2E_WAIT}))
    while [ $SECONDS -lt $end ]; do
        v=$(jp "$1" "$2" "$3")
        [ "$v" = "$4" ] && break
        sleep 0.25
    done
    echo "$v"
}

# --- JobFlow: b depends on a
kubectl apply -f - >"$E2E_TMP/apply.out" 2>&1 <<YAML
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: a}
spec:
  minAvailable: 1
  tasks:
  - replicas: 1
    name: t
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: ["/bin/sh", "-c", "until [ -e $E2E_TMP/release ]; do sleep 0.1; done; date +%s >$E2E_TMP/a-done"]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: b}
spec:
  minAvailable: 1
  tasks:
  - replicas: 1
    name: t
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: ["/bin/sh", "-c", "test -e $E2E_TMP/a-done && echo a was done"]
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: flow}
spec:
  jobRetainPolicy: retain
  flows:
  - name: a
  - name: b
    dependsOn:
      targets: ['a']
YAML
check "templates and flow applied" grep -q "jobflow.flow.volcano.sh/flow created" "$E2E_TMP/apply.out"
expect_eq "template defaults (CRD)" "3 default" "$(jp jobtemplate a '{.spec.maxRetry} {.spec.queue}')"
expect_eq "first job runs" Running "$(wait_for vcjob flow-a '{.status.state.phase}' Running)"
expect_eq "flow Running" Running "$(wait_for jobflow flow '{.status.state.phase}' Running)"
# a holds until released: b must not exist while a has not completed
check "second job not made while the first runs" bash -c "! kubectl get vcjob flow-b"
expect_eq "job labels" "default.flow default.a" \
    "$(jp vcjob flow-a '{.metadata.labels.volcano\.sh/createdByJobFlow} {.metadata.labels.volcano\.sh/createdByJobTemplate}')"
expect_eq "job controlled by the flow" "JobFlow flow true" \
    "$(jp vcjob flow-a '{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}')"
touch "$E2E_TMP/release"
expect_eq "first job completes" Completed "$(wait_for vcjob flow-a '{.status.state.phase}' Completed)"
expect_eq "second job completes" Completed "$(wait_for vcjob flow-b '{.status.state.phase}' Completed)"
expect_match "second job ran after the first" "a was done" "$(kubectl logs flow-b-t-0 2>&1)"
expect_eq "flow Succeed" Succeed "$(wait_for jobflow flow '{.status.state.phase}' Succeed)"
expect_eq "flow status lists" "flow-a flow-b|Completed Completed|flow-a flow-b" \
    "$(jp jobflow flow '{.status.completedJobs[*]}|{.status.conditions.flow-a.phase} {.status.conditions.flow-b.phase}|{.status.jobStatusList[*].name}')"
expect_match "kubectl get jobflow prints Status" '^flow +Succeed ' "$(kubectl get jf flow --no-headers)"
expect_eq "template lists its jobs" flow-a "$(wait_for jobtemplate a '{.status.jobDependsOnList[*]}' flow-a)"
check "jobs kept (retain)" kubectl get vcjob flow-a flow-b

kubectl apply -f - >/dev/null 2>&1 <<YAML
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: gone}
spec:
  jobRetainPolicy: delete
  flows:
  - name: a
YAML
expect_eq "delete policy: flow Succeed" Succeed "$(wait_for jobflow gone '{.status.state.phase}' Succeed)"
check "delete policy: its job is deleted" wait_until bash -c "! kubectl get vcjob gone-a"

kubectl apply -f - >/dev/null 2>&1 <<YAML
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: bad}
spec:
  minAvailable: 1
  tasks:
  - replicas: 1
    name: t
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: busybox, command: ["/bin/sh", "-c", "exit 3"]}
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: broken}
spec:
  flows:
  - name: bad
  - name: b
    dependsOn:
      targets: [bad]
YAML
expect_eq "a failed job fails the flow" Failed "$(wait_for jobflow broken '{.status.state.phase}' Failed)"
expect_eq "failedJobs" broken-bad "$(jp jobflow broken '{.status.failedJobs[*]}')"
check "the job after a failed one is never made" bash -c "! kubectl get vcjob broken-b"

out=$(kubectl apply -f - 2>&1 <<YAML
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: cycle}
spec:
  flows:
  - {name: a, dependsOn: {targets: [b]}}
  - {name: b, dependsOn: {targets: [a]}}
YAML
)
expect_match "a cycle is refused" 'is invalid: spec.flows: Invalid value: .*jobflow Flow is not DAG' "$out"
out=$(kubectl apply -f - 2>&1 <<YAML
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: lost}
spec:
  jobRetainPolicy: keep
  flows:
  - {name: a, dependsOn: {targets: [nope]}}
YAML
)
expect_match "an unknown target is refused" 'spec.flows\[0\].dependsOn.targets\[0\]: Invalid value: "nope": vertex is not defined' "$out"
expect_match "an unknown retain policy is refused" 'spec.jobRetainPolicy: Unsupported value: "keep"' "$out"

# --- CronJob
kubectl apply -f - >"$E2E_TMP/apply.out" 2>&1 <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "*/1 * * * *"
  timeZone: Etc/UTC
  concurrencyPolicy: Forbid
  jobTemplate:
    metadata:
      labels: {from: tick}
    spec:
      minAvailable: 1
      tasks:
      - replicas: 1
        name: t
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: c, image: busybox, command: ["/bin/sh", "-c", "echo tick"]}
YAML
check "cronjob applied" grep -q "cronjob.batch.volcano.sh/tick created" "$E2E_TMP/apply.out"
expect_eq "cronjob defaults" "Forbid false 3 1 3 default" \
    "$(jp cronjob tick '{.spec.concurrencyPolicy} {.spec.suspend} {.spec.successfulJobsHistoryLimit} {.spec.failedJobsHistoryLimit} {.spec.jobTemplate.spec.maxRetry} {.spec.jobTemplate.spec.queue}')"
check "short name cronvj" kubectl get cronvj tick
# The first whole minute after its creation: at most 60 s, and generously more.
job=""
end=$((SECONDS + 150))
while [ $SECONDS -lt $end ] && [ -z "$job" ]; do
    job=$(kubectl get vcjob -l from=tick -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
    [ -z "$job" ] && sleep 0.5
done
expect_match "a job is started on schedule, named <cronjob>-<minutes>" '^tick-[0-9]{8}$' "$job"
if [ -n "$job" ]; then
    minutes=${job#tick-}
    expect_eq "scheduled-timestamp annotation matches the name" \
        "$(date -u -d "@$((minutes * 60))" +%Y-%m-%dT%H:%M:%SZ)" \
        "$(jp vcjob "$job" '{.metadata.annotations.volcano\.sh/cronjob-scheduled-timestamp}')"
    # (that minute's, or a later one's when a loaded machine looks after
    # the next minute has come)
    at=$(date -u -d "@$((minutes * 60))" +%Y-%m-%dT%H:%M:%SZ)
    last_from() { local v; v=$(jp cronjob tick '{.status.lastScheduleTime}'); [ -n "$v" ] && ! [[ "$v" < "$at" ]]; }
    check "status.lastScheduleTime: $at or later" wait_until last_from
    expect_eq "job controlled by the cronjob" "CronJob tick" \
        "$(jp vcjob "$job" '{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name}')"
    expect_eq "the job completes" Completed "$(wait_for vcjob "$job" '{.status.state.phase}' Completed)"
    check "lastSuccessfulTime set, active emptied" wait_until bash -c \
        "[ -n \"\$(kubectl get cronjob tick -o jsonpath='{.status.lastSuccessfulTime}')\" ] && [ -z \"\$(kubectl get cronjob tick -o jsonpath='{.status.active}')\" ]"
    check "event SuccessfulCreate" wait_until bash -c \
        "kubectl get events --field-selector involvedObject.name=tick | grep -q 'SuccessfulCreate.*Created job $job'"
else
    kubectl describe cronjob tick | tail -20
fi

for bad in 'schedule: "* * *"|spec.schedule: Invalid value: "\* \* \*": schedule is not a valid cron expression' \
           'schedule: "TZ=UTC * * * * *"|schedule should not contain TZ' \
           'schedule: "@every 1m"\n  timeZone: Mars/Olympus|spec.timeZone: Invalid value: "Mars/Olympus": invalid timeZone' \
           'schedule: "@daily"\n  timeZone: Local|timeZone can.t be Local' \
           'schedule: "@daily"\n  concurrencyPolicy: Sometimes|spec.concurrencyPolicy: Unsupported value: "Sometimes"' \
           'schedule: "@daily"\n  startingDeadlineSeconds: -1|spec.startingDeadlineSeconds: Invalid value: -1'; do
    spec=${bad%%|*} want=${bad#*|}
    out=$(printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {name: bad}\nspec:\n  %b\n  jobTemplate: {spec: {tasks: [{name: t, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}]}}\n' "$spec" \
          | kubectl apply -f - 2>&1)
    expect_match "refused: ${spec%%\\n*}" "$want" "$out"
done
long=$(printf 'c%.0s' $(seq 53))
out=$(printf 'apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {name: %s}\nspec:\n  schedule: "@daily"\n  jobTemplate: {spec: {tasks: []}}\n' "$long" | kubectl apply -f - 2>&1)
expect_match "a name past 52 characters is refused" 'must be no more than 52 characters' "$out"

finish
