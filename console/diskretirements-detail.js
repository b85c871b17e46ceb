// DiskRetirement detail: where the retirement is, what was checked, and what
// is left to do by hand. The page follows the retirement as the plugin
// moves it from phase to phase.
import {
  RESOURCES, sdk, h, mount, heading, hint, deflist, badge, card, actions, button, errorBox, startPage,
} from './_shared.js';
import { k8s, followsKind } from './live.js';
import { retirementFacts, preflightSection, deletionHint, whatHappens } from './retirement-pages.js';

startPage(render, {
  follow: followsKind({
    list: (opts) => k8s.list(RESOURCES.diskretirements, opts),
    watch: (opts) => k8s.watch(RESOURCES.diskretirements, opts),
  }, { named: true }),
});

async function render(root, ctx) {
  const retirement = await sdk().k8s.get({ ...RESOURCES.diskretirements, name: ctx.resource.name });
  const s = retirement.status || {};
  const phase = s.phase || 'Pending';
  mount(root,
    heading(`Disk retirement ${retirement.metadata.name}`, 1),
    s.manualSteps ? manualSteps(s.manualSteps, phase === 'Retired') : null,
    phase === 'Suspended' ? proceedSection(root, ctx, retirement) : null,
    card(
      heading('Status', 2),
      deflist([
        ['Phase', badge(phase)],
        ['Message', s.message],
        ['PGs left', s.pgsLeft === undefined ? '' : `${s.pgsLeft} (PGs Ceph still maps to the OSD)`],
        ['OSD marked out', s.markedOut ? 'Yes: Ceph moves its data elsewhere' : 'No'],
        ['OSD stopped', s.osdStopped ? 'Yes: its Deployment is scaled to zero' : 'No'],
        ['Purged', s.purged ? 'Yes: Ceph no longer has the OSD' : 'No'],
        ['Ceph Job', s.cephJob ? `${s.cephJob} (the question to Ceph the retirement waits on, in the CephCluster's namespace)` : ''],
        ['Aborted because', s.abortReason || ''],
      ]),
      retirementFacts(retirement)),
    preflightSection(s.preflight),
    h('section', { class: 'plugin-card', attrs: { 'data-deletion': 'true' } }, heading('Deleting', 2), deletionHint(retirement)));
}

// manualSteps is what the operator must still do; once the disk is retired
// it comes first and is marked as needing attention.
function manualSteps(steps, retired) {
  return card(
    heading(retired ? 'To do by hand before this disk is used again' : 'Manual steps', 2),
    h('pre', { class: retired ? 'plugin-error' : 'plugin-text', attrs: { 'data-manual-steps': 'true', role: retired ? 'alert' : undefined }, text: steps }));
}

// proceedSection lets a suspended retirement (its sheet was closed without
// an answer) proceed; cancelling it is a kubectl delete, as for every kind.
function proceedSection(root, ctx, retirement) {
  const errorSlot = h('div', { attrs: { 'data-form-error': 'true' } });
  const proceed = button('Confirm: proceed', async () => {
    errorSlot.replaceChildren();
    proceed.disabled = true;
    try {
      await sdk().k8s.patch({ ...RESOURCES.diskretirements, name: retirement.metadata.name }, { spec: { suspend: false } });
      await render(root, ctx);
    } catch (err) {
      errorSlot.append(errorBox(err));
      proceed.disabled = false;
    }
  }, { name: 'proceed' });
  return card(
    heading('Awaiting confirmation', 2),
    hint('The checks ran and nothing was touched. Read them below; confirming lets the retirement proceed.'),
    whatHappens(Boolean(retirement.spec && retirement.spec.replacement), { checked: true }),
    errorSlot,
    actions(proceed));
}
