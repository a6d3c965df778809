#!/usr/bin/env bash
# Installs what Trainyard needs from Debian's archive; skips what is already there.
# Idempotent: running it twice installs nothing the second time.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config libjansson-dev libmicrohttpd-dev libsqlite3-dev
            libyaml-dev libcurl4-openssl-dev libgnutls28-dev libcmocka-dev libjemalloc-dev
            libzstd-dev)
test_pkgs=(python3 python3-kubernetes python3-yaml curl
           python3-torch python3-mpi4py openmpi-bin python3-xgboost
           openssh-client
           # scripts/webhook-cert.sh and its test (t1200)
           openssl
           # the Slurm runtime's tests: a multi-node Slurm on this host (scripts/slurm-cluster.sh)
           slurmctld slurmd slurm-client munge)
# The web console's browser tests (tests/browser): a headless Chromium, and
# Node.js with npm for playwright-core (console/package-lock.json). Wanted,
# not required: where they cannot be installed the browser tests say they
# are skipped, and everything else still runs.
browser_pkgs=(chromium)
# The libFuzzer targets (make fuzz, tests/fuzz): clang and its runtimes.
fuzz_pkgs=(clang-14 libclang-rt-14-dev)

want=("${build_pkgs[@]}")
case "${1:-all}" in
  build) ;;
  fuzz) want+=("${fuzz_pkgs[@]}") ;;
  all|test) want+=("${test_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
  demo) want+=("${test_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|demo|fuzz|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# kubectl: use the one on the machine; Debian's kubernetes-client only where none is present.
if [ "${1:-all}" != build ] && [ "${1:-all}" != fuzz ] && ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi
optional=()
if [ "${1:-all}" = all ] || [ "${1:-all}" = test ]; then
  for p in "${browser_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || optional+=("$p")
  done
  # Node.js and npm: the ones on the machine; Debian's only where there are none.
  command -v node >/dev/null 2>&1 || optional+=(nodejs)
  command -v npm >/dev/null 2>&1 || optional+=(npm)
fi

if [ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ${#optional[@]} -gt 0 ]; then
  echo "deps: installing ${optional[*]} (for the browser tests)"
  $SUDO apt-get install -y -qq --no-install-recommends "${optional[@]}" ||
    echo "deps: could not install ${optional[*]}: the browser tests (tests/browser) will be skipped"
fi
