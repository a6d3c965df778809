#!/usr/bin/env bash
# Kubeflow Trainer v2's API (trainer.kubeflow.org/v1alpha1): the built-in
# ClusterTrainingRuntimes on a fresh server, upstream-shaped TrainJob and
# runtime manifests applied unchanged with kubectl, the printer columns, a
# bad TrainJob refused with its field path, a job naming a missing runtime
# refused, the status subresource, the Python client, and built-ins that an
# admin edited kept across a restart. The server runs API-only (no job
# controllers, in either mode): a job is stored and makes no pods, and the
# status written here is the test's alone. t1410 on run TrainJobs.
cd "$(dirname "$0")"
source ./lib.sh

DATA=../data/trainer
unset E2E_OPERATOR # the API alone: no operator runs the jobs either
start_server --api-only

# ---- discovery and the CRDs ----
out=$(kubectl api-resources --api-group=trainer.kubeflow.org --no-headers 2>&1)
expect_match "discovery lists TrainJob" '^trainjobs +trainer.kubeflow.org/v1alpha1 +true +TrainJob' "$out"
expect_match "discovery lists TrainingRuntime" '^trainingruntimes +trainer.kubeflow.org/v1alpha1 +true +TrainingRuntime' "$out"
expect_match "discovery lists ClusterTrainingRuntime" '^clustertrainingruntimes +trainer.kubeflow.org/v1alpha1 +false +ClusterTrainingRuntime' "$out"
out=$("$TRAINYARD" crds 2>&1 | grep -E '^  name: [a-z]+\.trainer\.kubeflow\.org$' | sort | tr '\n' ' ')
expect_eq "trainyard crds has the three CRDs" \
    "  name: clustertrainingruntimes.trainer.kubeflow.org   name: trainingruntimes.trainer.kubeflow.org   name: trainjobs.trainer.kubeflow.org " "$out"

# ---- the built-in runtimes ----
out=$(kubectl get clustertrainingruntimes -L trainer.kubeflow.org/framework 2>&1)
expect_match "runtimes table: NAME AGE FRAMEWORK" '^NAME +AGE +FRAMEWORK$' "$(head -1 <<<"$out")"
for rt in torch:torch deepspeed:deepspeed mlx:mlx jax:jax xgboost:xgboost tensorflow:tensorflow \
    paddle:paddle mindspore:mindspore mpi:mpi; do
    expect_match "built-in ${rt%%:*}-distributed labelled ${rt#*:}" \
        "^${rt%%:*}-distributed +[0-9a-z]+ +${rt#*:}\$" "$out"
done
expect_eq "nine built-in runtimes" 9 "$(kubectl get clustertrainingruntimes --no-headers | wc -l)"
out=$(kubectl get clustertrainingruntimes -l trainer.kubeflow.org/framework=torch -o name 2>&1)
expect_eq "selected by the framework label" "clustertrainingruntime.trainer.kubeflow.org/torch-distributed" "$out"
out=$(kubectl get clustertrainingruntime mpi-distributed -o jsonpath='{.spec.mlPolicy.mpi.sshAuthMountPath} {.spec.template.spec.replicatedJobs[1].dependsOn[0].status}' 2>&1)
expect_eq "mpi-distributed: defaults filled, launcher waits for node Ready" "/root/.ssh Ready" "$out"

# ---- upstream's manifests, unchanged ----
check "apply a ClusterTrainingRuntime with initializers" kubectl apply -f "$DATA/runtime-torchtune.yaml"
check "apply upstream's deepspeed runtime over the built-in" kubectl apply -f "$DATA/runtime-deepspeed.yaml"
check "apply a v2.0 TrainingRuntime" kubectl apply -n default -f "$DATA/trainingruntime-torch-v20.yaml"
check "apply the minimal TrainJob" kubectl apply -f "$DATA/trainjob-minimal.yaml"
check "apply a TrainJob with initializers and runtimePatches" kubectl apply -f "$DATA/trainjob-full.yaml"
check "apply a v2.1 TrainJob with podTemplateOverrides" kubectl apply -f "$DATA/trainjob-v21-overrides.yaml"
expect_match "applying a TrainJob again: unchanged" 'unchanged' "$(kubectl apply -f "$DATA/trainjob-full.yaml" 2>&1)"
expect_match "applying a runtime again: unchanged" 'unchanged' "$(kubectl apply -f "$DATA/runtime-torchtune.yaml" 2>&1)"
out=$(kubectl get trainjob pytorch-simple -o jsonpath='{.spec.runtimeRef.kind} {.spec.runtimeRef.apiGroup} {.spec.suspend} {.spec.managedBy}' 2>&1)
expect_eq "TrainJob defaults" "ClusterTrainingRuntime trainer.kubeflow.org false trainer.kubeflow.org/trainjob-controller" "$out"
out=$(kubectl get trainingruntime torch-team -o jsonpath='{.spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds} {.spec.mlPolicy.numNodes}' 2>&1)
expect_eq "TrainingRuntime kept its values" "100 2" "$out"

# ---- printer columns ----
out=$(kubectl get trainjobs 2>&1)
expect_match "trainjobs table: NAME STATE AGE" '^NAME +STATE +AGE$' "$(head -1 <<<"$out")"
expect_match "trainjobs table lists both" 'fine-tune-llama' "$out"
out=$(kubectl get clustertrainingruntimes torchtune-llama3.2-1b 2>&1)
expect_match "runtime table: NAME AGE" '^NAME +AGE$' "$(head -1 <<<"$out")"

# ---- bad jobs refused with field paths ----
cat >"$E2E_TMP/bad.yaml" <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: bad-job}
spec:
  runtimeRef: {name: torch-distributed, kind: JobSet}
  trainer: {numNodes: -1}
  initializer: {dataset: {storageUri: "no-scheme"}}
EOF
out=$(kubectl apply -f "$E2E_TMP/bad.yaml" 2>&1)
expect_match "bad kind refused at its path" 'spec\.runtimeRef\.kind: Unsupported value: "JobSet"' "$out"
expect_match "negative numNodes refused at its path" 'spec\.trainer\.numNodes: Invalid value: -1' "$out"
expect_match "storageUri refused at its path" 'spec\.initializer\.dataset\.storageUri: Invalid value: "no-scheme"' "$out"
out=$(kubectl create -f - 2>&1 <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: no-runtime}
spec:
  runtimeRef: {name: not-there}
EOF
)
expect_match "a missing runtime is refused" 'spec\.runtimeRef: Invalid value: "object": clustertrainingruntimes\.trainer\.kubeflow\.org "not-there" not found' "$out"
long=a-train-job-name-that-is-long-enough-to-break-the-pod-hosts
out=$(kubectl create -f - 2>&1 <<EOF
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $long}
spec:
  runtimeRef: {name: torch-distributed}
EOF
)
expect_match "a name too long for its pods' host names is refused" "metadata\.name: Invalid value: \"$long\": TrainJob name is too long, pod host names generated for this TrainJob \(68 characters\)" "$out"
out=$(kubectl create -f - 2>&1 <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: typo}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNode: 2}
EOF
)
expect_match "an unknown field is refused by path" 'unknown field "spec\.trainer\.numNode"' "$out"
out=$(kubectl patch trainjob pytorch-simple --type=merge -p '{"spec":{"trainer":{"numNodes":4}}}' 2>&1)
expect_match "the trainer is immutable" 'spec\.trainer: Invalid value: "object": field is immutable' "$out"
check "suspend may change" kubectl patch trainjob pytorch-simple --type=merge -p '{"spec":{"suspend":true}}'

check "label a runtime deprecated" kubectl label trainingruntime torch-team trainer.kubeflow.org/support=deprecated
out=$(kubectl create -f - 2>&1 <<'EOF'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: on-old-runtime}
spec:
  runtimeRef: {name: torch-team, kind: TrainingRuntime}
EOF
)
expect_match "a deprecated runtime: created with a warning" 'Warning: TrainingRuntime "torch-team" is deprecated' "$out"
check "job on the deprecated runtime deleted" kubectl delete trainjob on-old-runtime

# ---- the status subresource ----
check "status written through /status" kubectl patch trainjob pytorch-simple --subresource=status \
    --type=merge -p '{"status":{"conditions":[{"type":"Suspended","status":"True","reason":"Suspended","message":"TrainJob is suspended","lastTransitionTime":"2026-08-01T10:00:00Z"}],"jobsStatus":[{"name":"node","ready":0,"succeeded":0,"failed":0,"active":0,"suspended":1}]}}'
out=$(kubectl get trainjob pytorch-simple --no-headers 2>&1)
expect_match "State column shows the last condition" '^pytorch-simple +Suspended +' "$out"
check "status ignored on the main resource" kubectl patch trainjob pytorch-simple --type=merge \
    -p '{"status":{"conditions":[{"type":"Complete","status":"True"}]}}'
out=$(kubectl get trainjob pytorch-simple -o jsonpath='{.status.conditions[*].type} {.status.jobsStatus[0].suspended}' 2>&1)
expect_eq "status only through /status" "Suspended 1" "$out"

# ---- the Python client ----
out=$(/usr/bin/python3 - 2>&1 <<'EOF'
from kubernetes import client, config
config.load_kube_config()
api = client.CustomObjectsApi()
jobs = api.list_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "default", "trainjobs")
print("list:", " ".join(sorted(j["metadata"]["name"] for j in jobs["items"])))
j = api.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "default", "trainjobs",
                                     "pytorch-simple")
print("get:", j["spec"]["runtimeRef"]["name"], j["spec"]["trainer"]["numNodes"])
s = api.get_namespaced_custom_object_status("trainer.kubeflow.org", "v1alpha1", "default",
                                            "trainjobs", "pytorch-simple")
print("status:", s["status"]["conditions"][-1]["type"])
rts = api.list_cluster_custom_object("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
                                     label_selector="trainer.kubeflow.org/framework")
print("runtimes:", len(rts["items"]))
EOF
)
expect_match "python lists TrainJobs" '^list: fine-tune-llama pytorch-simple with-overrides$' "$out"
expect_match "python gets a TrainJob" '^get: torch-distributed 2$' "$out"
expect_match "python reads the status subresource" '^status: Suspended$' "$out"
expect_match "python lists labelled runtimes" '^runtimes: 10$' "$out"

# ---- API only: stored, no pods ----
expect_eq "a TrainJob makes no pods (no job controller on an API-only server)" 0 \
    "$(kubectl get pods -A -l jobset.sigs.k8s.io/jobset-name=pytorch-simple --no-headers 2>/dev/null | wc -l)"

# ---- a restart keeps an admin's runtimes; a deleted built-in comes back ----
check "delete a built-in runtime" kubectl delete clustertrainingruntime paddle-distributed
stop_server
start_server --api-only
out=$(kubectl get clustertrainingruntime deepspeed-distributed -o jsonpath='{.spec.template.spec.replicatedJobs[0].name}' 2>&1)
expect_eq "the admin's deepspeed runtime kept (launcher first, as applied)" "launcher" "$out"
check "the deleted built-in made again" kubectl get clustertrainingruntime paddle-distributed
expect_eq "ten runtimes after the restart" 10 "$(kubectl get clustertrainingruntimes --no-headers | wc -l)"
check "TrainJobs deleted" kubectl delete trainjob pytorch-simple fine-tune-llama with-overrides

finish
