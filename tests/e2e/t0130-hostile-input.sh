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

finish
