#!/usr/bin/env bash
# The researcher's job commands (Arena's habits): `trainyard list`, `get JOB`
# (instances, why it waits, events), `delete JOB`, `suspend`/`resume` of a
# PyTorchJob and a Volcano Job. Simulated nodes (2 x 4 GPUs), so that pods
# "run" without processes; jobs applied from YAML.
. "$(dirname "$0")/lib.sh"
ty() { "$TRAINYARD" "$@"; }

start_server --sim-nodes 2x4:cpu=16,memory=64Gi --no-local-node

ptjob() { # name master-gpus worker-replicas worker-gpus [extra runPolicy lines]
    kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: $1}
spec:
  runPolicy:
    ${5:-suspend: false}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers: [{name: pytorch, image: sim, resources: {limits: {nvidia.com/gpu: $2}}}]
    Worker:
      replicas: $3
      restartPolicy: Never
      template:
        spec:
          containers: [{name: pytorch, image: sim, resources: {limits: {nvidia.com/gpu: $4}}}]
YAML
}

# waits until `trainyard list` shows job $1 with a row going on as regex $2
# (its status, and maybe the columns after); prints its row
wait_status() {
    local row="" end=$((SECONDS + E2E_WAIT))
    while [ $SECONDS -lt $end ]; do
        row=$(ty list 2>/dev/null | grep -E "^$1 ")
        grep -Eq "^$1 +$2( |$)" <<<"$row" && break
        sleep 0.25
    done
    echo "$row"
}

# waits until `trainyard get $1 [$3...]` matches $2; prints the last output
wait_get() {
    local job=$1 re=$2 out="" end=$((SECONDS + E2E_WAIT))
    shift 2
    while [ $SECONDS -lt $end ]; do
        out=$(ty get "$job" "$@" 2>&1)
        grep -Eq -- "$re" <<<"$out" && break
        sleep 0.5
    done
    echo "$out"
}

# ---- running jobs: a PyTorchJob (2 pods x 1 GPU) and a Volcano Job (2 x 1)
ptjob pt-run 1 1 1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vc-run}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - name: trainer
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: sim, resources: {limits: {nvidia.com/gpu: 1}}}]
YAML
row=$(wait_status pt-run 'Running +PyTorchJob +[^ ]+ +2 +2')
expect_match "list: a running PyTorchJob with its GPUs, nodes, queue and creator" \
    '^pt-run +Running +PyTorchJob +[0-9]+[smhd]? +2 +2 +sim-[^ ]+ +default +[^N ][^ ]*$' "$row"
row=$(wait_status vc-run 'Running +VolcanoJob +[^ ]+ +2 +2')
expect_match "list: a running Volcano Job" '^vc-run +Running +VolcanoJob +[0-9]+[smhd]? +2 +2 +sim-' "$row"
expect_match "list: Arena's columns" \
    '^NAME +STATUS +TRAINER +DURATION +GPU\(Requested\) +GPU\(Allocated\) +NODE +QUEUE +USER$' \
    "$(ty list | head -1)"
expect_match "list -A: a NAMESPACE column" '^default +pt-run +Running ' "$(ty list -A | grep pt-run)"
expect_match "list -o wide: priority and pods" '^pt-run +Running .* <none> +2/2$' \
    "$(ty list -o wide | grep '^pt-run ')"
expect_eq "list -o json" "pt-run Running 2" \
    "$(ty list -o json | /usr/bin/python3 -c 'import json,sys; j=[x for x in json.load(sys.stdin) if x["name"]=="pt-run"][0]; print(j["name"], j["status"], j["gpuAllocated"])')"
out=$(ty list -n nowhere 2>&1)
expect_eq "list of an empty namespace says so" "No training jobs found in nowhere namespace." "$out"

out=$(ty get pt-run)
expect_match "get JOB: kind and status" 'Kind: +PyTorchJob \(kubeflow.org/v1\)' "$out"
expect_match "get JOB: GPUs" 'GPUs: +2 requested, 2 allocated' "$out"
expect_match "get JOB: instances table" 'NAME +STATUS +AGE +NODE +ROLE +GPUs' "$out"
expect_match "get JOB: the master's row" 'pt-run-master-0 +Running +[0-9]+[smhd] +sim-[^ ]+ +master/0 +1' "$out"
expect_match "get JOB: the worker's row" 'pt-run-worker-0 +Running .* worker/0 +1' "$out"
expect_match "get KIND/NAME: a Volcano Job's tasks" 'vc-run-trainer-1 +Running .* trainer/1 +1' \
    "$(ty get vcjob/vc-run)"
# (events are written after what they tell of: waited for)
out=$(wait_get pt-run 'Pod/pt-run-master-0' -e)
expect_match "get JOB -e: its events" 'LAST SEEN +TYPE +REASON +OBJECT +MESSAGE' "$out"
expect_match "get JOB -e: the pods' events too" 'Pod/pt-run-master-0' "$out"
expect_eq "get JOB -o name" "pytorchjob.kubeflow.org/pt-run" "$(ty get pt-run -o name)"
expect_match "get RESOURCE still lists" '^pt-run +Running' "$(ty get pytorchjobs)"

# ---- a job that can never fit: a 16-GPU pod on nodes of 4
ptjob pt-huge 1 1 16
out=$(wait_get pt-huge 'Never fits')
expect_match "get JOB: a job that never fits says so, with the numbers" \
    'Never fits: replica Worker asks for 16 nvidia.com/gpu per pod, and the largest node has 4' "$out"
expect_match "  and it is Pending" 'Status: +Pending' "$out"

# ---- 4 GPUs in use of 8: two 6-GPU gangs wait for GPUs; the first, of a
# higher priority, goes before the never-fitting one, the second after both
# (each a second later: creationTimestamps are whole seconds, and the
# scheduler orders jobs of one priority by them)
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
YAML
sleep 1.1
ptjob pt-big 2 2 2 "schedulingPolicy: {priorityClass: high}"
sleep 1.1
ptjob pt-next 2 2 2
# (pt-next's PodGroup comes a little after the job: waited for in the count)
out=$(wait_get pt-big 'first of 3 waiting')
expect_match "get JOB: waiting for GPUs, with the numbers" \
    'Waiting for GPUs: the gang needs 6 more, 4 free now \(of 8 on 2 schedulable nodes\)' "$out"
expect_match "  its priority" 'Priority: +high \(1000\)' "$out"
expect_match "  first in its queue (the highest priority)" 'Queue: first of 3 waiting in queue default' "$out"
out=$(wait_get pt-next 'Behind other jobs')
expect_match "get JOB: behind another job of its queue, with its position" \
    'Behind other jobs: position 3 of 3 waiting in queue default .*after default/pt-big \(priority 1000\), default/pt-huge \(priority 0\)' \
    "$out"
expect_match "  and waiting for GPUs too" 'Waiting for GPUs: the gang needs 6 more' "$out"
expect_match "  with the scheduler's own words" 'Scheduler: [a-z0-9]' "$out"

# ---- delete JOB
expect_eq "delete JOB" 'pytorchjob.kubeflow.org "pt-huge" deleted' "$(ty delete pt-huge)"
expect_eq "the job is gone from list" "" "$(ty list | grep '^pt-huge ')"
out=$(ty get pt-huge 2>&1); rc=$?
expect_eq "get of a deleted job fails" 1 "$rc"
expect_match "  saying what to do next" 'no training job pt-huge in namespace default; `trainyard list -A` lists' "$out"
ty delete pt-big >/dev/null
ty delete pt-next >/dev/null

# ---- the same name in two kinds
ptjob dup 0 1 0 "suspend: true"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: dup}
spec:
  runPolicy: {suspend: true}
  tfReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers: [{name: tensorflow, image: sim}]
YAML
out=$(ty get dup 2>&1); rc=$?
expect_eq "an ambiguous name fails" 1 "$rc"
expect_match "  naming both kinds and how to pick one" \
    'dup in namespace default is both a TFJob and a PyTorchJob: name one, as tfjob/dup or pytorchjob/dup' "$out"
expect_match "get KIND/NAME picks one" 'Kind: +TFJob' "$(ty get tfjob/dup)"
expect_eq "delete KIND/NAME" 'tfjob.kubeflow.org "dup" deleted' "$(ty delete tfjob/dup)"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: m2}
spec:
  runPolicy: {suspend: true}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{name: l, image: sim}]
YAML
expect_match "get mpijob/NAME finds an MPIJob of either version" \
    'Kind: +MPIJob \(kubeflow.org/v2beta1\)' "$(ty get mpijob/m2)"
expect_match "get with the version named" 'Status: +Suspended' \
    "$(wait_get mpijobs.v2beta1.kubeflow.org/m2 'Status: +Suspended')"

# ---- suspend / resume: a PyTorchJob and a Volcano Job
expect_eq "suspend a PyTorchJob" "pytorchjob.kubeflow.org/pt-run suspended" "$(ty suspend pt-run)"
row=$(wait_status pt-run 'Suspended +PyTorchJob +[^ ]+ +2 +0')
expect_match "it shows as Suspended, its GPUs given back" '^pt-run +Suspended +PyTorchJob +[^ ]+ +2 +0 +N/A ' "$row"
expect_eq "resume it" "pytorchjob.kubeflow.org/pt-run resumed" "$(ty resume pt-run)"
expect_match "it runs again" '^pt-run +Running +PyTorchJob +[^ ]+ +2 +2 ' "$(wait_status pt-run 'Running +PyTorchJob +[^ ]+ +2 +2')"
expect_eq "suspend a Volcano Job" "job.batch.volcano.sh/vc-run suspended" "$(ty suspend vc-run)"
expect_match "it shows as Suspended" '^vc-run +Suspended ' "$(wait_status vc-run Suspended)"
expect_eq "resume it" "job.batch.volcano.sh/vc-run resumed" "$(ty resume vc-run)"
expect_match "it runs again" '^vc-run +Running ' "$(wait_status vc-run Running)"
expect_eq "trainyard job suspend (vcctl's form) still works" "job.batch.volcano.sh/vc-run suspended" \
    "$(ty job suspend vc-run)"
out=$(ty suspend nosuch 2>&1); rc=$?
expect_eq "suspend of a missing job fails" 1 "$rc"
expect_match "  saying what to do next" 'no training job nosuch in namespace default; `trainyard list -A`' "$out"
out=$(ty get nosuchkind 2>&1)
expect_match "a lone unknown word: neither a resource type nor a job" \
    "doesn't have a resource type \"nosuchkind\", and there is no training job nosuchkind" "$out"

finish
