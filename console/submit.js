// submit.js - a manifest editor: YAML or JSON sent to the API as it is
// (the server reads both), validated first with a dry run; the API's 422
// causes are listed with their field paths, each a button that selects the
// field's line in the editor.
import { api } from './api.js';
import { KINDS } from './kinds.js';
import { clear, el, errorBox } from './util.js';
import { toYaml } from './yaml.js';
import { mountSubmitForm } from './submitform.js';

const EXAMPLE = `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: hello
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: pytorch
            image: python:3
            command: ["python3", "-c", "print('hello')"]
`;

const unquote = (s) => s.replace(/^(["'])(.*)\1$/, '$2');

// apiVersion, kind and metadata.name/namespace of a JSON or single-document
// YAML manifest (only what the request's path needs: the server parses it).
function head(text) {
  const t = text.trim();
  if (t.startsWith('{')) {
    const o = JSON.parse(t);
    return { json: true, apiVersion: o.apiVersion, kind: o.kind, name: o.metadata?.name, ns: o.metadata?.namespace };
  }
  if (/^---\s*$/m.test(t.replace(/^---\s*\n/, ''))) throw new Error('one object at a time: this text holds several YAML documents');
  const top = (key) => { const m = t.match(new RegExp(`^${key}:[ \\t]*(\\S.*?)[ \\t]*$`, 'm')); return m ? unquote(m[1]) : undefined; };
  const meta = t.match(/^metadata:[ \t]*\n((?:[ \t]+.*\n?|\s*\n)*)/m)?.[1] || '';
  const sub = (key) => { const m = meta.match(new RegExp(`^[ \\t]+${key}:[ \\t]*(\\S.*?)[ \\t]*$`, 'm')); return m ? unquote(m[1]) : undefined; };
  return { json: false, apiVersion: top('apiVersion'), kind: top('kind'), name: sub('name'), ns: sub('namespace') };
}

// The line (0-based) of a field path such as spec.x.Master.template.spec in
// YAML text, following indentation; -1 when not found. List indices ([0])
// and map keys in brackets are skipped.
export function lineOfField(text, field) {
  const segs = field.replace(/\[[^\]]*\]/g, '').split('.').filter(Boolean);
  const lines = text.split('\n');
  let from = 0;
  let indent = -1;
  let found = -1;
  for (const seg of segs) {
    found = -1;
    for (let i = from; i < lines.length; i++) {
      const m = lines[i].match(/^(\s*)(?:-\s+)?(["']?)([^:"']+)\2:(\s|$)/);
      if (!m) continue;
      const ind = lines[i].length - lines[i].trimStart().length + (lines[i].trimStart().startsWith('- ') ? 2 : 0);
      if (i > from && ind <= indent && lines[i].trim()) break; // left the parent
      if (m[3] === seg && ind > indent) { found = i; from = i; indent = ind; break; }
    }
    if (found < 0) return -1;
  }
  return found;
}

async function pluralOf(apiVersion, kind) {
  const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const doc = await api(path);
  const r = (doc.resources || []).find((x) => x.kind === kind && !x.name.includes('/'));
  if (!r) throw new Error(`${apiVersion} has no kind ${kind}`);
  return r;
}

export function mount(container) {
  const text = el('textarea', { id: 'manifest-text', rows: '22', cols: '80', spellcheck: 'false', 'aria-describedby': 'submit-help' });
  text.value = sessionStorage.getItem('trainyard.draft') || EXAMPLE;
  const ns = el('input', { id: 'submit-ns', type: 'text', autocomplete: 'off', value: 'default' });
  const validate = el('button', { type: 'button', id: 'validate' }, 'Validate');
  const submit = el('button', { type: 'submit', id: 'submit' }, 'Submit');
  const out = el('div', { id: 'submit-result', 'aria-live': 'polite' });
  const form = el('form', { class: 'submit' },
    el('label', { for: 'manifest-text' }, 'Manifest (YAML or JSON)'),
    el('p', { id: 'submit-help', class: 'note' }, 'One object. Validate asks the server (a dry run: nothing is stored); errors name their fields.'),
    text,
    el('div', { class: 'inline' }, el('label', { for: 'submit-ns' }, 'Namespace (when the manifest names none)'), ns, validate, submit),
    out);
  container.append(el('h1', {}, 'Submit'));
  mountSubmitForm(container, toYaml, (yaml, namespace) => {
    text.value = yaml;
    ns.value = namespace;
    sessionStorage.setItem('trainyard.draft', yaml);
    clear(out);
  });
  container.append(form);
  text.addEventListener('input', () => sessionStorage.setItem('trainyard.draft', text.value));

  function selectLine(n) {
    const lines = text.value.split('\n');
    const start = lines.slice(0, n).reduce((a, l) => a + l.length + 1, 0);
    text.focus();
    text.setSelectionRange(start, start + lines[n].length);
    const lh = text.scrollHeight / Math.max(lines.length, 1);
    text.scrollTop = Math.max(0, n * lh - text.clientHeight / 2);
  }

  function showError(e, isJson) {
    const causes = e.body?.details?.causes || [];
    // with causes, the message's list of them is said again below, one a line
    clear(out).append(errorBox(causes.length ? e.message.replace(/: \[.*\]$/s, ':') : e.message));
    if (!causes.length) return;
    out.append(el('ul', { class: 'causes', id: 'causes' }, ...causes.map((c) => {
      const line = isJson ? -1 : lineOfField(text.value, c.field || '');
      return el('li', { dataset: { field: c.field || '' } },
        line >= 0
          ? el('button', { type: 'button', class: 'link', onclick: () => selectLine(line) }, `${c.field} (line ${line + 1})`)
          : el('code', {}, c.field || '(object)'),
        `: ${c.message}`);
    })));
  }

  async function send(dryRun) {
    clear(out);
    let h;
    try {
      h = head(text.value);
      if (!h.apiVersion || !h.kind) throw new Error('the manifest needs apiVersion and kind');
    } catch (e) {
      out.append(errorBox(e.message));
      return;
    }
    try {
      const r = await pluralOf(h.apiVersion, h.kind);
      const base = h.apiVersion.includes('/') ? `/apis/${h.apiVersion}` : `/api/${h.apiVersion}`;
      const nsName = h.ns || ns.value.trim() || 'default';
      const path = r.namespaced ? `${base}/namespaces/${encodeURIComponent(nsName)}/${r.name}` : `${base}/${r.name}`;
      const created = await api(`${path}${dryRun ? '?dryRun=All' : ''}`, {
        method: 'POST', body: text.value, contentType: h.json ? 'application/json' : 'application/yaml',
      });
      const name = created?.metadata?.name || h.name;
      if (dryRun) {
        out.append(el('p', { class: 'ok', role: 'status' }, `Valid: the server would create ${h.kind} ${name}.`));
        return;
      }
      const k = KINDS.find((x) => x.group === h.apiVersion.split('/')[0] && x.kind === h.kind);
      out.append(el('p', { class: 'ok', role: 'status' }, `Created ${h.kind} ${name}. `,
        k ? el('a', { href: `#/jobs/${k.id}/${encodeURIComponent(created.metadata.namespace)}/${encodeURIComponent(name)}` }, 'Open its page') : ''));
      sessionStorage.removeItem('trainyard.draft');
    } catch (e) {
      showError(e, h.json);
    }
  }
  validate.addEventListener('click', () => send(true));
  form.addEventListener('submit', (ev) => { ev.preventDefault(); send(false); });
  return () => {};
}
