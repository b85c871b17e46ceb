// Command ceph-rook is the Fundament plugin that gives a cluster block,
// shared file and S3 object storage by installing and driving Rook-Ceph.
//
// The platform runs it as a Deployment; locally `just run` runs it against
// an embedded control plane. It finds the API server in-cluster or through
// $KUBECONFIG, and is configured by the FUNDAMENT_ and FUNP_ variables the
// plugin controller injects (see config.go and definition.yaml).
//
// # Where each idea lives
//
// The core is this package, as the design card draws it. Decisions are
// plain functions beside table tests; the reconcilers are the glue that
// gathers their input and writes their output.
//
//   - Start. main.go reads the configuration (config.go) and runs the
//     plugin (plugin.go: install, then every reconciler on one manager);
//     memlimit.go sizes the Go heap to the container's memory; console.go
//     serves the console's pages and the API calls they may make.
//   - Installing. install.go installs Rook's chart through the Helm helper
//     (rookvalues.go: its values), waits for the operator (install_wait.go)
//     under one install lock (installlock.go), applies the plugin's CRDs
//     (crdinstall.go) and creates the CephCluster once and never again.
//   - Device identity. ParseDiscovery (discovery.go) turns Rook's discovery
//     ConfigMap into devices; DeviceKey and DiskName name a Disk after the
//     device's stable identity (by-id link, WWN, serial), never its kernel
//     name alone; KeepDiskIdentities (identity.go) keeps that name when an
//     OSD's LVM or crypt layer hides the identity. DeviceIDOf
//     (cephcluster.go) is how a Disk appears in the CephCluster: node and
//     by-id path. LoopDiscoveryReconciler (loopdiscovery.go) makes Rook's
//     discovery report loop devices where allowed.
//   - Publishing Disks. DiskInventoryReconciler (diskinventory_controller.go):
//     one Disk per device, never deleted (MarkMissing), published again when
//     deleted from outside, with the OSD Rook runs on it: DiskOSDOf and
//     ClassMismatch (osdclass.go) say when that OSD's device class is not
//     the Disk's type, which the tiers count it by.
//   - Contested disks. ClaimOwners (claims.go): the older pool owns a disk
//     two pools list (api/v1alpha1 OlderFirst, the default class's order
//     too).
//   - The union and its tiers. Union and ResolvePool (union.go): what every
//     live pool selects, the node count, each pool's resolution and status
//     (DiskPoolStatus); Tiers (tiers.go): the union by device class;
//     capacity.go: what each tier holds.
//   - One view of the cluster. ClusterView (clusterview.go): the CephCluster
//     (present or not, its devices, what the plugin last patched into it),
//     the union and its node count; consumers subscribe to changes.
//   - The CephCluster's device list. DeviceListReconciler
//     (devicelist_controller.go), the pools' first job, with
//     PlanStorageNodes and RetainedDevices (storagenodes.go) and the patch
//     that writes them (storagenodes_patch.go): only devices the plugin
//     listed are ever taken out, and only through a DiskPool change;
//     cephcluster_size.go keeps the CephCluster under the API server's
//     object size. DiskPoolStatusReconciler (diskpool_controller.go) is
//     the second job: each pool's status from the first job's snapshot.
//   - The replication clamp. ComputeReplication and
//     DescribeReplicationChange (replication.go): min(3, nodes) or the
//     requested size clamped to the nodes, and every change announced with
//     its cause. On a device class nothing is clamped down: ClassCopies
//     (tiers.go) refuses a class whose nodes cannot hold the copies. Ceph's budgets (budget.go): PGs per OSD and CRUSH rules,
//     checked before a consumer is placed. MetadataTierMove
//     (metadatamove.go) announces metadata pools a DiskPool edit or a
//     spec change moves to another class.
//   - Consumers. kind[T, R] (consumer_kinds.go) is everything
//     kind-specific; ConsumerReconciler[T, R] (consumer_controller.go)
//     gathers a consumerInput and runs consumerPreconditions
//     (consumer_preconditions.go) in order before it writes anything;
//     Render* (blockpool.go, filesystem.go, objectstore.go,
//     storageclass.go, snapshotclass.go) build what is derived, and
//     storageclass_apply.go and snapshotclass_apply.go write it.
//   - Refuse to adopt. IsControlledBy (claims.go): ownership is a
//     controller reference by UID; a same-named object without one is
//     reported (ForeignObject), never touched.
//   - The default class. DefaultClassHolder (claims.go): the oldest
//     BlockStorage asking for it holds it.
//   - Status phases. consumerStatus (consumer_status.go) and DiskPoolStatus
//     (union.go); every reason is a constant there or in union.go; every
//     message is bounded (internal/message); Rook's own failure reasons
//     come from its Events (internal/rook).
//   - Health. clusterHealthReconciler (cluster_health.go) makes the
//     plugin's phase follow the CephCluster; the API watchdog
//     (apihealth.go) reports an API server the plugin cannot reach.
//   - The cache. cachetransform.go trims what the informers keep,
//     informerstore.go is the store they keep it in, and cachesync.go says
//     when every cache is up.
//   - Retiring a disk. internal/retirement carries DiskRetirements out;
//     retirement_view.go is the plugin's side of its seam (the CephCluster's
//     device list and the consumers' needs). A retired Disk
//     (RetiredAnnotation) leaves the union: the one way a device leaves
//     the CephCluster besides a DiskPool change.
//
// # The supporting packages
//
// Dependencies point one way: this package imports the internal packages,
// retirement and upgrade import cephjob, which imports rook; no internal
// package imports the root, and upgrade never imports retirement.
//
//   - api/v1alpha1: the plugin's kinds, and its wire names (annotations.go:
//     the labels, annotations and finalizers the console, the simulation
//     and the e2e read).
//   - internal/rook: Rook's names as the plugin reads them, an OSD read from
//     its Deployment, Rook's failure reasons.
//   - internal/cephjob: the plugin's one way to Ceph (a Job that runs one
//     verb with Rook's image and admin credentials, and its answer).
//   - internal/retirement: retiring a disk, in Ceph's order.
//   - internal/upgrade: in-place Rook and Ceph upgrades, one checked step at
//     a time.
//   - internal/message: prose bounded for the API.
//   - internal/patch: write only what changed.
//   - internal/plugincontroller: the platform's plugin controller;
//     internal/pluginproc runs a plugin binary as it would.
//   - internal/devconsole: the development console host.
//   - internal/localrun: `just run`, the plugin on an embedded control plane.
//   - internal/simulate: Rook and Ceph as the tests and `just run` play them.
//   - internal/testenv: the envtest control plane the tests share.
//   - internal/e2e: the real cluster on this machine (`just e2e`).
//   - internal/bench: the scale benchmark (`just bench`).
//   - internal/browser: headless Chromium for the console's tests.
//   - internal/cachedir, internal/chartrepo, internal/gencheck: where the
//     cached artefacts live, the chart repository served to the tests, and
//     the check that generated code is current.
//   - pluginruntime: the runtime SDK every Fundament plugin links.
package main
