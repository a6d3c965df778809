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
];

export const kindLabel = (k) => k.label || k.kind;
export const isVolcano = (k) => k.group === 'batch.volcano.sh';
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
// spec.tasks list, as [{ name, replicas, template }].
export function replicaSpecs(k, job) {
  const spec = job.spec || {};
  if (isVolcano(k))
    return (spec.tasks || []).map((t) => ({ name: t.name || '', replicas: t.replicas ?? 1, template: t.template }));
  const key = Object.keys(spec).find((f) => f.endsWith('ReplicaSpecs'));
  return Object.entries(spec[key] || {}).map(([name, r]) => ({ name, replicas: r?.replicas ?? 1, template: r?.template }));
}

function gpusOf(template) {
  let n = 0;
  for (const c of template?.spec?.containers || []) {
    const res = c.resources || {};
    for (const [name, q] of Object.entries(res.limits || res.requests || {}))
      if (name.endsWith('/gpu')) n += Number.parseInt(q, 10) || 0;
  }
  return n;
}

export function gpusRequested(k, job) {
  return replicaSpecs(k, job).reduce((sum, r) => sum + r.replicas * gpusOf(r.template), 0);
}

export function queueOf(k, job) {
  if (isVolcano(k)) return job.spec?.queue || 'default';
  // the gang scheduler puts a job that names none in queue default
  return job.spec?.runPolicy?.schedulingPolicy?.queue || 'default';
}

export function isSuspended(k, job) {
  if (isVolcano(k)) return ['Aborted', 'Aborting'].includes(job.status?.state?.phase);
  return job.spec?.runPolicy?.suspend === true;
}

// One word for the job's state: Volcano's phase, Kubeflow's latest true
// condition (Created, Running, Restarting, Suspended, Succeeded, Failed).
export function statusOf(k, job) {
  if (isVolcano(k)) return job.status?.state?.phase || 'Pending';
  const conds = (job.status?.conditions || []).filter((c) => c.status === 'True');
  for (const t of ['Failed', 'Succeeded', 'Suspended', 'Restarting', 'Running', 'Created'])
    if (conds.some((c) => c.type === t)) return t;
  return 'Pending';
}

// The label that marks a job's pods (the controllers set it).
export function podSelector(k, job) {
  const key = isVolcano(k) ? 'volcano.sh/job-name' : 'training.kubeflow.org/job-name';
  return `${key}=${job.metadata.name}`;
}

// The pod's replica type or task name.
export function podRole(pod) {
  const l = pod.metadata?.labels || {};
  return l['training.kubeflow.org/replica-type'] || l['volcano.sh/task-spec'] || '';
}
