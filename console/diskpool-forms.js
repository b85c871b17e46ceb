// DiskPool create and edit forms, shown in a sheet.
import {
  RESOURCES, sdk, mount, heading, hint, field, input, form, newObject, navigateToDetail, closeSheet,
} from './_shared.js';
import { createDiskPicker } from './disk-picker.js';

// diskPoolForm renders the create or edit form for ctx.view.
export async function diskPoolForm(root, ctx) {
  const { items: disks } = await sdk().k8s.list(RESOURCES.disks);
  if (ctx.view === 'edit') return editForm(root, ctx, disks);
  return createForm(root, disks);
}

function createForm(root, disks) {
  const name = input('name', { required: true, autocomplete: 'off' });
  const picker = createDiskPicker({ disks });
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
}

async function editForm(root, ctx, disks) {
  const pool = await sdk().k8s.get({ ...RESOURCES.diskpools, name: ctx.resource.name });
  const picker = createDiskPicker({ disks, poolName: pool.metadata.name, selected: (pool.spec && pool.spec.disks) || [] });
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
}
