// util.js - small DOM and formatting helpers shared by the pages.

// el('a', {href: '#/jobs', class: 'x'}, 'text', child...): an element. Text
// always goes in as text nodes, never as HTML: nothing from the API can
// become markup.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// "3d4h", "5m", "12s": kubectl's AGE column.
export function age(timestamp, now = Date.now()) {
  if (!timestamp) return '';
  let s = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  const d = Math.floor(h / 24);
  return `${d}d${h % 24 ? `${h % 24}h` : ''}`;
}

export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// A message for the page's live region (screen readers hear it).
export function announce(text) {
  const region = document.getElementById('announce');
  if (region) region.textContent = text;
}

export function errorBox(text) {
  return el('p', { class: 'error', role: 'alert' }, text);
}

// A confirmation in a modal <dialog>: resolves true on confirm.
export function confirmDialog(text, action, cancel = 'Cancel') {
  return new Promise((resolve) => {
    const yes = el('button', { type: 'button', class: 'danger', id: 'confirm-yes' }, action);
    const no = el('button', { type: 'button', id: 'confirm-no' }, cancel);
    const dlg = el('dialog', { 'aria-labelledby': 'confirm-text' },
      el('p', { id: 'confirm-text' }, text), el('div', { class: 'buttons' }, yes, no));
    const done = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    yes.addEventListener('click', () => done(true));
    no.addEventListener('click', () => done(false));
    dlg.addEventListener('cancel', () => done(false));
    document.body.append(dlg);
    dlg.showModal();
    no.focus();
  });
}
