#!/usr/bin/env bash
# Hostile request bodies: what the store could not load again is refused, and
# re-applying a Kubeflow manifest that names a replica type in lower case works.
. "$(dirname "$0")/lib.sh"
start_server
k() { kubectl --request-timeout=20s "$@"; }

# kubectl apply of a PyTorchJob naming `worker:` (lower case, as upstream's
# examples do), twice, then after an edit. The stored key is `Worker`; the
# second apply patches `worker` over it and used to be refused with 422.
cat >"$E2E_TMP/lower.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: lower
spec:
  runPolicy:
    suspend: true
  pytorchReplicaSpecs:
    master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: busybox
            command: ["true"]
    worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: busybox
            command: ["true"]
YAML
expect_eq "apply with lower-case replica keys creates" "pytorchjob.kubeflow.org/lower created" \
    "$(k apply -f "$E2E_TMP/lower.yaml" 2>&1)"
expect_eq "keys stored canonical" "Master Worker" \
    "$(k get pytorchjob lower -o go-template='{{range $k, $v := .spec.pytorchReplicaSpecs}}{{$k}} {{end}}' | sed 's/ $//')"
out=$(k apply -f "$E2E_TMP/lower.yaml" 2>&1)
expect_match "apply of the same file again works" '^pytorchjob.kubeflow.org/lower (unchanged|configured)$' "$out"
sed 's/replicas: 2/replicas: 3/' "$E2E_TMP/lower.yaml" >"$E2E_TMP/lower3.yaml"
expect_eq "apply after an edit configures" "pytorchjob.kubeflow.org/lower configured" \
    "$(k apply -f "$E2E_TMP/lower3.yaml" 2>&1)"
expect_eq "the edit is stored under the canonical key" "3" \
    "$(k get pytorchjob lower -o jsonpath='{.spec.pytorchReplicaSpecs.Worker.replicas}')"
expect_eq "no lower-case key is left" "Master Worker" \
    "$(k get pytorchjob lower -o go-template='{{range $k, $v := .spec.pytorchReplicaSpecs}}{{$k}} {{end}}' | sed 's/ $//')"

# A string holding a NUL byte (YAML's "\0"), which the store could not read
# back: refused with 400 for every way in, and the server still starts.
k create namespace hostile >/dev/null
api="$SERVER/api/v1/namespaces/hostile/configmaps"
code() { kcurl -s -o "$E2E_TMP/resp" -w '%{http_code}' "$@"; }
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nul\n  annotations:\n    a: "a\\0b"\ndata:\n  k: v\n' >"$E2E_TMP/nul.yaml"
expect_eq "YAML create with a NUL in an annotation: 400" "400" \
    "$(code -X POST -H 'Content-Type: application/yaml' --data-binary @"$E2E_TMP/nul.yaml" "$api")"
expect_match "the message names the field" 'cannot be handled as a ConfigMap: metadata.annotations.a: strings may not contain NUL' "$(cat "$E2E_TMP/resp")"
expect_eq "server-side apply (YAML) with a NUL: 400" "400" \
    "$(code -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$E2E_TMP/nul.yaml" "$api/nul?fieldManager=t")"
k -n hostile create configmap ok --from-literal=k=v >/dev/null
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\ndata:\n  k: "x\\0y"\n' >"$E2E_TMP/nul2.yaml"
expect_eq "YAML update with a NUL in a data value: 400" "400" \
    "$(code -X PUT -H 'Content-Type: application/yaml' --data-binary @"$E2E_TMP/nul2.yaml" "$api/ok")"
expect_eq "server-side apply over an existing object with a NUL: 400" "400" \
    "$(code -X PATCH -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$E2E_TMP/nul2.yaml" "$api/ok?fieldManager=t")"
# Budgets: JSON-patch copies (3 MiB, kube-apiserver's) and YAML alias
# expansion (bytes): a 4xx, never a 500 or a server grown by gigabytes.
/usr/bin/python3 - "$api" >"$E2E_TMP/budgets" <<'PY'
import json, os, ssl, sys, urllib.request, urllib.error
api = sys.argv[1]
tls = ssl.create_default_context(cafile=os.environ["E2E_CA"])
def send(method, url, body, ctype):
    req = urllib.request.Request(url, data=body, method=method, headers={
        "Content-Type": ctype, "Authorization": "Bearer " + os.environ["E2E_TOKEN"]})
    try:
        r = urllib.request.urlopen(req, timeout=60, context=tls)
        return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "y" * 65536}}
send("POST", api, json.dumps(cm).encode(), "application/json")
ops = [{"op": "copy", "from": "/data", "path": "/data/b" if i % 2 else "/data/c"} for i in range(22)]
code, body = send("PATCH", api + "/big", json.dumps(ops).encode(), "application/json-patch+json")
print("copy", code, json.loads(body).get("message", ""))
y = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: al\ndata:\n  a0: &s " + "x" * 262144 + "\n"
y += "".join("  a%d: *s\n" % i for i in range(1, 400))
code, body = send("POST", api, y.encode(), "application/yaml")
print("alias", code, json.loads(body).get("message", ""))
PY
expect_match "22 doubling copies on a 64 KiB ConfigMap: 422 with kube-apiserver's words" \
    '^copy 422 Unable to complete the copy, the accumulated size increase of copy is [0-9]+, exceeding the limit 3145728$' \
    "$(grep '^copy' "$E2E_TMP/budgets")"
expect_match "400 YAML aliases of a 256 KiB string: 400" '^alias 400 .*excessive aliasing' \
    "$(grep '^alias' "$E2E_TMP/budgets")"

# Declared types: refused as kube-apiserver refuses them, on create and
# after every patch (the object stays readable by typed clients).
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\ndata:\n  k:\n    x: 1\n' >"$E2E_TMP/typed.yaml"
expect_match "kubectl apply of a ConfigMap with an object in data: 400" \
    'BadRequest.*ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go struct field ConfigMap.data of type string' \
    "$(k -n hostile apply -f "$E2E_TMP/typed.yaml" 2>&1)"
k -n hostile create configmap typed --from-literal=k=v >/dev/null
expect_match "a merge patch making a data value a number: 400" \
    'cannot unmarshal number into Go struct field ConfigMap.data of type string' \
    "$(k -n hostile patch configmap typed --type=merge -p '{"data":{"k":5}}' 2>&1)"
expect_match "a JSON patch making it an array: 400" \
    'cannot unmarshal array into Go struct field ConfigMap.data of type string' \
    "$(k -n hostile patch configmap typed --type=json -p '[{"op":"replace","path":"/data/k","value":[1]}]' 2>&1)"
expect_eq "the stored value is untouched" "v" "$(k -n hostile get configmap typed -o jsonpath='{.data.k}')"
sed 's/command: \["true"\]/command: {x: y}/' "$E2E_TMP/lower.yaml" | sed 's/name: lower/name: typedjob/' >"$E2E_TMP/typedjob.yaml"
expect_match "a PyTorchJob whose command is an object: 422 naming the field" \
    'spec.pytorchReplicaSpecs.Master.template.spec.containers\[0\].command: Invalid value: "object": .* in body must be of type array: "object"' \
    "$(k -n hostile apply -f "$E2E_TMP/typedjob.yaml" 2>&1)"
expect_match "a finalizer that is no qualified name: 422 naming it" \
    'metadata.finalizers\[0\]: Invalid value: "bad finalizer!"' \
    "$(k -n hostile patch configmap typed --type=json -p '[{"op":"add","path":"/metadata/finalizers","value":["bad finalizer!"]}]' 2>&1)"

stop_server
start_server
expect_eq "the server starts again" "v" "$(k -n hostile get configmap ok -o jsonpath='{.data.k}')"

# A row the store cannot load (written by an older build, or damaged) and
# two rows for one object (two servers on one data directory): set aside at
# open, the server starts, the rows are listed and counted.
k -n hostile create configmap twice --from-literal=k=old >/dev/null
stop_server
/usr/bin/python3 - "$E2E_TMP/data/trainyard.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE objects SET data = replace(data, '\"k\":\"v\"', '\"k\":\"a\\u0000b\"')"
           " WHERE resource = 'configmaps' AND name = 'ok'")
db.execute("INSERT INTO objects (resource, namespace, name, rv, data)"
           " SELECT resource, namespace, name, rv + 1000, replace(data, '\"old\"', '\"new\"')"
           " FROM objects WHERE resource = 'configmaps' AND name = 'twice'")
db.commit()
PY
start_server
expect_eq "the server starts with a bad row and a duplicate" "new" \
    "$(k -n hostile get configmap twice -o jsonpath='{.data.k}')"
expect_match "the bad row is not served" 'NotFound' "$(k -n hostile get configmap ok 2>&1)"
expect_match "the log says what was set aside" 'set aside, not loaded: configmaps hostile/ok' "$(cat "$E2E_TMP/server.err")"
out=$("$TRAINYARD" store quarantine --data-dir "$E2E_TMP/data")
expect_match "store quarantine lists the bad row" 'configmaps hostile/ok .*NUL' "$out"
expect_match "store quarantine lists the older duplicate" 'configmaps hostile/twice .*newer and was kept' "$out"
expect_match "/metrics counts them" '^trainyard_store_quarantined_rows 2$' "$(kcurl -s "$SERVER/metrics")"

finish
