#!/usr/bin/env bash
# run-console-bench.sh - the web console in headless Chromium with many jobs:
# the job list's first paint, a job page's first paint, and how soon the
# list shows a change while jobs change at a steady rate
# (bench/console-bench.mjs; docs/benchmarks.md, "The web console").
#
#   JOBS=10000 RATE=100 SECONDS_UPDATING=10 bench/run-console-bench.sh
# Needs what tests/browser needs (chromium, node, npm) and a build.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
export TRAINYARD=${TRAINYARD:-$PWD/$BUILD_DIR/trainyard}
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || { echo "needs chromium (scripts/deps.sh test)"; exit 1; }
(cd console && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || exit 1
. tests/e2e/lib.sh
# plain HTTP on loopback: the numbers are the console's, not TLS's
start_server --no-tls
export CHROMIUM JOBS=${JOBS:-10000} RATE=${RATE:-100} SECONDS_UPDATING=${SECONDS_UPDATING:-10}
timeout 900 node bench/console-bench.mjs
