#!/usr/bin/env bash
# Durability across a restart, watch resume and 410 Gone, garbage collection
# with the three propagation policies, finalizers, namespaces, deletecollection.
. "$(dirname "$0")/lib.sh"
E2E_DATA="$E2E_TMP/data"
start_server
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
k() { kubectl --request-timeout=20s "$@"; }

k apply -f "$EX/pytorch-ddp.yaml" >/dev/null
k create configmap keep --from-literal=a=1 >/dev/null
uid=$(k get pytorchjob pytorch-ddp -o jsonpath='{.metadata.uid}')
rv_before=$(k get pytorchjob pytorch-ddp -o jsonpath='{.metadata.resourceVersion}')

# Owned objects for the GC checks.
owned() { # owned NAME OWNER_UID
    cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ConfigMap
metadata:
  name: $1
  ownerReferences:
  - {apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: owner, uid: "$2", controller: true, blockOwnerDeletion: true}
data: {k: v}
YAML
}

# --- restart: nothing acknowledged is lost, the rv counter goes on ---
stop_server
start_server
expect_eq "job survives a restart (same uid)" "$uid" "$(k get pytorchjob pytorch-ddp -o jsonpath='{.metadata.uid}')"
expect_eq "configmap survives a restart" "1" "$(k get configmap keep -o jsonpath='{.data.a}')"
k label configmap keep after=restart >/dev/null
rv_after=$(k get configmap keep -o jsonpath='{.metadata.resourceVersion}')
if [ "$rv_after" -gt "$rv_before" ]; then pass "resourceVersion keeps increasing after restart"; else fail "resourceVersion went back: $rv_before -> $rv_after"; fi

# --- /metrics: what the store holds and the process's memory, read at each scrape ---
m=$(kcurl -s "$SERVER/metrics")
expect_eq "metrics: store objects, texts by form, commits and the commit section, RSS and CPU are reported and plausible" "ok" \
    "$(printf '%s\n' "$m" | /usr/bin/python3 -c '
import sys
v = {}
for line in sys.stdin:
    if line and not line.startswith("#"):
        k, _, x = line.rpartition(" ")
        v[k] = float(x)
bad = []
if v.get("trainyard_store_objects", 0) < 2: bad.append("objects")
if "trainyard_store_object_trees" not in v: bad.append("trees")
for form in ("plain", "compressed", "view"):
    if "trainyard_store_memory_bytes{form=\"%s\"}" % form not in v: bad.append(form)
if not 1 <= v.get("trainyard_store_transactions_total", 0) <= v.get("trainyard_store_writes_total", 0): bad.append("commits")
held, cpu = v.get("trainyard_store_commit_section_seconds_total", -1), v.get("trainyard_store_commit_section_cpu_seconds_total", -1)
if not 0 < held < 1e5 or not 0 <= cpu or cpu > held * 1.5 + 0.01: bad.append("section")
if not 1e6 < v.get("process_resident_memory_bytes", 0) < 1e11: bad.append("rss")
if not 0 <= v.get("process_cpu_seconds_total", -1) < 1e6: bad.append("cpu")
if v.get("trainyard_store_reaper_overflows_total", -1) != 0: bad.append("reaper")  # a small store never overflows
print(" ".join(bad) or "ok")')"

# watch_read PATH STOP: a watch's lines, read until an ERROR event, the event
# STOP ("TYPE NAME") or the end of the stream. The watch asks for a long
# timeout and is left as soon as what the check needs came: a short timeout
# could end it, on a loaded machine, before the events were sent.
watch_read() {
    /usr/bin/python3 - "$SERVER$1&timeoutSeconds=$E2E_WAIT" "$2" "$E2E_WAIT" <<'PY'
import json, os, ssl, sys, urllib.request
url, stop, wait = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctx = ssl.create_default_context(cafile=os.environ["E2E_CA"]) if os.environ.get("E2E_CA") else None
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + os.environ["E2E_TOKEN"]})
with urllib.request.urlopen(req, timeout=wait + 30, context=ctx) as r:
    for line in r:
        line = line.decode().strip()
        if not line:
            continue
        print(line, flush=True)
        e = json.loads(line)
        if e["type"] == "ERROR" or "%s %s" % (e["type"], e["object"]["metadata"].get("name")) == stop:
            break
PY
}

# --- watch from a version older than this server's history: 410 Gone ---
out=$(watch_read "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1" "")
expect_match "watch from a too-old resourceVersion gets an ERROR 410 event" '"type":"ERROR".*"code":410' "$out"
expect_match "the 410 reads like kube" 'too old resource version' "$out"
# --- watch resume: from a known version we get exactly the later events ---
rv=$(kcurl -s "$SERVER/api/v1/namespaces/default/configmaps" | /usr/bin/python3 -c 'import sys, json; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
k create configmap w1 --from-literal=x=1 >/dev/null
k delete configmap w1 >/dev/null
out=$(watch_read "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv" "DELETED w1")
expect_eq "resume delivers ADDED then DELETED for w1" "ADDED w1,DELETED w1" \
    "$(printf '%s\n' "$out" | /usr/bin/python3 -c 'import sys, json; print(",".join(e["type"] + " " + e["object"]["metadata"]["name"] for e in map(json.loads, sys.stdin) if e["type"] != "BOOKMARK"))')"

# --- garbage collection ---
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: owner}
spec:
  pytorchReplicaSpecs:
    Master:
      template: {spec: {containers: [{name: pytorch, image: x}]}}
YAML
ouid=$(k get pytorchjob owner -o jsonpath='{.metadata.uid}')
owned dep-a "$ouid"; owned dep-b "$ouid"
k delete pytorchjob owner --cascade=orphan >/dev/null
# the collector takes the ownerReferences off, then the owner goes
no_owner_refs() { [ -z "$(k get configmap dep-a -o jsonpath='{.metadata.ownerReferences}')" ] &&
                  [ -z "$(k get configmap dep-b -o jsonpath='{.metadata.ownerReferences}')" ]; }
wait_until no_owner_refs
k wait --for=delete pytorchjob/owner --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "orphan keeps dependents" "dep-a dep-b" "$(k get configmaps dep-a dep-b -o jsonpath='{.items[*].metadata.name}' 2>&1)"
expect_eq "orphan removes ownerReferences" "" "$(k get configmap dep-a -o jsonpath='{.metadata.ownerReferences}')"

cat <<'YAML' | k apply -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: owner}
spec:
  pytorchReplicaSpecs:
    Master:
      template: {spec: {containers: [{name: pytorch, image: x}]}}
YAML
ouid=$(k get pytorchjob owner -o jsonpath='{.metadata.uid}')
k delete configmap dep-a dep-b >/dev/null
owned dep-c "$ouid"
k delete pytorchjob owner --cascade=foreground >/dev/null
k wait --for=delete configmap/dep-c --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "foreground deletes dependents" "" "$(k get configmap dep-c -o name 2>/dev/null)"
k wait --for=delete pytorchjob/owner --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "foreground then deletes the owner" "" "$(k get pytorchjob owner -o name 2>/dev/null)"

cat <<'YAML' | k apply -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: owner}
spec:
  pytorchReplicaSpecs:
    Master:
      template: {spec: {containers: [{name: pytorch, image: x}]}}
YAML
ouid=$(k get pytorchjob owner -o jsonpath='{.metadata.uid}')
owned dep-d "$ouid"
k delete pytorchjob owner >/dev/null
k wait --for=delete configmap/dep-d --timeout=${E2E_WAIT}s >/dev/null 2>&1
expect_eq "background deletes dependents after the owner" "" "$(k get configmap dep-d -o name 2>/dev/null)"

# --- finalizers hold deletion ---
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: v1
kind: ConfigMap
metadata: {name: held, finalizers: [example.com/hold]}
YAML
k delete configmap held --wait=false >/dev/null
expect_match "a finalizer keeps the object, marked" '[0-9]{4}-' "$(k get configmap held -o jsonpath='{.metadata.deletionTimestamp}')"
k patch configmap held --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
expect_eq "removing the last finalizer deletes it" "" "$(k get configmap held -o name 2>/dev/null)"

# --- deletecollection with a selector ---
k create configmap c1 >/dev/null; k create configmap c2 >/dev/null; k label configmap c1 c2 grp=x >/dev/null
k delete configmaps -l grp=x >/dev/null
expect_eq "deletecollection by label" "" "$(k get configmaps -l grp=x -o name)"
expect_eq "deletecollection left the others" "keep" "$(k get configmap keep -o jsonpath='{.metadata.name}')"

# --- namespaces: default ones exist; deleting one deletes its contents ---
expect_match "default and kube-system exist" 'default.*kube-system|kube-system.*default' "$(k get namespaces -o name | tr '\n' ' ')"
k create namespace team >/dev/null
k -n team create configmap inside >/dev/null
k delete namespace team --timeout=${E2E_WAIT}s >/dev/null
expect_eq "namespace deletion removes contents" "" "$(k -n team get configmaps -o name 2>/dev/null)"
expect_match "namespace is gone" 'NotFound' "$(k get namespace team 2>&1)"
out=$(k -n team create configmap late 2>&1)
expect_match "creating in a missing namespace is NotFound" 'namespaces "team" not found' "$out"

# the control plane's own namespaces stay; no request deletes every one
for ns in default kube-system; do
    expect_match "namespace $ns may not be deleted" "namespaces \"$ns\" is forbidden: this namespace may not be deleted" \
        "$(k delete namespace $ns 2>&1)"
done
expect_eq "DELETE of the namespaces collection: 405, as kube-apiserver" 405 \
    "$(kcurl -s -o /dev/null -w '%{http_code}' -X DELETE "$SERVER/api/v1/namespaces")"
expect_match "... and every namespace is still there" 'default' "$(k get namespaces -o name)"

# NamespaceLifecycle: a namespace held by an object's finalizer takes no new
# content, neither from a user nor from a controller (unit: test_kc_contract)
k create namespace held >/dev/null
k -n held apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: pin, finalizers: [example.com/hold]}
EOF
k delete namespace held --wait=false >/dev/null
out=$(k -n held create configmap late 2>&1)
expect_match "a namespace being deleted refuses creates (403)" 'forbidden: unable to create new content in namespace held because it is being terminated' "$out"
out=$(kcurl -s -X POST -H 'Content-Type: application/json' -d '{"metadata":{"name":"late"}}' "$SERVER/api/v1/namespaces/held/configmaps")
expect_match "... the Status names the cause" '"reason": *"NamespaceTerminating".*"field": *"metadata.namespace"|"field": *"metadata.namespace".*"reason": *"NamespaceTerminating"' "$out"
k -n held patch configmap pin --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
ns_held_gone() { ! k get namespace held >/dev/null 2>&1; }
check "... and goes once its last object lets go" wait_until "$E2E_WAIT" ns_held_gone

# --- SIGTERM handled on any thread stops the server ---
# The kernel may run the handler on any thread that does not block the
# signal; the main thread used to wait in pause() and never noticed one
# handled elsewhere. tgkill aims it at a thread other than the main one.
# The thread is one of the server's own, which live as long as it does (the
# checkpointer, the sweeper, ...: every server runs them, --api-only too),
# not a connection's, which may be gone before the signal comes (ESRCH).
long_lived_tid() {
    local name t
    for name in ty-checkpoint ty-sweep ty-event-ttl ty-reaper; do
        for t in /proc/"$SERVER_PID"/task/*; do
            [ "${t##*/}" != "$SERVER_PID" ] && [ "$(cat "$t/comm" 2>/dev/null)" = "$name" ] &&
                { echo "${t##*/} ($name)"; return 0; }
        done
    done
    return 1
}
# tgkill TID: SIGTERM to that thread of the server; fails (with the errno)
# when the kernel did not take it.
tgkill() {
    /usr/bin/python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.syscall(234, int(sys.argv[1]), int(sys.argv[2]), 15)
sys.exit(0 if rc == 0 else (ctypes.get_errno() or 1))' "$SERVER_PID" "$1"
}
# Sent again only when it was not sent (no such thread, or the kernel said
# no): once the kernel took it, that one signal must stop the server.
tid="" sent=""
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    tid=$(long_lived_tid) && tgkill "${tid%% *}" && { sent=1; break; }
    sleep 0.25
done
server_gone() { ! kill -0 "$SERVER_PID" 2>/dev/null; }
[ -n "$sent" ] && wait_until server_gone
if [ -z "$sent" ]; then
    fail "SIGTERM to a thread stops the server (no long-lived thread took it: ${tid:-none found})"
    ls -l /proc/"$SERVER_PID"/task 2>&1 | sed 's/^/     | /'
    kill -KILL "$SERVER_PID"
elif kill -0 "$SERVER_PID" 2>/dev/null; then
    fail "SIGTERM to thread $tid stops the server"
    kill -KILL "$SERVER_PID"
else
    pass "SIGTERM to thread $tid stops the server"
fi
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""

# --- Events expire a TTL after their last write (--event-ttl) ---
out=$("$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/ttl-bad" --event-ttl 5x 2>&1); rc=$?
expect_eq "a bad --event-ttl exits 2" "2" "$rc"
expect_match "a bad --event-ttl says why" 'invalid --event-ttl 5x' "$out"
# 15 s: far past what the apply and the read that follows it take on a
# loaded machine, so that "the event is there" does not race the TTL.
start_server --event-ttl 15s
cat >"$E2E_TMP/event.yaml" <<'YAML'
apiVersion: v1
kind: Event
metadata:
  name: ttl-probe
  namespace: default
involvedObject:
  kind: ConfigMap
  name: keep
  namespace: default
reason: Probe
message: expires fifteen seconds after this write
type: Normal
YAML
# (start is taken before the write: the event's last write is after it, so
# it may not go before start + TTL; the read that finds it gone is after.)
start=$(date +%s%N)
k apply -f "$E2E_TMP/event.yaml" >/dev/null
expect_eq "the event is there" "ttl-probe" "$(k get events ttl-probe -o jsonpath='{.metadata.name}')"
gone=""
end=$((SECONDS + 15 + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    # gone is NotFound; any other error (a slow answer) is asked again
    out=$(k get events ttl-probe -o name 2>&1)
    if grep -q 'NotFound' <<<"$out"; then gone=$(date +%s%N); break; fi
    sleep 0.1
done
# (14.9 s: the server's clock counts in whole milliseconds)
if [ -n "$gone" ] && [ $(((gone - start) / 1000000)) -ge 14900 ]; then
    pass "the event goes after its TTL ($(((gone - start) / 1000000)) ms)"
else
    fail "the event goes after its TTL (gone=${gone:-never}, after $(((${gone:-0} - start) / 1000000)) ms)"
fi
expect_eq "other objects stay" "keep" "$(k get configmap keep -o jsonpath='{.metadata.name}')"
stop_server

finish
