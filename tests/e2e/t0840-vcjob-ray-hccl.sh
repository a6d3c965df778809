#!/usr/bin/env bash
# t0840-vcjob-ray-hccl.sh - Volcano 1.13's ray and hcclrank job plugins: a
# ray job is accepted (svc added), its head runs `ray start --head --block
# ...` with the gcs/dashboard/client-server ports, its workers `ray start
# --block --address=<job>-head-0.<job>:6379`, which resolves, and the Service
# <job>-head-svc has the three ports (a stand-in `ray` on the pods' PATH runs
# instead of Ray); a ray job without a head task makes no pods and says why;
# an hcclrank job's pods carry hccl/rankIndex (masters, then workers), which
# the downward API hands their commands.
source "$(dirname "$0")/lib.sh"
start_server

# wait_phase NAME PHASE: waits for status.state.phase; prints the last seen.
wait_phase() {
    local phase="" end=$((SECONDS + E2E_WAIT))
    while [ $SECONDS -lt $end ]; do
        phase=$(kubectl get vcjob "$1" -o jsonpath='{.status.state.phase}' 2>/dev/null)
        [ "$phase" = "$2" ] && break
        sleep 0.25
    done
    echo "$phase"
}

mkdir -p "$E2E_TMP/bin"
cat >"$E2E_TMP/bin/ray" <<'EOF'
#!/bin/sh
# stand-in for Ray: says how it was started; a worker waits until the head's
# name resolves (the address it was given must be one) and says so in the
# shared directory; the head stays up until both workers have (a finished
# pod's name resolves no more)
echo "ray $*"
case "$*" in
*--head*)
    i=0
    until [ "$(ls @DIR@/joined.* 2>/dev/null | wc -l)" -ge 2 ]; do
        i=$((i + 1))
        [ $i -gt 2400 ] && { echo "the workers never joined"; exit 1; }
        sleep 0.1
    done ;;
*--address=*)
    addr=${*##*--address=}
    host=${addr%:*}
    i=0
    until getent hosts "$host" >/dev/null; do
        i=$((i + 1))
        [ $i -gt 1200 ] && { echo "unresolved $host"; exit 1; }
        sleep 0.1
    done
    echo "resolved $host"
    touch "@DIR@/joined.$(cat /proc/sys/kernel/hostname)" ;;
esac
EOF
sed -i "s|@DIR@|$E2E_TMP|g" "$E2E_TMP/bin/ray"
chmod +x "$E2E_TMP/bin/ray"
RAYPATH="$E2E_TMP/bin:/usr/local/bin:/usr/bin:/bin"

# --- ray
kubectl apply -f - >"$E2E_TMP/apply.out" 2>&1 <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: rc}
spec:
  minAvailable: 3
  plugins: {ray: []}
  tasks:
  - name: head
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: head, image: rayproject/ray, env: [{name: PATH, value: "$RAYPATH"}]}
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: worker, image: rayproject/ray, env: [{name: PATH, value: "$RAYPATH"}]}
YAML
check "a ray job is accepted" grep -q created "$E2E_TMP/apply.out"
expect_eq "the ray plugin brings svc, as Volcano's webhook" "[]" \
    "$(kubectl get vcjob rc -o jsonpath='{.spec.plugins.svc}')"
expect_eq "the ray job completes" Completed "$(wait_phase rc Completed)"
expect_match "the head runs ray start --head with upstream's ports" \
    '^ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 --ray-client-server-port=10001$' \
    "$(kubectl logs rc-head-0 2>&1)"
wlog=$(kubectl logs rc-worker-1 2>&1)
expect_match "a worker joins the head's address" '^ray start --block --address=rc-head-0.rc:6379$' "$wlog"
expect_match "which resolves in the worker" '^resolved rc-head-0.rc$' "$wlog"
expect_eq "the head container has the gcs, dashboard and client-server ports" \
    "gcs=6379 dashboard=8265 client-server=10001" \
    "$(kubectl get pod rc-head-0 -o jsonpath='{range .spec.containers[0].ports[*]}{.name}={.containerPort} {end}' | sed 's/ $//')"
expect_eq "Service rc-head-svc: the three ports by name" \
    "gcs:6379>gcs dashboard:8265>dashboard client-server:10001>client-server" \
    "$(kubectl get svc rc-head-svc -o jsonpath='{range .spec.ports[*]}{.name}:{.port}>{.targetPort} {end}' | sed 's/ $//')"
expect_eq "it selects the head task's pods" "rc head" \
    "$(kubectl get svc rc-head-svc -o jsonpath='{.spec.selector.volcano\.sh/job-name} {.spec.selector.volcano\.sh/task-spec}')"

# --- ray without its head task
kubectl apply -f - >/dev/null <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: headless}
spec:
  minAvailable: 1
  plugins: {ray: ["--head=boss"]}
  tasks:
  - name: worker
    replicas: 1
    template:
      spec:
        containers:
        - {name: worker, image: rayproject/ray}
YAML
check "a ray job without its head task says so" \
    wait_until bash -c "kubectl get events --field-selector involvedObject.name=headless -o jsonpath='{.items[*].message}' | grep -q \"doesn't have head task boss\""
expect_eq "and makes no pod" "" "$(kubectl get pods -l volcano.sh/job-name=headless -o name 2>&1)"

# --- hcclrank
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: hc}
spec:
  minAvailable: 3
  plugins: {hcclrank: []}
  tasks:
  - name: master
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: ["/bin/sh", "-c", "echo rank=$HCCL_RANK"]
          env:
          - name: HCCL_RANK
            valueFrom: {fieldRef: {fieldPath: "metadata.annotations['hccl/rankIndex']"}}
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          command: ["/bin/sh", "-c", "echo rank=$HCCL_RANK"]
          env:
          - name: HCCL_RANK
            valueFrom: {fieldRef: {fieldPath: "metadata.annotations['hccl/rankIndex']"}}
YAML
expect_eq "the hcclrank job completes" Completed "$(wait_phase hc Completed)"
expect_eq "hccl/rankIndex: master 0, workers 1 and 2" "0 1 2" \
    "$(for p in hc-master-0 hc-worker-0 hc-worker-1; do kubectl get pod $p -o jsonpath="{.metadata.annotations['hccl/rankIndex']}"; echo; done | xargs)"
expect_match "the downward API hands it to the command" '^rank=2$' "$(kubectl logs hc-worker-1 2>&1)"
expect_eq "hcclrank adds no svc plugin" "" "$(kubectl get vcjob hc -o jsonpath='{.spec.plugins.svc}')"
finish
