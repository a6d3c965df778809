// job.js - one job: its replicas (pods), conditions and events in time
// order, a live log tail per replica, its manifest, the actions suspend,
// resume and delete, and a TrainJob's progress. Five streams at most (job,
// pods, events, pod groups, one log): a browser has six connections to a
// server.
import { api, informer, lines } from './api.js';
import {
  collectionPath, durationText, gpusRequested, isSuspended, isTrainJob, kindById, kindLabel,
  logContainer, objectPath, podRole, podSelector, progressOf, queueOf, servedKinds, statusOf,
  suspendPatch,
} from './kinds.js';
import { age, announce, clear, confirmDialog, el, errorBox } from './util.js';
import { toYaml } from './yaml.js';
import { mountScheduling } from './sched.js';
import { mountGpuCharts } from './gpuchart.js';

const LOG_KEEP = 20000; // lines kept per log (the download has these)

function exitCodes(pod) {
  const codes = [];
  for (const cs of pod.status?.containerStatuses || []) {
    const t = cs.state?.terminated || cs.lastState?.terminated;
    if (t) codes.push(`${cs.name}: ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}`);
  }
  return codes.join(', ');
}

const restarts = (pod) => (pod.status?.containerStatuses || []).reduce((n, cs) => n + (cs.restartCount || 0), 0);

export function mount(container, { kind, ns, name }) {
  const stoppers = [];
  let destroyed = false;
  let k = kindById(kind);
  let job = null;
  const pods = new Map(); // name -> pod
  let podsListed = false;
  const events = new Map(); // uid -> event

  const title = el('h1', {}, `${k ? kindLabel(k) : kind} ${name}`);
  const summary = el('dl', { class: 'summary' });
  const actions = el('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' });
  const msg = el('div', { 'aria-live': 'polite' });
  const podBody = el('tbody');
  const condBody = el('tbody');
  const eventBody = el('tbody');
  const podSelect = el('select', { id: 'log-pod' });
  const pauseBtn = el('button', { type: 'button', id: 'log-pause', 'aria-pressed': 'false' }, 'Pause');
  const downloadBtn = el('button', { type: 'button', id: 'log-download' }, 'Download');
  const logState = el('span', { class: 'log-state', 'aria-live': 'polite' });
  const logPre = el('pre', { class: 'log', id: 'log', tabindex: '0', 'aria-label': 'Log' });
  const manifestPre = el('pre', { class: 'manifest', id: 'manifest', tabindex: '0' });
  const fmtYaml = el('button', { type: 'button', 'aria-pressed': 'true' }, 'YAML');
  const fmtJson = el('button', { type: 'button', 'aria-pressed': 'false' }, 'JSON');
  let manifestFormat = 'yaml';
  let jobEvents = 0; // the job's watch events so far
  const schedSection = el('section', { 'aria-labelledby': 'h-scheduling' }, el('h2', { id: 'h-scheduling' }, 'Scheduling'));
  let sched = null;
  const schedUpdate = () => sched?.update(job, [...pods.values()]);
  const gpuSection = el('section', { 'aria-labelledby': 'h-gpus' }, el('h2', { id: 'h-gpus' }, 'GPUs'));
  const gpuCharts = mountGpuCharts(gpuSection);
  const gpuUpdate = () => { if (job) gpuCharts.update(gpusRequested(k, job, podsListed ? [...pods.values()] : null), [...pods.values()]); };
  // A TrainJob's progress (status.trainerStatus, which its training script
  // posts): it comes with the job's watch, like any change to the job.
  const progressSection = el('section', { 'aria-labelledby': 'h-progress', hidden: true },
    el('h2', { id: 'h-progress' }, 'Progress'));
  const progressBody = el('div', { id: 'progress' });
  progressSection.append(progressBody);
  // what changes with the pods as well as with the job (a TrainJob's state
  // and GPUs are read from its pods)
  const statusDd = el('dd', { id: 'job-status' });
  const gpusDd = el('dd', { id: 'job-gpus' });

  container.append(
    el('p', {}, el('a', { href: '#/jobs' }, '← All jobs')),
    title, summary, actions, msg,
    progressSection,
    schedSection,
    el('section', { 'aria-labelledby': 'h-replicas' },
      el('h2', { id: 'h-replicas' }, 'Replicas'),
      el('table', { id: 'replicas' }, el('thead', {}, el('tr', {},
        ...['Pod', 'Replica', 'Phase', 'Node', 'Restarts', 'Exit codes', 'Age'].map((h) => el('th', { scope: 'col' }, h)))), podBody)),
    gpuSection,
    el('section', { 'aria-labelledby': 'h-logs' },
      el('h2', { id: 'h-logs' }, 'Logs'),
      el('div', { class: 'logbar' }, el('label', { for: 'log-pod' }, 'Replica'), podSelect, pauseBtn, downloadBtn, logState),
      logPre),
    el('section', { 'aria-labelledby': 'h-conditions' },
      el('h2', { id: 'h-conditions' }, 'Conditions'),
      el('table', { id: 'conditions' }, el('thead', {}, el('tr', {},
        ...['Time', 'Type', 'Status', 'Reason', 'Message'].map((h) => el('th', { scope: 'col' }, h)))), condBody)),
    el('section', { 'aria-labelledby': 'h-events' },
      el('h2', { id: 'h-events' }, 'Events'),
      el('table', { id: 'events' }, el('thead', {}, el('tr', {},
        ...['Time', 'Type', 'Object', 'Reason', 'Message', 'Count'].map((h) => el('th', { scope: 'col' }, h)))), eventBody)),
    el('section', { 'aria-labelledby': 'h-manifest' },
      el('h2', { id: 'h-manifest' }, 'Manifest'),
      el('div', { role: 'group', 'aria-label': 'Format' }, fmtYaml, fmtJson),
      manifestPre));

  // ---- the job ----
  function renderStatus() {
    if (!job) return;
    // until the pods are listed (or where they may not be), what the job
    // says of them (kinds.js)
    const list = podsListed ? [...pods.values()] : null;
    const st = statusOf(k, job, list);
    if (statusDd.textContent !== st) clear(statusDd).append(el('span', { class: `status status-${st.toLowerCase()}` }, st));
    gpusDd.textContent = String(gpusRequested(k, job, list));
  }

  function renderJob() {
    if (!job) return;
    const m = job.metadata;
    const plural = `${k.plural}.${k.group}`;
    renderStatus();
    const rt = job.spec?.runtimeRef;
    clear(summary).append(
      el('dt', {}, 'Namespace'), el('dd', {}, m.namespace),
      el('dt', {}, 'Status'), statusDd,
      isTrainJob(k) && el('dt', {}, 'Runtime'),
      isTrainJob(k) && el('dd', { id: 'job-runtime' }, rt?.name ? `${rt.kind || 'ClusterTrainingRuntime'} ${rt.name}` : '—'),
      el('dt', {}, 'Queue'), el('dd', {}, queueOf(k, job) || '—'),
      el('dt', {}, 'GPUs requested'), gpusDd,
      el('dt', {}, 'Created by'), el('dd', {}, m.annotations?.['trainyard.io/created-by'] || '—'),
      el('dt', {}, 'Age'), el('dd', {}, el('time', { datetime: m.creationTimestamp, title: m.creationTimestamp }, age(m.creationTimestamp))),
      el('dt', {}, 'kubectl'), el('dd', {}, el('code', {}, `kubectl get ${plural} ${m.name} -n ${m.namespace} -o yaml`)));
    const suspended = isSuspended(k, job);
    const suspendBtn = el('button', { type: 'button', id: suspended ? 'resume' : 'suspend' }, suspended ? 'Resume' : 'Suspend');
    suspendBtn.addEventListener('click', () => setSuspended(!suspended));
    const deleteBtn = el('button', { type: 'button', id: 'delete', class: 'danger' }, 'Delete');
    deleteBtn.addEventListener('click', deleteJob);
    clear(actions).append(suspendBtn, deleteBtn);
    const conds = [...(job.status?.conditions || [])].sort((a, b) =>
      String(a.lastTransitionTime || '').localeCompare(String(b.lastTransitionTime || '')));
    clear(condBody).append(...conds.map((c) => el('tr', {},
      el('td', {}, el('time', { datetime: c.lastTransitionTime || '' }, c.lastTransitionTime || '')),
      el('td', {}, c.type), el('td', {}, c.status), el('td', {}, c.reason || ''), el('td', {}, c.message || ''))));
    if (!conds.length && job.status?.state?.phase)
      condBody.append(el('tr', {}, el('td', {}, job.status.state.lastTransitionTime || ''),
        el('td', {}, 'Phase'), el('td', {}, job.status.state.phase), el('td', {}, job.status.state.reason || ''),
        el('td', {}, job.status.state.message || '')));
    renderManifest();
    renderProgress();
    schedUpdate();
    gpuUpdate();
  }

  function renderProgress() {
    if (!isTrainJob(k)) return;
    progressSection.hidden = false;
    const p = progressOf(k, job);
    if (!p) {
      clear(progressBody).append(el('p', { class: 'note', id: 'progress-none' },
        'Nothing reported yet: the training script reports its progress to the server (status.trainerStatus); it shows here as it comes.'));
      return;
    }
    const pct = p.pct === null ? 'not reported' : `${p.pct}%`;
    const bar = el('progress', { id: 'progress-bar', max: '100', 'aria-labelledby': 'h-progress' }, pct);
    if (p.pct !== null) bar.value = p.pct; // without a value: indeterminate
    const when = p.updated && Number.isFinite(Date.parse(p.updated)) ? p.updated : '';
    let eta = 'No estimate of the time left.';
    if (p.eta !== null) {
      const done = when ? new Date(Date.parse(when) + p.eta * 1000) : null;
      eta = `About ${durationText(p.eta)} left${done ? ` (done around ${done.toLocaleString()})` : ''}.`;
    }
    clear(progressBody).append(
      el('div', { class: 'progress-line' }, bar, el('span', { id: 'progress-pct' }, pct)),
      el('p', { id: 'progress-eta' }, eta,
        when ? [' Reported ', el('time', { datetime: when, title: when }, `${age(when)} ago`), '.'] : ''));
    if (p.metrics.length) {
      progressBody.append(el('table', { id: 'progress-metrics' },
        el('caption', { class: 'visually-hidden' }, 'Metrics'),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Metric'), el('th', { scope: 'col' }, 'Value'))),
        el('tbody', {}, ...p.metrics.map((x) => el('tr', { dataset: { metric: x.name } },
          el('td', {}, x.name), el('td', { class: 'num' }, x.value))))));
    }
  }

  function renderManifest() {
    if (!job) return;
    const copy = structuredClone(job);
    delete copy.metadata?.managedFields;
    manifestPre.textContent = manifestFormat === 'yaml' ? toYaml(copy) : JSON.stringify(copy, null, 2);
  }
  for (const [btn, f] of [[fmtYaml, 'yaml'], [fmtJson, 'json']]) {
    btn.addEventListener('click', () => {
      manifestFormat = f;
      fmtYaml.setAttribute('aria-pressed', String(f === 'yaml'));
      fmtJson.setAttribute('aria-pressed', String(f === 'json'));
      renderManifest();
    });
  }

  async function setSuspended(suspend) {
    const verb = suspend ? 'Suspend' : 'Resume';
    if (!await confirmDialog(`${verb} ${kindLabel(k)} ${ns}/${name}?${suspend ? ' Its pods are stopped.' : ''}`, verb)) return;
    // Kubeflow kinds: spec.runPolicy.suspend; a TrainJob: spec.suspend.
    // Volcano's Job: the action annotation the Job controller applies (as
    // `trainyard job suspend`).
    const patch = suspendPatch(k, suspend);
    try {
      // The answer shows the job as the patch left it; the watch may
      // already have brought a newer state (the controller acts at once),
      // which the answer, arriving after it, must not replace.
      const seen = jobEvents;
      const patched = await api(objectPath(k, ns, name), { method: 'PATCH', body: patch, contentType: 'application/merge-patch+json' });
      if (jobEvents === seen) { job = patched; renderJob(); }
      announce(`${name} ${suspend ? 'suspended' : 'resumed'}`);
    } catch (e) {
      clear(msg).append(errorBox(`${verb} failed: ${e.message}`));
    }
  }

  async function deleteJob() {
    if (!await confirmDialog(`Delete ${kindLabel(k)} ${ns}/${name} and its pods? This cannot be undone.`, 'Delete')) return;
    try {
      await api(objectPath(k, ns, name), { method: 'DELETE', body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } });
      announce(`${name} deleted`);
      location.hash = '#/jobs';
    } catch (e) {
      clear(msg).append(errorBox(`Delete failed: ${e.message}`));
    }
  }

  // ---- replicas ----
  function renderPods() {
    const list = [...pods.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    clear(podBody).append(...list.map((p) => el('tr', { dataset: { pod: p.metadata.name } },
      el('td', {}, p.metadata.name), el('td', {}, podRole(p)),
      el('td', { class: 'phase' }, p.status?.phase || 'Pending'), el('td', {}, p.spec?.nodeName || '—'),
      el('td', { class: 'num' }, String(restarts(p))), el('td', {}, exitCodes(p) || '—'),
      el('td', { class: 'num' }, age(p.metadata.creationTimestamp)))));
    if (!list.length) podBody.append(el('tr', {}, el('td', { colspan: '7' }, 'No pods yet.')));
    renderStatus();
    schedUpdate();
    gpuUpdate();
    const want = podSelect.value;
    const names = list.map((p) => p.metadata.name);
    if (names.join() !== [...podSelect.options].map((o) => o.value).join()) {
      podSelect.replaceChildren(...names.map((n) => el('option', { value: n }, n)));
      podSelect.value = names.includes(want) ? want : names[0] || '';
    }
    // the replica shown changed (its pod went) or its stream ended (the pod
    // had not started, or restarted): follow it (again). A pending pod has
    // no log yet (the server would answer 400): the pod's start, its next
    // change, begins the follow.
    if (podSelect.value && (podSelect.value !== log.pod || !log.ctl)) {
      if ((pods.get(podSelect.value)?.status?.phase || 'Pending') !== 'Pending') {
        followLog(podSelect.value);
      } else {
        if (podSelect.value !== log.pod) {
          log.ctl?.abort();
          log.ctl = null;
          log.pod = podSelect.value;
          log.lines = [];
          log.pending = [];
          clear(logPre);
        }
        logState.textContent = `${podSelect.value} is pending: its log follows when it starts`;
      }
    }
  }

  // ---- events ----
  function renderEvents() {
    const mine = [...events.values()].filter((e) => {
      const o = e.involvedObject || {};
      return (job && o.uid === job.metadata.uid) || (o.kind === k.kind && o.name === name) ||
        (o.kind === 'Pod' && pods.has(o.name)) || (o.kind === 'PodGroup' && o.name.startsWith(name));
    });
    const when = (e) => e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata.creationTimestamp || '';
    mine.sort((a, b) => String(when(a)).localeCompare(String(when(b))));
    clear(eventBody).append(...mine.map((e) => el('tr', {},
      el('td', {}, el('time', { datetime: when(e) }, when(e))), el('td', {}, e.type || ''),
      el('td', {}, `${e.involvedObject?.kind || ''}/${e.involvedObject?.name || ''}`),
      el('td', {}, e.reason || ''), el('td', {}, e.message || ''), el('td', { class: 'num' }, String(e.count || 1)))));
  }

  // ---- logs ----
  const log = { pod: '', ctl: null, lines: [], paused: false, pending: [] };
  function appendLog(text) {
    log.lines.push(text);
    if (log.lines.length > LOG_KEEP) log.lines.splice(0, log.lines.length - LOG_KEEP);
    if (log.paused) { log.pending.push(text); return; }
    const atBottom = logPre.scrollTop + logPre.clientHeight >= logPre.scrollHeight - 4;
    logPre.append(`${text}\n`);
    while (logPre.childNodes.length > 2000) logPre.firstChild.remove();
    if (atBottom) logPre.scrollTop = logPre.scrollHeight;
  }
  async function followLog(pod) {
    log.ctl?.abort();
    const ctl = new AbortController();
    log.ctl = ctl;
    if (log.pod !== pod) { log.lines = []; log.pending = []; clear(logPre); }
    log.pod = pod;
    logState.textContent = `Following ${pod}`;
    try {
      const c = logContainer(k, pods.get(pod));
      const resp = await api(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log?follow=true&tailLines=1000${c ? `&container=${encodeURIComponent(c)}` : ''}`,
        { raw: true, signal: ctl.signal });
      if (log.lines.length) { log.lines = []; clear(logPre); } // a resumed follow sends its tail again
      for await (const line of lines(resp)) appendLog(line);
      if (log.ctl === ctl) logState.textContent = `${pod}: the log ended`;
    } catch (e) {
      if (ctl.signal.aborted) return;
      // not started yet (400 while the container waits): the pod's next
      // change starts the follow again (renderPods)
      logState.textContent = `${pod}: ${e.message}`;
    }
    if (log.ctl === ctl) log.ctl = null;
  }
  podSelect.addEventListener('change', () => followLog(podSelect.value));
  pauseBtn.addEventListener('click', () => {
    log.paused = !log.paused;
    pauseBtn.textContent = log.paused ? 'Resume' : 'Pause';
    pauseBtn.setAttribute('aria-pressed', String(log.paused));
    if (!log.paused) {
      for (const t of log.pending.splice(0)) appendLog(t);
    }
  });
  downloadBtn.addEventListener('click', () => {
    const blob = new Blob([log.lines.join('\n') + (log.lines.length ? '\n' : '')], { type: 'text/plain' });
    const a = el('a', { href: URL.createObjectURL(blob), download: `${log.pod || name}.log` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  });

  // ---- the streams ----
  async function start() {
    try {
      const kinds = await servedKinds();
      k = kinds.find((x) => x.id === kind);
      if (!k) { container.append(errorBox(`This server does not serve the kind ${kind}.`)); return; }
      job = await api(objectPath(k, ns, name));
    } catch (e) {
      container.append(errorBox(e.status === 404 ? `${ns}/${name} was not found.` : e.message));
      return;
    }
    if (destroyed) return;
    title.textContent = `${kindLabel(k)} ${name}`;
    document.title = `${name} · Trainyard`;
    sched = mountScheduling(schedSection, ns);
    stoppers.push(sched);
    renderJob();
    const sel = `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
    stoppers.push(informer(`${collectionPath(k, ns)}?${sel}`, {
      reset: (items) => { const j = items.find((x) => x.metadata.name === name); if (j) { job = j; renderJob(); } },
      event: (type, obj) => {
        if (obj.metadata.name !== name) return;
        jobEvents++;
        if (type === 'DELETED') { clear(msg).append(el('p', { class: 'note', role: 'status' }, 'This job has been deleted.')); return; }
        job = obj;
        renderJob();
        renderEvents();
      },
      error: (e) => clear(msg).append(errorBox(e.message)),
    }));
    stoppers.push(informer(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods?labelSelector=${encodeURIComponent(podSelector(k, job))}`, {
      reset: (items) => { pods.clear(); podsListed = true; for (const p of items) pods.set(p.metadata.name, p); renderPods(); },
      event: (type, p) => { if (type === 'DELETED') pods.delete(p.metadata.name); else pods.set(p.metadata.name, p); renderPods(); },
      error: (e) => podBody.replaceChildren(el('tr', {}, el('td', { colspan: '7' }, `Cannot list pods: ${e.message}`))),
    }));
    stoppers.push(informer(`/api/v1/namespaces/${encodeURIComponent(ns)}/events`, {
      reset: (items) => { events.clear(); for (const e of items) events.set(e.metadata.uid, e); renderEvents(); },
      event: (type, e) => { if (type === 'DELETED') events.delete(e.metadata.uid); else events.set(e.metadata.uid, e); renderEvents(); },
      error: () => eventBody.replaceChildren(el('tr', {}, el('td', { colspan: '6' }, 'You may not list events here.'))),
    }));
  }

  start();
  return () => {
    destroyed = true;
    log.ctl?.abort();
    log.ctl = null;
    for (const s of stoppers) s.stop();
    document.title = 'Trainyard console';
  };
}
