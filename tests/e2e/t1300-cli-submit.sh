#!/usr/bin/env bash
# `trainyard submit KIND`: a job of every kind without YAML, with Arena's
# flags, runs to Succeeded (a real PyTorch DDP all-reduce over gloo among
# them); --dry-run prints the manifest (which the server accepts) and creates
# nothing; bad flags are usage errors (exit 2) that name the flag; server
# refusals read like kubectl's.
. "$(dirname "$0")/lib.sh"
start_server
ty() { "$TRAINYARD" "$@"; }

# --- dry runs: the manifest, nothing created
out=$(ty submit pytorch --name dry --workers 3 --gpus 1 --cpu 500m --dry-run "echo hi" 2>&1); rc=$?
expect_eq "--dry-run exits 0" 0 "$rc"
expect_match "--dry-run prints the PyTorchJob as YAML" '^kind: PyTorchJob$' "$out"
json=$(ty submit pytorch --name dry --workers 3 --gpus 1 --dry-run -o json "echo hi")
expect_eq "--workers 3 counts the Master: 1 Master + 2 Workers" "1 2" \
    "$(jq -r '.spec.pytorchReplicaSpecs | "\(.Master.replicas) \(.Worker.replicas)"' <<<"$json")"
expect_eq "--gpus is nvidia.com/gpu per replica" '"1"' \
    "$(jq -c '.spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits["nvidia.com/gpu"]' <<<"$json")"
expect_eq "the command runs under sh -c (Arena's form)" '["sh","-c","echo hi"]' \
    "$(jq -c '.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command' <<<"$json")"
expect_eq "after --, the words are the command" '["python3","-c","print(1)"]' \
    "$(ty submit jax --name dry --dry-run -o json -- python3 -c 'print(1)' |
        jq -c '.spec.jaxReplicaSpecs.Worker.template.spec.containers[0].command')"
# every kind's manifest is one the server takes (a server-side dry run)
for k in pytorch tf mpi xgboost paddle jax mx ms volcano; do
    check "the $k manifest passes the server's validation" \
        bash -c "\"$TRAINYARD\" submit $k --name dry-$k --workers 2 --dry-run 'echo hi' | kubectl apply --dry-run=server -f -"
done
out=$(ty submit pytorch --name dry-server --workers 2 --dry-run=server "echo hi" 2>&1)
expect_match "--dry-run=server prints the server's defaults" "nprocPerNode: auto" "$out"
expect_eq "no dry run created anything" "" "$(kubectl get pytorchjobs,jaxjobs -o name 2>&1; kubectl get vcjob -o name 2>&1)"

# --- bad input: usage errors name the flag (exit 2), server refusals exit 1
usage() { # usage NAME REGEX ARGS...
    local name=$1 want=$2 out rc; shift 2
    out=$(ty submit "$@" 2>&1); rc=$?
    expect_eq "$name: exit 2" 2 "$rc"
    expect_match "$name: says so" "$want" "$out"
}
usage "no --name" '^error: --name is required' pytorch "echo hi"
usage "no kind" 'which kind of job' --name x
usage "unknown kind" 'unknown kind "caffe": use one of pytorch tf mpi' caffe --name x "echo hi"
usage "no command" 'no command' pytorch --name x
usage "--workers not a number" '--workers "two": expected a whole number' pytorch --name x --workers two "echo"
usage "--ps on pytorch" '--ps is not a flag of `submit pytorch`' pytorch --name x --ps 1 "echo"
usage "--env without =" '--env "FOO": expected KEY=VALUE' pytorch --name x -e FOO "echo"
usage "--cpu not a quantity" '--cpu "lots" is not a quantity' pytorch --name x --cpu lots "echo"
usage "--ttl-after-finished not a duration" '--ttl-after-finished "soon": expected a duration' \
    pytorch --name x --ttl-after-finished soon "echo"
usage "an unknown flag" "unrecognized option '--bogus'" pytorch --name x --bogus "echo"
usage "an unquoted command" 'the command is one argument' pytorch --name x echo hi
out=$(ty submit pytorch --name Bad_Name "echo hi" 2>&1); rc=$?
expect_eq "an invalid name: exit 1" 1 "$rc"
expect_match "an invalid name: the server's refusal, kubectl-style" \
    '^Error from server \(Invalid\): .*Bad_Name' "$out"
out=$(ty submit pytorch --name x -p nonexistent "echo hi" 2>&1); rc=$?
expect_eq "a PriorityClass that does not exist: exit 1" 1 "$rc"
expect_match "a PriorityClass that does not exist: says so (as Arena checks)" \
    '^error: priorityclass "nonexistent" not found' "$out"
out=$(ty submit tf --name x --queue nope "echo hi" 2>&1); rc=$?
expect_eq "a queue that does not exist: exit 1" 1 "$rc"
expect_match "a queue that does not exist: says so" '^error: queue "nope" not found' "$out"
expect_eq "nothing was created by the refused submits" "" "$(kubectl get pytorchjobs,tfjobs -o name 2>&1)"
kubectl apply -f - >/dev/null <<'YAML' || fail "apply priority class"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
YAML

# --- every kind runs. The DDP script: 2 ranks all-reduce their rank + 1.
cat >"$E2E_TMP/ddp.py" <<'EOF'
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} allreduce {t.item():.0f}", flush=True)
dist.destroy_process_group()
EOF
chmod 644 "$E2E_TMP/ddp.py"
# --data CLAIM:PATH mounts a PersistentVolumeClaim (Arena's meaning); a host
# directory (--data /DIR:PATH, --data-dir) needs a namespace whose Pod
# Security level allows hostPath volumes (privileged).
kubectl apply -f - >/dev/null <<'YAML' || fail "apply claim"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
mkdir -p "$E2E_TMP/in"
echo "hello from the host" >"$E2E_TMP/in/hello.txt"
chmod 755 "$E2E_TMP/in"
chmod 644 "$E2E_TMP/in/hello.txt"
kubectl create namespace lab >/dev/null
kubectl label namespace lab pod-security.kubernetes.io/enforce=privileged >/dev/null

out=$(ty submit pytorch --name s-ddp --workers 2 -e GREETING=hi -l team=vision \
    "/usr/bin/python3 -u $E2E_TMP/ddp.py" 2>&1)
expect_match "submit says what it created" \
    '^pytorchjob.kubeflow.org/s-ddp created \(1 Master \+ 1 Worker in namespace default\)$' "$out"
expect_match "submit says how to follow it: get" '^  trainyard get s-ddp ' "$out"
expect_match "submit says how to follow it: logs" '^  trainyard logs s-ddp ' "$out"
out=$(ty submit pytorch --name s-ddp "echo again" 2>&1); rc=$?
expect_eq "a second job of that name: exit 1" 1 "$rc"
expect_match "a second job of that name: AlreadyExists" '^Error from server \(AlreadyExists\)' "$out"
ty submit tf --name s-tf --workers 2 "echo tf \$TF_CONFIG" >/dev/null || fail "submit tf"
ty submit mpi --name s-mpi --workers 2 -- mpirun --allow-run-as-root -np 2 --mca btl self,tcp hostname \
    >/dev/null || fail "submit mpi"
ty submit xgboost --name s-xgb --workers 2 -p high --queue default "echo rank \$RANK of \$WORLD_SIZE" >/dev/null || fail "submit xgboost"
ty submit paddle --name s-paddle --workers 2 -e GREETING=hello "echo \$GREETING \$PADDLE_NNODES" \
    >/dev/null || fail "submit paddle"
ty submit jax --name s-jax --data data:/out -- sh -c 'echo written >/out/f && cat /out/f' \
    >/dev/null || fail "submit jax"
out=$(ty submit paddle --name s-host -n lab --data-dir "$E2E_TMP/in:/input" -- cat /input/hello.txt 2>&1)
expect_match "-n: the summary names the namespace" 'created \(1 Worker in namespace lab\)' "$out"
expect_match "-n: the next commands carry it" '^  trainyard get s-host -n lab ' "$out"
ty submit mx --name s-mx "echo \$DMLC_ROLE" >/dev/null || fail "submit mx"
ty submit ms --name s-ms "echo \$MS_ROLE" >/dev/null || fail "submit ms"
out=$(ty submit volcano --name s-vc --workers 2 --queue default "echo worker \$VC_TASK_INDEX" 2>&1)
expect_match "the Volcano Job's summary" '^job.batch.volcano.sh/s-vc created \(2 workers in namespace default\)$' "$out"

run_ok() { # run_ok KIND NAME
    local state; state=$(wait_job "$1" "$2" Succeeded 240)
    expect_eq "$1 $2 succeeds" Succeeded "$state"
    [ "$state" = Succeeded ] || dump_job "$1" "$2"
}
run_ok pytorchjob s-ddp
log0=$(kubectl logs s-ddp-master-0 2>&1)
expect_match "DDP: the master is rank 0 of 2 and all-reduces 1+2" '^rank 0/2 allreduce 3$' "$log0"
expect_match "DDP: the worker all-reduces the same" '^rank 1/2 allreduce 3$' "$(kubectl logs s-ddp-worker-0 2>&1)"
expect_eq "--label is on the job and its pods" "vision vision" \
    "$(kubectl get pytorchjob s-ddp -o jsonpath='{.metadata.labels.team}') $(kubectl get pod s-ddp-worker-0 -o jsonpath='{.metadata.labels.team}')"
run_ok tfjob s-tf
run_ok mpijobs.v2beta1.kubeflow.org s-mpi
expect_match "mpirun on the launcher ran in both workers" 's-mpi-worker-1' "$(kubectl logs s-mpi-launcher 2>&1)"
run_ok xgboostjob s-xgb
expect_match "XGBoost master is rank 0 of 2" '^rank 0 of 2$' "$(kubectl logs s-xgb-master-0 2>&1)"
expect_eq "--priority and --queue: the pods' class, the job's schedulingPolicy" "high high default" \
    "$(kubectl get pod s-xgb-worker-0 -o jsonpath='{.spec.priorityClassName}') $(kubectl get xgboostjob s-xgb -o jsonpath='{.spec.runPolicy.schedulingPolicy.priorityClass} {.spec.runPolicy.schedulingPolicy.queue}')"
run_ok paddlejob s-paddle
expect_match "-e reaches the container" '^hello 2$' "$(kubectl logs s-paddle-worker-1 2>&1)"
run_ok jaxjob s-jax
expect_match "--data CLAIM:PATH mounts the claim" '^written$' "$(kubectl logs s-jax-worker-0 2>&1)"
state=$(kubectl() { command kubectl -n lab "$@"; }; wait_job paddlejob s-host Succeeded 240)
expect_eq "the job in namespace lab succeeds" Succeeded "$state"
expect_match "--data-dir HOST:PATH mounts the host directory" '^hello from the host$' \
    "$(kubectl logs -n lab s-host-worker-0 2>&1)"
run_ok mxjob s-mx
run_ok msjobs.mindspore.gitee.com s-ms
end=$((SECONDS + 240)); phase=""
while [ $SECONDS -lt $end ]; do
    phase=$(kubectl get vcjob s-vc -o jsonpath='{.status.state.phase}' 2>/dev/null)
    case "$phase" in Completed|Failed|Aborted) break ;; esac
    sleep 0.5
done
expect_eq "the Volcano Job completes" Completed "$phase"
[ "$phase" = Completed ] || dump_job vcjob s-vc
expect_match "its worker has the env plugin's index" '^worker 1$' "$(kubectl logs s-vc-worker-1 2>&1)"
finish
