#!/bin/bash
# t1010-rbac.sh - RBAC with the real kubectl and the Python client: default
# roles, a user bound to edit in one namespace and refused in another (kube's
# 403 messages), auth can-i / whoami, impersonation, validation, and the
# creator recorded on jobs.
#
# Users come from a token file of this test's own (an admin in system:masters,
# alice, bob). kubectl sends tokens only over TLS: when the server serves
# plain HTTP, a small TLS front (tls_proxy.py) stands before it.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

cat >"$E2E_TMP/tokens.csv" <<'EOF'
t1010-admin-token,t1010-admin,uid-admin,"system:masters"
t1010-alice-token,alice,uid-alice,"team-a-devs"
t1010-bob-token,bob,uid-bob
t1010-dana-token,dana,uid-dana,"team-leads"
EOF
start_server --token-auth-file "$E2E_TMP/tokens.csv"

URL=$SERVER
PROXY_PID=""
case "$SERVER" in
http://*)
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$E2E_TMP/tls.key" \
        -out "$E2E_TMP/tls.crt" >/dev/null 2>&1
    /usr/bin/python3 "$HERE/tls_proxy.py" "$E2E_TMP/tls.crt" "$E2E_TMP/tls.key" "$SERVER" \
        >"$E2E_TMP/proxy.out" 2>"$E2E_TMP/proxy.err" &
    PROXY_PID=$!
    trap '[ -n "$PROXY_PID" ] && kill $PROXY_PID 2>/dev/null; cleanup' EXIT
    wait_until file_has "$E2E_TMP/proxy.out" '^listening on' || { cat "$E2E_TMP/proxy.err"; exit 1; }
    URL=$(sed -n 's/^listening on //p' "$E2E_TMP/proxy.out")
    ;;
esac

# kubeconfig USER TOKEN: one user's kubeconfig file.
kubeconfig() {
    cat >"$E2E_TMP/$1.kc" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: t, cluster: {server: "$URL", insecure-skip-tls-verify: true}}]
users: [{name: $1, user: {token: $2}}]
contexts: [{name: $1, context: {cluster: t, user: $1}}]
current-context: $1
EOF
}
kubeconfig admin t1010-admin-token
kubeconfig alice t1010-alice-token
kubeconfig bob t1010-bob-token
kubeconfig dana t1010-dana-token
kadmin() { kubectl --kubeconfig "$E2E_TMP/admin.kc" "$@"; }
kalice() { kubectl --kubeconfig "$E2E_TMP/alice.kc" "$@"; }
kbob() { kubectl --kubeconfig "$E2E_TMP/bob.kc" "$@"; }
kdana() { kubectl --kubeconfig "$E2E_TMP/dana.kc" "$@"; }

# ---- the defaults ----
out=$(kadmin get clusterroles 2>&1)
for r in cluster-admin admin edit view system:basic-user system:discovery system:public-info-viewer; do
    expect_match "default clusterrole $r" "^$r +[0-9]{4}-" "$out"
done
expect_match "clusterroles print NAME and CREATED AT" '^NAME +CREATED AT' "$out"
expect_match "cluster-admin bound to system:masters" 'ClusterRole/cluster-admin' \
    "$(kadmin get clusterrolebinding cluster-admin -o wide 2>&1)"
# edit aggregates the registry's job kinds (written by the aggregation)
agg() { kadmin get clusterrole "$1" -o jsonpath='{.rules[*].resources}' | grep -q "$2"; }
check "edit aggregates pytorchjobs" wait_until 30 agg edit pytorchjobs
check "admin aggregates edit's rules" wait_until 30 agg admin jobflows
check "view covers pods/log" wait_until 30 agg view 'pods/log'
out=$(kadmin get clusterrole view -o json)
expect_match "view leaves secrets out" '^$' "$(grep -o '"secrets"' <<<"$out")"

# ---- namespaces and bindings (kubectl create sends these as protobuf) ----
kadmin create namespace team-a >/dev/null
kadmin create namespace team-b >/dev/null
check "rolebinding alice edit in team-a" \
    kadmin create rolebinding alice-edit --clusterrole=edit --user=alice -n team-a
check "rolebinding bob view in team-a" \
    kadmin create rolebinding bob-view --clusterrole=view --user=bob -n team-a
out=$(kadmin get rolebinding -n team-a 2>&1)
expect_match "rolebinding columns" '^NAME +ROLE +AGE' "$out"
expect_match "rolebinding ROLE column" '^alice-edit +ClusterRole/edit +[0-9]+s' "$out"

# ---- alice: edit in team-a, nothing in team-b ----
cat >"$E2E_TMP/job.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: rbac-job
  annotations: {trainyard.io/created-by: t1010-admin}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: x, command: ["true"]}]
EOF
check "alice creates a PyTorchJob in team-a" kalice create -f "$E2E_TMP/job.yaml" -n team-a
out=$(kalice create -f "$E2E_TMP/job.yaml" -n team-b 2>&1)
expect_eq "alice is forbidden in team-b" 'Error from server (Forbidden): error when creating "'"$E2E_TMP"'/job.yaml": pytorchjobs.kubeflow.org is forbidden: User "alice" cannot create resource "pytorchjobs" in API group "kubeflow.org" in the namespace "team-b"' "$out"
out=$(kalice get pods -n team-b 2>&1)
expect_eq "alice cannot list team-b's pods" 'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"' "$out"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: secret-pod}\nspec:\n  schedulerName: someone-else\n  containers: [{name: main, image: x}]\n' |
    kadmin apply -n team-b -f - >/dev/null
out=$(kalice logs secret-pod -n team-b 2>&1)
expect_match "alice cannot read team-b's pod" 'pods "secret-pod" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"' "$out"
check "alice lists team-a's pods" kalice get pods -n team-a
out=$(kalice get clusterroles 2>&1)
expect_match "alice cannot list clusterroles" 'User "alice" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope' "$out"
out=$(kbob create -f "$E2E_TMP/job.yaml" -n team-a --dry-run=server 2>&1)
expect_match "bob (view) cannot create jobs" 'User "bob" cannot create resource "pytorchjobs"' "$out"
check "bob (view) reads jobs" kbob get pytorchjobs -n team-a
out=$(kbob get secrets -n team-a 2>&1)
expect_match "bob (view) cannot read secrets" 'User "bob" cannot list resource "secrets"' "$out"
check "alice (edit) reads secrets" kalice get secrets -n team-a

# ---- auth can-i, can-i --list, whoami ----
expect_eq "can-i create pytorchjobs in team-a" "yes" "$(kalice auth can-i create pytorchjobs -n team-a 2>&1)"
expect_eq "can-i create pytorchjobs in team-b" "no" "$(kalice auth can-i create pytorchjobs -n team-b 2>&1)"
expect_eq "can-i get pods/log in team-b" "no" "$(kalice auth can-i get pods --subresource=log -n team-b 2>&1)"
expect_eq "can-i get pods/log in team-a" "yes" "$(kalice auth can-i get pods --subresource=log -n team-a 2>&1)"
expect_eq "admin can-i anything" "yes" "$(kadmin auth can-i '*' '*' 2>&1)"
expect_eq "can-i as another user (--as)" "no" "$(kadmin auth can-i create pytorchjobs -n team-b --as alice 2>&1)"
out=$(kalice auth can-i --list -n team-a 2>&1)
expect_match "can-i --list names pytorchjobs" 'pytorchjobs.kubeflow.org +\[\] +\[\] +\[create delete' "$out"
out=$(kalice auth whoami 2>&1)
expect_match "whoami user" 'Username +alice' "$out"
expect_match "whoami groups" 'Groups +\[team-a-devs system:authenticated\]' "$out"

# ---- impersonation ----
out=$(kadmin --as alice get pods -n team-b 2>&1)
expect_eq "admin --as alice is alice" 'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"' "$out"
check "admin --as alice reads team-a" kadmin --as alice get pods -n team-a
expect_match "whoami --as" 'Username +alice' "$(kadmin --as alice auth whoami 2>&1)"
out=$(kadmin --as alice --as-uid uid-42 --as-group g1 auth whoami 2>&1)
expect_match "whoami --as-uid" 'UID +uid-42' "$out"
expect_match "whoami --as-group" 'Groups +\[g1 system:authenticated\]' "$out"
out=$(kalice --as bob get pods -n team-a 2>&1)
expect_eq "alice may not impersonate" 'Error from server (Forbidden): users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope' "$out"
kadmin create rolebinding auditors-view --clusterrole=view --group=auditors -n team-b >/dev/null
check "--as-group grants the group's bindings" kadmin --as carol --as-group auditors get pods -n team-b
out=$(kadmin --as carol get pods -n team-b 2>&1)
expect_match "--as without the group is refused" 'User "carol" cannot list' "$out"

# ---- validation ----
out=$(printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: bad}\nrules: [{apiGroups: [""], resources: [pods]}]\n' | kadmin apply -n team-a -f - 2>&1)
expect_match "rules need verbs" 'Role "bad" is invalid: rules\[0\].verbs: Required value: verbs must contain at least one value' "$out"
out=$(printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: bad}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Thing, name: x}\nsubjects: [{kind: Robot, name: r}]\n' | kadmin apply -n team-a -f - 2>&1)
expect_match "roleRef kind" 'roleRef.kind: Unsupported value: "Thing": supported values: "Role", "ClusterRole"' "$out"
expect_match "subject kind" 'subjects\[0\].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"' "$out"
out=$(kadmin patch rolebinding alice-edit -n team-a --type=merge -p '{"roleRef":{"name":"admin"}}' 2>&1)
expect_match "roleRef is immutable" 'roleRef: Invalid value: rbac.RoleRef\{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"admin"\}: cannot change roleRef' "$out"

# ---- a role of one's own: rules, resourceNames, subresources ----
cat <<'EOF' | kadmin apply -n team-b -f - >/dev/null
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: one-pod}
rules:
- {apiGroups: [""], resources: [pods], resourceNames: [secret-pod], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-one-pod}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: one-pod}
subjects: [{kind: User, name: bob}]
EOF
check "bob gets the named pod at once" kbob get pod secret-pod -n team-b
out=$(kbob get pods -n team-b 2>&1)
expect_match "resourceNames do not grant list" 'User "bob" cannot list' "$out"
out=$(kbob logs secret-pod -n team-b 2>&1)
expect_match "pods does not grant pods/log" 'User "bob" cannot get resource "pods/log"' "$out"
kadmin delete rolebinding bob-one-pod -n team-b >/dev/null
out=$(kbob get pod secret-pod -n team-b 2>&1)
expect_match "a deleted binding grants nothing at once" 'User "bob" cannot get resource "pods"' "$out"
printf 'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: dangling}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: no-such-role}\nsubjects: [{kind: User, name: bob}]\n' |
    kadmin apply -n team-b -f - >/dev/null
out=$(kbob get pods -n team-b 2>&1)
expect_match "missing role named in the 403" 'in the namespace "team-b": RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found' "$out"

# ---- escalation: team-a's admin grants what it holds, no more ----
kadmin create rolebinding dana-admin --clusterrole=admin --user=dana -n team-a >/dev/null
check "admin of team-a binds edit there" \
    kdana create rolebinding eve-edit --clusterrole=edit --user=eve -n team-a
out=$(kdana create rolebinding eve-root --clusterrole=cluster-admin --user=eve -n team-a 2>&1)
expect_match "admin of team-a cannot bind cluster-admin" 'rolebindings.rbac.authorization.k8s.io "eve-root" is forbidden: user "dana" \(groups=\["team-leads" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held' "$out"
out=$(kdana create role all-pods --verb='*' --resource=pods -n team-a 2>&1)
expect_match "admin of team-a cannot write a role beyond its own" 'is attempting to grant RBAC permissions not currently held' "$out"
check "admin of team-a writes a role within its own" \
    kdana create role read-pods --verb=get,list --resource=pods -n team-a
expect_match "roles print NAME and CREATED AT" '^read-pods +[0-9]{4}-[0-9]{2}-[0-9]{2}T' \
    "$(kadmin get roles -n team-a 2>&1)"
out=$(kadmin describe rolebinding eve-edit -n team-a 2>&1)
expect_match "describe rolebinding" 'Kind: +ClusterRole' "$out"
expect_match "describe rolebinding subjects" 'User +eve' "$out"
out=$(kdana create rolebinding eve-edit --clusterrole=edit --user=eve -n team-b 2>&1)
expect_match "admin of team-a has nothing in team-b" 'User "dana" cannot create resource "rolebindings"' "$out"

# ---- who created the job ----
expect_eq "created-by is the creator, not the forged value" "alice" \
    "$(kadmin get pytorchjob rbac-job -n team-a -o jsonpath='{.metadata.annotations.trainyard\.io/created-by}')"
kalice annotate pytorchjob rbac-job -n team-a --overwrite trainyard.io/created-by=bob >/dev/null 2>&1
expect_eq "created-by survives an update" "alice" \
    "$(kadmin get pytorchjob rbac-job -n team-a -o jsonpath='{.metadata.annotations.trainyard\.io/created-by}')"
kalice annotate pytorchjob rbac-job -n team-a trainyard.io/created-by- >/dev/null 2>&1
expect_eq "created-by cannot be removed" "alice" \
    "$(kadmin get pytorchjob rbac-job -n team-a -o jsonpath='{.metadata.annotations.trainyard\.io/created-by}')"
out=$(kadmin describe pytorchjob rbac-job -n team-a 2>&1)
expect_match "kubectl describe shows the annotation" 'trainyard.io/created-by: alice' "$out"

# ---- the Python client ----
out=$(URL="$URL" /usr/bin/python3 - <<'EOF' 2>&1
import json, os
from kubernetes import client
c = client.Configuration()
c.host = os.environ["URL"]
c.verify_ssl = False
c.api_key = {"authorization": "t1010-alice-token"}
c.api_key_prefix = {"authorization": "Bearer"}
import urllib3; urllib3.disable_warnings()
api = client.CoreV1Api(client.ApiClient(c))
print("team-a pods:", len(api.list_namespaced_pod("team-a").items))
try:
    api.read_namespaced_pod_log("secret-pod", "team-b")
except client.ApiException as e:
    b = json.loads(e.body)
    print("log:", e.status, b["reason"], b["message"], json.dumps(b["details"], sort_keys=True))
az = client.AuthorizationV1Api(client.ApiClient(c))
r = az.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
    spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
        namespace="team-b", verb="create", group="kubeflow.org", resource="pytorchjobs"))))
print("ssar:", r.status.allowed)
EOF
)
expect_match "python: alice lists team-a pods" 'team-a pods: [0-9]+' "$out"
expect_match "python: pods/log in team-b is 403" 'log: 403 Forbidden pods "secret-pod" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "team-b" \{"kind": "pods", "name": "secret-pod"\}' "$out"
expect_match "python: SelfSubjectAccessReview" 'ssar: False' "$out"

# ---- anonymous and bad tokens never reach RBAC ----
out=$(kubectl --server "$URL" --insecure-skip-tls-verify --token bogus get pods 2>&1)
expect_match "a bogus token is 401" 'Unauthorized|provide credentials' "$out"

# ---- the record outlives a restart; trainyard describe shows it ----
# (restarted without this test's token file: the trainyard CLI talks to the
# server as start_server's kubeconfig says, whatever authentication is on)
[ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
PROXY_PID=""
stop_server
start_server
out=$("$TRAINYARD" describe -n team-a pytorchjob rbac-job 2>&1)
expect_match "trainyard describe shows Created By" 'Created By: +alice' "$out"

finish
