#!/usr/bin/env bash
# run-launch-bench.sh - job launch latency and short-job throughput of
# Trainyard, side by side with a local Slurm doing the same work.
#
# Builds if needed; starts a fresh `trainyard server` (free loopback port,
# throwaway data directory), runs bench/launch_bench against it and stops it;
# then, for each Slurm profile, starts a private one-node Slurm
# (bench/slurm/start-slurm.sh), runs the same phases with `launch_bench
# --slurm` and stops it; then prints the reports and the ratios
# (`launch_bench --compare`, once per profile). Run as root (slurmd needs it).
#
# Equal concurrency: the Slurm node declares as many CPUs as it takes to run
# as many 4-task jobs at once as Trainyard admits on its node. Trainyard's
# pods ask for no CPU, so its node admits by pod count: floor(allocatable
# pods / 4) jobs (110 pods: 27 jobs); Slurm gives each task 1 CPU, so
# SLURM_CPUS = 4 x that (108). Read from the server's Node when the
# Trainyard side runs; 108 otherwise.
#
#   --jobs-launch N       phase A jobs on each side (default 200)
#   --jobs-throughput N   phase B jobs on each side (default 1000)
#   --clients N           phase B submitting threads (default 4)
#   --only trainyard|slurm   run one side (the comparison needs both)
#   --json-dir DIR        keep trainyard.json and slurm-PROFILE.json there
#
#   BUILD_DIR      build directory to use (default: build)
#   SERVER_WAIT_S  how long to wait for the server to listen (default: 20)
#   SLURM_CPUS     CPUs the Slurm node declares (default: equal concurrency, above)
#   SLURM_PROFILES the Slurm configurations to run, in order (default
#                  "default tuned": Slurm's own scheduling defaults, then the
#                  high-throughput guide's settings; bench/slurm/start-slurm.sh)
#   TIME_LIMIT_S   per side, for launch_bench (default 600)
#   SERVER_FLAGS   more flags for Trainyard's server (e.g. --no-tls), word-split
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
SERVER_WAIT_S=${SERVER_WAIT_S:-20}
TIME_LIMIT_S=${TIME_LIMIT_S:-600}
SLURM_CPUS=${SLURM_CPUS:-}
SLURM_PROFILES=${SLURM_PROFILES:-default tuned}
for p in $SLURM_PROFILES; do
    case $p in default | tuned) ;; *) echo "run-launch-bench: unknown Slurm profile $p" >&2; exit 2 ;; esac
done

jobs_launch=200 jobs_tput=1000 clients=4 only='' json_dir=''
while (($#)); do
    case $1 in
    --jobs-launch) jobs_launch=$2; shift 2 ;;
    --jobs-throughput) jobs_tput=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --json-dir) json_dir=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-launch-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
case $only in
'' | trainyard | slurm) ;;
*) echo "run-launch-bench: --only takes trainyard or slurm" >&2; exit 2 ;;
esac
common=(--jobs-launch "$jobs_launch" --jobs-throughput "$jobs_tput" --clients "$clients"
    --time-limit "$TIME_LIMIT_S")

# Incremental: a no-op when the binaries are current.
build_log=$(mktemp "${TMPDIR:-/tmp}/run-launch-bench.build.XXXXXX")
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD_DIR" >/dev/null
fi
targets=(trainyard launch_bench)
# The bind shim that the runtime preloads into pods, where the tree has one.
[[ -f src/runtime/local/bindshim.c ]] && targets+=(tybind)
if ! cmake --build "$BUILD_DIR" -j2 --target "${targets[@]}" >"$build_log" 2>&1; then
    if [[ ! -x "$BUILD_DIR/trainyard" || ! -x "$BUILD_DIR/launch_bench" ]]; then
        cat "$build_log" >&2
        rm -f "$build_log"
        exit 1
    fi
    echo "run-launch-bench: WARNING: the build failed; measuring the binaries already in $BUILD_DIR" >&2
fi
rm -f "$build_log"

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-launch.XXXXXX")
server_pid=
slurm_dir=
# shellcheck disable=SC2317  # invoked by the trap
stop_server() {
    [[ -n "$server_pid" ]] || return 0
    if kill -0 "$server_pid" 2>/dev/null; then
        local n=0
        kill -TERM "$server_pid" 2>/dev/null || true
        # Bounded wait, then force. ps, not kill -0: a zombie still takes signals.
        while ((n < 100)) && ps -o stat= -p "$server_pid" 2>/dev/null | grep -qv Z; do
            sleep 0.1
            n=$((n + 1))
        done
        if ((n >= 100)); then
            kill -KILL "$server_pid" 2>/dev/null || true
            echo "run-launch-bench: the server ignored SIGTERM for 10 s; killed it" >&2
        fi
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=
    stop_supervisors
}
# shellcheck disable=SC2317
any_alive() {
    local p
    for p; do kill -0 "$p" 2>/dev/null && return 0; done
    return 1
}
# Pod supervisors outlive the server by design (a later server adopts them).
# Ours run from our data directory: stop them by pid so that they cannot
# share the machine with the Slurm side.
# shellcheck disable=SC2317
stop_supervisors() {
    local p pids=() n=0
    for p in /proc/[0-9]*; do
        if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "--pod-dir $tmpdir/"; then
            pids+=("${p#/proc/}")
        fi
    done
    ((${#pids[@]})) || return 0
    kill -TERM "${pids[@]}" 2>/dev/null || true
    while ((n++ < 50)) && any_alive "${pids[@]}"; do sleep 0.1; done
    kill -KILL "${pids[@]}" 2>/dev/null || true
    echo "run-launch-bench: stopped ${#pids[@]} pod supervisors left after the server" >&2
}
# shellcheck disable=SC2317
cleanup() {
    stop_server
    if [[ -n "$slurm_dir" ]]; then
        bench/slurm/stop-slurm.sh "$slurm_dir" || true
        slurm_dir=
    fi
    rm -rf "$tmpdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== machine"
echo "cpus:    $(nproc)"
echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "memory:  $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
echo "kernel:  $(uname -sr)"
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "build:   $BUILD_DIR ($(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null))"
echo "alloc:   $("$BUILD_DIR/trainyard" version | sed -n 's/^allocator: //p')"
echo "work:    phase A $jobs_launch jobs, phase B $jobs_tput jobs ($clients submitters), 4 replicas/tasks each"
echo

rc=0
ty_json=$tmpdir/trainyard.json

# How many 4-pod jobs Trainyard's node(s) admit at once, from the server's
# Nodes: the sum of floor(allocatable pods / 4). Empty when unknown.
ty_concurrent_jobs() {
    local url=$1 token
    token=$(sed -n 's/^ *token: "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmpdir/kubeconfig" | head -n1)
    curl -sk --max-time 10 -H "Authorization: Bearer $token" "$url/api/v1/nodes" 2>/dev/null |
        /usr/bin/python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(sum(int(n["status"]["allocatable"]["pods"]) // 4 for n in items) or "")' 2>/dev/null || true
}

run_trainyard() {
    local url='' extra=()
    # --fake-gpus is being wired into the server; pass it only when taken.
    if "$BUILD_DIR/trainyard" server --help 2>&1 | grep -q -- --fake-gpus; then
        extra=(--fake-gpus 0)
    fi
    # shellcheck disable=SC2086  # SERVER_FLAGS is a list of words
    "$BUILD_DIR/trainyard" server --port 0 --data-dir "$tmpdir/data" --log-level warn "${extra[@]}" \
        ${SERVER_FLAGS:-} >"$tmpdir/server.out" 2>"$tmpdir/server.err" &
    server_pid=$!
    for _ in $(seq 1 $((SERVER_WAIT_S * 10))); do
        url=$(sed -n 's/^listening on \(https\{0,1\}:\/\/[0-9.]*:[0-9]*\).*/\1/p' "$tmpdir/server.out" | head -n1)
        [[ -n "$url" ]] && break
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "run-launch-bench: the server exited before listening:" >&2
            cat "$tmpdir/server.err" >&2
            return 1
        fi
        sleep 0.1
    done
    if [[ -z "$url" ]]; then
        echo "run-launch-bench: the server did not listen within ${SERVER_WAIT_S}s" >&2
        return 1
    fi
    "$BUILD_DIR/trainyard" kubeconfig --data-dir "$tmpdir/data" --server "$url" \
        -o "$tmpdir/kubeconfig" || return 1
    echo "== Trainyard (server $url, pid $server_pid${extra[*]:+, ${extra[*]}})"
    if [[ -z $SLURM_CPUS ]]; then
        local jobs
        jobs=$(ty_concurrent_jobs "$url")
        if [[ $jobs =~ ^[0-9]+$ ]] && ((jobs > 0)); then
            SLURM_CPUS=$((jobs * 4))
            echo "equal concurrency: Trainyard's node admits $jobs 4-pod jobs at once -> SLURM_CPUS=$SLURM_CPUS"
        fi
    fi
    local brc=0
    "$BUILD_DIR/launch_bench" --server "$url" --kubeconfig "$tmpdir/kubeconfig" --server-pid "$server_pid" "${common[@]}" \
        --json "$ty_json" || brc=$?
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "run-launch-bench: the server died during the benchmark" >&2
        brc=1
    fi
    stop_server
    if [[ -s "$tmpdir/server.err" ]]; then
        echo "-- server stderr (last 20 lines)"
        tail -n 20 "$tmpdir/server.err"
    fi
    echo
    return "$brc"
}

run_slurm() { # run_slurm PROFILE
    local brc=0 profile=$1
    echo "== Slurm, profile $profile (SLURM_CPUS=$SLURM_CPUS: $((SLURM_CPUS / 4)) 4-task jobs at once)"
    slurm_dir=$(SLURM_CPUS=$SLURM_CPUS SLURM_PROFILE=$profile bench/slurm/start-slurm.sh) ||
        { slurm_dir=; return 1; }
    echo "slurm.conf: $(grep -E '^(SchedulerParameters|MinJobAge|SlurmctldDebug|SlurmdDebug)=' \
        "$slurm_dir/etc/slurm.conf" | tr '\n' ' ')"
    # Jobs run (and leave their stamps) in our temp dir, so the trap removes it.
    mkdir -p "$tmpdir/slurm-work-$profile"
    SLURM_CONF=$slurm_dir/etc/slurm.conf "$BUILD_DIR/launch_bench" --slurm "${common[@]}" \
        --work-dir "$tmpdir/slurm-work-$profile" --json "$tmpdir/slurm-$profile.json" || brc=$?
    bench/slurm/stop-slurm.sh "$slurm_dir" || true
    slurm_dir=
    echo
    return "$brc"
}

if [[ $only != slurm ]]; then run_trainyard || rc=1; fi
if [[ -z $SLURM_CPUS ]]; then
    SLURM_CPUS=108
    echo "equal concurrency: Trainyard's node not read; SLURM_CPUS=108 (110 pods / 4 = 27 jobs)"
fi
if [[ $only != trainyard ]]; then
    for p in $SLURM_PROFILES; do run_slurm "$p" || rc=1; done
fi

if [[ -z $only ]]; then
    for p in $SLURM_PROFILES; do
        echo "== comparison: Slurm profile $p, SLURM_CPUS=$SLURM_CPUS"
        if [[ -s "$ty_json" && -s "$tmpdir/slurm-$p.json" ]]; then
            "$BUILD_DIR/launch_bench" --compare "$ty_json" "$tmpdir/slurm-$p.json" || true
        else
            echo "(one side produced no results; see above)"
        fi
        echo
    done
fi
if [[ -n "$json_dir" ]]; then
    mkdir -p "$json_dir"
    cp -f "$ty_json" "$tmpdir"/slurm-*.json "$json_dir"/ 2>/dev/null || true
fi
exit "$rc"
