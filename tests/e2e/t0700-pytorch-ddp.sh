#!/usr/bin/env bash
# A real PyTorch DDP job (gloo, CPU): 1 master + 2 workers; the loss falls and
# every rank ends with the same weights. Submitted by a tenant (alice, edit
# in her namespace team-a): its pods run as team-a's uid, not root.
. "$(dirname "$0")/lib.sh"
start_server
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
"$TRAINYARD" user add alice --namespace team-a --data-dir "$E2E_TMP/data" \
    -o "$E2E_TMP/alice.kc" >/dev/null || fail "user add alice"
export KUBECONFIG=$E2E_TMP/alice.kc
kubectl apply -f "$EX/pytorch-ddp.yaml" >/dev/null
state=$(wait_job pytorchjob pytorch-ddp Succeeded 240)
expect_eq "PyTorchJob succeeds" "Succeeded" "$state"
[ "$state" = Succeeded ] || dump_job pytorchjob pytorch-ddp
# The Master alone decides the job's success: a worker may still be printing.
check "the workers end Succeeded too" \
    wait_until pods_in_phase Succeeded pytorch-ddp-worker-0 pytorch-ddp-worker-1
for p in pytorch-ddp-master-0 pytorch-ddp-worker-0 pytorch-ddp-worker-1; do
    kubectl logs "$p" >"$E2E_TMP/$p.log" 2>&1
done
first=$(sed -n 's/.*step 0 loss \([0-9.]*\).*/\1/p' "$E2E_TMP/pytorch-ddp-master-0.log")
last=$(sed -n 's/.*step 59 loss \([0-9.]*\).*/\1/p' "$E2E_TMP/pytorch-ddp-master-0.log")
if [ -n "$first" ] && [ -n "$last" ] && awk "BEGIN{exit !($last < $first / 10)}"; then
    pass "loss falls ($first -> $last)"
else
    fail "loss falls (first '$first', last '$last')"
fi
expect_match "master is rank 0 of 3" 'rank 0/3' "$(cat "$E2E_TMP/pytorch-ddp-master-0.log")"
expect_match "worker-1 is rank 2 of 3" 'rank 2/3' "$(cat "$E2E_TMP/pytorch-ddp-worker-1.log")"
w0=$(grep '^final weights' "$E2E_TMP/pytorch-ddp-master-0.log")
w1=$(grep '^final weights' "$E2E_TMP/pytorch-ddp-worker-0.log")
w2=$(grep '^final weights' "$E2E_TMP/pytorch-ddp-worker-1.log")
if [ -n "$w0" ] && [ "$w0" = "$w1" ] && [ "$w0" = "$w2" ]; then pass "all ranks agree on the final weights"; else fail "ranks disagree: '$w0' / '$w1' / '$w2'"; fi
range=$(kubectl get namespace team-a -o jsonpath='{.metadata.annotations.openshift\.io/sa\.scc\.uid-range}' \
    --kubeconfig "$E2E_TMP/kubeconfig")
expect_eq "its pods run as team-a's uid, not root" "${range%/*}" \
    "$(kubectl get pod pytorch-ddp-worker-1 -o jsonpath='{.spec.securityContext.runAsUser}')"
expect_match "the job records its creator" '^alice$' \
    "$(kubectl get pytorchjob pytorch-ddp -o jsonpath='{.metadata.annotations.trainyard\.io/created-by}')"
expect_match "describe shows the conditions" 'Succeeded' "$(kubectl describe pytorchjob pytorch-ddp)"
expect_match "events on the job" 'SuccessfulCreatePod' "$(kubectl get events --field-selector involvedObject.name=pytorch-ddp 2>&1)"
m=$(controller_metrics)
expect_match "metrics: job created counter" 'training_operator_jobs_created_total\{job_namespace="team-a",framework="pytorch"\} 1' "$m"
expect_match "metrics: job succeeded counter" 'training_operator_jobs_successful_total\{job_namespace="team-a",framework="pytorch"\} 1' "$m"
finish
