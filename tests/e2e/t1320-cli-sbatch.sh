#!/usr/bin/env bash
# t1320-cli-sbatch.sh - the Slurm-habit commands on the embedded server:
# `trainyard sbatch` of a script with #SBATCH --nodes=2 --ntasks-per-node=2
# whose srun line runs 4 tasks (SLURM_PROCID 0..3 of 4, on both nodes, and
# `scontrol show hostnames` names them), `Submitted batch job N`, squeue
# showing a running job, scancel taking it away (CANCELLED), sacct showing
# the finished one COMPLETED 0:0 and a failing one FAILED with its code;
# `srun torchrun` with MASTER_ADDR from scontrol forms a world of 2.
source "$(dirname "$0")/lib.sh"

start_server

ty() { "$TRAINYARD" "$@"; }
work=$E2E_TMP/work
mkdir -p "$work" && chmod 1777 "$work"
cd "$work" || exit 1

# --- a two-node, four-task job: srun, the Slurm environment, output files
cat >tasks.sh <<'EOF'
#!/bin/sh
#SBATCH --job-name=fourtasks
#SBATCH --nodes=2 --ntasks-per-node=2
#SBATCH --time=10:00
#SBATCH --output=out-%j-%x.txt
echo "batch on $SLURM_JOB_NODELIST nnodes=$SLURM_NNODES ntasks=$SLURM_NTASKS"
echo "hosts: $(scontrol show hostnames "$SLURM_JOB_NODELIST" | tr '\n' ' ')"
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR
srun sh -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS local $SLURM_LOCALID node $SLURM_NODEID on $(hostname) master $MASTER_ADDR"'
echo "srun exit $?"
srun -n 1 sh -c 'exit 3'
echo "failing srun exit $?"
EOF
out=$(ty sbatch tasks.sh 2>&1)
expect_match "sbatch prints Submitted batch job N" '^Submitted batch job [0-9]+$' "$out"
id=$(sed -n 's/^Submitted batch job //p' <<<"$out")
file=$work/out-$id-fourtasks.txt
if wait_until 180 file_has "$file" '^failing srun exit'; then
    pass "the batch script ran to its end"
else
    fail "the batch script ran to its end"
    cat "$file" 2>/dev/null | sed 's/^/     | /'
    dump_job vcjob "slurm-$id"
fi
text=$(cat "$file" 2>/dev/null)
expect_match "SLURM_JOB_NODELIST is compressed, 2 nodes, 4 tasks" \
    "^batch on slurm-$id-node-\[0-1\] nnodes=2 ntasks=4$" "$text"
expect_match "scontrol show hostnames expands it" "^hosts: slurm-$id-node-0 slurm-$id-node-1 $" "$text"
tasks=$(grep '^task ' <<<"$text" | sort)
expect_eq "srun ran 4 tasks, 0..3 of 4, two per node" \
"task 0 of 4 local 0 node 0 on slurm-$id-node-0 master slurm-$id-node-0
task 1 of 4 local 1 node 0 on slurm-$id-node-0 master slurm-$id-node-0
task 2 of 4 local 0 node 1 on slurm-$id-node-1 master slurm-$id-node-0
task 3 of 4 local 1 node 1 on slurm-$id-node-1 master slurm-$id-node-0" "$tasks"
expect_match "srun returns 0 when every task did" '^srun exit 0$' "$text"
expect_match "srun returns a failed task's code" '^failing srun exit 3$' "$text"

# sacct: COMPLETED, 0:0, in Slurm's columns (the job ends after its file is
# written: wait for the state)
acct() { ty sacct -X -n -j "$1" --format=State,ExitCode | tr -s ' ' | sed 's/^ //; s/ $//'; }
wait_until sh -c "'$TRAINYARD' sacct -X -n -j $id --format=State | grep -q COMPLETED"
expect_eq "sacct: the finished job COMPLETED 0:0" "COMPLETED 0:0" "$(acct "$id")"
hdr=$(ty sacct -j "$id" | head -2)
expect_match "sacct's header is Slurm's" \
    '^JobID +JobName +Partition +Account +AllocCPUS +State +ExitCode $' "$hdr"
expect_match "sacct's rule line" '^-{12} -{10} -{10} -{10} -{10} -{10} -{8} $' "$hdr"
expect_match "sacct without -X shows the batch step" "^$id\.batch +batch " "$(ty sacct -j "$id")"
expect_match "sacct's Elapsed: how long the script ran, [D-]HH:MM:SS" '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' \
    "$(ty sacct -X -n -j "$id" --format=Elapsed | tr -d ' ')"

# --- a failing script: FAILED with its exit code
out=$(ty sbatch --job-name=bad --wrap='echo going wrong; exit 7' 2>&1)
bad=$(sed -n 's/^Submitted batch job //p' <<<"$out")
expect_match "a second job gets the next number" "^$((id + 1))$" "$bad"
wait_until 120 sh -c "'$TRAINYARD' sacct -X -n -j $bad --format=State | grep -q FAILED"
expect_eq "sacct: the failing job FAILED 7:0" "FAILED 7:0" "$(acct "$bad")"
expect_match "its default output file slurm-N.out" '^going wrong$' "$(cat "slurm-$bad.out" 2>&1)"

# --- a long job: squeue shows it running, scancel takes it away
long=$(ty sbatch --parsable -N 2 -J sleeper --wrap='srun sleep 600')
expect_match "--parsable prints the number alone" '^[0-9]+$' "$long"
wait_until 120 sh -c "'$TRAINYARD' squeue -h -j $long -o %t | grep -qx R"
q=$(ty squeue)
expect_match "squeue's header is Slurm's" \
    '^ +JOBID PARTITION +NAME +USER ST +TIME +NODES NODELIST\(REASON\)$' "$q"
expect_match "squeue shows the running job" \
    "^ +$long +default +sleeper +[^ ]+ +R +[0-9]+:[0-9]{2} +2 slurm-$long-node-\[0-1\]$" "$q"
expect_eq "squeue -o with %i %j %D %T" "$long sleeper 2 RUNNING" \
    "$(ty squeue -h -j "$long" -o '%i %j %D %T')"
expect_eq "squeue --me shows it" "$long" "$(ty squeue --me -h -o %i)"
expect_eq "squeue -u someone-else does not" "" "$(ty squeue -u someone-else -h -o %i)"
expect_eq "squeue leaves finished jobs out" "" "$(ty squeue -h -o %i | grep -x "$id")"
check "scancel N" ty scancel "$long"
if wait_until 120 sh -c "! '$TRAINYARD' squeue -h -o %i | grep -qx $long"; then
    pass "scancel removes the job from squeue"
else
    fail "scancel removes the job from squeue"; ty squeue
fi
wait_until sh -c "'$TRAINYARD' sacct -X -n -j $long --format=State | grep -q CANCELLED"
expect_match "sacct: the cancelled job CANCELLED" '^CANCELLED ' "$(acct "$long")"

# --- --wait: the script's exit status; the command line wins over #SBATCH
printf '#!/bin/sh\n#SBATCH --nodes=2 --job-name=fromfile\necho "nodes=$SLURM_NNODES name=$SLURM_JOB_NAME"\nexit 5\n' >five.sh
ty sbatch --wait -N 1 -J fromcli -o five.out five.sh >/dev/null 2>&1
expect_eq "sbatch --wait exits with the script's status" 5 "$?"
expect_eq "command-line options win over #SBATCH" "nodes=1 name=fromcli" "$(cat five.out 2>&1)"

# --- srun torchrun, MASTER_ADDR from scontrol: a world of 2 all-reduces
cat >ddp.py <<'PY'
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum {int(t.item())}", flush=True)
dist.destroy_process_group()
PY
cat >ddp.sh <<'EOF'
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --output=ddp.out
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR MASTER_PORT=29511
# Debian's torch 1.13 on Python 3.11 cannot parse torchrun's default
# --redirects/--tee (t0720); its flags are the underscore forms
export PET_REDIRECTS=1 PET_TEE=1
srun sh -c '/usr/bin/python3 -m torch.distributed.run --nnodes=$SLURM_NNODES --nproc_per_node=1 \
    --node_rank=$SLURM_NODEID --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT ddp.py'
echo "srun exit $?"
EOF
ty sbatch ddp.sh >/dev/null
if wait_until 180 file_has ddp.out '^srun exit'; then
    text=$(cat ddp.out)
    expect_match "srun torchrun: rank 0 of 2 all-reduced" 'rank 0/2 sum 3' "$text"
    expect_match "srun torchrun: rank 1 of 2 all-reduced" 'rank 1/2 sum 3' "$text"
    expect_match "srun torchrun exits 0" '^srun exit 0$' "$text"
else
    fail "srun torchrun finished"; sed 's/^/     | /' ddp.out 2>/dev/null
fi

# --- errors, in Slurm's words
expect_match "--array is not supported yet" 'array is not supported yet' \
    "$(ty sbatch --array=1-3 --wrap=true 2>&1)"
printf 'echo no shebang\n' >noshebang.sh
expect_match "a script without #! is refused" 'does not look like a batch script' \
    "$(ty sbatch noshebang.sh 2>&1)"
printf '#!/bin/sh\n#SBATCH --bogus\ntrue\n' >bogus.sh
expect_match "an unknown #SBATCH option names its line" 'line 2: #SBATCH --bogus' \
    "$(ty sbatch bogus.sh 2>&1)"
expect_match "scancel of an unknown number" 'Invalid job id specified' "$(ty scancel 99999 2>&1)"

# --- a colleague's kubeconfig names her namespace: the Slurm commands use it
# (their -n is another flag), as get, list and submit do
"$TRAINYARD" user add erin --namespace team-e --data-dir "$E2E_TMP/data" \
    -o "$E2E_TMP/erin.kc" >/dev/null || fail "user add erin"
erin() { KUBECONFIG=$E2E_TMP/erin.kc "$TRAINYARD" "$@"; }
out=$(erin sbatch --parsable --wrap 'echo in team-e' 2>&1)
expect_match "sbatch with a tenant's kubeconfig submits in her namespace" '^[0-9]+$' "$out"
expect_match "... squeue and sacct list it there" "^ *$out " "$(erin squeue -h 2>&1; erin sacct -n -X 2>&1)"
expect_eq "... scancel finds it" 0 "$(erin scancel "$out" >/dev/null 2>&1; echo $?)"

finish
