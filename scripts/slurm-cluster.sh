#!/usr/bin/env bash
# slurm-cluster.sh - a private multi-node Slurm on this one host, as root, on
# loopback, for the Slurm runtime's tests and benchmarks.
#
#   slurm-cluster.sh start        start a cluster; the last stdout line is DIR
#   slurm-cluster.sh stop DIR     stop every daemon of it and remove DIR
#   slurm-cluster.sh status DIR   scontrol ping and sinfo of it
#
# Everything lives in a new directory /tmp/ty-slurmc.XXXXXX: the munge key and
# socket, slurm.conf (from slurm-cluster.conf.in beside this script) and
# gres.conf, state, spools, pid files, logs and the fake GPU files. Nothing
# under /etc is written. `source DIR/env` sets SLURM_CONF for the clients.
#
# Each node is one `slurmd -N NAME` on its own loopback address (BASE.i) and
# its own port; slurmctld listens on 127.0.0.1. Two clusters may run at once:
# their ports are chosen under a lock, away from each other's and from any
# port in use. Their node addresses are the caller's choice (SLURM_ADDR_BASE).
#
# Knobs (environment):
#   SLURM_NODES        number of nodes (default 3)
#   SLURM_NODE_PREFIX  node names are PREFIX1..PREFIXN (default n)
#   SLURM_ADDR_BASE    node i listens on BASE.i (default 127.0.1)
#   SLURM_CPUS         CPUs per node (default 8)
#   SLURM_MEM_MB       RealMemory per node in MB (default 8000)
#   SLURM_GPUS         fake GPUs per node (default 2; 0: no GRES at all)
#   SLURM_PARTITION    the one (default) partition (default trainyard)
#   SLURM_DEF_MEM_PER_CPU  memory of a job without --mem, per CPU
#                      (default SLURM_MEM_MB / SLURM_CPUS)
#   SLURM_WAIT_S       how long to wait for readiness (default 60)
#   SLURM_SCHED_PARAMS SchedulerParameters (default bf_interval=1,batch_sched_delay=0:
#                      hetjobs start within 1-2 s; Slurm's own default
#                      bf_interval is 30 s)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prog=slurm-cluster

die() {
    echo "$prog: $*" >&2
    exit 1
}

usage() {
    echo "usage: $prog start | stop DIR | status DIR" >&2
    exit 2
}

# The directory argument of stop/status: only ours, so that `stop` never
# removes anything else.
check_dir() {
    local dir=${1:-}
    [[ -n "$dir" && "$dir" == /tmp/ty-slurmc.* && "$dir" != *..* && "$dir" != */ ]] || usage
}

# pid_of FILE: the live pid in FILE, if any.
pid_of() {
    local p
    [[ -f "$1" ]] || return 1
    p=$(tr -dc 0-9 <"$1")
    [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null && echo "$p"
}

# reap TENTHS PID...: waits up to TENTHS tenths of a second for the PIDs to
# exit, then SIGKILLs those left.
reap() {
    local n=0 tenths=$1 p live
    shift
    while ((n < tenths)); do
        live=0
        for p in "$@"; do
            kill -0 "$p" 2>/dev/null && live=1
        done
        ((live)) || return 0
        sleep 0.1
        n=$((n + 1))
    done
    for p in "$@"; do
        if kill -0 "$p" 2>/dev/null; then
            echo "$prog: pid $p still running after $((tenths / 10)) s; killing it" >&2
            kill -KILL "$p" 2>/dev/null || true
        fi
    done
}

# descendants PID: every process below PID (children first listed last).
descendants() {
    local c
    for c in $(pgrep -P "$1" 2>/dev/null); do
        echo "$c"
        descendants "$c"
    done
}

# cluster_pids DIR: the Slurm daemons and step daemons of this cluster, found
# without pid files: a slurmctld/slurmd/slurmstepd (Debian's executables are
# slurmd-wlm etc.) whose environment holds this cluster's SLURM_CONF (they are
# started with it and pass it on), and the munged whose command line names
# this cluster's socket. The caller's own shells hold SLURM_CONF too, so the
# executable is checked first.
cluster_pids() {
    local dir=$1 p exe
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
        case "${exe##*/}" in
            slurmctld* | slurmd* | slurmstepd*)
                tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
                    grep -qxF "SLURM_CONF=$dir/etc/slurm.conf" && echo "$p"
                ;;
            munged*)
                tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null |
                    grep -qxF -- "--socket=$dir/munge/munge.socket" && echo "$p"
                ;;
        esac
    done
    return 0
}

cmd_stop() {
    check_dir "${1:-}"
    local dir=$1 ctld f p left slurmds=()
    export SLURM_CONF="$dir/etc/slurm.conf"
    ctld=$(pid_of "$dir/run/slurmctld.pid") || true
    # The client commands only with a slurmctld that answers (a dying one,
    # as after a failed start, makes each of them retry for many seconds).
    if [[ -f "$SLURM_CONF" && -n "$ctld" ]] &&
        timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; then
        # Every job on this private cluster is the caller's.
        timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
        for _ in $(seq 1 50); do
            [[ -z $(timeout 5 squeue -h -t running,completing -o %i 2>/dev/null) ]] && break
            sleep 0.2
        done
        # Shuts down slurmctld and every slurmd it knows.
        timeout 10 scontrol shutdown >/dev/null 2>&1 || kill -TERM "$ctld" 2>/dev/null || true
    elif [[ -n "$ctld" ]]; then
        kill -TERM "$ctld" 2>/dev/null || true
    fi
    [[ -n "$ctld" ]] && reap 100 "$ctld"
    # Slurmds left (slurmctld could not shut them down): all at once, since
    # one that never registered takes its time over SIGTERM.
    for f in "$dir"/run/slurmd-*.pid; do
        p=$(pid_of "$f") || continue
        kill -TERM "$p" 2>/dev/null || true
        slurmds+=("$p")
    done
    ((${#slurmds[@]} == 0)) || reap 30 "${slurmds[@]}"
    # Fallback: whatever is left (a daemon whose pid file is gone, step
    # daemons whose slurmd died, the tasks under them), killed outright.
    left=$(cluster_pids "$dir" | grep -v "^$(pid_of "$dir/munge/munged.pid" || echo x)\$" || true)
    for p in $left; do
        for f in $(descendants "$p") "$p"; do
            kill -KILL "$f" 2>/dev/null || true
        done
    done
    p=$(pid_of "$dir/munge/munged.pid") || true
    if [[ -n "$p" ]]; then
        kill -TERM "$p" 2>/dev/null || true
        reap 50 "$p"
    fi
    for p in $(cluster_pids "$dir"); do
        kill -KILL "$p" 2>/dev/null || true
    done
    # (Stopping a cluster twice, or one whose directory is gone, is no error:
    # the fallback above has looked for its daemons all the same.)
    rm -rf "$dir"
}

cmd_status() {
    check_dir "${1:-}"
    [[ -d "$1" ]] || die "$1: no such cluster directory"
    export SLURM_CONF="$1/etc/slurm.conf"
    scontrol ping
    sinfo -N -o '%N %o %c %m %G %T %P'
}

# Ports in use or promised to another cluster of this script (their DIR/ports
# files), one per line. Called under the lock.
used_ports() {
    ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }'
    cat /tmp/ty-slurmc.*/ports 2>/dev/null || true
}

# pick_ports COUNT: COUNT consecutive free ports, printed one per line.
# Below the kernel's ephemeral range, so that no outgoing connection takes
# one between this check and the daemon's bind.
pick_ports() {
    local count=$1 p i tries=0 ok used lo
    lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    ((lo > 21000)) || lo=32768
    used=$(used_ports | sort -u)
    while ((tries++ < 500)); do
        p=$((20000 + RANDOM % (lo - 20000 - count)))
        ok=1
        for ((i = 0; i < count; i++)); do
            if grep -qx "$((p + i))" <<<"$used"; then
                ok=0
                break
            fi
        done
        if ((ok)); then
            seq "$p" $((p + count - 1))
            return 0
        fi
    done
    return 1
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

cmd_start() {
    local nodes=${SLURM_NODES:-3} prefix=${SLURM_NODE_PREFIX:-n}
    local base=${SLURM_ADDR_BASE:-127.0.1} cpus=${SLURM_CPUS:-8}
    local mem=${SLURM_MEM_MB:-8000} gpus=${SLURM_GPUS:-2}
    local part=${SLURM_PARTITION:-trainyard} wait_s=${SLURM_WAIT_S:-60}
    local defmem i name ports ctld_port

    [[ $(id -u) -eq 0 ]] || die "must run as root (slurmd starts jobs as their user)"
    local v n
    for v in nodes:SLURM_NODES cpus:SLURM_CPUS mem:SLURM_MEM_MB gpus:SLURM_GPUS \
        wait_s:SLURM_WAIT_S; do
        n=${v%%:*}
        is_uint "${!n}" || die "${v#*:} is not a number: ${!n}"
    done
    ((nodes >= 1 && nodes <= 254)) || die "SLURM_NODES must be 1..254"
    ((cpus >= 1 && mem >= 1)) || die "SLURM_CPUS and SLURM_MEM_MB must be positive"
    defmem=${SLURM_DEF_MEM_PER_CPU:-$((mem / cpus > 0 ? mem / cpus : 1))}
    is_uint "$defmem" || die "SLURM_DEF_MEM_PER_CPU: not a number: $defmem"
    [[ "$base" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
        die "SLURM_ADDR_BASE must be three octets on loopback (127.X.Y): $base"
    [[ "$prefix" =~ ^[a-z][a-z0-9-]*$ ]] ||
        die "SLURM_NODE_PREFIX must be lowercase letters, digits and '-': $prefix"
    [[ "$part" =~ ^[A-Za-z][A-Za-z0-9_-]*$ ]] || die "SLURM_PARTITION: bad name: $part"
    for cmd in munged munge unmunge slurmctld slurmd scontrol sinfo ss flock; do
        command -v "$cmd" >/dev/null 2>&1 ||
            die "missing $cmd (scripts/deps.sh test installs slurmctld slurmd slurm-client munge)"
    done
    id munge >/dev/null 2>&1 || die "no user munge (the munge package creates it)"

    dir=$(mktemp -d /tmp/ty-slurmc.XXXXXX)
    ok=0
    trap on_start_exit EXIT
    chmod 755 "$dir"
    mkdir -p "$dir"/{etc,state,spool,run,log,munge,gpu}
    # The ports are promised (DIR/ports) under the lock, so that a second
    # start running at the same time picks others even before our daemons
    # bind theirs.
    exec 9>/tmp/ty-slurmc.lock
    flock -w 30 9 || die "could not take /tmp/ty-slurmc.lock"
    ports=$(pick_ports $((nodes + 1))) || die "no $((nodes + 1)) free consecutive ports"
    echo "$ports" >"$dir/ports"
    exec 9>&-
    mapfile -t ports <<<"$ports"
    ctld_port=${ports[0]}

    # munged insists on its own user, a private socket directory and a key
    # only it can read.
    chown munge:munge "$dir/munge"
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
    for _ in $(seq 1 100); do
        [[ -S "$dir/munge/munge.socket" ]] && break
        sleep 0.1
    done
    munge -S "$dir/munge/munge.socket" -n </dev/null |
        unmunge -S "$dir/munge/munge.socket" >/dev/null || die "munge round trip failed"

    sed -e "s|@DIR@|$dir|g" -e "s|@CTLD_PORT@|$ctld_port|g" \
        -e "s|@DEF_MEM_PER_CPU@|$defmem|g" \
        -e "s|@GRES@|$( ((gpus > 0)) && echo GresTypes=gpu)|" \
        -e "s|@SCHED_PARAMS@|${SLURM_SCHED_PARAMS:-bf_interval=1,batch_sched_delay=0}|" \
        "$here/slurm-cluster.conf.in" >"$dir/etc/slurm.conf"
    : >"$dir/etc/gres.conf"
    {
        echo
        echo "# Nodes: one slurmd each, on its own loopback address and port."
        for ((i = 1; i <= nodes; i++)); do
            name=$prefix$i
            mkdir -p "$dir/spool/slurmd-$name"
            printf 'NodeName=%s NodeHostname=localhost NodeAddr=%s.%d Port=%s CPUs=%d RealMemory=%d%s State=UNKNOWN\n' \
                "$name" "$base" "$i" "${ports[$i]}" "$cpus" "$mem" \
                "$( ((gpus > 0)) && echo " Gres=gpu:$gpus")"
        done
        echo "PartitionName=$part Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    } >>"$dir/etc/slurm.conf"
    if ((gpus > 0)); then
        # A GPU declared without File= gets no index, and a File= that is
        # not a device node is refused ("not a valid character or block
        # device"): either way a step sees no CUDA_VISIBLE_DEVICES. So each
        # fake GPU is a node of the null device (1,3); task/none confines
        # nothing, only the index in CUDA_VISIBLE_DEVICES matters. Where
        # mknod is not allowed, a plain file still gives the node its count.
        for ((i = 1; i <= nodes; i++)); do
            name=$prefix$i
            for ((g = 0; g < gpus; g++)); do
                mknod "$dir/gpu/$name-$g" c 1 3 2>/dev/null || : >"$dir/gpu/$name-$g"
            done
            echo "NodeName=$name Name=gpu File=$dir/gpu/$name-[0-$((gpus - 1))]"
        done >"$dir/etc/gres.conf"
    fi
    printf 'export SLURM_CONF=%q\n' "$dir/etc/slurm.conf" >"$dir/env"
    export SLURM_CONF="$dir/etc/slurm.conf"

    # -i: ignore any saved state (there is none: a new directory).
    slurmctld -i || die "slurmctld did not start"
    for ((i = 1; i <= nodes; i++)); do
        slurmd -N "$prefix$i" || die "slurmd -N $prefix$i did not start"
    done

    local ready=0 st="" t0=$SECONDS end=$((SECONDS + wait_s)) pidfiles=() f
    for ((i = 1; i <= nodes; i++)); do
        pidfiles+=("$dir/run/slurmd-$prefix$i.pid")
    done
    while ((SECONDS < end)); do
        # A daemon that died (a fatal error in its log) will not come back.
        # (Each writes its pid file after it has detached: give it time.)
        grep -qs 'fatal:' "$dir"/log/*.log && die "$(grep -hs 'fatal:' "$dir"/log/*.log | head -1)"
        for f in "$dir/run/slurmctld.pid" "${pidfiles[@]}"; do
            if [[ -s "$f" ]] || ((SECONDS - t0 > 10)); then
                pid_of "$f" >/dev/null || die "${f##*/}: the daemon exited"
            fi
        done
        if scontrol ping 2>/dev/null | grep -q 'is UP'; then
            st=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)
            if [[ $(grep -c ' idle$' <<<"$st") -eq $nodes ]]; then
                ready=1
                break
            fi
        fi
        sleep 0.2
    done
    ((ready)) || die "not ready within ${wait_s}s (sinfo: $(sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ';'))"

    ok=1
    echo "$prog: $nodes nodes ${prefix}1..$prefix$nodes on $base.1..$nodes" \
        "(ports ${ports[*]:1}), CPUs=$cpus RealMemory=$mem GPUs=$gpus," \
        "partition $part, slurmctld on 127.0.0.1:$ctld_port, $(slurmctld -V)" >&2
    echo "$dir"
}

# shellcheck disable=SC2317  # invoked by the trap
on_start_exit() {
    if ((ok == 0)); then
        echo "$prog: start failed; logs:" >&2
        tail -n 30 "$dir"/log/*.log "$dir"/munge/munged.log >&2 2>/dev/null || true
        cmd_stop "$dir" >&2 || true
    fi
}

case "${1:-}" in
    start) [[ $# -eq 1 ]] || usage; cmd_start ;;
    stop) [[ $# -eq 2 ]] || usage; cmd_stop "$2" ;;
    status) [[ $# -eq 2 ]] || usage; cmd_status "$2" ;;
    *) usage ;;
esac
