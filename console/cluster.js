// cluster.js - the Queues page (Volcano queues and each one's waiting jobs
// in the scheduler's order) and the Nodes page (capacity, GPUs allocated
// and in use, health), each kept live by watches. A page draws at most once
// a frame, however many events arrive.
import { api, informer } from './api.js';
import { KINDS } from './kinds.js';
import { waitingOrder } from './sched.js';
import { age, clear, el, errorBox } from './util.js';

const WAITING_SHOWN = 50; // per queue; the rest are counted

function fmtResources(r) {
  if (!r || !Object.keys(r).length) return '—';
  return Object.entries(r).map(([k, v]) => `${k}=${v}`).join(', ');
}

// A redraw at the next frame, once however often asked.
function framed(fn) {
  let queued = false;
  let stopped = false;
  const ask = () => {
    if (queued || stopped) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; if (!stopped) fn(); });
  };
  ask.stop = () => { stopped = true; };
  return ask;
}

// A live table: path, columns [{label, cell(obj)}]; the rows by name.
// changed(): called after each list and event (what else the page draws).
function liveTable(container, { heading, path, columns, empty, forbidden, id, changed = () => {} }) {
  const rows = new Map();
  const tbody = el('tbody');
  const msg = el('div', { 'aria-live': 'polite' });
  container.append(el('h1', {}, heading), msg,
    el('table', { id }, el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { scope: 'col', class: c.numeric ? 'num' : undefined }, c.label)))), tbody));
  const draw = framed(() => {
    const list = [...rows.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    clear(tbody).append(...list.map((o) => el('tr', { dataset: { name: o.metadata.name } },
      ...columns.map((c) => el('td', { class: [c.numeric ? 'num' : '', c.cls || ''].join(' ').trim() || undefined }, c.cell(o))))));
    if (!list.length) tbody.append(el('tr', {}, el('td', { colspan: String(columns.length) }, empty)));
  });
  const inf = informer(path, {
    reset: (items) => { rows.clear(); for (const o of items) rows.set(o.metadata.name, o); draw(); changed(); },
    event: (type, o) => { if (type === 'DELETED') rows.delete(o.metadata.name); else rows.set(o.metadata.name, o); draw(); changed(); },
    error: (e) => msg.append(errorBox(e.status === 403 ? forbidden : e.message)),
  });
  return { rows, draw, msg, stop: () => { draw.stop(); inf.stop(); } };
}

// The console's page of the job that owns a PodGroup, when it is a kind the
// console shows.
function jobLink(pg) {
  const ref = (pg.metadata.ownerReferences || []).find((o) => o.controller);
  if (!ref) return pg.metadata.name;
  const group = (ref.apiVersion || '').split('/')[0];
  const k = KINDS.find((x) => x.group === group && x.kind === ref.kind);
  const text = `${ref.kind}/${ref.name}`;
  return k ? el('a', { href: `#/jobs/${k.id}/${encodeURIComponent(pg.metadata.namespace)}/${encodeURIComponent(ref.name)}` }, text) : text;
}

export function mountQueues(container) {
  const groups = new Map(); // ns/name -> PodGroup
  let classes = new Map(); // PriorityClass name -> value
  const waitingBox = el('section', { 'aria-labelledby': 'h-waiting', id: 'waiting' },
    el('h2', { id: 'h-waiting' }, 'Waiting jobs'),
    el('p', { class: 'note' }, 'Each queue\'s pod groups that wait (Pending, Inqueue), in the order the scheduler takes them: priority, then age (as ',
      el('code', {}, 'trainyard queue get QUEUE'), ' lists them).'));
  const waitingBody = el('div');
  const table = liveTable(container, {
    changed: () => drawWaiting(),
    heading: 'Queues',
    id: 'queues',
    path: '/apis/scheduling.volcano.sh/v1beta1/queues',
    empty: 'No queues.',
    forbidden: 'You may not list queues.',
    columns: [
      { label: 'Name', cell: (q) => q.metadata.name },
      { label: 'State', cell: (q) => q.status?.state || 'Open' },
      { label: 'Weight', numeric: true, cell: (q) => String(q.spec?.weight ?? 1) },
      { label: 'Capability', cell: (q) => fmtResources(q.spec?.capability) },
      { label: 'Deserved', cell: (q) => fmtResources(q.spec?.deserved) },
      { label: 'Allocated', cell: (q) => fmtResources(q.status?.allocated) },
      { label: 'Pending', numeric: true, cell: (q) => String(q.status?.pending ?? 0) },
      { label: 'Inqueue', numeric: true, cell: (q) => String(q.status?.inqueue ?? 0) },
      { label: 'Running', numeric: true, cell: (q) => String(q.status?.running ?? 0) },
    ],
  });
  waitingBox.append(waitingBody);
  container.append(waitingBox);
  const prio = (g) => classes.get(g.spec?.priorityClassName) || 0;
  const drawWaiting = framed(() => {
    const all = [...groups.values()];
    const names = new Set([...table.rows.keys(), ...all.map((g) => g.spec?.queue || 'default')]);
    const parts = [];
    for (const q of [...names].sort()) {
      const w = waitingOrder(all, q, classes);
      parts.push(el('h3', { id: `waiting-${q}` }, `Queue ${q}: ${w.length} waiting`));
      if (!w.length) continue;
      parts.push(el('ol', { class: 'waiting', dataset: { queue: q }, 'aria-labelledby': `waiting-${q}` },
        ...w.slice(0, WAITING_SHOWN).map((g) => el('li', { dataset: { pg: `${g.metadata.namespace}/${g.metadata.name}` } },
          jobLink(g), ` in ${g.metadata.namespace} · pod group ${g.metadata.name} · ${g.status?.phase || 'Pending'} · priority ${prio(g)} · needs ${g.spec?.minMember ?? 1} pod${(g.spec?.minMember ?? 1) === 1 ? '' : 's'}${g.spec?.minResources ? ` (${fmtResources(g.spec.minResources)})` : ''} · `,
          el('time', { datetime: g.metadata.creationTimestamp }, `${age(g.metadata.creationTimestamp)} old`)))));
      if (w.length > WAITING_SHOWN) parts.push(el('p', { class: 'note' }, `and ${w.length - WAITING_SHOWN} more (trainyard queue get ${q})`));
    }
    clear(waitingBody).append(...parts);
  });
  // priority classes: once (they change rarely; a reload reads them again)
  api('/apis/scheduling.k8s.io/v1/priorityclasses')
    .then((l) => { classes = new Map((l.items || []).map((pc) => [pc.metadata.name, pc.value || 0])); drawWaiting(); })
    .catch(() => {});
  const key = (g) => `${g.metadata.namespace}/${g.metadata.name}`;
  const inf = informer('/apis/scheduling.volcano.sh/v1beta1/podgroups', {
    reset: (items) => { groups.clear(); for (const g of items) groups.set(key(g), g); drawWaiting(); },
    event: (type, g) => { if (type === 'DELETED') groups.delete(key(g)); else groups.set(key(g), g); drawWaiting(); },
    error: (e) => waitingBody.replaceChildren(el('p', { class: 'note' },
      e.status === 403 ? 'You may not list pod groups in every namespace: the waiting jobs are not shown.' : e.message)),
  });
  return () => { table.stop(); drawWaiting.stop(); inf.stop(); };
}

const gpusOf = (r) => Object.entries(r || {}).filter(([k]) => k.endsWith('/gpu')).reduce((n, [, v]) => n + (Number.parseInt(v, 10) || 0), 0);

function podGpus(pod) {
  let n = 0;
  for (const c of pod.spec?.containers || []) {
    const res = c.resources || {};
    n += gpusOf(res.limits || res.requests);
  }
  return n;
}

// The node's GPU readings (the node agent's trainyard.io/gpu-utilization
// annotation: every GPU's util % and memory), as "util%, used/total".
function gpuUse(n) {
  let r;
  try { r = JSON.parse(n.metadata?.annotations?.['trainyard.io/gpu-utilization'] || 'null'); } catch { r = null; }
  const gpus = Array.isArray(r?.gpus) ? r.gpus : [];
  if (!gpus.length) return '—';
  const utils = gpus.map((g) => g.util).filter((u) => Number.isFinite(u));
  const used = gpus.reduce((s, g) => s + (Number(g.memUsedMiB) || 0), 0);
  const total = gpus.reduce((s, g) => s + (Number(g.memTotalMiB) || 0), 0);
  const busy = gpus.filter((g) => g.util > 0).length;
  const util = utils.length ? `${Math.round(utils.reduce((a, b) => a + b, 0) / utils.length)}%` : '—';
  return `${util} (${busy} busy); ${gib(used)}/${gib(total)} GiB${r.fake ? ' (fake)' : ''}`;
}
const gib = (mib) => (mib / 1024).toFixed(mib % 1024 ? 1 : 0);

// Health: the Ready condition, the pressure conditions and GPUUnhealthy that
// are true, cordoning and taints.
function health(n) {
  const conds = n.status?.conditions || [];
  const ready = conds.find((c) => c.type === 'Ready');
  const out = [];
  out.push(el('span', { class: ready?.status === 'True' ? 'status status-running' : 'status status-failed' },
    ready?.status === 'True' ? 'Ready' : `Not ready${ready?.reason ? ` (${ready.reason})` : ''}`));
  for (const c of conds)
    if (c.type !== 'Ready' && c.status === 'True')
      out.push(el('span', { class: 'status status-failed', title: c.message || '' }, c.type));
  if (n.spec?.unschedulable) out.push(el('span', { class: 'status status-suspended' }, 'Unschedulable (cordoned)'));
  for (const t of n.spec?.taints || [])
    out.push(el('span', { class: 'taint' }, `taint ${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`));
  return el('span', { class: 'health' }, ...out.flatMap((x, i) => (i ? ['; ', x] : [x])));
}

export function mountNodes(container) {
  // GPUs allocated per node: the bound, unfinished pods' GPUs (one watch)
  const podGpu = new Map(); // pod uid -> { node, gpus }
  const nodeAlloc = new Map();
  let podsVisible = false;
  const table = liveTable(container, {
    heading: 'Nodes',
    id: 'nodes',
    path: '/api/v1/nodes',
    empty: 'No nodes.',
    forbidden: 'You may not list nodes.',
    columns: [
      { label: 'Name', cell: (n) => n.metadata.name },
      { label: 'Health', cls: 'health', cell: health },
      { label: 'CPUs', numeric: true, cell: (n) => String(n.status?.allocatable?.cpu ?? n.status?.capacity?.cpu ?? '—') },
      { label: 'Memory', numeric: true, cell: (n) => String(n.status?.allocatable?.memory ?? '—') },
      { label: 'GPUs', numeric: true, cell: (n) => String(gpusOf(n.status?.allocatable)) },
      { label: 'GPUs allocated', numeric: true, cls: 'gpu-alloc', cell: (n) => (podsVisible ? String(nodeAlloc.get(n.metadata.name) || 0) : '—') },
      { label: 'GPU use', cls: 'gpu-use', cell: gpuUse },
      { label: 'Age', numeric: true, cell: (n) => age(n.metadata.creationTimestamp) },
    ],
  });
  const count = (pod, sign) => {
    const v = (nodeAlloc.get(pod.node) || 0) + sign * pod.gpus;
    if (v) nodeAlloc.set(pod.node, v); else nodeAlloc.delete(pod.node);
  };
  const seen = (p, gone) => {
    const uid = p.metadata?.uid;
    const was = podGpu.get(uid);
    if (was) { count(was, -1); podGpu.delete(uid); }
    const phase = p.status?.phase;
    const gpus = podGpus(p);
    if (!gone && gpus && p.spec?.nodeName && phase !== 'Succeeded' && phase !== 'Failed') {
      const now = { node: p.spec.nodeName, gpus };
      podGpu.set(uid, now);
      count(now, 1);
    }
  };
  const sel = encodeURIComponent('spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed');
  const pods = informer(`/api/v1/pods?fieldSelector=${sel}`, {
    reset: (items) => { podGpu.clear(); nodeAlloc.clear(); podsVisible = true; for (const p of items) seen(p, false); table.draw(); },
    event: (type, p) => { seen(p, type === 'DELETED'); table.draw(); },
    error: () => { podsVisible = false; table.draw(); },
  });
  container.append(el('p', { class: 'note' }, 'GPUs allocated: the GPUs of the pods bound to the node that have not finished. GPU use: the node agent\'s readings (mean utilisation, how many GPUs are busy, memory used of total), when the node has GPU metrics.'));
  return () => { table.stop(); pods.stop(); };
}
