#!/usr/bin/env bash
# The web console in a real headless Chromium (Debian's chromium, driven by
# playwright-core from console/package-lock.json) against a real
# `trainyard server`: console.test.mjs; first submitform.test.mjs, the
# submit form's manifests against `trainyard submit --dry-run`'s. Skips, saying so, only where
# chromium or Node.js is not installed (scripts/deps.sh installs both).
cd "$(dirname "$0")"
: "${TRAINYARD:?set TRAINYARD to the trainyard binary}"
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "browser: SKIPPED - chromium, node or npm is not installed (scripts/deps.sh test installs them)"
    exit 0
fi
# playwright-core at the version the lock file names (npm ci checks it)
if ! (cd ../../console && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "browser: npm ci in console/ failed"
    exit 1
fi
# the submit form's manifests against the CLI's, every kind (no browser;
# no kubeconfig, whose namespace would go into the CLI's manifests)
if ! KUBECONFIG=/nonexistent node submitform.test.mjs; then
    echo "browser: the submit form's manifests differ from trainyard submit's"
    exit 1
fi
. ../e2e/lib.sh
# One GPU read through NVML: the tests' double (tests/nvml_double, built
# with the tests), whose readings console.test.mjs moves by rewriting its
# file; the node agent writes them on the Node and the pods.
NVML_DOUBLE="$(dirname "$TRAINYARD")/libnvml_double.so"
[ -f "$NVML_DOUBLE" ] || { echo "browser: no $NVML_DOUBLE (built with the tests)"; exit 1; }
export TRAINYARD_NVML_LIB="$NVML_DOUBLE" NVML_DOUBLE_CONFIG="$E2E_TMP/nvml.conf"
echo "gpu 0 uuid=GPU-console-0 util=0 total_mib=81920 used_mib=0" >"$NVML_DOUBLE_CONFIG"
start_server --node-name console-node
# a user who may see his own namespace only (docs/security.md)
"$TRAINYARD" user add bob --data-dir "$E2E_TMP/data" \
    -o "$E2E_TMP/bob.kc" >/dev/null || { echo "user add bob failed"; exit 1; }
BOB_TOKEN=$(sed -n 's/^ *token: "\(.*\)"$/\1/p' "$E2E_TMP/bob.kc")
# a user whose namespace is not named after her (found through her group)
"$TRAINYARD" user add carol --namespace ml-team --group ml-team --data-dir "$E2E_TMP/data" \
    -o "$E2E_TMP/carol.kc" >/dev/null || { echo "user add carol failed"; exit 1; }
CAROL_TOKEN=$(sed -n 's/^ *token: "\(.*\)"$/\1/p' "$E2E_TMP/carol.kc")
export CHROMIUM BOB_TOKEN CAROL_TOKEN E2E_TMP TRAINYARD
if timeout 1800 node console.test.mjs; then
    echo "browser: console tests passed"
else
    E2E_FAILS=1
    echo "browser: console tests FAILED (server log: $E2E_TMP/server.err)"
    tail -20 "$E2E_TMP/server.err"
    exit 1
fi
