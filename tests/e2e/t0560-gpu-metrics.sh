#!/usr/bin/env bash
# GPU monitoring: GPUs found through NVML (here the NVML double,
# tests/nvml_double, loaded in its place through TRAINYARD_NVML_LIB) on the
# Node and on /metrics under the DCGM exporter's names and labels, the pod
# that holds a GPU in its series' labels, readings and XID errors that
# follow the device; a GPU with an XID error out of service (the Node's
# GPUUnhealthy condition, allocatable); a pod holding GPUs idle warned
# about (--gpu-idle-warning); fake GPUs marked as fake.
. "$(dirname "$0")/lib.sh"
DOUBLE="$(dirname "$TRAINYARD")/libnvml_double.so"
[ -f "$DOUBLE" ] || { echo "no $DOUBLE (built with the tests)"; exit 1; }
export TRAINYARD_NVML_LIB="$DOUBLE" NVML_DOUBLE_CONFIG="$E2E_TMP/nvml.conf"
# The double reads its file at every call: rewrite it whole, atomically.
# GPU 2 stays idle throughout.
gpus() { printf '%s\n' "$@" "gpu 2 uuid=GPU-e2e-2 util=0" >"$NVML_DOUBLE_CONFIG.tmp" && mv "$NVML_DOUBLE_CONFIG.tmp" "$NVML_DOUBLE_CONFIG"; }
gpus "gpu 0 uuid=GPU-e2e-0 name=NVIDIA_Double_H100 util=0 memutil=0 total_mib=81920 used_mib=0 temp=35 power_mw=70000" \
     "gpu 1 uuid=GPU-e2e-1 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=0 temp=33 power_mw=65000"
start_server --node-name gpu-node --gpu-idle-warning 3s
k() { kubectl --request-timeout=20s "$@"; }
metrics() { kcurl -s "$SERVER/metrics"; }
# has_series REGEX: a line of /metrics matches (for wait_until).
has_series() { grep -Eq -- "$1" <<<"$(metrics)"; }

node_field() { k get node gpu-node -o jsonpath="$1"; }
cond() { node_field '{.status.conditions[?(@.type=="GPUUnhealthy")].'"$1"'}'; }
expect_eq "node has the NVML GPUs" "3" "$(node_field '{.status.capacity.nvidia\.com/gpu}')"
expect_eq "GPU feature discovery's labels" "NVIDIA-Double-H100 3 81920" \
    "$(node_field '{.metadata.labels.nvidia\.com/gpu\.product} {.metadata.labels.nvidia\.com/gpu\.count} {.metadata.labels.nvidia\.com/gpu\.memory}')"
gpus_ok() { [ "$(cond status)" = False ]; }
check "node says its GPUs are healthy" wait_until gpus_ok
expect_eq "healthy reason" "GPUsHealthy" "$(cond reason)"
M=$(metrics)
expect_match "DCGM utilisation series with DCGM's labels" \
    '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-e2e-0",device="nvidia0",modelName="NVIDIA Double H100",Hostname="gpu-node",container="",namespace="",pod=""\} 0$' "$M"
expect_match "framebuffer free in MiB" '^DCGM_FI_DEV_FB_FREE\{gpu="1",UUID="GPU-e2e-1",.*\} 81920$' "$M"
expect_match "power in W" '^DCGM_FI_DEV_POWER_USAGE\{gpu="1",.*\} 65$' "$M"
expect_match "temperature" '^DCGM_FI_DEV_GPU_TEMP\{gpu="0",.*\} 35$' "$M"
expect_match "types declared" '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge$' "$M"

cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: side
    image: busybox
    command: [sh, -c, "sleep 600"]
  - name: trainer
    image: busybox
    command: [sh, -c, "echo CVD=\$CUDA_VISIBLE_DEVICES; sleep 600"]
    resources: {limits: {nvidia.com/gpu: 1}}
YAML
running() { [ "$(k get pod gpu-pod -o jsonpath='{.status.phase}')" = Running ]; }
check "the GPU pod runs" wait_until running
held='^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-e2e-0",.*,container="trainer",namespace="default",pod="gpu-pod"\}'
check "its GPU's series carry the pod, namespace and container" wait_until has_series "$held 0$"
check "the other GPU's series name no pod" has_series '^DCGM_FI_DEV_GPU_UTIL\{gpu="1",.*pod=""\} 0$'
warned() { k get events --field-selector involvedObject.name="$1",reason=GPUIdle -o name | grep -q .; }
check "a pod holding its GPU at 0% past --gpu-idle-warning gets a Warning" wait_until warned gpu-pod
expect_match "the warning names the GPU" 'GPUIdle.*pod holds GPU 0 at 0% utilization' \
    "$(k get events --field-selector involvedObject.name=gpu-pod)"

gpus "gpu 0 uuid=GPU-e2e-0 name=NVIDIA_Double_H100 util=87 memutil=40 total_mib=81920 used_mib=40960 temp=71 power_mw=412500" \
     "gpu 1 uuid=GPU-e2e-1 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=0 temp=33 power_mw=65000"
check "utilisation follows the device" wait_until has_series "$held 87$"
M=$(metrics)
expect_match "memory used follows" '^DCGM_FI_DEV_FB_USED\{gpu="0",.*pod="gpu-pod"\} 40960$' "$M"
expect_match "power follows" '^DCGM_FI_DEV_POWER_USAGE\{gpu="0",.*pod="gpu-pod"\} 412.5$' "$M"
expect_match "no XID yet" '^DCGM_FI_DEV_XID_ERRORS\{gpu="0",.*\} 0$' "$M"

# A restarted server re-adopts the pod, and with it its GPU's labels.
stop_server
start_server --node-name gpu-node --gpu-idle-warning 3s
check "after a restart the adopted pod still labels its GPU" wait_until has_series "$held 87$"

gpus "gpu 0 uuid=GPU-e2e-0 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=40960 temp=71 power_mw=90000 xid=79 xidseq=1" \
     "gpu 1 uuid=GPU-e2e-1 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=0 temp=33 power_mw=65000"
check "an XID error shows as the last XID" \
    wait_until has_series '^DCGM_FI_DEV_XID_ERRORS\{gpu="0",.*pod="gpu-pod"\} 79$'

bad() { [ "$(cond status)" = True ]; }
check "an XID error puts the GPU out of service" wait_until bad
expect_eq "reason" "GPUErrors" "$(cond reason)"
expect_eq "message names the GPU and the XID" "GPU 0 (GPU-e2e-0): XID 79" "$(cond message)"
expect_eq "allocatable leaves it out" "2" "$(node_field '{.status.allocatable.nvidia\.com/gpu}')"
expect_eq "capacity keeps it" "3" "$(node_field '{.status.capacity.nvidia\.com/gpu}')"
told() { k get events --field-selector involvedObject.name=gpu-pod,reason=GPUUnhealthy -o name | grep -q .; }
check "the pod on it hears of it" wait_until told
expect_match "with the GPU and the cause" 'GPU 0 \(GPU-e2e-0\) is out of service: XID 79' \
    "$(k get events --field-selector involvedObject.name=gpu-pod,reason=GPUUnhealthy)"

k delete pod gpu-pod --wait=false >/dev/null
gone() { ! k get pod gpu-pod >/dev/null 2>&1; }
check "the pod goes" wait_until gone
check "its GPU's series name no pod once it is gone" \
    wait_until has_series '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",.*pod=""\} 0$'
expect_eq "no series names the pod" "" "$(metrics | grep 'pod="gpu-pod"')"

# The broken GPU is handed to no pod; a busy pod is not warned about.
gpupod() { # gpupod NAME
    cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "echo CVD=\$CUDA_VISIBLE_DEVICES; sleep 600"]
    resources: {limits: {nvidia.com/gpu: 1}}
YAML
}
gpus "gpu 0 uuid=GPU-e2e-0 xid=79 xidseq=1" "gpu 1 uuid=GPU-e2e-1 util=50"
gpupod busy
logged() { [ "$(k logs "$1" 2>/dev/null)" = "$2" ]; }
check "the next pod gets a sound GPU" wait_until logged busy CVD=1
gpupod idle
check "the one after gets the last one" wait_until logged idle CVD=2
check "the idle one is warned about" wait_until warned idle
expect_eq "the busy one is not" "" "$(k get events --field-selector involvedObject.name=busy,reason=GPUIdle -o name)"
k delete pods busy idle --wait=false >/dev/null

# Fake GPUs: synthetic readings, marked in the model name and the UUID.
stop_server
start_server --node-name gpu-node --fake-gpus 1
M=$(metrics)
expect_match "fake GPUs are marked" \
    '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-fake-[0-9-]+",device="nvidia0",modelName="Trainyard fake GPU",Hostname="gpu-node",.*\} 0$' "$M"
expect_eq "no series of the double's GPUs" "" "$(grep 'GPU-e2e' <<<"$M")"
expect_eq "the node's GPU product says fake" "Trainyard-fake-GPU 1" \
    "$(node_field '{.metadata.labels.nvidia\.com/gpu\.product} {.metadata.labels.nvidia\.com/gpu\.count}')"
finish
