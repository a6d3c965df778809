#!/usr/bin/env bash
# t0820-vcjob-svc.sh - the svc plugin end to end: every pod of a ps + worker
# Volcano Job reads /etc/volcano/*.host and VC_*_HOSTS, listens on a port and
# opens a TCP connection to every other pod by its <pod>.<job> name.
source "$(dirname "$0")/lib.sh"
start_server

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mesh}
spec:
  plugins: {svc: [], env: []}
  tasks:
  - name: ps
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: python
          command: ["/usr/bin/python3", "-u", "-c"]
          args:
          - &mesh |
            import os, socket, threading, time
            files = [open("/etc/volcano/" + f).read().split() for f in ("ps.host", "worker.host")]
            hosts = [h for f in files for h in f]
            envs = os.environ["VC_PS_HOSTS"].split(",") + os.environ["VC_WORKER_HOSTS"].split(",")
            assert hosts == envs, (hosts, envs)
            me = socket.gethostname()
            srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("0.0.0.0", 7000)); srv.listen(16)
            served = [0]
            def serve():
                while True:
                    c, _ = srv.accept(); c.sendall(me.encode()); c.close(); served[0] += 1
            threading.Thread(target=serve, daemon=True).start()
            ok = 0
            for h in hosts:
                if h.split(".")[0] == me:
                    continue
                for _ in range(600):
                    try:
                        s = socket.create_connection((h, 7000), timeout=2)
                        peer = s.recv(100).decode(); s.close()
                        assert peer == h.split(".")[0], (peer, h)
                        ok += 1
                        break
                    except OSError:
                        time.sleep(0.2)
            print(f"{me} reached {ok}/{len(hosts) - 1}", flush=True)
            # stay reachable until every peer reached us, however late it
            # started (a fixed 3 s was too short for a loaded machine)
            deadline = time.time() + 300
            while served[0] < len(hosts) - 1 and time.time() < deadline:
                time.sleep(0.1)
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: python
          command: ["/usr/bin/python3", "-u", "-c"]
          args: [*mesh]
YAML

phase=""
end=$((SECONDS + E2E_WAIT))
while [ $SECONDS -lt $end ]; do
    phase=$(kubectl get vcjob mesh -o jsonpath='{.status.state.phase}' 2>/dev/null)
    case "$phase" in Completed|Failed|Aborted) break ;; esac
    sleep 0.25
done
expect_eq "svc mesh job completes" Completed "$phase"
for p in mesh-ps-0 mesh-worker-0 mesh-worker-1; do
    expect_eq "$p reaches every other pod by name" "$p reached 2/2" "$(kubectl logs "$p" 2>&1)"
done
[ "$E2E_FAILS" -eq 0 ] || dump_job vcjob mesh
finish
