#!/usr/bin/env bash
# The local runtime through the real server and kubectl: the Node, a pod's
# phase, exit code and logs (tail, timestamps, previous, after deletion),
# restarts, deletion with a grace period, per-pod addresses.
. "$(dirname "$0")/lib.sh"
export TY_RESTART_BACKOFF_MS=200
start_server --fake-gpus 2 --node-name e2e-node
k() { kubectl --request-timeout=20s "$@"; }
# wait_phase POD PHASE [seconds]
wait_phase() {
    local end=$((SECONDS + ${3:-$E2E_WAIT}))
    while [ $SECONDS -lt $end ]; do
        [ "$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    k get pod "$1" -o yaml | sed -n '/^status:/,$p' | head -40
    return 1
}
pod() { # pod NAME RESTART_POLICY GRACE SHELL-COMMAND
    cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: $2
  terminationGracePeriodSeconds: $3
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "$4"]
YAML
}
no_pods() { [ -z "$(k get pods -o name 2>/dev/null)" ]; }
leave_clean() { k delete pods --all --wait=false >/dev/null 2>&1; wait_until no_pods; }

expect_eq "node registered Ready" "True" \
    "$(k get node e2e-node -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')"
expect_eq "node has the fake GPUs" "2" "$(k get node e2e-node -o jsonpath='{.status.capacity.nvidia\.com/gpu}')"

pod hello Never 30 'echo line1; echo line2; sleep 0.3; echo line3'
check "pod runs to Succeeded" wait_phase hello Succeeded
expect_eq "pod bound to this node" "e2e-node" "$(k get pod hello -o jsonpath='{.spec.nodeName}')"
expect_match "pod has a loopback address of its own" '^127\.([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-9][0-9])\.' \
    "$(k get pod hello -o jsonpath='{.status.podIP}')"
expect_eq "kubectl logs" "line1
line2
line3" "$(k logs hello)"
expect_eq "kubectl logs --tail=1" "line3" "$(k logs hello --tail=1)"
expect_match "kubectl logs --timestamps" '^20[0-9-]+T[0-9:]+\.[0-9]{9}Z line1$' "$(k logs hello --timestamps | head -1)"
expect_eq "container reason Completed" "Completed" \
    "$(k get pod hello -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}')"

pod fail3 Never 30 'echo bad >&2; exit 3'
check "failing pod ends Failed" wait_phase fail3 Failed
expect_eq "exit code reported" "3" \
    "$(k get pod fail3 -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"
expect_eq "reason Error" "Error" \
    "$(k get pod fail3 -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}')"
expect_match "Started event recorded" 'Started container main' "$(k get events --field-selector involvedObject.name=fail3 2>&1)"

pod crash OnFailure 30 'echo attempt; exit 1'
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    n=$(k get pod crash -o jsonpath='{.status.containerStatuses[0].restartCount}')
    [ "${n:-0}" -ge 2 ] && break
    sleep 0.1
done
if [ "${n:-0}" -ge 2 ]; then pass "OnFailure restarts in place (restartCount $n)"; else fail "restartCount stayed ${n:-0}"; fi
expect_eq "kubectl logs --previous" "attempt" "$(k logs crash --previous)"
# (the event is written after the restart it follows: waited for, not read once)
crash_events() { k get events --field-selector involvedObject.name=crash 2>&1; }
backoff_event() { grep -q 'Back-off restarting failed container' <<<"$(crash_events)"; }
wait_until backoff_event
expect_match "BackOff event" 'Back-off restarting failed container' "$(crash_events)"

# a grace period far longer than a delete takes on a loaded machine: one that
# waited it out is told apart from one that returned when the pod ended
pod sleeper Always 60 "trap 'echo term; exit 0' TERM; echo up; while :; do sleep 0.1; done"
check "long-running pod is Running" wait_phase sleeper Running
# Running is the process started, not sh past its trap: "up" in its log is.
sleeper_up() { grep -qx up <<<"$(k logs sleeper 2>/dev/null)"; }
check "long-running pod has set its TERM trap (logged up)" wait_until sleeper_up
start=$(date +%s)
k delete pod sleeper >/dev/null
took=$(( $(date +%s) - start ))
if [ "$took" -le 30 ]; then pass "delete returns once the processes are gone (${took}s)"; else fail "delete took ${took}s"; fi
expect_match "pod object is gone" 'NotFound' "$(k get pod sleeper 2>&1)"
# The whole process group gets SIGTERM (sh may also report its sleep's death).
expect_eq "its log outlives it (SIGTERM seen)" "up
term" "$(kcurl -s "$SERVER/api/v1/namespaces/default/pods/sleeper/log?container=main" | grep -v Terminated)"

k delete pod hello fail3 crash >/dev/null
expect_eq "a deleted pod's log stays readable" "line3" \
    "$(kcurl -s "$SERVER/api/v1/namespaces/default/pods/hello/log?container=main&tailLines=1")"
leave_clean

# trainyard installed under /tmp: each pod has a /tmp of its own, so the
# bind shim beside the binary cannot be preloaded there. The server says so
# once, and no pod's log starts with the loader's error.
stop_server
TMPBIN=$(mktemp -d /tmp/ty-e2e-bin.XXXXXX)
cp "$TRAINYARD" "$(dirname "$TRAINYARD")/libtybind.so" "$TMPBIN/"
INSTALLED=$TRAINYARD
TRAINYARD=$TMPBIN/trainyard
start_server --node-name e2e-node
pod tmpbin Never 30 'echo only-this'
check "a pod of a server under /tmp runs" wait_phase tmpbin Succeeded
expect_eq "... its log is its own output alone" "only-this" "$(k logs tmpbin 2>&1)"
expect_match "the server says why the shim is off" 'under /tmp, which pods see as their own' \
    "$(cat "$E2E_TMP/server.err")"
leave_clean
stop_server
TRAINYARD=$INSTALLED
rm -rf "$TMPBIN"
finish
