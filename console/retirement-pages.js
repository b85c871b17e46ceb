// Retiring a disk from the console: the Retire and Replace sheet the Disk
// detail page opens, and the pieces the DiskRetirement list and detail pages
// share with it.
//
// The sheet never retires anything on its own say-so. It creates the
// DiskRetirement with spec.suspend true, so the plugin runs its preflight
// and stops (phase Suspended) before touching anything; the operator reads
// the checks and only then confirms, which sets spec.suspend to false. The
// one delete the console makes is here: cancelling, or closing a refused
// preview, deletes the suspended DiskRetirement, which nothing acted on yet.
import {
  RESOURCES, GROUP, VERSION, sdk, h, mount, heading, hint, text, deflist, table, badge, link, formatBytes, oncePerFrame,
  navigateToDetail, closeSheet, actions, button, card, errorBox, field, select, setOptions,
} from './_shared.js';
import { k8s, follow, loadingSentence, followProblem } from './live.js';

// How often the sheet reads the preview while the plugin checks it, and when
// it starts saying that the plugin seems slow.
const POLL_MS = 1000;
const SLOW_MS = 30000;

// Phases in which the retirement has stopped before touching anything.
const PREVIEW_PHASES = new Set(['Suspended', 'Refused']);

// CANCELLABLE_PHASES are those a delete still cancels: the OSD is not
// purged yet, and what was changed is given back.
const CANCELLABLE_PHASES = new Set(['', 'Pending', 'Suspended', 'WaitingForReplacement', 'Draining', 'StoppingOSD', 'Aborting']);
const TERMINAL_PHASES = new Set(['Retired', 'Refused', 'Failed', 'Cancelled']);

const PREFLIGHT_STEP = 'The preflight checks that enough hosts remain for every storage kind\'s replicas; then asks Ceph that every pool keeps its copies, that the data fits below Ceph\'s nearfull ratio where it must go, that no OSD takes more PGs than Ceph allows, that Ceph is healthy but for this disk; and reads the disk\'s label to be sure it holds this OSD.';

export const RETIREMENT_STEPS = [
  'The disk\'s OSD is marked out while it still runs, and Ceph copies its data elsewhere from a full set of copies; the page shows the PGs left.',
  'Once Ceph says the OSD is safe to destroy, it is stopped (its Deployment scaled to zero), then purged from Ceph, which checks once more. From the purge on, the retirement cannot be cancelled; before it, cancelling starts the OSD again and marks it in.',
  'The disk is wiped on its node, after its label is checked to name this OSD, so that Rook does not start the OSD again.',
  'The device leaves the CephCluster and the Disk is marked retired. One retirement runs at a time; a drain that makes no progress is aborted and everything given back.',
];

const REPLACEMENT_STEP = 'First the replacement joins the pool and the retirement waits until it is an OSD, so the cluster\'s capacity never dips.';

// retirementName is the generateName prefix for a disk's retirement: the
// server appends five characters and cuts the prefix to 58, so it is cut
// here to stay a valid name (no trailing dot or dash before the suffix).
export function retirementName(disk) {
  return `${`retire-${disk}`.slice(0, 52).replace(/[-.]+$/, '')}-`;
}

// retireSheet is the DiskRetirement create sheet. params: {disk, replace}.
// The DiskPool edit sheet renders it in place for "Retire instead" (a sheet
// cannot open a sheet over itself): onClose then returns to that form instead
// of closing the sheet, and intro says where the flow was started from.
export async function retireSheet(root, ctx, { onClose = closeSheet, intro = null } = {}) {
  const params = ctx.params || {};
  if (!params.disk) {
    mount(root, errorBox('Open this sheet from a disk\'s detail page: it needs the disk to retire.'));
    return;
  }
  const replace = Boolean(params.replace);
  const check = button('Check first', null, { type: 'submit', name: 'check' });
  // The replacements are listed while the disk is read.
  const choice = replace ? replacementChoice(params.disk, check) : null;
  const leave = () => { if (choice) choice.stop(); };
  let disk;
  try {
    disk = await sdk().k8s.get({ ...RESOURCES.disks, name: params.disk });
  } catch (err) {
    leave();
    throw err;
  }
  const errorSlot = h('div', { attrs: { 'data-form-error': 'true' } });
  const el = h('form', { class: 'plugin-form' },
    choice ? choice.element : null,
    hint('Checking creates a suspended DiskRetirement: the plugin runs its checks and stops before it touches anything. You confirm after reading them.'),
    errorSlot,
    actions(check, button('Cancel', () => { leave(); onClose(); }, { secondary: true, name: 'cancel' })));
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorSlot.replaceChildren();
    check.disabled = true;
    try {
      const spec = { disk: disk.metadata.name, suspend: true };
      if (choice) spec.replacement = choice.value();
      const created = await sdk().k8s.create(RESOURCES.diskretirements, {
        apiVersion: `${GROUP}/${VERSION}`, kind: 'DiskRetirement', metadata: { generateName: retirementName(disk.metadata.name) }, spec,
      });
      leave();
      await awaitPreview(root, created, onClose);
    } catch (err) {
      errorSlot.append(errorBox(err));
      check.disabled = Boolean(choice) && !choice.value();
    }
  });
  mount(root,
    heading(`${replace ? 'Replace' : 'Retire'} disk ${disk.metadata.name}`, 1),
    intro ? hint(intro) : null,
    diskSummary(disk),
    whatHappens(replace),
    el);
}

// replacementChoice is the Replacement disk field: every disk that may
// replace the disk named, in a select that fills in as the Disks arrive in
// pages (live.js, with how far the list is) and follows them while the
// sheet is open. check is enabled while a replacement is selected; once the
// list is complete and none is available, the field says so and check is
// hidden. Returns {element, value(), stop()}; the root
// (data-role="replacement") has data-loaded="complete" once every page is
// in.
function replacementChoice(diskName, check) {
  const candidates = new Map(); // name → Disk that may replace diskName
  let complete = false;
  let shown = '';
  const picker = select('replacement', [], '');
  const pickerField = field('Replacement disk', picker, 'An available disk no pool claims. It joins this disk\'s pool before anything is removed.');
  const progress = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'load-progress', 'aria-live': 'polite' }, text: 'Loading disks…' });
  const problem = h('div', { attrs: { 'data-role': 'live-problem' } });
  const none = h('div', { attrs: { 'data-role': 'no-replacement' } });
  const fieldSlot = h('div', {}, pickerField);
  const element = h('div', { attrs: { 'data-role': 'replacement' } }, fieldSlot, progress, problem, none);
  check.disabled = true;

  const draw = () => {
    const options = [...candidates.values()].map((d) => [d.metadata.name, describeDisk(d)])
      .sort((a, b) => a[1].localeCompare(b[1], undefined, { numeric: true }));
    const key = options.map(([name, label]) => `${name}\u0000${label}`).join('\u0001');
    if (key !== shown) {
      shown = key;
      const keep = candidates.has(picker.value) ? picker.value : (options.length > 0 ? options[0][0] : '');
      setOptions(picker, options, keep);
    }
    const empty = complete && candidates.size === 0;
    if (empty) fieldSlot.replaceChildren();
    else if (!fieldSlot.firstChild) fieldSlot.replaceChildren(pickerField);
    check.hidden = empty;
    check.disabled = !picker.value;
    if (empty) none.replaceChildren(errorBox('No disk is available as a replacement: a replacement must be Available and claimed by no pool.'));
    else none.replaceChildren();
  };
  const drawSoon = oncePerFrame(draw);

  const feed = follow({
    list: (opts) => k8s.list(RESOURCES.disks, opts),
    watch: (opts) => k8s.watch(RESOURCES.disks, opts),
    onChange: (batch) => {
      for (const obj of batch.deleted) candidates.delete(obj.metadata.name);
      for (const obj of batch.upserted) {
        if (mayReplace(obj, diskName)) candidates.set(obj.metadata.name, obj);
        else candidates.delete(obj.metadata.name);
      }
      problem.replaceChildren();
      if (batch.phase === 'watching') { drawSoon(); return; }
      if (batch.phase === 'listing') progress.textContent = loadingSentence('disks', batch.progress);
      else {
        complete = true;
        progress.textContent = '';
        element.dataset.loaded = 'complete';
      }
      draw();
    },
    onError: (err, info) => problem.replaceChildren(followProblem(err, info, { listed: complete, noun: 'disks' })),
    onLive: () => problem.replaceChildren(),
  });
  const stop = () => feed.stop();
  window.addEventListener('pagehide', stop, { once: true });
  return { element, value: () => picker.value, stop };
}

// mayReplace says whether d may replace the disk named: Available, no pool
// claims it, not retired, and not that disk itself.
function mayReplace(d, diskName) {
  const s = d.status || {};
  return d.metadata.name !== diskName && s.state === 'Available' && !s.claimedBy && !isRetired(d);
}

// isRetired says a DiskRetirement removed this Disk's OSD.
export function isRetired(disk) {
  return Boolean(disk.metadata.annotations && disk.metadata.annotations['ceph.fundament.io/retired']);
}

function describeDisk(d) {
  const s = d.status || {};
  return [d.metadata.name, s.size ? formatBytes(s.size) : '', s.type, s.nodeName && s.path ? `${s.path} on ${s.nodeName}` : s.nodeName]
    .filter(Boolean).join(', ');
}

function diskSummary(disk) {
  const s = disk.status || {};
  return deflist([
    ['Disk', disk.metadata.name],
    ['Pool', s.claimedBy],
    ['Node', s.nodeName],
    ['Device', s.stablePath || s.path],
    ['Size', formatBytes(s.size)],
  ]);
}

// whatHappens says, in order, what the retirement will do; checked says the
// preflight has run already.
export function whatHappens(replace, { checked = false } = {}) {
  const steps = [...(replace ? [REPLACEMENT_STEP] : []), ...(checked ? [] : [PREFLIGHT_STEP]), ...RETIREMENT_STEPS];
  return card(
    heading(checked ? 'What happens when you confirm' : 'What happens', 2),
    h('ol', { class: 'plugin-text', attrs: { 'data-steps': 'true' } }, steps.map((step) => h('li', { text: step }))));
}

// awaitPreview polls the retirement until the plugin has checked it, then
// shows the preview; Cancel is offered throughout.
async function awaitPreview(root, created, onClose) {
  const name = created.metadata.name;
  const started = Date.now();
  // Cancel stops the polling: in the DiskPool edit sheet the page lives on
  // after the flow is left.
  let stopped = false;
  const close = () => { stopped = true; onClose(); };
  const waiting = h('div', { attrs: { 'data-waiting': 'true' } });
  const errorSlot = h('div', { attrs: { 'data-form-error': 'true' } });
  mount(root,
    heading(`Checking disk ${created.spec.disk}`, 1),
    waiting,
    errorSlot,
    actions(cancelButton(name, errorSlot, close)));
  for (;;) {
    let current;
    try {
      current = await sdk().k8s.get({ ...RESOURCES.diskretirements, name });
      if (stopped) return;
    } catch (err) {
      if (stopped) return;
      errorSlot.replaceChildren(errorBox(err, 'Could not read the retirement'));
      await sleep(POLL_MS);
      continue;
    }
    errorSlot.replaceChildren();
    const phase = (current.status && current.status.phase) || '';
    if (PREVIEW_PHASES.has(phase)) {
      showPreview(root, current, onClose);
      return;
    }
    if (phase && phase !== 'Pending') {
      // Someone else let it proceed: its page says where it is.
      navigateToDetail('DiskRetirement', name);
      return;
    }
    waiting.replaceChildren(
      text(`DiskRetirement ${name} is created, suspended; the plugin is checking it${current.status && current.status.message ? `: ${current.status.message}` : '…'}`),
      Date.now() - started > SLOW_MS ? hint('The plugin has not checked it yet. Is the plugin running? Cancel deletes it; nothing was touched.') : null);
    await sleep(POLL_MS);
    if (stopped) return;
  }
}

function showPreview(root, retirement, onClose) {
  const name = retirement.metadata.name;
  const s = retirement.status || {};
  const refused = s.phase === 'Refused';
  const errorSlot = h('div', { attrs: { 'data-form-error': 'true' } });
  const confirm = button(retirement.spec.replacement ? 'Confirm: replace the disk' : 'Confirm: retire the disk', async () => {
    errorSlot.replaceChildren();
    confirm.disabled = true;
    try {
      await sdk().k8s.patch({ ...RESOURCES.diskretirements, name }, { spec: { suspend: false } });
      navigateToDetail('DiskRetirement', name);
    } catch (err) {
      errorSlot.append(errorBox(err));
      confirm.disabled = false;
    }
  }, { name: 'confirm' });
  mount(root,
    heading(`${refused ? 'Refused' : 'Ready'}: ${retirement.spec.replacement ? 'replace' : 'retire'} disk ${retirement.spec.disk}`, 1),
    h('p', { class: refused ? 'plugin-error' : 'plugin-text', attrs: { 'data-preview-message': 'true', role: refused ? 'alert' : undefined }, text: s.message || (refused ? 'A check refused the retirement.' : 'Every check passed.') }),
    h('p', { class: 'plugin-text', attrs: { 'data-facts': 'true' }, text: factsLine(retirement) }),
    preflightSection(s.preflight),
    refused
      ? hint('Nothing was touched. Closing deletes this refused retirement; fix what the failed check names and try again.')
      : [whatHappens(Boolean(retirement.spec.replacement), { checked: true }), hint('Cancel deletes the suspended retirement: nothing was touched.')],
    errorSlot,
    actions(
      refused ? null : confirm,
      cancelButton(name, errorSlot, onClose, refused ? 'Close' : 'Cancel', refused ? 'close' : 'cancel')));
}

// factsLine is where the disk is and which OSD it carries, in one line.
function factsLine(retirement) {
  const s = retirement.status || {};
  const spec = retirement.spec || {};
  const osd = formatOSD(s.osdID) || 'No OSD';
  const where = [s.device, s.node ? `on ${s.node}` : '', s.pool ? `in pool ${s.pool}` : ''].filter(Boolean).join(' ');
  return `${osd} on disk ${spec.disk}${where ? ` (${where})` : ''}${spec.replacement ? `; replacement ${spec.replacement}` : ''}.`;
}

// cancelButton deletes the suspended retirement and closes the sheet (or
// returns to whatever opened the flow, through onClose).
function cancelButton(name, errorSlot, onClose, label = 'Cancel', action = 'cancel') {
  const el = button(label, async () => {
    errorSlot.replaceChildren();
    el.disabled = true;
    try {
      await sdk().k8s.delete({ ...RESOURCES.diskretirements, name });
      onClose();
    } catch (err) {
      errorSlot.append(errorBox(err, 'Could not delete the suspended retirement'));
      el.disabled = false;
    }
  }, { secondary: true, name: action });
  return el;
}

// retirementFacts are where the disk is and which OSD it carries, the disks
// and pool linked to their pages.
export function retirementFacts(retirement) {
  const s = retirement.status || {};
  const spec = retirement.spec || {};
  const diskLink = (name) => (name ? link(name, () => navigateToDetail('Disk', name)) : name);
  return deflist([
    ['Disk', diskLink(spec.disk)],
    ['Replacement', spec.replacement ? diskLink(spec.replacement) : 'None'],
    ['Pool', s.pool ? link(s.pool, () => navigateToDetail('DiskPool', s.pool)) : s.pool],
    ['Node', s.node],
    ['Device', s.device],
    ['OSD', formatOSD(s.osdID)],
  ]);
}

export function formatOSD(osdID) {
  return osdID === undefined || osdID === null ? '' : `osd.${osdID}`;
}

// preflightSection lists each check with whether it passed and why.
export function preflightSection(checks) {
  return card(
    heading('Preflight checks', 2),
    table([
      { label: 'Check', cell: (c) => c.name },
      { label: 'Result', cell: (c) => h('span', { class: 'plugin-text', attrs: { 'data-badge': c.passed ? 'success' : 'danger', 'data-passed': String(Boolean(c.passed)) }, text: c.passed ? '● Passed' : '✖ Failed' }) },
      { label: 'Message', cell: (c) => c.message },
    ], checks || [], { empty: 'No checks made yet.', rowKey: (c) => c.name }));
}

// deletionHint says what kubectl delete does in this phase.
export function deletionHint(retirement) {
  const phase = (retirement.status && retirement.status.phase) || '';
  const name = retirement.metadata.name;
  if (TERMINAL_PHASES.has(phase)) {
    return hint(`kubectl delete diskretirement ${name} only removes this record. A retired disk stays out of the CephCluster, even then, until its ceph.fundament.io/retired annotation is removed (after wiping it).`);
  }
  if (CANCELLABLE_PHASES.has(phase)) {
    return hint(`kubectl delete diskretirement ${name} cancels it: the OSD is not purged yet; it is started again and marked in before the retirement goes.`);
  }
  return hint(`The OSD is purged: this retirement can no longer be cancelled. Deleting it waits until the device is wiped and out of the CephCluster.`);
}

function sleep(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}
