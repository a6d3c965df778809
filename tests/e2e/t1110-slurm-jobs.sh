#!/usr/bin/env bash
# The Slurm runtime (--runtime slurm) on a real 3-node Slurm on this host:
# the nodes appear as Nodes; unchanged manifests run across Slurm nodes to
# Succeeded with their frameworks' environments — a PyTorchJob of 1 master
# + 3 workers (gloo, identical weights on every rank), a TFJob (chief, PS,
# workers reaching each other through TF_CONFIG: five pods on three nodes,
# so ports move where two share a node), an MSJob, an MPIJob (mpirun reaching
# the workers on other nodes through srun) and a Volcano Job with the svc
# plugin; logs are served from the shared directory, and nothing is left
# in squeue.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
start_cluster SLURM_NODES=3 SLURM_ADDR_BASE=127.0.11 SLURM_CPUS=8 SLURM_GPUS=2
start_server --runtime slurm

expect_eq "the Slurm nodes are Nodes" "n1 n2 n3" \
    "$(kubectl get nodes -o jsonpath='{.items[*].metadata.name}')"
expect_eq "with their CPUs, GPUs and NodeAddr" "8 2 127.0.11.2 slurm" \
    "$(kubectl get node n2 -o jsonpath='{.status.capacity.cpu} {.status.capacity.nvidia\.com/gpu} {.status.addresses[0].address} {.metadata.labels.trainyard\.io/runtime}')"
expect_eq "Ready" "True" \
    "$(kubectl get node n3 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')"

run() { # run KIND NAME FILE
    local state
    kubectl apply -f "$3" >/dev/null
    state=$(wait_job "$1" "$2" Succeeded 240)
    expect_eq "$1 $2 succeeds on Slurm" Succeeded "$state"
    [ "$state" = Succeeded ] || { dump_job "$1" "$2"; tail -20 "$E2E_TMP/server.err"; squeue_active; }
}

# PyTorch: 1 master + 3 workers of 3 CPUs each: at most two fit a node.
sed -e 's/replicas: 2/replicas: 3/' -e 's/cpu: 500m/cpu: "3"/' "$EX/pytorch-ddp.yaml" >"$E2E_TMP/pt.yaml"
run pytorchjob pytorch-ddp "$E2E_TMP/pt.yaml"
nodes=$(kubectl get pods -l training.kubeflow.org/job-name=pytorch-ddp -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)
if [ "$(wc -l <<<"$nodes")" -ge 2 ]; then pass "its replicas ran on $(echo $nodes)"; else fail "replicas on one node only: $nodes"; fi
expect_eq "a pod's hostIP is its node's NodeAddr" \
    "$(kubectl get node "$(kubectl get pod pytorch-ddp-worker-2 -o jsonpath='{.spec.nodeName}')" -o jsonpath='{.status.addresses[0].address}')" \
    "$(kubectl get pod pytorch-ddp-worker-2 -o jsonpath='{.status.hostIP}')"
w=()
for p in master-0 worker-0 worker-1 worker-2; do
    # (the job's end is its master's: a worker's last line may come after)
    wait_until log_has "pytorch-ddp-$p" '^final weights'
    w+=("$(kubectl logs "pytorch-ddp-$p" | grep '^final weights')")
done
if [ -n "${w[0]}" ] && [ "${w[0]}" = "${w[1]}" ] && [ "${w[0]}" = "${w[2]}" ] && [ "${w[0]}" = "${w[3]}" ]; then
    pass "all 4 ranks agree on the final weights"
else
    fail "ranks disagree: ${w[*]}"
fi
expect_match "worker-2 is rank 3 of 4" 'rank 3/4' "$(kubectl logs pytorch-ddp-worker-2)"
expect_eq "kubectl logs --tail" "1" "$(kubectl logs pytorch-ddp-master-0 --tail 1 | wc -l)"
expect_match "the pod tells which Slurm job ran it" 'Slurm job [0-9]+ started it on n[1-3]' \
    "$(kubectl get events --field-selector involvedObject.name=pytorch-ddp-master-0 2>&1)"

run tfjob tf-ps "$EX/tfjob.yaml"
expect_match "TF chief reached every task" 'chief-0 reached 4 peers and heard from 4' "$(kubectl logs tf-ps-chief-0 2>&1)"
expect_match "two TF tasks on one node: a port moved" 'PortMoved' "$(kubectl get events 2>&1)"

run msjobs.mindspore.gitee.com ms-dynamic "$EX/msjob.yaml"
expect_match "MS scheduler heard from both workers" 'MS_NODE_ID=ms-dynamic-worker-1' \
    "$("$TRAINYARD" logs ms-dynamic-scheduler-0 2>&1)"

# MPI: mpirun's rsh agent reaches the workers through srun (each pod's
# supervisor runs the command in the target pod, on its node). Five CPUs a
# pod: one pod per node.
sed '/image: mpioperator/a\            resources: {requests: {cpu: "5"}}' "$EX/mpijob.yaml" >"$E2E_TMP/mpi.yaml"
run mpijob mpi-allreduce "$E2E_TMP/mpi.yaml"
expect_match "mpirun ran 2 ranks that allreduce to 3" 'rank 1 of 2 on mpi-allreduce-worker-1 allreduce 3' \
    "$(kubectl logs mpi-allreduce-launcher 2>&1)"
nodes=$(kubectl get pods -l training.kubeflow.org/job-name=mpi-allreduce -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)
expect_eq "launcher and workers on three nodes" 3 "$nodes"

# Volcano's mpi plugin: mpirun --host $MPI_HOST through the same agent.
cat >"$E2E_TMP/vcmpi.yaml" <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi-vc}
spec:
  minAvailable: 3
  plugins: {mpi: ["--master=mpimaster", "--worker=mpiworker"]}
  tasks:
  - name: mpimaster
    replicas: 1
    policies: [{event: TaskCompleted, action: CompleteJob}]
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: mpi
          image: volcanosh/example-mpi:0.0.3
          resources: {requests: {cpu: "5"}}
          command:
          - /bin/sh
          - -c
          - >-
            mpirun --allow-run-as-root --host $MPI_HOST -np 2 --mca btl self,tcp
            /usr/bin/python3 -c "from mpi4py import MPI; c = MPI.COMM_WORLD;
            print('rank %d of %d on %s allreduce %d' % (c.rank, c.size, MPI.Get_processor_name(), c.allreduce(c.rank + 1)), flush=True)"
  - name: mpiworker
    replicas: 2
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - {name: mpi, image: volcanosh/example-mpi:0.0.3, resources: {requests: {cpu: "5"}}, command: ["/bin/sh", "-c", "exec sleep 600"]}
YAML
kubectl apply -f "$E2E_TMP/vcmpi.yaml" >/dev/null
vcmpi_done() { [ "$(kubectl get vcjob mpi-vc -o jsonpath='{.status.state.phase}' 2>/dev/null)" = Completed ]; }
if wait_until 240 vcmpi_done; then pass "Volcano mpi job completes on Slurm"; else fail "mpi-vc: $(kubectl get vcjob mpi-vc -o jsonpath='{.status.state.phase}')"; dump_job vcjob mpi-vc; fi
expect_match "its ranks allreduce across nodes" 'rank 1 of 2 on mpi-vc-mpiworker-1 allreduce 3' \
    "$(kubectl logs mpi-vc-mpimaster-0 2>&1)"

# Volcano: the svc plugin's host files name the tasks; a worker reaches the
# ps by that name on whatever node Slurm put it.
cat >"$E2E_TMP/vc.yaml" <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vc-svc
spec:
  minAvailable: 3
  schedulerName: volcano
  plugins:
    svc: []
    env: []
  policies:
  - event: TaskCompleted
    action: CompleteJob
  tasks:
  - name: ps
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: python:3
          ports:
          - containerPort: 2222
          command: ["/usr/bin/python3", "-u", "-c"]
          args:
          - |
            import socket
            s = socket.create_server(("", 2222))
            for _ in range(2):
                c, _ = s.accept(); print("ps got", c.recv(100).decode(), flush=True); c.close()
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - name: main
          image: python:3
          command: ["/usr/bin/python3", "-u", "-c"]
          args:
          - |
            import os, socket, time
            ps = open("/etc/volcano/ps.host").read().split()[0]
            for _ in range(300):
                try:
                    c = socket.create_connection((ps, 2222)); break
                except OSError:
                    time.sleep(0.2)
            c.sendall(("worker %s via %s" % (os.environ["VK_TASK_INDEX"], ps)).encode())
YAML
kubectl apply -f "$E2E_TMP/vc.yaml" >/dev/null
vc_done() { [ "$(kubectl get vcjob vc-svc -o jsonpath='{.status.state.phase}' 2>/dev/null)" = Completed ]; }
if wait_until 240 vc_done; then pass "vcjob vc-svc completes on Slurm"; else fail "vcjob vc-svc: $(kubectl get vcjob vc-svc -o jsonpath='{.status.state.phase}')"; dump_job vcjob vc-svc; fi
expect_match "the ps heard both workers by the svc plugin's names" \
    'ps got worker [01] via vc-svc-ps-0.vc-svc' "$(kubectl logs vc-svc-ps-0 2>&1)"

for j in pytorchjob/pytorch-ddp tfjob/tf-ps vcjob/vc-svc vcjob/mpi-vc mpijob/mpi-allreduce; do kubectl delete "$j" --wait=false >/dev/null; done
kubectl delete msjobs.mindspore.gitee.com ms-dynamic --wait=false >/dev/null
no_pods() { [ -z "$(kubectl get pods -o name 2>/dev/null)" ]; }
if wait_until no_pods; then pass "every pod gone"; else fail "pods left: $(kubectl get pods -o name)"; fi
empty_queue() { [ -z "$(squeue_active)" ]; }
if wait_until empty_queue; then pass "nothing of ours left in squeue"; else fail "left in squeue: $(squeue_active)"; fi
finish
