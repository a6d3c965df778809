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
           slurmctld slurmd slurm-client munge
           # the web console's browser tests (tests/browser): a headless Chromium
           # (and Node.js with npm for playwright-core, below)
           chromium)
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
# Node.js and npm (tests/browser's playwright-core, console/package-lock.json):
# the ones on the machine; Debian's only where there are none.
if [ "${1:-all}" != build ] && [ "${1:-all}" != fuzz ]; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
