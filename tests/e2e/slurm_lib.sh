# slurm_lib.sh - for the Slurm runtime's end-to-end tests: a real multi-node
# Slurm on this host (scripts/slurm-cluster.sh) beside lib.sh's server.
# Source lib.sh first. Skips the test (exit 0) where Slurm is not installed
# (scripts/deps.sh test installs it; CI always has it).
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1; then
    echo "skip: slurmctld/slurmd not installed (scripts/deps.sh test installs them)"
    exit 0
fi
SLURM_CLUSTER_SH="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/slurm-cluster.sh"
SLURM_DIRS=()

stop_clusters() {
    local d
    for d in "${SLURM_DIRS[@]}"; do "$SLURM_CLUSTER_SH" stop "$d" >/dev/null 2>&1; done
    SLURM_DIRS=()
}
trap 'stop_clusters; cleanup' EXIT

# start_cluster [VAR=value...]: a new cluster (the knobs of slurm-cluster.sh
# as arguments); exports its SLURM_CONF and sets SLURM_DIR. Exits on failure.
start_cluster() {
    local dir
    dir=$(env SLURM_WAIT_S="$E2E_WAIT" "$@" "$SLURM_CLUSTER_SH" start 2>"$E2E_TMP/cluster.err" | tail -1)
    if [ ! -f "$dir/env" ]; then
        echo "FAIL - the Slurm cluster did not start:"
        sed 's/^/     | /' "$E2E_TMP/cluster.err" | tail -30
        exit 1
    fi
    SLURM_DIRS+=("$dir")
    SLURM_DIR=$dir
    # shellcheck disable=SC1091  # made by the start above
    . "$dir/env"
    export SLURM_CONF
}

# squeue_active: this cluster's jobs that are not finished, one per line.
squeue_active() { squeue -h -o '%i|%T|%r|%N|%j' 2>/dev/null; }
