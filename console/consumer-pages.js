// List and detail pages, and the create and edit forms, of the three consumer
// kinds. They differ only in the one or two fields each kind adds to
// replicas, so one factory serves all three from CONSUMER_KINDS.
import {
  RESOURCES, sdk, h, mount, heading, hint, text, deflist, table, badge, link, navigateToDetail, openSheet, closeSheet,
  actions, button, card, capacitySection, fedCephCluster, field, input, select, checkbox, form, newObject, byName, startPage,
  formatReplicas, formatBytes, errorBox, REPLICAS_OPTIONS, replicasFromSelect, deletionNote,
} from './_shared.js';
import {
  effectiveReplicas, plannedConsumer, existingConsumer, olderFirst, checkBudget, editedConsumer, metadataSizedApart, clusterDevices, fullRatio,
  rawCapacity, replicaChoices, budgetSentences, usableSentence, capacitySummary, budgetSummary,
} from './budget.js';
import { k8s, followsKind } from './live.js';
import {
  tiersOf, tierOf, tierLabel, metadataClass, sharedMetadataClass, classOSDs, placementOf, classCopies, classRefusalSentence,
} from './tiers.js';

const countField = (key, label, hintText) => ({
  key, label, hint: hintText,
  control: (value) => input(key, { type: 'number', min: 1, step: 1, value: value === undefined ? '' : String(value), placeholder: '1' }),
  read: (control) => (control.value === '' ? null : Number(control.value)),
  show: (value) => (value === undefined ? '' : String(value)),
});

// Each kind's calls name their resource literally, so definition_test.go can
// read the verbs the pages use off the source. follow is the kind's list
// and watch through live.js, which the open pages follow changes with
// (the plugin writes status: Provisioning, then Ready).
const apis = {
  BlockStorage: {
    list: () => sdk().k8s.list(RESOURCES.blockstorages),
    get: (name) => sdk().k8s.get({ ...RESOURCES.blockstorages, name }),
    create: (body) => sdk().k8s.create(RESOURCES.blockstorages, body),
    patch: (name, body) => sdk().k8s.patch({ ...RESOURCES.blockstorages, name }, body),
    follow: {
      list: (opts) => k8s.list(RESOURCES.blockstorages, opts),
      watch: (opts) => k8s.watch(RESOURCES.blockstorages, opts),
    },
  },
  FileStorage: {
    list: () => sdk().k8s.list(RESOURCES.filestorages),
    get: (name) => sdk().k8s.get({ ...RESOURCES.filestorages, name }),
    create: (body) => sdk().k8s.create(RESOURCES.filestorages, body),
    patch: (name, body) => sdk().k8s.patch({ ...RESOURCES.filestorages, name }, body),
    follow: {
      list: (opts) => k8s.list(RESOURCES.filestorages, opts),
      watch: (opts) => k8s.watch(RESOURCES.filestorages, opts),
    },
  },
  ObjectStorage: {
    list: () => sdk().k8s.list(RESOURCES.objectstorages),
    get: (name) => sdk().k8s.get({ ...RESOURCES.objectstorages, name }),
    create: (body) => sdk().k8s.create(RESOURCES.objectstorages, body),
    patch: (name, body) => sdk().k8s.patch({ ...RESOURCES.objectstorages, name }, body),
    follow: {
      list: (opts) => k8s.list(RESOURCES.objectstorages, opts),
      watch: (opts) => k8s.watch(RESOURCES.objectstorages, opts),
    },
  },
};

export const CONSUMER_KINDS = {
  BlockStorage: {
    kind: 'BlockStorage',
    api: apis.BlockStorage,
    title: 'Block storage',
    summary: 'RBD volumes (ReadWriteOnce) from a derived StorageClass.',
    consume: (sc) => `Reference StorageClass ${sc} in a PersistentVolumeClaim (ReadWriteOnce).`,
    // Volumes of the kind are claimed with this access mode and can be
    // snapshotted through the derived VolumeSnapshotClass.
    accessMode: 'ReadWriteOnce',
    // The CRD's rule and message (api/v1alpha1/blockstorage_types.go).
    name: { max: 248, dots: true, rule: 'metadata.name must be at most 248 characters: the derived CephBlockPool and StorageClass ceph-<name> must stay within 253' },
    deletion: (name) => [
      `Its CephBlockPool ceph-${name}, StorageClass ceph-${name} and VolumeSnapshotClass ceph-${name} go with it (they are owned by it).`,
      `The Ceph pool and its data survive while volumes use it: Rook keeps the CephBlockPool as long as the pool holds RBD images (PersistentVolumes), so delete the PersistentVolumeClaims on StorageClass ceph-${name} first. Once the pool is empty, Rook deletes it and what it held.`,
      DISKS_STAY,
    ],
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
    accessMode: 'ReadWriteMany',
    // Its metadata pool has a class of its own: chosen in the sheets
    // (spec.metadataDeviceClass), or the fastest that keeps the data's
    // copies.
    metadataTier: 'chosen',
    name: { max: 53, dots: false, rule: 'metadata.name must be at most 53 characters without dots: Rook puts each MDS daemon id, cephfs-<name>-<one or two letters>, in label values (at most 63)' },
    deletion: (name) => [
      `Its CephFilesystem cephfs-${name}, StorageClass cephfs-${name} and VolumeSnapshotClass cephfs-${name} go with it; Rook holds the deletion while subvolumes (PersistentVolumeClaims) or subvolume groups use the filesystem.`,
      `The filesystem and its pools survive, with their data (preserveFilesystemOnDelete): Rook marks the filesystem failed and keeps it. A FileStorage created again under the name ${name} takes it back.`,
      DISKS_STAY,
    ],
    fields: [countField('metadataServers', 'Metadata servers', 'Active MDS daemons, each paired with a standby.')],
  },
  ObjectStorage: {
    kind: 'ObjectStorage',
    api: apis.ObjectStorage,
    title: 'Object storage',
    summary: 'S3-compatible buckets, claimed with ObjectBucketClaims on a derived StorageClass.',
    consume: (sc) => `Create an ObjectBucketClaim with storageClassName ${sc}, or use the Buckets section below.`,
    // Its metadata pools' class is every store's (they share .rgw.root):
    // shown, not chosen.
    metadataTier: 'shared',
    name: { max: 30, dots: false, rule: "metadata.name must be at most 30 characters without dots: the derived CephObjectStore cephobj-<name> must stay within Rook's 38 and name the Service rook-ceph-rgw-cephobj-<name>" },
    deletion: (name) => [
      `Its CephObjectStore cephobj-${name} and StorageClass cephobj-${name} go with it; Rook holds the deletion while any bucket exists.`,
      `Its seven cephobj-${name}.rgw.* pools and their data survive (preservePoolsOnDelete). Reclaiming the space is a second step in the Ceph toolbox: ceph osd pool ls | grep cephobj-${name}, then ceph osd pool rm for each pool (with mon_allow_pool_delete=true).`,
      `Rook v1.18 leaves the store's realm behind: an ObjectStorage created again as ${name} fails until radosgw-admin realm rm --rgw-realm=cephobj-${name} is run in a Rook pod.`,
      DISKS_STAY,
    ],
    fields: [countField('gatewayInstances', 'Gateway instances', 'RGW pods serving S3 in the cluster.')],
  },
};

const DISKS_STAY = 'The disks, their OSDs and every DiskPool stay: the other storage kinds go on using them.';

// consumerListPage starts the list page of a consumer kind; it follows the
// kind.
export function consumerListPage(kindName) {
  const config = CONSUMER_KINDS[kindName];
  startPage(async (root) => {
    const { items } = await config.api.list();
    mount(root,
      heading(config.title, 1),
      hint(config.summary),
      actions(button(`New ${config.title.toLowerCase()}`, () => openSheet({ kind: config.kind, view: 'create' }), { name: 'create' })),
      table(listColumns(config), [...items].sort(byName), { empty: `No ${config.title.toLowerCase()} yet.`, rowKey: (o) => o.metadata.name }));
  }, { follow: followsKind(config.api.follow) });
}

function listColumns(config) {
  return [
    { label: 'Name', cell: (o) => link(o.metadata.name, () => navigateToDetail(config.kind, o.metadata.name)) },
    { label: 'Phase', cell: (o) => badge(status(o).phase) },
    { label: 'StorageClass', cell: (o) => status(o).storageClassName },
    { label: 'Replicas', cell: (o) => replicasSummary(status(o)) },
    { label: 'Tier', cell: (o) => tierSummary(status(o), 'deviceClass') },
    { label: 'Usable', cell: (o) => (status(o).capacity ? status(o).capacity.usable : '') },
    ...config.fields.map((f) => ({ label: f.label, cell: (o) => f.show(spec(o)[f.key]) })),
    { label: 'Message', cell: (o) => status(o).message },
  ];
}

function replicasSummary(s) {
  if (s.replicas === undefined) return '';
  return s.failureDomain ? `${s.replicas} (failure domain ${s.failureDomain})` : String(s.replicas);
}

// tierSummary is the class status says a consumer's data (key
// deviceClass) or metadata (metadataDeviceClass) is on: empty is every
// disk, once the plugin has placed it (status.replicas); nothing before.
function tierSummary(s, key) {
  if (s.replicas === undefined) return '';
  return s[key] || 'every disk';
}

// EVERY_DISK and AUTOMATIC_METADATA are the tier selects' empty choices:
// no spec.deviceClass (every OSD, as before tiers), and no
// spec.metadataDeviceClass (the plugin picks).
const EVERY_DISK = 'Every disk (no class)';
const AUTOMATIC_METADATA = "Automatic: fastest class that keeps the data's copies";

// consumerDetailPage starts the detail page of a consumer kind; extraSections
// (ctx, object) adds kind-specific cards (ObjectStorage's Buckets). It
// follows its own object.
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
          ...(config.accessMode ? [['VolumeSnapshotClass', snapshotClassSummary(s)]] : []),
          ['Replicas', s.replicas === undefined ? '' : String(s.replicas)],
          ['Failure domain', s.failureDomain],
          ['Tier', tierSummary(s, 'deviceClass')],
          config.metadataTier ? ['Metadata tier', tierSummary(s, 'metadataDeviceClass')] : null,
          ['Usable capacity', capacitySummary(s.capacity, s.replicas)],
          ['Ceph budget', budgetSummary(s.cephBudget)],
        ]),
        s.capacity ? hint(SHARED_DISKS) : null,
        staleNote(object),
        s.storageClassName ? text(config.consume(s.storageClassName)) : null),
      config.accessMode && s.storageClassName ? volumeSnippets(config, s) : null,
      card(
        heading('Spec', 2),
        deflist([
          ['Replicas', formatReplicas(spec(object).replicas)],
          ['Tier', spec(object).deviceClass || EVERY_DISK],
          config.metadataTier === 'chosen' ? ['Metadata tier', spec(object).metadataDeviceClass || AUTOMATIC_METADATA] : null,
          ...config.fields.map((f) => [f.label, f.show(spec(object)[f.key])]),
        ])),
      conditionsCard(s.conditions || []),
      extra,
      capacity,
      deletionNote(`kubectl delete ${config.kind.toLowerCase()} ${object.metadata.name}`, config.deletion(object.metadata.name)));
  }, { follow: followsKind(config.api.follow, { named: true }) });
}

// snapshotClassSummary names the derived VolumeSnapshotClass, or says why
// there is none (the SnapshotClass condition's message).
function snapshotClassSummary(s) {
  if (s.snapshotClassName) return s.snapshotClassName;
  const cond = (s.conditions || []).find((c) => c.type === 'SnapshotClass');
  return cond ? `None: ${cond.message}` : '';
}

// volumeSnippets shows how a workload claims a volume and, once the
// VolumeSnapshotClass is there, snapshots it and restores the snapshot
// into a new claim.
function volumeSnippets(config, s) {
  const sc = s.storageClassName;
  const snippets = [
    text('A claim:'),
    snippet('pvc', pvcSnippet('data', sc, config.accessMode)),
  ];
  if (s.snapshotClassName) {
    snippets.push(
      text(`A snapshot of it (VolumeSnapshotClass ${s.snapshotClassName}; the snapshot is deleted with its VolumeSnapshot):`),
      snippet('snapshot', volumeSnapshotSnippet('data-snap', s.snapshotClassName, 'data')),
      text('The snapshot restored into a new claim, at least as large as the snapshot:'),
      snippet('restore', pvcSnippet('data-restored', sc, config.accessMode, 'data-snap')));
  }
  return card(heading('Use it from a workload', 2), ...snippets);
}

function snippet(name, body) {
  return h('pre', { class: 'plugin-text', attrs: { 'data-snippet': name }, text: body });
}

function pvcSnippet(name, storageClass, accessMode, fromSnapshot) {
  const lines = [
    'apiVersion: v1',
    'kind: PersistentVolumeClaim',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  storageClassName: ${storageClass}`,
    `  accessModes: [${accessMode}]`,
    '  resources:',
    '    requests:',
    '      storage: 10Gi',
  ];
  if (fromSnapshot) {
    lines.push('  dataSource:', '    apiGroup: snapshot.storage.k8s.io', '    kind: VolumeSnapshot', `    name: ${fromSnapshot}`);
  }
  return lines.join('\n');
}

function volumeSnapshotSnippet(name, snapshotClass, claim) {
  return [
    'apiVersion: snapshot.storage.k8s.io/v1',
    'kind: VolumeSnapshot',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    `  volumeSnapshotClassName: ${snapshotClass}`,
    '  source:',
    `    persistentVolumeClaimName: ${claim}`,
  ].join('\n');
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
  const name = input('name', { required: true, autocomplete: 'off', spellcheck: false });
  const replicas = select('replicas', REPLICAS_OPTIONS, '');
  const controls = config.fields.map((f) => ({ f, control: f.control(undefined) }));
  const facts = await cephFacts();
  const choice = placementChoice(config, facts, replicas, {});
  const refusal = () => classRefusal(config, null, facts, choice);
  const preview = cephPreview(config, facts, null, choice);
  const problem = h('p', { class: 'plugin-error', id: 'name-problem', hidden: true, attrs: { 'data-name-problem': 'true', 'aria-live': 'polite' } });
  name.setAttribute('aria-describedby', 'name-rule name-problem');
  const check = () => {
    const sentence = nameProblem(config, name.value.trim());
    problem.textContent = sentence || '';
    problem.hidden = !sentence;
    if (sentence) name.setAttribute('aria-invalid', 'true'); else name.removeAttribute('aria-invalid');
    return sentence;
  };
  name.addEventListener('input', () => { if (name.value !== '') check(); });
  mount(root,
    heading(`New ${config.title.toLowerCase()}`, 1),
    hint(config.summary),
    form({
      children: [
        h('div', { class: 'plugin-field' },
          h('label', { class: 'plugin-label', attrs: { for: name.id }, text: 'Name' }),
          name,
          h('p', { class: 'plugin-hint', id: 'name-rule', text: nameRuleSentence(config) }),
          problem),
        replicasField(replicas), tierFields(choice), refusalNote(refusal, choice), preview, controls.map(({ f, control }) => field(f.label, control, f.hint))],
      submitLabel: 'Create',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        // The plugin would refuse it and make nothing: said before it is sent.
        const refused = refusal();
        if (refused) throw new Error(refused);
        // The name is checked here, in words, rather than left to the API
        // server, whose answer is its regular expression.
        const sentence = check();
        if (sentence) {
          name.focus();
          throw new Error(sentence);
        }
        const spec = specFrom(choice, controls);
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
  const choice = placementChoice(config, facts, replicas, current);
  const refusal = () => classRefusal(config, object, facts, choice);
  const preview = cephPreview(config, facts, object, choice);
  const warning = replicaWarning(config, object, facts, choice, refusal);
  const moving = tierWarning(config, object, facts, choice, refusal);
  mount(root,
    heading(`Edit ${config.title.toLowerCase()} ${object.metadata.name}`, 1),
    form({
      children: [replicasField(replicas), warning, tierFields(choice), refusalNote(refusal, choice), moving, preview,
        controls.map(({ f, control }) => field(f.label, control, f.hint))],
      submitLabel: 'Save',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        // The plugin would refuse it and move nothing: said before it is
        // sent, so the spec never asks for what a class cannot hold.
        const refused = refusal();
        if (refused) throw new Error(refused);
        // Only spec is sent, so status is never overwritten; a null replicas
        // removes the field and returns the object to automatic sizing, a
        // null deviceClass to every disk.
        await config.api.patch(object.metadata.name, { spec: specFrom(choice, controls) });
        closeSheet();
      },
    }));
}

// replicaWarning says, before saving, what a replica change costs: Ceph
// re-replicates the consumer, copying every byte of its data to the new
// placement. It follows the replicas and tier selects (a tier on fewer
// hosts can mean fewer copies) and is silent while the choice is what the
// spec says, or one the plugin refuses (refusal: refusalNote says why).
function replicaWarning(config, object, facts, { replicas, tier }, refusal) {
  const el = h('div', { attrs: { 'data-replica-warning': 'true' } });
  const current = spec(object).replicas === undefined ? '' : String(spec(object).replicas);
  const currentClass = spec(object).deviceClass || '';
  const nodesOn = (deviceClass) => (facts.error ? 0 : placementOn(facts, deviceClass).nodes);
  const what = `${config.title.toLowerCase()} ${object.metadata.name}`;
  const update = () => {
    el.replaceChildren();
    if (replicas.value === current && tier.value === currentClass) return;
    if (refusal()) return;
    const nodes = nodesOn(tier.value);
    // A tier without disks is refused; tierWarning says so.
    if (tier.value && !(nodes >= 1)) return;
    const now = status(object).replicas || effectiveReplicas(replicasFromSelect(current), nodesOn(currentClass));
    const next = tier.value ? classCopies(replicasFromSelect(replicas.value), 0, nodes).copies : effectiveReplicas(replicasFromSelect(replicas.value), nodes);
    // Only the tier moved, at the same copies: tierWarning says what moves.
    if (replicas.value === current && next === now) return;
    const copies = (n) => `${n} ${n === 1 ? 'copy' : 'copies'}`;
    const where = `${nodes} ${nodes === 1 ? 'node' : 'nodes'}${tier.value ? ` with ${tier.value} disks` : ''}`;
    el.append(h('p', {
      class: 'plugin-error',
      attrs: { role: 'alert' },
      text: next !== now
        ? `▲ Ceph will re-replicate ${what}: going from ${copies(now)} to ${copies(next)}, it copies every byte of its data to the new placement. Disks and network are busier until that is done.`
        : `▲ On ${where} this still means ${copies(now)}, so nothing is copied now; but when the node count changes, Ceph will re-replicate ${what}, copying every byte of its data.`,
    }));
  };
  replicas.addEventListener('change', update);
  tier.addEventListener('change', update);
  update();
  return el;
}

// classRefusal is why the plugin would refuse the choice, as a sentence,
// or null: a tier whose hosts cannot hold, one per host, the copies the
// consumer asks for or has (tiers.js classCopies; TooFewNodesOfClass). A
// class without disks is tierWarning's. object is the consumer edited
// (null on create). The copies its data pool has are status.replicas,
// its metadata pool's status.metadataReplicas; a status written before
// the plugin recorded them gives them only when on the data's class, and
// none otherwise: a refusal the console cannot see is then the plugin's to
// say, in status.
function classRefusal(config, object, facts, { replicas, tier, metadataTier }) {
  if (facts.error || !facts.tiers) return null;
  const s = object ? status(object) : {};
  const what = object ? `${config.title.toLowerCase()} ${object.metadata.name}` : `the new ${config.title.toLowerCase()}`;
  const requested = replicasFromSelect(replicas.value);
  const refused = (deviceClass, have, pools) => {
    if (!deviceClass) return null;
    const { nodes } = tierOf(facts.tiers, deviceClass);
    if (!(nodes >= 1)) return null;
    const r = classCopies(requested, have, nodes);
    return r.refused ? classRefusalSentence(pools, deviceClass, nodes, r) : null;
  };
  const metadataHave = s.metadataReplicas || ((s.metadataDeviceClass || '') === (s.deviceClass || '') ? s.replicas || 0 : 0);
  return refused(tier.value, s.replicas || 0, what)
    || (metadataTier ? refused(metadataTier.value, metadataHave, `${what}'s metadata`) : null);
}

// refusalNote shows classRefusal's sentence while the choice is refused;
// the form's submit is refused with it too.
function refusalNote(refusal, { replicas, tier, metadataTier }) {
  const el = h('div', { attrs: { 'data-class-refusal': 'true' } });
  const update = () => {
    const sentence = refusal();
    el.replaceChildren(...(sentence ? [h('p', { class: 'plugin-error', attrs: { role: 'alert' }, text: sentence })] : []));
  };
  for (const control of [replicas, tier, metadataTier]) if (control) control.addEventListener('change', update);
  update();
  return el;
}

// tierWarning says, before saving, what a tier change costs: Ceph moves all
// of the consumer's data onto the other class's OSDs (and its metadata,
// when that moves apart from the data), and a tier without disks is
// refused. It follows the selects and is silent while the choice is what
// the spec says, or one on too few hosts (refusal: refusalNote says why).
function tierWarning(config, object, facts, choice, refusal) {
  const el = h('div', { attrs: { 'data-tier-warning': 'true' } });
  const sp = spec(object);
  const s = status(object);
  const placed = s.replicas !== undefined;
  const what = `${config.title.toLowerCase()} ${object.metadata.name}`;
  const unchanged = () => choice.tier.value === (sp.deviceClass || '')
    && (!choice.metadataTier || choice.metadataTier.value === (sp.metadataDeviceClass || ''))
    && choice.replicas.value === (sp.replicas === undefined ? '' : String(sp.replicas));
  const alert = (sentence, kind) => h('p', { class: 'plugin-error', attrs: { role: 'alert', 'data-tier-move': kind }, text: sentence });
  const update = () => {
    el.replaceChildren();
    if (unchanged()) return;
    const next = choice.tier.value;
    if (next && facts.tiers && !(tierOf(facts.tiers, next).nodes >= 1)) {
      el.append(alert(`✖ No DiskPool contributes ${next} disks: the plugin will refuse ${what} (NoDisksOfClass) until one does. Choose a tier the DiskPools have.`, 'refused'));
      return;
    }
    if (refusal()) return;
    // Where the data is: the class status reports once placed, else the spec's.
    const from = placed ? s.deviceClass || '' : sp.deviceClass || '';
    if (next !== from) {
      el.append(alert(`▲ Ceph will move all of ${what}'s data from ${classOSDs(from)} to ${classOSDs(next)}: Rook gives its pools a new CRUSH rule, and Ceph copies every byte of its data onto the other class's OSDs. Disks and network are busier until that is done.`, 'data'));
    }
    if (!config.metadataTier || !facts.tiers || !placed) return;
    const metaFrom = s.metadataDeviceClass || '';
    const metaNext = nextMetadataClass(config, facts, choice);
    // Metadata that only follows its data is told by the data's move.
    const followsData = metaFrom === from && metaNext === next;
    if (metaNext !== metaFrom && !followsData) {
      el.append(alert(`▲ Ceph will move ${what}'s metadata from ${classOSDs(metaFrom)} to ${classOSDs(metaNext)}.`, 'metadata'));
    }
  };
  for (const control of [choice.replicas, choice.tier, choice.metadataTier]) if (control) control.addEventListener('change', update);
  update();
  return el;
}

// nameRuleSentence is the name rule of a kind, said before anything is
// typed: Kubernetes' DNS subdomain rule and the kind's own cap.
function nameRuleSentence(config) {
  const chars = config.name.dots ? 'lower-case letters, digits, “-” and “.”' : 'lower-case letters, digits and “-” (no dots)';
  return `Up to ${config.name.max} characters: ${chars}, starting and ending with a letter or digit.`;
}

// nameProblem is what is wrong with a name, as a sentence, or null: the
// rules the API server applies (a DNS subdomain name, the kind's length cap
// in its CRD's own words), said instead of its regular expression.
export function nameProblem(config, name) {
  const what = config.title.toLowerCase();
  if (name === '') return `Give the ${what} a name.`;
  if (name.length > config.name.max) return `The name has ${name.length} characters; ${config.name.rule}.`;
  if (!config.name.dots && name.includes('.')) return `The name has a dot; ${config.name.rule}.`;
  const found = [];
  if (/[A-Z]/.test(name)) found.push('upper-case letters');
  const others = [...new Set(name.replace(/[A-Za-z0-9.-]/g, ''))];
  if (others.length > 0) found.push(others.map((c) => (c === ' ' ? 'a space' : `“${c}”`)).join(', '));
  if (!/^[A-Za-z0-9]/.test(name)) found.push(`“${name[0]}” first`);
  if (name.length > 1 && !/[A-Za-z0-9]$/.test(name)) found.push(`“${name[name.length - 1]}” last`);
  if (/\.\.|\.-|-\./.test(name)) found.push('a dot beside a dot or a “-”');
  if (found.length === 0) return null;
  const chars = config.name.dots
    ? 'lower-case letters, digits, “-” and “.”, start and end with a letter or digit, and have letters or digits on both sides of each dot'
    : 'lower-case letters, digits and “-”, and start and end with a letter or digit';
  return `A ${what} name may hold only ${chars} (Kubernetes names are DNS subdomains); this one has ${found.join(' and ')}.`;
}

function replicasField(control) {
  return field('Replicas', control, 'Copies Ceph keeps. Automatic uses the number of nodes contributing disks, up to 3. Without a tier, more than there are nodes is clamped; on a tier, the copies are never lowered: a tier on fewer nodes is refused, and one copy takes replicas 1.');
}

// placementChoice makes the sheet's tier selects beside replicas: the
// tier (spec.deviceClass; '' is every disk) offers only the classes the
// DiskPools' disks have, each with what it holds, and a FileStorage's
// metadata tier (spec.metadataDeviceClass; '' is automatic) the same.
// current is the spec being edited: a class it names that has no disks
// now is kept as a choice, so that saving does not drop it unasked.
function placementChoice(config, facts, replicas, current) {
  const offered = (facts.tiers ? facts.tiers.present : []).map((t) => [t.deviceClass, tierLabel(t)]);
  const options = (empty, value) => {
    const list = [empty, ...offered];
    if (value && !list.some(([v]) => v === value)) list.push([value, `${value} — no disks of this class in the DiskPools`]);
    return list;
  };
  const tier = select('deviceClass', options(['', EVERY_DISK], current.deviceClass || ''), current.deviceClass || '');
  const metadataTier = config.metadataTier === 'chosen'
    ? select('metadataDeviceClass', options(['', AUTOMATIC_METADATA], current.metadataDeviceClass || ''), current.metadataDeviceClass || '')
    : null;
  return { replicas, tier, metadataTier, facts, config };
}

// tierFields are the tier selects with their hints; a FileStorage's says
// where automatic puts its metadata, following the choices.
function tierFields(choice) {
  const fields = [field('Tier', choice.tier, choice.facts.tiers
    ? "The kind of disk the data lives on: its pools take only that class's OSDs, and replicas are sized on the hosts with such disks. Only the classes the DiskPools' disks have are offered."
    : "The kind of disk the data lives on. The DiskPools' disks could not be read, so no class is offered.")];
  if (!choice.metadataTier) return fields;
  const where = h('p', { class: 'plugin-hint', attrs: { 'data-metadata-tier': 'true', 'aria-live': 'polite' } });
  const update = () => {
    const cls = choice.facts.tiers ? nextMetadataClass(choice.config, choice.facts, choice) : null;
    where.textContent = cls === null ? '' : `The metadata pool goes on ${classOSDs(cls)}${choice.metadataTier.value ? '' : ' (automatic)'}.`;
  };
  for (const control of [choice.replicas, choice.tier, choice.metadataTier]) control.addEventListener('change', update);
  update();
  const metadata = field('Metadata tier', choice.metadataTier, 'The kind of disk the metadata pool lives on. Automatic: without a tier, every disk, like the data; with one, the fastest class whose hosts keep the data\'s copies as far apart, else the data\'s class.');
  metadata.append(where);
  fields.push(metadata);
  return fields;
}

// nextMetadataClass is where the choices put the metadata pools: a
// FileStorage's as MetadataReplication decides, an ObjectStorage's as
// every store's (SharedMetadataReplication).
function nextMetadataClass(config, facts, choice) {
  const dataClass = choice.tier.value;
  if (config.metadataTier === 'shared') return sharedMetadataClass(dataClass, facts.tiers);
  return metadataClass(dataClass, choice.metadataTier ? choice.metadataTier.value : '', replicasFromSelect(choice.replicas.value), facts.tiers);
}

// placementOn is what a consumer on deviceClass is sized on: without a
// class, the nodes listing devices in the CephCluster and Ceph's raw
// capacity (or the DiskPools' before it reports), as before tiers; on a
// class, the hosts with disks of it in the DiskPools and their summed
// size (Ceph reports its capacity for every OSD together only).
function placementOn(facts, deviceClass) {
  if (!deviceClass) return { deviceClass: '', nodes: facts.nodes, raw: facts.raw };
  const tier = tierOf(facts.tiers, deviceClass);
  return { deviceClass, nodes: tier.nodes, raw: { bytes: tier.rawBytes, source: 'Disks' } };
}

const SHARED_DISKS = 'Every storage kind shares the same disks: what one stores, the others can no longer.';

// cephFacts reads what the sheets' budget, capacity and tiers are computed
// from: every consumer of the three kinds, the DiskPools and the
// CephCluster they feed, and the Disks (the classes the pools' disks
// have). A failure is kept, to be shown in place of the figures: the
// form works without them.
async function cephFacts() {
  try {
    const [lists, fed, disks] = await Promise.all([
      Promise.all(Object.values(CONSUMER_KINDS).map(async (k) => ({ kind: k.kind, items: (await k.api.list()).items }))),
      fedCephCluster(),
      sdk().k8s.list(RESOURCES.disks),
    ]);
    const { osds, nodes } = clusterDevices(fed.cluster);
    const tiers = tiersOf(disks.items);
    const placed = (kind, object) => existingConsumer(kind, object, placementOf(kind, object.spec || {}, tiers, nodes));
    return {
      consumers: lists.flatMap(({ kind, items }) => items.map((object) => placed(kind, object))),
      osds, nodes, ref: fed.ref, ratio: fullRatio(fed.cluster), raw: rawCapacity(fed.cluster, fed.pools, fed.ref), tiers,
    };
  } catch (err) {
    return { error: err };
  }
}

// cephPreview shows, before saving, what the replica and tier choice costs
// Ceph's budgets and how much it can store; it follows the selects (a tier
// sizes the copies on its hosts, holds its disks' capacity and takes its
// OSDs' placement groups). object is the consumer being edited (null on
// create): with its pools made it is counted once, as it is today;
// without, it is a newcomer beside the consumers older than it, as the
// plugin checks it.
function cephPreview(config, facts, object, { replicas, tier, metadataTier }) {
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
    const metadataDeviceClass = metadataTier ? metadataTier.value : '';
    const place = placementOf(config.kind, { replicas: requested, deviceClass: tier.value, metadataDeviceClass }, facts.tiers, facts.nodes);
    mount(budget, budgetNodes(config, facts, self, place));
    const on = placementOn(facts, tier.value);
    // On a class the copies it would keep, placed or refused (refusalNote).
    const copies = tier.value && on.nodes >= 1 ? classCopies(requested, 0, on.nodes).copies : place.replicas;
    mount(usable, usableNodes(facts, on, requested, copies));
  };
  for (const control of [replicas, tier, metadataTier]) if (control) control.addEventListener('change', update);
  update();
  el.append(budget, usable);
  return el;
}

// domainMoveSentence says what an edit to copies that moves a consumer's
// failure domain leaves in Ceph: added more rules, none removed.
function domainMoveSentence(kind, copies, from, added) {
  const pools = metadataSizedApart(kind) ? "its data pool's" : "its pools'";
  return `At ${copies} ${copies === 1 ? 'copy' : 'copies'} ${pools} failure domain moves from ${from}: `
    + `Rook makes ${added} more CRUSH ${added === 1 ? 'rule' : 'rules'} and removes none.`;
}

// budgetNodes words what the subject placed at place (tiers.js
// placementOf) asks of Ceph's budgets beside the other consumers, as the
// plugin counts it.
function budgetNodes(config, facts, self, place) {
  const counted = Boolean(self && self.measured);
  let subject;
  let answer;
  if (counted) {
    subject = editedConsumer(self, place);
    const others = facts.consumers.filter((c) => c !== self);
    answer = checkBudget({ others, subject, current: self, osds: facts.osds, tiers: facts.tiers });
  } else {
    subject = plannedConsumer(config.kind, self ? self.name : '', self ? self.created : '', place);
    const others = facts.consumers.filter((c) => c !== self && (!self || olderFirst(c, self) < 0));
    answer = checkBudget({ others, subject, osds: facts.osds, tiers: facts.tiers });
  }
  const words = budgetSentences(subject, answer, { counted });
  // A class move's new rule is told by tierWarning, with the data it moves.
  const moved = counted && subject.movesDomain && subject.use.crushRules > self.use.crushRules
    ? h('p', {
      class: 'plugin-hint',
      attrs: { 'data-budget': 'domain-move' },
      text: domainMoveSentence(config.kind, place.replicas, self.place.failureDomain, subject.use.crushRules - self.use.crushRules),
    })
    : null;
  return [
    heading("Ceph's budget", 2),
    h('p', { class: 'plugin-text', attrs: { 'data-budget': 'crush-rules' }, text: words.rules }),
    h('p', { class: 'plugin-text', attrs: { 'data-budget': 'pgs' }, text: words.pgs }),
    moved,
    words.refused ? h('p', { class: 'plugin-error', attrs: { role: 'alert', 'data-budget-refusal': 'true' }, text: words.refused }) : null,
    words.warned ? h('p', { class: 'plugin-text', attrs: { role: 'status', 'data-budget-warning': 'true' }, text: words.warned }) : null,
    hint(counted
      ? "Counted from every consumer's status.cephBudget, this one's as it is today; mon_max_pg_per_osd at Ceph's default."
      : "Counted from every consumer's status.cephBudget, or its kind's pools at its replicas while it has none; mon_max_pg_per_osd at Ceph's default."),
  ];
}

// usableNodes shows what the choice can store on placement (placementOn):
// every OSD, or a tier's.
function usableNodes(facts, placement, requested, copies) {
  const { deviceClass, nodes: hosts, raw } = placement;
  const nodes = [heading('Usable capacity', 2)];
  if (!(raw.bytes > 0)) {
    nodes.push(hint(deviceClass
      ? `Nothing to show: no DiskPool contributes ${deviceClass} disks.`
      : 'Nothing to show yet: no DiskPool reports disks, and Ceph has not reported its capacity.'));
    return nodes;
  }
  const selected = requested === null ? copies : requested;
  // On a class more copies than hosts are refused, not clamped.
  const refused = (c) => deviceClass && c.requested > hosts;
  const replicasCell = (c) => {
    if (refused(c)) return `${c.requested} (refused: ${hosts} ${hosts === 1 ? 'node has' : 'nodes have'} ${deviceClass} disks)`;
    return c.copies < c.requested ? `${c.requested} (clamped to ${c.copies}: ${hosts} ${hosts === 1 ? 'node' : 'nodes'})` : String(c.requested);
  };
  const choices = table([
    { label: 'Replicas', cell: replicasCell },
    { label: 'Usable', cell: (c) => (refused(c) ? '—' : formatBytes(c.usableBytes)) },
    { label: 'Selected', cell: (c) => (c.requested === selected ? '✔ Selected' : '') },
  ], replicaChoices(raw.bytes, facts.ratio, hosts), { rowKey: (c) => String(c.requested) });
  const row = choices.querySelector(`tr[data-row="${selected}"]`);
  if (row) row.setAttribute('aria-current', 'true');
  const cluster = facts.ref ? `CephCluster ${facts.ref.namespace}/${facts.ref.name}` : 'the CephCluster';
  let source = "Raw capacity is the summed size of the DiskPools' disks: Ceph has not reported yet.";
  if (deviceClass) source = `Raw capacity is the summed size of the DiskPools' ${deviceClass} disks: Ceph reports its capacity for every OSD together only.`;
  else if (raw.source === 'Ceph') source = `Raw capacity is what Ceph reports of its OSDs (${cluster}).`;
  let automatic = hosts >= 1
    ? `Automatic is min(3, nodes): ${hosts} ${hosts === 1 ? 'node lists' : 'nodes list'} devices in ${cluster}.`
    : `No node lists devices in ${cluster} yet: automatic is counted as 3 copies.`;
  if (deviceClass) automatic = `Automatic is min(3, nodes), at least 2 and never fewer than the copies it has: ${hosts} ${hosts === 1 ? 'node has' : 'nodes have'} ${deviceClass} disks in the DiskPools.`;
  nodes.push(
    h('p', { class: 'plugin-text', attrs: { 'data-usable-selected': 'true' }, text: usableSentence(raw.bytes, facts.ratio, copies) }),
    choices,
    hint(source),
    hint(automatic),
    text(SHARED_DISKS));
  return nodes;
}

// specFrom is the spec the form says: null (on edit, in a merge patch:
// remove the field) for automatic replicas, every disk and automatic
// metadata.
function specFrom({ replicas, tier, metadataTier }, controls) {
  const result = { replicas: replicasFromSelect(replicas.value), deviceClass: tier.value || null };
  if (metadataTier) result.metadataDeviceClass = metadataTier.value || null;
  for (const { f, control } of controls) result[f.key] = f.read(control);
  return result;
}

function spec(object) {
  return object.spec || {};
}

function status(object) {
  return object.status || {};
}
