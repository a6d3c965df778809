#!/usr/bin/env bash
# start-slurm.sh - start a private one-node Slurm (munged, slurmctld, slurmd)
# for benchmarks, as root, on loopback.
#
# Everything lives in a new directory /tmp/ty-slurm.XXXXXX: the munge key and
# socket, slurm.conf (from slurm.conf.in beside this script), state, spool,
# pid files and logs. Nothing under /etc is written, except what installing
# the Debian packages writes when they are missing. On success the last line
# on stdout is the directory; `source DIR/env` sets SLURM_CONF for the client
# commands, and stop-slurm.sh DIR takes it all down again.
#
#   SLURM_CPUS     CPUs the node declares (default 16: four 4-task jobs at once)
#   SLURM_PROFILE  default (Slurm's own scheduling and logging defaults) or
#                  tuned (the high-throughput guide's settings that measured
#                  better here; see below); default: tuned
#   SLURM_SCHED_PARAMS  with tuned: this SchedulerParameters instead (to try
#                  a variant; "" for none)
#   SLURM_WAIT_S   how long to wait for the cluster to be ready (default 30)
#   SLURM_NO_APT   set to 1 to fail instead of installing missing packages
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
SLURM_CPUS=${SLURM_CPUS:-16}
SLURM_WAIT_S=${SLURM_WAIT_S:-30}
SLURM_PROFILE=${SLURM_PROFILE:-tuned}

# The profiles differ in these lines of slurm.conf only.
#   default: what Slurm does when nothing is said.
#   tuned: from Slurm's high-throughput guide. bench/slurm/sweep-tuning.sh
#   measured each (300 jobs of 4 tasks from 4 clients, CPUs=108, 2 busy
#   cores; docs/benchmarks.md has the table):
#   - batch_sched_delay=0: 11.6 -> 21.8 jobs/s. The default 3 lets
#     slurmctld put off starting batch jobs by up to 3 s, and with a queue
#     of short jobs it does, after every wave of completions.
#   - MinJobAge=2 (finished jobs leave slurmctld after 2 s, not 300) and
#     SlurmctldDebug/SlurmdDebug=error: no difference measured alone
#     (11.6 jobs/s), kept as the guide advises for many short jobs.
#   Tried and not kept: defer (launch p50 233 -> 994 ms, no more jobs/s),
#   max_rpc_cnt=16 (17.4 jobs/s), sched_interval=1 (21.5),
#   sched_min_interval=0 + default_queue_depth=1000 (23.3, then 19.7 and
#   20.6 against 16.1 and 22.0 in an A/B: within the noise).
case $SLURM_PROFILE in
default)
    debug=info min_job_age=300 sched_params='' ;;
tuned)
    debug=error min_job_age=2 sched_params=${SLURM_SCHED_PARAMS-batch_sched_delay=0} ;;
*) die "SLURM_PROFILE is default or tuned, not $SLURM_PROFILE" ;;
esac
sched_line=${sched_params:+SchedulerParameters=$sched_params}

die() {
    echo "start-slurm: $*" >&2
    exit 1
}

[[ $(id -u) -eq 0 ]] || die "must run as root (slurmd starts jobs as their user)"

# Debian 12's Slurm 22.05 and munge, installed only when a command is missing.
need=()
for cmd in munged slurmctld slurmd sbatch; do
    command -v "$cmd" >/dev/null 2>&1 || need+=("$cmd")
done
if ((${#need[@]})); then
    [[ ${SLURM_NO_APT:-0} == 1 ]] && die "missing ${need[*]} and SLURM_NO_APT=1"
    echo "start-slurm: installing slurmctld slurmd slurm-client munge (missing: ${need[*]})" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
        >/dev/null 2>&1; then
        apt-get update >/dev/null 2>&1 || true
        apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null ||
            die "apt-get install failed"
    fi
fi
id munge >/dev/null 2>&1 || die "no user munge (the munge package creates it)"

# A free TCP port on loopback, not in the kernel's ephemeral range so that
# no outgoing connection takes it between this check and the daemon's bind.
used_ports=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
pick_port() {
    local p tries=0
    while ((tries++ < 200)); do
        p=$((20000 + RANDOM % 12000))
        if ! grep -qx "$p" <<<"$used_ports" && ! grep -qx "$((p + 1))" <<<"$used_ports"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
ctld_port=$(pick_port) || die "no free port"
slurmd_port=$((ctld_port + 1))

dir=$(mktemp -d /tmp/ty-slurm.XXXXXX)
ok=0
# shellcheck disable=SC2317  # invoked by the trap
on_exit() {
    if ((ok == 0)); then
        echo "start-slurm: failed; logs:" >&2
        tail -n 20 "$dir"/log/*.log >&2 2>/dev/null || true
        "$here/stop-slurm.sh" "$dir" >&2 || true
    fi
}
trap on_exit EXIT
chmod 755 "$dir"
mkdir -p "$dir"/{etc,state,spool/slurmd-localhost,run,log,munge,work}
chmod 755 "$dir/log"

# munged insists on its own user, a private socket directory and a key that
# only it can read.
chown munge:munge "$dir/munge"
chmod 755 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chown munge:munge "$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
runuser -u munge -- munged \
    --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" \
    --seed-file="$dir/munge/munged.seed" \
    --log-file="$dir/munge/munged.log" \
    --num-threads=4 ||
    die "munged did not start"
for _ in $(seq 1 50); do
    [[ -S "$dir/munge/munge.socket" ]] && break
    sleep 0.1
done
munge -S "$dir/munge/munge.socket" -n </dev/null | unmunge -S "$dir/munge/munge.socket" \
    >/dev/null || die "munge round trip failed"

sed -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" \
    -e "s|@CPUS@|$SLURM_CPUS|g" -e "s|@DEBUG@|$debug|g" -e "s|@MIN_JOB_AGE@|$min_job_age|g" \
    -e "s|@SCHEDULER_PARAMETERS@|$sched_line|g" "$here/slurm.conf.in" >"$dir/etc/slurm.conf"
printf 'export SLURM_CONF=%q\n' "$dir/etc/slurm.conf" >"$dir/env"
export SLURM_CONF="$dir/etc/slurm.conf"

# -i: ignore any state left from an earlier cluster (there is none: new dir).
slurmctld -i || die "slurmctld did not start"
slurmd -N localhost || die "slurmd did not start"

ready=0
for _ in $(seq 1 $((SLURM_WAIT_S * 5))); do
    if scontrol ping 2>/dev/null | grep -q 'is UP' &&
        [[ $(sinfo -h -N -o '%T' 2>/dev/null) == idle ]]; then
        ready=1
        break
    fi
    sleep 0.2
done
((ready)) || die "not ready within ${SLURM_WAIT_S}s (sinfo: $(sinfo -h -N -o '%T %E' 2>&1))"

ok=1
echo "start-slurm: slurmctld on 127.0.0.1:$ctld_port, slurmd on :$slurmd_port," \
    "node localhost CPUs=$SLURM_CPUS, profile $SLURM_PROFILE (${sched_line:-no SchedulerParameters}," \
    "MinJobAge=$min_job_age, debug $debug), $(slurmctld -V)" >&2
echo "$dir"
