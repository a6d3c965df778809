#!/usr/bin/env bash
# t0530-runtime-logs.sh - a pod's log budget and the logs of deleted pods:
# with --pod-log-max-size 4Ki the logs rotate (one older file kept) and
# kubectl logs (plain, --tail across the cut, -f across rotations, --previous)
# serves whole, ordered lines from both files; with --pod-log-retention 60s a
# deleted pod's logs stay readable, then go.
source "$(dirname "$0")/lib.sh"
export TY_RESTART_BACKOFF_MS=200
# (60 s: far past what reading a deleted pod's logs right after the delete
# takes on a loaded machine; the test then waits for them to go)
RETENTION=60
start_server --pod-log-max-size 4Ki --pod-log-retention ${RETENTION}s
DATA=$E2E_TMP/data

# contiguous TEXT LAST: TEXT is the numbers N..LAST, one a line, N > 1.
contiguous() {
    local first; first=$(printf '%s\n' "$1" | head -1)
    [ "$first" -gt 1 ] && [ "$1" = "$(seq "$first" "$2")" ]
}

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: chatty}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["seq", "1", "3000"]
YAML
check "the chatty pod runs to Succeeded" wait_until pods_in_phase Succeeded chatty
out=$(kubectl logs chatty)
check "kubectl logs serves the end of the output, whole and in order, from both files" \
    contiguous "$out" 3000
on_disk=$(cat "$DATA/logs/default/chatty/c.log.1" "$DATA/logs/default/chatty/c.log" | wc -l)
expect_eq "every line of the rotated and the current file" "$on_disk" "$(printf '%s\n' "$out" | wc -l)"
cur=$(wc -l <"$DATA/logs/default/chatty/c.log")
n=$((cur + 10))
expect_eq "--tail across the cut" "$(seq $((3001 - n)) 3000)" "$(kubectl logs chatty --tail=$n)"
expect_eq "--tail within the current file" "$(seq 2996 3000)" "$(kubectl logs chatty --tail=5)"
check "a tail larger than the log is all of it" test "$(kubectl logs chatty --tail=100000000)" = "$out"

# A follower crosses rotations: it sees every line printed after it began.
# The pod prints 5 rounds of 100 lines (~3.5 KiB: at most one rotation per
# round), each when the test says so, once the follower has the previous
# round: the follower is never more than a file behind, however slow.
GO=$E2E_TMP/go
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: slow}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "echo start; for k in 1 2 3 4 5; do while [ ! -e $GO.\$k ]; do sleep 0.05; done; seq \$((k * 100 - 99)) \$((k * 100)); done"]
YAML
check "the slow pod has started" wait_until log_has slow '^start$'
kubectl logs -f slow >"$E2E_TMP/follow.out" 2>&1 &
FOLLOW=$!
rounds=yes
wait_until file_has "$E2E_TMP/follow.out" '^start$' || rounds="no: the follower never had start"
for k in 1 2 3 4 5; do
    [ "$rounds" = yes ] || break
    touch "$GO.$k"
    wait_until file_has "$E2E_TMP/follow.out" "^$((k * 100))\$" || rounds="no: the follower never had round $k"
done
expect_eq "the follower has each round before the next is printed" yes "$rounds"
# the pod ends after its last round, and with it the follow
follower_gone() { ! kill -0 $FOLLOW 2>/dev/null; }
[ "$rounds" = yes ] && check "kubectl logs -f ends when the pod does" wait_until follower_gone
kill $FOLLOW 2>/dev/null
wait $FOLLOW 2>/dev/null
expect_eq "kubectl logs -f follows across rotations" "$(echo start; seq 1 500)" "$(cat "$E2E_TMP/follow.out")"

# --previous: the failed run's lines from its two files, none of the next run's.
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: again}
spec:
  restartPolicy: OnFailure
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - name: c
    image: busybox
    command: ["sh", "-c", "if [ -e /scratch/ran ]; then echo second; sleep 100; fi; touch /scratch/ran; seq 1 2000; exit 1"]
    volumeMounts: [{name: scratch, mountPath: /scratch}]
YAML
check "the pod ran again after its failure" wait_until log_has again '^second$'
expect_eq "the current run's log" "second" "$(kubectl logs again)"
check "--previous serves the end of the failed run from both its files" \
    contiguous "$(kubectl logs again --previous)" 2000

# Retention: readable after deletion, gone after $RETENTION s (the sweep runs
# every quarter of it).
kubectl delete pod chatty >/dev/null
check "a deleted pod's logs are still served" test "$("$TRAINYARD" logs chatty --tail=1)" = 3000
gone=""
logs_dir_gone() { [ ! -d "$DATA/logs/default/chatty" ]; }
wait_until $((RETENTION * 2 + E2E_WAIT)) logs_dir_gone && gone=yes
expect_eq "a deleted pod's logs go after --pod-log-retention" yes "$gone"
expect_match "and are then not found" "not found" "$("$TRAINYARD" logs chatty 2>&1)"
kubectl delete pod again slow --wait=false >/dev/null 2>&1
finish
