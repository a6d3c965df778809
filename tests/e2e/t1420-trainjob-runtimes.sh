#!/usr/bin/env bash
# TrainJobs on the other built-in runtimes run real jobs to Complete:
# xgboost-distributed (XGBoost's collective over DMLC_*), mpi-distributed
# (mpi4py allreduce: the launcher after its nodes are Ready, hostfile and
# ssh Secret), tensorflow/paddle/mindspore-distributed (their env, host
# names resolved), jax-distributed when jax is installed, and always its
# coordinator contract: processes that meet at JAX_COORDINATOR_ADDRESS with
# JAX_PROCESS_ID / JAX_NUM_PROCESSES, as jax.distributed.initialize does
# (Debian 12 packages no jax).
cd "$(dirname "$0")"
source ./lib.sh
EX=../../examples/trainer
start_server

logs() { kubectl logs "$1" -c "${2:-node}" 2>&1; }

jobs="xgb-dist:xgboost mpi-allreduce:mpi tf-dist:tensorflow paddle-dist:paddle ms-dist:mindspore"
jax=""
if /usr/bin/python3 -c 'import jax' 2>/dev/null; then jax=1; jobs="$jobs jax-dist:jax"; fi
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: jax-meet}
spec:
  runtimeRef: {name: jax-distributed}
  trainer:
    numNodes: 3
    command:
    - /usr/bin/python3
    - -u
    - -c
    - |
      import os, socket, time
      host, port = os.environ["JAX_COORDINATOR_ADDRESS"].rsplit(":", 1)
      n, me = int(os.environ["JAX_NUM_PROCESSES"]), int(os.environ["JAX_PROCESS_ID"])
      if me == 0:  # the coordinator: gathers every id, answers the sum
          srv = socket.create_server(("", int(port)))
          peers = [srv.accept()[0] for _ in range(n - 1)]
          total = 1 + sum(int(c.recv(16)) for c in peers)
          for c in peers:
              c.sendall(str(total).encode()); c.close()
      else:
          for _ in range(600):
              try:
                  c = socket.create_connection((host, int(port))); break
              except OSError:
                  time.sleep(0.2)
          c.sendall(str(me + 1).encode()); total = int(c.recv(16))
      print(f"process {me}/{n} sum {total}", flush=True)
EOF2
for j in $jobs; do
    check "apply ${j#*:}-distributed" kubectl apply -f "$EX/${j#*:}-distributed.yaml"
done
for j in $jobs jax-meet:jax-coordinator; do
    state=$(wait_tj "${j%%:*}" Complete 240)
    expect_eq "${j#*:}: ${j%%:*} completes" Complete "$state"
    [ "$state" = Complete ] || dump_job trainjob "${j%%:*}"
done

# xgboost
expect_match "xgboost: rank 0 of 2 allreduced" 'rank 0/2 .* allreduce 3' "$(logs xgb-dist-node-0-0)"
expect_match "xgboost: rank 1 of 2 allreduced" 'rank 1/2 .* allreduce 3' "$(logs xgb-dist-node-0-1)"
expect_match "xgboost: DMLC_* injected" 'DMLC_TRACKER_URI=xgb-dist-node-0-0.xgb-dist DMLC_TRACKER_PORT=29500 DMLC_TASK_ID=1 DMLC_NUM_WORKER=2' \
    "$(kubectl get pod xgb-dist-node-0-1 -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value} {end}')"

# mpi
out=$(logs mpi-allreduce-launcher-0-0 launcher)
expect_match "mpi: rank 0 of 2 allreduced" 'rank 0 of 2 on .* allreduce 3' "$out"
expect_match "mpi: rank 1 of 2 allreduced" 'rank 1 of 2 on .* allreduce 3' "$out"
expect_eq "mpi: hostfile lists the nodes" "mpi-allreduce-node-0-0.mpi-allreduce slots=1
mpi-allreduce-node-0-1.mpi-allreduce slots=1" \
    "$(kubectl get configmap mpi-allreduce-mpi-hostfile -o jsonpath='{.data.hostfile}')"
expect_eq "mpi: ssh Secret with upstream's keys" "authorized_keys id_rsa ssh-publickey" \
    "$(kubectl get secret mpi-allreduce-mpi-ssh-auth -o json | /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["data"])))')"
expect_match "mpi: OMPI_* on the launcher" 'OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10 OMPI_MCA_orte_keep_fqdn_hostnames=true OMPI_MCA_orte_set_default_slots=1' \
    "$(kubectl get pod mpi-allreduce-launcher-0-0 -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value} {end}')"
expect_eq "mpi: gang of the nodes (the launcher joins later)" 2 \
    "$(kubectl get podgroups.scheduling.volcano.sh mpi-allreduce -o jsonpath='{.spec.minMember}')"
expect_match "mpi: jobsStatus: the launcher succeeded" "launcher:1:0" \
    "$(kubectl get trainjob mpi-allreduce -o jsonpath='{range .status.jobsStatus[*]}{.name}:{.succeeded}:{.failed} {end}')"

# tensorflow, paddle, mindspore
expect_match "tensorflow: TF_CONFIG worker 1 of 2" 'task worker 1 of 2 at tf-dist-node-0-1.tf-dist:2222' "$(logs tf-dist-node-0-1)"
expect_match "paddle: PADDLE_* (master node 0)" 'paddle job paddle-dist nnodes 2 master paddle-dist-node-0-0.paddle-dist:36543' "$(logs paddle-dist-node-0-1)"
expect_match "mindspore: MS_*" 'ms MS_WORKER ms-dist-node-0-1.ms-dist of 2 sched ms-dist-node-0-0.ms-dist:2222' "$(logs ms-dist-node-0-1)"

for i in 0 1 2; do
    expect_match "jax-distributed: process $i of 3 met the others at the coordinator" "process $i/3 sum 6" "$(logs jax-meet-node-0-$i)"
done
if [ -n "$jax" ]; then
    expect_match "jax: 2 processes summed" 'process 1/2 sum 3' "$(logs jax-dist-node-0-1)"
else
    echo "skip - jax is not installed for /usr/bin/python3"
fi
finish
