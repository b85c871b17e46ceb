// The development console's host page: the menu from definition.yaml, the
// plugin's list and detail pages in iframes from the plugin origin, sheets,
// and the fundament:* / plugin:* message protocol (spec/console-host.md).
const PROTOCOL_VERSION = 1;
const READY_TIMEOUT_MS = 5000;
const SANDBOX = 'allow-scripts allow-same-origin allow-forms';

const config = await fetch('/host/config.json').then((r) => {
  if (!r.ok) throw new Error(`host configuration: ${r.status}`);
  return r.json();
});
let token = config.token;
let tokenExpiresAt = config.tokenExpiresAt;
let theme = 'light';
const frames = { page: null, sheet: null };
// Every protocol message the host received, for people and tests to inspect.
window.devconsoleEvents = [];

document.getElementById('plugin-name').textContent = config.pluginName;
document.getElementById('theme-toggle').addEventListener('click', toggleTheme);
document.getElementById('sheet-close').addEventListener('click', closeSheet);
window.addEventListener('popstate', renderRoute);
window.addEventListener('message', onMessage);
// Escape on the host's own sheet chrome (its close button) closes the sheet,
// as Escape inside the sheet's page does (the page asks with closeSheet).
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && frames.sheet) closeSheet();
});
renderMenu();
renderRoute();

function renderMenu() {
  const nav = document.getElementById('menu');
  for (const [section, entries] of Object.entries(config.menu)) {
    if (!entries || entries.length === 0) continue;
    const heading = document.createElement('h2');
    heading.textContent = section;
    nav.append(heading);
    for (const entry of entries) {
      const a = document.createElement('a');
      a.href = `/view/${entry.crd}`;
      a.textContent = entry.label || entry.kind;
      a.dataset.crd = entry.crd;
      a.addEventListener('click', (event) => {
        event.preventDefault();
        go(a.href);
      });
      nav.append(a);
    }
  }
}

// route reads /view/<crd>[/<name>][?namespace=ns].
function route() {
  const parts = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'view' || !parts[1]) return null;
  const kind = config.kindsByCRD[parts[1]];
  const namespace = new URLSearchParams(location.search).get('namespace') || undefined;
  return { crd: parts[1], kind, view: parts[2] ? 'detail' : 'list', name: parts[2], namespace };
}

function go(url) {
  history.pushState(null, '', url);
  renderRoute();
}

function renderRoute() {
  closeSheet();
  const current = route();
  if (!current) {
    const first = Object.values(config.menu).flat()[0];
    return first ? go(`/view/${first.crd}`) : showError(document.getElementById('page-error'), 'The plugin has no menu entries.');
  }
  for (const a of document.querySelectorAll('#menu a')) {
    if (a.dataset.crd === current.crd) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const file = component(current.kind, current.view);
  const errorEl = document.getElementById('page-error');
  if (!file) return showError(errorEl, `${current.kind || current.crd} has no ${current.view} page`);
  const resource = current.name ? { name: current.name, namespace: current.namespace } : undefined;
  frames.page = mountFrame('page', file, { crdKind: current.kind, view: current.view, resource });
}

function component(kind, view) {
  return kind && config.components[kind] && config.components[kind][view];
}

// mountFrame replaces the iframe in a slot ('page' or 'sheet') with a page
// and remembers the context it is initialised with when it reports ready.
function mountFrame(slot, file, context) {
  const errorEl = document.getElementById(`${slot}-error`);
  errorEl.hidden = true;
  const iframe = document.createElement('iframe');
  iframe.id = `${slot}-frame`;
  iframe.setAttribute('sandbox', SANDBOX);
  iframe.title = `${context.crdKind} ${context.view}`;
  iframe.src = config.pageBase + encodeURIComponent(file);
  const record = { slot, iframe, context, ready: false };
  record.timer = setTimeout(() => {
    if (!record.ready) showError(errorEl, `The plugin page ${file} did not report ready within ${READY_TIMEOUT_MS / 1000} s.`);
  }, READY_TIMEOUT_MS);
  document.getElementById(`${slot}-frame-slot`).replaceChildren(iframe);
  return record;
}

function showError(el, message) {
  el.textContent = message;
  el.hidden = false;
}

function recordFor(source) {
  return Object.values(frames).find((f) => f && f.iframe.contentWindow === source) || null;
}

function post(record, message) {
  if (record && record.iframe.contentWindow) record.iframe.contentWindow.postMessage(message, config.pluginOrigin);
}

function onMessage(event) {
  const record = recordFor(event.source);
  if (!record || event.origin !== config.pluginOrigin) return;
  const data = event.data || {};
  if (typeof data.type !== 'string' || !data.type.startsWith('plugin:')) return;
  window.devconsoleEvents.push({ slot: record.slot, type: data.type, data });
  switch (data.type) {
    case 'plugin:ready': return initFrame(record);
    case 'plugin:resize': record.iframe.style.height = `${Math.max(0, Number(data.height) || 0) + 4}px`; return undefined;
    case 'plugin:navigate': return navigate(record, data);
    case 'plugin:navigate-back': return history.back();
    case 'plugin:create': return openSheet({ kind: record.context.crdKind, view: 'create' });
    case 'plugin:open-sheet': return openSheet(data);
    case 'plugin:close-sheet': return closeSheet();
    case 'plugin:resources-changed': return broadcastChange(record);
    case 'plugin:request-token-refresh': return refreshToken();
    default: return undefined;
  }
}

function initFrame(record) {
  record.ready = true;
  clearTimeout(record.timer);
  // Focus follows the sheet: the console contract says nothing about focus,
  // so this host moves it into a sheet's iframe when the sheet is ready; the
  // sheet's page then puts it on its first field (a page cannot focus
  // anything in a frame the browser has not focused).
  if (record.slot === 'sheet') record.iframe.focus();
  post(record, {
    type: 'fundament:init',
    protocolVersion: PROTOCOL_VERSION,
    theme,
    pluginName: config.pluginName,
    crdKind: record.context.crdKind,
    view: record.context.view,
    resource: record.context.resource,
    namespaces: config.namespaces,
    kubeApiProxyUrl: config.kubeApiProxyUrl,
    clusterId: config.clusterId,
    params: record.context.params,
    token,
    tokenExpiresAt,
  });
}

// navigate opens a detail page; from a sheet the sheet closes first.
function navigate(record, data) {
  const kind = data.kind || record.context.crdKind;
  const crd = config.crdsByKind[kind];
  if (!crd || !component(kind, 'detail')) return showError(document.getElementById('page-error'), `${kind} has no detail page`);
  const query = data.namespace ? `?namespace=${encodeURIComponent(data.namespace)}` : '';
  return go(`/view/${crd}/${encodeURIComponent(data.name)}${query}`);
}

function openSheet(request) {
  const file = component(request.kind, request.view);
  const sheet = document.getElementById('sheet');
  sheet.hidden = false;
  const title = document.getElementById('sheet-title');
  title.textContent = [request.view, request.kind, request.name].filter(Boolean).join(' ');
  title.title = title.textContent;
  if (!file) {
    document.getElementById('sheet-frame-slot').replaceChildren();
    return showError(document.getElementById('sheet-error'), `${request.kind} has no ${request.view} sheet`);
  }
  const resource = request.name ? { name: request.name, namespace: request.namespace } : undefined;
  frames.sheet = mountFrame('sheet', file, { crdKind: request.kind, view: request.view, resource, params: request.params });
  return undefined;
}

function closeSheet() {
  const wasOpen = !document.getElementById('sheet').hidden;
  if (frames.sheet) clearTimeout(frames.sheet.timer);
  frames.sheet = null;
  document.getElementById('sheet-frame-slot').replaceChildren();
  document.getElementById('sheet').hidden = true;
  // Focus goes back to the page under the sheet, which the contract leaves
  // unsaid: this host focuses the page's iframe, and the page, regaining
  // focus, returns it to the control that opened the sheet (_shared.js
  // openSheet remembers it).
  if (wasOpen && frames.page) frames.page.iframe.focus();
}

// A write in a sheet makes the page under it list again.
function broadcastChange(source) {
  for (const record of Object.values(frames)) {
    if (record && record !== source && record.ready) post(record, { type: 'fundament:resources-changed' });
  }
}

async function refreshToken() {
  try {
    const response = await fetch('/host/token', { method: 'POST' });
    if (!response.ok) throw new Error(`token refresh: ${response.status}`);
    ({ token, tokenExpiresAt } = await response.json());
    for (const record of Object.values(frames)) if (record && record.ready) post(record, { type: 'fundament:token-refreshed', token, tokenExpiresAt });
  } catch (err) {
    for (const record of Object.values(frames)) if (record && record.ready) post(record, { type: 'fundament:auth-failed', reason: err.message });
  }
}

function toggleTheme() {
  theme = theme === 'dark' ? 'light' : 'dark';
  document.body.className = theme;
  document.getElementById('theme-toggle').textContent = theme === 'dark' ? 'Light theme' : 'Dark theme';
  for (const record of Object.values(frames)) if (record && record.ready) post(record, { type: 'fundament:theme-changed', theme });
}
