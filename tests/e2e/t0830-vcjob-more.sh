#!/usr/bin/env bash
# t0830-vcjob-more.sh - Volcano Jobs, continued: `trainyard job suspend|resume`
# (AbortJob / ResumeJob as vcctl issues them, usage errors, NotFound, -n);
# the JobUpdated policy event (a spec update restarts the job with its new
# size; without a policy the update only scales); the ssh plugin's Secret
# (an OpenSSH key pair, authorized_keys and a config naming every pod,
# mounted at /root/.ssh or --ssh-key-file-path); the MindSpore-style example
# Completes; an mpi-plugin job runs an mpi4py allreduce through mpirun.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."

start_server

# wait_phase NAME PHASE [SECONDS] [NS]: waits for status.state.phase; prints the last seen.
wait_phase() {
    local name=$1 want=$2 secs=${3:-$E2E_WAIT} ns=${4:-default} phase="" end
    [ "$secs" -lt "$E2E_WAIT" ] && secs=$E2E_WAIT
    end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        phase=$(kubectl get vcjob "$name" -n "$ns" -o jsonpath='{.status.state.phase}' 2>/dev/null)
        [ "$phase" = "$want" ] && break
        sleep 0.25
    done
    echo "$phase"
}

# until_eq SECONDS WANT CMD...: re-runs CMD until it prints WANT; prints the last output.
until_eq() {
    local secs=$1 want=$2 got="" end
    shift 2
    [ "$secs" -lt "$E2E_WAIT" ] && secs=$E2E_WAIT
    end=$((SECONDS + secs))
    while [ $SECONDS -lt $end ]; do
        got=$("$@" 2>/dev/null)
        [ "$got" = "$want" ] && break
        sleep 0.25
    done
    echo "$got"
}

IDLE="trap 'exit 0' TERM; while :; do sleep 1 & wait; done"

# --- trainyard job suspend / resume
sleeper() { # sleeper NAME [NS]
    kubectl apply -n "${2:-default}" -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: 1
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: busybox, command: ["/bin/sh", "-c", "$IDLE"]}
YAML
}
sleeper sj
expect_eq "sleeper runs" Running "$(wait_phase sj Running 30)"
out=$("$TRAINYARD" job suspend sj 2>&1)
expect_eq "job suspend prints what it did" "job.batch.volcano.sh/sj suspended" "$out"
expect_eq "suspend aborts the job" Aborted "$(wait_phase sj Aborted 30)"
expect_eq "suspend killed the pod" "" \
    "$(until_eq 20 "" kubectl get pods -l volcano.sh/job-name=sj -o jsonpath='{.items[?(@.status.phase=="Running")].metadata.name}')"
check "job resume" "$TRAINYARD" job resume sj
expect_eq "resume restarts it (Running again)" Running "$(wait_phase sj Running 30)"
expect_eq "ResumeJob counts as a retry, new version" "1 1" \
    "$(kubectl get vcjob sj -o jsonpath='{.status.retryCount} {.status.version}')"
expect_eq "the action annotation is consumed" "" \
    "$(kubectl get vcjob sj -o jsonpath='{.metadata.annotations.trainyard\.io/action}')"
expect_match "events say which action ran" "Start to execute action ResumeJob on CommandIssued" \
    "$(kubectl describe vcjob sj 2>&1)"
"$TRAINYARD" job suspend -N sj >/dev/null 2>&1
expect_eq "vcctl's -N NAME form" Aborted "$(wait_phase sj Aborted 30)"

out=$("$TRAINYARD" job suspend nosuch 2>&1); rc=$?
expect_eq "a missing job: exit 1" 1 "$rc"
expect_match "a missing job: NotFound" 'NotFound.*"nosuch" not found' "$out"
"$TRAINYARD" job >/dev/null 2>&1; rc1=$?
"$TRAINYARD" job pause sj >/dev/null 2>&1; rc2=$?
"$TRAINYARD" job suspend >/dev/null 2>&1; rc3=$?
"$TRAINYARD" job resume a b >/dev/null 2>&1; rc4=$?
expect_eq "usage errors exit 2" "2 2 2 2" "$rc1 $rc2 $rc3 $rc4"
expect_match "unknown subcommand is named" 'unknown job command "pause"' \
    "$("$TRAINYARD" job pause sj 2>&1)"

kubectl create namespace team >/dev/null 2>&1
sleeper sj team
expect_eq "sleeper in namespace team runs" Running "$(wait_phase sj Running 30 team)"
check "job suspend -n team" "$TRAINYARD" job suspend sj -n team
expect_eq "the job in team is Aborted" Aborted "$(wait_phase sj Aborted 30 team)"
expect_eq "the default one was not touched again" 1 \
    "$(kubectl get vcjob sj -o jsonpath='{.status.retryCount}')"
kubectl delete vcjob sj >/dev/null 2>&1
kubectl delete vcjob sj -n team >/dev/null 2>&1

# --- JobUpdated: RestartJob on a spec update; without a policy, only scaling
updjob() { # updjob NAME POLICIES
    kubectl apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  plugins: {svc: []}
  policies: $2
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: busybox, command: ["/bin/sh", "-c", "echo workers=\$VC_WORKER_NUM; $IDLE"]}
  - name: worker
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: c, image: busybox, command: ["/bin/sh", "-c", "$IDLE"]}
YAML
}
worker_num() { kubectl get pod "$1" -o jsonpath='{.spec.containers[0].env[?(@.name=="VC_WORKER_NUM")].value}'; }
updjob upd '[{event: JobUpdated, action: RestartJob}]'
updjob scale '[{event: PodFailed, action: RestartJob}]'
expect_eq "upd runs" Running "$(wait_phase upd Running 30)"
expect_eq "scale runs" Running "$(wait_phase scale Running 30)"
expect_eq "observedGeneration recorded" 1 "$(kubectl get vcjob upd -o jsonpath='{.status.observedGeneration}')"
old_uid=$(kubectl get pod scale-master-0 -o jsonpath='{.metadata.uid}')
for j in upd scale; do
    kubectl patch vcjob $j --type=json \
        -p '[{"op":"replace","path":"/spec/tasks/1/replicas","value":2}]' >/dev/null
done
expect_eq "JobUpdated -> RestartJob: retryCount 1, version 1" "1 1" \
    "$(until_eq 30 "1 1" kubectl get vcjob upd -o jsonpath='{.status.retryCount} {.status.version}')"
expect_eq "restarted job runs again" Running "$(wait_phase upd Running 30)"
expect_eq "every pod recreated with the new size (master sees 2 workers)" 2 \
    "$(until_eq 30 2 worker_num upd-master-0)"
expect_eq "the new worker exists" Running \
    "$(until_eq 30 Running kubectl get pod upd-worker-1 -o jsonpath='{.status.phase}')"
expect_match "event: RestartJob on JobUpdated" "Start to execute action RestartJob on JobUpdated" \
    "$(kubectl describe vcjob upd 2>&1)"
expect_eq "no JobUpdated policy: the new worker is just added" Running \
    "$(until_eq 30 Running kubectl get pod scale-worker-1 -o jsonpath='{.status.phase}')"
expect_eq "no JobUpdated policy: no restart, same master pod" "0 0 $old_uid" \
    "$(kubectl get vcjob scale -o jsonpath='{.status.retryCount} {.status.version}') $(kubectl get pod scale-master-0 -o jsonpath='{.metadata.uid}')"
expect_eq "status.observedGeneration follows" 2 "$(kubectl get vcjob scale -o jsonpath='{.status.observedGeneration}')"
kubectl delete vcjob upd scale >/dev/null 2>&1

# --- the ssh plugin
SSH_CHECK='
d=${SSH_DIR:-/root/.ssh}
pub=$(cut -d" " -f1,2 $d/id_rsa.pub)
[ "$(ssh-keygen -y -f $d/id_rsa | cut -d" " -f1,2)" = "$pub" ] && echo keypair-ok
[ "$(cut -d" " -f1,2 $d/authorized_keys)" = "$pub" ] && echo authorized-ok
echo mode=$(stat -c %a $d/id_rsa)
[ -z "${SSH_DIR:-}" ] && ssh -F $d/config -G sshj-node-1 | grep "^hostname "
# the peer has a line while it runs (there is no DNS), from before either
# starts until it ends: so neither ends before both have met (each listens on
# its own address and dials the other until it answers), however slow
if [ -z "${SSH_DIR:-}" ]; then
    getent hosts sshj-node-1.sshj >/dev/null && echo resolves
fi
sum=$(md5sum < $d/id_rsa)
echo key=${sum%% *}
[ -z "${SSH_DIR:-}" ] && /usr/bin/python3 -c "
import socket, threading, time
me = socket.gethostname()
peer = [h for h in (\"sshj-node-0\", \"sshj-node-1\") if h != me][0] + \".sshj\"
srv = socket.create_server((socket.gethostbyname(me), 7022))
t = threading.Thread(target=lambda: srv.accept()[0].recv(16)); t.start()
while True:
    try:
        socket.create_connection((peer, 7022), timeout=2).sendall(b\"hi\"); break
    except OSError:
        time.sleep(0.1)
t.join()
"
true
'
sshjob() { # sshjob NAME SSH_ARGS [SSH_DIR]
    kubectl apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  plugins: {svc: [], ssh: $2}
  tasks:
  - name: node
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          env: [{name: SSH_DIR, value: "${3:-}"}]
          command: ["/bin/sh", "-c", $(printf '%s' "$SSH_CHECK" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')]
YAML
}
sshjob sshj '[]'
expect_eq "ssh job completes" Completed "$(wait_phase sshj Completed 60)"
log0=$(kubectl logs sshj-node-0 2>&1); log1=$(kubectl logs sshj-node-1 2>&1)
expect_match "id_rsa is the pair of id_rsa.pub (ssh-keygen -y)" '^keypair-ok$' "$log0"
expect_match "authorized_keys admits the pair" '^authorized-ok$' "$log0"
expect_match "id_rsa is 0600 at /root/.ssh" '^mode=600$' "$log0"
expect_match "ssh config: Host <pod> -> HostName <pod>.<job>" '^hostname sshj-node-1.sshj$' "$log0"
expect_match "the HostName resolves in the pod" '^resolves$' "$log0"
expect_match "every pod has the same key" "^$(echo "$log0" | grep '^key=.')\$" "$log1"
expect_eq "Secret <job>-ssh with upstream's keys" "authorized_keys config id_rsa id_rsa.pub" \
    "$(kubectl get secret sshj-ssh -o json | python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["data"])))')"
expect_eq "the Secret is owned by the job" Job \
    "$(kubectl get secret sshj-ssh -o jsonpath='{.metadata.ownerReferences[0].kind}')"
sshjob sshk "[\"--ssh-key-file-path\", \"$E2E_TMP/keys\"]" "$E2E_TMP/keys"
expect_eq "ssh job with --ssh-key-file-path completes" Completed "$(wait_phase sshk Completed 60)"
expect_match "keys at --ssh-key-file-path" '^keypair-ok$' "$(kubectl logs sshk-node-0 2>&1)"
k1=$(kubectl logs sshj-node-0 2>&1 | grep '^key='); k2=$(kubectl logs sshk-node-0 2>&1 | grep '^key=')
if [ -n "$k1" ] && [ -n "$k2" ] && [ "$k1" != "$k2" ]; then pass "each job has its own key pair"; else fail "each job has its own key pair ($k1 / $k2)"; fi
if [ -x /usr/sbin/sshd ]; then
    echo "# note: sshd is installed, but per-pod sshd is not exercised here (see docs/compatibility.md)"
fi
kubectl delete vcjob sshj sshk >/dev/null 2>&1

# --- the MindSpore-style example
kubectl apply -f examples/volcano-mindspore.yaml >/dev/null
st=$(wait_phase ms-volcano Completed 120)
expect_eq "MindSpore-style scheduler/worker job Completes" Completed "$st"
[ "$st" = Completed ] || dump_job vcjob ms-volcano
expect_match "scheduler heard both workers and reduced" 'scheduler: 2 workers, allreduce 3' \
    "$(kubectl logs ms-volcano-scheduler-0 2>&1)"
expect_match "worker reached the scheduler by <job>-scheduler-0.<job>" 'worker 1 of 2: allreduce 3' \
    "$(kubectl logs ms-volcano-worker-1 2>&1)"

# --- the mpi plugin: mpirun runs an mpi4py allreduce over MPI_HOST
kubectl apply -f - >/dev/null <<YAML
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
          command:
          - /bin/sh
          - -c
          - >-
            echo MPI_HOST=\$MPI_HOST;
            mpirun --allow-run-as-root --host \$MPI_HOST -np 2 --mca btl self,tcp
            /usr/bin/python3 -c "from mpi4py import MPI; c = MPI.COMM_WORLD;
            s = c.allreduce(c.rank + 1);
            lines = c.gather('rank %d of %d on %s allreduce %d' % (c.rank, c.size, MPI.Get_processor_name(), s));
            c.rank == 0 and print(chr(10).join(lines), flush=True)"
  - name: mpiworker
    replicas: 2
    template:
      spec:
        restartPolicy: OnFailure
        containers:
        - {name: mpi, image: volcanosh/example-mpi:0.0.3, command: ["/bin/sh", "-c", "$IDLE"]}
YAML
st=$(wait_phase mpi-vc Completed 120)
expect_eq "mpi job Completes (TaskCompleted -> CompleteJob)" Completed "$st"
[ "$st" = Completed ] || dump_job vcjob mpi-vc
log=$(kubectl logs mpi-vc-mpimaster-0 2>&1)
expect_match "MPI_HOST lists the workers" '^MPI_HOST=mpi-vc-mpiworker-0.mpi-vc,mpi-vc-mpiworker-1.mpi-vc$' "$log"
expect_match "rank 0 of 2 allreduces to 3" 'rank 0 of 2 on mpi-vc-mpiworker-0.* allreduce 3' "$log"
expect_match "rank 1 of 2 allreduces to 3" 'rank 1 of 2 on mpi-vc-mpiworker-1.* allreduce 3' "$log"
expect_eq "admission added svc and ssh; ssh Secret made" "mpi-vc-ssh" \
    "$(kubectl get secret mpi-vc-ssh -o jsonpath='{.metadata.name}')"

# minSuccess: two of three workers succeeding completes the job while the
# third still runs
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: early}
spec:
  minAvailable: 3
  minSuccess: 2
  tasks:
  - name: w
    replicas: 3
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: ["/bin/sh", "-c", "case $(cat /proc/sys/kernel/hostname) in early-w-2) sleep 300 ;; *) exit 0 ;; esac"]
YAML
expect_eq "minSuccess completes the job early" Completed "$(wait_phase early Completed 60)"
expect_eq "with the slow worker still unfinished" "" \
    "$(kubectl get pod early-w-2 -o jsonpath='{.status.phase}' 2>/dev/null | grep -x Succeeded)"

# an invalid spec is rejected with the field paths
out=$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  minAvailable: 5
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        containers: [{name: c, image: busybox}]
  - name: w
    replicas: -1
    template:
      spec:
        containers: [{name: c, image: busybox}]
YAML
)
expect_match "an invalid Job is rejected as Invalid" 'is invalid' "$out"
expect_match "naming the fields" 'spec\.tasks\[1\]\.(name|replicas)' "$out"
check "nothing was created" bash -c '! kubectl get vcjob bad'

finish
