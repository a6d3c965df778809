# lib.sh - helpers for the end-to-end tests: a real server on a loopback port,
# driven with the real kubectl. Source it from a test script.
set -uo pipefail

: "${TRAINYARD:?set TRAINYARD to the trainyard binary}"
# Pods run as their own users, not root, with a /tmp of their own
# (docs/internals/runtime.md, "Identity and isolation"): the directory where
# a test and its pods leave each other files is outside /tmp and open to any
# uid, as /tmp is (1777); the server's data directory in it is closed (0700)
# by the runtime.
E2E_TMP=$(mktemp -d /var/tmp/trainyard-e2e.XXXXXX)
chmod 1777 "$E2E_TMP"
E2E_FAILS=0
E2E_CHECKS=0
SERVER_PID=""
# How long a wait for the server to get somewhere may take: far past what any
# machine needs, so that only a server that never gets there fails (tests
# wait on conditions, never on a sleep being long enough).
E2E_WAIT=${E2E_WAIT:-120}

cleanup() {
    [ -n "${OPERATOR_PID:-}" ] && kill "$OPERATOR_PID" 2>/dev/null && wait "$OPERATOR_PID" 2>/dev/null
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    # Pod supervisors outlive the server by design; this test's must not outlive the test.
    pkill -TERM -f "supervise --pod-dir $E2E_TMP/" 2>/dev/null
    sleep 0.2
    pkill -KILL -f "supervise --pod-dir $E2E_TMP/" 2>/dev/null
    # E2E_KEEP=DIR: a failed test's files (server and operator logs, data)
    # are kept there for a look afterwards.
    if [ -n "${E2E_KEEP:-}" ] && [ "${E2E_FAILS:-0}" != 0 ]; then
        mkdir -p "$E2E_KEEP" && cp -a "$E2E_TMP" "$E2E_KEEP/" 2>/dev/null
        echo "# kept $E2E_TMP in $E2E_KEEP"
    fi
    rm -rf "$E2E_TMP"
}
trap cleanup EXIT

# start_server [extra flags]: starts on a free port, sets SERVER and KUBECONFIG.
# With E2E_OPERATOR=1 (the operator-mode pass of make test) the same test
# runs against `trainyard server --api-only` as the cluster, driven over HTTP
# by `trainyard operator` (the scheduler's flags go to the operator; the
# stand-in has no kube-scheduler, so the operator serves default-scheduler too).
start_server() {
    local data="${E2E_DATA:-$E2E_TMP/data}" args=() opargs=() named=""
    if [ -n "${E2E_OPERATOR:-}" ]; then
        while [ $# -gt 0 ]; do
            case "$1" in
            --scheduler-conf | --scheduler-name | --job-record-retention)
                [ "$1" = --scheduler-name ] && named=1
                opargs+=("$1" "$2")
                shift 2
                ;;
            *) args+=("$1"); shift ;;
            esac
        done
        [ -n "$named" ] || opargs+=(--scheduler-name volcano --scheduler-name default-scheduler)
        args=(--api-only "${args[@]}")
    else
        args=("$@")
    fi
    # The shell truncates server.out in the child, after this function may
    # already have looked: a restart's first look could find the previous
    # server's line, and the next read an empty file (SERVER="").
    rm -f "$E2E_TMP/server.out"
    "$TRAINYARD" server --port 0 --data-dir "$data" "${args[@]}" >"$E2E_TMP/server.out" 2>"$E2E_TMP/server.err" &
    SERVER_PID=$!
    local end=$((SECONDS + E2E_WAIT))
    while [ $SECONDS -lt $end ]; do
        if grep -q '^listening on http' "$E2E_TMP/server.out" 2>/dev/null; then
            SERVER=$(sed -n 's/^listening on //p' "$E2E_TMP/server.out")
            export SERVER TRAINYARD_SERVER="$SERVER"
            # The admin credential the first start made in the data directory.
            "$TRAINYARD" kubeconfig --data-dir "$data" --server "$SERVER" \
                -o "$E2E_TMP/kubeconfig" || exit 1
            export KUBECONFIG="$E2E_TMP/kubeconfig"
            E2E_TOKEN=$(sed -n 's/^ *token: "\(.*\)"$/\1/p' "$KUBECONFIG")
            E2E_CA=""
            # (a server given its own certificate has no pki/: no CA then)
            case "$SERVER" in https://*) [ -f "$data/pki/ca.crt" ] && E2E_CA="$data/pki/ca.crt" ;; esac
            export E2E_TOKEN E2E_CA
            [ -z "${E2E_OPERATOR:-}" ] || start_operator "${opargs[@]}"
            return 0
        fi
        sleep 0.1
    done
    echo "server did not start:"; cat "$E2E_TMP/server.err"
    exit 1
}

# start_operator [flags]: `trainyard operator` on the server's kubeconfig;
# returns once it leads (its controllers and scheduler run).
start_operator() {
    try_operator "$@" && return 0
    echo "operator did not start:"; cat "$E2E_TMP/operator.err"
    exit 1
}

# try_operator [flags]: start_operator's work; 1 if the operator exited
# (for a test that retries) or did not lead in time.
try_operator() {
    # a server killed by the test left its operator pointing at the old port
    if [ -n "${OPERATOR_PID:-}" ]; then
        kill "$OPERATOR_PID" 2>/dev/null
        wait "$OPERATOR_PID" 2>/dev/null
    fi
    rm -f "$E2E_TMP/operator.out"
    # operator.err gathers every start's lines: only this start's count
    local seen
    seen=$(cat "$E2E_TMP/operator.err" 2>/dev/null | wc -l)
    "$TRAINYARD" operator --kubeconfig "$E2E_TMP/kubeconfig" --port 0 "$@" \
        >"$E2E_TMP/operator.out" 2>>"$E2E_TMP/operator.err" &
    OPERATOR_PID=$!
    local end=$((SECONDS + E2E_WAIT))
    while [ $SECONDS -lt $end ]; do
        if tail -n +$((seen + 1)) "$E2E_TMP/operator.err" 2>/dev/null | grep -q 'operator: leading' &&
            grep -q '^listening on ' "$E2E_TMP/operator.out" 2>/dev/null; then
            OPERATOR=$(sed -n 's/^listening on //p' "$E2E_TMP/operator.out")
            export OPERATOR
            return 0
        fi
        kill -0 "$OPERATOR_PID" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

stop_server() {
    if [ -n "${OPERATOR_PID:-}" ]; then
        kill "$OPERATOR_PID" 2>/dev/null
        wait "$OPERATOR_PID" 2>/dev/null
        OPERATOR_PID=""
    fi
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
}

# kcurl [curl args]: curl as the admin: the server's CA (from the data
# directory the kubeconfig was made from) and the admin's bearer token.
kcurl() {
    local ca=()
    [ -n "${E2E_CA:-}" ] && ca=(--cacert "$E2E_CA")
    curl "${ca[@]}" -H "Authorization: Bearer $E2E_TOKEN" "$@"
}
# controller_metrics: the job controllers' /metrics: the server's, or in
# operator mode the operator's (its controllers count there, as
# training-operator's do on a cluster).
controller_metrics() {
    if [ -n "${E2E_OPERATOR:-}" ]; then curl -s "$OPERATOR/metrics"; else kcurl -s "$SERVER/metrics"; fi
}
# scheduler_log: the file the gang scheduler logs to (the operator's in
# operator mode).
scheduler_log() {
    if [ -n "${E2E_OPERATOR:-}" ]; then echo "$E2E_TMP/operator.err"; else echo "$E2E_TMP/server.err"; fi
}
# acurl [curl args]: curl with the server's CA and no credentials (anonymous).
acurl() {
    local ca=()
    [ -n "${E2E_CA:-}" ] && ca=(--cacert "$E2E_CA")
    curl "${ca[@]}" "$@"
}

# wait_until [SECS] CMD...: runs CMD every quarter second until it succeeds;
# fails after SECS (E2E_WAIT) seconds. SECS is a number, CMD is not.
wait_until() {
    local secs=$E2E_WAIT
    case "$1" in ''|*[!0-9]*) ;; *) secs=$1; shift ;; esac
    # (a test's own deadline is a floor under E2E_WAIT, never a shorter one:
    # every wait here is for something that must happen)
    [ "$secs" -lt "$E2E_WAIT" ] && secs=$E2E_WAIT
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.25
    done
}

# file_has FILE REGEX: FILE has a line matching REGEX (for wait_until).
# wait_tj NAME WANT SECS: a TrainJob's last condition type once it is WANT
# (or a final one: Complete, Failed), else what it was at the deadline.
wait_tj() {
    local state="" secs=$3
    [ "$secs" -lt "$E2E_WAIT" ] && secs=$E2E_WAIT
    for _ in $(seq $((secs * 2))); do
        state=$(kubectl get trainjob "$1" -o jsonpath='{.status.conditions[-1:].type}' 2>/dev/null)
        [ "$state" = "$2" ] && break
        case "$state" in Complete|Failed) break ;; esac
        sleep 0.5
    done
    echo "$state"
}

# tj_cond JOB TYPE: "STATUS REASON" of a TrainJob's condition of that type;
# tj_cond_is JOB TYPE "STATUS REASON": whether it is that (for wait_until).
tj_cond() { kubectl get trainjob "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status} {.status.conditions[?(@.type==\"$2\")].reason}" 2>/dev/null; }
tj_cond_is() { [ "$(tj_cond "$1" "$2")" = "$3" ]; }

file_has() { grep -Eq -- "$2" "$1" 2>/dev/null; }
# pods_in_phase PHASE POD...: every one of the pods is in PHASE (for wait_until).
pods_in_phase() {
    local want=$1 p
    shift
    for p; do [ "$(kubectl get pod "$p" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$want" ] || return 1; done
}
# log_has POD REGEX: the pod's log, as kubectl logs serves it, has such a line.
log_has() { grep -Eq -- "$2" <<<"$(kubectl logs "$1" 2>/dev/null)"; }

pass() { E2E_CHECKS=$((E2E_CHECKS + 1)); echo "ok   - $1"; }
fail() { E2E_CHECKS=$((E2E_CHECKS + 1)); E2E_FAILS=$((E2E_FAILS + 1)); echo "FAIL - $1"; }

# check NAME CMD...: passes when the command succeeds.
check() { local name=$1; shift; if "$@" >"$E2E_TMP/last.out" 2>&1; then pass "$name"; else fail "$name"; sed 's/^/     | /' "$E2E_TMP/last.out" | head -20; fi; }
# expect_eq NAME WANT GOT
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1"; echo "     want: $2"; echo "     got:  $3"; fi; }
# expect_match NAME REGEX TEXT
# (grep reads a here-string, not a pipe: with pipefail, `printf | grep -q`
# fails when grep exits at its first match while printf still writes a long
# text, and the writer dies of SIGPIPE; a loaded machine made that happen.)
expect_match() { if grep -Eq -- "$2" <<<"$3"; then pass "$1"; else fail "$1"; echo "     want match: $2"; printf '%s\n' "$3" | sed 's/^/     | /' | head -20; fi; }

finish() {
    echo "# $E2E_CHECKS checks, $E2E_FAILS failed"
    [ "$E2E_FAILS" -eq 0 ]
}

# wait_job KIND NAME STATE [SECONDS]: waits until the job's last condition is STATE
# (or the job failed); prints the final state.
wait_job() {
    local kind=$1 name=$2 want=$3 secs=${4:-180} state=""
    [ "$secs" -lt "$E2E_WAIT" ] && secs=$E2E_WAIT
    for _ in $(seq $((secs * 2))); do
        state=$(kubectl get "$kind" "$name" -o jsonpath='{.status.conditions[-1:].type}' 2>/dev/null)
        [ "$state" = "$want" ] && break
        case "$state" in Succeeded|Failed) break ;; esac
        sleep 0.5
    done
    echo "$state"
}

# dump_job KIND NAME: what a failing test needs to see.
dump_job() {
    kubectl describe "$1" "$2" 2>&1 | tail -30 | sed 's/^/     | /'
    kubectl get pods -o wide 2>&1 | sed 's/^/     | /'
    for p in $(kubectl get pods -o name 2>/dev/null); do
        echo "     --- $p"; kubectl logs "$p" --tail=15 2>&1 | sed 's/^/     | /'
    done
}
