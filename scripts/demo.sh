#!/usr/bin/env bash
# make demo: starts a server on a free loopback port in a scratch data dir,
# applies the PyTorch DDP example with kubectl and shows what the server holds.
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
"$TRAINYARD" kubeconfig --server "$server" >"$data/kubeconfig"
export KUBECONFIG="$data/kubeconfig"
kubectl apply -f examples/pytorch-ddp.yaml
kubectl get pytorchjobs
"$TRAINYARD" --help >/dev/null
"$TRAINYARD" describe pytorchjob pytorch-ddp --server "$server" | head -30
echo
echo "The job engine that runs the replicas is not built yet (see the open issues);"
echo "the job above is stored, defaulted and validated by the control plane."
