// cluster.js - the Queues page (Volcano queues) and the Nodes page, each a
// table kept live by one watch.
import { informer } from './api.js';
import { age, clear, el, errorBox } from './util.js';

function fmtResources(r) {
  if (!r || !Object.keys(r).length) return '—';
  return Object.entries(r).map(([k, v]) => `${k}=${v}`).join(', ');
}

// A live table: path, columns [{label, cell(obj)}], key(obj).
function liveTable(container, { heading, path, columns, empty, forbidden }) {
  const rows = new Map();
  const tbody = el('tbody');
  const msg = el('div', { 'aria-live': 'polite' });
  container.append(el('h1', {}, heading), msg,
    el('table', {}, el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { scope: 'col' }, c.label)))), tbody));
  const render = () => {
    const list = [...rows.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    clear(tbody).append(...list.map((o) => el('tr', { dataset: { name: o.metadata.name } },
      ...columns.map((c) => el('td', c.numeric ? { class: 'num' } : {}, c.cell(o))))));
    if (!list.length) tbody.append(el('tr', {}, el('td', { colspan: String(columns.length) }, empty)));
  };
  const inf = informer(path, {
    reset: (items) => { rows.clear(); for (const o of items) rows.set(o.metadata.name, o); render(); },
    event: (type, o) => { if (type === 'DELETED') rows.delete(o.metadata.name); else rows.set(o.metadata.name, o); render(); },
    error: (e) => msg.append(errorBox(e.status === 403 ? forbidden : e.message)),
  });
  return () => inf.stop();
}

export function mountQueues(container) {
  return liveTable(container, {
    heading: 'Queues',
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
}

const gpus = (r) => Object.entries(r || {}).filter(([k]) => k.endsWith('/gpu')).reduce((n, [, v]) => n + (Number.parseInt(v, 10) || 0), 0);

export function mountNodes(container) {
  return liveTable(container, {
    heading: 'Nodes',
    path: '/api/v1/nodes',
    empty: 'No nodes.',
    forbidden: 'You may not list nodes.',
    columns: [
      { label: 'Name', cell: (n) => n.metadata.name },
      { label: 'Ready', cell: (n) => (n.status?.conditions || []).find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'Not ready' },
      { label: 'Schedulable', cell: (n) => (n.spec?.unschedulable ? 'No (cordoned)' : 'Yes') },
      { label: 'CPUs', numeric: true, cell: (n) => String(n.status?.allocatable?.cpu ?? n.status?.capacity?.cpu ?? '—') },
      { label: 'Memory', numeric: true, cell: (n) => String(n.status?.allocatable?.memory ?? '—') },
      { label: 'GPUs', numeric: true, cell: (n) => String(gpus(n.status?.allocatable)) },
      { label: 'Age', numeric: true, cell: (n) => age(n.metadata.creationTimestamp) },
    ],
  });
}
