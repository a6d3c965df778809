#!/usr/bin/env bash
# scripts/slurm-cluster.sh: a real multi-node Slurm on this host. Starts a
# cluster, runs a 2-component heterogeneous job to completion (one step per
# component, on two different nodes, one with a fake GPU), checks what the
# steps saw, and stops it again: no daemon left, the directory gone.
# Skipped where Slurm is not installed (scripts/deps.sh test installs it).
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1; then
    echo "skip: slurmctld/slurmd not installed (scripts/deps.sh test installs them)"
    exit 0
fi
# The helpers only: this test starts no trainyard server.
TRAINYARD=${TRAINYARD:-unused}
. "$(dirname "$0")/lib.sh"
CLUSTER="$(cd "$(dirname "$0")/../.." && pwd)/scripts/slurm-cluster.sh"
SDIR=""
stop_cluster() { [ -n "$SDIR" ] && "$CLUSTER" stop "$SDIR"; SDIR=""; }
trap 'stop_cluster; cleanup' EXIT

SDIR=$(SLURM_NODES=3 SLURM_GPUS=1 SLURM_WAIT_S=$E2E_WAIT "$CLUSTER" start 2>"$E2E_TMP/start.err" | tail -1)
if [ ! -f "$SDIR/env" ]; then
    echo "FAIL - the cluster did not start:"; sed 's/^/     | /' "$E2E_TMP/start.err"
    SDIR=""
    exit 1
fi
pass "slurm-cluster.sh start: $SDIR"
# shellcheck disable=SC1091  # made by the start above
. "$SDIR/env"
expect_eq "three nodes, idle, each on its own address, one GPU each" \
    "n1|127.0.1.1|8|gpu:1|idle|trainyard*
n2|127.0.1.2|8|gpu:1|idle|trainyard*
n3|127.0.1.3|8|gpu:1|idle|trainyard*" \
    "$(sinfo -h -N -p trainyard -o '%N|%o|%c|%G|%T|%P' | sort)"

OUT=$E2E_TMP/het.out
cat >"$E2E_TMP/het.sh" <<EOF
#!/bin/bash
#SBATCH -n1 -c1 --mem=100
#SBATCH -o $E2E_TMP/batch.out
#SBATCH hetjob
#SBATCH -n1 -c1 --mem=100 --gres=gpu:1
for k in 0 1; do
    srun --het-group=\$k -n1 sh -c 'echo "K=\$0 \$SLURMD_NODENAME \$SLURM_JOB_ID gpu=\${CUDA_VISIBLE_DEVICES:-none}"' \$k >>"$OUT" &
done
wait
EOF
LEADER=$(sbatch --parsable --comment=t1100 "$E2E_TMP/het.sh")
expect_match "sbatch --parsable prints the leader's id" '^[0-9]+$' "$LEADER"
states() { squeue -h -j "$LEADER" --states=all -o '%i|%T|%k' | sort; }
done_ok() { [ "$(states)" = "$LEADER+0|COMPLETED|t1100
$LEADER+1|COMPLETED|t1100" ]; }
if wait_until done_ok; then
    pass "both components COMPLETED (squeue ids LEADER+0, LEADER+1, the comment in %k)"
else
    fail "both components COMPLETED"; states | sed 's/^/     | /'
    sed 's/^/     | /' "$E2E_TMP/batch.out" "$SDIR"/log/slurmctld.log 2>/dev/null | tail -20
fi
steps=$(sort "$OUT" 2>/dev/null)
expect_match "component 0's step ran on a node, under the leader's job id" \
    "^K=0 n[1-3] $LEADER gpu=none\$" "$(sed -n 1p <<<"$steps")"
expect_match "component 1's step saw its fake GPU" \
    "^K=1 n[1-3] $LEADER gpu=0\$" "$(sed -n 2p <<<"$steps")"
n0=$(sed -n '1s/^K=0 \([^ ]*\) .*/\1/p' <<<"$steps")
n1=$(sed -n '2s/^K=1 \([^ ]*\) .*/\1/p' <<<"$steps")
if [ -n "$n0" ] && [ "$n0" != "$n1" ]; then pass "... on two different nodes ($n0, $n1)"
else fail "... on two different nodes (got '$n0' and '$n1')"; fi

pids=$(cat "$SDIR"/run/*.pid "$SDIR"/munge/munged.pid 2>/dev/null)
expect_eq "five daemons had pid files (slurmctld, 3 slurmd, munged)" 5 "$(wc -w <<<"$pids")"
d=$SDIR
stop_cluster
alive=""
for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
expect_eq "stop: no daemon left" "" "$alive"
expect_eq "stop: the directory is gone" "no" "$([ -e "$d" ] && echo yes || echo no)"
finish
