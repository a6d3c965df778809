// sched.js - the job page's "Scheduling" section: the job's PodGroup (the
// gang scheduler's unit), why it is pending, with the numbers (what it needs,
// what its queue has), and its place among the queue's waiting jobs.
// One watch (pod groups, cluster-wide where allowed, else the job's
// namespace); the queue and priority classes are fetched when a pod group
// changes, not polled.
import { api, informer } from './api.js';
import { clear, el } from './util.js';

export const WAITING = new Set(['Pending', 'Inqueue']);

// Plain code-unit order, as C's strcmp (localeCompare is not).
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// The queue's waiting PodGroups in the order the scheduler takes them and
// `trainyard queue get` lists them (src/cli/cli_top.c, cli_sort_waiting):
// priority (the PriorityClass's value, highest first), then creation time,
// then namespace, then name. classes: Map name -> value.
export function waitingOrder(groups, queue, classes) {
  const prio = (g) => classes?.get(g.spec?.priorityClassName) || 0;
  return groups.filter((g) => (g.spec?.queue || 'default') === queue && WAITING.has(g.status?.phase || 'Pending'))
    .sort((a, b) => prio(b) - prio(a) ||
      cmp(String(a.metadata.creationTimestamp || ''), String(b.metadata.creationTimestamp || '')) ||
      cmp(a.metadata.namespace || '', b.metadata.namespace || '') || cmp(a.metadata.name, b.metadata.name));
}

const fmt = (r) => (r && Object.keys(r).length ? Object.entries(r).map(([k, v]) => `${k}=${v}`).join(', ') : '—');

export function mountScheduling(section, ns) {
  const groups = new Map(); // ns/name -> PodGroup
  const body = el('div', { id: 'scheduling' }, el('p', { class: 'note' }, 'No pod group yet.'));
  section.append(body);
  let job = null;
  let pods = [];
  let scope = 'cluster';
  let queue = null;
  let queueName = '';
  let classes = null; // PriorityClass name -> value
  let stopped = false;

  const key = (pg) => `${pg.metadata.namespace}/${pg.metadata.name}`;
  const mine = () => [...groups.values()].find((pg) =>
    (pg.metadata.ownerReferences || []).some((o) => job && o.uid === job.metadata.uid));

  async function refreshQueue(name) {
    try {
      if (!classes) {
        classes = new Map();
        const pcs = await api('/apis/scheduling.k8s.io/v1/priorityclasses').catch(() => ({ items: [] }));
        for (const pc of pcs.items || []) classes.set(pc.metadata.name, pc.value || 0);
      }
      queue = await api(`/apis/scheduling.volcano.sh/v1beta1/queues/${encodeURIComponent(name)}`);
    } catch {
      queue = null; // not allowed to read queues: the numbers are left out
    }
    queueName = name;
    render();
  }

  // The scheduler's job order (waitingOrder).
  function position(pg) {
    const waiting = waitingOrder([...groups.values()], pg.spec?.queue || 'default', classes);
    return { index: waiting.findIndex((g) => key(g) === key(pg)), of: waiting.length };
  }

  function render() {
    if (stopped) return;
    const pg = mine();
    if (!pg) return;
    const q = pg.spec?.queue || 'default';
    if (q !== queueName) { queueName = q; refreshQueue(q); }
    const phase = pg.status?.phase || 'Pending';
    const items = [
      el('dt', {}, 'Pod group'), el('dd', {}, `${pg.metadata.name} (${phase})`),
      el('dt', {}, 'Needs'), el('dd', {}, `${pg.spec?.minMember ?? 1} pod${(pg.spec?.minMember ?? 1) === 1 ? '' : 's'} at once; ${fmt(pg.spec?.minResources)}`),
    ];
    if (WAITING.has(phase)) {
      const why = (pg.status?.conditions || []).filter((c) => c.type === 'Unschedulable' && c.status === 'True')
        .map((c) => `${c.reason ? `${c.reason}: ` : ''}${c.message || ''}`);
      for (const p of pods) {
        const c = (p.status?.conditions || []).find((x) => x.type === 'PodScheduled' && x.status === 'False');
        if (c?.message) why.push(`${p.metadata.name}: ${c.message}`);
      }
      const pos = position(pg);
      items.push(
        el('dt', {}, 'Why pending'), el('dd', { id: 'why-pending' }, why.length ? el('ul', {}, ...why.map((w) => el('li', {}, w))) : 'waiting for the scheduler'),
        el('dt', {}, 'Queue position'), el('dd', { id: 'queue-position' },
          pos.index >= 0 ? `${pos.index + 1} of ${pos.of} waiting in queue ${q}${scope === 'namespace' ? ` (of the jobs you can see, in namespace ${ns})` : ''}` : '—'));
    }
    items.push(el('dt', {}, `Queue ${q}`), el('dd', {}, queue && queueName === q
      ? `capability ${fmt(queue.spec?.capability)}; deserved ${fmt(queue.spec?.deserved)}; allocated ${fmt(queue.status?.allocated)}; weight ${queue.spec?.weight ?? 1}`
      : '—'));
    clear(body).append(el('dl', { class: 'summary' }, ...items));
  }

  const handlers = {
    reset: (items) => { groups.clear(); for (const g of items) groups.set(key(g), g); render(); },
    event: (type, g) => {
      if (type === 'DELETED') groups.delete(key(g)); else groups.set(key(g), g);
      if (mine() === g && queueName) refreshQueue(queueName); else render();
    },
  };
  let inf = informer('/apis/scheduling.volcano.sh/v1beta1/podgroups', {
    ...handlers,
    error: (e) => {
      if (e.status !== 403 || stopped) return;
      scope = 'namespace';
      inf = informer(`/apis/scheduling.volcano.sh/v1beta1/namespaces/${encodeURIComponent(ns)}/podgroups`, {
        ...handlers, error: () => { clear(body).append(el('p', { class: 'note' }, 'You may not read pod groups here.')); },
      });
    },
  });
  return {
    update(j, p) { job = j; pods = p; render(); },
    stop() { stopped = true; inf.stop(); },
  };
}
