#!/usr/bin/env bash
# Two DDP jobs on the same default port (23456) at once; then the server is
# killed with SIGKILL while a job runs, restarted on the same data dir, and
# the job still completes with its full log.
. "$(dirname "$0")/lib.sh"
E2E_DATA="$E2E_TMP/data"
start_server
ddp() { # ddp NAME STEPS_SLEEP
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: $1
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch:cpu
            command: ["/usr/bin/python3", "-u", "-c"]
            args:
            - &s |
              import os, time, torch, torch.distributed as dist
              dist.init_process_group("gloo")
              for i in range(5):
                  t = torch.tensor([1.0]); dist.all_reduce(t)
                  print(f"step {i} world {int(t.item())} port {os.environ['MASTER_PORT']}", flush=True)
                  time.sleep($2)
              dist.destroy_process_group()
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch:cpu
            command: ["/usr/bin/python3", "-u", "-c"]
            args: [*s]
YAML
}
ddp port-a 0.2
ddp port-b 0.2
sa=$(wait_job pytorchjob port-a Succeeded 180)
sb=$(wait_job pytorchjob port-b Succeeded 180)
expect_eq "job A on port 23456 succeeds beside B" "Succeeded" "$sa"
expect_eq "job B on port 23456 succeeds beside A" "Succeeded" "$sb"
[ "$sa" = Succeeded ] || dump_job pytorchjob port-a
expect_match "both used the default port" 'port 23456' "$(kubectl logs port-b-master-0 2>&1)"

# --- SIGKILL the server mid-job ---
ddp slow 2
slow_started() { kubectl logs slow-master-0 2>/dev/null | grep -q 'step 1'; }
wait_until slow_started
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
# a step happens while no server runs (its log is on disk)
slow_stepped() {
    local log
    log=$(find "${E2E_DATA:-$E2E_TMP/data}" -path '*/logs/default/slow-master-0/*' -name '*.log' 2>/dev/null | head -1)
    [ -n "$log" ] && grep -q 'step 2' "$log"
}
wait_until slow_stepped
start_server
state=$(wait_job pytorchjob slow Succeeded 120)
expect_eq "the job completes after the server was SIGKILLed" "Succeeded" "$state"
[ "$state" = Succeeded ] || dump_job pytorchjob slow
log=$(kubectl logs slow-master-0 2>&1)
expect_eq "the full log survived (5 steps)" "5" "$(printf '%s\n' "$log" | grep -c '^step ')"
finish
