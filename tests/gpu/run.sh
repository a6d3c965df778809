#!/bin/sh
# tests/gpu/run.sh - the GPU reader on a machine with a real NVIDIA GPU
# (not part of make test: CI has none). Builds gpu_probe with cc alone (no
# other dependency than libc), runs it, and prints nvidia-smi's view of
# the same readings to compare. Run from the repository root.
set -u
out=${OUT:-/tmp}
cc -std=c17 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -o "$out/gpu_probe" \
    tests/gpu/gpu_probe.c src/runtime/local/gpu.c src/runtime/local/gpu_metrics.c \
    src/base/buf.c src/base/log.c src/base/thread.c src/base/timeutil.c -ldl -lpthread -lm ||
    exit 1
"$out/gpu_probe" "${1:-5}"
echo "--- nvidia-smi"
nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,utilization.memory,memory.used,memory.total,memory.free,temperature.gpu,power.draw,ecc.errors.uncorrected.volatile.total \
    --format=csv 2>&1
