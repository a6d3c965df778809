// kinds.js - the training job kinds the console shows, and how to read the
// list's columns out of each one's manifest.
import { api } from './api.js';

// The kinds a Trainyard server may serve. The page asks the server's API
// discovery which of them it serves (and in which version) at start.
// MPIJob is one resource in two versions (v2beta1 and v1): one entry, the
// newer version preferred.
export const KINDS = [
  { id: 'pytorchjob', group: 'kubeflow.org', versions: ['v1'], plural: 'pytorchjobs', kind: 'PyTorchJob' },
  { id: 'vcjob', group: 'batch.volcano.sh', versions: ['v1alpha1'], plural: 'jobs', kind: 'Job', label: 'Volcano Job' },
  { id: 'mpijob', group: 'kubeflow.org', versions: ['v2beta1', 'v1'], plural: 'mpijobs', kind: 'MPIJob' },
  { id: 'tfjob', group: 'kubeflow.org', versions: ['v1'], plural: 'tfjobs', kind: 'TFJob' },
  { id: 'xgboostjob', group: 'kubeflow.org', versions: ['v1'], plural: 'xgboostjobs', kind: 'XGBoostJob' },
  { id: 'paddlejob', group: 'kubeflow.org', versions: ['v1'], plural: 'paddlejobs', kind: 'PaddleJob' },
  { id: 'jaxjob', group: 'kubeflow.org', versions: ['v1'], plural: 'jaxjobs', kind: 'JAXJob' },
  { id: 'mxjob', group: 'kubeflow.org', versions: ['v1'], plural: 'mxjobs', kind: 'MXJob' },
  { id: 'msjob', group: 'kubeflow.org', versions: ['v1'], plural: 'msjobs', kind: 'MSJob' },
  { id: 'msjob-ms', group: 'mindspore.gitee.com', versions: ['v1', 'v1alpha1'], plural: 'msjobs', kind: 'MSJob', label: 'MSJob (mindspore.gitee.com)' },
  { id: 'trainjob', group: 'trainer.kubeflow.org', versions: ['v1alpha1'], plural: 'trainjobs', kind: 'TrainJob' },
];

export const kindLabel = (k) => k.label || k.kind;
export const isVolcano = (k) => k.group === 'batch.volcano.sh';
// Kubeflow Trainer v2 (docs/trainer.md): the TrainJob names a runtime and
// says little of its pods; the server's TrainJob controller makes them
// (`<job>-<replicated job>-<job index>-<pod index>`, JobSet's labels).
export const isTrainJob = (k) => k.group === 'trainer.kubeflow.org';
export const kindById = (id) => KINDS.find((k) => k.id === id);

// The collection's path, cluster-wide (ns empty) or in one namespace.
export function collectionPath(k, ns) {
  const base = `/apis/${k.group}/${k.version}`;
  return ns ? `${base}/namespaces/${encodeURIComponent(ns)}/${k.plural}` : `${base}/${k.plural}`;
}
export const objectPath = (k, ns, name) => `${collectionPath(k, ns)}/${encodeURIComponent(name)}`;

let served = null;
// The kinds this server serves, each with .version set (discovery).
export async function servedKinds() {
  if (served) return served;
  // The group versions the server serves (one request), then the
  // resources of those of them the console knows.
  const apis = await api('/apis');
  const offered = new Set((apis.groups || []).flatMap((g) => (g.versions || []).map((v) => v.groupVersion)));
  const gvs = new Map();
  for (const k of KINDS) for (const v of k.versions) if (offered.has(`${k.group}/${v}`)) gvs.set(`${k.group}/${v}`, null);
  await Promise.all([...gvs.keys()].map(async (gv) => {
    try {
      const doc = await api(`/apis/${gv}`);
      gvs.set(gv, new Set((doc.resources || []).map((r) => r.name)));
    } catch (e) {
      if (e.status === 401) throw e;
      gvs.set(gv, new Set());
    }
  }));
  served = [];
  for (const k of KINDS) {
    const v = k.versions.find((ver) => gvs.get(`${k.group}/${ver}`)?.has(k.plural));
    if (v) served.push({ ...k, version: v });
  }
  return served;
}

// ---- reading a job ------------------------------------------------------

// The replica specs: Kubeflow's spec.<x>ReplicaSpecs map, Volcano's
// spec.tasks list, as [{ name, replicas, template }]. A TrainJob's are its
// runtime's, which the console does not read: what the job itself says of
// its trainer (numNodes, else 1; resourcesPerNode), as `trainyard list`.
export function replicaSpecs(k, job) {
  const spec = job.spec || {};
  if (isVolcano(k))
    return (spec.tasks || []).map((t) => ({ name: t.name || '', replicas: t.replicas ?? 1, template: t.template }));
  if (isTrainJob(k)) {
    const tr = spec.trainer;
    if (!tr || typeof tr !== 'object') return [];
    const n = Number.isInteger(tr.numNodes) ? tr.numNodes : 1;
    return [{ name: 'node', replicas: n, template: { spec: { containers: [{ name: 'node', resources: tr.resourcesPerNode }] } } }];
  }
  const key = Object.keys(spec).find((f) => f.endsWith('ReplicaSpecs'));
  return Object.entries(spec[key] || {}).map(([name, r]) => ({ name, replicas: r?.replicas ?? 1, template: r?.template }));
}

// The whole GPUs a pod template (or a pod) asks for: its containers'
// */gpu limits, else requests.
function gpusOf(template) {
  let n = 0;
  for (const c of template?.spec?.containers || []) {
    const res = c?.resources || {};
    for (const [name, q] of Object.entries(res.limits || res.requests || {}))
      if (name.endsWith('/gpu')) n += Number.parseInt(q, 10) || 0;
  }
  return n;
}

// pods: the job's pods where the page has them (a job page): a TrainJob's
// are what its runtime made of it, so they count once they exist.
export function gpusRequested(k, job, pods = null) {
  if (isTrainJob(k) && pods?.length) return pods.reduce((sum, p) => sum + gpusOf(p), 0);
  return replicaSpecs(k, job).reduce((sum, r) => sum + r.replicas * gpusOf(r.template), 0);
}

// A TrainJob's queue: Kueue's label, else Volcano's annotation (the
// controller puts its PodGroup there), else default (src/cli/jobs_trainer.c).
export function queueOf(k, job) {
  if (isVolcano(k)) return job.spec?.queue || 'default';
  if (isTrainJob(k))
    return job.metadata?.labels?.['kueue.x-k8s.io/queue-name'] ||
      job.metadata?.annotations?.['scheduling.volcano.sh/queue-name'] || 'default';
  // the gang scheduler puts a job that names none in queue default
  return job.spec?.runPolicy?.schedulingPolicy?.queue || 'default';
}

export function isSuspended(k, job) {
  if (isVolcano(k)) return ['Aborted', 'Aborting'].includes(job.status?.state?.phase);
  if (isTrainJob(k)) return job.spec?.suspend === true;
  return job.spec?.runPolicy?.suspend === true;
}

// The merge patch that suspends or resumes a job (Volcano's Job: the action
// annotation its controller applies, as `trainyard job suspend` does).
export function suspendPatch(k, suspend) {
  if (isVolcano(k)) return { metadata: { annotations: { 'trainyard.io/action': suspend ? 'AbortJob' : 'ResumeJob' } } };
  if (isTrainJob(k)) return { spec: { suspend } };
  return { spec: { runPolicy: { suspend } } };
}

const trueCond = (job, type) => (job.status?.conditions || []).find((c) => c.type === type && c.status === 'True');

// A pod of the job's: the controller's (its owner), as `trainyard` counts.
const owns = (job, pod) => !job.metadata?.uid ||
  !(pod.metadata?.ownerReferences || []).length ||
  pod.metadata.ownerReferences.some((o) => o.uid === job.metadata.uid);

// A TrainJob's state, as `trainyard list` tells it (src/cli/jobs_trainer.c,
// after the Kubeflow SDK): Complete, Failed, Suspended from the conditions
// (or spec.suspend); there is no Running condition: Running when every pod
// of the replicated job `node` runs or has finished, Pending while a pod
// of the job is pending, else Created. pods: the job's pods, where the page
// watches them (a job page); the list has no watch on every job's pods and
// reads the same from status.jobsStatus, the controller's count of them
// (per replicated job: active, ready when all its pods run, succeeded,
// failed), which it rewrites as they change.
function trainJobStatus(job, pods) {
  if (trueCond(job, 'Complete')) return 'Succeeded';
  if (trueCond(job, 'Failed')) return 'Failed';
  if (trueCond(job, 'Suspended') || job.spec?.suspend === true) return 'Suspended';
  if (pods) {
    let nodes = 0;
    let up = 0;
    let waiting = false;
    for (const p of pods) {
      if (!owns(job, p)) continue;
      const phase = p.status?.phase || 'Pending';
      if (phase === 'Pending') waiting = true;
      if (podRole(p) !== 'node') continue;
      nodes++;
      if (phase === 'Running' || phase === 'Succeeded') up++;
    }
    if (nodes && up === nodes) return 'Running';
    return waiting ? 'Pending' : 'Created';
  }
  const rjobs = Array.isArray(job.status?.jobsStatus) ? job.status.jobsStatus : [];
  const num = (v) => (Number.isInteger(v) ? v : 0);
  const node = rjobs.find((r) => r?.name === 'node');
  if (node && !num(node.failed) && num(node.active) === num(node.ready) && num(node.ready) + num(node.succeeded) > 0)
    return 'Running';
  return rjobs.some((r) => num(r?.active) > num(r?.ready)) ? 'Pending' : 'Created';
}

// One word for the job's state: Volcano's phase, Kubeflow's latest true
// condition (Created, Running, Restarting, Suspended, Succeeded, Failed),
// a TrainJob's as above.
export function statusOf(k, job, pods = null) {
  if (isVolcano(k)) return job.status?.state?.phase || 'Pending';
  if (isTrainJob(k)) return trainJobStatus(job, pods);
  const conds = (job.status?.conditions || []).filter((c) => c.status === 'True');
  for (const t of ['Failed', 'Succeeded', 'Suspended', 'Restarting', 'Running', 'Created'])
    if (conds.some((c) => c.type === t)) return t;
  return 'Pending';
}

// When the job started and ended (ISO times, '' when not): status.startTime
// and completionTime; a TrainJob keeps no start time (upstream has none):
// its creation, and the time it became Complete or Failed, as `trainyard
// list` counts its duration.
export function timesOf(k, job) {
  if (isTrainJob(k)) {
    const done = trueCond(job, 'Complete') || trueCond(job, 'Failed');
    return { start: job.metadata?.creationTimestamp || '', end: done?.lastTransitionTime || '' };
  }
  return { start: job.status?.startTime || '', end: job.status?.completionTime || '' };
}

// The label that marks a job's pods (the controllers set it; a TrainJob's:
// JobSet's, which the Kubeflow SDK selects by).
export function podSelector(k, job) {
  const key = isVolcano(k) ? 'volcano.sh/job-name'
    : isTrainJob(k) ? 'jobset.sigs.k8s.io/jobset-name' : 'training.kubeflow.org/job-name';
  return `${key}=${job.metadata.name}`;
}

// The pod's replica type, task name or replicated job.
export function podRole(pod) {
  const l = pod.metadata?.labels || {};
  return l['training.kubeflow.org/replica-type'] || l['volcano.sh/task-spec'] ||
    l['jobset.sigs.k8s.io/replicatedjob-name'] || '';
}

// The container whose log the page follows: a TrainJob's trainer runs in
// the container `node` (its pods may hold others); '' lets the server
// choose (a pod of one container).
export function logContainer(k, pod) {
  if (isTrainJob(k) && (pod?.spec?.containers || []).some((c) => c.name === 'node')) return 'node';
  return '';
}

// ---- a TrainJob's progress (status.trainerStatus) ----

// "45s", "10m", "2h5m", "1d3h": `trainyard get`'s durations.
export function durationText(s) {
  s = Math.max(0, Math.floor(s));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
}

// What the training script reported, or null: { pct (0..100, or null),
// eta (seconds, or null), metrics [{ name, value }], updated (ISO or '') }.
// The server bounds what it takes (docs/trainer.md); this bounds again,
// since an admin may write the status directly.
export function progressOf(k, job) {
  const ts = isTrainJob(k) ? job.status?.trainerStatus : null;
  if (!ts || typeof ts !== 'object' || Array.isArray(ts)) return null;
  const int = (v) => (Number.isInteger(v) ? v : null);
  const pct = int(ts.progressPercentage);
  const eta = int(ts.estimatedRemainingSeconds);
  return {
    pct: pct === null ? null : Math.max(0, Math.min(100, pct)),
    eta: eta === null || eta < 0 ? null : eta,
    metrics: (Array.isArray(ts.metrics) ? ts.metrics : []).slice(0, 256)
      .filter((m) => m && typeof m === 'object')
      .map((m) => ({ name: String(m.name ?? '?').slice(0, 64), value: String(m.value ?? '').slice(0, 64) })),
    updated: typeof ts.lastUpdatedTime === 'string' ? ts.lastUpdatedTime : '',
  };
}
