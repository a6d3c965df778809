#!/usr/bin/env bash
# MPIJob kubeflow.org/v2beta1 (mpi-operator's API) beside v1: an OpenMPI
# launcher with 2 workers and slotsPerWorker 2 runs an mpi4py allreduce over
# 4 ranks through the hostfile (`<pod>.<job>.<ns>.svc slots=2`), the
# launcher's env and the rsh agent; the job's headless Service `<job>`, its
# ConfigMap and its ssh Secret exist; discovery prefers v1; a name is one
# object's across both versions; manifests of the shapes of mpi-operator's
# five v2beta1 examples pass a server-side dry run.
. "$(dirname "$0")/lib.sh"
start_server

cat >"$E2E_TMP/mpi2.yaml" <<'EOF'
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: allreduce
spec:
  slotsPerWorker: 2
  runPolicy:
    cleanPodPolicy: Running
  mpiImplementation: OpenMPI
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: mpi4py
            name: launcher
            command: ["/bin/sh", "-c"]
            args:
            - |
              echo "role=$K_MPI_JOB_ROLE hostfile=$OMPI_MCA_orte_default_hostfile slots=$OMPI_MCA_orte_set_default_slots fqdn=$OMPI_MCA_orte_keep_fqdn_hostnames"
              sed 's/^/hostfile /' /etc/mpi/hostfile
              sh /etc/mpi/discover_hosts.sh | sed 's/^/discover /'
              # (the pod runs as its user, to whom root's home is closed: the
              # mount is looked up, not listed)
              awk '$5 == "/root/.ssh" { print "ssh mounted" }' /proc/self/mountinfo
              # (held until the test has seen the job Running: Running is
              # recorded by a pass that sees every replica run)
              while [ ! -e @GO@ ]; do sleep 0.1; done
              exec mpirun --allow-run-as-root -np 4 --mca btl self,tcp /usr/bin/python3 -c "from mpi4py import MPI; c = MPI.COMM_WORLD; s = c.allreduce(c.rank + 1); h = c.gather(MPI.Get_processor_name()); c.rank or print('allreduce', s, 'over', c.size, 'ranks on', ','.join(h), flush=True)"
            resources:
              limits:
                cpu: 100m
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: mpi4py
            name: worker
            resources:
              limits:
                cpu: 100m
EOF
sed -i "s#@GO@#$E2E_TMP/go#" "$E2E_TMP/mpi2.yaml"
check "an MPIJob v2beta1 is accepted" kubectl apply -f "$E2E_TMP/mpi2.yaml"
expect_eq "stored with the CRD's defaults" "/root/.ssh AtStartup false" \
    "$(kubectl get mpijobs.v2beta1.kubeflow.org allreduce \
        -o jsonpath='{.spec.sshAuthMountPath} {.spec.launcherCreationPolicy} {.spec.runLauncherAsWorker}')"
expect_eq "the MPIJob v2beta1 runs" Running "$(wait_job mpijobs.v2beta1.kubeflow.org allreduce Running)"
touch "$E2E_TMP/go"
state=$(wait_job mpijobs.v2beta1.kubeflow.org allreduce Succeeded 240)
expect_eq "the MPIJob v2beta1 succeeds" Succeeded "$state"
[ "$state" = Succeeded ] || dump_job mpijobs.v2beta1.kubeflow.org allreduce
log=$(kubectl logs allreduce-launcher 2>&1)
expect_match "the launcher has mpi-operator's OpenMPI env" \
    '^role=launcher hostfile=/etc/mpi/hostfile slots=2 fqdn=true$' "$log"
expect_match "the hostfile names the workers through the Service, 2 slots each" \
    '^hostfile allreduce-worker-1.allreduce.default.svc slots=2$' "$log"
expect_match "discover_hosts.sh lists the workers" \
    '^discover allreduce-worker-0.allreduce.default.svc$' "$log"
expect_match "the ssh Secret is mounted at sshAuthMountPath" '^ssh mounted$' "$log"
# (rank 0 alone prints: ranks' lines interleave through mpirun)
expect_match "mpirun ran 4 ranks, 2 on each worker, that allreduce to 10" \
    '^allreduce 10 over 4 ranks on allreduce-worker-0,allreduce-worker-0,allreduce-worker-1,allreduce-worker-1$' "$log"
expect_eq "the job's headless Service <job> selects its pods" "None allreduce" \
    "$(kubectl get service allreduce -o jsonpath='{.spec.clusterIP} {.spec.selector.training\.kubeflow\.org/job-name}')"
expect_eq "the ssh Secret" kubernetes.io/ssh-auth \
    "$(kubectl get secret allreduce-ssh -o jsonpath='{.type}')"
expect_eq "the conditions, as mpi-operator sets them" "Created Running Succeeded" \
    "$(kubectl get mpijobs.v2beta1.kubeflow.org allreduce -o jsonpath='{.status.conditions[*].type}')"
expect_eq "the succeeded condition's reason" MPIJobSucceeded \
    "$(kubectl get mpijobs.v2beta1.kubeflow.org allreduce -o jsonpath='{.status.conditions[-1:].reason}')"
expect_eq "the launcher pod carries its job role" launcher \
    "$(kubectl get pod allreduce-launcher -o jsonpath='{.metadata.labels.training\.kubeflow\.org/job-role}')"

expect_match "kubectl prints NAME and AGE, as for mpi-operator's CRD" '^NAME +AGE$' \
    "$(kubectl get mpijobs.v2beta1.kubeflow.org 2>&1 | head -1)"

# Versions: kubeflow.org prefers v1, so `kubectl get mpijobs` lists v1 jobs.
expect_eq "discovery prefers kubeflow.org/v1" kubeflow.org/v1 \
    "$(kubectl get --raw /apis/kubeflow.org | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["preferredVersion"]["groupVersion"])')"
expect_eq "kubectl get mpijobs shows v1 objects only" "" \
    "$(kubectl get mpijobs -o name 2>&1)"
sed -e 's#kubeflow.org/v2beta1#kubeflow.org/v1#' "$E2E_TMP/mpi2.yaml" |
    grep -vE 'mpiImplementation' >"$E2E_TMP/mpi1.yaml"
out=$(kubectl create -f "$E2E_TMP/mpi1.yaml" 2>&1)
expect_match "a v1 MPIJob cannot take a v2beta1 one's name" \
    'mpijobs.kubeflow.org "allreduce" already exists' "$out"

# mpi-operator's examples/v2beta1 (pi with OpenMPI, Intel and MPICH, Horovod
# and tensorflow-benchmarks), their fields written here in the same shapes.
example() { # name impl sshpath launcher-command worker-command
    cat <<EOF
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: $1
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
    ttlSecondsAfterFinished: 60
$( [ -n "$2" ] && echo "  mpiImplementation: $2")
$( [ -n "$3" ] && echo "  sshAuthMountPath: $3")
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: example/$1
            imagePullPolicy: Always
            name: mpi-launcher
            securityContext:
              runAsUser: 1000
            $4
            resources:
              limits:
                cpu: 1
                memory: 1Gi
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: example/$1
            name: mpi-worker
            command:
            $5
            readinessProbe:
              tcpSocket:
                port: 2222
              initialDelaySeconds: 2
            resources:
              limits:
                cpu: 2
                memory: 4Gi
EOF
}
for spec in "pi||/home/mpiuser/.ssh" "pi-intel|Intel|/home/mpiuser/.ssh" \
    "pi-mpich|MPICH|/home/mpiuser/.ssh" "tensorflow-mnist||" "tensorflow-benchmarks||"; do
    IFS='|' read -r name impl ssh <<<"$spec"
    example "$name" "$impl" "$ssh" 'args: [mpirun, -n, "2", /home/mpiuser/pi]' \
        'args: [/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]' >"$E2E_TMP/ex-$name.yaml"
    check "example $name passes a server-side dry run" \
        kubectl apply --dry-run=server -f "$E2E_TMP/ex-$name.yaml"
done
out=$(kubectl get mpijobs.v2beta1.kubeflow.org -o name 2>&1)
expect_eq "a dry run stores nothing" "mpijob.kubeflow.org/allreduce" "$out"

# Rules mpi-operator's validation has.
sed -e 's/slotsPerWorker: 2/slotsPerWorker: -1/' -e 's/name: allreduce/name: bad/' \
    -e 's/mpiImplementation: OpenMPI/mpiImplementation: LAM/' "$E2E_TMP/mpi2.yaml" >"$E2E_TMP/bad.yaml"
out=$(kubectl apply -f "$E2E_TMP/bad.yaml" 2>&1)
expect_match "slotsPerWorker must not be negative" \
    'spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0' "$out"
expect_match "mpiImplementation is one of three" \
    'spec.mpiImplementation: Unsupported value: "LAM": supported values: "Intel", "MPICH", "OpenMPI"' "$out"

# launcherCreationPolicy WaitForWorkersReady: the launcher comes once both
# workers run, and the job runs as before.
sed -e 's/name: allreduce/name: waiter/' -e 's/-np 4/-np 2/' \
    -e 's/slotsPerWorker: 2/slotsPerWorker: 1\n  launcherCreationPolicy: WaitForWorkersReady/' \
    "$E2E_TMP/mpi2.yaml" >"$E2E_TMP/waiter.yaml"
check "a WaitForWorkersReady MPIJob is accepted" kubectl apply -f "$E2E_TMP/waiter.yaml"
state=$(wait_job mpijobs.v2beta1.kubeflow.org waiter Succeeded 240)
expect_eq "the WaitForWorkersReady MPIJob succeeds" Succeeded "$state"
[ "$state" = Succeeded ] || dump_job mpijobs.v2beta1.kubeflow.org waiter
expect_match "its 2 ranks allreduce to 3" '^allreduce 3 over 2 ranks on waiter-worker-0,waiter-worker-1$' \
    "$(kubectl logs waiter-launcher 2>&1)"

# runPolicy.managedBy another controller (MultiKueue): left alone.
sed -e 's/name: allreduce/name: kueued/' \
    -e 's#cleanPodPolicy: Running#managedBy: kueue.x-k8s.io/multikueue#' \
    "$E2E_TMP/mpi2.yaml" >"$E2E_TMP/kueued.yaml"
check "an MPIJob managed by MultiKueue is accepted" kubectl apply -f "$E2E_TMP/kueued.yaml"

# runPolicy.suspend: no pods, condition Suspended.
sed -e 's/name: allreduce/name: held/' -e 's/cleanPodPolicy: Running/suspend: true/' \
    "$E2E_TMP/mpi2.yaml" >"$E2E_TMP/held.yaml"
check "a suspended MPIJob is accepted" kubectl apply -f "$E2E_TMP/held.yaml"
expect_eq "it is Suspended" Suspended "$(wait_job mpijobs.v2beta1.kubeflow.org held Suspended 60)"
expect_eq "a suspended MPIJob has no pods" "" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=held -o name 2>&1)"
# (queued before the suspended one, which has been handled by now)
expect_eq "the MultiKueue one has no pods and no status" ":" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=kueued -o name 2>&1):$(kubectl get \
        mpijobs.v2beta1.kubeflow.org kueued -o jsonpath='{.status.conditions}')"

check "the MPIJob v2beta1 is deleted" kubectl delete mpijobs.v2beta1.kubeflow.org allreduce
wait_until sh -c '[ -z "$(kubectl get pods -l training.kubeflow.org/job-name=allreduce -o name)" ]'
expect_eq "its pods go with it" "" \
    "$(kubectl get pods -l training.kubeflow.org/job-name=allreduce -o name 2>&1)"
finish
