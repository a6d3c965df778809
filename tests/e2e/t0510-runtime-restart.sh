#!/usr/bin/env bash
# Nothing is lost across a server crash: a pod keeps running under its
# supervisor while the server is SIGKILLed, finishes while it is down, and the
# restarted server reports its exit code and full log.
. "$(dirname "$0")/lib.sh"
E2E_DATA="$E2E_TMP/data"
start_server --fake-gpus 0 --node-name e2e-node
k() { kubectl --request-timeout=20s "$@"; }
wait_phase() {
    local end=$((SECONDS + ${3:-$E2E_WAIT}))
    while [ $SECONDS -lt $end ]; do
        [ "$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    k get pod "$1" -o yaml | sed -n '/^status:/,$p' | head -40
    return 1
}
# survivor runs until the test, with the server killed, touches its go-file
# (a pod that ends on its own could end before the kill on a loaded machine)
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: survivor}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "while [ ! -e $E2E_TMP/survivor-go ]; do sleep 0.1; done; for i in 1 2 3 4 5 6; do echo tick \$i; sleep 0.5; done; exit 4"]
---
apiVersion: v1
kind: Pod
metadata: {name: keeper}
spec:
  containers:
  - name: main
    image: busybox
    command: [sleep, "1000"]
YAML
check "pods Running" wait_phase survivor Running
check "second pod Running" wait_phase keeper Running
keeper_cid=$(k get pod keeper -o jsonpath='{.status.containerStatuses[0].containerID}')

kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
touch "$E2E_TMP/survivor-go"
# survivor finishes while no server runs: its last line, then its exit
survivor_done() {
    local log
    log=$(find "$E2E_DATA" -path '*/logs/default/survivor/*' -name '*.log' 2>/dev/null | head -1)
    [ -n "$log" ] && grep -q 'tick 6' "$log"
}
wait_until survivor_done
start_server --fake-gpus 0 --node-name e2e-node
check "exit while down is reported after restart" wait_phase survivor Failed
expect_eq "its exit code" "4" \
    "$(k get pod survivor -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"
expect_eq "its full log" "tick 1
tick 2
tick 3
tick 4
tick 5
tick 6" "$(k logs survivor)"
expect_eq "the running pod is re-adopted, same process" "$keeper_cid" \
    "$(k get pod keeper -o jsonpath='{.status.containerStatuses[0].containerID}')"
expect_eq "and still Running" "Running" "$(k get pod keeper -o jsonpath='{.status.phase}')"
k delete pod keeper survivor >/dev/null
expect_match "re-adopted pod deleted" 'NotFound' "$(k get pod keeper 2>&1)"
finish
