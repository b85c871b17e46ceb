package v1alpha1

// The plugin's wire names: the labels, annotations and finalizers it puts
// on its own objects and on Rook's, declared once here so that the console,
// the simulation, the e2e and the benchmark import them instead of spelling
// them again. docs/rook-contract.md says what Rook does with each one it
// sees.

// RetiredAnnotation marks a Disk whose OSD was removed by a DiskRetirement:
// its value is "osd.<id>" (or "no-osd"). A retired Disk leaves the
// CephCluster's device list although a DiskPool still names it, and stays
// out until someone removes the annotation (after wiping the disk). It is
// on the Disk, not only on the retirement, so that deleting a finished
// DiskRetirement cannot bring the device back.
const RetiredAnnotation = "ceph.fundament.io/retired"

// FailureDomainsAnnotation, on a Rook object the plugin derives, records
// every failure domain its pools have had, comma-separated, the first the
// one they were created with: each change left a CRUSH rule behind that
// counts against Ceph's budget (CrushRulesPerPool), and nothing in Rook's
// objects or status remembers it.
const FailureDomainsAnnotation = "ceph.fundament.io/failure-domains"

// MetadataFailureDomainsAnnotation is FailureDomainsAnnotation for an object
// store's metadata pools, which replicate as automatic sizing says and so
// can move apart from its data pool (RenderObjectStore).
const MetadataFailureDomainsAnnotation = "ceph.fundament.io/metadata-failure-domains"

// ManifestHashAnnotation records the hash of the manifest a CRD was last
// applied from, so a restart that finds the same hash writes nothing.
const ManifestHashAnnotation = "ceph.fundament.io/manifest-hash"

// DiscoveryConfigMapLabel ties a Disk to the discovery ConfigMap that
// reported it. When that ConfigMap is deleted (its node left) the label is
// how the Disks of the node are found again, since Rook hashes long node
// names out of the ConfigMap's name.
const DiscoveryConfigMapLabel = "ceph.fundament.io/discovery-configmap"

// RetirementFinalizer holds a DiskRetirement's deletion until what it
// stopped is given back, or its Job has finished.
const RetirementFinalizer = "ceph.fundament.io/retirement"

// RetirementAnnotation is put on an OSD's Deployment, naming the
// DiskRetirement (by UID), before that retirement marks the OSD out; it is
// taken off when the retirement has given the OSD back, and goes with the
// Deployment when the OSD is purged. An OSD Deployment that carries it, or
// the do-not-reconcile label the plugin sets when it stops an OSD, while no
// unfinished retirement has it, was left half-done (its retirement deleted
// with its finalizer stripped): the sweep gives the OSD back.
const RetirementAnnotation = "ceph.fundament.io/retirement"

// RetirementPurgeAnnotation is put on an OSD's Deployment (naming the
// DiskRetirement by UID) before that retirement asks Ceph to purge the
// OSD: from then on the OSD may be gone from Ceph, and the sweep never
// starts it or marks it in again (a purged OSD would only crash-loop).
const RetirementPurgeAnnotation = "ceph.fundament.io/retirement-purge"

// ManagedDevicesAnnotation records, on the CephCluster, the devices the
// plugin put into spec.storage.nodes. Only those are ever taken out again:
// a device someone else listed — in a CephCluster that existed before the
// plugin, or added by hand — is not the plugin's to remove, and removing a
// device is never undone by Rook.
//
// Annotations share a 256 KiB budget, so the record is compact: "v1:" and
// the base64 of each device's 48-bit hash of "node|device", sorted (8 bytes
// a device: 10,000 devices take 80 KB, where their names would take 480).
// A collision would need two of those hashes to meet (about 1 in 5 million
// at 10,000 devices), and could only make a foreign device look managed.
const ManagedDevicesAnnotation = "ceph.fundament.io/managed-devices"

// UpgradeAnnotation on the plugin's CephCluster records the upgrade's
// state (UpgradeState as JSON) for the console, which reads the CephCluster
// already and nothing that would need more of the user's permissions. Rook
// reconciles a CephCluster on a change of its spec, generation or
// deletion, never of its annotations (Rook v1.18
// pkg/operator/ceph/cluster/predicate.go watchControllerPredicate).
const UpgradeAnnotation = "ceph.fundament.io/upgrade"

// ManagedByLabel marks every object the plugin renders.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "fundament-ceph-rook"
)

// ReconcileForLoopDevicesAnnotation, set on Rook's operator ConfigMap,
// makes Rook reconcile its config again so that its discovery DaemonSet is
// rebuilt with loop devices allowed (loopdiscovery.go).
const ReconcileForLoopDevicesAnnotation = "ceph.fundament.io/reconcile-for-loop-devices"

// UpgradePGJobAnnotation on the plugin's CephCluster names the Ceph Job
// that asks Ceph for its PG states before an upgrade step, while it runs:
// written before the Job is created and taken off once its answer was
// read, so that a plugin that restarts reads that Job's answer. A value
// that is not this cluster's own PG-states Job name (a restored or copied
// annotation) is never read or deleted: a new Job is asked instead.
const UpgradePGJobAnnotation = "ceph.fundament.io/upgrade-pg-job"
