#!/usr/bin/env bash
# t0520-runtime-names.sh - names before commands: every name in a replica's
# environment (TF_CONFIG's tasks, /etc/volcano/*.host) resolves from the
# replica's first instruction, however loaded the machine is. Two CPU-bound
# processes run throughout; every replica looks up each of its peers once,
# with no retry, before doing anything else, and fails when one is unknown.
# Then each meets every peer (a finished pod's name resolves no more, as on
# Kubernetes, so none may end before all have looked).
source "$(dirname "$0")/lib.sh"

HOGS=()
stop_hogs() { for h in "${HOGS[@]}"; do kill "$h" 2>/dev/null; done; HOGS=(); }
trap 'stop_hogs; cleanup' EXIT
for _ in 1 2; do yes >/dev/null & HOGS+=($!); done

start_server

kubectl apply -f - <<'YAML' || fail "apply"
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: names}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow
            command: ["/usr/bin/python3", "-c"]
            args:
            - &resolve |
              import glob, json, os, socket, threading, time
              if "TF_CONFIG" in os.environ:
                  cfg = json.loads(os.environ["TF_CONFIG"])
                  addrs = [a for l in cfg["cluster"].values() for a in l]
                  mine = cfg["cluster"][cfg["task"]["type"]][cfg["task"]["index"]]
              else:
                  addrs = [h + ":7000" for f in sorted(glob.glob("/etc/volcano/*.host"))
                           for h in open(f).read().split()]
                  mine = [a for a in addrs if a.split(".")[0] == socket.gethostname()][0]
              ips = {a: socket.gethostbyname(a.rsplit(":", 1)[0]) for a in addrs}  # first: no retry
              print("resolved %d" % len(ips), flush=True)
              peers = [a for a in addrs if a != mine]
              srv = socket.create_server((ips[mine], int(mine.rsplit(":", 1)[1])))
              heard = set()
              def serve():
                  while len(heard) < len(peers):
                      c, _ = srv.accept(); heard.add(c.recv(256)); c.close()
              t = threading.Thread(target=serve); t.start()
              for a in peers:
                  while True:
                      try:
                          s = socket.create_connection((ips[a], int(a.rsplit(":", 1)[1])), timeout=2)
                          s.sendall(mine.encode()); s.close(); break
                      except OSError:
                          time.sleep(0.1)
              t.join()
    Worker:
      replicas: 3
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: tensorflow
            image: tensorflow/tensorflow
            command: ["/usr/bin/python3", "-c"]
            args: [*resolve]
YAML

kubectl apply -f - <<'YAML' || fail "apply"
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vnames}
spec:
  minAvailable: 4
  plugins: {svc: []}
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: python
          command: ["/usr/bin/python3", "-c"]
          args:
          - &resolve |
            import glob, json, os, socket, threading, time
            if "TF_CONFIG" in os.environ:
                cfg = json.loads(os.environ["TF_CONFIG"])
                addrs = [a for l in cfg["cluster"].values() for a in l]
                mine = cfg["cluster"][cfg["task"]["type"]][cfg["task"]["index"]]
            else:
                addrs = [h + ":7000" for f in sorted(glob.glob("/etc/volcano/*.host"))
                         for h in open(f).read().split()]
                mine = [a for a in addrs if a.split(".")[0] == socket.gethostname()][0]
            ips = {a: socket.gethostbyname(a.rsplit(":", 1)[0]) for a in addrs}  # first: no retry
            print("resolved %d" % len(ips), flush=True)
            peers = [a for a in addrs if a != mine]
            srv = socket.create_server((ips[mine], int(mine.rsplit(":", 1)[1])))
            heard = set()
            def serve():
                while len(heard) < len(peers):
                    c, _ = srv.accept(); heard.add(c.recv(256)); c.close()
            t = threading.Thread(target=serve); t.start()
            for a in peers:
                while True:
                    try:
                        s = socket.create_connection((ips[a], int(a.rsplit(":", 1)[1])), timeout=2)
                        s.sendall(mine.encode()); s.close(); break
                    except OSError:
                        time.sleep(0.1)
            t.join()
  - name: worker
    replicas: 3
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: python
          command: ["/usr/bin/python3", "-c"]
          args: [*resolve]
YAML

state=$(wait_job tfjob names Succeeded 120)
expect_eq "TFJob whose replicas resolve every peer at once succeeds" Succeeded "$state"
for p in names-ps-0 names-ps-1 names-worker-0 names-worker-1 names-worker-2; do
    expect_eq "$p resolved all 5 names" "resolved 5" "$(kubectl logs "$p" 2>&1)"
done
[ "$state" = Succeeded ] || dump_job tfjob names

phase=""
for _ in $(seq 240); do
    phase=$(kubectl get vcjob vnames -o jsonpath='{.status.state.phase}' 2>/dev/null)
    case "$phase" in Completed|Failed|Aborted) break ;; esac
    sleep 0.5
done
expect_eq "Volcano Job whose tasks resolve every host at once completes" Completed "$phase"
for p in vnames-master-0 vnames-worker-0 vnames-worker-1 vnames-worker-2; do
    expect_eq "$p resolved all 4 hosts" "resolved 4" "$(kubectl logs "$p" 2>&1)"
done
[ "$phase" = Completed ] || dump_job vcjob vnames
stop_hogs
finish
