#!/usr/bin/env bash
# t1040-pod-identity.sh - pods run as their users, with the real server and
# kubectl: runAsUser is the uid a pod's processes have (the namespace's
# first uid without one; explicit uids in a namespace labelled privileged),
# /etc/shadow and the server's environment are out of reach, two pods of
# different uids cannot read each other's files, logs or Secrets nor the
# store, runAsNonRoot with uid 0 is refused, a hostPath volume still
# mounts for a pod that is not root, and kubectl logs still reads every log.
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
    echo "# skipped: the server must run as root to run pods as other users"
    exit 0
fi
# (lib.sh leaves the test's directory open to all: only the data
# directory's own modes keep pods out of it.)
export TY_E2E_SERVER_MARKER=server-only
start_server
unset TY_E2E_SERVER_MARKER
DATA=$E2E_TMP/data
# Explicit uids and a hostPath are the admin's to allow: a namespace
# labelled privileged (pod security; in a baseline one admission keeps pods
# to the namespace's uid block, t1030).
kubectl create namespace lab >/dev/null &&
    kubectl label namespace lab pod-security.kubernetes.io/enforce=privileged >/dev/null &&
    kubectl config set-context --current --namespace=lab >/dev/null || fail "a privileged namespace"
phase() { kubectl get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
ended() { case "$(phase "$1")" in Succeeded|Failed) return 0 ;; esac; return 1; }

mkdir -p "$E2E_TMP/shared" && echo dataset >"$E2E_TMP/shared/README"
kubectl apply -f - >/dev/null <<YAML || fail "apply"
apiVersion: v1
kind: Pod
metadata: {name: nobody}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 65534}
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'echo uid=\$(id -u); cat /etc/shadow >/dev/null 2>&1 && echo shadow=open || echo shadow=closed; env | sed "s/^/env /"; cat /data/README']
    volumeMounts: [{name: d, mountPath: /data}]
  volumes:
  - {name: d, hostPath: {path: $E2E_TMP/shared}}
---
apiVersion: v1
kind: Pod
metadata: {name: anon}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: busybox, command: [sh, -c, 'echo uid=\$(id -u):\$(id -g)']}
YAML
check "the runAsUser 65534 pod ends" wait_until ended nobody
log=$(kubectl logs nobody 2>&1)
expect_match "it runs as uid 65534" '^uid=65534$' "$log"
expect_match "it cannot read /etc/shadow" '^shadow=closed$' "$log"
if grep -q TY_E2E_SERVER_MARKER <<<"$log"; then fail "its environment has none of the server's"; else pass "its environment has none of the server's"; fi
expect_match "its PATH is the default one" '^env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$' "$log"
expect_match "a hostPath volume mounts for it" '^dataset$' "$log"
check "a pod without runAsUser ends" wait_until ended anon
range=$(kubectl get namespace lab -o jsonpath='{.metadata.annotations.openshift\.io/sa\.scc\.uid-range}')
first=${range%/*}
expect_eq "it runs as its namespace's first uid, not root" "uid=$first:$first" "$(kubectl logs anon 2>&1)"

# --- two tenants
kubectl apply -f - >/dev/null <<'YAML' || fail "apply"
apiVersion: v1
kind: Secret
metadata: {name: a-token}
stringData: {token: a-secret-value}
---
apiVersion: v1
kind: Pod
metadata: {name: tenant-a}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 1001, fsGroup: 1001}
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'echo a-private > /tmp/file; echo a-private > /scratch/file; cat /token/token >/dev/null && echo ready; exec sleep 1000']
    volumeMounts: [{name: s, mountPath: /scratch}, {name: t, mountPath: /token}]
  volumes:
  - {name: s, emptyDir: {}}
  - {name: t, secret: {secretName: a-token}}
YAML
check "tenant A runs" wait_until bash -c "kubectl logs tenant-a 2>/dev/null | grep -q ready"
pid=$(kubectl get pod tenant-a -o jsonpath='{.status.containerStatuses[0].containerID}'); pid=${pid#trainyard://}
puid=$(kubectl get pod tenant-a -o jsonpath='{.metadata.uid}')
kubectl apply -f - >/dev/null <<YAML || fail "apply"
apiVersion: v1
kind: Pod
metadata: {name: tenant-b}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 1002}
  containers:
  - name: c
    image: busybox
    command:
    - sh
    - -c
    - |
      t() { if sh -c "\$2" >/dev/null 2>&1; then echo "\$1=open"; else echo "\$1=closed"; fi; }
      t store 'cat $DATA/trainyard.db'
      t datadir 'ls $DATA'
      t poddir 'ls $DATA/pods/$puid'
      t emptydir 'cat $DATA/pods/$puid/volumes/s/file'
      t secret 'cat $DATA/pods/$puid/volumes/t/token'
      t log 'cat $DATA/logs/default/tenant-a/c.log'
      t tmp 'cat /proc/$pid/root/tmp/file'
      t environ 'cat /proc/$pid/environ'
      t own 'echo b > /tmp/mine && cat /tmp/mine'
YAML
check "tenant B ends" wait_until ended tenant-b
log=$(kubectl logs tenant-b 2>&1)
for what in "store:the store" "datadir:the data directory" "poddir:A's pod directory" \
    "emptydir:A's emptyDir" "secret:A's Secret" "log:A's log" "tmp:A's /tmp" \
    "environ:A's environment"; do
    expect_match "tenant B cannot read ${what#*:}" "^${what%%:*}=closed$" "$log"
done
expect_match "(and can read its own /tmp)" '^own=open$' "$log"
expect_match "kubectl logs still reads tenant A's log" '^ready$' "$(kubectl logs tenant-a 2>&1)"
check "tenant A's data directory is closed (0700)" test "$(stat -c %a "$DATA")" = 700

# --- runAsNonRoot with uid 0 is refused (admission: in every namespace; the
# runtime refuses it too, test_runtime_identity)
kubectl apply -f - >"$E2E_TMP/nonroot.out" 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: nonroot}
spec:
  restartPolicy: Never
  securityContext: {runAsNonRoot: true, runAsUser: 0}
  containers:
  - {name: c, image: busybox, command: ["true"]}
YAML
expect_eq "runAsNonRoot with runAsUser 0 is refused" "1" "$?"
expect_match "... saying why" 'forbidden.*runAsNonRoot|runAsNonRoot.*forbidden|runAsUser' "$(cat "$E2E_TMP/nonroot.out")"
expect_eq "and never exists" "" "$(phase nonroot)"
kubectl delete pod tenant-a nonroot --wait=false >/dev/null 2>&1
finish
