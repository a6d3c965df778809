#!/usr/bin/python3
"""slurm_runtime_bench.py - Trainyard-on-Slurm next to plain sbatch, on the
same Slurm cluster, in one run. Driven by bench/run-slurm-runtime-bench.sh,
which starts the cluster and a `trainyard server --runtime slurm` on it.

The work is the same on every side: a job of P tasks (P = 1, or a gang of
2), 1 CPU each, whose command is

    bash -c 'echo $EPOCHREALTIME > STAMPDIR/<name>'

  - Trainyard: a PyTorchJob (1 Master, P-1 Workers, requests cpu: 1),
    created with one POST; the backend turns it into one Slurm job.
  - sbatch: `sbatch --parsable --ntasks=P --cpus-per-task=1` of a script
    whose one step is `srun bash -c ...` (the same command).
  - sbatch-ty (launch only; --no-backend-side leaves it out): the same
    sbatch with the options the backend gives its jobs (--no-requeue, a
    plain environment; one background `srun --exact ...` step of P tasks): what
    Slurm itself costs for the backend's kind of job, so that Trainyard's
    own share shows.

Launch latency: the latest stamp of the job's P tasks minus the wall clock
read just before the POST / just before sbatch is spawned. The sides
take turns job by job (the side that goes first rotates too), so drift
of the shared machine hits each. Each job is waited for to its end
(Trainyard: condition Succeeded on a pytorchjobs watch, then deleted and its
pods gone; sbatch: the job's line in the cluster's jobcomp file) before the
next starts.

Throughput: N one-task jobs submitted by K threads as fast as each
submission returns; the time from the first submission to the last job's
end (same end signals as above); in blocks ty, sbatch, sbatch, ty so that
each side gets an early and a late block.

Every wait is bounded (per job, per phase). Prints a text report and, with
--json, writes the figures."""
import argparse
import json
import math
import os
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

NS = "default"
JOB_WAIT_S = 120  # one job, submit to end
POLL_S = 0.005  # stamp files and the jobcomp file


def pct(vals, p):
    """Nearest-rank percentile of vals (non-empty)."""
    s = sorted(vals)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))]


class Api:
    """The Trainyard API server: bearer token, its CA (or plain http)."""

    def __init__(self, url, token, ca):
        self.url = url.rstrip("/")
        self.token = token
        self.ctx = ssl.create_default_context(cafile=ca) if ca else None
        if self.ctx:
            self.ctx.check_hostname = False

    def req(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        r = urllib.request.Request(self.url + path, data=data, method=method)
        r.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            r.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(r, timeout=timeout, context=self.ctx) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, {}

    def stream(self, path):
        r = urllib.request.Request(self.url + path)
        r.add_header("Authorization", "Bearer " + self.token)
        return urllib.request.urlopen(r, timeout=3600, context=self.ctx)


JOBS = "/apis/kubeflow.org/v1/namespaces/%s/pytorchjobs" % NS


def ty_manifest(name, pods, stampdir):
    def replica(n):
        cmd = "echo $EPOCHREALTIME > %s/$HOSTNAME" % stampdir
        return {
            "replicas": n,
            "restartPolicy": "Never",
            "template": {"spec": {"containers": [{
                "name": "pytorch", "image": "docker.io/library/busybox:1.36",
                "command": ["/bin/bash", "-c", cmd],
                "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}},
        }
    specs = {"Master": replica(1)}
    if pods > 1:
        specs["Worker"] = replica(pods - 1)
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": NS, "labels": {"app": "slurm-rt-bench"}},
            "spec": {"runPolicy": {"cleanPodPolicy": "None"}, "pytorchReplicaSpecs": specs}}


def ty_stamps(name, pods):
    return [name + "-master-0"] + ["%s-worker-%d" % (name, i) for i in range(pods - 1)]


class JobWatch:
    """One pytorchjobs watch: when each job first showed Succeeded/Failed."""

    def __init__(self, api):
        self.api = api
        self.mu = threading.Condition()
        self.done = {}  # name -> (time, ok)
        st, lst = api.req("GET", JOBS)
        rv = lst.get("metadata", {}).get("resourceVersion", "")
        self.resp = api.stream(JOBS + "?watch=1&allowWatchBookmarks=false&resourceVersion=" + rv)
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        try:
            for line in self.resp:
                now = time.time()
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                obj = ev.get("object", {})
                name = obj.get("metadata", {}).get("name")
                for c in obj.get("status", {}).get("conditions", []) or []:
                    if c.get("status") == "True" and c.get("type") in ("Succeeded", "Failed"):
                        with self.mu:
                            if name not in self.done:
                                self.done[name] = (now, c["type"] == "Succeeded")
                                self.mu.notify_all()
        except Exception as e:  # the stream ended: waits time out
            print("slurm_runtime_bench: the pytorchjobs watch ended: %s" % e, file=sys.stderr)

    def wait(self, names, timeout):
        end = time.time() + timeout
        with self.mu:
            while not all(n in self.done for n in names):
                left = end - time.time()
                if left <= 0:
                    return False
                self.mu.wait(left)
        return True


class JobComp:
    """The cluster's jobcomp/filetxt log, read from its end: when each
    Slurm job id ended."""

    def __init__(self, path):
        self.path = path
        self.mu = threading.Condition()
        self.done = {}  # id -> (time, ok)
        self.f = open(path, "a+")
        self.f.seek(0, os.SEEK_END)
        self.buf = ""
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            chunk = self.f.read()
            if not chunk:
                time.sleep(POLL_S)
                continue
            now = time.time()
            self.buf += chunk
            lines = self.buf.split("\n")
            self.buf = lines.pop()
            with self.mu:
                for ln in lines:
                    kv = dict(w.split("=", 1) for w in ln.split() if "=" in w)
                    jid = kv.get("JobId")
                    if jid and jid not in self.done:
                        self.done[jid] = (now, kv.get("JobState") == "COMPLETED")
                self.mu.notify_all()

    def wait(self, ids, timeout):
        end = time.time() + timeout
        with self.mu:
            while not all(i in self.done for i in ids):
                left = end - time.time()
                if left <= 0:
                    return False
                self.mu.wait(left)
        return True


# The options the Slurm backend gives its jobs (src/runtime/slurm/sl_submit.c),
# for the third side, "sbatch-ty": plain sbatch with them, the same command.
BACKEND_SBATCH = ["--no-requeue"]
# ... and run in the plain environment the backend gives sbatch (env -i).
BACKEND_ENV = ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + (
    ["SLURM_CONF=" + os.environ["SLURM_CONF"]] if os.environ.get("SLURM_CONF") else [])
BACKEND_SRUN = "--cpus-per-task=1 --exact --export=ALL --kill-on-bad-exit=0 --wait=0"


def sbatch(name, pods, stampdir, workdir, like_backend=False):
    cmd = "bash -c 'echo $EPOCHREALTIME > %s/%s-$SLURM_PROCID'" % (stampdir, name)
    if like_backend:  # one step of a task per pod, in the background, as the backend does
        body = "srun --ntasks=%d %s %s &\nwait\n" % (pods, BACKEND_SRUN, cmd)
    else:
        body = "srun " + cmd + "\n"
    p = subprocess.run((BACKEND_ENV if like_backend else [])
                       + ["sbatch", "--parsable", "--job-name=" + name, "--ntasks=%d" % pods,
                        "--cpus-per-task=1", "--output=/dev/null", "--chdir=" + workdir]
                       + (BACKEND_SBATCH if like_backend else []),
                       input="#!/bin/bash\n" + body, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("sbatch: " + p.stderr.strip())
    return p.stdout.strip().split(";")[0]


def wait_stamps(stampdir, files, timeout):
    end = time.time() + timeout
    while time.time() < end:
        vals = []
        for f in files:
            try:
                with open(os.path.join(stampdir, f)) as fh:
                    s = fh.read().strip()
                vals.append(float(s))
            except (OSError, ValueError):
                break
        if len(vals) == len(files):
            return max(vals)
        time.sleep(POLL_S)
    return None


class Bench:
    def __init__(self, a):
        self.a = a
        self.api = Api(a.server, a.token, a.ca)
        self.jw = JobWatch(self.api)
        self.jc = JobComp(a.jobcomp)
        self.errors = []
        self.parts = []  # Trainyard launches: [to gang file, to where.json, to spec, to stamp]

    # ---- one job at a time
    def ty_one(self, name, pods):
        t0 = time.time()
        st, _ = self.api.req("POST", JOBS, ty_manifest(name, pods, self.a.stampdir))
        if st != 201:
            raise RuntimeError("create %s: HTTP %d" % (name, st))
        started = wait_stamps(self.a.stampdir, ty_stamps(name, pods), JOB_WAIT_S)
        if started is None:
            raise RuntimeError("%s: no stamps within %ds" % (name, JOB_WAIT_S))
        if self.a.shared:
            self.breakdown(name, t0, started)
        if not self.jw.wait([name], JOB_WAIT_S):
            raise RuntimeError("%s: not Succeeded within %ds" % (name, JOB_WAIT_S))
        self.ty_delete([name])
        return started - t0

    def breakdown(self, name, t0, started):
        """Where a Trainyard launch spent its time, from the mtimes the
        backend and the supervisors leave in the shared directory: the gang
        file (written just before sbatch), where.json (the step's
        supervisor started), spec.json (the server saw it and planned the
        pod), the stamp (the container's command ran)."""
        st, lst = self.api.req("GET", "/api/v1/namespaces/%s/pods?labelSelector=%s" % (
            NS, "training.kubeflow.org%2Fjob-name%3D" + name))
        uids = [p["metadata"]["uid"] for p in lst.get("items", [])] if st == 200 else []
        sh = self.a.shared

        def mt(path):
            try:
                return os.stat(path).st_mtime
            except OSError:
                return None
        gang = [mt("%s/slurm/gang-%s.json" % (sh, u)) for u in uids]
        where = [mt("%s/pods/%s/where.json" % (sh, u)) for u in uids]
        spec = [mt("%s/pods/%s/spec.json" % (sh, u)) for u in uids]
        gang = [g for g in gang if g]
        if not uids or not gang or None in where or None in spec:
            return
        t = [t0, min(gang), max(where), max(spec), started]
        self.parts.append([b - a for a, b in zip(t, t[1:])])

    def ty_delete(self, names):
        for n in names:
            self.api.req("DELETE", JOBS + "/" + n, {"propagationPolicy": "Foreground"})
        end = time.time() + JOB_WAIT_S
        while time.time() < end:
            st, lst = self.api.req("GET", "/api/v1/namespaces/%s/pods?labelSelector=%s" % (
                NS, "training.kubeflow.org%2Foperator-name%3Dpytorchjob-controller"))
            if st == 200 and not lst.get("items"):
                return
            time.sleep(0.1)
        self.errors.append("pods of %d jobs not gone within %ds" % (len(names), JOB_WAIT_S))

    def sbty_one(self, name, pods):
        return self.sb_one(name, pods, True)

    def sb_one(self, name, pods, like_backend=False):
        t0 = time.time()
        jid = sbatch(name, pods, self.a.stampdir, self.a.workdir, like_backend)
        started = wait_stamps(self.a.stampdir, ["%s-%d" % (name, i) for i in range(pods)],
                              JOB_WAIT_S)
        if started is None:
            raise RuntimeError("sbatch %s (%s): no stamps within %ds" % (name, jid, JOB_WAIT_S))
        if not self.jc.wait([jid], JOB_WAIT_S):
            raise RuntimeError("sbatch %s (%s): not ended within %ds" % (name, jid, JOB_WAIT_S))
        return started - t0

    def launch(self, pods, n):
        sides = [("trainyard", self.ty_one), ("sbatch", self.sb_one)]
        if self.a.backend_side:
            sides.append(("sbatch-ty", self.sbty_one))
        lat = {s: [] for s, _ in sides}
        # A warm-up job per side, not counted (first-use costs: page cache, connections).
        for side, fn in sides:
            fn("w%d-%s" % (pods, side), pods)
        for i in range(n):
            # Each side goes first, second, ... in turn.
            order = sides[i % len(sides):] + sides[:i % len(sides)]
            for side, fn in order:
                lat[side].append(fn("l%d-%s-%03d" % (pods, side, i), pods))
        return lat

    # ---- throughput
    def tput_block(self, side, tag, n, k):
        names = ["t%s-%s-%03d" % (tag, side[:2], i) for i in range(n)]
        ids = [None] * n
        nxt = [0]
        mu = threading.Lock()
        errs = []

        def client():
            while True:
                with mu:
                    i = nxt[0]
                    nxt[0] += 1
                if i >= n:
                    return
                try:
                    if side == "trainyard":
                        st, _ = self.api.req("POST", JOBS, ty_manifest(names[i], 1, self.a.stampdir))
                        if st != 201:
                            raise RuntimeError("create: HTTP %d" % st)
                        ids[i] = names[i]
                    else:
                        ids[i] = sbatch(names[i], 1, self.a.stampdir, self.a.workdir)
                except Exception as e:
                    errs.append(str(e))

        t0 = time.time()
        th = [threading.Thread(target=client) for _ in range(k)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        t_sub = time.time() - t0
        got = [i for i in ids if i]
        src = self.jw if side == "trainyard" else self.jc
        ok = src.wait(got, self.a.phase_limit)
        with src.mu:
            ends = [src.done[i] for i in got if i in src.done]
        t_end = max(e[0] for e in ends) if ends else time.time()
        nok = sum(1 for e in ends if e[1])
        if errs:
            self.errors.append("%s: %d submissions failed, first: %s" % (side, len(errs), errs[0]))
        if not ok:
            self.errors.append("%s block %s: %d of %d ended within %ds"
                               % (side, tag, len(ends), len(got), self.a.phase_limit))
        if side == "trainyard":
            self.ty_delete(got)
        return {"jobs": n, "succeeded": nok, "submit_s": t_sub, "total_s": t_end - t0,
                "complete": ok and not errs}

    def tput(self, n, k):
        half = max(1, n // 2)
        blocks = []
        for tag, side in (("a", "trainyard"), ("b", "sbatch"), ("c", "sbatch"), ("d", "trainyard")):
            blocks.append((side, self.tput_block(side, tag, half, k)))
        out = {}
        for side in ("trainyard", "sbatch"):
            bs = [b for s, b in blocks if s == side]
            jobs = sum(b["succeeded"] for b in bs)
            tot = sum(b["total_s"] for b in bs)
            out[side] = {"blocks": bs, "succeeded": jobs, "jobs": sum(b["jobs"] for b in bs),
                         "total_s": tot, "jobs_per_s": jobs / tot if tot > 0 else 0,
                         "complete": all(b["complete"] for b in bs)}
        return out


def summary(v):
    return {"n": len(v), "p50_s": pct(v, 50), "p99_s": pct(v, 99), "mean_s": statistics.mean(v),
            "min_s": min(v), "max_s": max(v)} if v else {"n": 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--ca")
    ap.add_argument("--jobcomp", required=True, help="the cluster's jobcomp/filetxt file")
    ap.add_argument("--stampdir", required=True, help="a directory every task can write")
    ap.add_argument("--workdir", required=True, help="sbatch --chdir")
    ap.add_argument("--launch", type=int, default=50, help="jobs per side, 1-pod")
    ap.add_argument("--launch-gang", type=int, default=25, help="jobs per side, 2-pod gang")
    ap.add_argument("--tput", type=int, default=60, help="jobs per side, throughput")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--phase-limit", type=int, default=300)
    ap.add_argument("--no-backend-side", dest="backend_side", action="store_false",
                    help="leave out the third side (sbatch with the backend's options)")
    ap.add_argument("--shared", help="the server's --slurm-shared-dir: a breakdown of its launches")
    ap.add_argument("--json")
    a = ap.parse_args()

    b = Bench(a)
    res = {"launch": {}, "tput": None}
    t_all = time.time()
    for pods, n in ((1, a.launch), (2, a.launch_gang)):
        if n <= 0:
            continue
        t = time.time()
        lat = b.launch(pods, n)
        res["launch"][str(pods)] = {s: summary(v) for s, v in lat.items()}
        res["launch"][str(pods)]["wall_s"] = time.time() - t
        res["launch"][str(pods)]["raw"] = lat
    if a.tput > 0:
        res["tput"] = b.tput(a.tput, a.clients)
    res["errors"] = b.errors
    res["breakdown"] = b.parts
    res["wall_s"] = time.time() - t_all

    print("== launch latency (submit call -> the command running; ms)")
    print("%-14s %-10s %5s %8s %8s %8s %8s" % ("job", "side", "n", "p50", "p99", "mean", "max"))
    for pods, r in res["launch"].items():
        for side in [x for x in ("trainyard", "sbatch", "sbatch-ty") if x in r]:
            s = r[side]
            print("%-14s %-10s %5d %8.0f %8.0f %8.0f %8.0f" % (
                "%s pod%s" % (pods, "" if pods == "1" else "s (gang)"), side, s["n"],
                s["p50_s"] * 1e3, s["p99_s"] * 1e3, s["mean_s"] * 1e3, s["max_s"] * 1e3))
        ty, sb = r["trainyard"], r["sbatch"]
        print("%-14s ratio Trainyard/sbatch: p50 %.2fx, p99 %.2fx (goal <= 1.25x)" % (
            "", ty["p50_s"] / sb["p50_s"], ty["p99_s"] / sb["p99_s"]))
        if "sbatch-ty" in r:
            bt = r["sbatch-ty"]
            print("%-14s ratio Trainyard/sbatch-ty: p50 %.2fx, p99 %.2fx; sbatch-ty/sbatch: p50 %.2fx" % (
                "", ty["p50_s"] / bt["p50_s"], ty["p99_s"] / bt["p99_s"], bt["p50_s"] / sb["p50_s"]))
    if b.parts:
        names = ("create -> sbatch (controller, admission, backend)",
                 "sbatch -> supervisor in its step (Slurm)",
                 "step started -> spec written (server's squeue poll)",
                 "spec -> the command runs (supervisor, container)")
        print("-- Trainyard launches, median of each part (%d jobs, 1- and 2-pod):" % len(b.parts))
        for k, what in enumerate(names):
            print("   %-55s %6.0f ms" % (what, statistics.median(p[k] for p in b.parts) * 1e3))
    if res["tput"]:
        print("== throughput (%d one-task jobs per side, %d clients, blocks ty,sb,sb,ty)"
              % (res["tput"]["trainyard"]["jobs"], a.clients))
        for side in ("trainyard", "sbatch"):
            t = res["tput"][side]
            print("%-10s %d/%d succeeded in %.1f s: %.2f jobs/s%s" % (
                side, t["succeeded"], t["jobs"], t["total_s"], t["jobs_per_s"],
                "" if t["complete"] else " (INCOMPLETE)"))
        ty_r, sb_r = (res["tput"][s]["jobs_per_s"] for s in ("trainyard", "sbatch"))
        print("ratio Trainyard/sbatch: time per job %.2fx (jobs/s %.2fx)" % (
            sb_r / ty_r if ty_r else float("inf"), ty_r / sb_r if sb_r else 0))
    for e in b.errors:
        print("error: " + e)
    print("wall: %.0f s" % res["wall_s"])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 1 if b.errors else 0


if __name__ == "__main__":
    sys.exit(main())
