#!/usr/bin/env python3
"""sweep-options.py - which of the Slurm backend's job options costs launch
time: plain sbatch of a gang (P tasks, one srun step) against the same with
one backend option at a time, and with all of them (the backend's shape,
src/runtime/slurm/sl_submit.c). Driven by bench/slurm/sweep-options.sh,
which starts the cluster. The variants take turns job by job, the first
rotating, one job at a time, each waited for to its end (jobcomp)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from slurm_runtime_bench import JobComp, wait_stamps, pct, BACKEND_ENV  # noqa: E402

JOB_WAIT_S = 120

# name -> (env prefix?, extra sbatch options, srun options, background step?)
VARIANTS = {
    "plain": (False, [], "", False),
    "env -i": (True, [], "", False),
    "--no-requeue": (False, ["--no-requeue"], "", False),
    "step in background": (False, [], "", True),
    "srun --ntasks --cpus-per-task": (False, [], "--ntasks=P --cpus-per-task=1", False),
    "srun --exact": (False, [], "--exact", False),
    "srun --export=ALL": (False, [], "--export=ALL", False),
    "srun --kill-on-bad-exit=0 --wait=0": (False, [], "--kill-on-bad-exit=0 --wait=0", False),
    "backend (all of them)": (True, ["--no-requeue"],
                              "--ntasks=P --cpus-per-task=1 --exact --export=ALL "
                              "--kill-on-bad-exit=0 --wait=0", True),
}


def submit(variant, name, pods, stampdir, workdir):
    env_i, opts, srun, bg = VARIANTS[variant]
    cmd = "bash -c 'echo $EPOCHREALTIME > %s/%s-$SLURM_PROCID'" % (stampdir, name)
    srun = srun.replace("=P", "=%d" % pods)
    body = "srun %s %s%s\n" % (srun, cmd, " &\nwait" if bg else "")
    p = subprocess.run((BACKEND_ENV if env_i else [])
                       + ["sbatch", "--parsable", "--job-name=" + name, "--ntasks=%d" % pods,
                          "--cpus-per-task=1", "--output=/dev/null", "--chdir=" + workdir] + opts,
                       input="#!/bin/sh\n" + body, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("sbatch (%s): %s" % (variant, p.stderr.strip()))
    return p.stdout.strip().split(";")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobcomp", required=True)
    ap.add_argument("--stampdir", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--jobs", type=int, default=30, help="jobs per variant")
    ap.add_argument("--pods", type=int, default=2, help="tasks per job (the gang)")
    ap.add_argument("--only", action="append", help="a variant (repeatable)")
    ap.add_argument("--gap", type=float, default=0,
                    help="seconds to wait after a job's end before the next sbatch")
    ap.add_argument("--json")
    a = ap.parse_args()
    names = a.only or list(VARIANTS)
    jc = JobComp(a.jobcomp)
    lat = {v: [] for v in names}

    def one(v, tag):
        if a.gap:
            time.sleep(a.gap)
        t0 = time.time()
        jid = submit(v, tag, a.pods, a.stampdir, a.workdir)
        got = wait_stamps(a.stampdir, ["%s-%d" % (tag, i) for i in range(a.pods)], JOB_WAIT_S)
        if got is None or not jc.wait([jid], JOB_WAIT_S):
            raise RuntimeError("%s (%s, job %s): did not run and end within %ds"
                               % (tag, v, jid, JOB_WAIT_S))
        return got - t0

    for k, v in enumerate(names):  # warm-up, not counted
        one(v, "w%d" % k)
    for i in range(a.jobs):
        order = names[i % len(names):] + names[:i % len(names)]
        for v in order:
            lat[v].append(one(v, "s%d-%03d" % (names.index(v), i)))
    base = statistics.median(lat[names[0]])
    print("launch, sbatch -> every task's command ran (ms), %d jobs a variant, %d tasks a job"
          % (a.jobs, a.pods))
    print("%-38s %7s %7s %7s %7s  %s" % ("variant", "p50", "p90", "p99", "max", "p50 / first"))
    for v in names:
        x = lat[v]
        print("%-38s %7.0f %7.0f %7.0f %7.0f  %.2fx" % (
            v, pct(x, 50) * 1e3, pct(x, 90) * 1e3, pct(x, 99) * 1e3, max(x) * 1e3,
            statistics.median(x) / base))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(lat, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
