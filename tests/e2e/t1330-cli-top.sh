#!/usr/bin/env bash
# t1330-cli-top.sh - `trainyard logs JOB` (the default replica, -i, --tail,
# --since; a deleted job's retained log and `logs --deleted`), `trainyard
# top node|job` over fake GPUs (the agent's trainyard.io/gpu-utilization
# annotations on the Node, the pods and the job; fake readings marked) and
# `trainyard queue list|get` (a queue's waiting PodGroups in the scheduler's
# order: priority, then age); then GPUs read through NVML (the test
# double, as t0560): real readings, not marked fake, followed as they move.
. "$(dirname "$0")/lib.sh"
start_server --fake-gpus 2 --node-name top-node --pod-log-retention 10m
k() { kubectl --request-timeout=20s "$@"; }
ty() { "$TRAINYARD" "$@"; }

cat <<'YAML' | k apply -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ptj}
spec:
  runPolicy: {cleanPodPolicy: None}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: pytorch
            image: busybox
            command: [sh, -c, "echo master-1; echo master-2; echo master-3; sleep 600"]
            resources: {limits: {nvidia.com/gpu: 1}}
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: pytorch
            image: busybox
            command: [sh, -c, "echo worker-1; sleep 600"]
            resources: {limits: {nvidia.com/gpu: 1}}
YAML
running() { [ "$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = Running ]; }
check "the master runs" wait_until running ptj-master-0
check "the worker runs" wait_until running ptj-worker-0
logged() { [ "$(ty logs "$@" 2>/dev/null | tail -1)" = "${!#}" ]; }
has_log() { ty logs "$1" "${@:3}" 2>/dev/null | grep -qx -- "$2"; }
check "logs JOB: the master's log" wait_until has_log ptj master-3
expect_eq "logs JOB is the master's whole log" "master-1 master-2 master-3" "$(ty logs ptj | xargs)"
expect_eq "-i picks a replica" "worker-1" "$(ty logs ptj -i ptj-worker-0)"
expect_eq "KIND/NAME" "master-3" "$(ty logs pytorchjob/ptj --tail 1)"
expect_eq "--tail" "master-3" "$(ty logs ptj --tail 1)"
expect_eq "--since 1h: all of it" "master-1 master-2 master-3" "$(ty logs ptj --since 1h | xargs)"
expect_match "--timestamps" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T.* master-3$' "$(ty logs ptj --tail 1 --timestamps)"
expect_match "a bad --since is refused" 'invalid argument "5x" for "--since"' "$(ty logs ptj --since 5x 2>&1)"
expect_match "-i names no replica of the job" 'not a replica of job "ptj"' "$(ty logs ptj -i nope 2>&1)"
expect_eq "logs POD still reads a pod" "worker-1" "$(ty logs ptj-worker-0)"
expect_match "neither pod nor job: kubectl's answer" 'pods? "nosuch" not found|NotFound' "$(ty logs nosuch 2>&1)"

# The agent's readings: fake GPUs read 100 % and 8 GiB of 16 GiB when held.
node_ann() { k get node top-node -o jsonpath='{.metadata.annotations.trainyard\.io/gpu-utilization}'; }
job_ann() { k get pytorchjob ptj -o jsonpath='{.metadata.annotations.trainyard\.io/gpu-utilization}'; }
node_busy() { grep -q '"util":100.*"util":100' <<<"$(node_ann)"; }
check "the node's annotation carries both GPUs' readings" wait_until node_busy
job_sum() { [ "$(job_ann)" = '{"fake":true,"gpus":2,"memTotalMiB":32768,"memUsedMiB":16384,"pods":2,"util":100}' ]; }
check "the job's annotation sums up its pods' GPUs" wait_until job_sum
expect_match "a pod's annotation: its GPU" '^\{"fake":true,"gpus":\[\{"index":[01],"memTotalMiB":16384,"memUsedMiB":8192,"util":100\}\]\}$' \
    "$(k get pod ptj-master-0 -o jsonpath='{.metadata.annotations.trainyard\.io/gpu-utilization}')"
out=$(ty top node)
expect_match "top node: header" '^NAME +GPU-TOTAL +GPU-ALLOC +GPU-BUSY +GPU-UTIL +GPU-MEM\(USED/TOTAL\)$' "$out"
expect_match "top node: total, allocated, busy, util, memory, fake" '^top-node +2 +2 +2 +100% +16Gi/32Gi +\(fake\)$' "$out"
expect_match "top node: the cluster's total line" '^TOTAL +2 +2 +2 +100% +16Gi/32Gi +\(fake\)$' "$out"
expect_match "top node NODE" '^top-node +2 +2 ' "$(ty top node top-node)"
out=$(ty top job)
expect_match "top job: every running GPU job" '^PyTorchJob/ptj +2 +2 +100% +16Gi/32Gi +\(fake\)$' "$out"
expect_match "top job KIND/NAME" '^Job: PyTorchJob/ptj ' "$(ty top job pytorchjob/ptj)"
out=$(ty top job ptj)
expect_match "top job JOB: the job's summary" '^Job: PyTorchJob/ptj +GPUs: 2 +Utilization: 100% +Memory: 16Gi/32Gi +\(fake\)$' "$out"
expect_match "top job JOB: the master's GPU" '^ptj-master-0 +top-node +[01] +100% +8Gi +16Gi +\(fake\)$' "$out"
expect_match "top job JOB: the worker's GPU" '^ptj-worker-0 +top-node +[01] +100% +8Gi +16Gi +\(fake\)$' "$out"
ESC=$(printf '\033')
no_esc() { ! ty top node | grep -q "$ESC"; }
check "no colour on a pipe" no_esc

# A deleted job: its pods' logs stay for --pod-log-retention.
k delete pytorchjob ptj --wait=false >/dev/null
gone() { ! k get pod ptj-master-0 >/dev/null 2>&1 && ! k get pod ptj-worker-0 >/dev/null 2>&1; }
check "the job's pods go" wait_until gone
listed() { ty logs --deleted | grep -Eq '^ptj-master-0 +ptj +master-0 '; }
check "logs --deleted lists the master's retained log with its job" wait_until listed
expect_match "and the worker's" '^ptj-worker-0 +ptj +worker-0 +[0-9TZ:-]+ +pytorch$' "$(ty logs --deleted)"
expect_eq "logs JOB of a deleted job: its master's retained log" "master-1 master-2 master-3" \
    "$(ty logs ptj 2>/dev/null | xargs)"
expect_eq "-i of a deleted job" "worker-1" "$(ty logs ptj -i ptj-worker-0 2>/dev/null)"
expect_match "another namespace's are not listed" 'No retained logs' "$(ty logs --deleted -n kube-system 2>&1)"
# Listing is reading pods/log in the namespace: a tenant reads her own
# namespace's, not default's.
check "user add tina" "$TRAINYARD" user add tina --data-dir "$E2E_TMP/data" -o "$E2E_TMP/tina.kc"
expect_match "a tenant may not list another namespace's deleted logs" \
    'forbidden: User "tina" cannot get resource "pods/log" in API group "" in the namespace "default"' \
    "$(ty logs --deleted -n default --kubeconfig "$E2E_TMP/tina.kc" 2>&1)"
expect_match "nor read the deleted job's log" 'forbidden' \
    "$(ty logs ptj -n default --kubeconfig "$E2E_TMP/tina.kc" 2>&1)"
# Reading pods/log alone lets her read a retained log by name, not list
# the deleted pods' names and labels (that is listing pods).
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: log-reader}
rules: [{apiGroups: [""], resources: [pods/log], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: tina-log-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: log-reader}
subjects: [{kind: User, name: tina}]
YAML
reads() { [ "$(ty logs ptj-master-0 -n default --kubeconfig "$E2E_TMP/tina.kc" 2>/dev/null | xargs)" = "master-1 master-2 master-3" ]; }
check "with pods/log alone she reads a retained log by its pod's name" wait_until reads
expect_match "but may not list the retained logs" \
    'forbidden: User "tina" cannot list resource "pods" in API group "" in the namespace "default"' \
    "$(ty logs --deleted -n default --kubeconfig "$E2E_TMP/tina.kc" 2>&1)"
expect_match "her own namespace's she may list" 'No retained logs of deleted pods in tina' \
    "$(ty logs --deleted -n tina --kubeconfig "$E2E_TMP/tina.kc" 2>&1)"
expect_match "unauthenticated: refused" '"code": ?401|Unauthorized' \
    "$(curl -sk ${E2E_CA:+--cacert "$E2E_CA"} "$SERVER/api/v1/namespaces/default/pods/-/log")"

# A namespace's name given out again: the logs retained from the earlier
# namespace of that name are not the new one's (its new owner must not
# read what the old one's pods printed).
k create namespace reuse >/dev/null
cat <<'YAML' | k apply -n reuse -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: talker}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: [sh, -c, "echo old-owner-secret"]}]
YAML
talked() { [ "$(k get pod talker -n reuse -o jsonpath='{.status.phase}' 2>/dev/null)" = Succeeded ]; }
check "a pod in namespace reuse succeeds" wait_until talked
k delete pod talker -n reuse --wait=true >/dev/null
kept() { ty logs --deleted -n reuse | grep -q '^talker '; }
check "its log is retained once it is deleted" wait_until kept
expect_eq "and read back" "old-owner-secret" "$(ty logs talker -n reuse 2>&1)"
k delete namespace reuse --wait=true >/dev/null
k create namespace reuse >/dev/null
expect_match "a new namespace of that name lists none of the old one's logs" \
    'No retained logs of deleted pods in reuse' "$(ty logs --deleted -n reuse 2>&1)"
expect_match "nor reads them by the pod's name" 'pods "?talker"? not found' \
    "$(ty logs talker -n reuse 2>&1)"

# A Volcano Job: its first task's pod 0 (the task listed first, not the
# first by name).
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  minAvailable: 3
  tasks:
  - name: ps
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 1
        containers: [{name: c, image: busybox, command: [sh, -c, "echo ps-0; sleep 600"]}]
  - name: a-worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 1
        containers: [{name: c, image: busybox, command: [sh, -c, "echo worker; sleep 600"]}]
YAML
check "logs of a Volcano Job: its first task's pod 0" wait_until has_log vj ps-0
check "-i another task's pod" wait_until has_log vj worker -i vj-a-worker-1
k delete vcjob vj --wait=false >/dev/null

# Queues: the waiting PodGroups in the scheduler's order.
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: top-high}
value: 1000
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: tq}
spec: {weight: 2, capability: {nvidia.com/gpu: "4"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg-a}
spec: {queue: tq, minMember: 3, minResources: {nvidia.com/gpu: "64"}}
YAML
sleep 1.1 # creationTimestamp has whole seconds: pg-b and pg-c come later
printf '%s\n' 'apiVersion: scheduling.volcano.sh/v1beta1' 'kind: PodGroup' 'metadata: {name: pg-b}' \
    'spec: {queue: tq, minMember: 2, priorityClassName: top-high, minResources: {nvidia.com/gpu: "64"}}' |
    k apply -f - >/dev/null
printf '%s\n' 'apiVersion: scheduling.volcano.sh/v1beta1' 'kind: PodGroup' 'metadata: {name: pg-c}' \
    'spec: {queue: tq, minMember: 1, minResources: {nvidia.com/gpu: "64"}}' | k apply -f - >/dev/null
pending3() { [ "$(k get queue tq -o jsonpath='{.status.pending}')" = 3 ]; }
check "the scheduler counts the queue's three waiting groups" wait_until pending3
out=$(ty queue list)
expect_match "queue list: header" '^NAME +WEIGHT +STATE +CAP-GPU +DES-GPU +ALLOC-GPU +RUNNING +PENDING +INQUEUE$' "$out"
expect_match "queue list: tq" '^tq +2 +Open +4 +- +- +0 +3 +0$' "$out"
expect_match "queue list: default" '^default +1 +Open ' "$out"
if command -v script >/dev/null; then
    expect_match "on a terminal the state is coloured" "$ESC\\[32mOpen$ESC\\[0m" \
        "$(TRAINYARD="$TRAINYARD" script -qec '"$TRAINYARD" queue list' /dev/null)"
fi
out=$(ty queue get tq)
expect_match "queue get: weight" '^Weight: +2$' "$out"
expect_match "queue get: capability" '^Capability: +nvidia.com/gpu=4$' "$out"
expect_match "queue get: counts" '^Jobs: +Running 0, Pending 3, Inqueue 0' "$out"
expect_eq "queue get: waiting in order (priority, then age)" "pg-b pg-a pg-c" \
    "$(awk '/^Waiting/ {w=1; next} w && $1 ~ /^[0-9]+$/ {print $3}' <<<"$out" | xargs)"
expect_match "queue get: the priority shown" '^ +1 +default +pg-b +- +Pending +1000 +2 ' "$out"
expect_match "queue get of no queue" 'NotFound.*"nope"' "$(ty queue get nope 2>&1)"

# NVML (the double): readings that move, not fake.
DOUBLE="$(dirname "$TRAINYARD")/libnvml_double.so"
[ -f "$DOUBLE" ] || { echo "no $DOUBLE (built with the tests)"; exit 1; }
export TRAINYARD_NVML_LIB="$DOUBLE" NVML_DOUBLE_CONFIG="$E2E_TMP/nvml.conf"
gpus() { printf '%s\n' "$@" >"$NVML_DOUBLE_CONFIG.tmp" && mv "$NVML_DOUBLE_CONFIG.tmp" "$NVML_DOUBLE_CONFIG"; }
gpus "gpu 0 uuid=GPU-t1330-0 util=0 total_mib=81920 used_mib=0" \
     "gpu 1 uuid=GPU-t1330-1 util=0 total_mib=81920 used_mib=0"
stop_server
E2E_DATA=$E2E_TMP/data2 start_server --node-name nvml-node
cat <<'YAML' | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: busybox, command: [sh, -c, "sleep 600"], resources: {limits: {nvidia.com/gpu: 1}}}
YAML
check "the GPU pod runs" wait_until running gpu-pod
gpus "gpu 0 uuid=GPU-t1330-0 util=87 total_mib=81920 used_mib=40960" \
     "gpu 1 uuid=GPU-t1330-1 util=0 total_mib=81920 used_mib=0"
top_shows() { ty top node | grep -Eq "$1"; }
check "top node: NVML readings, not marked fake" \
    wait_until top_shows '^nvml-node +2 +1 +1 +43% +40Gi/160Gi$'
check "the pod's annotation follows its GPU" wait_until eval \
    "k get pod gpu-pod -o jsonpath='{.metadata.annotations.trainyard\.io/gpu-utilization}' | grep -q '\"util\":87'"
gpus "gpu 0 uuid=GPU-t1330-0 util=20 total_mib=81920 used_mib=1024" \
     "gpu 1 uuid=GPU-t1330-1 util=60 total_mib=81920 used_mib=0"
check "top node follows the devices" wait_until top_shows '^nvml-node +2 +1 +2 +40% +1Gi/160Gi$'
finish
