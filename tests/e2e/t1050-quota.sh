#!/usr/bin/env bash
# ResourceQuota with the real kubectl: `kubectl create/get/describe quota` show
# used and hard; a pod past the quota is refused with kube-apiserver's
# message, one without a cpu request where requests.cpu is limited too;
# object counts (count/configmaps); and gangs: a 2-worker PyTorchJob asking
# 2 GPUs a worker, in a namespace with requests.nvidia.com/gpu 6 while
# another job holds 4, waits whole (no pod of it is created) with its
# PodGroup and the job's events naming the quota, and runs once the first
# job finished; a third waits until the quota is raised.
. "$(dirname "$0")/lib.sh"

start_server --fake-gpus 8
kubectl create namespace team-a >/dev/null
kubectl apply -n team-a -f - >/dev/null <<YAML
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota}
spec:
  hard: {requests.nvidia.com/gpu: 6, pods: 10, count/configmaps: 1}
YAML
quota_used() { kubectl get quota gpu-quota -n team-a -o jsonpath="{.status.used.${1//./\\.}}"; }
used_is() { [ "$(quota_used "$1")" = "$2" ]; }

check "the controller fills status.used" wait_until used_is requests.nvidia.com/gpu 0
expect_match "kubectl get quota prints REQUEST used/hard" \
    'gpu-quota +[0-9a-z]+ +count/configmaps: 0/1, pods: 0/10, requests.nvidia.com/gpu: 0/6' \
    "$(kubectl get quota -n team-a)"
expect_match "kubectl get quota has kube's columns" 'NAME +AGE +REQUEST +LIMIT' \
    "$(kubectl get quota -n team-a)"

# ---- object counts
kubectl create configmap c1 -n team-a --from-literal=a=b >/dev/null
out=$(kubectl create configmap c2 -n team-a --from-literal=a=b 2>&1)
expect_match "a second configmap is past count/configmaps" \
    'configmaps "c2" is forbidden: exceeded quota: gpu-quota, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1' \
    "$out"

# ---- gangs
job() { # name: 2 workers, 2 GPUs each, running until $E2E_TMP/release-<name> exists
    kubectl apply -n team-a -f - >/dev/null <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: $1}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers: [{name: pytorch, image: local,
                        command: [sh, -c, "until [ -e $E2E_TMP/release-$1 ]; do sleep 0.2; done"],
                        resources: {limits: {nvidia.com/gpu: 2}}}]
YAML
}
pods_of() { kubectl get pods -n team-a -l training.kubeflow.org/job-name=$1 -o name 2>/dev/null | grep -c .; }
running_of() {
    [ "$(kubectl get pods -n team-a -l training.kubeflow.org/job-name=$1 \
        -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Running)" = "$2" ]
}
pg_msg() { kubectl get podgroup -n team-a "$1" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}' 2>/dev/null; }
pg_names_quota() { pg_msg "$1" | grep -q 'resource quota "gpu-quota"'; }

job first
check "the first job (4 GPUs) runs" wait_until running_of first 2
check "status.used counts its GPUs" wait_until used_is requests.nvidia.com/gpu 4
expect_match "kubectl describe quota shows used and hard" \
    'requests.nvidia.com/gpu +4 +6' "$(kubectl describe quota gpu-quota -n team-a)"

# ---- a pod past the quota
out=$(kubectl run extra -n team-a --image=local --restart=Never \
    --overrides='{"spec":{"containers":[{"name":"extra","image":"local","command":["true"],"resources":{"limits":{"nvidia.com/gpu":"3"}}}]}}' 2>&1)
expect_match "a pod past the quota is refused with kube's message" \
    'Error from server \(Forbidden\): pods "extra" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=3, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=6' \
    "$out"

job second
check "the second job waits with its PodGroup naming the quota" wait_until pg_names_quota second
expect_eq "no pod of the waiting job was created" 0 "$(pods_of second)"
expect_match "the reason in Volcano's terms" \
    'resource quota "gpu-quota" in namespace "team-a": requests.nvidia.com/gpu 4 used \+ 4 requested > 6 hard' \
    "$(pg_msg second)"
expect_match "kubectl describe of the job says why it waits" 'resource quota "gpu-quota"' \
    "$(kubectl describe pytorchjob second -n team-a)"

touch "$E2E_TMP/release-first"
partial=0
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    n=$(pods_of second)
    [ "$n" != 0 ] && [ "$n" != 2 ] && partial=1
    running_of second 2 && break
    sleep 0.25
done
check "the second job runs once the first finished" running_of second 2
expect_eq "never a partial set of its pods" 0 "$partial"

# ---- the quota raised
job third
check "a third job waits for the quota" wait_until pg_names_quota third
expect_eq "no pod of it was created" 0 "$(pods_of third)"
kubectl patch quota gpu-quota -n team-a --type=merge \
    -p '{"spec":{"hard":{"requests.nvidia.com/gpu":"8"}}}' >/dev/null
check "it runs once the quota is raised" wait_until running_of third 2
check "status.hard follows the spec" wait_until \
    sh -c "kubectl describe quota gpu-quota -n team-a | grep -Eq 'requests.nvidia.com/gpu +8 +8'"
touch "$E2E_TMP/release-second" "$E2E_TMP/release-third"

# ---- requests.cpu: every container must say
# (kubectl create quota sends protobuf)
expect_eq "kubectl create quota" "resourcequota/cpu-quota created" \
    "$(kubectl create quota cpu-quota -n team-a --hard=requests.cpu=2 2>&1)"
out=$(kubectl run bare -n team-a --image=local --restart=Never --command -- true 2>&1)
expect_match "a pod without a cpu request is refused where requests.cpu is limited" \
    'pods "bare" is forbidden: failed quota: cpu-quota: must specify requests.cpu' "$out"

finish
