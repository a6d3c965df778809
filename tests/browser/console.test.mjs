// console.test.mjs - the web console in headless Chromium against a real
// server (started by run.sh, which sets SERVER, E2E_TOKEN, BOB_TOKEN,
// KUBECONFIG, E2E_TMP and CHROMIUM). Every wait is on a condition, with a
// generous deadline; nothing sleeps a fixed time.
import { execFileSync } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(new URL('../../console/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const { SERVER, E2E_TOKEN, BOB_TOKEN, CAROL_TOKEN, E2E_TMP, CHROMIUM, TRAINYARD, NVML_DOUBLE_CONFIG } = process.env;
const WAIT = 60000;
// CONSOLE_SCREENSHOTS=DIR: each page's picture there (docs/console/*.png)
const SHOTS = process.env.CONSOLE_SCREENSHOTS || '';
async function shot(page, name) {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
let failures = 0;
let checks = 0;

function pass(name) { checks++; console.log(`ok   - ${name}`); }
function fail(name, err) {
  checks++;
  failures++;
  console.log(`FAIL - ${name}`);
  if (err) console.log(String(err.stack || err).split('\n').slice(0, 8).map((l) => `     | ${l}`).join('\n'));
}
let current = null; // the page a failed check pictures (E2E_KEEP keeps it)
async function check(name, fn) {
  try {
    await fn();
    pass(name);
  } catch (e) {
    fail(name, e);
    await current?.screenshot({ path: join(E2E_TMP, `failed-${checks}.png`), fullPage: true }).catch(() => {});
    const states = await current?.evaluate(() => window.trainyardInformers?.()).catch(() => null);
    console.log(`     | page: ${current?.url()}\n     | informers: ${JSON.stringify(states)}`);
  }
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }

function kubectl(args, input, kubeconfig) {
  return execFileSync('kubectl', args, {
    input, encoding: 'utf8', env: { ...process.env, ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}) },
  });
}

// Retries fn until it returns truthy (kubectl's view of the API).
async function eventually(fn, what, ms = WAIT) {
  const end = Date.now() + ms;
  for (;;) {
    let v;
    try { v = fn(); } catch { v = false; }
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// The NVML double's one GPU (run.sh): rewritten whole, atomically (the
// double reads its file at every call).
function gpuReads(util, usedMiB) {
  writeFileSync(`${NVML_DOUBLE_CONFIG}.tmp`, `gpu 0 uuid=GPU-console-0 util=${util} total_mib=81920 used_mib=${usedMiB}\n`);
  renameSync(`${NVML_DOUBLE_CONFIG}.tmp`, NVML_DOUBLE_CONFIG);
}

function trainyard(args) {
  return execFileSync(TRAINYARD, args, { encoding: 'utf8' });
}

const go = join(E2E_TMP, 'go');
function pytorchJob(name, ns, marker) {
  return JSON.stringify({
    apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob', metadata: { name, namespace: ns },
    spec: {
      pytorchReplicaSpecs: {
        Master: {
          replicas: 1, restartPolicy: 'Never',
          template: { spec: { containers: [{
            name: 'pytorch', image: 'busybox',
            command: ['sh', '-c', `echo started; until [ -e ${go} ]; do sleep 0.2; done; echo ${marker}; sleep 600`],
          }] } },
        },
      },
    },
  });
}

const browser = await chromium.launch({
  executablePath: CHROMIUM, headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const consoleErrors = [];
async function newPage() {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await ctx.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  return page;
}

try {
  const page = await newPage();
  current = page;

  await check('signs in with #token= and removes it from the address bar', async () => {
    await page.goto(`${SERVER}/ui/#token=${encodeURIComponent(E2E_TOKEN)}`);
    await page.locator('#jobs-table').waitFor();
    assert(!page.url().includes('token'), `the token is still in the URL: ${page.url()}`);
    const stored = await page.evaluate(() => sessionStorage.getItem('trainyard.token'));
    assert(stored === E2E_TOKEN, 'the token is not in session storage');
    const back = await page.evaluate(() => history.length);
    assert(back >= 1, 'history');
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor();
  });

  await check('a PyTorchJob created after the page opened appears without a reload', async () => {
    await page.locator('.count').waitFor();
    kubectl(['apply', '-f', '-'], pytorchJob('console-a', 'default', 'LOG-AFTER-OPEN'));
    const row = page.locator('#jobs-table tr[data-name="console-a"]');
    await row.waitFor();
    await page.locator('#jobs-table tr[data-name="console-a"] td', { hasText: 'PyTorchJob' }).waitFor();
    await page.locator('#jobs-table tr[data-name="console-a"] td', { hasText: 'default' }).first().waitFor();
  });

  await check('every kind in one list: a Volcano Job (watched) and an XGBoostJob (followed through Events)', async () => {
    const cmd = ['sh', '-c', 'echo up; sleep 600'];
    kubectl(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'batch.volcano.sh/v1alpha1', kind: 'Job', metadata: { name: 'console-vc', namespace: 'default' },
      spec: { schedulerName: 'volcano', minAvailable: 1, tasks: [{ name: 'w', replicas: 1, template: { spec: {
        restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: cmd }] } } }] },
    }));
    kubectl(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'kubeflow.org/v1', kind: 'XGBoostJob', metadata: { name: 'console-xgb', namespace: 'default' },
      spec: { xgbReplicaSpecs: { Master: { replicas: 1, restartPolicy: 'Never', template: { spec: {
        containers: [{ name: 'xgboost', image: 'busybox', command: cmd }] } } } } },
    }));
    await page.locator('#jobs-table tr[data-name="console-vc"] td', { hasText: 'Volcano Job' }).waitFor();
    await page.locator('#jobs-table tr[data-name="console-xgb"] td', { hasText: 'XGBoostJob' }).waitFor();
    const watched = await page.locator('#jobs-table').getAttribute('data-watched');
    assert(!watched.split(' ').includes('xgboostjob'), `xgboostjob has a watch of its own: ${watched}`);
    // and its status moves on without a reload
    await page.locator('#jobs-table tr[data-name="console-xgb"] .status', { hasText: 'Running' }).waitFor();
    await shot(page, 'jobs');
  });

  await check('filters: a kind that is not the job\'s hides it, search finds it', async () => {
    await page.selectOption('#f-kind', 'vcjob');
    await page.locator('#jobs-table tr[data-name="console-a"]').waitFor({ state: 'hidden' });
    await page.selectOption('#f-kind', '');
    await page.fill('#f-search', 'console-');
    await page.locator('#jobs-table tr[data-name="console-a"]').waitFor({ state: 'visible' });
    assert(page.url().includes('q=console-'), `the search is not in the URL: ${page.url()}`);
    await page.fill('#f-search', '');
  });

  await check('the job page shows its replicas and streams a log line printed after it opened', async () => {
    await page.click('#jobs-table tr[data-name="console-a"] a');
    await page.waitForURL(/#\/jobs\/pytorchjob\/default\/console-a$/);
    await page.locator('#replicas tr[data-pod="console-a-master-0"]').waitFor();
    await page.locator('#replicas tr[data-pod="console-a-master-0"] td.phase', { hasText: 'Running' }).waitFor();
    await page.locator('#log', { hasText: 'started' }).waitFor();
    assert(!(await page.locator('#log').textContent()).includes('LOG-AFTER-OPEN'), 'the marker came early');
    writeFileSync(go, '');
    await page.locator('#log', { hasText: 'LOG-AFTER-OPEN' }).waitFor();
    await page.locator('#conditions tr', { hasText: 'Running' }).first().waitFor();
    await page.locator('#manifest', { hasText: 'kind: PyTorchJob' }).waitFor();
    await page.locator('#gpus', { hasText: 'This job asks for no GPUs.' }).waitFor();
    assert(await page.locator('#gpus svg').count() === 0, 'a chart for a job without GPUs');
    await shot(page, 'job');
  });

  await check('suspend from the page sets spec.runPolicy.suspend; resume clears it', async () => {
    await page.click('#suspend');
    await page.locator('dialog #confirm-yes').waitFor();
    await shot(page, 'confirm');
    await page.click('#confirm-yes');
    await eventually(() => kubectl(['get', 'pytorchjob', 'console-a', '-n', 'default', '-o',
      'jsonpath={.spec.runPolicy.suspend}']).trim() === 'true', 'spec.runPolicy.suspend=true');
    await page.locator('#resume').waitFor();
    await page.click('#resume');
    await page.click('#confirm-yes');
    await eventually(() => kubectl(['get', 'pytorchjob', 'console-a', '-n', 'default', '-o',
      'jsonpath={.spec.runPolicy.suspend}']).trim() === 'false', 'spec.runPolicy.suspend=false');
  });

  await check('suspend on a Volcano Job aborts it (the action annotation)', async () => {
    await page.goto(`${SERVER}/ui/#/jobs/vcjob/default/console-vc`);
    await page.locator('#replicas tr[data-pod]').first().waitFor();
    const aborted = () => /^Abort/.test(kubectl(['get', 'jobs.batch.volcano.sh', 'console-vc', '-n', 'default', '-o',
      'jsonpath={.status.state.phase}']).trim());
    // The patch's answer is held back until the job has aborted, so that it
    // reaches the page after the watch's newer events (as it sometimes does
    // by itself): the page must keep the newer state.
    const held = '**/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/console-vc';
    await page.route(held, async (route) => {
      if (route.request().method() !== 'PATCH') return route.continue();
      const answer = await route.fetch({ timeout: 180000 });
      await eventually(aborted, 'the Volcano Job aborted');
      await page.locator('#job-status', { hasText: 'Abort' }).waitFor();
      return route.fulfill({ response: answer });
    });
    try {
      const answered = page.waitForResponse((r) => r.request().method() === 'PATCH', { timeout: 180000 });
      await page.click('#suspend');
      await page.click('#confirm-yes');
      await eventually(aborted, 'the Volcano Job aborted');
      await page.locator('#job-status', { hasText: 'Abort' }).waitFor();
      await answered;
      await page.locator('#manifest').waitFor();
      const manifest = await page.locator('#manifest').textContent();
      assert(!manifest.includes('trainyard.io/action'), 'the patch\'s older answer replaced the newer state');
      assert(/Abort/.test(await page.locator('#job-status').textContent()), 'the status went back');
    } finally {
      await page.unroute(held);
      await page.goBack(); // (a failure here leaves the next checks where they expect)
    }
  });

  await check('the back button returns to the list', async () => {
    await page.goBack();
    await page.locator('#jobs-table tr[data-name="console-a"]').waitFor();
  });

  await check('the queues and nodes pages list what the API has', async () => {
    await page.click('#nav a[data-route="queues"]');
    await page.locator('main table tr[data-name="default"]').waitFor();
    await page.click('#nav a[data-route="nodes"]');
    await page.locator('main table tr[data-name]').first().waitFor();
    await page.goBack();
    await page.goBack();
    await page.locator('#jobs-table').waitFor();
  });

  await check('a TrainJob (followed through Events): its row, its page with its pod, log and live progress; suspend, resume, delete', async () => {
    await page.goto(`${SERVER}/ui/#/jobs`);
    await page.locator('#jobs-table[data-watched]').waitFor({ state: 'attached' });
    // (PyTorchJob and Volcano's Job have the most jobs here: TrainJobs
    // follow Events, the harder way to stay live)
    const watched = await page.locator('#jobs-table').getAttribute('data-watched');
    assert(!watched.split(' ').includes('trainjob'), `trainjob has a watch of its own: ${watched}`);
    await page.waitForFunction(() => (window.trainyardInformers?.() || [])
      .some((s) => s.path === '/api/v1/events' && s.phase === 'watching'));
    const tj = (name, trainer, extra = {}) => JSON.stringify({
      apiVersion: 'trainer.kubeflow.org/v1alpha1', kind: 'TrainJob', metadata: { name, namespace: 'default' },
      spec: { runtimeRef: { name: 'torch-distributed' }, trainer, ...extra },
    });
    kubectl(['apply', '-f', '-'], tj('console-tj', { numNodes: 1, command: ['/bin/sh', '-c',
      'i=0; while [ $i -lt 600 ]; do echo "step $i"; i=$((i+1)); sleep 1; done'] }));
    // GPUs requested: resourcesPerNode x numNodes (suspended: no pods)
    kubectl(['apply', '-f', '-'], tj('console-tj-gpu', { numNodes: 2, command: ['true'],
      resourcesPerNode: { limits: { 'nvidia.com/gpu': 2 } } }, { suspend: true }));
    const row = (name) => page.locator(`#jobs-table tr[data-name="${name}"]`);
    await row('console-tj').locator('td', { hasText: 'TrainJob' }).waitFor();
    await row('console-tj').locator('td', { hasText: /^default$/ }).first().waitFor();
    await row('console-tj-gpu').locator('.status', { hasText: 'Suspended' }).waitFor();
    const gpuCells = await row('console-tj-gpu').locator('td.num').allTextContents();
    assert(gpuCells[0] === '4', `console-tj-gpu requests ${gpuCells[0]} GPUs, not 2 x 2`);
    const cellTexts = await row('console-tj').locator('td').allTextContents();
    assert(cellTexts[4] === 'default', `queue ${cellTexts[4]}`);
    assert(cellTexts[5] && cellTexts[5] !== '—', `no user: ${cellTexts[5]}`);
    // Running (every node pod runs) without a reload
    await row('console-tj').locator('.status', { hasText: 'Running' }).waitFor();
    kubectl(['delete', 'trainjob', 'console-tj-gpu', '-n', 'default', '--wait=false']);

    await page.click('#jobs-table tr[data-name="console-tj"] a');
    await page.waitForURL(/#\/jobs\/trainjob\/default\/console-tj$/);
    const pod = page.locator('#replicas tr[data-pod="console-tj-node-0-0"]');
    await pod.locator('td', { hasText: /^node$/ }).waitFor();
    await pod.locator('td.phase', { hasText: 'Running' }).waitFor();
    await page.locator('#job-status', { hasText: 'Running' }).waitFor();
    await page.locator('#job-runtime', { hasText: 'torch-distributed' }).waitFor();
    await page.locator('#log', { hasText: /step \d+/ }).waitFor();
    await page.locator('#manifest', { hasText: 'kind: TrainJob' }).waitFor();
    await page.locator('#progress-none').waitFor();
    // the training script's report, written as the admin (the status
    // subresource), shows without a reload; and the next one too
    const report = (pct, eta, loss) => kubectl(['patch', 'trainjob', 'console-tj', '-n', 'default',
      '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { trainerStatus: {
        progressPercentage: pct, estimatedRemainingSeconds: eta,
        metrics: [{ name: 'loss', value: loss }, { name: 'accuracy', value: '0.91' }],
        lastUpdatedTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } } })]);
    report(45, 600, '0.2347');
    await page.locator('#progress-pct', { hasText: '45%' }).waitFor();
    assert(await page.locator('#progress-bar').evaluate((b) => b.value) === 45, 'the bar is not at 45');
    await page.locator('#progress-eta', { hasText: 'About 10m left' }).waitFor();
    await page.locator('#progress-metrics tr[data-metric="loss"] td', { hasText: '0.2347' }).waitFor();
    await page.locator('#progress-metrics tr[data-metric="accuracy"] td', { hasText: '0.91' }).waitFor();
    await shot(page, 'trainjob');
    report(70, 3725, '0.1802');
    await page.locator('#progress-pct', { hasText: '70%' }).waitFor();
    await page.locator('#progress-eta', { hasText: 'About 1h2m left' }).waitFor();
    await page.locator('#progress-metrics tr[data-metric="loss"] td', { hasText: '0.1802' }).waitFor();

    const suspended = () => kubectl(['get', 'trainjob', 'console-tj', '-n', 'default', '-o',
      'jsonpath={.spec.suspend}']).trim();
    await page.click('#suspend');
    await page.click('#confirm-yes');
    await eventually(() => suspended() === 'true', 'spec.suspend=true');
    await page.locator('#job-status', { hasText: 'Suspended' }).waitFor();
    await page.locator('#resume').waitFor();
    await page.locator('#replicas', { hasText: 'No pods yet.' }).waitFor();
    await page.locator('#conditions tr', { hasText: 'Suspended' }).first().waitFor();
    await page.click('#resume');
    await page.click('#confirm-yes');
    await eventually(() => suspended() === 'false', 'spec.suspend=false');
    await pod.locator('td.phase', { hasText: 'Running' }).waitFor();
    await page.locator('#job-status', { hasText: 'Running' }).waitFor();

    await page.click('#delete');
    await page.click('#confirm-yes');
    await page.waitForURL(/#\/jobs$/);
    await eventually(() => !kubectl(['get', 'trainjobs', '-n', 'default', '-o', 'name']).includes('console-tj'),
      'console-tj deleted');
    await row('console-tj').waitFor({ state: 'detached' });
  });

  await check('a bad manifest in the editor shows its field paths; a good one is created', async () => {
    await page.click('#nav a[data-route="submit"]');
    await page.locator('#manifest-text').fill([
      'apiVersion: kubeflow.org/v1', 'kind: PyTorchJob', 'metadata:', '  name: from-editor', 'spec:',
      '  pytorchReplicaSpecs:', '    Master:', '      replicas: -1', '      template:', '        spec:',
      '          containers: []', ''].join('\n'));
    await page.click('#validate');
    await page.locator('#causes li[data-field="spec.pytorchReplicaSpecs.Master.replicas"]', { hasText: 'line 8' }).first().waitFor();
    await shot(page, 'submit');
    await page.locator('#manifest-text').fill(pytorchJob('from-editor', 'default', 'X'));
    await page.click('#submit');
    await page.locator('#submit-result a', { hasText: 'Open its page' }).waitFor();
    await eventually(() => kubectl(['get', 'pytorchjobs', '-n', 'default', '-o', 'name']).includes('from-editor'),
      'from-editor created');
    await page.goBack();
    await page.locator('#jobs-table').waitFor();
  });

  await check('the submit form builds what `trainyard submit --dry-run` prints; its usage errors are the CLI\'s', async () => {
    await page.goto(`${SERVER}/ui/#/submit`);
    await page.locator('#submit-form').waitFor();
    await page.selectOption('#sf-kind', 'tf');
    await page.fill('#sf-name', 'form-tf');
    await page.check('#sf-chief');
    await page.fill('#sf-ps', '1');
    await page.fill('#sf-workers', '2');
    await page.fill('#sf-gpus', '1');
    await page.fill('#sf-cpu', '2');
    await page.fill('#sf-memory', '4Gi');
    await page.fill('#sf-queue', 'default');
    await page.fill('#sf-env', 'A=1\nB=x=y');
    await page.fill('#sf-labels', 'team=ml');
    await page.fill('#sf-retry', '2');
    await page.fill('#sf-ttl', '1h30m');
    await page.fill('#sf-command', 'python train.py --epochs 3');
    await page.click('#sf-build');
    await page.locator('#sf-result .ok').waitFor();
    const cli = JSON.parse(trainyard(['submit', 'tf', '--name', 'form-tf', '--chief', '--ps', '1', '--workers', '2',
      '--gpus', '1', '--cpu', '2', '--memory', '4Gi', '--queue', 'default', '-e', 'A=1', '-e', 'B=x=y', '-l', 'team=ml',
      '--retry', '2', '--ttl-after-finished', '1h30m', '--dry-run', '-o', 'json', 'python train.py --epochs 3']));
    // the same object, fields in the same order: the same YAML
    const want = await page.evaluate(async (m) => (await import('./yaml.js')).toYaml(m), cli);
    const got = await page.locator('#manifest-text').inputValue();
    assert(got === want, `the form's manifest differs from the CLI's:\n--- form\n${got}\n--- cli\n${want}`);
    await shot(page, 'submit-form');
    await page.click('#validate');
    await page.locator('#submit-result .ok', { hasText: 'Valid' }).waitFor();
    // a flag the kind does not take is hidden; a usage error reads as the CLI's
    await page.selectOption('#sf-kind', 'pytorch');
    assert(await page.locator('#sf-ps').isHidden(), '--ps shown for pytorch');
    await page.fill('#sf-workers', '0');
    await page.click('#sf-build');
    let cliErr = '';
    try {
      trainyard(['submit', 'pytorch', '--name', 'form-tf', '--workers', '0', '--dry-run', 'python train.py']);
    } catch (e) { cliErr = String(e.stderr).split('\n')[0].replace(/^error: /, ''); }
    assert(cliErr, 'the CLI took --workers 0');
    await page.locator('#sf-result .error', { hasText: cliErr }).waitFor();
  });

  await check('a GPU job: GPUs allocated in the list, a chart per replica from its readings, the node\'s GPUs and health', async () => {
    gpuReads(40, 20480);
    const job = JSON.parse(pytorchJob('gpu-job', 'default', 'X'));
    job.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': 1 } };
    kubectl(['apply', '-f', '-'], JSON.stringify(job));
    await page.goto(`${SERVER}/ui/#/jobs`);
    await page.locator('#jobs-table tr[data-name="gpu-job"] td.alloc', { hasText: /^1$/ }).waitFor();
    await page.click('#jobs-table tr[data-name="gpu-job"] a');
    const fig = page.locator('#gpus figure[data-pod="gpu-job-master-0"]');
    await fig.locator('figcaption', { hasText: 'utilisation 40%' }).waitFor();
    await fig.locator('figcaption', { hasText: 'memory 20.0 GiB of 80.0 GiB' }).waitFor();
    gpuReads(75, 40960);
    await fig.locator('figcaption', { hasText: 'utilisation 75%' }).waitFor();
    const points = Number(await fig.getAttribute('data-points'));
    assert(points >= 2, `${points} points after two readings`);
    assert(await fig.locator('svg polyline.util').count() === 1, 'no utilisation line');
    await shot(page, 'gpus');
    await page.click('#nav a[data-route="nodes"]');
    const node = page.locator('#nodes tr[data-name="console-node"]');
    await node.locator('td.gpu-alloc', { hasText: /^1$/ }).waitFor();
    await node.locator('td.gpu-use', { hasText: '75%' }).waitFor();
    await node.locator('td.health', { hasText: 'Ready' }).waitFor();
    kubectl(['taint', 'node', 'console-node', 'console-test=yes:PreferNoSchedule']);
    kubectl(['cordon', 'console-node']);
    try {
      await node.locator('td.health', { hasText: 'Unschedulable' }).waitFor();
      await node.locator('td.health', { hasText: 'taint console-test=yes:PreferNoSchedule' }).waitFor();
      await shot(page, 'nodes');
    } finally {
      kubectl(['uncordon', 'console-node']);
      kubectl(['taint', 'node', 'console-node', 'console-test-']);
    }
    await node.locator('td.health', { hasText: 'taint' }).waitFor({ state: 'detached' });
  });

  await check('a pending job shows why, with numbers, and its place in the queue', async () => {
    // two GPUs each on a node that has one: both wait in queue default
    for (const name of ['pend-a', 'pend-b']) {
      const job = JSON.parse(pytorchJob(name, 'default', 'X'));
      job.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': 2 } };
      kubectl(['apply', '-f', '-'], JSON.stringify(job));
      await eventually(() => kubectl(['get', 'podgroups', '-n', 'default', '-o', 'name']).includes(name), `${name}'s pod group`);
    }
    const place = {};
    for (const name of ['pend-a', 'pend-b']) {
      await page.goto(`${SERVER}/ui/#/jobs/pytorchjob/default/${name}`);
      await page.locator('#why-pending', { hasText: /\S/ }).waitFor();
      await page.locator('#queue-position', { hasText: /waiting in queue default/ }).waitFor();
      const text = await page.locator('#queue-position').textContent();
      place[name] = Number.parseInt(text, 10);
      assert(place[name] >= 1, `no position: ${text}`);
    }
    assert(place['pend-a'] < place['pend-b'], `pend-a ${place['pend-a']}, pend-b ${place['pend-b']}`);
    await page.locator('#scheduling', { hasText: 'nvidia.com/gpu=2' }).waitFor();
    await shot(page, 'pending');
  });

  await check('the queues page lists each queue\'s waiting jobs in `trainyard queue get`\'s order', async () => {
    await page.goto(`${SERVER}/ui/#/queues`);
    const cliOrder = () => {
      const out = trainyard(['queue', 'get', 'default']);
      const waiting = out.slice(out.indexOf('Waiting'));
      return [...waiting.matchAll(/^ +\d+ +(\S+) +(\S+) /gm)].map((m) => `${m[1]}/${m[2]}`);
    };
    const pageOrder = () => page.locator('#waiting ol[data-queue="default"] li').evaluateAll((lis) => lis.map((li) => li.dataset.pg));
    await page.locator('#waiting ol[data-queue="default"] li', { hasText: 'PyTorchJob/pend-b' }).waitFor();
    const end = Date.now() + WAIT;
    let cli; let shown;
    for (;;) { // (both read a moving cluster: the same answer twice in a row)
      cli = cliOrder();
      shown = await pageOrder();
      if (cli.join() === shown.join() && cli.length >= 2) break;
      if (Date.now() > end) throw new Error(`page ${shown.join(' ')}; CLI ${cli.join(' ')}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const text = await page.locator('#waiting ol[data-queue="default"]').textContent();
    assert(text.indexOf('pend-a') < text.indexOf('pend-b'), 'pend-b listed before pend-a');
    await page.locator('#queues tr[data-name="default"]').waitFor();
    await shot(page, 'queues');
    await page.click('#waiting li a >> text=PyTorchJob/pend-a');
    await page.waitForURL(/#\/jobs\/pytorchjob\/default\/pend-a$/);
  });

  await check('the jobs list: GPUs requested and allocated of a pending job', async () => {
    await page.goto(`${SERVER}/ui/#/jobs?q=pend-a`);
    await page.locator('#jobs-table tr[data-name="pend-a"] td.alloc', { hasText: /^0$/ }).waitFor();
    const cells = await page.locator('#jobs-table tr[data-name="pend-a"] td.num').allTextContents();
    assert(cells[0] === '2', `requested ${cells[0]}`);
  });

  await check('the keyboard reaches rows off screen: arrows, Page Down, Home/End, Enter opens the job', async () => {
    const items = [];
    for (let i = 0; i < 120; i++) {
      const j = JSON.parse(pytorchJob(`kb-${String(i).padStart(3, '0')}`, 'default', 'X'));
      j.metadata.labels = { 'console-kb': '1' };
      j.spec.runPolicy = { suspend: true }; // no pods: only rows
      items.push(j);
    }
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    await page.setViewportSize({ width: 1200, height: 500 });
    try {
      await page.goto(`${SERVER}/ui/#/jobs?q=kb-&sort=name&order=asc`);
      await page.locator('.count', { hasText: /^120 of/ }).waitFor();
      assert(await page.locator('#jobs-table tr[data-name="kb-119"]').count() === 0, 'the last row is drawn: nothing to reach');
      const focusedRow = () => page.evaluate(() => document.activeElement?.closest('tr')?.dataset.name || '');
      await page.locator('#jobs-table tr[data-name="kb-000"] a').focus();
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction(() => document.activeElement?.closest('tr')?.dataset.name === 'kb-001');
      await page.keyboard.press('End');
      await page.waitForFunction(() => document.activeElement?.closest('tr')?.dataset.name === 'kb-119');
      const box = await page.locator('#jobs-table tr[data-name="kb-119"]').boundingBox();
      assert(box && box.y >= 0 && box.y + box.height <= 500 + 1, `the last row is off screen: ${JSON.stringify(box)}`);
      await page.keyboard.press('Home');
      await page.waitForFunction(() => document.activeElement?.closest('tr')?.dataset.name === 'kb-000');
      await page.keyboard.press('PageDown');
      await page.waitForFunction(() => /^kb-0(0[2-9]|[1-9]\d)$/.test(document.activeElement?.closest('tr')?.dataset.name || ''));
      const at = await focusedRow();
      await page.keyboard.press('PageDown');
      await page.keyboard.press('PageDown');
      await page.keyboard.press('PageDown');
      await page.waitForFunction((was) => (document.activeElement?.closest('tr')?.dataset.name || '') > was, at);
      const far = await focusedRow();
      await page.keyboard.press('Enter');
      await page.waitForURL(new RegExp(`#/jobs/pytorchjob/default/${far}$`));
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
      kubectl(['delete', 'pytorchjobs', '-n', 'default', '-l', 'console-kb=1', '--wait=false']);
    }
  });

  await check('a user without rights to a namespace does not see its jobs', async () => {
    kubectl(['apply', '-f', '-'], pytorchJob('bobs-job', 'bob', 'BOB'));
    const bob = await newPage();
    await bob.goto(`${SERVER}/ui/#token=${encodeURIComponent(BOB_TOKEN)}`);
    await bob.locator('#jobs-table tr[data-name="bobs-job"]').waitFor();
    await bob.locator('#scope-note', { hasText: 'bob' }).waitFor();
    assert(await bob.locator('#jobs-table tr[data-name="console-a"]').count() === 0,
      'bob sees console-a in namespace default');
    // a deep link to a job he may not read says so
    await bob.goto(`${SERVER}/ui/#/jobs/pytorchjob/default/console-a`);
    await bob.locator('.error').first().waitFor();
    assert(await bob.locator('#replicas tr[data-pod]').count() === 0, 'bob sees the pods of console-a');
    await bob.context().close();
  });

  await check('a user whose namespace is not named after her finds it (her group\'s, asked with SelfSubjectAccessReview)', async () => {
    kubectl(['apply', '-f', '-'], pytorchJob('carols-job', 'ml-team', 'CAROL'));
    const carol = await newPage();
    await carol.goto(`${SERVER}/ui/#token=${encodeURIComponent(CAROL_TOKEN)}`);
    await carol.locator('#jobs-table tr[data-name="carols-job"]').waitFor();
    await carol.locator('#scope-note', { hasText: 'ml-team' }).waitFor();
    assert(await carol.locator('#jobs-table tr[data-name="bobs-job"]').count() === 0, 'carol sees bob\'s job');
    await carol.context().close();
  });

  await check('a #token= link does not replace a signed-in token unasked (login CSRF)', async () => {
    await page.goto(`${SERVER}/ui/#/jobs`);
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor();
    const who = await page.locator('#who').textContent();
    await page.goto(`${SERVER}/ui/#token=${encodeURIComponent(BOB_TOKEN)}`);
    await page.locator('dialog #confirm-text', { hasText: 'bob' }).waitFor();
    assert(!page.url().includes('token'), `the token is still in the URL: ${page.url()}`);
    assert(await page.evaluate(() => sessionStorage.getItem('trainyard.token')) === E2E_TOKEN, 'replaced before the answer');
    await page.click('#confirm-no');
    await page.locator('dialog').waitFor({ state: 'detached' });
    assert(await page.evaluate(() => sessionStorage.getItem('trainyard.token')) === E2E_TOKEN, 'replaced after a no');
    assert(await page.locator('#who').textContent() === who, 'the user shown changed');
    // asked and accepted: the tab is bob's
    await page.goto(`${SERVER}/ui/#token=${encodeURIComponent(BOB_TOKEN)}`);
    await page.locator('dialog #confirm-text').waitFor();
    await page.locator('#jobs-table tr[data-name="gpu-job"] td.alloc', { hasText: /^1$/ }).waitFor();
    await shot(page, 'token-handover');
    await page.click('#confirm-yes');
    await page.locator('#who', { hasText: 'bob' }).waitFor();
    assert(await page.evaluate(() => sessionStorage.getItem('trainyard.token')) === BOB_TOKEN, 'not replaced after a yes');
    await page.evaluate((t) => sessionStorage.setItem('trainyard.token', t), E2E_TOKEN);
    await page.evaluate(() => { document.getElementById('who').textContent = ''; });
    await page.goto(`${SERVER}/ui/#/jobs?x=1`);
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor();
  });

  await check('delete from the page removes the job', async () => {
    await page.goto(`${SERVER}/ui/#/jobs/pytorchjob/default/console-a`);
    await page.locator('#delete').waitFor();
    await page.click('#delete');
    await page.click('#confirm-yes');
    await page.waitForURL(/#\/jobs$/);
    await eventually(() => !kubectl(['get', 'pytorchjobs', '-n', 'default', '-o', 'name']).includes('console-a'),
      'console-a deleted');
    await page.locator('#jobs-table tr[data-name="console-a"]').waitFor({ state: 'detached' });
  });

  await check('sign out clears the token; a refused token sends back to sign-in', async () => {
    await page.click('#signout');
    await page.locator('form.signin').waitFor();
    await shot(page, 'signin');
    assert(await page.evaluate(() => sessionStorage.getItem('trainyard.token')) === null, 'token kept');
    await page.goto(`${SERVER}/ui/#token=not-a-token`);
    await page.locator('form.signin').waitFor();
    await page.locator('form.signin .error').waitFor();
    await page.fill('#token', E2E_TOKEN);
    await page.click('form.signin button[type=submit]');
    await page.locator('#jobs-table').waitFor();
  });

  await check('no errors in the browser console (CSP violations included)', async () => {
    // the answers the tests asked for (a refused token's 401, bob's 403s)
    // are logged as failed loads, as are a busy server's 429 and 503 (the
    // console tries again); anything else (a CSP refusal, a script error)
    // is a failure
    const other = consoleErrors.filter((t) => !/^Failed to load resource: the server responded with a status of (401|403|404|422|429|503)/.test(t));
    assert(other.length === 0, other.join('\n'));
  });
} finally {
  await browser.close();
}
console.log(`# ${checks} checks, ${failures} failed`);
process.exit(failures ? 1 : 0);
