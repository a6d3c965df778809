#!/usr/bin/env bash
# GPU monitoring: GPUs found through NVML (here the NVML double,
# tests/nvml_double, loaded in its place through TRAINYARD_NVML_LIB) on the
# Node and on /metrics under the DCGM exporter's names and labels, the pod
# that holds a GPU in its series' labels, readings and XID errors that
# follow the device; fake GPUs marked as fake.
. "$(dirname "$0")/lib.sh"
DOUBLE="$(dirname "$TRAINYARD")/libnvml_double.so"
[ -f "$DOUBLE" ] || { echo "no $DOUBLE (built with the tests)"; exit 1; }
export TRAINYARD_NVML_LIB="$DOUBLE" NVML_DOUBLE_CONFIG="$E2E_TMP/nvml.conf"
# The double reads its file at every call: rewrite it whole, atomically.
gpus() { printf '%s\n' "$@" >"$NVML_DOUBLE_CONFIG.tmp" && mv "$NVML_DOUBLE_CONFIG.tmp" "$NVML_DOUBLE_CONFIG"; }
gpus "gpu 0 uuid=GPU-e2e-0 name=NVIDIA_Double_H100 util=0 memutil=0 total_mib=81920 used_mib=0 temp=35 power_mw=70000" \
     "gpu 1 uuid=GPU-e2e-1 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=0 temp=33 power_mw=65000"
start_server --node-name gpu-node
k() { kubectl --request-timeout=20s "$@"; }
metrics() { kcurl -s "$SERVER/metrics"; }
# has_series REGEX: a line of /metrics matches (for wait_until).
has_series() { grep -Eq -- "$1" <<<"$(metrics)"; }

expect_eq "node has the NVML GPUs" "2" \
    "$(k get node gpu-node -o jsonpath='{.status.capacity.nvidia\.com/gpu}')"
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

gpus "gpu 0 uuid=GPU-e2e-0 name=NVIDIA_Double_H100 util=87 memutil=40 total_mib=81920 used_mib=40960 temp=71 power_mw=412500" \
     "gpu 1 uuid=GPU-e2e-1 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=0 temp=33 power_mw=65000"
check "utilisation follows the device" wait_until has_series "$held 87$"
M=$(metrics)
expect_match "memory used follows" '^DCGM_FI_DEV_FB_USED\{gpu="0",.*pod="gpu-pod"\} 40960$' "$M"
expect_match "power follows" '^DCGM_FI_DEV_POWER_USAGE\{gpu="0",.*pod="gpu-pod"\} 412.5$' "$M"
expect_match "no XID yet" '^DCGM_FI_DEV_XID_ERRORS\{gpu="0",.*\} 0$' "$M"

gpus "gpu 0 uuid=GPU-e2e-0 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=40960 temp=71 power_mw=90000 xid=79 xidseq=1" \
     "gpu 1 uuid=GPU-e2e-1 name=NVIDIA_Double_H100 util=0 total_mib=81920 used_mib=0 temp=33 power_mw=65000"
check "an XID error shows as the last XID" \
    wait_until has_series '^DCGM_FI_DEV_XID_ERRORS\{gpu="0",.*pod="gpu-pod"\} 79$'

k delete pod gpu-pod --wait=false >/dev/null
gone() { ! k get pod gpu-pod >/dev/null 2>&1; }
check "the pod goes" wait_until gone
check "its GPU's series name no pod once it is gone" \
    wait_until has_series '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",.*pod=""\} 0$'
expect_eq "no series names the pod" "" "$(metrics | grep 'pod="gpu-pod"')"

# Fake GPUs: synthetic readings, marked in the model name and the UUID.
stop_server
start_server --node-name gpu-node --fake-gpus 1
M=$(metrics)
expect_match "fake GPUs are marked" \
    '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-fake-[0-9-]+",device="nvidia0",modelName="Trainyard fake GPU",Hostname="gpu-node",.*\} 0$' "$M"
expect_eq "no series of the double's GPUs" "" "$(grep 'GPU-e2e' <<<"$M")"
finish
