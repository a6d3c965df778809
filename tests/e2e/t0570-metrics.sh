#!/usr/bin/env bash
# Prometheus metrics under upstream's names, so that dashboards made for
# them work: kube-apiserver's request count and latency histogram
# (apiserver_request_total, apiserver_request_duration_seconds, with
# kube-apiserver's labels), training-operator's job counters
# (training_operator_jobs_*_total with job_namespace and framework) and
# volcano-scheduler's session latency and per-queue gauges
# (volcano_e2e_scheduling_latency_milliseconds, volcano_queue_*). The
# request metrics name only the resources the server serves: a client
# cannot grow them with made-up paths.
. "$(dirname "$0")/lib.sh"

E2E_DATA=$E2E_TMP/sim start_server --sim-nodes 2x4:cpu=16,memory=64Gi --no-local-node
metrics() { kcurl -s "$SERVER/metrics"; }
has_series() { grep -Eq -- "$1" <<<"$(metrics)"; }

kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 3, capability: {nvidia.com/gpu: 6}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: short}
spec:
  runPolicy: {schedulingPolicy: {queue: research}}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        metadata: {annotations: {trainyard.io/sim-duration: "1"}}
        spec:
          containers: [{name: pytorch, image: sim, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: long}
spec:
  queue: research
  minAvailable: 2
  tasks:
  - name: t
    replicas: 2
    template:
      metadata: {annotations: {trainyard.io/sim-duration: "600"}}
      spec:
        containers: [{name: c, image: sim, resources: {requests: {cpu: "1", memory: 1Gi}, limits: {nvidia.com/gpu: 2}}}]
YAML

succeeded() { [ "$(kubectl get pytorchjob short -o jsonpath='{.status.conditions[-1:].type}')" = Succeeded ]; }
check "the PyTorchJob succeeds" wait_until succeeded
check "training-operator's created counter, by namespace and framework" \
    wait_until has_series '^training_operator_jobs_created_total\{job_namespace="default",framework="pytorch"\} 1$'
check "and its successful counter" \
    wait_until has_series '^training_operator_jobs_successful_total\{job_namespace="default",framework="pytorch"\} 1$'

# The Volcano Job's 2 pods hold 4 GPUs, 2 CPUs and 2 GiB of the queue.
check "the queue's allocated GPUs, in milli-units as Volcano reports them" \
    wait_until has_series '^volcano_queue_allocated_scalar_resources\{queue_name="research",resource="nvidia.com/gpu"\} 4000$'
# A PodGroup is Running once its pods run, after they were allocated: a
# later state than the allocation, waited for in its turn.
check "its running PodGroups" \
    wait_until has_series '^volcano_queue_pod_group_running_count\{queue_name="research"\} 1$'
M=$(metrics)
expect_match "allocated CPU in millicores" '^volcano_queue_allocated_milli_cpu\{queue_name="research"\} 2000$' "$M"
expect_match "allocated memory in bytes" '^volcano_queue_allocated_memory_bytes\{queue_name="research"\} 2147483648$' "$M"
expect_match "the capability's GPUs" '^volcano_queue_capacity_scalar_resources\{queue_name="research",resource="nvidia.com/gpu"\} 6000$' "$M"
expect_eq "no capacity series for what the capability leaves open" "" \
    "$(grep '^volcano_queue_capacity_milli_cpu{queue_name="research"}' <<<"$M")"
expect_match "the queue's weight" '^volcano_queue_weight\{queue_name="research"\} 3$' "$M"
expect_match "the default queue has series too" '^volcano_queue_weight\{queue_name="default"\} 1$' "$M"
expect_match "scheduling session latency, a histogram" \
    '^volcano_e2e_scheduling_latency_milliseconds_bucket\{le="\+Inf"\} [1-9][0-9]*$' "$M"
expect_match "its type" '^# TYPE volcano_e2e_scheduling_latency_milliseconds histogram$' "$M"

# kube-apiserver's request metrics.
expect_match "creates counted by verb, group, resource, scope and code" \
    '^apiserver_request_total\{verb="POST",dry_run="",group="kubeflow.org",version="v1",resource="pytorchjobs",subresource="",scope="namespace",component="apiserver",code="201"\} 1$' "$M"
expect_match "a GET of one object has scope resource" \
    '^apiserver_request_total\{verb="GET",dry_run="",group="kubeflow.org",version="v1",resource="pytorchjobs",subresource="",scope="resource",component="apiserver",code="200"\} [1-9]' "$M"
expect_match "a cluster-scoped create has scope cluster" \
    '^apiserver_request_total\{verb="POST",.*resource="queues",subresource="",scope="cluster",.*code="201"\} 1$' "$M"
expect_match "request latency, a histogram with kube-apiserver's buckets" \
    '^apiserver_request_duration_seconds_bucket\{verb="POST",dry_run="",group="kubeflow.org",version="v1",resource="pytorchjobs",subresource="",scope="namespace",component="apiserver",le="0.005"\} [01]$' "$M"
not_found() { sed -n 's/^apiserver_request_total{verb="GET",.*resource="pytorchjobs",subresource="",scope="resource",component="apiserver",code="404"} //p' <<<"$1"; }
before=$(not_found "$M")
kubectl get pytorchjob nope >/dev/null 2>&1
kcurl -s -o /dev/null "$SERVER/apis/kubeflow.org/v1/namespaces/default/madeup$RANDOM"
kcurl -s -o /dev/null "$SERVER/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1"
M=$(metrics)
expect_eq "a 404 has its code" "$((${before:-0} + 1))" "$(not_found "$M")"
expect_eq "a made-up resource is not a label" "" "$(grep -c 'madeup' <<<"$M" | grep -v '^0$')"
# A made-up subresource, even unauthenticated, is no new series: each word
# a client types would be one, and the table of series is bounded.
word=$(head -c 64 /dev/urandom | tr -dc a-z | head -c 8)
curl -sk -o /dev/null "$SERVER/api/v1/namespaces/default/pods/p/made$word"
kcurl -s -o /dev/null "$SERVER/api/v1/namespaces/default/pods/p/madeup$word"
M=$(metrics)
expect_eq "a made-up subresource is not a label" "" "$(grep 'subresource="made' <<<"$M")"
# A resource's name is a qualified name, as kube-apiserver checks it; one
# that could end a label and a line of /metrics is refused with its path.
out=$(kubectl apply -f - 2>&1 <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: odd}
spec:
  containers:
  - name: c
    image: sim
    resources: {requests: {"x\"} 0\nvolcano_queue_weight{queue_name=\"default\"} 1000\n#": "1"}}
YAML
)
expect_match "a request named to inject a line of /metrics is refused" \
    'spec.containers\[0\].resources.requests\[x' "$out"
expect_eq "and no such line is served" "" "$(metrics | grep -c 'queue_name="default"} 1000' | grep -v '^0$')"
expect_match "watches are counted" '^apiserver_request_total\{verb="WATCH",.*resource="pods",.*code="200"\} ' "$M"
expect_eq "but have no latency series (they last as long as the client wants)" "" \
    "$(grep '^apiserver_request_duration_seconds_bucket{verb="WATCH"' <<<"$M")"
finish
