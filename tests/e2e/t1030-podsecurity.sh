#!/usr/bin/env bash
# Pod Security admission and the namespaces' id blocks, with the real
# kubectl: a namespace without labels is baseline (hostPath, host
# namespaces refused with upstream's message), the admin labels one
# privileged; every namespace gets its own uid block (OpenShift's
# annotations), which the server keeps; a pod that names no user runs as
# its namespace's first uid; runAsUser 0 is refused outside a privileged
# namespace; a job's pods meet the same rules and the job's events say why.
. "$(dirname "$0")/lib.sh"
start_server
k() { kubectl --request-timeout=20s "$@"; }
range() { k get ns "$1" -o jsonpath='{.metadata.annotations.openshift\.io/sa\.scc\.uid-range}'; }

hostpath_pod() { # hostpath_pod NAMESPACE
    k apply -n "$1" -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: hp}
spec:
  containers:
  - {name: main, image: busybox, command: [sleep, "600"], volumeMounts: [{name: data, mountPath: /data}]}
  volumes:
  - {name: data, hostPath: {path: /etc}}
YAML
}
root_pod() { # root_pod NAMESPACE
    k apply -n "$1" -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: root}
spec:
  containers:
  - {name: main, image: busybox, command: [sleep, "600"], securityContext: {runAsUser: 0}}
YAML
}

# ---- id blocks ----
k create ns team-a >/dev/null && k create ns team-b >/dev/null
ra=$(range team-a) rb=$(range team-b)
expect_match "a new namespace gets a uid block" '^1[0-9]{9}/10000$' "$ra"
expect_eq "with the same supplemental-groups block" "$ra" \
    "$(k get ns team-a -o jsonpath='{.metadata.annotations.openshift\.io/sa\.scc\.supplemental-groups}')"
check "two namespaces get distinct blocks" test "$ra" != "$rb"
expect_match "default has one from the start" '^1[0-9]{9}/10000$' "$(range default)"
expect_match "kube-system too" '^1[0-9]{9}/10000$' "$(range kube-system)"
out=$(k annotate ns team-a --overwrite openshift.io/sa.scc.uid-range=0/10000 2>&1)
expect_match "the block cannot be changed" \
    'metadata.annotations\[openshift.io/sa.scc.uid-range\]: Invalid value: "0/10000": field is immutable' "$out"
out=$(k apply -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: team-c, annotations: {openshift.io/sa.scc.uid-range: 0/10000}}
YAML
)
expect_match "a block a client writes on create is replaced" '^1[0-9]{9}/10000$' "$(range team-c)"
out=$(k label ns team-c pod-security.kubernetes.io/enforce=strict 2>&1)
expect_match "a bad level label is refused" \
    'metadata.labels\[pod-security.kubernetes.io/enforce\]: Invalid value: "strict": must be one of privileged, baseline, restricted' "$out"

# ---- baseline by default ----
out=$(hostpath_pod team-a)
expect_match "a hostPath pod in an unlabelled namespace is refused, upstream's message" \
    'pods "hp" is forbidden: violates PodSecurity "baseline:latest": hostPath volumes \(volume "data"\)' "$out"
out=$(root_pod team-a)
start=${ra%/*}
expect_match "runAsUser 0 outside a privileged namespace is refused" \
    "pods \"root\" is forbidden: spec.containers\[0\].securityContext.runAsUser: Invalid value: 0: must be in the ranges: \[$start, $((start + 9999))\]" "$out"

k apply -n team-a -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers: [{name: main, image: busybox, command: [sleep, "600"]}]
YAML
expect_eq "a pod without securityContext gets its namespace's first uid, gid and fsGroup" \
    "$start $start $start" \
    "$(k get pod -n team-a plain -o jsonpath='{.spec.securityContext.runAsUser} {.spec.securityContext.runAsGroup} {.spec.securityContext.fsGroup}')"

# ---- the admin's privileged namespace ----
check "the admin labels team-b privileged" \
    k label ns team-b pod-security.kubernetes.io/enforce=privileged
out=$(hostpath_pod team-b)
expect_eq "the same hostPath pod is accepted there" "pod/hp created" "$out"
out=$(root_pod team-b)
expect_eq "and runAsUser 0 when asked for" "pod/root created" "$out"
expect_eq "the uid asked for is kept, the pod's default is the block's" "0 ${rb%/*}" \
    "$(k get pod -n team-b root -o jsonpath='{.spec.containers[0].securityContext.runAsUser} {.spec.securityContext.runAsUser}')"

# ---- restricted, and warnings ----
k create ns team-r >/dev/null
k label ns team-r pod-security.kubernetes.io/enforce=restricted >/dev/null
out=$(k apply -n team-r -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: loose}
spec:
  containers: [{name: main, image: busybox, command: [sleep, "600"]}]
YAML
)
expect_match "restricted wants the hardened fields" \
    'violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "main" must set securityContext.allowPrivilegeEscalation=false\), unrestricted capabilities' "$out"
out=$(k apply -n team-r -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: tight}
spec:
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: main
    image: busybox
    command: [sleep, "600"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
YAML
)
expect_eq "a hardened pod passes restricted" "pod/tight created" "$out"
k label ns team-a pod-security.kubernetes.io/warn=restricted >/dev/null
out=$(k apply -n team-a -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: warned}
spec:
  containers: [{name: main, image: busybox, command: [sleep, "600"]}]
YAML
)
expect_match "the warn level answers with a Warning" \
    'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false' "$out"
expect_match "and the pod is created" 'pod/warned created' "$out"

out=$(k label ns team-a pod-security.kubernetes.io/enforce=restricted 2>&1)
expect_match "making a namespace stricter warns about its existing pods" \
    'Warning: existing pods in namespace "team-a" violate the new PodSecurity enforce level "restricted:latest"' "$out"
expect_match "naming them with the reasons" \
    'Warning: plain \(and 1 other pod\): allowPrivilegeEscalation != false, unrestricted capabilities' "$out"

# ---- a job's pods ----
out=$(k apply -n team-c -f - 2>&1 <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: hostnet}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          hostNetwork: true
          containers:
          - {name: pytorch, image: pytorch, command: [sleep, "1"]}
YAML
)
expect_match "a PyTorchJob whose template breaks baseline is warned about" \
    'Warning: would violate PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\)' "$out"
expect_match "and created" 'pytorchjob.kubeflow.org/hostnet created' "$out"
refused() {
    k get events -n team-c --field-selector involvedObject.name=hostnet 2>&1 |
        grep -q 'FailedCreate.*pods "hostnet-master-0" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'
}
check "its pods are refused and the job's events say why" wait_until refused
expect_eq "no pod was made" "" \
    "$(k get pods -n team-c -l training.kubeflow.org/job-name=hostnet -o name 2>&1)"
expect_match "trainyard get says why it is pending: the refusal, in the API server's words" \
    'Refused: 0 of its 1 pods exist; the last one tried was refused: Error creating Pod hostnet-master-0: pods "hostnet-master-0" is forbidden: violates PodSecurity "baseline:latest"' \
    "$("$TRAINYARD" get pytorchjob/hostnet -n team-c 2>&1)"

# ---- the blocks survive a restart ----
stop_server
start_server
expect_eq "blocks are kept across a restart" "$ra $rb" "$(range team-a) $(range team-b)"
k create ns team-d >/dev/null
rd=$(range team-d)
check "a namespace made after the restart gets a block of its own" \
    sh -c "! kubectl get ns -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.annotations.openshift\.io/sa\.scc\.uid-range}{\"\n\"}{end}' | grep -v '^team-d=' | grep -q '=$rd\$'"
finish
