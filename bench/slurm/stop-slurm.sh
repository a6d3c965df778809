#!/usr/bin/env bash
# stop-slurm.sh DIR - take down a cluster started by start-slurm.sh and
# remove DIR. Cancels its jobs, asks slurmctld to shut itself and slurmd
# down, then stops munged; whatever outlives a bounded wait is killed by the
# pid in its pid file. Safe to run twice and on a half-started cluster.
set -uo pipefail

dir=${1:-}
if [[ -z "$dir" || ! -d "$dir" || "$dir" != /tmp/ty-slurm.* ]]; then
    echo "usage: stop-slurm.sh /tmp/ty-slurm.XXXXXX" >&2
    exit 2
fi
export SLURM_CONF="$dir/etc/slurm.conf"

pid_of() {
    local f=$1 p
    [[ -f "$f" ]] || return 1
    p=$(tr -dc 0-9 <"$f")
    [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null && echo "$p"
}

# Waits up to $2 tenths of a second for pid $1 to exit; then SIGKILL.
reap() {
    local pid=$1 n=0
    while ((n < $2)) && kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        n=$((n + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "stop-slurm: pid $pid still running after $(($2 / 10)) s; killing it" >&2
        kill -KILL "$pid" 2>/dev/null
    fi
}

ctld=$(pid_of "$dir/run/slurmctld.pid")
slurmd=$(pid_of "$dir/run/slurmd-localhost.pid")
if [[ -f "$SLURM_CONF" && -n "$ctld" ]]; then
    # Every job on this private cluster is the benchmark's.
    scancel --quiet --full --user=root 2>/dev/null
    for _ in $(seq 1 50); do
        [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
        sleep 0.2
    done
    scontrol shutdown >/dev/null 2>&1 || kill -TERM "$ctld" 2>/dev/null
fi
[[ -n "$ctld" ]] && reap "$ctld" 100
if [[ -n "$slurmd" ]]; then
    kill -0 "$slurmd" 2>/dev/null && kill -TERM "$slurmd" 2>/dev/null
    reap "$slurmd" 100
fi
# Job steps whose slurmd is gone: slurmstepd processes that still have a
# socket in this cluster's spool directory.
for sock in "$dir"/spool/*/localhost_*.*; do
    [[ -S "$sock" ]] || continue
    for p in $(fuser "$sock" 2>/dev/null); do
        kill -KILL "$p" 2>/dev/null
    done
done
munged=$(pid_of "$dir/munge/munged.pid")
if [[ -n "$munged" ]]; then
    kill -TERM "$munged" 2>/dev/null
    reap "$munged" 50
fi
rm -rf "$dir"
