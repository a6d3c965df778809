#!/usr/bin/env bash
# make demo: starts a server on a free loopback port in a scratch data dir,
# applies the PyTorch DDP example with kubectl, follows it to the end and
# prints the master's log (the loss going down).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TRAINYARD:=build/trainyard}"
data=$(mktemp -d /tmp/trainyard-demo.XXXXXX)
"$TRAINYARD" server --port 0 --data-dir "$data" >"$data/server.out" 2>"$data/server.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q '^listening on' "$data/server.out" 2>/dev/null && break; sleep 0.1; done
server=$(sed -n 's/^listening on //p' "$data/server.out")
echo "trainyard server at $server (data in $data)"
# The admin credential the first start made in the data directory.
"$TRAINYARD" kubeconfig --data-dir "$data" --server "$server" -o "$data/kubeconfig"
export KUBECONFIG="$data/kubeconfig"

kubectl apply -f examples/pytorch-ddp.yaml
echo "waiting for the job to finish (1 master + 2 workers, gloo on CPU)..."
state=""
for _ in $(seq 300); do
    state=$(kubectl get pytorchjob pytorch-ddp -o jsonpath='{.status.conditions[-1:].type}' 2>/dev/null || true)
    case "$state" in Succeeded|Failed) break ;; esac
    sleep 1
done
kubectl get pytorchjobs
kubectl get pods -o wide
echo
echo "--- master log (kubectl logs pytorch-ddp-master-0) ---"
kubectl logs pytorch-ddp-master-0
echo
if [ "$state" != Succeeded ]; then
    echo "the job did not succeed (state: ${state:-none}); server log: $data/server.log" >&2
    kubectl describe pytorchjob pytorch-ddp >&2 || true
    exit 1
fi
echo "PyTorchJob pytorch-ddp Succeeded."
