#!/usr/bin/env bash
# Runs every end-to-end test (tNNNN-*.sh and tNNNN-*.py) and prints one summary line.
cd "$(dirname "$0")"
: "${TRAINYARD:?set TRAINYARD to the trainyard binary}"
export TRAINYARD
# Debian's python3-kubernetes is installed for /usr/bin/python3; another python3 may come first.
PY=/usr/bin/python3
passed=0 failed=0 failed_names=()
for t in t[0-9][0-9][0-9][0-9]-*; do
    case "$t" in
        *.sh) cmd=(bash "$t") ;;
        *.py) cmd=("$PY" "$t") ;;
        *) continue ;;
    esac
    echo "=== $t"
    if timeout 600 "${cmd[@]}"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failed_names+=("$t")
    fi
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
