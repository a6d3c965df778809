#!/usr/bin/env bash
# A TrainJob on torch-distributed runs a real torchrun DDP job (gloo, 2
# nodes) to Complete: pods named and labelled as JobSet's, found by the
# Python SDK's selector and container name, PET_* injected, a headless
# Service and a gang PodGroup, jobsStatus, Events; kubectl and the Python
# client list, get, watch and delete TrainJobs; deletion takes the pods.
cd "$(dirname "$0")"
source ./lib.sh
EX=../../examples/trainer
start_server

check "apply the torch example" kubectl apply -f "$EX/torch-distributed.yaml"
state=$(wait_tj torch-ddp Complete 240)
expect_eq "torch TrainJob completes" Complete "$state"
[ "$state" = Complete ] || dump_job trainjob torch-ddp

out=$(kubectl get pods -l 'jobset.sigs.k8s.io/jobset-name=torch-ddp,jobset.sigs.k8s.io/replicatedjob-name in (dataset-initializer,model-initializer,launcher,node)' \
    -o jsonpath='{range .items[*]}{.metadata.name} {.spec.hostname}.{.spec.subdomain} {.metadata.labels.batch\.kubernetes\.io/job-completion-index} {.spec.containers[0].name}{"\n"}{end}' 2>&1)
expect_eq "the SDK's selector finds the node pods, named as JobSet's" \
    "torch-ddp-node-0-0 torch-ddp-node-0-0.torch-ddp 0 node
torch-ddp-node-0-1 torch-ddp-node-0-1.torch-ddp 1 node" "$out"
log0=$(kubectl logs torch-ddp-node-0-0 -c node 2>&1)
log1=$(kubectl logs torch-ddp-node-0-1 -c node 2>&1)
expect_match "rank 0 of 2 trains" 'rank 0/2 step 59' "$log0"
expect_match "rank 1 of 2 trains" 'rank 1/2 step 59' "$log1"
w0=$(sed -n 's/.*final weights/w/p' <<<"$log0"); w1=$(sed -n 's/.*final weights/w/p' <<<"$log1")
if [ -n "$w0" ] && [ "$w0" = "$w1" ]; then pass "both ranks agree on the final weights"; else fail "ranks disagree: '$w0' / '$w1'"; fi
env1=$(kubectl get pod torch-ddp-node-0-1 -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value} {end}')
expect_match "PET_* injected" 'PET_NNODES=2 PET_NPROC_PER_NODE=1 PET_NODE_RANK=1 PET_MASTER_ADDR=torch-ddp-node-0-0.torch-ddp PET_MASTER_PORT=29500' "$env1"
expect_eq "the node container exposes the trainer port" 29500 \
    "$(kubectl get pod torch-ddp-node-0-1 -o jsonpath='{.spec.containers[0].ports[0].containerPort}')"
expect_eq "pod labels: jobset, replicated job, job index, trainjob" "torch-ddp node 0 torch-ddp torch-ddp-node-0" \
    "$(kubectl get pod torch-ddp-node-0-1 -o jsonpath='{.metadata.labels.jobset\.sigs\.k8s\.io/jobset-name} {.metadata.labels.jobset\.sigs\.k8s\.io/replicatedjob-name} {.metadata.labels.jobset\.sigs\.k8s\.io/job-index} {.metadata.labels.trainer\.kubeflow\.org/trainjob-name} {.metadata.labels.batch\.kubernetes\.io/job-name}')"
expect_eq "completion index annotation" 1 \
    "$(kubectl get pod torch-ddp-node-0-1 -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}')"
expect_eq "owned by the TrainJob" "TrainJob torch-ddp true" \
    "$(kubectl get pod torch-ddp-node-0-0 -o jsonpath='{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}')"
expect_eq "headless Service named after the job" "None" \
    "$(kubectl get service torch-ddp -o jsonpath='{.spec.clusterIP}' 2>&1)"
expect_eq "gang: PodGroup of both pods" "2 default" \
    "$(kubectl get podgroups.scheduling.volcano.sh torch-ddp -o jsonpath='{.spec.minMember} {.spec.queue}' 2>&1)"
expect_eq "jobsStatus: node succeeded" "node 1 0 0" \
    "$(kubectl get trainjob torch-ddp -o jsonpath='{.status.jobsStatus[0].name} {.status.jobsStatus[0].succeeded} {.status.jobsStatus[0].failed} {.status.jobsStatus[0].active}')"
expect_eq "no Running condition; Complete with JobSet's reason" "Complete True AllJobsCompleted" \
    "$(kubectl get trainjob torch-ddp -o jsonpath='{range .status.conditions[*]}{.type} {.status} {.reason}{end}')"
expect_match "STATE column" '^torch-ddp +Complete ' "$(kubectl get trainjob torch-ddp --no-headers)"
expect_match "the runtime snapshot is kept" '"name":"torch-distributed"' \
    "$(kubectl get trainjob torch-ddp -o jsonpath='{.metadata.annotations.trainyard\.io/runtime-snapshot}')"
expect_match "events on the job" 'SuccessfulCreatePod' \
    "$(kubectl get events --field-selector involvedObject.name=torch-ddp 2>&1)"

# ---- kubectl: list, get, watch ----
expect_match "kubectl lists TrainJobs" '^torch-ddp +Complete ' "$(kubectl get trainjobs --no-headers 2>&1)"
# (ended once its first event is out, however long kubectl takes to get there)
kubectl get trainjobs --watch --output-watch-events --no-headers >"$E2E_TMP/watch.out" 2>&1 &
wpid=$!
wait_until file_has "$E2E_TMP/watch.out" '^ADDED '
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
expect_match "kubectl watches TrainJobs" '^ADDED +torch-ddp +Complete' "$(cat "$E2E_TMP/watch.out")"

# ---- the Python client: list, get, watch, delete ----
py=$(/usr/bin/python3 - "$KUBECONFIG" <<'PY' 2>&1
import sys
from kubernetes import client, config, watch
config.load_kube_config(sys.argv[1])
api = client.CustomObjectsApi()
g, v, p = "trainer.kubeflow.org", "v1alpha1", "trainjobs"
names = [o["metadata"]["name"] for o in api.list_namespaced_custom_object(g, v, "default", p)["items"]]
print("list", names)
o = api.get_namespaced_custom_object(g, v, "default", p, "torch-ddp")
print("get", o["status"]["conditions"][-1]["type"])
w = watch.Watch()
for ev in w.stream(api.list_namespaced_custom_object, g, v, "default", p, timeout_seconds=5):
    print("watch", ev["type"], ev["object"]["metadata"]["name"]); w.stop(); break
core = client.CoreV1Api()
pods = core.list_namespaced_pod("default", label_selector="jobset.sigs.k8s.io/jobset-name=torch-ddp")
print("sdk pods", sorted(p.metadata.name for p in pods.items))
api.delete_namespaced_custom_object(g, v, "default", p, "torch-ddp")
print("deleted")
PY
)
expect_match "python: list" "list \['torch-ddp'\]" "$py"
expect_match "python: get" "get Complete" "$py"
expect_match "python: watch" "watch ADDED torch-ddp" "$py"
expect_match "python: pods by the SDK's selector" "sdk pods \['torch-ddp-node-0-0', 'torch-ddp-node-0-1'\]" "$py"
expect_match "python: delete" "deleted" "$py"
gone() { [ "$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=torch-ddp --no-headers 2>/dev/null | wc -l)" = 0 ]; }
if wait_until 60 gone; then pass "deleting the TrainJob takes its pods (garbage collector)"; else fail "pods left after delete"; fi
finish
