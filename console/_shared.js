// Shared helpers for every console page: the SDK handle, the resources the
// pages may touch, DOM building that escapes by construction, formatting and
// navigation.
//
// Escaping rule: nothing in the console assigns HTML strings. Every element is
// made with h(), which sets text through text nodes and attributes through
// setAttribute, so a value from the API (a Disk's model, a status message) is
// always shown as the text it is and never parsed as markup.

// Every page links console.css, the console's own same-origin stylesheet
// (style-src 'self' allows a file; no inline style is used anywhere).
if (!document.querySelector('link[data-console-css]')) {
  document.head.append(h('link', { rel: 'stylesheet', href: new URL('console.css', import.meta.url).href, attrs: { 'data-console-css': '' } }));
}

export const GROUP = 'ceph.fundament.io';
export const VERSION = 'v1alpha1';

// Every Kubernetes resource a page reads or writes. Page scripts call
// fundament.k8s.<verb>(RESOURCES.<key> ...) and nothing else, which is what
// lets definition_test.go prove that the verbs used equal the verbs listed in
// definition.yaml's allowedResources.
export const RESOURCES = {
  disks: { group: 'ceph.fundament.io', version: 'v1alpha1', resource: 'disks' },
  diskpools: { group: 'ceph.fundament.io', version: 'v1alpha1', resource: 'diskpools' },
  diskretirements: { group: 'ceph.fundament.io', version: 'v1alpha1', resource: 'diskretirements' },
  blockstorages: { group: 'ceph.fundament.io', version: 'v1alpha1', resource: 'blockstorages' },
  filestorages: { group: 'ceph.fundament.io', version: 'v1alpha1', resource: 'filestorages' },
  objectstorages: { group: 'ceph.fundament.io', version: 'v1alpha1', resource: 'objectstorages' },
  cephclusters: { group: 'ceph.rook.io', version: 'v1', resource: 'cephclusters' },
  objectbucketclaims: { group: 'objectbucket.io', version: 'v1alpha1', resource: 'objectbucketclaims' },
  objectbuckets: { group: 'objectbucket.io', version: 'v1alpha1', resource: 'objectbuckets' },
};

// sdk returns window.fundament, which /plugins/sdk/v1/plugin-sdk.js defines.
export function sdk() {
  if (!window.fundament) {
    throw new Error('The console SDK (plugin-sdk.js) did not load; this page only works inside the Fundament console.');
  }
  return window.fundament;
}

// h builds an element. props: class, text, attrs {name: value}, on {event:
// handler}, and DOM properties (value, checked, disabled, type, ...).
// Children are nodes, strings (made text nodes) or arrays of either; null and
// false are skipped so conditional children read naturally.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'attrs') for (const [name, v] of Object.entries(value)) { if (v !== undefined && v !== null) el.setAttribute(name, String(v)); }
    else if (key === 'on') for (const [event, handler] of Object.entries(value)) el.addEventListener(event, handler);
    else el[key] = value;
  }
  appendChildren(el, children);
  return el;
}

function appendChildren(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// mount replaces everything in root with nodes.
export function mount(root, ...nodes) {
  root.replaceChildren();
  appendChildren(root, nodes);
}

export function heading(text, level = 2) {
  return h(`h${level}`, { class: 'plugin-heading', text });
}

export function text(value, tag = 'p') {
  return h(tag, { class: 'plugin-text', text: value });
}

export function hint(value) {
  return h('p', { class: 'plugin-hint', text: value });
}

export function button(label, onClick, { secondary = false, type = 'button', name } = {}) {
  return h('button', {
    class: secondary ? 'plugin-button plugin-button-secondary' : 'plugin-button',
    type, text: label, attrs: { 'data-action': name }, on: onClick ? { click: onClick } : undefined,
  });
}

export function actions(...buttons) {
  return h('div', { class: 'plugin-actions' }, ...buttons);
}

// errorBox shows an error (an SdkError carries the API server's message).
export function errorBox(err, prefix = '') {
  const message = err && err.message ? err.message : String(err);
  return h('p', { class: 'plugin-error', attrs: { role: 'alert' }, text: prefix ? `${prefix}: ${message}` : message });
}

// table renders rows as a .plugin-table; each column is {label, cell(row)}
// where cell returns a string or a node.
export function table(columns, rows, { empty = 'None yet.', rowKey } = {}) {
  if (rows.length === 0) return hint(empty);
  return h('table', { class: 'plugin-table' },
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { attrs: { scope: 'col' }, text: c.label })))),
    h('tbody', {}, rows.map((row) => h('tr', { attrs: { 'data-row': rowKey ? rowKey(row) : undefined } },
      columns.map((c) => cell(cellValue(c.cell(row))))))));
}

// LONG_IDENTIFIER is where an identifier starts being cut in a table.
const LONG_IDENTIFIER = 24;

// cell is a table cell. A long identifier (a string without spaces: a name,
// a path) is cut to the cell's width by console.css, whole in its title, and
// so is a link; a sentence wraps instead.
function cell(value) {
  if (typeof value === 'string' && value.length > LONG_IDENTIFIER && !/\s/.test(value)) {
    return h('td', { class: 'console-cut' }, h('span', { class: 'console-truncate', attrs: { title: value }, text: value }));
  }
  const cut = value instanceof Element && value.classList.contains('console-truncate');
  return h('td', { class: cut ? 'console-cut' : undefined }, value);
}

function cellValue(value) {
  if (value === undefined || value === null || value === '') return '—';
  return value;
}

// deflist renders [label, value] pairs as a .plugin-deflist.
export function deflist(pairs) {
  return h('dl', { class: 'plugin-deflist' },
    pairs.filter(Boolean).map(([label, value]) => [h('dt', { text: label }), h('dd', {}, cellValue(value))]));
}

export function card(...children) {
  return h('section', { class: 'plugin-card' }, ...children);
}

// Status badges match definition.yaml's uiHints statusMapping, so the list in
// the host and the pages agree on what a phase means.
const BADGES = {
  Ready: 'success',
  Available: 'success',
  Bound: 'success',
  Provisioning: 'info',
  Pending: 'info',
  InUse: 'neutral',
  Degraded: 'danger',
  Failed: 'danger',
  Lost: 'danger',
  Missing: 'warning',
  // DiskRetirement phases.
  Suspended: 'warning',
  WaitingForReplacement: 'info',
  Draining: 'info',
  StoppingOSD: 'info',
  Removing: 'info',
  Wiping: 'info',
  Aborting: 'warning',
  Retired: 'success',
  Refused: 'danger',
  Cancelled: 'neutral',
  // The CephCluster's phases and Ceph's health (the overview), and a disk
  // two pools list.
  Progressing: 'info',
  Failure: 'danger',
  Deleting: 'warning',
  HEALTH_OK: 'success',
  HEALTH_WARN: 'warning',
  HEALTH_ERR: 'danger',
  Contested: 'warning',
  // Where an upgrade stands (the overview's Upgrade section).
  Waiting: 'info',
  Rolling: 'info',
  Done: 'success',
};
const BADGE_SYMBOLS = { success: '●', info: '◌', neutral: '○', warning: '▲', danger: '✖' };

// badge shows a phase or state with its badge kind as a symbol (pages are
// styled only through the SDK's classes, so the symbol carries the meaning).
export function badge(phase) {
  if (!phase) return h('span', { class: 'plugin-text', attrs: { 'data-badge': 'neutral' }, text: 'Unknown' });
  const kind = BADGES[phase] || 'neutral';
  return h('span', { class: 'plugin-text', attrs: { 'data-badge': kind }, text: `${BADGE_SYMBOLS[kind]} ${phase}` });
}

// link is a button that looks like a row link and navigates on click.
// A long label (a 248-character name) is cut by console.css, whole in its
// title and on the page it opens.
export function link(label, onClick) {
  return h('button', {
    class: 'plugin-button plugin-button-secondary console-truncate', type: 'button', text: label,
    attrs: { 'data-link': label, title: label }, on: { click: onClick },
  });
}

// post sends a protocol message to the console, always to its pinned origin.
function post(type, payload = {}) {
  const origin = sdk().parentOrigin;
  if (!origin) throw new Error(`cannot send ${type} before the console initialised the page`);
  window.parent.postMessage({ type, ...payload }, origin);
}

// navigateToDetail opens a resource's detail page. From a sheet the console
// closes the sheet first.
export function navigateToDetail(kind, name, namespace) {
  post('plugin:navigate', { kind, name, namespace });
}

// openSheet opens a sheet over the page and remembers which control opened
// it, so that focus can return there when the sheet closes (see below).
export function openSheet(request) {
  sheetOpener = openerKey(document.activeElement);
  return sdk().openSheet(request);
}

// Focus return. A sheet takes focus while it is open; when it closes, the
// console focuses the page's frame again (the development console does; the
// host contract says nothing about focus) and the browser puts focus back
// on the element that had it. A page that rendered again meanwhile, or
// renders again just after (a write in the sheet lists it again), no longer
// has that element: the control is then found again by what it is, its
// data-action or data-link, and focused in its new element.
let sheetOpener = null;
let lastFocused = null;

function openerKey(el) {
  if (!el || el === document.body || !(el instanceof HTMLElement)) return null;
  for (const name of ['data-action', 'data-link']) {
    const value = el.getAttribute(name);
    if (value !== null) return { el, selector: `[${name}="${CSS.escape(value)}"]` };
  }
  return { el, selector: null };
}

// restoreFocus focuses key's control, or its successor, when focus was lost
// with it; never while the page lacks focus (a page under an open sheet
// must not take focus from the sheet) or when focus is elsewhere.
function restoreFocus(key) {
  if (!key || !document.hasFocus()) return;
  const current = document.activeElement;
  if (current && current !== document.body) return;
  const target = key.el.isConnected ? key.el : (key.selector && document.querySelector(key.selector));
  if (target) target.focus();
}

document.addEventListener('focusin', (event) => { lastFocused = openerKey(event.target); });

window.addEventListener('focus', () => {
  const key = sheetOpener || lastFocused;
  sheetOpener = null;
  restoreFocus(key);
});

// oncePerFrame returns a function that runs fn at the next animation
// frame, once however often it is called before then: watch events come
// in bursts (discovery rescans a node), and one draw a frame is enough.
export function oncePerFrame(fn) {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; fn(); });
  };
}

// keepingFocus renders again without losing focus.
export async function keepingFocus(render) {
  await render();
  restoreFocus(lastFocused);
}

export function closeSheet() {
  return sdk().closeSheet();
}

const BINARY_SUFFIXES = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIXES = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

// quantityToBytes parses a Kubernetes quantity ("4Ti", "500G", "4000787030016")
// or a number; it returns NaN for anything else.
export function quantityToBytes(quantity) {
  if (typeof quantity === 'number') return quantity;
  if (typeof quantity !== 'string') return NaN;
  const match = /^([0-9]+(?:\.[0-9]+)?)([KMGTPE]i|[kMGTPE])?$/.exec(quantity.trim());
  if (!match) return NaN;
  const multiplier = match[2] ? (BINARY_SUFFIXES[match[2]] || DECIMAL_SUFFIXES[match[2]]) : 1;
  return Number(match[1]) * multiplier;
}

// formatBytes shows a size in binary units; an unparsable value is shown as is.
export function formatBytes(value) {
  const bytes = quantityToBytes(value);
  if (Number.isNaN(bytes)) return value === undefined || value === null ? '' : String(value);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) { n /= 1024; unit += 1; }
  return `${n >= 100 || unit === 0 ? Math.round(n) : n.toFixed(1)} ${units[unit]}`;
}

// formatReplicas shows spec.replicas: absent means automatic sizing.
export function formatReplicas(replicas) {
  return replicas === undefined || replicas === null ? 'Automatic (min(3, nodes))' : String(replicas);
}

export function byName(a, b) {
  return a.metadata.name.localeCompare(b.metadata.name);
}

// capacitySection shows the raw capacity of the CephCluster the DiskPools
// feed (each pool's status names it: the plugin's configured cluster, which
// need not be the only CephCluster there is), or why it cannot.
export async function capacitySection() {
  const section = card(heading('Cluster raw capacity', 3));
  try {
    const { ref, cluster } = await fedCephCluster();
    if (!ref) {
      section.append(hint('No DiskPool feeds a CephCluster yet.'));
      return section;
    }
    const capacity = cluster.status && cluster.status.ceph && cluster.status.ceph.capacity;
    if (!capacity || !capacity.bytesTotal) section.append(hint(`CephCluster ${ref.namespace}/${ref.name} reports no capacity yet.`));
    else section.append(capacityMeter(capacity), hint(`Raw capacity across every OSD of CephCluster ${ref.namespace}/${ref.name}, before replication; shared by every pool and storage kind.`));
  } catch (err) {
    section.append(errorBox(err, 'Could not read the CephCluster'));
  }
  return section;
}

// fedCephCluster reads the DiskPools and the CephCluster they feed: the one
// the first pool by name names in its status (the plugin's configured
// cluster). ref and cluster are null while no pool names one.
export async function fedCephCluster() {
  const { items: pools } = await sdk().k8s.list(RESOURCES.diskpools);
  const ref = [...pools].sort(byName).map((p) => p.status && p.status.cephCluster).find(Boolean) || null;
  const cluster = ref ? await sdk().k8s.get({ ...RESOURCES.cephclusters, namespace: ref.namespace, name: ref.name }) : null;
  return { pools, ref, cluster };
}

export function capacityMeter({ bytesTotal, bytesUsed = 0, bytesAvailable }) {
  const available = bytesAvailable === undefined ? bytesTotal - bytesUsed : bytesAvailable;
  const label = `${formatBytes(bytesUsed)} used of ${formatBytes(bytesTotal)} (${formatBytes(available)} available)`;
  return h('div', { class: 'plugin-field' },
    h('meter', { attrs: { min: 0, max: bytesTotal, value: bytesUsed, high: bytesTotal * 0.75, optimum: 0, 'aria-label': label, 'data-capacity': 'true' } }),
    text(label));
}

// startPage waits for the console's init, keeps the theme in sync, renders
// and renders again whenever a sheet reports a successful write.
//
// Opt-in, a page also follows changes to what it shows:
//
//   startPage(render, { follow: (ctx, changed) => stop })
//
// follow is called once, after the first render; it starts watching (for
// the page's own resource, live.js's followChanges does it: a list, then
// a watch from its resourceVersion) and calls changed() whenever what it
// watches changed, and returns a function that stops it (called when the
// page goes away). startPage renders again at most once every debounceMs
// (default 250 ms; changes in between make one render), never two renders
// at once, and puts keyboard focus back on the control that had it (found
// again by id, data-action or name). A list or detail page of one kind
// takes live.js's followsKind, e.g. disks-detail.js:
//
//   startPage(render, { follow: followsKind({
//     list: (opts) => k8s.list(RESOURCES.disks, opts),
//     watch: (opts) => k8s.watch(RESOURCES.disks, opts),
//   }, { named: true }) });
export function startPage(render, { follow = null, debounceMs = 250 } = {}) {
  const root = document.getElementById('app');
  const fundament = sdk();
  fundament.init.then(async (ctx) => {
    applyTheme(ctx.theme);
    fundament.onThemeChange(applyTheme);
    const run = () => keepingFocus(() => render(root, ctx)).catch((err) => mount(root, errorBox(err)));
    fundament.onResourcesChanged(run);
    await run();
    if (follow) followPage(follow, ctx, run, debounceMs);
  }).catch((err) => mount(root, errorBox(err)));
}

// followPage runs startPage's follow option: changes are gathered for
// debounceMs and renders never overlap.
function followPage(follow, ctx, rerender, debounceMs) {
  let timer = null;
  let running = false;
  let again = false;
  const fire = async () => {
    timer = null;
    if (running) { again = true; return; }
    running = true;
    try { await rerender(); } finally { running = false; }
    if (again) { again = false; changed(); }
  };
  const changed = () => { if (!timer) timer = setTimeout(fire, debounceMs); };
  const stop = follow(ctx, changed);
  if (typeof stop === 'function') window.addEventListener('pagehide', stop, { once: true });
}

function applyTheme(theme) {
  document.body.classList.toggle('dark', theme === 'dark');
  document.body.classList.toggle('light', theme !== 'dark');
}

// field wraps a control with its label and an optional hint.
export function field(label, control, hintText) {
  if (!control.id) control.id = `field-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return h('div', { class: 'plugin-field' },
    h('label', { class: 'plugin-label', attrs: { for: control.id }, text: label }),
    control,
    hintText ? hint(hintText) : null);
}

export function input(name, props = {}) {
  return h('input', { class: 'plugin-input', name, id: `field-${name}`, type: 'text', ...props });
}

export function select(name, options, value) {
  const el = h('select', { class: 'plugin-select', name, id: `field-${name}` });
  setOptions(el, options, value);
  return el;
}

// setOptions replaces the options of a select ([value, label] pairs) and
// selects value.
export function setOptions(el, options, value) {
  el.replaceChildren(...options.map(([optionValue, label]) => h('option', { value: optionValue, text: label })));
  el.value = value;
}

export function checkbox(name, checked, props = {}) {
  return h('input', { class: 'plugin-checkbox', type: 'checkbox', name, id: `field-${name}`, checked, ...props });
}

// form builds a .plugin-form whose submit runs onSubmit with the buttons
// disabled; a failure (a CRD validation error from the API server included)
// is shown verbatim in the form's error slot, and the form stays filled in.
export function form({ children, submitLabel, onSubmit, onCancel }) {
  const errorSlot = h('div', { attrs: { 'data-form-error': 'true' } });
  const submit = button(submitLabel, null, { type: 'submit', name: 'submit' });
  const cancel = onCancel ? button('Cancel', onCancel, { secondary: true, name: 'cancel' }) : null;
  const el = h('form', { class: 'plugin-form', noValidate: false }, children, errorSlot, actions(submit, cancel));
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorSlot.replaceChildren();
    submit.disabled = true;
    try {
      await onSubmit();
    } catch (err) {
      errorSlot.append(errorBox(err));
    } finally {
      submit.disabled = false;
    }
  });
  return el;
}

// replicasOptions is the replica choice every consumer kind offers; the empty
// value means automatic sizing (spec.replicas absent).
export const REPLICAS_OPTIONS = [['', 'Automatic: min(3, nodes)'], ['1', '1'], ['2', '2'], ['3', '3']];

// replicasFromSelect turns the select's value into spec.replicas: null (in a
// merge patch: remove the field, back to automatic) or a number.
export function replicasFromSelect(value) {
  return value === '' ? null : Number(value);
}

// newObject is a new cluster-scoped object of one of our kinds.
export function newObject(kind, name, spec) {
  return { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, spec };
}

// deletionNote is the Deleting card of a detail page: the console deletes
// nothing of ours (allowedResources grants no delete), so it says the
// kubectl command and what survives it.
export function deletionNote(command, survives) {
  return h('section', { class: 'plugin-card', attrs: { 'data-deletion': 'true' } },
    heading('Deleting', 2),
    h('p', { class: 'plugin-text' }, 'The console does not delete it. With kubectl: ', h('code', { attrs: { 'data-delete-command': 'true' }, text: command })),
    h('ul', { class: 'plugin-text' }, survives.map((line) => h('li', { text: line }))));
}
