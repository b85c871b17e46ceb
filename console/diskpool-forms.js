// DiskPool create and edit forms, shown in a sheet.
import {
  RESOURCES, sdk, mount, heading, hint, field, input, form, newObject, navigateToDetail, closeSheet,
  errorBox, actions, button,
} from './_shared.js';
import { createDiskPicker } from './disk-picker.js';
import { retireSheet } from './retirement-pages.js';
import { k8s, follow } from './live.js';

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
  const picker = createDiskPicker({});
  mount(root,
    heading('New disk pool', 1),
    hint('The selected disks become OSDs of the cluster\'s single CephCluster; every storage kind shares them.'),
    form({
      children: [field('Name', name), picker.element],
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
  const picker = createDiskPicker({
    poolName: pool.metadata.name, selected: (pool.spec && pool.spec.disks) || [],
    onRetire: (disk) => retireInstead(root, ctx, pool.metadata.name, picker, disk),
  });
  mount(root,
    heading(`Edit disk pool ${pool.metadata.name}`, 1),
    form({
      children: [picker.element],
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
