// gpuchart.js - the job page's "GPUs" section: a chart per replica of its
// GPUs' utilisation and memory, from the readings the node agent writes on
// each pod that holds GPUs (the annotation trainyard.io/gpu-utilization:
// {"fake":..,"gpus":[{"index":0,"util":87,"memUsedMiB":..,"memTotalMiB":..}]},
// rewritten when the readings move, at most every 5 s). The page has no
// history from before it opened: each chart starts with the reading the
// pod had then and gains a point at each new one (the pods' watch brings
// them; nothing polls). Plain SVG, no library.
import { clear, el } from './util.js';

const ANNOTATION = 'trainyard.io/gpu-utilization';
const KEEP = 120; // points per replica (10 minutes at one reading per 5 s)
const W = 360;
const H = 90;
const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, ...children) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  for (const c of children) n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return n;
}

// A reading: { util (mean %, or null), used, total (MiB), gpus, fake }, or
// null when the annotation is absent or not what the agent writes. The
// figures are bounded (a pod's annotations are its creator's to write too).
export function readingOf(pod) {
  const text = pod.metadata?.annotations?.[ANNOTATION];
  if (!text) return null;
  let r;
  try { r = JSON.parse(text); } catch { return null; }
  if (!Array.isArray(r?.gpus) || !r.gpus.length) return null;
  const gpus = r.gpus.slice(0, 64);
  const utils = gpus.map((g) => g.util).filter((u) => Number.isFinite(u) && u >= 0 && u <= 100);
  const mib = (v) => (Number.isFinite(v) && v >= 0 && v < 2 ** 36 ? v : 0);
  return {
    text,
    util: utils.length ? utils.reduce((a, b) => a + b, 0) / utils.length : null,
    used: gpus.reduce((s, g) => s + mib(g.memUsedMiB), 0),
    total: gpus.reduce((s, g) => s + mib(g.memTotalMiB), 0),
    gpus: gpus.length,
    fake: r.fake === true,
  };
}

const gib = (mib) => `${(mib / 1024).toFixed(1)} GiB`;

function chart(name, points) {
  const t0 = points[0].t;
  const span = Math.max(1, points[points.length - 1].t - t0);
  const x = (p) => (points.length === 1 ? W : ((p.t - t0) / span) * W).toFixed(1);
  const y = (pct) => (H - (Math.max(0, Math.min(100, pct)) / 100) * H).toFixed(1);
  const line = (f, cls) => {
    const pts = points.filter((p) => f(p) !== null);
    if (!pts.length) return null;
    // a single reading is a short level line
    const coords = pts.length === 1 ? [`0,${y(f(pts[0]))}`, `${W},${y(f(pts[0]))}`] : pts.map((p) => `${x(p)},${y(f(p))}`);
    return svg('polyline', { class: cls, points: coords.join(' '), fill: 'none' });
  };
  const last = points[points.length - 1].r;
  const summary = `${last.util === null ? 'utilisation unknown' : `utilisation ${Math.round(last.util)}%`}, memory ${gib(last.used)} of ${gib(last.total)} (${last.gpus} GPU${last.gpus === 1 ? '' : 's'}${last.fake ? ', fake readings' : ''})`;
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': `${name}: ${summary}`, class: 'gpuchart' },
    svg('title', {}, `${name}: ${summary}`),
    svg('rect', { x: 0, y: 0, width: W, height: H, class: 'frame' }),
    svg('line', { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: 'grid' }));
  const u = line((p) => p.r.util, 'util');
  const m = line((p) => (p.r.total ? (100 * p.r.used) / p.r.total : null), 'mem');
  if (u) g.append(u);
  if (m) g.append(m);
  return el('figure', { class: 'gpu', dataset: { pod: name, points: String(points.length) } },
    g, el('figcaption', {}, el('strong', {}, name), `: ${summary}`));
}

// section: the page's element to fill. update(job's GPUs requested, pods)
// after each pod change; only a pod whose reading changed adds a point.
export function mountGpuCharts(section) {
  const body = el('div', { id: 'gpus' }, el('p', { class: 'note' }, 'No GPU readings yet.'));
  const legend = el('p', { class: 'note legend' },
    el('span', { class: 'key util' }, 'utilisation %'), ' ', el('span', { class: 'key mem' }, 'memory used %'),
    ' — over the time this page has been open; readings from the node agent, every 5 s at most.');
  section.append(legend, body);
  const series = new Map(); // pod name -> [{ t, r }]
  let shown = '';
  return {
    update(requested, pods) {
      let changed = false;
      const names = new Set();
      for (const p of pods) {
        const name = p.metadata.name;
        const r = readingOf(p);
        if (!r) continue;
        names.add(name);
        const s = series.get(name) || [];
        if (s.length && s[s.length - 1].r.text === r.text) continue;
        s.push({ t: Date.now(), r });
        if (s.length > KEEP) s.splice(0, s.length - KEEP);
        series.set(name, s);
        changed = true;
      }
      for (const n of series.keys()) if (!names.has(n)) { series.delete(n); changed = true; }
      const state = `${requested}|${series.size}`;
      if (!changed && state === shown) return;
      shown = state;
      legend.hidden = series.size === 0;
      if (!series.size) {
        clear(body).append(el('p', { class: 'note' }, requested
          ? 'No GPU readings: the replicas are not running yet, or their node has no GPU metrics (the node agent writes them when it finds GPUs).'
          : 'This job asks for no GPUs.'));
        return;
      }
      clear(body).append(...[...series.keys()].sort().map((n) => chart(n, series.get(n))));
    },
  };
}
