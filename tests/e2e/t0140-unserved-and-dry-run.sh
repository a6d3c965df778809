#!/usr/bin/env bash
# kubectl's answer for a kind the server does not serve (it needs /openapi/v2
# to get that far), and server-side dry runs that fail as the real write does.
. "$(dirname "$0")/lib.sh"
start_server
k() { kubectl --request-timeout=20s "$@"; }

# An unserved kind: kubectl falls back from /openapi/v3 to /openapi/v2
# (protobuf) and, once that answers, looks the kind up and finds nothing.
printf 'apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: x\n' >"$E2E_TMP/foo.yaml"
out=$(k apply -f "$E2E_TMP/foo.yaml" 2>&1)
expect_match "apply of an unserved kind: no matches for kind" \
    'no matches for kind "Foo" in version "example.com/v1"' "$out"
expect_eq "... and no validation error" "" "$(printf '%s' "$out" | grep -i 'validat')"
out=$(kcurl -s -H 'Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf' \
    -o /dev/null -w '%{http_code} %{content_type}' "$SERVER/openapi/v2")
expect_eq "/openapi/v2 answers protobuf when asked" \
    "200 application/com.github.proto-openapi.spec.v2.v1.0+protobuf" "$out"
out=$(kcurl -s "$SERVER/openapi/v2" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["swagger"], d["paths"]["/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs/{name}"]["patch"]["x-kubernetes-group-version-kind"]["kind"])')
expect_eq "/openapi/v2 answers JSON otherwise" "2.0 PyTorchJob" "$out"
# A served kind is still validated by the server (strict), not refused by kubectl.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\ndata:\n  a: "1"\n' >"$E2E_TMP/ok.yaml"
expect_eq "a served kind applies" "configmap/ok created" "$(k apply -f "$E2E_TMP/ok.yaml" 2>&1)"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\nbogus: 1\n' >"$E2E_TMP/bad.yaml"
expect_match "an unknown field is still refused" 'unknown field "bogus"' \
    "$(k apply -f "$E2E_TMP/bad.yaml" 2>&1)"
printf 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: l1\n  data:\n    a: "1"\n' >"$E2E_TMP/list.yaml"
expect_eq "a kind: List applies" "configmap/l1 created" "$(k apply -f "$E2E_TMP/list.yaml" 2>&1)"

# Dry runs: a stale resourceVersion is a conflict, as the write would be.
k create configmap c1 --from-literal=a=1 >/dev/null
k get configmap c1 -o yaml >"$E2E_TMP/c1.yaml"
k annotate configmap c1 touched=yes >/dev/null
rv=$(k get configmap c1 -o jsonpath='{.metadata.resourceVersion}')
out=$(k patch configmap c1 --dry-run=server -p '{"metadata":{"resourceVersion":"1"},"data":{"a":"2"}}' 2>&1)
expect_match "patch --dry-run=server with a stale resourceVersion: Conflict" \
    'Conflict.*the object has been modified' "$out"
out=$(k apply --dry-run=server -f "$E2E_TMP/c1.yaml" 2>&1)
expect_match "apply --dry-run=server of a stale manifest: Conflict" \
    'cannot be fulfilled on configmaps "c1": the object has been modified' "$out"
out=$(k patch configmap c1 --dry-run=server -p '{"data":{"a":"3"}}' \
    -o jsonpath='{.data.a} {.metadata.resourceVersion}' 2>&1)
expect_eq "a good dry-run patch answers the result, resourceVersion unchanged" "3 $rv" "$out"
expect_eq "... and writes nothing" "1" "$(k get configmap c1 -o jsonpath='{.data.a}')"
out=$(k create configmap c1 --from-literal=a=1 --dry-run=server 2>&1)
expect_match "create --dry-run=server of a taken name: AlreadyExists" 'configmaps "c1" already exists' "$out"
expect_eq "create --dry-run=server of a free name" "configmap/c2 created (server dry run)" \
    "$(k create configmap c2 --from-literal=a=1 --dry-run=server 2>&1)"

finish
