#!/usr/bin/env bash
# coordination.k8s.io/v1 Lease, what `trainyard operator` replicas elect a
# leader with: kubectl create/get/patch/delete, kube-apiserver's columns
# (NAME HOLDER AGE), MicroTime stored in UTC with six digits, invalid leases
# refused with kube-apiserver's wording and field paths, strict field
# validation, the Python client's CoordinationV1Api reading and writing
# one, and who may touch them (not a namespace admin; an operator's role).
. "$(dirname "$0")/lib.sh"

start_server

expect_match "discovery lists leases" \
    '^leases +coordination.k8s.io/v1 +true +Lease$' \
    "$(kubectl api-resources --api-group=coordination.k8s.io 2>&1)"

out=$(kubectl create -f - 2>&1 <<'YAML'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: trainyard-operator, namespace: default}
spec:
  holderIdentity: host-a_42-0badcafe
  leaseDurationSeconds: 15
  acquireTime: "2026-11-28T16:00:00.123456+01:00"
  renewTime: "2026-11-28T15:00:02.000001Z"
  leaseTransitions: 0
YAML
)
expect_match "kubectl create -f a lease" 'lease.coordination.k8s.io/trainyard-operator created' "$out"
out=$(kubectl get leases 2>&1)
expect_match "kubectl get leases: kube's columns" '^NAME +HOLDER +AGE$' "$out"
expect_match "kubectl get leases: the holder" '^trainyard-operator +host-a_42-0badcafe +[0-9]+[smh]' "$out"
expect_eq "acquireTime stored in UTC" "2026-11-28T15:00:00.123456Z" \
    "$(kubectl get lease trainyard-operator -o jsonpath='{.spec.acquireTime}')"
expect_eq "renewTime kept to the microsecond" "2026-11-28T15:00:02.000001Z" \
    "$(kubectl get lease trainyard-operator -o jsonpath='{.spec.renewTime}')"

out=$(kubectl patch lease trainyard-operator --type merge \
    -p '{"spec":{"holderIdentity":"host-b_7-00c0ffee","leaseTransitions":1,"renewTime":"2026-11-28T15:00:20.000000Z"}}' 2>&1)
expect_match "kubectl patch (merge) a lease" 'lease.coordination.k8s.io/trainyard-operator patched' "$out"
kubectl patch lease trainyard-operator -p '{"spec":{"leaseDurationSeconds":20}}' >/dev/null 2>&1
expect_eq "kubectl patch (strategic) a lease" "host-b_7-00c0ffee 1 20" \
    "$(kubectl get lease trainyard-operator -o jsonpath='{.spec.holderIdentity} {.spec.leaseTransitions} {.spec.leaseDurationSeconds}')"

# ---- invalid leases: kube-apiserver's words and paths
out=$(kubectl patch lease trainyard-operator --type merge -p '{"spec":{"leaseTransitions":-1}}' 2>&1)
expect_match "leaseTransitions < 0" \
    'The Lease "trainyard-operator" is invalid: spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0' "$out"
bad() { # name spec-yaml
    kubectl create -f - 2>&1 <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $1, namespace: default}
spec: $2
YAML
}
expect_match "leaseDurationSeconds 0" \
    'The Lease "bad1" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0' \
    "$(bad bad1 '{leaseDurationSeconds: 0}')"
expect_match "preferredHolder without strategy" \
    'The Lease "bad2" is invalid: spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined' \
    "$(bad bad2 '{preferredHolder: host-b}')"
expect_match "an unknown strategy" \
    'spec.strategy.strategy: Unsupported value: "Youngest": supported values: "OldestEmulationVersion"' \
    "$(bad bad3 '{strategy: Youngest}')"
expect_match "renewTime without six digits of fraction" \
    'The Lease "bad4" is invalid: spec.renewTime: Invalid value: "2026-11-28T15:00:00Z": must be an RFC 3339 time with six digits of fraction' \
    "$(bad bad4 '{renewTime: "2026-11-28T15:00:00Z"}')"
expect_match "an unknown field (strict)" 'unknown field "spec.holder"' \
    "$(bad bad5 '{holder: x}')"
expect_match "a mistyped field is decoding's 400" \
    'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32' \
    "$(bad bad6 '{leaseDurationSeconds: "15"}')"
expect_eq "none of the invalid ones was stored" "trainyard-operator" \
    "$(kubectl get leases -o name | sed 's|.*/||' | tr '\n' ' ' | sed 's/ $//')"

# ---- the Python client
out=$(/usr/bin/python3 - 2>&1 <<'PY'
import datetime
from kubernetes import client, config
config.load_kube_config()
api = client.CoordinationV1Api()
l = api.read_namespaced_lease("trainyard-operator", "default")
print("read:", l.spec.holder_identity, l.spec.lease_transitions, l.spec.renew_time.isoformat())
t = datetime.datetime(2026, 11, 28, 15, 1, 2, 345678, tzinfo=datetime.timezone.utc)
body = client.V1Lease(metadata=client.V1ObjectMeta(name="py-lease"),
                      spec=client.V1LeaseSpec(holder_identity="py", lease_duration_seconds=15,
                                              acquire_time=t, renew_time=t, lease_transitions=0))
c = api.create_namespaced_lease("default", body)
print("created:", c.spec.holder_identity, c.spec.renew_time.isoformat())
c.spec.holder_identity = ""
c.spec.lease_duration_seconds = 1
r = api.replace_namespaced_lease("py-lease", "default", c)
print("released:", repr(r.spec.holder_identity), r.spec.lease_duration_seconds)
c.spec.holder_identity = "stale"
try:
    api.replace_namespaced_lease("py-lease", "default", c)
    print("stale write: accepted")
except client.ApiException as e:
    print("stale write:", e.status, e.reason)
print("list:", sorted(i.metadata.name for i in api.list_namespaced_lease("default").items))
PY
)
expect_match "python: read a lease" 'read: host-b_7-00c0ffee 1 2026-11-28T15:00:20\+00:00' "$out"
expect_match "python: create one with datetimes" 'created: py 2026-11-28T15:01:02.345678\+00:00' "$out"
expect_match "python: replace (release) it" "released: '' 1" "$out"
expect_match "python: a write with a stale resourceVersion is 409" 'stale write: 409 Conflict' "$out"
expect_match "python: list leases" "list: \['py-lease', 'trainyard-operator'\]" "$out"

# ---- who may touch leases: not a namespace's admin (upstream's admin, edit
# and view grant none); an operator's own role does
kubectl create rolebinding alice-admin -n default --clusterrole=admin --user=alice >/dev/null
expect_eq "a namespace admin may create pods" "yes" \
    "$(kubectl auth can-i create pods -n default --as alice 2>&1)"
for verb in get list create update delete; do
    expect_eq "a namespace admin may not $verb leases" "no" \
        "$(kubectl auth can-i $verb leases.coordination.k8s.io -n default --as alice 2>&1)"
done
expect_match "a namespace admin's get is 403" \
    'leases.coordination.k8s.io "trainyard-operator" is forbidden: User "alice" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "default"' \
    "$(kubectl get lease trainyard-operator -n default --as alice 2>&1)"
kubectl create role elector -n default --verb=get,create,update \
    --resource=leases.coordination.k8s.io >/dev/null
kubectl create rolebinding op-elector -n default --role=elector --user=op >/dev/null
expect_eq "an operator's role lets it update its lease" "yes" \
    "$(kubectl auth can-i update leases.coordination.k8s.io/trainyard-operator -n default --as op 2>&1)"

out=$(kubectl delete lease trainyard-operator py-lease 2>&1)
expect_match "kubectl delete leases" 'lease.coordination.k8s.io "py-lease" deleted' "$out"
expect_eq "no lease left" "" "$(kubectl get leases -o name 2>&1)"

finish
