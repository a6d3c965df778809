#!/usr/bin/env bash
# Runs every end-to-end test (tNNNN-*.sh and tNNNN-*.py), then the job tests
# again in operator mode, and prints one summary line.
cd "$(dirname "$0")"
: "${TRAINYARD:?set TRAINYARD to the trainyard binary}"
export TRAINYARD
# Debian's python3-kubernetes is installed for /usr/bin/python3; another python3 may come first.
PY=/usr/bin/python3
passed=0 failed=0 failed_names=()
# A script's time limit only catches a hang: each wait in it has its own
# deadline, and on a loaded machine the slowest scripts (Slurm, elastic
# training) take several times what they take on an idle one.
LIMIT=${E2E_SCRIPT_LIMIT:-1800}
for t in t[0-9][0-9][0-9][0-9]-*; do
    case "$t" in
        *.sh) cmd=(bash "$t") ;;
        *.py) cmd=("$PY" "$t") ;;
        *) continue ;;
    esac
    echo "=== $t"
    start=$SECONDS
    if timeout "$LIMIT" "${cmd[@]}"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failed_names+=("$t")
    fi
    echo "# $t: $((SECONDS - start)) s"
done
# The job tests again in operator mode: `trainyard server --api-only` as the
# cluster and `trainyard operator` driving it over HTTP (lib.sh, E2E_OPERATOR).
OPERATOR_PASS=(t0700 t0710 t0715 t0716 t0717 t0720 t0730 t0740 t0800 t0810 t0820 t0830 t0840
    t0850 t0910 t0920 t0930 t1410 t1420 t1430 t1440 t1460 t1470 t1480)
for n in "${OPERATOR_PASS[@]}"; do
    for t in "$n"-*.sh; do
        [ -f "$t" ] || continue
        echo "=== $t (operator mode)"
        start=$SECONDS
        if E2E_OPERATOR=1 timeout "$LIMIT" bash "$t"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1)); failed_names+=("$t(operator)")
        fi
        echo "# $t (operator mode): $((SECONDS - start)) s"
    done
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
