#!/usr/bin/env bash
# The audit log (--audit-log-path, --audit-policy-file, rotation), read as
# kube-apiserver's audit.k8s.io/v1 Events: one line per request with the
# right user, verb, objectRef and code for the real kubectl's requests; a
# 401; a watch's two stages; a policy's None for one user; rotation with
# a small --audit-log-maxsize; a malformed policy stops the server.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
AUDIT_DIR=$E2E_TMP/audit
AUDIT=$AUDIT_DIR/audit.log
TOKENS=$E2E_TMP/tokens.csv
cat >"$TOKENS" <<'EOF'
tok-admin,admin,uid-admin,system:masters
tok-alice,alice,uid-alice,"team-a,dev"
tok-quiet,quiet,uid-quiet
EOF
# as_user TOKEN: sets KC to a kubeconfig that reaches the server (TLS, its
# CA) as TOKEN's user
as_user() {
    KC=$E2E_TMP/kc.$1
    cp "$KUBECONFIG" "$KC"
    kubectl --kubeconfig="$KC" config set-credentials \
        "$(kubectl --kubeconfig="$KC" config view -o jsonpath='{.contexts[0].context.user}')" \
        --token="$1" >/dev/null
}
ka() { kubectl --request-timeout=20s --kubeconfig="$KC_ALICE" "$@"; }

# count EXPR [LOG]: how many events of the log EXPR (Python, the event is e)
# holds; "BAD" when a line is not one JSON object.
cat >"$E2E_TMP/q.py" <<'EOF'
import json, sys
log, expr = sys.argv[1], "(" + sys.argv[2].strip() + ")"
n = 0
for line in open(log):
    try:
        e = json.loads(line)
        assert isinstance(e, dict)
    except Exception:
        print("BAD", line[:200]); sys.exit(0)
    def g(*keys, e=e):
        v = e
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        return v
    if eval(expr, {"e": e, "g": g}):
        n += 1
print(n)
EOF
# (an ASan build's server reports on its stderr, which the cleanup removes)
no_sanitizer_report() {
    expect_eq "the server's stderr has no sanitizer report" "" \
        "$(grep -E 'AddressSanitizer|LeakSanitizer|runtime error' "$E2E_TMP/server.err")"
}
count() { $PY "$E2E_TMP/q.py" "${2:-$AUDIT}" "$1" 2>&1; }
has_events() { [ "$(count "$1" "${2:-$AUDIT}")" -ge "${3:-1}" ]; }

# grant_users: alice may edit in default, quiet may read there (RBAC; as the admin)
grant_users() {
    kubectl apply -f - >/dev/null <<'EOF2' || fail "bind alice and quiet"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: namespace-reader}
rules:
- {apiGroups: [""], resources: [namespaces], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-namespaces}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: namespace-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-edit, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: quiet-view, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: quiet}]
EOF2
}

# --- the default: every request at Metadata, one line each
start_server --no-local-node --sim-nodes 1x0 --token-auth-file "$TOKENS" --audit-log-path "$AUDIT"
expect_eq "the audit directory is made 0700" "700" "$(stat -c %a "$AUDIT_DIR")"
expect_eq "the audit log is 0600" "600" "$(stat -c %a "$AUDIT")"
grant_users
as_user tok-alice; KC_ALICE=$KC

cat >"$E2E_TMP/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: p1
spec:
  containers:
  - name: main
    image: busybox
    command: ["true"]
EOF
check "kubectl create a pod" ka create -f "$E2E_TMP/pod.yaml"
check "kubectl get it" ka get pod p1
wait_until has_events 'g("verb")=="get" and g("objectRef","name")=="p1"'
expect_eq "the create: one line, alice, objectRef, 201" "1" "$(count '
    g("verb")=="create" and g("user","username")=="alice" and g("user","uid")=="uid-alice"
    and "team-a" in g("user","groups") and g("objectRef","resource")=="pods"
    and g("objectRef","namespace")=="default" and g("objectRef","name")=="p1"
    and g("objectRef","apiVersion")=="v1" and g("responseStatus","code")==201
    and g("stage")=="ResponseComplete" and g("level")=="Metadata"
    and g("sourceIPs")==["127.0.0.1"] and g("userAgent").startswith("kubectl/")
    and g("annotations","authorization.k8s.io/decision")=="allow"
    and g("requestURI").startswith("/api/v1/namespaces/default/pods")
    and g("kind")=="Event" and g("apiVersion")=="audit.k8s.io/v1"')"
expect_eq "the get: one line, verb get, 200" "1" "$(count '
    g("verb")=="get" and g("user","username")=="alice" and g("objectRef","name")=="p1"
    and g("responseStatus","code")==200 and g("requestURI").startswith("/api/v1/namespaces/default/pods/p1?")')"
expect_eq "no RequestReceived stage without a policy asking" "0" "$(count 'g("stage")=="RequestReceived"')"

# exactly one line per request: five requests with a user agent of their own
for i in 1 2 3 4 5; do
    acurl -s -o /dev/null -A "t1020-ua" -H "Authorization: Bearer tok-alice" "$SERVER/api/v1/namespaces/default/pods?limit=$i"
done
wait_until has_events 'g("userAgent")=="t1020-ua" and g("requestURI").endswith("limit=5")'
expect_eq "five requests, five lines" "5" "$(count 'g("userAgent")=="t1020-ua"')"
expect_eq "... with the query in requestURI" "1" "$(count 'g("requestURI")=="/api/v1/namespaces/default/pods?limit=3"')"
id=$(acurl -s -D - -o /dev/null -H "Authorization: Bearer tok-alice" "$SERVER/api/v1/namespaces" | tr -d '\r' | sed -n 's/^Audit-Id: //p')
wait_until has_events "g('auditID')=='$id'"
expect_eq "the Audit-Id header names the request's event" "1" "$(count "g('auditID')=='$id' and g('verb')=='list' and g('objectRef','resource')=='namespaces'")"

# a 401: kube-apiserver logs it at ResponseStarted, with no user
as_user bogus
kubectl --request-timeout=20s --kubeconfig="$KC" get pods >/dev/null 2>&1
expect_eq "a bogus token is refused" "1" "$?"
wait_until has_events 'g("responseStatus","code")==401'
expect_match "the 401 is logged: stage ResponseStarted, user {}, reason Unauthorized" '^[1-9]' "$(count '
    g("responseStatus","code")==401 and g("stage")=="ResponseStarted" and e["user"]=={}
    and g("responseStatus","reason")=="Unauthorized" and g("verb") in ("get", "list")')"
expect_eq "... and only at that stage" "0" "$(count 'g("responseStatus","code")==401 and g("stage")!="ResponseStarted"')"

# a watch: ResponseStarted when the stream begins, ResponseComplete when it ends
# (ended once its stream has begun, however long kubectl takes to get there)
kubectl --kubeconfig="$KC_ALICE" get pods --watch-only >/dev/null 2>&1 &
wpid=$!
wait_until has_events 'g("verb")=="watch" and g("stage")=="ResponseStarted" and g("user","username")=="alice"'
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
wait_until has_events 'g("verb")=="watch" and g("stage")=="ResponseComplete" and g("user","username")=="alice"'
wid=$($PY -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["verb"] == "watch" and e["stage"] == "ResponseStarted": print(e["auditID"]); break' "$AUDIT")
expect_eq "the watch: ResponseStarted then ResponseComplete, one auditID" "ResponseStarted ResponseComplete" \
    "$($PY -c '
import json, sys
print(" ".join(e["stage"] for e in map(json.loads, open(sys.argv[1])) if e["auditID"] == sys.argv[2]))' "$AUDIT" "$wid")"

# a forbidden request and the anonymous health check
acurl -s -o /dev/null "$SERVER/healthz"
wait_until has_events 'g("requestURI")=="/healthz"'
expect_eq "/healthz without credentials: system:anonymous" "1" "$(count '
    g("requestURI")=="/healthz" and g("user","username")=="system:anonymous" and "objectRef" not in e')"

# a clean stop loses nothing: the last request is there once the server exited
acurl -s -o /dev/null -A "t1020-last" -H "Authorization: Bearer tok-alice" "$SERVER/api/v1/namespaces/default/pods"
stop_server
no_sanitizer_report
expect_eq "the last request before a clean stop is written" "1" "$(count 'g("userAgent")=="t1020-last"')"
expect_eq "every line is one Event" "0" "$(count 'e.get("kind")!="Event"')"

# --- a policy: None for one user, RequestResponse for configmaps; rotation
cat >"$E2E_TMP/policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: [quiet]
- level: RequestResponse
  resources:
  - group: ""
    resources: [configmaps]
  omitStages: [RequestReceived]
- level: Metadata
  resources:
  - group: ""
    resources: [namespaces]
- level: Metadata
  omitStages: [RequestReceived]
EOF
AUDIT2=$E2E_TMP/audit2/audit.log
start_server --no-local-node --sim-nodes 1x0 --token-auth-file "$TOKENS" --audit-log-path "$AUDIT2" \
    --audit-policy-file "$E2E_TMP/policy.yaml" --audit-log-maxsize 1 --audit-log-maxbackup 2
grant_users
as_user tok-alice; KC_ALICE=$KC
as_user tok-quiet
check "the quiet user lists pods" kubectl --request-timeout=20s --kubeconfig="$KC" get pods
check "alice lists pods" ka get pods
wait_until has_events 'g("user","username")=="alice" and g("verb")=="list"' "$AUDIT2"
expect_eq "level None for the quiet user: nothing of theirs" "0" "$(count 'g("user","username")=="quiet"' "$AUDIT2")"
check "alice lists namespaces" ka get namespaces
wait_until has_events 'g("objectRef","resource")=="namespaces" and g("stage")=="ResponseComplete"' "$AUDIT2"
expect_eq "a rule that keeps RequestReceived: two stages, one auditID" "RequestReceived ResponseComplete" \
    "$($PY -c '
import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e.get("objectRef", {}).get("resource") == "namespaces"]
print(" ".join(e["stage"] for e in ev if e["auditID"] == ev[0]["auditID"]))' "$AUDIT2")"
expect_eq "... RequestReceived has no outcome and is stamped when the request came" "1" "$(count '
    g("stage")=="RequestReceived" and "responseStatus" not in e
    and g("stageTimestamp")==g("requestReceivedTimestamp")' "$AUDIT2")"
expect_eq "other requests: no RequestReceived (the rule's omitStages)" "0" \
    "$(count 'g("stage")=="RequestReceived" and g("objectRef","resource")!="namespaces"' "$AUDIT2")"
expect_match "the events are counted in /metrics" '^apiserver_audit_event_total [1-9]' \
    "$(acurl -s -H 'Authorization: Bearer tok-admin' "$SERVER/metrics")"

# configmaps of ~300 KB at RequestResponse: each create logs its body twice
big=$($PY -c 'print("x" * 300000)')
for i in $(seq 1 8); do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big%s\ndata:\n  blob: "%s"\n' "$i" "$big" >"$E2E_TMP/cm.yaml"
    ka create -f "$E2E_TMP/cm.yaml" >/dev/null || fail "create configmap big$i"
done
stop_server
no_sanitizer_report
backups() { ls "$E2E_TMP/audit2" | grep -Ec '^audit-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}\.[0-9]{3}\.log$'; }
expect_eq "rotated past 1 MB, two backups kept (--audit-log-maxbackup 2)" "2" "$(backups)"
expect_eq "each file stays within 1 MB" "" "$(find "$E2E_TMP/audit2" -name 'audit*' -size +1024k)"
expect_eq "rotated files are 0600" "600 600" "$(stat -c %a "$E2E_TMP"/audit2/audit-*.log | xargs)"
expect_eq "the last create is in the current file with requestObject and responseObject" "1" "$(count '
    g("verb")=="create" and g("objectRef","name")=="big8" and g("level")=="RequestResponse"
    and g("requestObject","metadata","name")=="big8" and g("responseObject","metadata","uid")' "$AUDIT2")"

# --- a malformed policy: the server refuses to start, naming the rule and field
printf 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n- level: Verbose\n' >"$E2E_TMP/bad.yaml"
"$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/data3" --no-local-node --sim-nodes 1x0 \
    --token-auth-file "$TOKENS" --audit-log-path "$E2E_TMP/audit3/audit.log" \
    --audit-policy-file "$E2E_TMP/bad.yaml" >"$E2E_TMP/bad.out" 2>&1
expect_eq "a malformed policy: the server exits 1" "1" "$?"
expect_match "... naming the rule and the field" 'rules\[1\]\.level: Unsupported value: "Verbose"' "$(cat "$E2E_TMP/bad.out")"
"$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/data3" --audit-log-maxsize lots >"$E2E_TMP/bad.out" 2>&1
expect_eq "a bad --audit-log-maxsize: exit 2" "2" "$?"

finish
