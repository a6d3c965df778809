#!/usr/bin/env bash
# t0810-vcjob-pytorch.sh - a real gloo DDP run through a Volcano Job: the
# pytorch plugin's MASTER_ADDR (<job>-master-0.<job>, resolved through the svc
# plugin's hostname/subdomain), MASTER_PORT, WORLD_SIZE and RANK drive 1
# master + 2 workers to Completed (every task reached its minAvailable), and every rank ends with the same weights.
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "ok   - skipped: no torch"; exit 0; }
start_server

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vc-ddp}
spec:
  minAvailable: 3
  plugins: {pytorch: ["--master=master", "--worker=worker", "--port=23456"]}
  policies: [{event: PodFailed, action: AbortJob}]
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: pytorch
          image: docker.io/pytorch/pytorch:1.13.1-cpu
          command: ["/usr/bin/python3", "-u", "-c"]
          args:
          - &train |
            import os, torch, torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            dist.init_process_group("gloo")
            rank, world = dist.get_rank(), dist.get_world_size()
            print(f"rank {rank}/{world} master {os.environ['MASTER_ADDR']}", flush=True)
            torch.manual_seed(0)
            model = DDP(torch.nn.Linear(4, 1))
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            g = torch.Generator().manual_seed(100 + rank)
            for step in range(30):
                x = torch.randn(32, 4, generator=g)
                loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
                opt.zero_grad(); loss.backward(); opt.step()
            w = model.module.weight.detach().flatten()
            print("final weights", " ".join(f"{v:.4f}" for v in w.tolist()), flush=True)
            dist.destroy_process_group()
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: pytorch
          image: docker.io/pytorch/pytorch:1.13.1-cpu
          command: ["/usr/bin/python3", "-u", "-c"]
          args: [*train]
YAML

phase=""
for _ in $(seq 960); do
    phase=$(kubectl get vcjob vc-ddp -o jsonpath='{.status.state.phase}' 2>/dev/null)
    case "$phase" in Completed|Failed|Aborted) break ;; esac
    sleep 0.25
done
expect_eq "DDP Volcano Job completes" Completed "$phase"
for p in vc-ddp-master-0 vc-ddp-worker-0 vc-ddp-worker-1; do
    # (a job may complete with its master: a worker's last line may come after)
    wait_until log_has "$p" '^final weights'
    kubectl logs "$p" >"$E2E_TMP/$p.log" 2>&1
done
expect_match "master is rank 0 of 3" 'rank 0/3 master vc-ddp-master-0.vc-ddp' \
    "$(cat "$E2E_TMP/vc-ddp-master-0.log")"
expect_match "worker-1 is rank 2 of 3" 'rank 2/3' "$(cat "$E2E_TMP/vc-ddp-worker-1.log")"
w0=$(grep '^final weights' "$E2E_TMP/vc-ddp-master-0.log")
w1=$(grep '^final weights' "$E2E_TMP/vc-ddp-worker-0.log")
w2=$(grep '^final weights' "$E2E_TMP/vc-ddp-worker-1.log")
if [ -n "$w0" ] && [ "$w0" = "$w1" ] && [ "$w0" = "$w2" ]; then
    pass "all ranks agree on the final weights"
else
    fail "ranks disagree: '$w0' / '$w1' / '$w2'"
fi
[ "$E2E_FAILS" -eq 0 ] || dump_job vcjob vc-ddp
finish
