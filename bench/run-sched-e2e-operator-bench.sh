#!/usr/bin/env bash
# run-sched-e2e-operator-bench.sh - end-to-end scheduling at 5,000 simulated
# nodes, embedded versus operator mode, alternately in one run (issue 34).
#
# PAIRS times: bench/run-sched-e2e-bench.sh with MODE=embedded, then with
# MODE=operator (`trainyard server --api-only` + `trainyard operator` over
# HTTP), the same arguments (passed on to bench_sched_e2e) each time. Then,
# with COUNT=1, one more run of each mode with the audit log on, to count
# the requests sent over HTTP by verb and resource (not timed: the log costs
# the server CPU). Prints each run's bound pods/s, the median and range per
# mode and the ratio operator/embedded (of the medians, and the range of the
# pairs' ratios). Every run's output stays in $OUT.
#
#   PAIRS          pairs of runs (default 3)
#   OPERATOR_ARGS  the operator's extra flags (e.g. "--kube-api-qps -1")
#   COUNT          1: the counting runs after the pairs
#   COUNT_ARGS     more bench_sched_e2e arguments for those (e.g. "--duration 5
#                  --until-ended": the pods' whole lifecycle is counted)
#   OUT            where the runs' output goes (default: a new /tmp directory)
#   SUMMARY_ONLY   1: no runs, only the summary of those already in $OUT
#
#   bench/run-sched-e2e-operator-bench.sh --jobs 1000
#   OPERATOR_ARGS="--kube-api-qps -1" COUNT=1 bench/run-sched-e2e-operator-bench.sh --jobs 1000
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
PAIRS=${PAIRS:-3}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/sched-e2e-operator.XXXXXX")}
export OPERATOR_ARGS=${OPERATOR_ARGS:-}
mkdir -p "$OUT"
echo "runs' output in $OUT; operator flags: ${OPERATOR_ARGS:-(defaults)}; bench: $*"

run() { # name mode [env...]
    local name=$1 mode=$2 rc extra=()
    shift 2
    # shellcheck disable=SC2206  # COUNT_ARGS is words
    [[ $name == count-* ]] && extra=(${COUNT_ARGS:-})
    env MODE="$mode" RESULT_JSON="$OUT/$name.json" "$@" bench/run-sched-e2e-bench.sh \
        "${bench_args[@]}" "${extra[@]}" >"$OUT/$name.out" 2>&1
    rc=$?
    printf '%-12s rc=%d  %s\n' "$name" "$rc" \
        "$(grep -E '^(bound pods/s|server CPU|operator CPU):' "$OUT/$name.out" | tr -s ' ' |
            paste -sd';' -)"
}
bench_args=("$@")
for p in $(seq 1 "$PAIRS"); do
    [[ -n "${SUMMARY_ONLY:-}" ]] && break
    run "embedded-$p" embedded
    run "operator-$p" operator
done
if [[ -n "${COUNT:-}" && -z "${SUMMARY_ONLY:-}" ]]; then
    run count-embedded embedded AUDIT=1
    run count-operator operator AUDIT=1
fi

/usr/bin/python3 - "$OUT" "$PAIRS" <<'EOF'
import json, os, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def fig(name, key):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None
    return j[key] if j.get("complete") else None
print()
print("| mode | bound pods/s (runs) | median | range | server CPU s (median) | operator CPU s (median) |")
print("|---|---|---|---|---|---|")
med = {}
def num(x):
    return "-" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}"
for mode in ("embedded", "operator"):
    v = [fig(f"{mode}-{p}", "bound_per_s") for p in range(1, pairs + 1)]
    ok = [x for x in v if x is not None]
    cpu = [fig(f"{mode}-{p}", "server_cpu_s") for p in range(1, pairs + 1)]
    ocpu = [fig(f"{mode}-{p}", "operator_cpu_s") for p in range(1, pairs + 1)]
    cpu = [x for x in cpu if x is not None]
    ocpu = [x for x in ocpu if x is not None and x >= 0]
    if not ok:
        print(f"| {mode} | no complete run | | | | |")
        continue
    med[mode] = statistics.median(ok)
    print(f"| {mode} | {', '.join(num(x) for x in v)} | "
          f"{num(med[mode])} | {num(min(ok))} – {num(max(ok))} | "
          f"{statistics.median(cpu):.2f} | "
          f"{f'{statistics.median(ocpu):.2f}' if ocpu else '–'} |")
pr = []
for p in range(1, pairs + 1):
    e, o = fig(f"embedded-{p}", "bound_per_s"), fig(f"operator-{p}", "bound_per_s")
    if e and o:
        pr.append(o / e)
if len(med) == 2 and pr:
    print(f"\noperator/embedded: {med['operator'] / med['embedded']:.3g} (medians); "
          f"pairs {', '.join(f'{r:.3g}' for r in pr)} (median {statistics.median(pr):.3g}, "
          f"range {min(pr):.3g} – {max(pr):.3g})")
for name in ("count-embedded", "count-operator"):
    path = os.path.join(out, name + ".out")
    if os.path.exists(path):
        print(f"\n== {name}")
        with open(path) as f:
            lines = f.read().splitlines()
        for i, l in enumerate(lines):
            if l.startswith("== requests over HTTP"):
                print("\n".join(lines[i + 1:i + 40]))
                break
EOF
