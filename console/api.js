// api.js - the console's only way to the server: the public API with the
// user's bearer token. Everything it shows is what the API answers to that
// token, so RBAC decides what a user sees.
import { sleep } from './util.js';

const TOKEN_KEY = 'trainyard.token';

export const getToken = () => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (t) => sessionStorage.setItem(TOKEN_KEY, t);
export const clearToken = () => sessionStorage.removeItem(TOKEN_KEY);

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `the server answered ${status}`);
    this.status = status;
    this.reason = body?.reason || '';
    this.body = body;
  }
}

let unauthorized = () => {};
// What to do on a 401 (app.js: back to sign-in).
export function onUnauthorized(fn) { unauthorized = fn; }

// One request; JSON in and out unless raw (then the Response, for streams).
export async function api(path, { method = 'GET', body, contentType, signal, raw = false } = {}) {
  const headers = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = contentType || 'application/json';
  const resp = await fetch(path, {
    method, headers, signal, cache: 'no-store', credentials: 'omit',
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  if (!resp.ok) {
    let doc = null;
    try { doc = await resp.json(); } catch { /* not JSON */ }
    if (resp.status === 401) unauthorized();
    throw new ApiError(resp.status, doc);
  }
  if (raw) return resp;
  return resp.status === 204 ? null : resp.json();
}

// The lines of a streamed body (a watch's JSON events, a followed log).
export async function* lines(resp) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = rest.indexOf('\n')) >= 0) {
        yield rest.slice(0, nl);
        rest = rest.slice(nl + 1);
      }
    }
    rest += decoder.decode();
    if (rest) yield rest;
  } finally {
    reader.releaseLock();
  }
}

const withQuery = (path, q) => path + (path.includes('?') ? '&' : '?') + q;

// Keeps a collection live the way client-go's informers do: list, then
// watch from the list's resourceVersion; a stream that ends is resumed from
// the last version seen; 410 Gone (too old) lists again. No polling: the
// only waits are the back-off after a failure.
//   handlers.reset(items)       the whole collection (after each list)
//   handlers.event(type, obj)   ADDED, MODIFIED or DELETED
//   handlers.error(err)         a list refused (403...): the informer stops
// fromVersion: the resourceVersion of a list the caller has already shown
// (the watch starts there; no second list). Returns { stop() }.
// What each informer is doing, for a look from the browser's console or a
// test that failed (informerStates()).
const states = new Map();
let nextId = 0;
export const informerStates = () => [...states.values()];

export function informer(path, handlers, fromVersion = null) {
  const ctl = new AbortController();
  let rv = fromVersion;
  const state = { path, phase: 'starting', rv, events: 0 };
  const id = nextId++;
  states.set(id, state);
  ctl.signal.addEventListener('abort', () => states.delete(id));
  (async () => {
    let failures = 0;
    while (!ctl.signal.aborted) {
      try {
        if (!rv) {
          state.phase = 'listing';
          const list = await api(path, { signal: ctl.signal });
          rv = list.metadata?.resourceVersion || '0';
          handlers.reset(list.items || []);
        }
        state.phase = 'connecting';
        state.rv = rv;
        const resp = await api(
          withQuery(path, `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`),
          { raw: true, signal: ctl.signal });
        failures = 0;
        state.phase = 'watching';
        for await (const line of lines(resp)) {
          state.events++;
          if (!line.trim()) continue;
          const ev = JSON.parse(line);
          if (ev.type === 'ERROR') {
            if (ev.object?.code === 410) rv = null; // expired: list again
            else throw new ApiError(ev.object?.code || 500, ev.object);
            break;
          }
          const v = ev.object?.metadata?.resourceVersion;
          if (v) rv = v;
          if (ev.type !== 'BOOKMARK') handlers.event(ev.type, ev.object);
        }
        state.phase = 'ended';
      } catch (e) {
        if (ctl.signal.aborted) return;
        state.phase = `failed: ${e.status || ''} ${e.message}`;
        if (e.status === 410) { rv = null; continue; }
        if (e.status === 401 || e.status === 403 || e.status === 404) {
          handlers.error?.(e);
          return;
        }
        failures++;
        await sleep(Math.min(10000, 500 * 2 ** Math.min(failures, 5)), ctl.signal);
      }
    }
  })();
  return { stop: () => ctl.abort() };
}

// Who the token belongs to (SelfSubjectReview, `kubectl auth whoami`):
// { username, groups }, empty when the server does not say.
export async function whoamiInfo() {
  try {
    const r = await api('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    const u = r?.status?.userInfo || {};
    return { username: u.username || '', groups: Array.isArray(u.groups) ? u.groups : [] };
  } catch (e) {
    if (e.status === 401) throw e;
    return { username: '', groups: [] };
  }
}

export async function whoami() {
  return (await whoamiInfo()).username;
}

// Whether the user may do verb on group/resource in namespace ns
// (SelfSubjectAccessReview, `kubectl auth can-i`); false when unsure.
export async function canI(verb, group, resource, ns) {
  try {
    const r = await api('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST',
      body: {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb, group, resource, namespace: ns } },
      },
    });
    return r?.status?.allowed === true;
  } catch (e) {
    if (e.status === 401) throw e;
    return false;
  }
}
