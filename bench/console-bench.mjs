// console-bench.mjs - the console at scale (run by run-console-bench.sh, which
// starts the server and sets SERVER, E2E_TOKEN, CHROMIUM, JOBS, RATE,
// SECONDS_UPDATING). Makes JOBS suspended PyTorchJobs (no pods: the numbers
// are the page's), then measures in headless Chromium:
//   list:   navigation to every row in the table ("N of N jobs shown")
//   job:    navigation to a job page's manifest on screen
//   update: RATE new jobs a second for SECONDS_UPDATING seconds; the time
//           from the create's answer to the job's row in the table (a
//           MutationObserver in the page)
import { createRequire } from 'node:module';

const require = createRequire(new URL('../console/package.json', import.meta.url));
const { chromium } = require('playwright-core');
const { SERVER, E2E_TOKEN, CHROMIUM } = process.env;
const N = Number(process.env.JOBS || 10000);
const RATE = Number(process.env.RATE || 100);
const SECS = Number(process.env.SECONDS_UPDATING || 10);
const NS = 'bench';
const H = { Authorization: `Bearer ${E2E_TOKEN}`, 'Content-Type': 'application/json' };
const base = `${SERVER}/apis/kubeflow.org/v1/namespaces/${NS}/pytorchjobs`;

async function post(path, body) {
  const r = await fetch(path, { method: 'POST', headers: H, body: JSON.stringify(body) });
  if (!r.ok && r.status !== 409) throw new Error(`${path}: ${r.status} ${await r.text()}`);
}
const job = (i) => ({
  apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name: `job-${i}` },
  spec: {
    runPolicy: { suspend: true, schedulingPolicy: { queue: 'default' } },
    pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: 'Never', template: { spec: {
      containers: [{ name: 'pytorch', image: 'x', command: ['true'], resources: { limits: { 'nvidia.com/gpu': 1 } } }] } } } },
  },
});
const pct = (a, p) => a.length ? a[Math.min(a.length - 1, Math.floor(a.length * p))] : NaN;

await post(`${SERVER}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
let t = Date.now();
let next = 0;
await Promise.all(Array.from({ length: 16 }, async () => {
  while (next < N) await post(base, job(next++));
}));
console.log(`made ${N} jobs in ${((Date.now() - t) / 1000).toFixed(1)} s`);

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const page = await (await browser.newContext()).newPage();
page.setDefaultTimeout(600000);
const results = {};
for (let run = 0; run < 3; run++) {
  await page.goto('about:blank');
  t = Date.now();
  await page.goto(`${SERVER}/ui/#token=${E2E_TOKEN}`);
  await page.locator('.count', { hasText: `${N} of ${N} jobs shown` }).waitFor();
  (results.list ||= []).push(Date.now() - t);
}
for (let run = 0; run < 3; run++) {
  await page.goto('about:blank');
  t = Date.now();
  await page.goto(`${SERVER}/ui/#/jobs/pytorchjob/${NS}/job-${run * 7}`);
  await page.locator('#manifest', { hasText: 'kind: PyTorchJob' }).waitFor();
  (results.job ||= []).push(Date.now() - t);
}
await page.goto('about:blank');
await page.goto(`${SERVER}/ui/#/jobs`);
await page.locator('.count', { hasText: `${N} of ${N} jobs shown` }).waitFor();
// when each new job's row first appears
await page.evaluate(() => {
  window.seen = {};
  new MutationObserver((muts) => {
    const now = Date.now();
    for (const m of muts)
      for (const n of m.addedNodes)
        if (n.dataset?.name?.startsWith('new-') && !(n.dataset.name in window.seen)) window.seen[n.dataset.name] = now;
  }).observe(document.querySelector('#jobs-table tbody'), { childList: true });
});
const sent = {};
const total = RATE * SECS;
t = Date.now();
const inflight = [];
let failed = 0;
for (let i = 0; i < total; i++) {
  const due = t + (i * 1000) / RATE;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const body = job(i);
  body.metadata.name = `new-${i}`;
  inflight.push(fetch(base, { method: 'POST', headers: H, body: JSON.stringify(body) }).then(async (r) => {
    if (r.ok) sent[body.metadata.name] = Date.now();
    else if (!failed++) console.log(`a create failed: ${r.status} ${await r.text()}`);
  }));
}
await Promise.all(inflight);
const achieved = total / ((Date.now() - t) / 1000);
await page.waitForFunction((n) => Object.keys(window.seen).length >= n, Object.keys(sent).length * 0.99, { timeout: 60000 }).catch(() => {});
const seen = await page.evaluate(() => window.seen);
const lat = Object.keys(sent).filter((q) => q in seen).map((q) => Math.max(0, seen[q] - sent[q])).sort((a, b) => a - b);
await browser.close();

const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`jobs: ${N}`);
console.log(`list first paint (all rows), ms: ${results.list.join(', ')} (median ${med(results.list)})`);
console.log(`job page first paint, ms: ${results.job.join(', ')} (median ${med(results.job)})`);
console.log(`updates: ${Object.keys(sent).length} creates at ${achieved.toFixed(0)}/s; shown ${lat.length}; ` +
  `create answered -> row in the table, ms: p50 ${pct(lat, 0.5)}, p95 ${pct(lat, 0.95)}, max ${lat[lat.length - 1]}`);
