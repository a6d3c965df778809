#!/usr/bin/env bash
# MPIJob v1 without a container named `mpi` (training-operator 1.9's own
# examples/mpi/tensorflow-mnist-elastic.yaml names them mpi-launcher and
# mpi-worker) is accepted and runs: the first container is the MPI one (env,
# /etc/mpi hostfile, discover_hosts.sh and rsh agent); the launcher is in the
# workers' gang (PodGroup minMember = workers + launcher) and its mpirun
# reaches both workers.
. "$(dirname "$0")/lib.sh"
start_server

cat >"$E2E_TMP/mpi.yaml" <<'EOF'
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: mpi-elastic
spec:
  slotsPerWorker: 1
  cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: horovod/horovod:0.20.0-tf2.3.0-torch1.6.0-mxnet1.5.0-py3.7-cpu
            name: mpi-launcher
            command: ["/bin/sh", "-c"]
            args:
            - |
              echo "agent=$OMPI_MCA_plm_rsh_agent hostfile=$OMPI_MCA_orte_default_hostfile"
              sh /etc/mpi/discover_hosts.sh | sed 's/^/discover /'
              exec mpirun --allow-run-as-root -np 2 --mca btl self,tcp /usr/bin/python3 -c "from mpi4py import MPI; c = MPI.COMM_WORLD; s = c.allreduce(c.rank + 1); l = c.gather('rank %d of %d allreduce %d' % (c.rank, c.size, s)); c.rank == 0 and print(chr(10).join(l), flush=True)"
            resources:
              limits:
                cpu: 100m
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: horovod/horovod:0.20.0-tf2.3.0-torch1.6.0-mxnet1.5.0-py3.7-cpu
            name: mpi-worker
            resources:
              limits:
                cpu: 100m
EOF
check "MPIJob without a container named mpi is accepted" kubectl apply -f "$E2E_TMP/mpi.yaml"
wait_until kubectl get podgroup mpi-elastic
expect_eq "PodGroup minMember = 2 workers + launcher" 3 \
    "$(kubectl get podgroup mpi-elastic -o jsonpath='{.spec.minMember}')"
expect_eq "PodGroup minResources: the same 3 pods" 300m \
    "$(kubectl get podgroup mpi-elastic -o jsonpath='{.spec.minResources.cpu}')"
state=$(wait_job mpijob mpi-elastic Succeeded 240)
expect_eq "the MPIJob succeeds" Succeeded "$state"
[ "$state" = Succeeded ] || dump_job mpijob mpi-elastic
log=$(kubectl logs mpi-elastic-launcher 2>&1)
expect_match "the first launcher container has the rsh agent and hostfile" \
    '^agent=/etc/mpi/kubexec.sh hostfile=/etc/mpi/hostfile$' "$log"
expect_match "discover_hosts.sh lists both workers" 'discover mpi-elastic-worker-1:1' "$log"
expect_match "mpirun ran 2 ranks that allreduce to 3" 'rank 1 of 2 allreduce 3' "$log"
finish
