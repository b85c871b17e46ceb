// The Buckets section of the ObjectStorage detail page, and the
// ObjectBucketClaim create and detail sheets it opens.
//
// Claims are namespaced and belong to workloads, so the section lists them
// per namespace the console gives the page and reports, rather than hides, a
// namespace it could not read. Credentials stay in the claim's Secret: the
// pages name that Secret and never read it.
import {
  RESOURCES, sdk, h, mount, heading, hint, text, deflist, table, badge, link, openSheet, closeSheet,
  actions, button, card, errorBox, field, input, select, form,
} from './_shared.js';

const CLAIM_API_VERSION = `${RESOURCES.objectbucketclaims.group}/${RESOURCES.objectbucketclaims.version}`;

// bucketsSection lists the claims on the store's StorageClass.
export async function bucketsSection(ctx, store) {
  const storageClassName = store.status && store.status.storageClassName;
  const section = card(heading('Buckets', 2));
  if (!storageClassName) {
    section.append(hint('Buckets can be claimed once the StorageClass has been derived.'));
    return section;
  }
  const { claims, failures } = await listClaims(ctx.namespaces);
  const mine = claims.filter((c) => c.spec && c.spec.storageClassName === storageClassName).sort(byNamespaceAndName);
  section.append(
    hint(`ObjectBucketClaims on StorageClass ${storageClassName}. Rook provisions each bucket and writes its endpoint to a ConfigMap and its credentials to a Secret, both named after the claim.`),
    actions(button('New bucket claim', () => openSheet({
      kind: 'ObjectBucketClaim', view: 'create', params: { storageClassName, objectStorage: store.metadata.name },
    }), { name: 'create-bucket' })),
    failures.map(({ namespace, err }) => errorBox(err, `Could not list bucket claims in namespace ${namespace}`)),
    table(claimColumns, mine, { empty: 'No bucket claims on this store yet.', rowKey: (c) => `${c.metadata.namespace}/${c.metadata.name}` }));
  return section;
}

// listClaims lists claims in each namespace given, or cluster-wide when the
// console gives none; a namespace that fails is reported, the rest shown.
async function listClaims(namespaces) {
  const scopes = Array.isArray(namespaces) && namespaces.length > 0 ? namespaces : [undefined];
  const results = await Promise.allSettled(scopes.map((namespace) => sdk().k8s.list({ ...RESOURCES.objectbucketclaims, namespace })));
  const claims = [];
  const failures = [];
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') claims.push(...result.value.items);
    else failures.push({ namespace: scopes[i] || 'all namespaces', err: result.reason });
  });
  return { claims, failures };
}

function byNamespaceAndName(a, b) {
  return `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`);
}

const claimColumns = [
  { label: 'Namespace', cell: (c) => c.metadata.namespace },
  { label: 'Claim', cell: (c) => link(c.metadata.name, () => openSheet({ kind: 'ObjectBucketClaim', view: 'detail', name: c.metadata.name, namespace: c.metadata.namespace })) },
  { label: 'Phase', cell: (c) => badge(c.status && c.status.phase) },
  { label: 'Bucket', cell: (c) => requestedBucketName(c.spec || {}) },
  { label: 'Quota', cell: (c) => quotaSummary(c.spec || {}) },
];

function requestedBucketName(spec) {
  if (spec.bucketName) return spec.bucketName;
  return spec.generateBucketName ? `${spec.generateBucketName}-… (generated)` : '';
}

function quotaSummary(spec) {
  const config = spec.additionalConfig || {};
  const parts = [];
  if (config.maxSize) parts.push(`max size ${config.maxSize}`);
  if (config.maxObjects) parts.push(`max ${config.maxObjects} objects`);
  return parts.join(', ');
}

// bucketCreateForm is the claim create sheet; params.storageClassName names
// the store's StorageClass.
export async function bucketCreateForm(root, ctx) {
  const storageClassName = ctx.params && ctx.params.storageClassName;
  if (!storageClassName) {
    mount(root, errorBox('Open this form from the Buckets section of an object storage: it needs the store\'s StorageClass.'));
    return;
  }
  const namespaces = Array.isArray(ctx.namespaces) ? ctx.namespaces : [];
  const namespace = namespaces.length > 0 ? select('namespace', namespaces.map((n) => [n, n]), namespaces[0]) : input('namespace', { required: true });
  const name = input('name', { required: true, autocomplete: 'off' });
  const naming = select('naming', [['generate', 'Generated from a prefix'], ['exact', 'Exactly this name']], 'generate');
  const bucketName = input('bucketName', { autocomplete: 'off', placeholder: 'defaults to the claim name' });
  const maxSize = input('maxSize', { placeholder: 'e.g. 10Gi', autocomplete: 'off' });
  const maxObjects = input('maxObjects', { type: 'number', min: 1, step: 1 });
  mount(root,
    heading('New bucket claim', 1),
    hint(`An ObjectBucketClaim on StorageClass ${storageClassName}${ctx.params.objectStorage ? ` (object storage ${ctx.params.objectStorage})` : ''}.`),
    form({
      children: [
        field('Namespace', namespace, 'Where the claim, its ConfigMap and its Secret live: the namespace of the workload that uses the bucket.'),
        field('Claim name', name),
        field('Bucket name', naming, 'A generated name is unique; an exact name fails if the bucket exists already.'),
        field('Bucket name or prefix', bucketName),
        field('Maximum size', maxSize, 'Optional quota, a quantity such as 10Gi.'),
        field('Maximum objects', maxObjects, 'Optional quota.'),
      ],
      submitLabel: 'Create claim',
      onCancel: () => closeSheet(),
      onSubmit: async () => {
        const claim = claimFrom({
          storageClassName, namespace: namespace.value.trim(), name: name.value.trim(), exact: naming.value === 'exact',
          bucketName: bucketName.value.trim(), maxSize: maxSize.value.trim(), maxObjects: maxObjects.value.trim(),
        });
        if (claim.spec.bucketName) await ensureBucketNameFree(claim.spec.bucketName, namespaces);
        const created = await sdk().k8s.create({ ...RESOURCES.objectbucketclaims, namespace: claim.metadata.namespace }, claim);
        openSheet({ kind: 'ObjectBucketClaim', view: 'detail', name: created.metadata.name, namespace: created.metadata.namespace });
      },
    }));
}

function claimFrom({ storageClassName, namespace, name, exact, bucketName, maxSize, maxObjects }) {
  const spec = { storageClassName };
  if (exact) spec.bucketName = bucketName || name;
  else spec.generateBucketName = bucketName || name;
  const additionalConfig = {};
  if (maxSize) additionalConfig.maxSize = maxSize;
  if (maxObjects) additionalConfig.maxObjects = maxObjects;
  if (Object.keys(additionalConfig).length > 0) spec.additionalConfig = additionalConfig;
  return { apiVersion: CLAIM_API_VERSION, kind: 'ObjectBucketClaim', metadata: { name, namespace }, spec };
}

// ensureBucketNameFree is the exact-name pre-check: bucket names are global
// to the object store, so a name another claim asked for, or a bound bucket
// already has, would leave the new claim pending for ever.
async function ensureBucketNameFree(bucketName, namespaces) {
  const [{ items: buckets }, { claims }] = await Promise.all([
    sdk().k8s.list(RESOURCES.objectbuckets),
    listClaims(namespaces),
  ]);
  const bound = buckets.find((b) => b.spec && b.spec.endpoint && b.spec.endpoint.bucketName === bucketName);
  if (bound) throw new Error(`A bucket named ${bucketName} already exists (ObjectBucket ${bound.metadata.name}); choose another name or a generated one.`);
  const claimed = claims.find((c) => c.spec && c.spec.bucketName === bucketName);
  if (claimed) throw new Error(`The claim ${claimed.metadata.namespace}/${claimed.metadata.name} already asks for a bucket named ${bucketName}; choose another name or a generated one.`);
}

// bucketDetail is the claim detail sheet: where the bucket is and how a
// workload consumes it.
export async function bucketDetail(root, ctx) {
  const { name, namespace } = ctx.resource;
  const claim = await sdk().k8s.get({ ...RESOURCES.objectbucketclaims, namespace, name });
  const spec = claim.spec || {};
  const connection = await readConnection(claim);
  mount(root,
    heading(`Bucket claim ${namespace}/${name}`, 1),
    card(deflist([
      ['Phase', badge(claim.status && claim.status.phase)],
      ['Bucket', connection.bucketName || requestedBucketName(spec)],
      ['Endpoint', connection.endpoint || 'Not provisioned yet'],
      ['StorageClass', spec.storageClassName],
      ['Quota', quotaSummary(spec) || 'None'],
    ]), connection.error ? errorBox(connection.error, 'Could not read the claim\'s ObjectBucket') : null),
    card(
      heading('Use it from a workload', 2),
      text(`Rook writes the endpoint to the ConfigMap ${name} and the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) to the Secret ${name}, both in namespace ${namespace}. Load both into the container:`),
      h('pre', { class: 'plugin-text', attrs: { 'data-snippet': 'envFrom' }, text: envFromSnippet(name) }),
      hint('The credentials are never shown in the console.')),
    actions(button('Close', () => closeSheet(), { secondary: true, name: 'close' })));
}

// readConnection reads where a bound claim's bucket is from its
// ObjectBucket (spec.objectBucketName, set by Rook's provisioner when it
// binds): the ConfigMap Rook writes for the workload is made from that
// ObjectBucket's endpoint, and reading the ObjectBucket keeps ConfigMaps,
// in any namespace, out of what the pages may read. A claim not bound yet
// names none.
async function readConnection(claim) {
  const objectBucketName = claim.spec && claim.spec.objectBucketName;
  if (!objectBucketName) return {};
  try {
    const bucket = await sdk().k8s.get({ ...RESOURCES.objectbuckets, name: objectBucketName });
    const endpoint = (bucket.spec && bucket.spec.endpoint) || {};
    return {
      bucketName: endpoint.bucketName,
      endpoint: endpoint.bucketHost ? `${endpoint.bucketHost}${endpoint.bucketPort ? `:${endpoint.bucketPort}` : ''}` : '',
    };
  } catch (err) {
    if (err && err.status === 404) return {};
    return { error: err };
  }
}

function envFromSnippet(name) {
  return ['envFrom:', '  - configMapRef:', `      name: ${name}`, '  - secretRef:', `      name: ${name}`].join('\n');
}
