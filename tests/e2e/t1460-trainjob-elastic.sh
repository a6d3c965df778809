#!/usr/bin/env bash
# An elastic TrainJob (trainyard.io/elastic-nodes, a Trainyard extension):
# the annotation checked at admission; torchrun's c10d rendezvous variables
# instead of a master; a gang of the fewest nodes; a node whose agent dies
# is replaced while the others go on and re-rendezvous, and the job
# completes; the replacement counted on the job; with room for fewer nodes
# than it asks for, it trains with those there are.
cd "$(dirname "$0")"
source ./lib.sh
EX=../../examples/trainer
start_server --fake-gpus 2

# ---- admission ----
bad() { # NAME ANNOTATION NUMNODES RUNTIME
    kubectl apply -f - 2>&1 <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: $1, annotations: {trainyard.io/elastic-nodes: "$2"}}
spec:
  runtimeRef: {name: $4}
  trainer: {numNodes: $3, command: ["true"]}
EOF2
}
expect_match "MIN:MAX checked, with its field path" \
    'metadata.annotations\[trainyard.io/elastic-nodes\]: Invalid value: "3:2": must be MIN:MAX' \
    "$(bad e1 3:2 2 torch-distributed)"
expect_match "numNodes within the bounds" 'spec.trainer.numNodes: Invalid value: 5: must be within the elastic bounds 1:4' \
    "$(bad e2 1:4 5 torch-distributed)"
expect_match "elastic needs a torch runtime" 'needs a runtime with mlPolicy.torch' \
    "$(bad e3 1:2 1 xgboost-distributed)"
expect_eq "nothing refused was stored" "" "$(kubectl get trainjobs --no-headers 2>/dev/null)"

# ---- the example: 2..3 nodes, all three join ----
check "apply the elastic example" kubectl apply -f "$EX/torch-elastic.yaml"
state=$(wait_tj torch-elastic Complete 300)
expect_eq "elastic example completes" Complete "$state"
[ "$state" = Complete ] || dump_job trainjob torch-elastic
env0=$(kubectl get pod torch-elastic-node-0-2 -o jsonpath='{range .spec.containers[0].env[*]}{.name}={.value} {end}')
expect_match "c10d rendezvous variables" \
    'PET_NNODES=2:3 PET_NPROC_PER_NODE=1 PET_NODE_RANK=2 PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT=torch-elastic-node-0-0.torch-elastic:29400 PET_RDZV_ID=torch-elastic PET_RDZV_CONF=last_call_timeout=5,is_host=0 PET_MAX_RESTARTS=3' "$env0"
expect_eq "no static master for an elastic job" "" "$(grep -o 'PET_MASTER_ADDR' <<<"$env0")"
expect_eq "gang: the fewest nodes" 2 \
    "$(kubectl get podgroups.scheduling.volcano.sh torch-elastic -o jsonpath='{.spec.minMember}')"
expect_match "the world holds every node that joined" 'node 0 rank 0/[23] sum [36]' \
    "$(kubectl logs torch-elastic-node-0-0 -c node 2>&1)"
check "delete the example" kubectl delete trainjob torch-elastic

# ---- a node dies, is replaced, the job goes on ----
MARK=/dev/shm/ty-elastic-$$-$RANDOM
kubectl apply -f - >/dev/null <<EOF2
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: survivor
  annotations: {trainyard.io/elastic-nodes: "2:3"}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 3
    env:
    - {name: MARK, value: "$MARK"}
    - {name: PET_RDZV_CONF, value: "last_call_timeout=5"}
    command:
    - /bin/sh
    - -c
    - |
      cat > /tmp/train.py <<'PY'
      import os, signal, time, torch, torch.distributed as dist
      dist.init_process_group("gloo")
      rank, world = dist.get_rank(), dist.get_world_size()
      node = os.environ["PET_NODE_RANK"]
      mark = os.environ["MARK"] + "-node" + node
      # node 2's first life ends its torchrun agent mid-training: its pod fails
      doomed = node == "2" and not os.path.exists(mark)
      print(f"node {node} rank {rank}/{world} start", flush=True)
      t = torch.ones(1)
      # A world short of a node trains on until its agents let the
      # replacement in (a scale-up restart), however late it comes.
      step = 0
      while step < 30 or world < 3:
          t = torch.ones(1)
          dist.all_reduce(t)
          if doomed and step == 5:
              open(mark, "w").close()
              print(f"node {node} dies", flush=True)
              os.kill(os.getppid(), signal.SIGKILL)
              os._exit(1)
          step += 1
          time.sleep(0.2)
      print(f"node {node} rank {rank}/{world} done sum {t.item():.0f}", flush=True)
      dist.destroy_process_group()
      PY
      export PET_REDIRECTS=1 PET_TEE=1
      exec /usr/bin/python3 -m torch.distributed.run /tmp/train.py
EOF2
state=$(wait_tj survivor Complete 420)
expect_eq "a job that lost a node completes" Complete "$state"
[ "$state" = Complete ] || dump_job trainjob survivor
[ -e "$MARK-node2" ] && pass "node 2's first life died" || fail "node 2 never died"
rm -f "$MARK"-node*
expect_eq "one replacement counted" 1 \
    "$(kubectl get trainjob survivor -o jsonpath='{.metadata.annotations.trainyard\.io/node-replacements}')"
expect_eq "no whole-set restart" "" \
    "$(kubectl get trainjob survivor -o jsonpath='{.metadata.annotations.trainyard\.io/restarts}')"
expect_match "NodeReplaced Event" 'NodeReplaced.*survivor-node-0-2 failed: replacing it \(1 of 3\)' \
    "$(kubectl get events --field-selector involvedObject.name=survivor 2>&1)"
expect_match "the survivors finished training" 'node 0 rank [0-9]/[23] done sum [23]' \
    "$(kubectl logs survivor-node-0-0 -c node 2>&1)"
expect_eq "every node pod ended Succeeded" "Succeeded Succeeded Succeeded" \
    "$(kubectl get pods -l jobset.sigs.k8s.io/jobset-name=survivor -o jsonpath='{range .items[*]}{.status.phase} {end}' | sed 's/ $//')"

# ---- room for 2 of 3 nodes (one fake GPU each): it trains with 2 ----
kubectl apply -f - >/dev/null <<'EOF2'
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: roomy
  annotations: {trainyard.io/elastic-nodes: "1:3"}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numProcPerNode: 1
    resourcesPerNode:
      limits: {nvidia.com/gpu: 1}
    env:
    - {name: PET_RDZV_CONF, value: "last_call_timeout=5"}
    command:
    - /bin/sh
    - -c
    - |
      cat > /tmp/train.py <<'PY'
      import os, time, torch, torch.distributed as dist
      dist.init_process_group("gloo")
      rank, world = dist.get_rank(), dist.get_world_size()
      step = 0
      while step < 20 or world < 2:  # on until the second node is let in
          t = torch.ones(1)
          dist.all_reduce(t)
          step += 1
          time.sleep(0.3)
      print(f"node {os.environ['PET_NODE_RANK']} rank {rank}/{world} done", flush=True)
      dist.destroy_process_group()
      PY
      export PET_REDIRECTS=1 PET_TEE=1
      exec /usr/bin/python3 -m torch.distributed.run /tmp/train.py
EOF2
state=$(wait_tj roomy Complete 300)
expect_eq "a job with room for fewer nodes completes" Complete "$state"
[ "$state" = Complete ] || dump_job trainjob roomy
expect_eq "gang: one node" 1 "$(kubectl get podgroups.scheduling.volcano.sh roomy -o jsonpath='{.spec.minMember}')"
expect_match "it trained with the 2 nodes there was room for" 'node 0 rank [01]/2 done' \
    "$(kubectl logs roomy-node-0-0 -c node 2>&1)"
# (the third may get room as the others end; it then finds the rendezvous
# closed: it never trains)
expect_eq "the third node never trained" "" \
    "$(kubectl logs roomy-node-0-2 -c node 2>/dev/null | grep ' done' || true)"
finish
