#!/usr/bin/env python3
# pairs-summary.py [DIR] - the table of docs/benchmarks.md from bench/run-pairs.sh results:
# each figure per run of each build, and the ratio of the medians (after/before).
import re,glob,statistics,os
import sys
D=sys.argv[1] if len(sys.argv)>1 else '/tmp/bench-pairs'
def grab(f,pat,grp=1,cast=float):
    s=open(f).read()
    m=re.search(pat,s)
    return cast(m.group(grp)) if m else None
rows={
 'api creates/s': ('api', r'creates/s >= 5000\s+([\d.]+) /s'),
 'api create p99 ms': ('api', r'create p99 < 10 ms\s+([\d.]+) ms'),
 'launch p50 ms': ('launch', r'create->Running p50 ([\d.]+)'),
 'launch p99 ms': ('launch', r'create->Running p50 [\d.]+\s+p90 [\d.]+\s+p99 ([\d.]+)'),
 '1000 short jobs: jobs/s': ('launch', r'throughput\s+([\d.]+) jobs/s'),
 '40k pods: bound pods/s': ('sched40k', r'bound pods/s:\s+([\d.]+)'),
 '40k pods: server CPU s': ('sched40k', r'server CPU:\s+([\d.]+) s'),
 '40k pods: peak RSS MiB': ('sched40k', r'server peak RSS:\s+([\d.]+) MiB'),
 '150k pods: bound pods/s': ('sched150k', r'bound pods/s:\s+([\d.]+)'),
 '150k pods: server CPU s': ('sched150k', r'server CPU:\s+([\d.]+) s'),
 '150k pods: peak RSS MiB': ('sched150k', r'server peak RSS:\s+([\d.]+) MiB'),
}
print('| figure | 68363d4 (runs) | after (runs) | after/before (medians) |')
print('|---|---|---|---|')
for name,(pre,pat) in rows.items():
    vals={}
    for w in ('base','new'):
        v=[grab(f,pat) for f in sorted(glob.glob(f'{D}/{pre}-{w}-*.out'))]
        vals[w]=[x for x in v if x is not None]
    if not vals['base'] or not vals['new']: continue
    mb=statistics.median(vals['base']); mn=statistics.median(vals['new'])
    print(f"| {name} | {', '.join(f'{x:g}' for x in vals['base'])} | {', '.join(f'{x:g}' for x in vals['new'])} | {mn/mb:.3f} |")
