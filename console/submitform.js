// submitform.js - `trainyard submit KIND`'s fields as a form, building the
// same manifest as the CLI (src/cli/submit_build.c): the same kinds and
// layouts, defaults, checks and error wording, and the same fields in the
// same order, so that the YAML the form writes into the editor is the one
// `trainyard submit ... --dry-run` prints (tests/browser compares the two).
// A change to submit_build.c needs the same change here.
import { clear, el, errorBox } from './util.js';

// name, apiVersion, kind, replica field (null: a Volcano Job's tasks),
// container name, default image, flags
const PS = 0x1;
const CHIEF = 0x2;
const LAUNCHER = 0x4;
const NPROC = 0x8;
const RUNPOLICY = 0x10;
export const SUBMIT_KINDS = [
  ['pytorch', 'kubeflow.org/v1', 'PyTorchJob', 'pytorchReplicaSpecs', 'pytorch', 'docker.io/pytorch/pytorch:latest', NPROC | RUNPOLICY],
  ['tf', 'kubeflow.org/v1', 'TFJob', 'tfReplicaSpecs', 'tensorflow', 'docker.io/tensorflow/tensorflow:latest', PS | CHIEF | RUNPOLICY],
  ['mpi', 'kubeflow.org/v2beta1', 'MPIJob', 'mpiReplicaSpecs', 'mpi', 'docker.io/mpioperator/openmpi:latest', LAUNCHER | RUNPOLICY],
  ['xgboost', 'kubeflow.org/v1', 'XGBoostJob', 'xgbReplicaSpecs', 'xgboost', 'docker.io/kubeflow/xgboost-dist-iris:latest', RUNPOLICY],
  ['paddle', 'kubeflow.org/v1', 'PaddleJob', 'paddleReplicaSpecs', 'paddle', 'docker.io/paddlepaddle/paddle:latest', RUNPOLICY],
  ['jax', 'kubeflow.org/v1', 'JAXJob', 'jaxReplicaSpecs', 'jax', 'docker.io/kubeflow/jaxjob-simple:latest', RUNPOLICY],
  ['mx', 'kubeflow.org/v1', 'MXJob', 'mxReplicaSpecs', 'mxnet', 'docker.io/kubeflow/mxnet-gpu:latest', PS | RUNPOLICY],
  ['ms', 'mindspore.gitee.com/v1', 'MSJob', 'msReplicaSpecs', 'mindspore', 'docker.io/mindspore/mindspore:latest', PS | RUNPOLICY],
  ['volcano', 'batch.volcano.sh/v1alpha1', 'Job', null, 'main', 'docker.io/library/busybox:latest', PS],
].map(([name, apiVersion, kind, field, container, image, flags]) => ({ name, apiVersion, kind, field, container, image, flags }));

const MAX_REPLICAS = 10000;
const MAX_GPUS = 1024;

// Which field each kind takes (the form hides the others), by flag bit.
export const FIELD_FLAGS = {
  ps: PS, chief: CHIEF, evaluator: CHIEF, slots: LAUNCHER, launcherCpu: LAUNCHER, launcherMemory: LAUNCHER,
  nprocPerNode: NPROC, runningTimeout: RUNPOLICY, cleanPolicy: RUNPOLICY,
};
const FLAG_NAMES = {
  ps: ['--ps', 'tf, mx, ms and volcano'], chief: ['--chief', 'tf'], evaluator: ['--evaluator', 'tf'],
  slots: ['--slots', 'mpi'], launcherCpu: ['--launcher-cpu', 'mpi'], launcherMemory: ['--launcher-memory', 'mpi'],
  nprocPerNode: ['--nproc-per-node', 'pytorch'], runningTimeout: ['--running-timeout', 'the Kubeflow kinds'],
  cleanPolicy: ['--clean-task-policy', 'the Kubeflow kinds'],
};

class UsageError extends Error {}
const fail = (msg) => { throw new UsageError(msg); };

// A Kubernetes quantity (2, 500m, 4Gi, 1e3), more than zero.
const QUANTITY = /^\+?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;
function checkQuantity(v, flag) {
  if (v === undefined) return;
  const m = v.match(QUANTITY);
  if (!m || Number.parseFloat(m[1]) <= 0)
    fail(`${flag} "${v}" is not a quantity: use a number with an optional unit, like 2, 500m, 4Gi`);
}

// Whole seconds of "90" or a Go duration ("1h30m", "1.5h"); null when neither.
const UNIT_MS = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
export function parseSeconds(s) {
  if (!s) return null;
  if (/^\d+$/.test(s)) return Number(s);
  if (!/^\+?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/.test(s) && s !== '0') return null;
  let ms = 0;
  for (const [, n, , u] of s.matchAll(/(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * UNIT_MS[u];
  return Math.floor(ms / 1000);
}

function splitKv(s, flag) {
  const eq = s.indexOf('=');
  if (eq <= 0) fail(`${flag} "${s}": expected KEY=VALUE`);
  return [s.slice(0, eq), s.slice(eq + 1)];
}

// The replica types of o's kind (submit_build.c's layout()).
function layout(o, k) {
  const w = o.workers < 0 ? 1 : o.workers;
  const ps = o.ps;
  const r = [];
  const add = (type, count, gpus, command, launcher = false) => { if (count > 0) r.push({ type, count, gpus, command, launcher }); };
  if (k.name === 'pytorch' || k.name === 'xgboost') {
    if (w < 1) fail('--workers must be at least 1 (it counts the Master): use --workers 1 for a single process');
    add('Master', 1, true, true);
    add('Worker', w - 1, true, true);
  } else if (k.name === 'tf') {
    if (w === 0 && !o.chief) fail('--workers must be greater than 0 in distributed training (or add --chief)');
    add('Chief', o.chief ? 1 : 0, true, true);
    add('PS', ps, false, true);
    add('Worker', w, true, true);
    add('Evaluator', o.evaluator ? 1 : 0, true, true);
  } else if (k.name === 'mpi') {
    if (w < 1) fail('--workers must be at least 1: mpirun on the launcher starts its ranks in the workers');
    add('Launcher', 1, false, true, true);
    add('Worker', w, true, false);
  } else if (k.name === 'mx') {
    if (w < 1) fail('--workers must be at least 1');
    add('Scheduler', 1, false, true);
    add('Server', ps < 0 ? 1 : ps, false, true);
    add('Worker', w, true, true);
  } else if (k.name === 'ms') {
    if (w < 1) fail('--workers must be at least 1');
    add('Scheduler', 1, false, true);
    add('PS', ps, false, true);
    add('Worker', w, true, true);
  } else if (k.name === 'volcano') {
    if (w < 1) fail('--workers must be at least 1');
    add('ps', ps, false, true);
    add('worker', w, true, true);
  } else {
    if (w < 1) fail('--workers must be at least 1');
    add('Worker', w, true, true);
  }
  return r;
}

function given(o, f) {
  return f === 'chief' || f === 'evaluator' ? !!o[f] : f === 'ps' || f === 'slots' ? o[f] >= 0 : f === 'runningTimeout' ? o[f] > 0 : o[f] !== undefined;
}

function checkOpts(o, k) {
  if (!o.name) fail('--name is required: name the job, e.g. --name mnist');
  if (o.workers > MAX_REPLICAS || o.ps > MAX_REPLICAS)
    fail(`${o.workers > MAX_REPLICAS ? '--workers' : '--ps'} must be at most ${MAX_REPLICAS}`);
  if (o.gpus > MAX_GPUS) fail(`--gpus must be at most ${MAX_GPUS} (it is per replica)`);
  if (o.slots === 0 || o.slots > MAX_GPUS) fail(`--slots must be between 1 and ${MAX_GPUS}`);
  for (const f of ['ps', 'chief', 'evaluator', 'slots', 'launcherCpu', 'launcherMemory', 'nprocPerNode', 'runningTimeout', 'cleanPolicy'])
    if (given(o, f) && !(k.flags & FIELD_FLAGS[f]))
      fail(`${FLAG_NAMES[f][0]} is not a flag of \`submit ${k.name}\`: only ${FLAG_NAMES[f][1]} take it`);
  checkQuantity(o.cpu, '--cpu');
  checkQuantity(o.memory, '--memory');
  checkQuantity(o.launcherCpu, '--launcher-cpu');
  checkQuantity(o.launcherMemory, '--launcher-memory');
  const n = o.nprocPerNode;
  if (n !== undefined && !['auto', 'cpu', 'gpu'].includes(n) && !(/^\d+$/.test(n) && Number(n) >= 1 && Number(n) <= MAX_GPUS))
    fail(`--nproc-per-node "${n}": use a positive number, auto, cpu or gpu`);
  if (o.cleanPolicy !== undefined && !['None', 'Running', 'All'].includes(o.cleanPolicy))
    fail(`--clean-task-policy "${o.cleanPolicy}": use None, Running or All`);
  if (o.workingDir !== undefined && !o.workingDir.startsWith('/'))
    fail(`--working-dir "${o.workingDir}" must be an absolute path`);
  if (!o.command) fail('no command: give it last, as one string ("python train.py --epochs 3", run by sh -c) or after -- as its words');
}

function kvObject(list, flag) {
  if (!list.length) return null;
  const obj = {};
  for (const s of list) { const [key, v] = splitKv(s, flag); obj[key] = v; }
  return obj;
}

function addMount(spec, flag, hostOnly, idx, vols, mounts) {
  const colon = spec.indexOf(':');
  const src = colon >= 0 ? spec.slice(0, colon) : spec;
  if (!src) fail(`${flag} "${spec}": expected ${hostOnly ? 'HOST_DIR[:MOUNT_PATH]' : 'CLAIM:MOUNT_PATH or /HOST_DIR[:MOUNT_PATH]'}`);
  const host = hostOnly || src.startsWith('/');
  const path = colon >= 0 ? spec.slice(colon + 1) : host ? src : '';
  if (host && !src.startsWith('/')) fail(`${flag} "${spec}": the host directory must be an absolute path`);
  if (!path.startsWith('/')) fail(`${flag} "${spec}": the mount path must be an absolute path (CLAIM:/data)`);
  const name = `${hostOnly ? 'data-dir' : 'data'}-${idx}`;
  vols.push(host ? { name, hostPath: { path: src } } : { name, persistentVolumeClaim: { claimName: src } });
  mounts.push({ name, mountPath: path });
}

function resources(cpu, memory, gpus) {
  const req = {};
  const lim = {};
  if (cpu !== undefined) { req.cpu = cpu; lim.cpu = cpu; }
  if (memory !== undefined) { req.memory = memory; lim.memory = memory; }
  if (gpus > 0) lim['nvidia.com/gpu'] = String(gpus);
  if (!Object.keys(lim).length) return null;
  return Object.keys(req).length ? { requests: req, limits: lim } : { limits: lim };
}

function container(o, k, r, mounts) {
  const c = { name: k.name === 'mpi' ? (r.launcher ? 'launcher' : 'worker') : k.container, image: o.image || k.image };
  if (r.command) c.command = ['sh', '-c', o.command];
  if (o.workingDir !== undefined) c.workingDir = o.workingDir;
  if (o.env.length) c.env = o.env.map((s) => { const [name, value] = splitKv(s, '--env'); return { name, value }; });
  const res = r.launcher ? resources(o.launcherCpu, o.launcherMemory, 0) : resources(o.cpu, o.memory, r.gpus ? o.gpus : 0);
  if (res) c.resources = res;
  if (mounts.length) c.volumeMounts = structuredClone(mounts);
  return c;
}

function podTemplate(o, k, r, restart, labels, annotations) {
  const vols = [];
  const mounts = [];
  o.data.forEach((d, i) => addMount(d, '--data', false, i, vols, mounts));
  o.dataDir.forEach((d, i) => addMount(d, '--data-dir', true, i, vols, mounts));
  const c = container(o, k, r, mounts);
  const spec = {};
  if (!k.field) spec.restartPolicy = restart;
  if (o.priority !== undefined) spec.priorityClassName = o.priority;
  spec.containers = [c];
  if (vols.length) spec.volumes = vols;
  const tmpl = {};
  if (labels || annotations) {
    tmpl.metadata = {};
    if (labels) tmpl.metadata.labels = { ...labels };
    if (annotations) tmpl.metadata.annotations = { ...annotations };
  }
  tmpl.spec = spec;
  return tmpl;
}

function runPolicy(o) {
  const rp = {};
  if (o.cleanPolicy !== undefined) rp.cleanPodPolicy = o.cleanPolicy;
  if (o.ttl >= 0) rp.ttlSecondsAfterFinished = o.ttl;
  if (o.runningTimeout > 0) rp.activeDeadlineSeconds = o.runningTimeout; // Arena's 0: none
  if (o.retry >= 0) rp.backoffLimit = o.retry;
  if (o.queue !== undefined || o.priority !== undefined) {
    rp.schedulingPolicy = {};
    if (o.queue !== undefined) rp.schedulingPolicy.queue = o.queue;
    if (o.priority !== undefined) rp.schedulingPolicy.priorityClass = o.priority;
  }
  return Object.keys(rp).length ? rp : null;
}

// The options as the CLI's submit_opts_init leaves what is not given:
// numbers -1, strings undefined, lists empty.
export function defaultOpts() {
  return {
    kind: 'pytorch', name: '', ns: 'default', workers: -1, gpus: -1, ps: -1, slots: -1, retry: -1, ttl: -1,
    runningTimeout: -1, chief: false, evaluator: false, env: [], labels: [], annotations: [], data: [], dataDir: [],
  };
}

// The manifest (a plain object, fields in the CLI's order); throws an Error
// whose message is the CLI's usage error.
export function buildManifest(o) {
  const k = SUBMIT_KINDS.find((x) => x.name === o.kind);
  if (!k) fail(`unknown kind "${o.kind || ''}": use one of ${SUBMIT_KINDS.map((x) => x.name).join(' ')}`);
  checkOpts(o, k);
  const r = layout(o, k);
  const restart = o.retry > 0 ? 'OnFailure' : 'Never';
  const labels = kvObject(o.labels, '--label');
  const annotations = kvObject(o.annotations, '--annotation');
  const spec = {};
  if (k.field) {
    if (k.name === 'mpi') spec.slotsPerWorker = o.slots > 0 ? o.slots : o.gpus > 0 ? o.gpus : 1;
    if (k.name === 'mx') spec.jobMode = 'MXTrain';
    if (o.nprocPerNode !== undefined) spec.nprocPerNode = o.nprocPerNode;
    const rp = runPolicy(o);
    if (rp) spec.runPolicy = rp;
    const specs = {};
    for (const x of r) specs[x.type] = { replicas: x.count, restartPolicy: restart, template: podTemplate(o, k, x, restart, labels, annotations) };
    spec[k.field] = specs;
  } else {
    spec.minAvailable = r.reduce((n, x) => n + x.count, 0);
    spec.schedulerName = 'volcano';
    spec.queue = o.queue !== undefined ? o.queue : 'default';
    if (o.priority !== undefined) spec.priorityClassName = o.priority;
    if (o.retry >= 0) spec.maxRetry = o.retry;
    if (o.ttl >= 0) spec.ttlSecondsAfterFinished = o.ttl;
    spec.plugins = { env: [], svc: [] };
    spec.tasks = r.map((x) => ({ name: x.type, replicas: x.count, template: podTemplate(o, k, x, restart, labels, annotations) }));
  }
  const md = { name: o.name };
  // (as the CLI: a namespace is named only when it is not default)
  if (o.ns && o.ns !== 'default') md.namespace = o.ns;
  if (labels) md.labels = labels;
  if (annotations) md.annotations = annotations;
  return { apiVersion: k.apiVersion, kind: k.kind, metadata: md, spec };
}

// ---- the form ----------------------------------------------------------


// [option key, label, input type, CLI flag, hint]
const FIELDS = [
  ['name', 'Name', 'text', '--name', 'required'],
  ['ns', 'Namespace', 'text', '-n', ''],
  ['workers', 'Workers', 'number', '--workers', 'default 1'],
  ['ps', 'Parameter servers', 'number', '--ps', ''],
  ['chief', 'Chief', 'checkbox', '--chief', ''],
  ['evaluator', 'Evaluator', 'checkbox', '--evaluator', ''],
  ['gpus', 'GPUs per replica', 'number', '--gpus', ''],
  ['cpu', 'CPU', 'text', '--cpu', 'e.g. 2, 500m'],
  ['memory', 'Memory', 'text', '--memory', 'e.g. 4Gi'],
  ['image', 'Image', 'text', '--image', 'the kind\'s default'],
  ['queue', 'Queue', 'text', '--queue', ''],
  ['priority', 'Priority class', 'text', '--priority', ''],
  ['env', 'Environment (KEY=VALUE, one a line)', 'lines', '--env', ''],
  ['labels', 'Labels (KEY=VALUE, one a line)', 'lines', '--label', ''],
  ['annotations', 'Annotations (KEY=VALUE, one a line)', 'lines', '--annotation', ''],
  ['data', 'Data (CLAIM:PATH or /HOST:PATH, one a line)', 'lines', '--data', ''],
  ['dataDir', 'Host directories (HOST[:PATH], one a line)', 'lines', '--data-dir', ''],
  ['workingDir', 'Working directory', 'text', '--working-dir', ''],
  ['retry', 'Retries', 'number', '--retry', ''],
  ['ttl', 'Delete after finishing', 'text', '--ttl-after-finished', 'e.g. 1h, 3600'],
  ['runningTimeout', 'Running timeout', 'text', '--running-timeout', 'e.g. 30m'],
  ['cleanPolicy', 'Clean pods policy', 'select', '--clean-task-policy', ''],
  ['nprocPerNode', 'Processes per node', 'text', '--nproc-per-node', 'N, auto, cpu or gpu'],
  ['slots', 'Slots per worker', 'number', '--slots', ''],
  ['launcherCpu', 'Launcher CPU', 'text', '--launcher-cpu', ''],
  ['launcherMemory', 'Launcher memory', 'text', '--launcher-memory', ''],
  ['command', 'Command (run by sh -c)', 'text', 'COMMAND', 'required'],
];
const COUNT_MAX = { workers: [0, 100000], ps: [0, 100000], gpus: [0, 100000], slots: [1, 100000], retry: [0, 1000000] };

// The form's values as submit options; throws the CLI's usage error.
function readForm(inputs, kindSel) {
  const o = defaultOpts();
  o.kind = kindSel.value;
  for (const [key, , type, flag] of FIELDS) {
    const input = inputs[key];
    if (input.closest('.field').hidden) continue;
    if (type === 'checkbox') { o[key] = input.checked; continue; }
    const v = input.value.trim();
    if (type === 'lines') { o[key] = v ? v.split('\n').map((l) => l.trim()).filter(Boolean) : []; continue; }
    if (!v) continue;
    if (COUNT_MAX[key]) {
      const [min, max] = COUNT_MAX[key];
      if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max)
        fail(`${flag} "${v}": expected a whole number from ${min} to ${max}`);
      o[key] = Number(v);
    } else if (key === 'ttl' || key === 'runningTimeout') {
      const secs = parseSeconds(v);
      if (secs === null) fail(`${flag} "${v}": expected a duration like 90s, 30m, 1h30m or a number of seconds`);
      o[key] = secs;
    } else {
      o[key] = key === 'command' || key === 'ns' ? input.value.trim() : v;
    }
  }
  if (!o.ns) o.ns = 'default';
  return o;
}

// The form; write(yamlText, namespace) puts a built manifest in the editor.
export function mountSubmitForm(container, toYaml, write) {
  const kindSel = el('select', { id: 'sf-kind' },
    ...SUBMIT_KINDS.map((k) => el('option', { value: k.name }, `${k.name} (${k.kind}${k.name === 'volcano' ? ', Volcano' : ''})`)));
  const inputs = {};
  const rows = [el('label', { for: 'sf-kind' }, 'Kind'), el('div', { class: 'field' }, kindSel)];
  for (const [key, label, type, flag, hint] of FIELDS) {
    const id = `sf-${key}`;
    let input;
    if (type === 'lines') input = el('textarea', { id, rows: '2', spellcheck: 'false' });
    else if (type === 'select') input = el('select', { id }, el('option', { value: '' }, '(the kind\'s default)'), ...['None', 'Running', 'All'].map((v) => el('option', { value: v }, v)));
    else input = el('input', { id, type, autocomplete: 'off', spellcheck: 'false', placeholder: hint || undefined, min: type === 'number' ? '0' : undefined });
    inputs[key] = input;
    const field = el('div', { class: 'field', dataset: { key } }, input, ' ', el('code', { class: 'flag' }, flag));
    const lab = el('label', { for: id, dataset: { key } }, label);
    rows.push(lab, field);
  }
  inputs.ns.value = 'default';
  const out = el('div', { id: 'sf-result', 'aria-live': 'polite', class: 'wide' });
  const build = el('button', { type: 'submit', id: 'sf-build' }, 'Write the manifest into the editor');
  const form = el('form', { class: 'submitform', id: 'submit-form', 'aria-labelledby': 'sf-title' },
    ...rows, el('div', { class: 'wide' }, build), out);
  const box = el('fieldset', {}, el('legend', { id: 'sf-title' }, 'From the CLI\'s fields (', el('code', {}, 'trainyard submit KIND'), ')'),
    el('p', { class: 'note' }, 'The same fields, defaults and manifest as ', el('code', {}, 'trainyard submit --dry-run'),
      ' (docs/cli/submit.md). The manifest goes into the editor below, to read or change before Validate or Submit.'), form);
  // a kind shows only the fields it takes
  const showFields = () => {
    const k = SUBMIT_KINDS.find((x) => x.name === kindSel.value);
    for (const [key] of FIELDS) {
      const bit = FIELD_FLAGS[key];
      const hide = bit !== undefined && !(k.flags & bit);
      for (const n of form.querySelectorAll(`[data-key="${key}"]`)) n.hidden = hide;
    }
  };
  kindSel.addEventListener('change', showFields);
  showFields();
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clear(out);
    try {
      const o = readForm(inputs, kindSel);
      const m = buildManifest(o);
      write(toYaml(m), o.ns);
      out.append(el('p', { class: 'ok', role: 'status' }, `The ${m.kind} manifest is in the editor.`));
    } catch (e) {
      out.append(errorBox(e.message));
    }
  });
  container.append(box);
}
