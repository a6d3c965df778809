#!/usr/bin/env bash
# run-sched-e2e-bench.sh - end-to-end scheduling throughput on simulated nodes.
#
# Builds if needed, starts a fresh `trainyard server --sim-nodes SPEC
# --no-local-node` on a free loopback port with a throwaway data directory,
# runs bench_sched_e2e against it, stops the server and cleans up. Extra
# arguments go to bench_sched_e2e (e.g. --jobs 18750 --duration 5 for
# 150,000 pods of 8-replica jobs).
#
#   BUILD_DIR      build directory to use (default: build)
#   SIM_NODES      --sim-nodes SPEC (default: 5000x8)
#   SERVER_WAIT_S  how long to wait for the server (and the operator) to start
#                  (default: 60)
#   MODE           embedded (default): the server runs the job controllers and
#                  the gang scheduler in process; operator: the server runs
#                  with --api-only (the stand-in cluster) and `trainyard
#                  operator` drives it over HTTP (docs/kubernetes.md)
#   OPERATOR_ARGS  extra flags for the operator (e.g. "--kube-api-qps -1")
#   AUDIT          1: the server writes an audit log (Metadata level) and the
#                  requests sent over HTTP during the benchmark are counted
#                  by verb and resource (bench/audit-requests.py); the log
#                  costs the server CPU, so keep it out of timed comparisons
#   RESULT_JSON    where bench_sched_e2e writes its figures (its --json)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
SIM_NODES=${SIM_NODES:-5000x8}
SERVER_WAIT_S=${SERVER_WAIT_S:-60}
MODE=${MODE:-embedded}
OPERATOR_ARGS=${OPERATOR_ARGS:-}
AUDIT=${AUDIT:-}
case "$MODE" in
embedded | operator) ;;
*) echo "run-sched-e2e-bench: MODE=$MODE: want embedded or operator" >&2; exit 2 ;;
esac
log="${TMPDIR:-/tmp}/run-sched-e2e-bench.build.$$"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD_DIR" >/dev/null
fi
if ! cmake --build "$BUILD_DIR" -j2 --target trainyard bench_sched_e2e >"$log" 2>&1; then
    if [[ ! -x "$BUILD_DIR/trainyard" || ! -x "$BUILD_DIR/bench_sched_e2e" ]]; then
        cat "$log" >&2
        rm -f "$log"
        exit 1
    fi
    echo "run-sched-e2e-bench: WARNING: the build failed; measuring the binaries already in $BUILD_DIR" >&2
fi
rm -f "$log"

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-e2e-bench.XXXXXX")
server_pid=
operator_pid=
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    # The operator first: it must not see the server go away and retry.
    if [[ -n "$operator_pid" ]] && kill -0 "$operator_pid" 2>/dev/null; then
        kill -TERM "$operator_pid" 2>/dev/null || true
        wait "$operator_pid" 2>/dev/null || true
    fi
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        local n=0
        kill -TERM "$server_pid" 2>/dev/null || true
        # Bounded wait, then force. ps, not kill -0: a zombie still takes signals.
        while ((n < 300)) && ps -o stat= -p "$server_pid" 2>/dev/null | grep -qv Z; do
            sleep 0.1
            n=$((n + 1))
        done
        if ((n >= 300)); then
            kill -KILL "$server_pid" 2>/dev/null || true
            echo "run-sched-e2e-bench: the server ignored SIGTERM for 30 s; killed it" >&2
        fi
        wait "$server_pid" 2>/dev/null || true
        # How many transactions the writes took (group commit) and how long the
        # commit section was held (and on the CPU), said at close.
        grep -m1 'store: .* transactions' "$tmpdir/server.err" | sed 's/^[^ ]* [a-z]* */store at close: /' || true
        # What its objects held in memory then (cold texts are compressed).
        grep -m1 'store: .* objects: ' "$tmpdir/server.err" | sed 's/^[^ ]* [a-z]* */store at close: /' || true
    fi
    rm -rf "$tmpdir"
}
trap cleanup EXIT INT TERM

echo "== machine"
echo "cpus:    $(nproc)"
echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "memory:  $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "build:   $BUILD_DIR ($(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null))"
echo "alloc:   $("$BUILD_DIR/trainyard" version | sed -n 's/^allocator: //p')"
server_args=(--sim-nodes "$SIM_NODES" --no-local-node)
[[ "$MODE" == operator ]] && server_args+=(--api-only)
[[ -n "$AUDIT" ]] && server_args+=(--audit-log-path "$tmpdir/audit.log")
echo "mode:    $MODE"
echo "server:  ${server_args[*]/$tmpdir\//}"
# (the stand-in has no kube-scheduler: the operator serves default-scheduler too)
# shellcheck disable=SC2206  # OPERATOR_ARGS is words
operator_args=(--scheduler-name volcano --scheduler-name default-scheduler $OPERATOR_ARGS)
[[ "$MODE" == operator ]] && echo "operator: ${operator_args[*]}"
echo

"$BUILD_DIR/trainyard" server --port 0 --data-dir "$tmpdir/data" --log-level info \
    "${server_args[@]}" >"$tmpdir/server.out" 2>"$tmpdir/server.err" &
server_pid=$!

url=
for _ in $(seq 1 $((SERVER_WAIT_S * 10))); do
    url=$(sed -n 's/^listening on \(https\{0,1\}:\/\/[0-9.]*:[0-9]*\).*/\1/p' "$tmpdir/server.out" | head -n1)
    [[ -n "$url" ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "run-sched-e2e-bench: the server exited before listening:" >&2
        cat "$tmpdir/server.err" >&2
        exit 1
    fi
    sleep 0.1
done
if [[ -z "$url" ]]; then
    echo "run-sched-e2e-bench: the server did not listen within ${SERVER_WAIT_S}s" >&2
    tail -n 20 "$tmpdir/server.err" >&2
    exit 1
fi
grep -m1 'sim: .* node(s)' "$tmpdir/server.err" | sed 's/^[^ ]* [a-z]* */node registration: /' || true
echo "server RSS after registration: $(awk '/^VmRSS:/ {printf "%.1f MiB", $2 / 1024}' /proc/$server_pid/status)"

# The admin credential the server made in its data directory (TLS and
# authentication are on by default): the benchmark tools read it.
"$BUILD_DIR/trainyard" kubeconfig --data-dir "$tmpdir/data" --server "$url" -o "$tmpdir/kubeconfig"
bench_args=(--server "$url" --kubeconfig "$tmpdir/kubeconfig" --server-pid "$server_pid")
if [[ "$MODE" == operator ]]; then
    "$BUILD_DIR/trainyard" operator --kubeconfig "$tmpdir/kubeconfig" --port 0 \
        "${operator_args[@]}" >"$tmpdir/operator.out" 2>"$tmpdir/operator.err" &
    operator_pid=$!
    for _ in $(seq 1 $((SERVER_WAIT_S * 10))); do
        grep -q 'operator: leading' "$tmpdir/operator.err" && break
        if ! kill -0 "$operator_pid" 2>/dev/null; then
            echo "run-sched-e2e-bench: the operator exited before leading:" >&2
            cat "$tmpdir/operator.err" >&2
            exit 1
        fi
        sleep 0.1
    done
    if ! grep -q 'operator: leading' "$tmpdir/operator.err"; then
        echo "run-sched-e2e-bench: the operator did not lead within ${SERVER_WAIT_S}s" >&2
        tail -n 20 "$tmpdir/operator.err" >&2
        exit 1
    fi
    # Its informers' first lists (5,000 nodes) are done before the first job.
    sleep 2
    echo "operator RSS after start: $(awk '/^VmRSS:/ {printf "%.1f MiB", $2 / 1024}' /proc/$operator_pid/status)"
    bench_args+=(--operator-pid "$operator_pid")
fi
[[ -n "${RESULT_JSON:-}" ]] && bench_args+=(--json "$RESULT_JSON")
echo "== benchmark (server $url, pid $server_pid${operator_pid:+, operator pid $operator_pid})"
rc=0
t_start=$(date +%s.%N)
"$BUILD_DIR/bench_sched_e2e" "${bench_args[@]}" "$@" || rc=$?
t_end=$(date +%s.%N)

if [[ -n "$AUDIT" ]]; then
    echo
    echo "== requests over HTTP (audit log)"
    sleep 1 # the audit writer thread drains its queue
    njobs=$(printf '%s\n' "$@" | awk 'p {print; exit} $0 == "--jobs" {p = 1}')
    /usr/bin/python3 bench/audit-requests.py "$tmpdir/audit.log" "${njobs:-1000}" \
        "$t_start" "$t_end" trainyard || rc=1
fi
if [[ -n "$operator_pid" ]] && ! kill -0 "$operator_pid" 2>/dev/null; then
    echo "run-sched-e2e-bench: the operator died during the benchmark" >&2
    tail -n 20 "$tmpdir/operator.err" >&2
    rc=1
fi
if [[ -n "$operator_pid" ]] && grep -qE ' (warn|error) ' "$tmpdir/operator.err"; then
    echo
    echo "== operator warnings and errors (last 20)"
    grep -E ' (warn|error) ' "$tmpdir/operator.err" | tail -n 20
fi

if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "run-sched-e2e-bench: the server died during the benchmark" >&2
    rc=1
fi
if grep -qE ' (warn|error) ' "$tmpdir/server.err"; then
    echo
    echo "== server warnings and errors (last 20)"
    grep -E ' (warn|error) ' "$tmpdir/server.err" | tail -n 20
fi
exit "$rc"
