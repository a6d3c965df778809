#!/usr/bin/env python3
# audit-requests.py AUDIT_LOG JOBS T_START T_END [USER_AGENT]
#
# The requests a client sent to the server, counted from the server's audit
# log (`--audit-log-path`, Metadata level: one or two events per request,
# counted once by auditID): those whose userAgent starts with USER_AGENT
# (default "trainyard", what `trainyard operator` sends) and that the server
# received between T_START and T_END (Unix seconds, the benchmark's own
# start and end). Prints requests per job and per second by verb and by
# verb and resource (resource/subresource), and the other clients' count.
# bench/run-sched-e2e-bench.sh runs it with AUDIT=1.
import collections
import datetime
import json
import sys


def when(ts):
    # "2026-11-28T16:20:01.123456Z"
    return datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: audit-requests.py AUDIT_LOG JOBS T_START T_END [USER_AGENT]")
    path, jobs, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    agent = sys.argv[5] if len(sys.argv) > 5 else "trainyard"
    seen = set()
    by_verb = collections.Counter()
    by_res = collections.Counter()
    example = {}
    others = collections.Counter()
    before = after = 0
    with open(path, errors="replace") as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            aid = ev.get("auditID")
            if not aid or aid in seen:
                continue
            seen.add(aid)
            ts = ev.get("requestReceivedTimestamp") or ev.get("stageTimestamp")
            t = when(ts) if ts else t0
            ua = ev.get("userAgent") or ""
            if not ua.startswith(agent):
                others[ev.get("verb", "?")] += 1
                continue
            if t < t0:
                before += 1
                continue
            if t > t1:
                after += 1
                continue
            verb = ev.get("verb", "?")
            ref = ev.get("objectRef") or {}
            res = ref.get("resource") or ev.get("requestURI", "?").split("?")[0]
            if ref.get("subresource"):
                res += "/" + ref["subresource"]
            by_verb[verb] += 1
            by_res[(verb, res)] += 1
            example.setdefault((verb, res), ev.get("requestURI", ""))
    total = sum(by_verb.values())
    span = t1 - t0
    print(f"requests from {agent!r} in the benchmark's {span:.1f} s: {total} "
          f"({total / span:.0f}/s, {total / max(jobs, 1):.1f} per job of {jobs}); "
          f"{before} before it (start-up), {after} after")
    print(f"requests from other clients (the benchmark's own): "
          f"{sum(others.values())} ({', '.join(f'{v} {n}' for v, n in others.most_common())})")
    print("by verb:        " + ", ".join(
        f"{v} {n / max(jobs, 1):.2f}/job" for v, n in by_verb.most_common()))
    print("by verb and resource (per job, per second, the first request's URI):")
    for (v, r), n in sorted(by_res.items(), key=lambda kv: -kv[1]):
        print(f"  {v:7} {r:24} {n / max(jobs, 1):7.2f} {n / span:8.1f}  "
              f"{example[(v, r)][:110]}")


if __name__ == "__main__":
    main()
