#!/usr/bin/env bash
# A full disk loses nothing and invents nothing: the data directory is a small
# tmpfs that fills while a pod runs; the pod's exit code (3) is reported as 3,
# never as a made-up 137; reads are served while the disk is full and writes
# work again once there is room; the node reports DiskPressure (and new pods
# are not placed on it) below --disk-free-min, and stops when space returns.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then echo "ok   - skipped: needs root to mount a tmpfs"; exit 0; fi
E2E_DATA="$E2E_TMP/data"
mkdir -p "$E2E_DATA"
if ! mount -t tmpfs -o size=8m tmpfs "$E2E_DATA"; then
    echo "ok   - skipped: cannot mount a tmpfs"; exit 0
fi
# lib.sh's cleanup stops everything and empties the tmpfs; its mount point
# goes after that.
unmount() {
    cleanup 2>/dev/null
    umount -l "$E2E_DATA" 2>/dev/null
    rm -rf "$E2E_TMP"
}
trap unmount EXIT

out=$("$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/unused" --disk-free-min lots 2>&1)
expect_eq "a bad --disk-free-min is refused" "2 error: --disk-free-min: invalid disk free minimum lots: want a size such as 1Gi or 500Mi, a percentage such as 5%, or 0" "$? $out"
start_server --fake-gpus 0 --node-name e2e-node --disk-free-min 1Mi
k() { kubectl --request-timeout=20s "$@"; }
# until SECONDS CMD...: wait_until, and on a timeout CMD once more with its
# output (for check's report).
until_ok() { wait_until "$@" && return 0; shift; "$@"; }
phase_is() { [ "$(k get pod "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }
disk_pressure_is() {
    [ "$(k get node e2e-node -o jsonpath='{.status.conditions[?(@.type=="DiskPressure")].status}')" = "$1" ]
}
# The node's first taint, whether it is WANT, whether it has none. The
# DiskPressure condition and the taint are two writes: the taint comes after.
taint() { k get node e2e-node -o jsonpath='{.spec.taints[0].key} {.spec.taints[0].effect}'; }
taint_is() { local t; t=$(taint) && [ "$t" = "$1" ]; }
untainted() { local t; t=$(k get node e2e-node -o jsonpath='{.spec.taints}') && [ -z "$t" ]; }
unschedulable() {
    [ "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]
}
free_kib() { df -k --output=avail "$E2E_DATA" | tail -1 | tr -d ' '; }

check "no DiskPressure on an empty disk" until_ok 30 disk_pressure_is False
cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: three}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "echo started; while [ ! -e $E2E_TMP/go ]; do sleep 0.1; done; echo ending; exit 3"]
YAML
check "pod Running" until_ok 60 phase_is three Running

# Fill the disk to the last block, then let the pod end.
dd if=/dev/zero of="$E2E_DATA/filler" bs=64k >/dev/null 2>&1
full() { [ "$(free_kib)" -lt 256 ]; }
check "the disk is full" full
touch "$E2E_TMP/go"
check "reads are served on a full disk" k get pods three
# The pod ends; its status may not be written. Its end is reported once the
# runtime has tried to: the status written after all, or a write retried.
end_reported() {
    phase_is three Failed || phase_is three Succeeded ||
        file_has "$E2E_TMP/server.err" 'status of pod default/three: .*\(retried\)'
}
check "the pod's end is reported" until_ok 60 end_reported
phase=$(k get pod three -o jsonpath='{.status.phase}')
code=$(k get pod three -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')
if [ "$code" = 137 ]; then fail "no made-up exit code while the disk is full"; else pass "no made-up exit code while the disk is full ($phase $code)"; fi

rm -f "$E2E_DATA/filler"
check "the pod is reported Failed once there is room" until_ok 60 phase_is three Failed
expect_eq "with its own exit code" "3" \
    "$(k get pod three -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')"
expect_eq "and reason" "Error" \
    "$(k get pod three -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}')"
check "writes work again" until_ok 30 k create configmap after-full --from-literal=k=v
check "DiskPressure clears" until_ok 30 disk_pressure_is False

# Below the watermark but not full: writes work, new pods are not placed.
# (768 KiB free: under the 1Mi, with room for the server's own writes)
fill=$(( $(free_kib) - 768 ))
dd if=/dev/zero of="$E2E_DATA/filler" bs=1k count="$fill" >/dev/null 2>&1
check "DiskPressure=True below --disk-free-min" until_ok 30 disk_pressure_is True
wait_until taint_is "node.kubernetes.io/disk-pressure NoSchedule"
expect_eq "the node is tainted disk-pressure:NoSchedule" "node.kubernetes.io/disk-pressure NoSchedule" "$(taint)"
cat >"$E2E_TMP/waits.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: waits}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "echo placed"]
YAML
check "a pod is created under DiskPressure" k apply -f "$E2E_TMP/waits.yaml"
check "a new pod is not placed under DiskPressure" until_ok 30 unschedulable waits
expect_eq "nor bound" "" "$(k get pod waits -o jsonpath='{.spec.nodeName}')"
rm -f "$E2E_DATA/filler"
check "DiskPressure clears when space returns" until_ok 30 disk_pressure_is False
wait_until untainted
expect_eq "the taint goes with it" "" "$(k get node e2e-node -o jsonpath='{.spec.taints}')"
check "the waiting pod runs then" until_ok 60 phase_is waits Succeeded
finish
