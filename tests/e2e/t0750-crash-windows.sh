#!/usr/bin/env bash
# A crash of the server never runs a pod's command twice: the server dies
# (a failpoint) right after starting a pod's supervisor and before recording
# it; the restarted server adopts that supervisor (its lock) instead of
# starting a second one, and the first run's log is whole. Then a short kill
# -9 soak (tests/soak/kill9-soak.sh): Volcano Jobs while the server is
# SIGKILLed and restarted; every end state, start, log line and exit code
# right.
. "$(dirname "$0")/lib.sh"
E2E_DATA="$E2E_TMP/data"
k() { kubectl --request-timeout=20s "$@"; }
# until SECONDS CMD...: wait_until, and on a timeout CMD once more with its
# output (for check's report).
until_ok() { wait_until "$@" && return 0; shift; "$@"; }
phase_is() { [ "$(k get pod "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }

TY_FAILPOINTS=rt-exit-after-supervisor-spawn start_server --fake-gpus 0 --node-name e2e-node
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: once}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "echo run >> $E2E_TMP/runs; echo first; while [ ! -e $E2E_TMP/go ]; do sleep 0.1; done; echo last; exit 6"]
YAML
wait "$SERVER_PID"
expect_eq "the server died at the failpoint" 86 "$?"
SERVER_PID=""
start_server --fake-gpus 0 --node-name e2e-node
check "the pod runs" until_ok 60 phase_is once Running
touch "$E2E_TMP/go"
check "and ends" until_ok 60 phase_is once Failed
expect_eq "with its exit code" 6 \
    "$(k get pod once -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"
expect_eq "its command ran once" 1 "$(wc -l <"$E2E_TMP/runs")"
expect_eq "its whole log" "first
last" "$(k get pod once >/dev/null; kubectl logs once)"
k delete pod once >/dev/null
stop_server

soak=$(bash "$(dirname "$0")/../soak/kill9-soak.sh" -j 8 -k 4 -g 20 -s "${SOAK_SEED:-$RANDOM}" -t 240 2>&1)
rc=$?
printf '%s\n' "$soak" | sed 's/^/     | /' | tail -20
if [ $rc = 0 ]; then pass "kill -9 soak: 8 jobs, 4 kills"; else fail "kill -9 soak: 8 jobs, 4 kills"; fi
finish
