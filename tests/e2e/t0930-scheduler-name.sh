#!/usr/bin/env bash
# The scheduler's names: `--scheduler-name volcano` (as against a cluster,
# where kube-scheduler has the rest) binds the pods naming volcano and leaves
# the default scheduler's alone: never bound, no PodScheduled condition, no
# FailedScheduling Event. A bad name is a usage error.
. "$(dirname "$0")/lib.sh"

out=$("$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/bad" --scheduler-name "" 2>&1); rc=$?
expect_eq "an empty --scheduler-name exits 2" "2" "$rc"
expect_match "and says what is wrong" 'invalid --scheduler-name' "$out"

start_server --sim-nodes 1x8 --no-local-node --scheduler-name volcano
check "the log names what it serves" file_has "$(scheduler_log)" 'serves schedulerName volcano$'

pod() { # name schedulerName-line
    kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {trainyard.io/sim-duration: "600"}
spec:
  $2
  containers: [{name: c, image: sim}]
YAML
}
pod theirs ""
pod mine "schedulerName: volcano"
node_of() { kubectl get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [ -n "$(node_of "$1")" ]; }
check "the volcano pod is bound" wait_until bound mine
# The scheduler takes pods in the order they came: by the time it bound mine
# it had passed over theirs.
expect_eq "the default scheduler's pod is not" "" "$(node_of theirs)"
expect_eq "nor told why it waits" "" \
    "$(kubectl get pod theirs -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}')"
expect_eq "and has no Event" "" \
    "$(kubectl get events -o jsonpath='{range .items[?(@.involvedObject.name=="theirs")]}{.reason}{" "}{end}')"
expect_match "(the volcano pod has its Scheduled Event)" 'Scheduled' \
    "$(kubectl get events -o jsonpath='{range .items[?(@.involvedObject.name=="mine")]}{.reason}{" "}{end}')"
# (over HTTP the binding gives no pod back: the Event still names its uid,
# as kube-scheduler's does, and `trainyard get -e` finds it by uid)
expect_eq "the Scheduled Event names the pod's uid" "$(kubectl get pod mine -o jsonpath='{.metadata.uid}')" \
    "$(kubectl get events --field-selector reason=Scheduled,involvedObject.name=mine -o jsonpath='{.items[0].involvedObject.uid}')"
finish
