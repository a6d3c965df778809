// jobs.js - every training job the user may see, of every kind, in one
// table kept live by watches (no polling).
//
// A browser opens at most six HTTP/1.1 connections to one server, and every
// watch holds one. So at most LIVE_WATCHES collections are watched (the
// kinds with the most jobs first); the other kinds are listed once and then
// kept current by one watch on Events: an event about a job of such a kind
// fetches that job again, and watches its kind for a short while after
// (FOLLOW_S), since a controller records an event before it writes the
// status the event tells of. That leaves a connection for everything else
// (docs/console.md).
import { api, canI, informer, lines, whoamiInfo } from './api.js';
import {
  collectionPath, gpusRequested, kindLabel, objectPath, queueOf, servedKinds, statusOf, timesOf,
} from './kinds.js';
import { age, announce, el, errorBox } from './util.js';

const LIVE_WATCHES = 2;
const FOLLOW_S = 20;
const NS_KEY = 'trainyard.namespaces';

const COLUMNS = [
  { key: 'name', label: 'Name' },
  { key: 'kind', label: 'Kind' },
  { key: 'ns', label: 'Namespace' },
  { key: 'status', label: 'Status' },
  { key: 'queue', label: 'Queue' },
  { key: 'user', label: 'User' },
  { key: 'gpus', label: 'GPUs requested', numeric: true },
  { key: 'alloc', label: 'GPUs allocated', numeric: true },
  { key: 'duration', label: 'Duration', numeric: true },
  { key: 'created', label: 'Age', numeric: true },
];

// The GPUs a pod asks for (its containers' */gpu limits, else requests).
function podGpus(pod) {
  let n = 0;
  for (const c of pod.spec?.containers || []) {
    const res = c.resources || {};
    for (const [name, q] of Object.entries(res.limits || res.requests || {}))
      if (name.endsWith('/gpu')) n += Number.parseInt(q, 10) || 0;
  }
  return n;
}

// The job a pod belongs to: its controlling owner's uid.
const ownerUid = (pod) => (pod.metadata?.ownerReferences || []).find((o) => o.controller)?.uid || '';

// The row's values (also what filters, search and sorting read). alloc:
// the GPUs of the job's pods bound to a node and not finished, -1 when the
// page cannot see the namespace's pods.
function rowData(k, job, alloc) {
  const m = job.metadata || {};
  const { start, end } = timesOf(k, job);
  return {
    name: m.name, kind: kindLabel(k), kindId: k.id, ns: m.namespace || '',
    status: statusOf(k, job), queue: queueOf(k, job),
    user: m.annotations?.['trainyard.io/created-by'] || '',
    gpus: gpusRequested(k, job), alloc, created: m.creationTimestamp || '',
    start, end,
  };
}

export function mount(container, params) {
  const jobs = new Map(); // uid -> { k, job, d, tr }
  const stoppers = [];
  let sortKey = params.get('sort') || 'created';
  let sortDesc = params.get('order') !== 'asc';
  let destroyed = false;

  const filterNs = el('select', { id: 'f-ns' }, el('option', { value: '' }, 'All'));
  const filterStatus = el('select', { id: 'f-status' }, el('option', { value: '' }, 'All'),
    ...['Pending', 'Created', 'Running', 'Restarting', 'Suspended', 'Succeeded', 'Failed',
      'Aborted', 'Completed', 'Terminated'].map((s) => el('option', { value: s }, s)));
  const filterKind = el('select', { id: 'f-kind' }, el('option', { value: '' }, 'All'));
  const filterUser = el('input', { id: 'f-user', type: 'text', autocomplete: 'off' });
  const search = el('input', { id: 'f-search', type: 'search', autocomplete: 'off', placeholder: 'name, queue…' });
  const notes = el('div', { class: 'notes', 'aria-live': 'polite' });
  const tbody = el('tbody');
  const count = el('p', { class: 'count', 'aria-live': 'polite' });
  const headRow = el('tr');
  const table = el('table', { class: 'jobs', id: 'jobs-table' },
    el('caption', { class: 'visually-hidden' }, 'Training jobs'), el('thead', {}, headRow), tbody);

  filterNs.value = params.get('ns') || '';
  filterStatus.value = params.get('status') || '';
  filterUser.value = params.get('user') || '';
  search.value = params.get('q') || '';

  container.append(
    el('h1', {}, 'Jobs'),
    el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
      el('label', { for: 'f-ns' }, 'Namespace'), filterNs,
      el('label', { for: 'f-status' }, 'Status'), filterStatus,
      el('label', { for: 'f-kind' }, 'Kind'), filterKind,
      el('label', { for: 'f-user' }, 'User'), filterUser,
      el('label', { for: 'f-search' }, 'Search'), search),
    notes, count, table);
  container.querySelector('form.filters').addEventListener('submit', (e) => e.preventDefault());

  // ---- header and sorting ----
  for (const c of COLUMNS) {
    const btn = el('button', { type: 'button', class: 'sort' }, c.label);
    btn.addEventListener('click', () => {
      if (sortKey === c.key) sortDesc = !sortDesc;
      else { sortKey = c.key; sortDesc = c.numeric || c.key === 'created'; }
      saveParams();
      resort();
    });
    headRow.append(el('th', { scope: 'col', dataset: { key: c.key } }, btn));
  }
  function markSort() {
    for (const th of headRow.children)
      th.setAttribute('aria-sort', th.dataset.key === sortKey ? (sortDesc ? 'descending' : 'ascending') : 'none');
  }

  function saveParams() {
    const q = new URLSearchParams();
    if (filterNs.value) q.set('ns', filterNs.value);
    if (filterStatus.value) q.set('status', filterStatus.value);
    if (filterKind.value) q.set('kind', filterKind.value);
    if (filterUser.value) q.set('user', filterUser.value);
    if (search.value) q.set('q', search.value);
    if (sortKey !== 'created') q.set('sort', sortKey);
    if (!sortDesc) q.set('order', 'asc');
    const s = q.toString();
    // replaceState: no hashchange, so the page is not mounted again
    history.replaceState(null, '', `#/jobs${s ? `?${s}` : ''}`);
  }

  function visible(d) {
    if (filterNs.value && d.ns !== filterNs.value) return false;
    if (filterStatus.value && d.status !== filterStatus.value) return false;
    if (filterKind.value && d.kindId !== filterKind.value) return false;
    if (filterUser.value && !d.user.includes(filterUser.value.trim())) return false;
    const q = search.value.trim().toLowerCase();
    if (q && !`${d.name} ${d.ns} ${d.queue} ${d.kind} ${d.user} ${d.status}`.toLowerCase().includes(q)) return false;
    return true;
  }

  function compare(a, b) {
    let x; let y;
    if (sortKey === 'created') { x = a.d.created; y = b.d.created; } // ISO strings sort by time
    else if (sortKey === 'duration') { x = a.d.start ? (a.d.end ? Date.parse(a.d.end) : Date.now()) - Date.parse(a.d.start) : -1; y = b.d.start ? (b.d.end ? Date.parse(b.d.end) : Date.now()) - Date.parse(b.d.start) : -1; }
    else { x = a.d[sortKey]; y = b.d[sortKey]; }
    let c = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
    if (c === 0) c = a.d.name.localeCompare(b.d.name) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
    return sortDesc ? -c : c;
  }

  function cells(entry) {
    const { d } = entry;
    const href = `#/jobs/${encodeURIComponent(d.kindId)}/${encodeURIComponent(d.ns)}/${encodeURIComponent(d.name)}`;
    const start = d.start;
    const end = d.end ? Date.parse(d.end) : Date.now();
    return [
      el('td', {}, el('a', { href }, d.name)),
      el('td', {}, d.kind),
      el('td', {}, d.ns),
      el('td', {}, el('span', { class: `status status-${d.status.toLowerCase()}` }, d.status)),
      el('td', {}, d.queue || '—'),
      el('td', {}, d.user || '—'),
      el('td', { class: 'num' }, String(d.gpus)),
      el('td', { class: 'num alloc' }, d.alloc < 0 ? '—' : String(d.alloc)),
      el('td', { class: 'num' }, start ? age(new Date(Date.now() - (end - Date.parse(start))).toISOString()) : '—'),
      el('td', { class: 'num' }, el('time', { datetime: d.created, title: d.created }, age(d.created))),
    ];
  }

  // The rows in display order, an array kept sorted: an event rebuilds and
  // moves its own row only (a binary search), and the table holds only the
  // rows on screen and a few more (the rest are spacers of their height), so
  // that 10,000 jobs and 100 changes a second cost what a screenful does.
  // A new sort orders them all again; a new filter only marks them.
  let order = [];
  function locate(e) {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(order[mid], e) < 0) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  function place(e) {
    order.splice(locate(e), 0, e);
    render();
  }
  function unplace(e) {
    let i = locate(e);
    if (order[i] !== e) i = order.indexOf(e); // a key that moves with time (duration)
    if (i >= 0) order.splice(i, 1);
    render();
  }
  function refilter() {
    for (const e of order) e.vis = visible(e.d);
    render();
  }
  function resort() {
    order = [...jobs.values()].sort(compare);
    markSort();
    refilter();
  }

  function freshenAge(e) {
    const t = e.tr.querySelector('time');
    if (t) t.textContent = age(e.d.created);
  }

  const OVERSCAN = 30;
  let rowH = 33; // measured from a rendered row
  const topPad = el('tr', { class: 'pad', 'aria-hidden': 'true' }, el('td', { colspan: String(COLUMNS.length) }));
  const bottomPad = el('tr', { class: 'pad', 'aria-hidden': 'true' }, el('td', { colspan: String(COLUMNS.length) }));
  let shownRows = [];
  let renderQueued = false;
  function render() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(() => {
      renderQueued = false;
      if (destroyed) return;
      const vis = order.filter((e) => e.vis);
      const top = tbody.getBoundingClientRect().top;
      const first = Math.max(0, Math.floor(-top / rowH) - OVERSCAN);
      const last = Math.min(vis.length, first + Math.ceil(window.innerHeight / rowH) + 2 * OVERSCAN);
      const rows = vis.slice(first, last);
      topPad.firstChild.style.height = `${first * rowH}px`; // CSSOM: allowed by the CSP
      bottomPad.firstChild.style.height = `${(vis.length - last) * rowH}px`;
      topPad.hidden = first === 0;
      bottomPad.hidden = last >= vis.length;
      if (rows.length !== shownRows.length || rows.some((e, n) => shownRows[n] !== e)) {
        rows.forEach((e, n) => { e.tr.setAttribute('aria-rowindex', String(first + n + 2)); freshenAge(e); });
        // Only the rows that come or go are added or removed: a row taken
        // out of the document loses the focus (and, for a moment, the
        // page its height, which can scroll it back to the top).
        const want = [topPad, ...rows.map((e) => e.tr), bottomPad];
        const keep = new Set(want);
        const hadFocus = tbody.contains(document.activeElement);
        for (const n of [...tbody.children]) if (!keep.has(n)) n.remove();
        let at = tbody.firstChild;
        for (const n of want) {
          if (n === at) at = at.nextSibling;
          else tbody.insertBefore(n, at);
        }
        if (hadFocus && focused && rows.includes(focused) && !tbody.contains(document.activeElement)) focusRow(focused);
        shownRows = rows;
        // (a fractional height: rounding it off adds up over thousands of rows)
        if (rows.length && rows[0].tr.getBoundingClientRect().height) rowH = rows[0].tr.getBoundingClientRect().height;
      }
      table.setAttribute('aria-rowcount', String(vis.length + 1));
      count.textContent = jobs.size === 0 ? 'No jobs.' : `${vis.length} of ${jobs.size} jobs shown.`;
      if (wantFocus && rows.includes(wantFocus)) {
        focusRow(wantFocus);
        wantFocus.tr.scrollIntoView({ block: 'nearest' }); // what the estimate missed
      }
      wantFocus = null;
    });
  }

  // ---- the keyboard: rows off screen too ----
  // Only the rows on screen exist, so Tab alone cannot reach the others.
  // In a row (its link has the focus), the arrow keys, Page Up/Down and
  // Home/End move to another row of the whole list: the window scrolls it
  // into view, the next render makes its row, and the focus goes to its
  // link. Enter opens the job (the link's own behaviour).
  let focused = null; // the entry whose row has (or last had) the focus
  let wantFocus = null; // the entry to focus once rendered
  function focusRow(e) {
    focused = e;
    e.tr.querySelector('a')?.focus({ preventScroll: true });
  }
  tbody.addEventListener('focusin', (ev) => {
    const tr = ev.target.closest?.('tr[data-uid]');
    if (tr) focused = jobs.get(tr.dataset.uid) || focused;
  });
  tbody.addEventListener('keydown', (ev) => {
    if (!focused || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const pageRows = Math.max(1, Math.floor((window.innerHeight - headRow.offsetHeight) / rowH) - 1);
    const step = { ArrowDown: 1, ArrowUp: -1, PageDown: pageRows, PageUp: -pageRows, Home: -Infinity, End: Infinity }[ev.key];
    if (step === undefined) {
      if (ev.key === 'Enter' && ev.target === focused.tr) focused.tr.querySelector('a')?.click();
      return;
    }
    ev.preventDefault();
    const vis = order.filter((e) => e.vis);
    const at = vis.indexOf(focused);
    if (at < 0 || !vis.length) return;
    const to = Math.max(0, Math.min(vis.length - 1, at + step));
    // the row's place: the list's top plus its index (rows are rowH tall)
    const y = tbody.getBoundingClientRect().top + window.scrollY + to * rowH;
    const top = window.scrollY + headRow.offsetHeight;
    if (y < top) window.scrollTo(0, y - headRow.offsetHeight);
    else if (y + rowH > window.scrollY + window.innerHeight) window.scrollTo(0, y + rowH - window.innerHeight);
    wantFocus = vis[to];
    announce(`Row ${to + 1} of ${vis.length}: ${vis[to].d.name}`);
    if (shownRows.includes(wantFocus)) {
      focusRow(wantFocus);
      wantFocus.tr.scrollIntoView({ block: 'nearest' });
      wantFocus = null;
    } else {
      render();
    }
  });
  const onScroll = () => render();
  window.addEventListener('scroll', onScroll, { passive: true });
  window.addEventListener('resize', onScroll, { passive: true });

  // ---- GPUs allocated: the bound, unfinished pods of each job ----
  // One watch on the pods bound to a node (cluster-wide, or the first
  // namespace of a user limited to some), each counted for the job that
  // controls it; a change moves only that job's row.
  const podAlloc = new Map(); // pod uid -> { job, gpus }
  const jobAlloc = new Map(); // job uid -> GPUs
  let podScope = null; // '' every namespace, else the one watched; null: none
  const allocOf = (uid, ns) => (podScope === null || (podScope && podScope !== ns) ? -1 : jobAlloc.get(uid) || 0);
  function addAlloc(job, n) {
    const v = (jobAlloc.get(job) || 0) + n;
    if (v) jobAlloc.set(job, v); else jobAlloc.delete(job);
  }
  function podSeen(pod, gone) {
    const uid = pod.metadata?.uid;
    if (!uid) return '';
    const was = podAlloc.get(uid);
    const phase = pod.status?.phase;
    const gpus = podGpus(pod);
    const now = !gone && gpus && pod.spec?.nodeName && phase !== 'Succeeded' && phase !== 'Failed' && ownerUid(pod)
      ? { job: ownerUid(pod), gpus } : null;
    if (was?.job === now?.job && was?.gpus === now?.gpus) return '';
    if (was) { addAlloc(was.job, -was.gpus); podAlloc.delete(uid); }
    if (now) { addAlloc(now.job, now.gpus); podAlloc.set(uid, now); }
    return [was?.job, now?.job];
  }
  // A row's GPUs allocated, again: its cell's text (and its place, when
  // the list is sorted by it). bulk: the caller sorts after.
  function refreshAlloc(e, bulk = false) {
    const alloc = allocOf(e.uid, e.d.ns);
    if (alloc === e.d.alloc) return;
    if (sortKey === 'alloc' && !bulk) unplace(e);
    e.d.alloc = alloc;
    const td = e.tr.querySelector('td.alloc');
    if (td) td.textContent = alloc < 0 ? '—' : String(alloc);
    if (sortKey === 'alloc' && !bulk) place(e);
  }
  function refreshJobs(uids) {
    for (const u of new Set(uids)) {
      const e = u && jobs.get(u);
      if (e) refreshAlloc(e);
    }
  }
  function refreshAllAlloc() {
    for (const e of jobs.values()) refreshAlloc(e, true);
    if (sortKey === 'alloc') resort();
  }
  // A TrainJob has no Running condition: its row reads its state from
  // status.jobsStatus, which its controller rewrites when a pod starts or
  // ends without recording an Event. So when TrainJobs follow Events, a
  // bound pod of one (its label) that changes phase fetches the job again
  // and follows its kind a while, as an Event about it does.
  const trainPhases = new Map(); // pod uid -> phase, of TrainJobs' pods
  let onTrainPod = null; // (ns, job name), set by followEvents
  // A job of a kind that follows Events, seen being deleted: no Event need
  // come when a finalizer (a TrainJob's record) lets it go, so it is
  // fetched again each second until it is gone. Set by followEvents.
  let onTerminating = null; // (k, ns, job name)
  function trainPodSeen(pod, gone, quiet) {
    const job = pod.metadata?.labels?.['trainer.kubeflow.org/trainjob-name'];
    const uid = pod.metadata?.uid;
    if (!job || !uid) return;
    const phase = gone ? '' : pod.status?.phase || 'Pending';
    if (trainPhases.get(uid) === phase) return; // (a GPU reading: no news)
    if (gone) trainPhases.delete(uid); else trainPhases.set(uid, phase);
    if (!quiet) onTrainPod?.(pod.metadata.namespace || '', job);
  }
  function watchPods(ns) {
    const sel = encodeURIComponent('spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed');
    const base = ns ? `/api/v1/namespaces/${encodeURIComponent(ns)}/pods` : '/api/v1/pods';
    stoppers.push(informer(`${base}?fieldSelector=${sel}`, {
      reset: (items) => {
        podAlloc.clear();
        jobAlloc.clear();
        trainPhases.clear();
        podScope = ns;
        for (const p of items) { podSeen(p, false); trainPodSeen(p, false, true); }
        refreshAllAlloc();
      },
      event: (type, p) => {
        refreshJobs(podSeen(p, type === 'DELETED') || []);
        trainPodSeen(p, type === 'DELETED', false);
      },
      error: () => {
        podScope = null;
        refreshAllAlloc();
      },
    }));
  }

  const uidOf = (k, job) => job.metadata?.uid || `${k.id}/${job.metadata?.namespace}/${job.metadata?.name}`;
  // bulk: many at once (a list): the caller orders them all after
  function upsert(k, job, bulk = false) {
    const uid = uidOf(k, job);
    let e = jobs.get(uid);
    if (!e) {
      e = { tr: el('tr', { dataset: { uid } }), uid };
      jobs.set(uid, e);
    } else if (!bulk) {
      unplace(e); // by its old values
    }
    e.k = k;
    e.job = job;
    e.d = rowData(k, job, allocOf(uid, job.metadata?.namespace || ''));
    e.tr.dataset.name = e.d.name;
    e.tr.dataset.ns = e.d.ns;
    const hadFocus = e.tr.contains(document.activeElement);
    e.tr.replaceChildren(...cells(e));
    if (hadFocus) e.tr.querySelector('a')?.focus({ preventScroll: true }); // its link is new
    e.vis = visible(e.d);
    noteNamespace(e.d.ns);
    if (!bulk) place(e);
    if (job.metadata?.deletionTimestamp) onTerminating?.(k, e.d.ns, e.d.name);
  }
  function remove(job, k) {
    const uid = uidOf(k, job);
    const e = jobs.get(uid);
    if (!e) return;
    unplace(e);
    jobs.delete(uid);
  }
  function resetScope(k, ns, items) {
    for (const [uid, e] of jobs)
      if (e.k.id === k.id && (!ns || e.d.ns === ns)) jobs.delete(uid);
    for (const j of items) upsert(k, j, true);
    resort();
  }

  const seenNs = new Set();
  function noteNamespace(ns) {
    if (!ns || seenNs.has(ns)) return;
    seenNs.add(ns);
    const opts = [...filterNs.options].slice(1).map((o) => o.value).concat(ns).sort();
    filterNs.replaceChildren(el('option', { value: '' }, 'All'), ...opts.map((n) => el('option', { value: n }, n)));
    filterNs.value = params.get('ns') && !filterNs.dataset.touched ? params.get('ns') : filterNs.dataset.value || '';
  }
  filterNs.addEventListener('change', () => { filterNs.dataset.touched = '1'; filterNs.dataset.value = filterNs.value; });
  if (params.get('ns')) { noteNamespace(params.get('ns')); filterNs.value = params.get('ns'); }

  for (const input of [filterNs, filterStatus, filterKind, filterUser, search])
    input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => { saveParams(); refilter(); });

  // ages move on their own (the rows on screen; render() does the others
  // as they come into view)
  const ticker = setInterval(() => { for (const e of shownRows) freshenAge(e); }, 10000);

  // ---- the data ----
  async function start() {
    let kinds;
    try {
      kinds = await servedKinds();
    } catch (e) {
      notes.append(errorBox(`Cannot read the API discovery: ${e.message}`));
      return;
    }
    filterKind.append(...kinds.map((k) => el('option', { value: k.id }, kindLabel(k))));
    filterKind.value = params.get('kind') || '';

    // A first list of each kind, cluster-wide; a 403 there means the user
    // sees only some namespaces (listed one by one below).
    const scopes = []; // { k, ns, items }
    const narrow = [];
    await Promise.all(kinds.map(async (k) => {
      try {
        const list = await api(collectionPath(k, ''));
        scopes.push({ k, ns: '', items: list.items || [], rv: list.metadata?.resourceVersion });
      } catch (e) {
        if (e.status === 403) narrow.push(k);
        else if (e.status !== 401) notes.append(errorBox(`${kindLabel(k)}: ${e.message}`));
      }
    }));
    if (destroyed) return;
    let namespaces = [];
    if (narrow.length) {
      namespaces = await visibleNamespaces(narrow[0]);
      if (destroyed) return;
      const shown = namespaces.length ? namespaces.join(', ') : 'none';
      notes.append(el('p', { class: 'note', id: 'scope-note' },
        `You may not list ${narrow.length === kinds.length ? 'jobs' : narrow.map(kindLabel).join(', ')} in every namespace: showing namespace${namespaces.length === 1 ? '' : 's'} ${shown}. `),
        namespaceAdder());
      await Promise.all(narrow.flatMap((k) => namespaces.map(async (ns) => {
        try {
          const list = await api(collectionPath(k, ns));
          scopes.push({ k, ns, items: list.items || [], rv: list.metadata?.resourceVersion });
        } catch (e) {
          if (e.status === 403) notes.append(el('p', { class: 'note' }, `You may not list ${kindLabel(k)} in namespace ${ns}.`));
        }
      })));
    }
    if (destroyed) return;
    for (const s of scopes) for (const j of s.items) upsert(s.k, j, true);
    resort();

    // The busiest collections get watches of their own; the rest follow Events.
    scopes.sort((a, b) => b.items.length - a.items.length ||
      kinds.indexOf(a.k) - kinds.indexOf(b.k));
    const live = scopes.slice(0, LIVE_WATCHES);
    const quiet = scopes.slice(LIVE_WATCHES);
    table.dataset.watched = live.map((sc) => `${sc.k.id}${sc.ns ? `/${sc.ns}` : ''}`).join(' ');
    for (const s of live) {
      stoppers.push(informer(collectionPath(s.k, s.ns), {
        reset: (items) => resetScope(s.k, s.ns, items),
        event: (type, obj) => (type === 'DELETED' ? remove(obj, s.k) : upsert(s.k, obj)),
        error: (e) => notes.append(errorBox(`${kindLabel(s.k)}: ${e.message}`)),
      }, s.rv));
    }
    if (quiet.length) followEvents(quiet, narrow.length ? namespaces : ['']);
    if (!narrow.length) watchPods('');
    else if (namespaces.length) watchPods(namespaces[0]);
  }

  // Events about jobs of the kinds without a watch of their own: each one
  // fetches its job again (or drops it when it is gone).
  function followEvents(quiet, namespaces) {
    const byKind = new Map(quiet.map((s) => [`${s.k.group}|${s.k.kind}`, { k: s.k, wide: !s.ns }]));
    const pending = new Map();
    const refetch = async (q, ns, name) => {
      const key = `${q.k.id}/${ns}/${name}`;
      if (pending.has(key)) return;
      pending.set(key, true);
      try {
        const job = await api(objectPath(q.k, ns, name));
        upsert(q.k, job);
        followUp(q.k, q.wide ? '' : ns, job.metadata.resourceVersion);
      } catch (e) {
        for (const en of jobs.values()) {
          if (en.k.id !== q.k.id || en.d.ns !== ns || en.d.name !== name) continue;
          if (e.status === 404) remove(en.job, q.k);
          // a busy server (429, a timeout): a job being deleted is asked again
          else if (en.job.metadata?.deletionTimestamp) onTerminating?.(q.k, ns, name);
          break;
        }
      } finally {
        pending.delete(key);
      }
    };
    for (const ns of namespaces.slice(0, 1)) {
      const path = ns ? `/api/v1/namespaces/${encodeURIComponent(ns)}/events` : '/api/v1/events';
      stoppers.push(informer(path, {
        reset: () => {},
        event: (type, ev) => {
          const o = ev.involvedObject || {};
          const group = (o.apiVersion || '').split('/')[0];
          const q = byKind.get(`${group}|${o.kind}`);
          if (q && o.name) refetch(q, o.namespace || ev.metadata?.namespace || '', o.name);
        },
        error: () => {},
      }));
    }
    const tj = byKind.get('trainer.kubeflow.org|TrainJob');
    if (tj) onTrainPod = (ns, name) => refetch(tj, ns, name);
    onTerminating = (k, ns, name) => {
      const q = byKind.get(`${k.group}|${k.kind}`);
      if (q) setTimeout(() => { if (!destroyed) refetch(q, ns, name); }, 1000);
    };
    // the first lists came before this: a job they showed being deleted (a
    // TrainJob its record finalizer holds) may see no event when it goes
    for (const en of [...jobs.values()])
      if (en.job.metadata?.deletionTimestamp) onTerminating(en.k, en.d.ns, en.d.name);
  }

  // The short watches after an event, one at a time (one connection), each
  // from the version fetched, so that it sees every write after the fetch.
  const follows = new Map(); // kind|ns -> { k, ns, rv }
  let following = '';
  function followUp(k, ns, rv) {
    const key = `${k.id}|${ns}`;
    // one queued per collection (from the oldest version: it sees the
    // most); one that runs now is queued again, since it may end before
    // the write this fetch foretells
    if (follows.has(key)) return;
    follows.set(key, { k, ns, rv });
    pumpFollows();
  }
  async function pumpFollows() {
    if (following || destroyed || !follows.size) return;
    const [key, f] = follows.entries().next().value;
    follows.delete(key);
    following = key;
    const ctl = new AbortController();
    const stopper = { stop: () => ctl.abort() };
    stoppers.push(stopper);
    try {
      const path = `${collectionPath(f.k, f.ns)}?watch=1&resourceVersion=${encodeURIComponent(f.rv)}&timeoutSeconds=${FOLLOW_S}`;
      const resp = await api(path, { raw: true, signal: ctl.signal });
      for await (const line of lines(resp)) {
        if (!line.trim()) continue;
        const ev = JSON.parse(line);
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') upsert(f.k, ev.object);
        else if (ev.type === 'DELETED') remove(ev.object, f.k);
      }
    } catch { /* ended, refused or too old: the next event starts another */ }
    stoppers.splice(stoppers.indexOf(stopper), 1);
    following = '';
    pumpFollows();
  }

  // The namespaces to list jobs in, for a user who may not list them in
  // every namespace: all of them when the user may list namespaces. Else
  // the API has no question that answers "where may I read" (a
  // SelfSubjectRulesReview answers for one namespace named in advance), so
  // the page asks about the likely ones: the namespace named after the user
  // (`trainyard user add` makes it), those named after the user's groups,
  // and each is kept when a SelfSubjectAccessReview says the user may list
  // jobs there; plus those the user added here (kept in the browser).
  async function visibleNamespaces(probe) {
    try {
      const list = await api('/api/v1/namespaces');
      return (list.items || []).map((n) => n.metadata.name);
    } catch (e) {
      if (e.status !== 403) throw e;
    }
    const saved = JSON.parse(localStorage.getItem(NS_KEY) || '[]');
    const me = await whoamiInfo();
    const label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
    const guesses = [...new Set([me.username, ...me.groups.filter((g) => !g.startsWith('system:'))])]
      .filter((n) => label.test(n) && !saved.includes(n)).slice(0, 20);
    const allowed = await Promise.all(guesses.map((ns) => canI('list', probe.group, probe.plural, ns)));
    return [...guesses.filter((_, i) => allowed[i]), ...saved];
  }

  function namespaceAdder() {
    const input = el('input', { id: 'add-ns', type: 'text', autocomplete: 'off', pattern: '[a-z0-9]([-a-z0-9]*[a-z0-9])?' });
    const form = el('form', { class: 'inline' }, el('label', { for: 'add-ns' }, 'Show another namespace'), input,
      el('button', { type: 'submit' }, 'Add'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const ns = input.value.trim();
      if (!ns) return;
      const saved = JSON.parse(localStorage.getItem(NS_KEY) || '[]');
      if (!saved.includes(ns)) localStorage.setItem(NS_KEY, JSON.stringify([...saved, ns]));
      announce(`Namespace ${ns} added`);
      window.dispatchEvent(new HashChangeEvent('hashchange')); // mount again with it
    });
    return form;
  }

  markSort();
  start();
  return () => {
    destroyed = true;
    window.removeEventListener('scroll', onScroll);
    window.removeEventListener('resize', onScroll);
    clearInterval(ticker);
    for (const s of stoppers) s.stop();
  };
}
