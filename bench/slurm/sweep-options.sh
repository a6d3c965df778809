#!/usr/bin/env bash
# sweep-options.sh - which of the Slurm backend's job options costs launch
# time (bench/slurm/sweep-options.py), on a private 2-node cluster started by
# scripts/slurm-cluster.sh as the tests and bench/run-slurm-runtime-bench.sh
# start it. Run as root. Arguments go to sweep-options.py (--jobs N,
# --pods P, --only VARIANT, --json FILE).
set -euo pipefail
cd "$(dirname "$0")/../.."
export SLURM_NODES=${SLURM_NODES:-2} SLURM_CPUS=${SLURM_CPUS:-8} SLURM_GPUS=0
export SLURM_ADDR_BASE=${SLURM_ADDR_BASE:-127.0.42}
stampdir=$(mktemp -d /var/tmp/ty-slurm-sweep.XXXXXX)
chmod 1777 "$stampdir"
slurm_dir=''
cleanup() {
    [[ -n "$slurm_dir" ]] && scripts/slurm-cluster.sh stop "$slurm_dir" >/dev/null 2>&1
    rm -rf "$stampdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
slurm_dir=$(scripts/slurm-cluster.sh start | tail -n1)
[[ -f "$slurm_dir/env" ]] || { echo "sweep-options: the Slurm cluster did not start" >&2; slurm_dir=''; exit 1; }
. "$slurm_dir/env"
export SLURM_CONF
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(slurmctld -V), $SLURM_NODES nodes x $SLURM_CPUS CPUs"
/usr/bin/python3 bench/slurm/sweep-options.py --jobcomp "$slurm_dir/log/jobcomp.txt" --stampdir "$stampdir" \
    --workdir "$stampdir" "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
