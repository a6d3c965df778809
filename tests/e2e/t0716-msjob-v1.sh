#!/usr/bin/env bash
# The seed's MSJob, ms-operator's first format (kubeflow.org/v1: a list of
# replicaSpecs, spec.backend, spec.masterPort as a string), applied with
# kubectl: its MASTER and 3 WORKERs meet in one torch.distributed group
# through MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK and the job succeeds with
# its MASTER. It is served beside MSJob mindspore.gitee.com/v1: `kubectl get
# msjobs` takes kubeflow.org (the group discovery lists first, as a cluster
# orders CRD groups), each group by its qualified name.
. "$(dirname "$0")/lib.sh"
start_server
EX=$(cd "$(dirname "$0")/../../examples" && pwd)

out=$(kubectl apply -f "$EX/msjob-v1.yaml" 2>&1)
expect_eq "the seed's MSJob is accepted" "msjob.kubeflow.org/msjob-mnist created" "$out"
out=$(kubectl apply -f "$EX/msjob-v1.yaml" 2>&1)
expect_eq "applied again, it is unchanged" "msjob.kubeflow.org/msjob-mnist unchanged" "$out"

# The other form, in the other group, at the same time.
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: ms-gitee}
spec:
  msReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - {name: mindspore, image: m, command: ["/usr/bin/python3", "-c", "pass"]}
EOF

state=$(wait_job msjobs.kubeflow.org msjob-mnist Succeeded 240)
expect_eq "the seed's MSJob succeeds" "Succeeded" "$state"
[ "$state" = Succeeded ] || dump_job msjobs.kubeflow.org msjob-mnist
# The MASTER alone decides the job's success: a WORKER may still be printing.
check "the WORKERs end Succeeded too" \
    wait_until pods_in_phase Succeeded msjob-mnist-worker-0 msjob-mnist-worker-1 msjob-mnist-worker-2
expect_match "the MASTER reached itself at localhost" \
    'rank 0/4 reached the master \(MASTER_ADDR=localhost MASTER_PORT=23456 WORLD_SIZE=4 RANK=0\): allreduce 6' \
    "$(kubectl logs msjob-mnist-master-0 2>&1)"
for i in 0 1 2; do
    expect_match "WORKER $i reached the master as rank $((i + 1))" \
        "rank $((i + 1))/4 reached the master \(MASTER_ADDR=msjob-mnist-master-0 MASTER_PORT=23456 WORLD_SIZE=4 RANK=$((i + 1))\): allreduce 6" \
        "$(kubectl logs "msjob-mnist-worker-$i" 2>&1)"
done
expect_match "MS_CONFIG lists the cluster and the task" \
    'MS_CONFIG \{"cluster":\{"master":\["msjob-mnist-master-0:23456"\],"worker":\["msjob-mnist-worker-0:23456",.*\]\},"task":\{"type":"worker","index":3\},"environment":"cloud"\}' \
    "$(kubectl logs msjob-mnist-worker-2 2>&1)"
expect_eq "the MASTER pod carries upstream's labels" "MASTER/0/msjob-mnist" \
    "$(kubectl get pod msjob-mnist-master-0 -o jsonpath='{.metadata.labels.job_type}/{.metadata.labels.task_index}/{.metadata.labels.ms_job_name}')"

state=$(wait_job msjobs.mindspore.gitee.com ms-gitee Succeeded 120)
expect_eq "the mindspore.gitee.com MSJob succeeds beside it" "Succeeded" "$state"
[ "$state" = Succeeded ] || dump_job msjobs.mindspore.gitee.com ms-gitee

names() { kubectl get "$1" -o name 2>&1 | tr '\n' ' '; }
expect_eq "kubectl get msjobs: kubeflow.org's" "msjob.kubeflow.org/msjob-mnist " "$(names msjobs)"
expect_eq "kubectl get msjob: the same" "msjob.kubeflow.org/msjob-mnist " "$(names msjob)"
expect_eq "kubectl get msjobs.kubeflow.org" "msjob.kubeflow.org/msjob-mnist " \
    "$(names msjobs.kubeflow.org)"
expect_eq "kubectl get msjobs.mindspore.gitee.com" "msjob.mindspore.gitee.com/ms-gitee " \
    "$(names msjobs.mindspore.gitee.com)"
expect_match "kubectl get msjobs prints the State column" 'msjob-mnist +Succeeded' \
    "$(kubectl get msjobs 2>&1)"
expect_match "kubectl api-resources lists both" \
    'msjobs +kubeflow.org/v1 +true +MSJob.*msjobs +mindspore.gitee.com/v1 +true +MSJob' \
    "$(kubectl api-resources 2>&1 | tr '\n' ' ')"

# As written in ms-operator's example: a volumeMount naming no volume (with a
# hostPath inside it). The MSJob is accepted (upstream's CRD had no schema);
# its pods are refused as Kubernetes refuses them, and the job says why.
cat >"$E2E_TMP/as-written.yaml" <<'EOF'
apiVersion: "kubeflow.org/v1"
kind: "MSJob"
metadata:
  name: "as-written"
spec:
  backend: "tcp"
  masterPort: "23456"
  replicaSpecs:
    - replicas: 1
      replicaType: MASTER
      template:
        spec:
          containers:
          - image: mindspore/mindspore-cpu:0.1.0-alpha
            name: as-written
            command: ["/bin/bash", "-c", "true"]
            volumeMounts:
              - name: local-file
                hostPath:
                    path: /tmp/nowhere
          restartPolicy: OnFailure
          volumes:
            - name: training-result
              emptyDir: {}
          restartPolicy: OnFailure
EOF
out=$(kubectl apply -f "$E2E_TMP/as-written.yaml" 2>&1)
expect_eq "kubectl apply of the manifest as written works" "msjob.kubeflow.org/as-written created" "$out"
refused() {
    kubectl get events --field-selector involvedObject.name=as-written 2>&1 |
        grep -q 'FailedCreatePod.*volumeMounts\[0\].name: Not found: "local-file"'
}
check "its pods are refused with the reason in an event" wait_until refused

out=$(kubectl apply -f - 2>&1 <<'EOF'
apiVersion: kubeflow.org/v1
kind: MSJob
metadata: {name: bad}
spec:
  replicaSpecs:
  - {replicaType: MASTER, template: {spec: {containers: [{name: m, image: m}]}}}
  - {replicaType: PS, template: {spec: {containers: [{name: m, image: m}]}}}
EOF
)
expect_match "a replicaType it never had is refused with its path" \
    'spec.replicaSpecs\[1\].replicaType: Unsupported value: "PS": supported values: "MASTER", "WORKER"' "$out"
finish
