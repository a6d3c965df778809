#!/usr/bin/env bash
# The Slurm runtime's lifecycle, on a Slurm set up differently from t1110's
# (one node named gpu-node-1 at 127.0.12.1, 6 CPUs, no GPUs, partition
# batch): the same manifests run unchanged; two PyTorchJobs at once whose
# masters share the node do not collide (a port moves); a gang that Slurm
# cannot fit waits whole with Slurm's reason on its pods, and deleting it
# leaves nothing in squeue; a running pod deleted is stopped; a SIGKILLed
# server adopts its running Slurm job and loses no exit code.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
start_cluster SLURM_NODES=1 SLURM_NODE_PREFIX=gpu-node- SLURM_ADDR_BASE=127.0.12 \
    SLURM_CPUS=6 SLURM_MEM_MB=4000 SLURM_GPUS=0 SLURM_PARTITION=batch
start_server --runtime slurm --slurm-partition batch
expect_eq "the node as Slurm names it" "gpu-node-1 127.0.12.1 6" \
    "$(kubectl get nodes -o jsonpath='{.items[*].metadata.name} {.items[0].status.addresses[0].address} {.items[0].status.capacity.cpu}')"

# Two jobs at once, 1 master + 1 worker each: all four pods on one node.
for j in ddp-a ddp-b; do
    sed -e "s/name: pytorch-ddp/name: $j/" -e 's/replicas: 2/replicas: 1/' \
        -e 's/cpu: 500m/cpu: "1"/' "$EX/pytorch-ddp.yaml" >"$E2E_TMP/$j.yaml"
done
kubectl apply -f "$E2E_TMP/ddp-a.yaml" -f "$E2E_TMP/ddp-b.yaml" >/dev/null
for j in ddp-a ddp-b; do
    state=$(wait_job pytorchjob $j Succeeded 240)
    expect_eq "$j succeeds beside the other" "Succeeded" "$state"
    [ "$state" = Succeeded ] || { dump_job pytorchjob $j; tail -20 "$E2E_TMP/server.err"; }
    # (the job's end is its master's: the worker's last line may come after)
    wait_until log_has "$j-worker-0" '^final weights'
    a=$(kubectl logs $j-master-0 | grep '^final weights')
    b=$(kubectl logs $j-worker-0 | grep '^final weights')
    if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "$j: both ranks agree"; else fail "$j: '$a' / '$b'"; fi
done
expect_match "the masters shared the node: one's port moved" \
    'containerPort 23456 is [0-9]+ on node gpu-node-1' "$(kubectl get events 2>&1)"
kubectl delete pytorchjob ddp-a ddp-b >/dev/null

# A gang Slurm can never fit (2 x 4 CPUs on one 6-CPU node): Trainyard
# admits it (its overcommit allows 1.2 x), Slurm holds it with its reason.
# Its deadline is Slurm's time limit too (5400 s: 90 minutes).
sed -e 's/name: pytorch-ddp/name: too-big/' -e 's/replicas: 2/replicas: 1/' \
    -e 's/cpu: 500m/cpu: "3.5"/' -e 's/backoffLimit: 2/backoffLimit: 2\n    activeDeadlineSeconds: 5400/' \
    "$EX/pytorch-ddp.yaml" >"$E2E_TMP/big.yaml"
kubectl apply -f "$E2E_TMP/big.yaml" >/dev/null
why() { kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' 2>/dev/null; }
pending_reason() { why "$1" | grep -Eq "Slurm job [0-9+]+ is pending: $2"; }
if wait_until pending_reason too-big-worker-0 PartitionConfig; then
    pass "the pod says why: $(why too-big-worker-0)"
else
    fail "no Slurm reason on the pod: '$(why too-big-worker-0)'"
fi
expect_eq "nothing of the gang runs" "" "$(squeue -h -t RUNNING -o %i)"
expect_match "the job says why too" 'Slurm job [0-9+]+ is pending: PartitionConfig' \
    "$(kubectl describe pytorchjob too-big 2>&1)"
expect_match "squeue has it pending" 'PENDING\|PartitionConfig\|' "$(squeue_active)"
expect_eq "the job's deadline is its Slurm time limit" "1:30:00" "$(squeue -h -o %l)"
expect_eq "its pods are Pending, unbound" "Pending Pending " \
    "$(kubectl get pods -l training.kubeflow.org/job-name=too-big -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{end}')"
kubectl delete pytorchjob too-big --wait=false >/dev/null
empty_queue() { [ -z "$(squeue_active)" ]; }
if wait_until empty_queue; then pass "deleted: nothing left in squeue"; else fail "left in squeue: $(squeue_active)"; fi

# Another user's Slurm job holds 5 of the 6 CPUs: a gang of 2 x 1 CPU waits
# whole (Slurm: Resources) and runs when that job ends.
other=$(sbatch --parsable -p batch -c 5 --wrap 'exec sleep 600' -o /dev/null)
held() { [ "$(squeue -h -j "$other" -o %T)" = RUNNING ]; }
wait_until held || fail "the other user's job did not start"
sed -e 's/name: pytorch-ddp/name: later/' -e 's/replicas: 2/replicas: 1/' \
    -e 's/cpu: 500m/cpu: "1"/' "$EX/pytorch-ddp.yaml" >"$E2E_TMP/later.yaml"
kubectl apply -f "$E2E_TMP/later.yaml" >/dev/null
# (Slurm's main scheduler names the reason at its next pass: up to a minute.)
if wait_until pending_reason later-master-0 '(Resources|Priority)'; then
    pass "waits for room: $(why later-master-0)"
else
    fail "no Resources reason: '$(why later-master-0)'"
fi
expect_eq "none of its pods runs meanwhile" "Pending Pending " \
    "$(kubectl get pods -l training.kubeflow.org/job-name=later -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{end}')"
# slurmctld stops answering (SIGSTOPped) while the gang waits: squeue fails
# twice, and the waiting pods are not taken for gone (they were, when "gone"
# was measured by the clock instead of by listings: SlurmJobGone, Failed).
ctld=$(cat "$SLURM_DIR/run/slurmctld.pid")
later_uids() { kubectl get pods -l training.kubeflow.org/job-name=later -o jsonpath='{.items[*].metadata.uid}'; }
uids=$(later_uids)
base=$(grep -c 'slurm: squeue' "$E2E_TMP/server.err")
squeue_failed_twice() { [ "$(grep -c 'slurm: squeue' "$E2E_TMP/server.err")" -ge $((base + 2)) ]; }
kill -STOP "$ctld"
wait_until squeue_failed_twice || fail "squeue did not fail while slurmctld was stopped"
kill -CONT "$ctld"
expect_eq "its pods still wait while slurmctld did not answer" "Pending Pending " \
    "$(kubectl get pods -l training.kubeflow.org/job-name=later -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{end}')"
expect_eq "the same pods, not taken for gone" "$uids" "$(later_uids)"
expect_eq "no pod was told Slurm ended its job" "" \
    "$(kubectl get events 2>&1 | grep 'later-' | grep -o 'SlurmJobEnded' | head -1)"
scancel "$other"
state=$(wait_job pytorchjob later Succeeded 240)
expect_eq "it runs once there is room" "Succeeded" "$state"
kubectl delete pytorchjob later >/dev/null

# Trainyard admits first: a gang past its namespace's quota never reaches
# Slurm (its PodGroup names the quota) and does once the quota is raised.
kubectl create namespace q >/dev/null
kubectl create quota cpu-q -n q --hard=requests.cpu=1 >/dev/null
sed -e 's/name: pytorch-ddp/name: quota-held/' -e 's/replicas: 2/replicas: 1/' \
    -e 's/cpu: 500m/cpu: "1"/' "$EX/pytorch-ddp.yaml" >"$E2E_TMP/qh.yaml"
kubectl apply -n q -f "$E2E_TMP/qh.yaml" >/dev/null
pg_quota() { kubectl get podgroup -n q quota-held -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}' 2>/dev/null | grep -q 'resource quota "cpu-q"'; }
if wait_until pg_quota; then pass "held by its quota, named on the PodGroup"; else fail "no quota message: $(kubectl get podgroup -n q -o yaml 2>&1 | tail -20)"; fi
expect_eq "nothing of it submitted to Slurm" "0" "$(squeue -h --states=all -o %j | grep -c '^q\.')"
kubectl patch quota cpu-q -n q --type merge -p '{"spec":{"hard":{"requests.cpu":"4"}}}' >/dev/null
q_done() { [ "$(kubectl get pytorchjob -n q quota-held -o jsonpath='{.status.conditions[-1:].type}' 2>/dev/null)" = Succeeded ]; }
if wait_until 240 q_done; then pass "runs on Slurm once the quota allows it"; else fail "quota-held: $(kubectl get pytorchjob -n q quota-held -o jsonpath='{.status.conditions[-1:].type}')"; fi
kubectl delete namespace q --wait=false >/dev/null

# A running pod deleted: stopped (its Slurm job ends), the pod goes.
cat >"$E2E_TMP/sleeper.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: sleeper
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: busybox
    command: ["/bin/sh", "-c", "echo up; exec sleep 600"]
YAML
kubectl apply -f "$E2E_TMP/sleeper.yaml" >/dev/null
running() { [ "$(kubectl get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = Running ]; }
if wait_until running sleeper; then pass "a plain pod runs on Slurm"; else fail "sleeper not running"; fi
kubectl delete pod sleeper --wait=false >/dev/null
gone() { ! kubectl get pod "$1" >/dev/null 2>&1; }
if wait_until gone sleeper; then pass "deleted pod is gone"; else fail "sleeper still there"; fi
if wait_until empty_queue; then pass "its Slurm job ended"; else fail "left in squeue: $(squeue_active)"; fi

# Suspending a running job (runPolicy.suspend) stops its Slurm job;
# resuming submits a new one.
cat >"$E2E_TMP/susp.yaml" <<'YAML'
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: susp
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 3
          containers:
          - name: pytorch
            image: pytorch
            command: ["/bin/sh", "-c", "exec sleep 600"]
YAML
kubectl apply -f "$E2E_TMP/susp.yaml" >/dev/null
if wait_until running susp-master-0; then pass "susp runs"; else fail "susp not running"; fi
first=$(squeue -h -o %i)
kubectl patch pytorchjob susp --type merge -p '{"spec":{"runPolicy":{"suspend":true}}}' >/dev/null
if wait_until empty_queue && wait_until gone susp-master-0; then pass "suspended: pod gone, Slurm job ended"; else fail "suspend: $(squeue_active)"; fi
kubectl patch pytorchjob susp --type merge -p '{"spec":{"runPolicy":{"suspend":false}}}' >/dev/null
if wait_until running susp-master-0; then pass "resumed: runs again"; else fail "susp not running after resume"; fi
second=$(squeue -h -o %i)
if [ -n "$second" ] && [ "$second" != "$first" ]; then pass "in a new Slurm job ($first, then $second)"; else fail "jobs: '$first' '$second'"; fi
kubectl delete pytorchjob susp >/dev/null
if wait_until empty_queue; then pass "deleted: nothing left in squeue"; else fail "left in squeue: $(squeue_active)"; fi

# SIGKILL the server while a pod runs; the next server adopts its Slurm job.
cat >"$E2E_TMP/exit3.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: exit3
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["/bin/sh", "-c", "echo started; while [ ! -e /tmp/go ]; do sleep 0.2; done; exit 3"]
YAML
kubectl apply -f "$E2E_TMP/exit3.yaml" >/dev/null
if wait_until running exit3; then pass "exit3 runs"; else fail "exit3 not running"; fi
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
# The pod ends while no server runs: its exit code must survive.
podtmp=$(for d in "$E2E_TMP"/data/slurm-shared/pods/*/; do grep -q '"name":"exit3"' "$d/spec.json" 2>/dev/null && echo "$d/tmp"; done)
touch "$podtmp/go"
# ... and its Slurm job too, before the next server's first look.
job_done() { squeue -h --states=all -o '%j|%T' | grep -qx 'default.exit3|COMPLETED'; }
wait_until job_done || fail "exit3's Slurm job did not complete"
start_server --runtime slurm --slurm-partition batch
ended() { [ "$(kubectl get pod exit3 -o jsonpath='{.status.phase}' 2>/dev/null)" = Failed ]; }
if wait_until ended; then pass "the adopted pod's end is reported"; else fail "exit3: $(kubectl get pod exit3 -o jsonpath='{.status}')"; fi
expect_eq "with its real exit code" "3" \
    "$(kubectl get pod exit3 -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"
expect_eq "one Slurm job for it, not two" "1" \
    "$(squeue -h --states=all -o '%j' | grep -cx 'default.exit3')"
kubectl delete pod exit3 >/dev/null
no_dirs() { [ -z "$(ls "$E2E_TMP/data/slurm-shared/pods")" ]; }
if wait_until no_dirs; then pass "deleted pods leave no directory"; else fail "left: $(ls "$E2E_TMP/data/slurm-shared/pods")"; fi
expect_match "their logs stay" 'started' "$("$TRAINYARD" logs exit3 2>&1)"
finish
