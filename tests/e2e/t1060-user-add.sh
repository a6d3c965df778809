#!/usr/bin/env bash
# `trainyard user add|list|remove`: a colleague's access in one step — a
# namespace, a RoleBinding of edit there, a ResourceQuota, a token the server
# takes within a second, and a kubeconfig that works with the real kubectl
# (TLS, the CA) — and taking the token away again.
. "$(dirname "$0")/lib.sh"
DATA=$E2E_TMP/data
start_server --no-local-node --sim-nodes 1x4
U() { "$TRAINYARD" user "$@" --data-dir "$DATA"; }
ka() { kubectl --request-timeout=20s --kubeconfig="$E2E_TMP/alice.kc" "$@"; }

check "user add alice with a quota" \
    U add alice --quota requests.nvidia.com/gpu=2,pods=10 -o "$E2E_TMP/alice.kc"
expect_eq "the kubeconfig is the user's alone (0600)" "600" "$(stat -c %a "$E2E_TMP/alice.kc")"
expect_match "whoami: alice" 'Username +alice' "$(ka auth whoami 2>&1)"
expect_eq "the kubeconfig's namespace is hers" "alice" \
    "$(kubectl --kubeconfig="$E2E_TMP/alice.kc" config view --minify -o jsonpath='{..namespace}')"
check "she lists pods in her namespace" ka get pods
expect_match "... and is forbidden in default" \
    'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"' \
    "$(ka get pods -n default 2>&1)"
# trainyard's commands, like kubectl, use the kubeconfig's namespace when
# given no -n (they used "default", where she may read nothing).
check "trainyard get pods with her kubeconfig and no -n" \
    "$TRAINYARD" get pods --kubeconfig "$E2E_TMP/alice.kc"
check "trainyard list with her kubeconfig and no -n" \
    "$TRAINYARD" list --kubeconfig "$E2E_TMP/alice.kc"
expect_match "... and -n still wins" 'forbidden' \
    "$("$TRAINYARD" get pods -n default --kubeconfig "$E2E_TMP/alice.kc" 2>&1)"
expect_match "describe quota shows her limits" 'requests\.nvidia\.com/gpu +0 +2' \
    "$(ka describe quota 2>&1)"
expect_eq "she cannot raise her own quota" "no" "$(ka auth can-i update resourcequotas 2>/dev/null)"
expect_eq "she may create PyTorchJobs" "yes" "$(ka auth can-i create pytorchjobs.kubeflow.org 2>/dev/null)"
# The system priority classes preempt everyone's pods: a tenant's pod may
# name one only where an admin's quota covers it (GKE's rule; kube-system
# has such a quota from the start).
crit_pod() { # NAME CLASS
    ka apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  priorityClassName: $2
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: ["true"]}]
YAML
}
expect_match "her pod of system-cluster-critical is refused" \
    'pods "crit" is forbidden: insufficient quota to match these scopes: \[\{PriorityClass In \[system-node-critical system-cluster-critical\]\}\]' \
    "$(crit_pod crit system-cluster-critical)"
expect_match "... and one of system-node-critical" 'pods "crit" is forbidden: insufficient quota' \
    "$(crit_pod crit system-node-critical)"
expect_match "kube-system has the quota that allows them" 'system-critical-pods' \
    "$(kubectl get quota -n kube-system 2>&1)"
kubectl apply -n alice -f - >/dev/null <<YAML
apiVersion: v1
kind: ResourceQuota
metadata: {name: critical}
spec:
  hard: {pods: 2}
  scopeSelector:
    matchExpressions: [{scopeName: PriorityClass, operator: In, values: [system-cluster-critical]}]
YAML
expect_match "once the admin's quota covers the class, she may" 'pod/crit created' \
    "$(crit_pod crit system-cluster-critical)"
expect_eq "... with its priority" "2000000000" "$(ka get pod crit -o jsonpath='{.spec.priority}')"
expect_match "... that class only" 'pods "crit2" is forbidden: insufficient quota' \
    "$(crit_pod crit2 system-node-critical)"
expect_match "user list names her, without her token" '^alice' "$(U list)"
expect_eq "... and no token is printed" "0" "$(U list | grep -c '[0-9a-f]\{64\}')"

U add alice >"$E2E_TMP/again.out" 2>&1
expect_eq "adding her twice is refused" "1" "$?"
expect_match "... saying why" 'already has a token' "$(cat "$E2E_TMP/again.out")"
U add 'Bad,Name' >"$E2E_TMP/bad.out" 2>&1
expect_eq "a name that breaks the token file: usage error" "2" "$?"
U add system:evil >/dev/null 2>&1
expect_eq "system: names are not users' to take" "2" "$?"
U add bob --quota 'gpus' >/dev/null 2>&1
expect_eq "a malformed --quota: usage error, nothing made" "2" "$?"
expect_eq "... no token for bob" "" "$(U list | grep '^bob')"

check "a team member in a shared namespace, role view" \
    U add carol --namespace alice --role view --group team-a -o "$E2E_TMP/carol.kc"
expect_eq "carol may read alice's namespace" "yes" \
    "$(kubectl --kubeconfig="$E2E_TMP/carol.kc" auth can-i list pods 2>/dev/null)"
expect_eq "... but not create there" "no" \
    "$(kubectl --kubeconfig="$E2E_TMP/carol.kc" auth can-i create pods 2>/dev/null)"
expect_match "... and her group is on her token" 'team-a' \
    "$(kubectl --kubeconfig="$E2E_TMP/carol.kc" auth whoami 2>&1)"

check "user remove alice" U remove alice
# (kubectl words a 401 as "Unauthorized" or "asked for the client to provide credentials")
# (kubectl's own exit is non-zero then: a pipe would fail under pipefail)
gone() { local out; out=$(ka get pods 2>&1); grep -Eq 'Unauthorized|provide credentials' <<<"$out"; }
check "her token stops working" wait_until gone
check "her namespace stays" kubectl get namespace alice
U remove admin >/dev/null 2>&1
expect_eq "the admin's token cannot be removed" "2" "$?"
check "the admin still works" kubectl get pods

finish
