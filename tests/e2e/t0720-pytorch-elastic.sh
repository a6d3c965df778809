#!/usr/bin/env bash
# An elastic PyTorchJob started with torchrun, which takes its whole
# configuration from the PET_* variables the operator injects (c10d rendezvous
# at worker-0).
. "$(dirname "$0")/lib.sh"
start_server
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: elastic
spec:
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 2
    maxReplicas: 2
    maxRestarts: 1
  nprocPerNode: "1"
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch:cpu
            command: ["/bin/sh", "-c"]
            args:
            - |
              f=$(mktemp /tmp/elastic.XXXXXX.py)
              cat >"$f" <<'PY'
              import os, torch, torch.distributed as dist
              dist.init_process_group("gloo")
              t = torch.tensor([float(dist.get_rank() + 1)])
              dist.all_reduce(t)
              print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum {t.item():.0f}", flush=True)
              dist.destroy_process_group()
              PY
              echo "PET_NNODES=$PET_NNODES PET_RDZV_ENDPOINT=$PET_RDZV_ENDPOINT PET_RDZV_BACKEND=$PET_RDZV_BACKEND"
              # Debian's torch 1.13 on Python 3.11 cannot parse torchrun's default
              # --redirects/--tee ("0": IntFlag no longer iterates zero); 1 works.
              export PET_REDIRECTS=1 PET_TEE=1
              exec /usr/bin/python3 -m torch.distributed.run "$f"
YAML
state=$(wait_job pytorchjob elastic Succeeded 240)
expect_eq "elastic PyTorchJob succeeds" "Succeeded" "$state"
[ "$state" = Succeeded ] || dump_job pytorchjob elastic
# Any worker's success is the job's: worker-0 may still be printing.
check "worker-0 ends Succeeded too" wait_until pods_in_phase Succeeded elastic-worker-0
out=$(kubectl logs elastic-worker-0 2>&1)
expect_match "PET_* variables as upstream" 'PET_NNODES=2:2 PET_RDZV_ENDPOINT=elastic-worker-0:23456 PET_RDZV_BACKEND=c10d' "$out"
expect_match "torchrun formed a world of 2 and all-reduced" 'rank [01]/2 sum 3' "$out"
finish
