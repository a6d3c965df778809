#!/usr/bin/env bash
# run-slurm-runtime-bench.sh - Trainyard on Slurm (`trainyard server
# --runtime slurm`) side by side with plain sbatch of the same work on the
# same Slurm cluster, in one run: job launch latency (p50, p99) of a 1-pod
# job and of a 2-pod gang, and short-job throughput, with the ratios
# Trainyard/sbatch.
#
# Builds if needed; starts a private multi-node Slurm (scripts/slurm-cluster.sh,
# its slurm-cluster.conf.in unchanged) and a fresh server on it, runs
# bench/slurm_runtime_bench.py (which alternates the two sides job by job;
# see its header for what is measured), then stops both. Run as root.
#
#   --launch N        1-pod jobs per side for launch latency (default 50)
#   --launch-gang N   2-pod gangs per side for launch latency (default 25)
#   --no-backend-side leave out the third side of the launch phases (sbatch
#                     with the backend's own sbatch/srun options)
#   --tput N          one-task jobs per side for throughput (default 60)
#   --clients K       submitting threads in the throughput phase (default 4)
#   --json FILE       write the figures (and every latency) there
#
#   BUILD_DIR     build directory to use (default: build)
#   SLURM_NODES   nodes of the cluster (default 2)
#   SLURM_CPUS    CPUs each node declares (default 8)
#   SERVER_FLAGS  more flags for the server, word-split
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export SLURM_NODES=${SLURM_NODES:-2} SLURM_CPUS=${SLURM_CPUS:-8} SLURM_GPUS=0
export SLURM_ADDR_BASE=${SLURM_ADDR_BASE:-127.0.41}
# Slurm's own backfill interval (30 s), not the tests' 1 s: with a 1-s
# backfill a job starts either at once (the main scheduler) or at the next
# backfill pass, and the mix of those two modes, not either side, sets p50
# (docs/benchmarks.md). The benchmark's jobs are of one shape (no hetjob,
# which only backfill starts).
export SLURM_SCHED_PARAMS=${SLURM_SCHED_PARAMS:-bf_interval=30,batch_sched_delay=0}

args=()
while (($#)); do
    case $1 in
    --launch | --launch-gang | --tput | --clients | --json) args+=("$1" "$2"); shift 2 ;;
    --no-backend-side) args+=("$1"); shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-slurm-runtime-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done

[[ -f "$BUILD_DIR/CMakeCache.txt" ]] || cmake -S . -B "$BUILD_DIR" >/dev/null
cmake --build "$BUILD_DIR" -j2 --target trainyard >/dev/null ||
    { echo "run-slurm-runtime-bench: the build failed" >&2; exit 1; }

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/ty-slurm-rt-bench.XXXXXX")
# The pods' /tmp is their own; /var/tmp is the host's, so the stamps go there.
stampdir=$(mktemp -d /var/tmp/ty-slurm-rt-stamps.XXXXXX)
chmod 1777 "$stampdir"
server_pid='' slurm_dir=''
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    if [[ -n "$server_pid" ]]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ -n "$slurm_dir" ]]; then
        scripts/slurm-cluster.sh stop "$slurm_dir" >/dev/null 2>&1 || true
    fi
    rm -rf "$tmpdir" "$stampdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

slurm_dir=$(scripts/slurm-cluster.sh start 2>"$tmpdir/cluster.err" | tail -n1)
if [[ ! -f "$slurm_dir/env" ]]; then
    slurm_dir=''
    echo "run-slurm-runtime-bench: the Slurm cluster did not start:" >&2
    tail -n 20 "$tmpdir/cluster.err" >&2
    exit 1
fi
# shellcheck disable=SC1091  # made by the start above
. "$slurm_dir/env"
export SLURM_CONF

# shellcheck disable=SC2086  # SERVER_FLAGS is a list of words
"$BUILD_DIR/trainyard" server --runtime slurm --port 0 --data-dir "$tmpdir/data" \
    --log-level warn ${SERVER_FLAGS:-} >"$tmpdir/server.out" 2>"$tmpdir/server.err" &
server_pid=$!
url=''
for _ in $(seq 1 300); do
    url=$(sed -n 's/^listening on \(https\{0,1\}:\/\/[0-9.]*:[0-9]*\).*/\1/p' "$tmpdir/server.out" | head -n1)
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmpdir/server.err" >&2; exit 1; }
    sleep 0.1
done
[[ -n "$url" ]] || { echo "run-slurm-runtime-bench: the server did not listen" >&2; exit 1; }
"$BUILD_DIR/trainyard" kubeconfig --data-dir "$tmpdir/data" --server "$url" -o "$tmpdir/kubeconfig"
token=$(sed -n 's/^ *token: "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmpdir/kubeconfig" | head -n1)
ca=()
[[ $url == https://* && -f "$tmpdir/data/pki/ca.crt" ]] && ca=(--ca "$tmpdir/data/pki/ca.crt")
# The Slurm nodes appear as Nodes once the backend has synced.
for _ in $(seq 1 300); do
    [[ $(python3 -c 'import sys,json; print(len(json.load(sys.stdin)["items"]))' \
        < <(curl -sk -H "Authorization: Bearer $token" "$url/api/v1/nodes") 2>/dev/null) == "$SLURM_NODES" ]] && break
    sleep 0.1
done

echo "== machine"
echo "cpus:    $(nproc) ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1))"
echo "memory:  $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
echo "kernel:  $(uname -sr)"
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "slurm:   $(slurmctld -V), $SLURM_NODES nodes x $SLURM_CPUS CPUs (scripts/slurm-cluster.sh)"
echo "server:  $url --runtime slurm, pid $server_pid"
echo

rc=0
/usr/bin/python3 bench/slurm_runtime_bench.py --server "$url" --token "$token" "${ca[@]}" \
    --shared "$tmpdir/data/slurm-shared" --jobcomp "$slurm_dir/log/jobcomp.txt" --stampdir "$stampdir" --workdir "$tmpdir" \
    "${args[@]}" || rc=$?
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (after)"
if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "run-slurm-runtime-bench: the server died during the run" >&2
    rc=1
fi
if grep -qv '^$' "$tmpdir/server.err"; then
    echo "-- server stderr (last 10 lines)"
    tail -n 10 "$tmpdir/server.err"
fi
exit "$rc"
