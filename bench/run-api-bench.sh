#!/usr/bin/env bash
# run-api-bench.sh - benchmark a fresh `trainyard server` with bench/api_bench.
#
# Builds if needed, starts the server on a free loopback port with a throwaway
# data directory, runs the benchmark against it, stops the server and cleans
# up. Extra arguments go to api_bench (e.g. --jobs 2000 --json=out.json).
#
#   BUILD_DIR      build directory to use (default: build)
#   SERVER_WAIT_S  how long to wait for the server to listen (default: 20)
#   SERVER_FLAGS   more flags for the server (e.g. --no-tls), word-split
#   BENCH_AS_USER  run as this user (made with `trainyard user add`, bound to
#                  edit in the benchmark's namespace, which must be given as
#                  --namespace NS) instead of the admin: RBAC is then asked
#                  on every request (the admin's system:masters skips it)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
SERVER_WAIT_S=${SERVER_WAIT_S:-20}

# Incremental: a no-op when the binaries are current.
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
    cmake -S . -B "$BUILD_DIR" >/dev/null
fi
if ! cmake --build "$BUILD_DIR" -j2 --target trainyard api_bench >"${TMPDIR:-/tmp}/run-api-bench.build.$$" 2>&1; then
    if [[ ! -x "$BUILD_DIR/trainyard" || ! -x "$BUILD_DIR/api_bench" ]]; then
        cat "${TMPDIR:-/tmp}/run-api-bench.build.$$" >&2
        rm -f "${TMPDIR:-/tmp}/run-api-bench.build.$$"
        exit 1
    fi
    echo "run-api-bench: WARNING: the build failed; measuring the binaries already in $BUILD_DIR" >&2
fi
rm -f "${TMPDIR:-/tmp}/run-api-bench.build.$$"

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/trainyard-bench.XXXXXX")
server_pid=
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        local t0=$SECONDS n=0
        kill -TERM "$server_pid" 2>/dev/null || true
        # Bounded wait, then force. ps, not kill -0: a zombie still takes signals.
        while ((n < 100)) && ps -o stat= -p "$server_pid" 2>/dev/null | grep -qv Z; do
            sleep 0.1
            n=$((n + 1))
        done
        if ((n >= 100)); then
            kill -KILL "$server_pid" 2>/dev/null || true
            echo "run-api-bench: the server ignored SIGTERM for 10 s; killed it" >&2
        fi
        wait "$server_pid" 2>/dev/null || true
        echo "== server stopped $((SECONDS - t0)) s after SIGTERM (${n} polls of 0.1 s)"
    fi
    rm -rf "$tmpdir"
}
trap cleanup EXIT INT TERM

echo "== machine"
echo "cpus:    $(nproc)"
echo "cpu:     $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
echo "memory:  $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
echo "kernel:  $(uname -sr)"
echo "load:    $(cut -d" " -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs)')"
echo "build:   $BUILD_DIR ($(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null))"
echo "alloc:   $("$BUILD_DIR/trainyard" version | sed -n 's/^allocator: //p')"
echo

# shellcheck disable=SC2086  # SERVER_FLAGS is a list of words
"$BUILD_DIR/trainyard" server --port 0 --data-dir "$tmpdir/data" --log-level warn ${SERVER_FLAGS:-} \
    >"$tmpdir/server.out" 2>"$tmpdir/server.err" &
server_pid=$!

url=
for _ in $(seq 1 $((SERVER_WAIT_S * 10))); do
    url=$(sed -n 's/^listening on \(https\{0,1\}:\/\/[0-9.]*:[0-9]*\).*/\1/p' "$tmpdir/server.out" | head -n1)
    [[ -n "$url" ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        echo "run-api-bench: the server exited before listening:" >&2
        cat "$tmpdir/server.err" >&2
        exit 1
    fi
    sleep 0.1
done
if [[ -z "$url" ]]; then
    echo "run-api-bench: the server did not listen within ${SERVER_WAIT_S}s" >&2
    cat "$tmpdir/server.err" >&2
    exit 1
fi

# The admin credential the server made in its data directory (TLS and
# authentication are on by default): the benchmark tools read it.
"$BUILD_DIR/trainyard" kubeconfig --data-dir "$tmpdir/data" --server "$url" -o "$tmpdir/kubeconfig"
if [[ -n "${BENCH_AS_USER:-}" ]]; then
    ns=
    prev=
    for a in "$@"; do [[ "$prev" == --namespace ]] && ns=$a; prev=$a; done
    [[ -n "$ns" ]] || { echo "run-api-bench: BENCH_AS_USER needs --namespace NS" >&2; exit 2; }
    "$BUILD_DIR/trainyard" user add "$BENCH_AS_USER" --namespace "$ns" --data-dir "$tmpdir/data" \
        --server "$url" -o "$tmpdir/kubeconfig" >/dev/null
fi
echo "== benchmark (server $url, pid $server_pid)"
rc=0
"$BUILD_DIR/api_bench" --server "$url" --kubeconfig "$tmpdir/kubeconfig" --server-pid "$server_pid" "$@" || rc=$?

if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "run-api-bench: the server died during the benchmark" >&2
    rc=1
fi
if [[ -s "$tmpdir/server.err" ]]; then
    echo
    echo "== server stderr (last 20 lines)"
    tail -n 20 "$tmpdir/server.err"
fi
exit "$rc"
