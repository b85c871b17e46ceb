// DiskPool create and edit forms, shown in a sheet.
import {
  RESOURCES, sdk, h, mount, heading, hint, field, input, form, newObject, navigateToDetail, closeSheet,
  errorBox, actions, button,
} from './_shared.js';
import { createDiskPicker } from './disk-picker.js';
import { retireSheet } from './retirement-pages.js';
import { k8s, follow } from './live.js';
import { tiersOf, unionAfterEdit, metadataMoves, classOSDs } from './tiers.js';

// diskPoolForm renders the create or edit form for ctx.view. The form is
// there at once; the picker fills as the disks arrive, in pages, and
// follows them while the sheet is open.
export async function diskPoolForm(root, ctx) {
  if (ctx.view === 'edit') return editForm(root, ctx);
  return createForm(root);
}

// feedPicker lists the disks into the picker and keeps it current.
function feedPicker(picker) {
  const feed = follow({
    list: (opts) => k8s.list(RESOURCES.disks, opts),
    watch: (opts) => k8s.watch(RESOURCES.disks, opts),
    onChange: (batch) => picker.update(batch),
    onError: (err, info) => picker.problem(err, info),
    onLive: () => picker.problem(null),
  });
  window.addEventListener('pagehide', () => feed.stop(), { once: true });
}

function createForm(root) {
  const name = input('name', { required: true, autocomplete: 'off' });
  let moves = null;
  const picker = createDiskPicker({ onChange: () => moves.update() });
  moves = metadataMoveNote(picker, () => name.value.trim());
  mount(root,
    heading('New disk pool', 1),
    hint('The selected disks become OSDs of the cluster\'s single CephCluster; every storage kind shares them.'),
    form({
      children: [field('Name', name), picker.element, moves.element],
      submitLabel: 'Create disk pool',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        const created = await sdk().k8s.create(RESOURCES.diskpools, newObject('DiskPool', name.value.trim(), { disks: picker.selectedDisks() }));
        navigateToDetail('DiskPool', created.metadata.name);
      },
    }));
  feedPicker(picker);
}

async function editForm(root, ctx) {
  const pool = await sdk().k8s.get({ ...RESOURCES.diskpools, name: ctx.resource.name });
  let moves = null;
  const picker = createDiskPicker({
    poolName: pool.metadata.name, selected: (pool.spec && pool.spec.disks) || [],
    onRetire: (disk) => retireInstead(root, ctx, pool.metadata.name, picker, disk),
    onChange: () => moves.update(),
  });
  moves = metadataMoveNote(picker, () => pool.metadata.name);
  mount(root,
    heading(`Edit disk pool ${pool.metadata.name}`, 1),
    form({
      children: [picker.element, moves.element],
      submitLabel: 'Save',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        // A merge patch replaces arrays whole: the list sent is the pool's list.
        await sdk().k8s.patch({ ...RESOURCES.diskpools, name: pool.metadata.name }, { spec: { disks: picker.selectedDisks() } });
        closeSheet();
      },
    }));
  feedPicker(picker);
}

// retireInstead shows, in this sheet, the retire flow the Disk detail page
// opens (the host keeps one sheet: a sheet opened from a sheet would replace
// this form). The disk stays checked, as the pool's list keeps it: the
// retirement takes it out of Ceph. Cancelling the flow, which deletes the
// suspended preview, comes back to this form as it was left.
async function retireInstead(root, ctx, poolName, picker, disk) {
  picker.keep(disk);
  const form = [...root.childNodes];
  const back = () => root.replaceChildren(...form);
  try {
    await retireSheet(root, { ...ctx, crdKind: 'DiskRetirement', view: 'create', resource: undefined, params: { disk } }, {
      onClose: back,
      intro: `Instead of taking ${disk} out of pool ${poolName}'s list, which would leave its OSD running. Cancel returns to the pool's form; confirming opens the retirement and leaves the form unsaved.`,
    });
  } catch (err) {
    mount(root, errorBox(err, `Could not start retiring ${disk}`), actions(button('Back to the pool', back, { secondary: true, name: 'back' })));
  }
}

// metadataMoveNote says, before saving, whose metadata pools the pool's
// disks as picked would move to another class (tiers.js metadataMoves):
// a FileStorage's or an ObjectStorage's automatic metadata goes to the
// fastest class whose hosts keep its copies, so the first nvme disks on
// enough hosts take it there, and taking them out brings it back. It
// compares the union of the DiskPools' disks now with the union once this
// pool lists the picked disks, and follows the picker (once every Disk is
// in). The plugin announces each move it makes on the consumer
// (MetadataTierMoved). Returns {element, update}.
function metadataMoveNote(picker, poolName) {
  const el = h('div', { attrs: { 'data-metadata-moves': 'true', 'aria-live': 'polite' } });
  let facts = null;
  const draw = () => {
    el.replaceChildren();
    if (!facts || picker.element.dataset.loaded !== 'complete') return;
    if (facts.error) {
      el.append(errorBox(facts.error, 'Could not read the file and object storages whose metadata a pool edit may move'));
      return;
    }
    const disks = picker.disks();
    const after = unionAfterEdit(disks, poolName(), picker.selectedDisks(), facts.otherLists(poolName()));
    const moved = metadataMoves(facts.consumers, tiersOf(disks), tiersOf(after));
    if (moved.length === 0) return;
    el.append(h('div', { class: 'plugin-error', attrs: { role: 'alert' } },
      h('p', { class: 'plugin-text', text: `▲ Saving moves the metadata of ${moved.length === 1 ? 'a consumer' : `${moved.length} consumers`} to another class of disk:` }),
      h('ul', { class: 'plugin-text' }, moved.map((m) => h('li', { attrs: { 'data-metadata-move': `${m.kind}/${m.name}` }, text: metadataMoveSentence(m) }))),
      h('p', { class: 'plugin-text', text: METADATA_MOVE_COST })));
  };
  let pending = false;
  const update = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  };
  metadataFacts().then((f) => { facts = f; draw(); });
  return { element: el, update };
}

// METADATA_MOVE_COST is what a metadata move costs, as the plugin carries
// it out.
const METADATA_MOVE_COST = 'Rook gives each moved pool a new CRUSH rule and Ceph copies its data onto the other class\'s OSDs; disks and network are busier until that is done. The plugin records each move on its consumer (Event MetadataTierMoved).';

// metadataMoveSentence names one consumer's moved metadata pools and the
// classes they go from and to.
function metadataMoveSentence({ kind, name, from, to }) {
  const pools = kind === 'ObjectStorage'
    ? `object storage ${name}'s metadata pools (and .rgw.root, which every object store shares)`
    : `file storage ${name}'s metadata pool`;
  return `${pools}, from ${classOSDs(from)} to ${classOSDs(to)}`;
}

// metadataFacts reads what metadataMoves decides from besides the Disks:
// every FileStorage and ObjectStorage, and the disks every DiskPool lists
// (otherLists(pool): those of the pools but pool and those being deleted).
// A failure is kept, to be shown: the form works without it.
async function metadataFacts() {
  try {
    const [files, objects, pools] = await Promise.all([
      sdk().k8s.list(RESOURCES.filestorages), sdk().k8s.list(RESOURCES.objectstorages), sdk().k8s.list(RESOURCES.diskpools),
    ]);
    const consumers = [
      ...files.items.map((object) => ({ kind: 'FileStorage', object })),
      ...objects.items.map((object) => ({ kind: 'ObjectStorage', object })),
    ];
    const otherLists = (pool) => pools.items
      .filter((p) => p.metadata.name !== pool && !p.metadata.deletionTimestamp)
      .flatMap((p) => (p.spec && p.spec.disks) || []);
    return { consumers, otherLists };
  } catch (err) {
    return { error: err };
  }
}
