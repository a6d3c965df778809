#!/usr/bin/env bash
# A container that keeps failing, through kubectl, as a kubelet shows it: the
# pod Running, CrashLoopBackOff with the kubelet's message, restarts counted;
# a command that does not exist the same (it kept the pod Pending); a
# container with args only gets a Warning event saying what runs.
. "$(dirname "$0")/lib.sh"
export TY_RESTART_BACKOFF_MS=200
start_server --fake-gpus 0 --node-name e2e-node
k() { kubectl --request-timeout=20s "$@"; }
pod() { # pod NAME CONTAINER-FIELDS (JSON)
    k apply -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox", $2}]}}
JSON
}
# crash_looping POD: Running, waiting in CrashLoopBackOff, restarted at least once.
crash_looping() {
    [ "$(k get pod "$1" -o jsonpath='{.status.phase} {.status.containerStatuses[0].state.waiting.reason}')" \
        = "Running CrashLoopBackOff" ] &&
        [ "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}')" -ge 1 ]
}

pod exit1 '"command": ["sh", "-c", "exit 1"]'
pod nosuch '"command": ["/no/such/program"]'
pod argsonly '"args": ["--epochs", "1"]'

# The back-off is 200 ms here: the pod goes from waiting to running and back
# all the time, so each look waits until it sees the waiting side.
backoff_message() { # POD UID
    k get pod "$1" -o jsonpath='{.status.containerStatuses[0].state.waiting.message}' |
        grep -Eq "^back-off [0-9.]+m?s restarting failed container=c pod=${1}_default\\($2\\)\$"
}
status_column() { k get pod "$1" --no-headers | grep -Eq "^$1 +0/1 +CrashLoopBackOff +[1-9]"; }
for p in exit1 nosuch; do
    check "$p: Running, CrashLoopBackOff, restarted" wait_until crash_looping $p
    uid=$(k get pod $p -o jsonpath='{.metadata.uid}')
    check "$p: the kubelet's back-off message" wait_until backoff_message $p "$uid"
    check "$p: STATUS column" wait_until status_column $p
done
expect_eq "exit1: lastState.terminated" "1 Error" \
    "$(k get pod exit1 -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason}')"
expect_eq "nosuch: lastState.terminated" "128 StartError" \
    "$(k get pod nosuch -o jsonpath='{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason}')"
expect_match "nosuch: a Failed event names the program" 'Failed +pod/nosuch +Error: exec: "/no/such/program"' \
    "$(k get events --field-selector involvedObject.name=nosuch 2>&1)"

events_say() { k get events --field-selector involvedObject.name=argsonly 2>&1 | grep -q ArgsWithoutCommand; }
check "argsonly: a Warning event" wait_until events_say
expect_match "argsonly: it says what runs" 'Container c has args but no command.*args\[0\] \("--epochs"\) runs as the program' \
    "$(k get events --field-selector involvedObject.name=argsonly -o jsonpath='{.items[?(@.reason=="ArgsWithoutCommand")].message}')"
check "argsonly: crash loops too" wait_until crash_looping argsonly
expect_match "argsonly: the start error says why" 'has args but no command' \
    "$(k get pod argsonly -o jsonpath='{.status.containerStatuses[0].lastState.terminated.message}')"

k delete pods --all --wait=false >/dev/null 2>&1
finish
