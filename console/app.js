// app.js - the console's entry: sign-in, the router (hash routes, so that
// every page has its own URL, deep links and the back button work, and the
// server serves one index.html) and the header.
import { api, clearToken, getToken, informerStates, onUnauthorized, setToken, whoami } from './api.js';
import { announce, clear, confirmDialog, el, errorBox } from './util.js';
import * as jobsPage from './jobs.js';
import * as jobPage from './job.js';
import * as clusterPages from './cluster.js';
import * as submitPage from './submit.js';

const main = document.getElementById('main');
let unmount = null;
let afterSignIn = '#/jobs';

// A token handed over in the fragment (#token=..., for scripts and tests)
// goes out of the address bar and the history at once, before anything
// else runs. It is stored only when no other token is: a link that signs
// the tab in as someone else (a login CSRF: a page of another site linking
// here with its author's token, so that what the user submits next lands
// in that account) must not replace the user's sign-in unasked. With one
// already stored, the page asks first (showing who the link's token is)
// and keeps the current sign-in unless told otherwise.
let handOverAsked = false;
function takeFragmentToken() {
  const h = location.hash;
  if (!h.startsWith('#token=')) return;
  const params = new URLSearchParams(h.slice(1));
  const token = params.get('token');
  const next = params.get('next');
  history.replaceState(null, '', `${location.pathname}${location.search}${next && next.startsWith('#/') ? next : '#/jobs'}`);
  if (!token || token === getToken()) return;
  if (!getToken()) {
    setToken(token);
    document.getElementById('who').textContent = ''; // asked again for this token
    return;
  }
  if (handOverAsked) return; // one question at a time; the second link is dropped
  handOverAsked = true;
  askToReplace(token).finally(() => { handOverAsked = false; });
}

async function askToReplace(token) {
  let who = 'another user';
  try {
    // whose token the link carries, asked with that token alone
    const r = await fetch('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST', cache: 'no-store', credentials: 'omit',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    const name = r.ok ? (await r.json())?.status?.userInfo?.username : '';
    if (!r.ok) who = 'a token the server refuses';
    else if (name) who = name;
  } catch { /* unknown: the question says so */ }
  const current = document.getElementById('who').textContent.replace(/^Signed in as /, '') || 'your current user';
  const yes = await confirmDialog(
    `A link asks to sign this tab in as ${who}, replacing ${current}. Only accept a link you made yourself.`,
    'Sign in as the link says', 'Keep my sign-in');
  if (!yes) { announce('Kept the current sign-in'); return; }
  setToken(token);
  document.getElementById('who').textContent = '';
  route();
}

function signOut() {
  clearToken();
  document.getElementById('who').textContent = '';
  location.hash = '#/signin';
}

onUnauthorized(() => {
  if (location.hash.startsWith('#/signin')) return;
  clearToken();
  afterSignIn = location.hash || '#/jobs';
  location.hash = '#/signin?expired=1';
});

async function showUser() {
  const who = document.getElementById('who');
  try {
    const name = await whoami();
    who.textContent = name ? `Signed in as ${name}` : '';
  } catch { /* 401: the handler has taken over */ }
}

function signInPage(container, params) {
  const input = el('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const msg = el('div', { 'aria-live': 'assertive' });
  if (params.get('expired')) msg.append(errorBox('Your session ended or the token was refused: sign in again.'));
  const form = el('form', { class: 'signin', 'aria-labelledby': 'signin-title' },
    el('h1', { id: 'signin-title' }, 'Sign in'),
    el('p', {}, 'Paste a bearer token for this server (the token in your kubeconfig: ',
      el('code', {}, 'trainyard kubeconfig'), ' or ', el('code', {}, 'trainyard user add'), ' makes one).'),
    el('label', { for: 'token' }, 'Bearer token'), input,
    el('button', { type: 'submit' }, 'Sign in'), msg);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(msg);
    setToken(input.value.trim());
    try {
      await api('/api');
      location.hash = afterSignIn.startsWith('#/signin') ? '#/jobs' : afterSignIn;
    } catch (e) {
      clearToken();
      msg.append(errorBox(e.status === 401 ? 'The server refused this token.' : `Cannot reach the server: ${e.message}`));
    }
  });
  container.append(form);
  input.focus();
  return () => {};
}

// Routes: #/signin, #/jobs, #/jobs/<kind>/<namespace>/<name>, #/queues, #/nodes,
// #/submit.
function route() {
  const hash = location.hash || '#/jobs';
  const [pathPart, query = ''] = hash.slice(1).split('?');
  const parts = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query);
  unmount?.();
  unmount = null;
  clear(main);
  const signedIn = !!getToken();
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('signout').hidden = !signedIn;
  if (parts[0] !== 'signin' && !signedIn) {
    afterSignIn = hash;
    location.replace('#/signin');
    return;
  }
  for (const a of document.querySelectorAll('#nav a'))
    if (a.dataset.route === parts[0]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  if (parts[0] === 'signin') unmount = signInPage(main, params);
  else if (parts[0] === 'jobs' && parts.length === 4) unmount = jobPage.mount(main, { kind: parts[1], ns: parts[2], name: parts[3] });
  else if (parts[0] === 'jobs' || parts.length === 0) unmount = jobsPage.mount(main, params);
  else if (parts[0] === 'queues') unmount = clusterPages.mountQueues(main);
  else if (parts[0] === 'nodes') unmount = clusterPages.mountNodes(main);
  else if (parts[0] === 'submit') unmount = submitPage.mount(main);
  else main.append(el('h1', {}, 'Not found'), el('p', {}, el('a', { href: '#/jobs' }, 'Back to the jobs')));
  // a new page: screen readers and the keyboard start at its content
  if (parts[0] !== 'signin') main.focus({ preventScroll: true });
  if (signedIn && !document.getElementById('who').textContent) showUser();
}

// for a look from the browser's console (and the tests): what is watched
window.trainyardInformers = informerStates;

takeFragmentToken();
document.getElementById('signout').addEventListener('click', signOut);
// (a #token= link opened while the page is loaded is a same-document
// navigation: only hashchange sees it)
window.addEventListener('hashchange', () => { takeFragmentToken(); route(); });
route();
