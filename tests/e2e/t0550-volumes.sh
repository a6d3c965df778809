#!/usr/bin/env bash
# t0540-volumes.sh - PersistentVolumeClaims: a claim of the default class gets
# a volume of its own; what one job writes there the next reads; a claim in
# use stays until its pods end, and its volume and directory go with it; a
# static hostPath volume binds to a claim that asks for no class and is
# Released, its files kept, when the claim goes; bad claims are refused with
# the field; a pod waits, saying why, for a claim that does not exist.
source "$(dirname "$0")/lib.sh"

start_server
k() { kubectl "$@"; }

expect_match "a default StorageClass is there" \
    '^local-path trainyard.io/local-path Delete Immediate (true|false)$' \
    "$(k get sc local-path --no-headers | awk '{print $1, $2, $3, $4, $5}')"
expect_eq "it is the default class" true \
    "$(k get sc local-path -o jsonpath='{.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}')"

k apply -f - >/dev/null <<'YAML' || fail "apply claim"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
phase_of() { k get pvc "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
check "the claim is Bound" wait_until bash -c "[ \"\$(kubectl get pvc data -o jsonpath='{.status.phase}')\" = Bound ]"
uid=$(k get pvc data -o jsonpath='{.metadata.uid}')
expect_eq "it got the default class" local-path "$(k get pvc data -o jsonpath='{.spec.storageClassName}')"
expect_eq "and a volume of its own" "pvc-$uid" "$(k get pvc data -o jsonpath='{.spec.volumeName}')"
expect_eq "the claim shows the volume's capacity and modes" "1Gi ReadWriteOnce" \
    "$(k get pvc data -o jsonpath='{.status.capacity.storage} {.status.accessModes[0]}')"
expect_eq "the volume is Bound to it, reclaim Delete" "Bound default/data Delete" \
    "$(k get pv "pvc-$uid" -o jsonpath='{.status.phase} {.spec.claimRef.namespace}/{.spec.claimRef.name} {.spec.persistentVolumeReclaimPolicy}')"
expect_match "kubectl get pvc: STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS" \
    "^data +Bound +pvc-$uid +1Gi +RWO +local-path " "$(k get pvc data --no-headers)"
dir=$(k get pv "pvc-$uid" -o jsonpath='{.spec.hostPath.path}')
expect_eq "its directory is under the data directory" "$E2E_TMP/data/volumes/pvc-$uid" "$dir"
check "and exists" test -d "$dir"

# --- one job writes, the next reads
job() { # job NAME COMMAND
    k apply -f - >/dev/null <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: $1}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch
            command: ["/bin/sh", "-c", "$2"]
            volumeMounts: [{name: ckpt, mountPath: /ckpt}]
          volumes:
          - name: ckpt
            persistentVolumeClaim: {claimName: data}
YAML
}
job writer 'echo step-100 > /ckpt/latest && echo wrote'
expect_eq "the writer succeeds" Succeeded "$(wait_job pytorchjob writer Succeeded 120)"
job reader 'echo read $(cat /ckpt/latest)'
expect_eq "the reader succeeds" Succeeded "$(wait_job pytorchjob reader Succeeded 120)"
expect_eq "the reader read what the writer wrote" "read step-100" "$(k logs reader-master-0 2>&1)"
expect_eq "the file is in the volume's directory" step-100 "$(cat "$dir/latest" 2>&1)"

# --- a claim in use stays until its pods end
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: user}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["/bin/sh", "-c", "while [ ! -e /ckpt/stop ]; do sleep 0.1; done"]
    volumeMounts: [{name: ckpt, mountPath: /ckpt}]
  volumes:
  - name: ckpt
    persistentVolumeClaim: {claimName: data}
YAML
check "the pod using the claim runs" wait_until bash -c "[ \"\$(kubectl get pod user -o jsonpath='{.status.phase}')\" = Running ]"
k delete pvc data --wait=false >/dev/null
expect_match "the claim in use is kept, Terminating" '^[0-9TZ:-]+ kubernetes.io/pvc-protection$' \
    "$(k get pvc data -o jsonpath='{.metadata.deletionTimestamp} {.metadata.finalizers[0]}')"
check "the pod still runs" test "$(k get pod user -o jsonpath='{.status.phase}')" = Running
touch "$dir/stop"
gone() { ! kubectl get "$@" >/dev/null 2>&1; }
check "once the pod ends the claim goes" wait_until gone pvc data
check "and its volume (reclaim Delete)" wait_until gone pv "pvc-$uid"
check "and the volume's directory" wait_until bash -c "[ ! -e '$dir' ]"

# --- a static volume, a claim that asks for no class, Retain
mkdir -p "$E2E_TMP/static"
echo dataset > "$E2E_TMP/static/README"
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: datasets, labels: {kind: datasets}}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadOnlyMany, ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: $E2E_TMP/static}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ds}
spec:
  storageClassName: ""
  accessModes: [ReadOnlyMany]
  selector: {matchLabels: {kind: datasets}}
  resources: {requests: {storage: 5Gi}}
YAML
check "the static claim binds to the volume" wait_until bash -c "[ \"\$(kubectl get pvc ds -o jsonpath='{.spec.volumeName}')\" = datasets ]"
expect_eq "the volume's default reclaim policy is Retain" Retain \
    "$(k get pv datasets -o jsonpath='{.spec.persistentVolumeReclaimPolicy}')"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: reads}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["/bin/sh", "-c", "cat /ds/README; touch /ds/x 2>/dev/null && echo writable || echo read-only"]
    volumeMounts: [{name: ds, mountPath: /ds}]
  volumes:
  - name: ds
    persistentVolumeClaim: {claimName: ds, readOnly: true}
YAML
check "the pod reading the static volume ends" wait_until bash -c "[ \"\$(kubectl get pod reads -o jsonpath='{.status.phase}')\" = Succeeded ]"
if [ "$(id -u)" = 0 ]; then
    expect_eq "it read the files, read-only" "dataset read-only" "$(k logs reads 2>&1 | tr '\n' ' ' | sed 's/ $//')"
fi
k delete pod reads >/dev/null
k delete pvc ds >/dev/null
check "with its claim gone the volume is Released" wait_until bash -c "[ \"\$(kubectl get pv datasets -o jsonpath='{.status.phase}')\" = Released ]"
expect_eq "and its files kept" dataset "$(cat "$E2E_TMP/static/README")"

# --- a Volcano Job's spec.volumes: the claim it describes is made, owned by the job
k apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vvol}
spec:
  volumes:
  - mountPath: /out
    volumeClaim: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  - mountPath: /tmpdir
  tasks:
  - name: main
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: busybox, command: ["/bin/sh", "-c", "echo kept > /out/f && echo scratch > /tmpdir/f && cat /tmpdir/f"]}]
YAML
check "the Volcano Job with a claim completes" wait_until bash -c "[ \"\$(kubectl get vcjob vvol -o jsonpath='{.status.state.phase}')\" = Completed ]"
expect_eq "its claim <job>-volume-0 is Bound, owned by the job" "Bound Job" \
    "$(k get pvc vvol-volume-0 -o jsonpath='{.status.phase} {.metadata.ownerReferences[0].kind}')"
vdir=$(k get pv "$(k get pvc vvol-volume-0 -o jsonpath='{.spec.volumeName}')" -o jsonpath='{.spec.hostPath.path}')
expect_eq "what the pod wrote is in the claim's volume" kept "$(cat "$vdir/f" 2>&1)"
expect_eq "a volume without a claim is a scratch directory" scratch "$(k logs vvol-main-0 2>&1)"
k delete vcjob vvol >/dev/null
check "deleting the job deletes its claim" wait_until gone pvc vvol-volume-0

# --- refusals and waits
out=$(k apply -f - 2>&1 <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: bad}
spec:
  resources: {requests: {storage: "0"}}
YAML
)
expect_match "a claim without access modes is refused" \
    'spec.accessModes: Required value: at least 1 access mode is required' "$out"
expect_match "nor a zero request" 'spec.resources\[storage\]: Invalid value: "0": must be greater than zero' "$out"
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: fixed}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Mi}}
YAML
check "a second claim binds" wait_until bash -c "[ \"\$(kubectl get pvc fixed -o jsonpath='{.status.phase}')\" = Bound ]"
out=$(k patch pvc fixed --type=merge -p '{"spec":{"accessModes":["ReadWriteMany"]}}' 2>&1)
expect_match "its spec is immutable" 'spec: Forbidden: spec is immutable after creation' "$out"

# --- a subPath is resolved inside its volume: a symlink a pod left in its
# claim may lead within it, never out of it (CVE-2017-1002101's rule: a
# tenant's link to the volumes directory reached other tenants' claims)
# vpod NAME VOLUME MOUNTPATH COMMAND [SUBPATH]: a pod of one container
# mounting the volume VOLUME (its source, as YAML) at MOUNTPATH
vpod() {
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    command: ["/bin/sh", "-c", "$4"]
    volumeMounts: [{name: v, mountPath: "$3"${5:+, subPath: "$5"}}]
  volumes:
  - {name: v, $2}
YAML
}
subpod() { vpod "$1" "persistentVolumeClaim: {claimName: fixed}" "$3" "$4" "$2"; }
subpod planter . /v 'mkdir -p /v/inside && echo inside-ok > /v/inside/f && ln -s /etc /v/evil && ln -s ../.. /v/up && ln -s inside /v/good'
check "a pod leaves symlinks in its claim" wait_until pods_in_phase Succeeded planter
subpod thief evil /steal 'cat /steal/passwd'
check "a subPath through a symlink out of the volume is not mounted: the pod fails" wait_until pods_in_phase Failed thief
expect_eq "... and read nothing of the host's" "" "$(k logs thief 2>&1 | grep '^root:')"
subpod climber up/etc /steal 'cat /steal/passwd'
check "... nor one climbing out through a relative link" wait_until pods_in_phase Failed climber
# a volume that cannot be mounted: the container never starts (it used to
# run without the volume, writing where the volume should have been)
subpod unmounted evil /steal 'true'
check "a pod whose volume cannot be mounted does not run: it fails" wait_until pods_in_phase Failed unmounted
expect_eq "... its container never started (StartError, 128)" "StartError 128" \
    "$(k get pod unmounted -o jsonpath='{.status.containerStatuses[0].state.terminated.reason} {.status.containerStatuses[0].state.terminated.exitCode}')"
expect_match "... the message names the mount" 'cannot open .* to mount it at /steal' \
    "$(k get pod unmounted -o jsonpath='{.status.containerStatuses[0].state.terminated.message}')"
expect_match "... and a Failed event says so" 'Error: cannot open .* to mount it at /steal' \
    "$(k get events --field-selector involvedObject.name=unmounted 2>&1)"
subpod reader good /r 'cat /r/f'
check "a symlink within the volume still serves" wait_until pods_in_phase Succeeded reader
expect_eq "... its file" "inside-ok" "$(k logs reader 2>&1)"
k delete pod planter thief climber unmounted reader --wait=false >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: orphan}
spec:
  containers:
  - {name: c, image: busybox, command: ["true"], volumeMounts: [{name: v, mountPath: /v}]}
  volumes:
  - {name: v, persistentVolumeClaim: {claimName: nope}}
YAML
check "a pod whose claim does not exist waits, saying so" wait_until bash -c \
    "kubectl get pod orphan -o json | grep -q 'persistentvolumeclaim \\\\\"nope\\\\\" not found'"
expect_eq "and stays Pending" Pending "$(k get pod orphan -o jsonpath='{.status.phase}')"

# --- mount points: root makes a missing one only where such things go, and
# follows no link a user left on the way (a tenant had root make
# /etc/nologin, or anything through a link in /var/tmp)
TAG=ty-e2e-$$-$RANDOM
mpod() { vpod "$1" "emptyDir: {}" "$2" "$3"; }
mpod inetc /etc/$TAG 'true'
ended() { pods_in_phase Succeeded "$1" || pods_in_phase Failed "$1"; }
check "a pod asking for a mount point at a missing /etc/NAME ends" wait_until ended inetc
expect_eq "... and nothing was made in the host's /etc" "" "$(ls -d /etc/$TAG 2>/dev/null)"
mpod linker /scratch-$TAG "ln -s /etc /var/tmp/$TAG-link"
check "a pod leaves a link to /etc in /var/tmp" wait_until pods_in_phase Succeeded linker
mpod vialink /var/tmp/$TAG-link/$TAG-via 'true'
check "a pod asking for a mount point through that link ends" wait_until ended vialink
expect_eq "... and nothing was made in /etc" "" "$(ls -d /etc/$TAG-via 2>/dev/null)"
mpod allowed /var/tmp/$TAG-ok/deep "touch /var/tmp/$TAG-ok/deep/x"
check "a missing mount point where such things go is made" wait_until pods_in_phase Succeeded allowed
expect_eq "... the volume mounted there (the file is in the emptyDir, not the host's)" "" \
    "$(ls /var/tmp/$TAG-ok/deep 2>/dev/null)"
k delete pod inetc linker vialink allowed --wait=false >/dev/null
rm -rf "/var/tmp/$TAG-link" "/var/tmp/$TAG-ok" "/scratch-$TAG"
finish
