// List and detail pages, and the create and edit forms, of the three consumer
// kinds. They differ only in the one or two fields each kind adds to
// replicas, so one factory serves all three from CONSUMER_KINDS.
import {
  RESOURCES, sdk, h, mount, heading, hint, text, deflist, table, badge, link, navigateToDetail, openSheet, closeSheet,
  actions, button, card, capacitySection, fedCephCluster, field, input, select, checkbox, form, newObject, byName, startPage,
  formatReplicas, formatBytes, errorBox, REPLICAS_OPTIONS, replicasFromSelect,
} from './_shared.js';
import {
  effectiveReplicas, kindCost, existingConsumer, olderFirst, checkBudget, editedUse, clusterDevices, fullRatio,
  rawCapacity, replicaChoices, budgetSentences, usableSentence, capacitySummary, budgetSummary,
} from './budget.js';

const countField = (key, label, hintText) => ({
  key, label, hint: hintText,
  control: (value) => input(key, { type: 'number', min: 1, step: 1, value: value === undefined ? '' : String(value), placeholder: '1' }),
  read: (control) => (control.value === '' ? null : Number(control.value)),
  show: (value) => (value === undefined ? '' : String(value)),
});

// Each kind's calls name their resource literally, so definition_test.go can
// read the verbs the pages use off the source.
const apis = {
  BlockStorage: {
    list: () => sdk().k8s.list(RESOURCES.blockstorages),
    get: (name) => sdk().k8s.get({ ...RESOURCES.blockstorages, name }),
    create: (body) => sdk().k8s.create(RESOURCES.blockstorages, body),
    patch: (name, body) => sdk().k8s.patch({ ...RESOURCES.blockstorages, name }, body),
  },
  FileStorage: {
    list: () => sdk().k8s.list(RESOURCES.filestorages),
    get: (name) => sdk().k8s.get({ ...RESOURCES.filestorages, name }),
    create: (body) => sdk().k8s.create(RESOURCES.filestorages, body),
    patch: (name, body) => sdk().k8s.patch({ ...RESOURCES.filestorages, name }, body),
  },
  ObjectStorage: {
    list: () => sdk().k8s.list(RESOURCES.objectstorages),
    get: (name) => sdk().k8s.get({ ...RESOURCES.objectstorages, name }),
    create: (body) => sdk().k8s.create(RESOURCES.objectstorages, body),
    patch: (name, body) => sdk().k8s.patch({ ...RESOURCES.objectstorages, name }, body),
  },
};

export const CONSUMER_KINDS = {
  BlockStorage: {
    kind: 'BlockStorage',
    api: apis.BlockStorage,
    title: 'Block storage',
    summary: 'RBD volumes (ReadWriteOnce) from a derived StorageClass.',
    consume: (sc) => `Reference StorageClass ${sc} in a PersistentVolumeClaim (ReadWriteOnce).`,
    fields: [{
      key: 'default',
      label: 'Default StorageClass',
      hint: 'Marks the derived StorageClass as the cluster default, used by claims that name no class.',
      control: (value) => checkbox('default', value === true),
      read: (control) => control.checked,
      show: (value) => (value ? 'Yes' : 'No'),
    }],
  },
  FileStorage: {
    kind: 'FileStorage',
    api: apis.FileStorage,
    title: 'File storage',
    summary: 'CephFS volumes (ReadWriteMany) from a derived StorageClass.',
    consume: (sc) => `Reference StorageClass ${sc} in a PersistentVolumeClaim (ReadWriteMany).`,
    fields: [countField('metadataServers', 'Metadata servers', 'Active MDS daemons, each paired with a standby.')],
  },
  ObjectStorage: {
    kind: 'ObjectStorage',
    api: apis.ObjectStorage,
    title: 'Object storage',
    summary: 'S3-compatible buckets, claimed with ObjectBucketClaims on a derived StorageClass.',
    consume: (sc) => `Create an ObjectBucketClaim with storageClassName ${sc}, or use the Buckets section below.`,
    fields: [countField('gatewayInstances', 'Gateway instances', 'RGW pods serving S3 in the cluster.')],
  },
};

// consumerListPage starts the list page of a consumer kind.
export function consumerListPage(kindName) {
  const config = CONSUMER_KINDS[kindName];
  startPage(async (root) => {
    const { items } = await config.api.list();
    mount(root,
      heading(config.title, 1),
      hint(config.summary),
      actions(button(`New ${config.title.toLowerCase()}`, () => openSheet({ kind: config.kind, view: 'create' }), { name: 'create' })),
      table(listColumns(config), [...items].sort(byName), { empty: `No ${config.title.toLowerCase()} yet.`, rowKey: (o) => o.metadata.name }));
  });
}

function listColumns(config) {
  return [
    { label: 'Name', cell: (o) => link(o.metadata.name, () => navigateToDetail(config.kind, o.metadata.name)) },
    { label: 'Phase', cell: (o) => badge(status(o).phase) },
    { label: 'StorageClass', cell: (o) => status(o).storageClassName },
    { label: 'Replicas', cell: (o) => replicasSummary(status(o)) },
    { label: 'Usable', cell: (o) => (status(o).capacity ? status(o).capacity.usable : '') },
    ...config.fields.map((f) => ({ label: f.label, cell: (o) => f.show(spec(o)[f.key]) })),
    { label: 'Message', cell: (o) => status(o).message },
  ];
}

function replicasSummary(s) {
  if (s.replicas === undefined) return '';
  return s.failureDomain ? `${s.replicas} (failure domain ${s.failureDomain})` : String(s.replicas);
}

// consumerDetailPage starts the detail page of a consumer kind; extraSections
// (ctx, object) adds kind-specific cards (ObjectStorage's Buckets).
export function consumerDetailPage(kindName, extraSections = async () => []) {
  const config = CONSUMER_KINDS[kindName];
  startPage(async (root, ctx) => {
    const object = await config.api.get(ctx.resource.name);
    const s = status(object);
    const [extra, capacity] = await Promise.all([extraSections(ctx, object), capacitySection()]);
    mount(root,
      heading(`${config.title} ${object.metadata.name}`, 1),
      actions(button('Edit', () => openSheet({ kind: config.kind, view: 'edit', name: object.metadata.name }), { name: 'edit' })),
      card(
        heading('Status', 2),
        deflist([
          ['Phase', badge(s.phase)],
          ['Message', s.message],
          ['StorageClass', s.storageClassName],
          ['Replicas', s.replicas === undefined ? '' : String(s.replicas)],
          ['Failure domain', s.failureDomain],
          ['Usable capacity', capacitySummary(s.capacity, s.replicas)],
          ['Ceph budget', budgetSummary(s.cephBudget)],
        ]),
        s.capacity ? hint(SHARED_DISKS) : null,
        staleNote(object),
        s.storageClassName ? text(config.consume(s.storageClassName)) : null),
      card(
        heading('Spec', 2),
        deflist([
          ['Replicas', formatReplicas(spec(object).replicas)],
          ...config.fields.map((f) => [f.label, f.show(spec(object)[f.key])]),
        ])),
      conditionsCard(s.conditions || []),
      extra,
      capacity);
  });
}

// staleNote says when status describes an older generation than the spec.
function staleNote(object) {
  const observed = status(object).observedGeneration;
  if (observed === undefined || observed === object.metadata.generation) return null;
  return hint(`Status describes generation ${observed}; the spec is at generation ${object.metadata.generation} and is still being reconciled.`);
}

function conditionsCard(conditions) {
  if (conditions.length === 0) return null;
  return card(heading('Conditions', 2), table([
    { label: 'Type', cell: (c) => c.type },
    { label: 'Status', cell: (c) => c.status },
    { label: 'Reason', cell: (c) => c.reason },
    { label: 'Message', cell: (c) => c.message },
    { label: 'Since', cell: (c) => c.lastTransitionTime },
  ], conditions));
}

// consumerForm renders the create or edit form of a consumer kind in a sheet.
export async function consumerForm(root, ctx) {
  const config = CONSUMER_KINDS[ctx.crdKind];
  if (ctx.view === 'edit') return editForm(root, ctx, config);
  return createForm(root, config);
}

async function createForm(root, config) {
  const name = input('name', { required: true, autocomplete: 'off' });
  const replicas = select('replicas', REPLICAS_OPTIONS, '');
  const controls = config.fields.map((f) => ({ f, control: f.control(undefined) }));
  const preview = cephPreview(config, await cephFacts(), null, replicas);
  mount(root,
    heading(`New ${config.title.toLowerCase()}`, 1),
    hint(config.summary),
    form({
      children: [field('Name', name), replicasField(replicas), preview, controls.map(({ f, control }) => field(f.label, control, f.hint))],
      submitLabel: 'Create',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        const spec = specFrom(replicas, controls);
        // Absent fields are left to the API server's defaults on create.
        for (const key of Object.keys(spec)) if (spec[key] === null) delete spec[key];
        const created = await config.api.create(newObject(config.kind, name.value.trim(), spec));
        navigateToDetail(config.kind, created.metadata.name);
      },
    }));
}

async function editForm(root, ctx, config) {
  const [object, facts] = await Promise.all([config.api.get(ctx.resource.name), cephFacts()]);
  const current = spec(object);
  const replicas = select('replicas', REPLICAS_OPTIONS, current.replicas === undefined ? '' : String(current.replicas));
  const controls = config.fields.map((f) => ({ f, control: f.control(current[f.key]) }));
  const preview = cephPreview(config, facts, object, replicas);
  mount(root,
    heading(`Edit ${config.title.toLowerCase()} ${object.metadata.name}`, 1),
    form({
      children: [replicasField(replicas), preview, controls.map(({ f, control }) => field(f.label, control, f.hint))],
      submitLabel: 'Save',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        // Only spec is sent, so status is never overwritten; a null replicas
        // removes the field and returns the object to automatic sizing.
        await config.api.patch(object.metadata.name, { spec: specFrom(replicas, controls) });
        closeSheet();
      },
    }));
}

function replicasField(control) {
  return field('Replicas', control, 'Copies Ceph keeps. Automatic uses the number of nodes contributing disks, up to 3; more than there are nodes is clamped.');
}

const SHARED_DISKS = 'Every storage kind shares the same disks: what one stores, the others can no longer.';

// cephFacts reads what the sheets' budget and capacity are computed from:
// every consumer of the three kinds, and the DiskPools and the CephCluster
// they feed. A failure is kept, to be shown in place of the figures: the
// form works without them.
async function cephFacts() {
  try {
    const [lists, fed] = await Promise.all([
      Promise.all(Object.values(CONSUMER_KINDS).map(async (k) => ({ kind: k.kind, items: (await k.api.list()).items }))),
      fedCephCluster(),
    ]);
    const { osds, nodes } = clusterDevices(fed.cluster);
    return {
      consumers: lists.flatMap(({ kind, items }) => items.map((object) => existingConsumer(kind, object, nodes))),
      osds, nodes, ref: fed.ref, ratio: fullRatio(fed.cluster), raw: rawCapacity(fed.cluster, fed.pools, fed.ref),
    };
  } catch (err) {
    return { error: err };
  }
}

// cephPreview shows, before saving, what the replica choice costs Ceph's
// budgets and how much it can store; it follows the replicas select. object
// is the consumer being edited (null on create): with its pools made it is
// counted once, as it is today; without, it is a newcomer beside the
// consumers older than it, as the plugin checks it.
function cephPreview(config, facts, object, replicas) {
  const el = h('div', { attrs: { 'data-ceph-preview': 'true' } });
  if (facts.error) {
    el.append(errorBox(facts.error, "Could not read Ceph's budget and capacity"));
    return el;
  }
  const self = object ? facts.consumers.find((c) => c.kind === config.kind && c.name === object.metadata.name) : null;
  const budget = h('section', { class: 'plugin-card', attrs: { 'data-ceph-budget': 'true' } });
  const usable = h('section', { class: 'plugin-card', attrs: { 'data-usable': 'true' } });
  const update = () => {
    const requested = replicasFromSelect(replicas.value);
    const copies = effectiveReplicas(requested, facts.nodes);
    mount(budget, budgetNodes(config, facts, self, copies));
    mount(usable, usableNodes(facts, requested, copies));
  };
  replicas.addEventListener('change', update);
  update();
  el.append(budget, usable);
  return el;
}

function budgetNodes(config, facts, self, copies) {
  const counted = Boolean(self && self.measured);
  let subject;
  let answer;
  if (counted) {
    const use = editedUse(self, copies, facts.nodes);
    subject = { ...self, replicas: copies, use };
    const others = facts.consumers.filter((c) => c !== self);
    answer = checkBudget({ others, subject, current: self, osds: facts.osds });
  } else {
    subject = self
      ? { ...self, replicas: copies, use: kindCost(config.kind, copies) }
      : { kind: config.kind, name: '', created: '', replicas: copies, use: kindCost(config.kind, copies) };
    const others = facts.consumers.filter((c) => c !== self && (!self || olderFirst(c, self) < 0));
    answer = checkBudget({ others, subject, osds: facts.osds });
  }
  const words = budgetSentences(subject, answer, { counted });
  const moved = counted && subject.use.crushRules > self.use.crushRules
    ? h('p', {
      class: 'plugin-hint',
      attrs: { 'data-budget': 'domain-move' },
      text: `At ${copies} ${copies === 1 ? 'copy' : 'copies'} its pools' failure domain moves from ${self.failureDomain}: Rook makes ${subject.use.crushRules - self.use.crushRules} more CRUSH rules and removes none.`,
    })
    : null;
  return [
    heading("Ceph's budget", 2),
    h('p', { class: 'plugin-text', attrs: { 'data-budget': 'crush-rules' }, text: words.rules }),
    h('p', { class: 'plugin-text', attrs: { 'data-budget': 'pgs' }, text: words.pgs }),
    moved,
    words.refused ? h('p', { class: 'plugin-error', attrs: { role: 'alert', 'data-budget-refusal': 'true' }, text: words.refused }) : null,
    hint(counted
      ? "Counted from every consumer's status.cephBudget, this one's as it is today; mon_max_pg_per_osd at Ceph's default."
      : "Counted from every consumer's status.cephBudget, or its kind's pools at its replicas while it has none; mon_max_pg_per_osd at Ceph's default."),
  ];
}

function usableNodes(facts, requested, copies) {
  const nodes = [heading('Usable capacity', 2)];
  if (!(facts.raw.bytes > 0)) {
    nodes.push(hint('Nothing to show yet: no DiskPool reports disks, and Ceph has not reported its capacity.'));
    return nodes;
  }
  const selected = requested === null ? copies : requested;
  const choices = table([
    { label: 'Replicas', cell: (c) => (c.copies < c.requested ? `${c.requested} (clamped to ${c.copies}: ${facts.nodes} ${facts.nodes === 1 ? 'node' : 'nodes'})` : String(c.requested)) },
    { label: 'Usable', cell: (c) => formatBytes(c.usableBytes) },
    { label: 'Selected', cell: (c) => (c.requested === selected ? '✔ Selected' : '') },
  ], replicaChoices(facts.raw.bytes, facts.ratio, facts.nodes), { rowKey: (c) => String(c.requested) });
  const row = choices.querySelector(`tr[data-row="${selected}"]`);
  if (row) row.setAttribute('aria-current', 'true');
  const cluster = facts.ref ? `CephCluster ${facts.ref.namespace}/${facts.ref.name}` : 'the CephCluster';
  nodes.push(
    h('p', { class: 'plugin-text', attrs: { 'data-usable-selected': 'true' }, text: usableSentence(facts.raw.bytes, facts.ratio, copies) }),
    choices,
    hint(facts.raw.source === 'Ceph'
      ? `Raw capacity is what Ceph reports of its OSDs (${cluster}).`
      : "Raw capacity is the summed size of the DiskPools' disks: Ceph has not reported yet."),
    hint(facts.nodes >= 1
      ? `Automatic is min(3, nodes): ${facts.nodes} ${facts.nodes === 1 ? 'node lists' : 'nodes list'} devices in ${cluster}.`
      : `No node lists devices in ${cluster} yet: automatic is counted as 3 copies.`),
    text(SHARED_DISKS));
  return nodes;
}

function specFrom(replicas, controls) {
  const result = { replicas: replicasFromSelect(replicas.value) };
  for (const { f, control } of controls) result[f.key] = f.read(control);
  return result;
}

function spec(object) {
  return object.spec || {};
}

function status(object) {
  return object.status || {};
}
