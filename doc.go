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
// Decisions are plain functions beside table tests; the reconcilers are the
// glue that gathers their input and writes their output.
//
//   - Device identity. ParseDiscovery (discovery.go) turns Rook's discovery
//     ConfigMap into devices; DeviceKey and DiskName name a Disk after the
//     device's stable identity (by-id link, WWN, serial), never its kernel
//     name alone; KeepDiskIdentities (identity.go) keeps that name when an
//     OSD's LVM or crypt layer hides the identity. DeviceIDOf (cephcluster.go)
//     is how a Disk appears in the CephCluster: node and by-id path.
//   - Publishing Disks. DiskInventoryReconciler (diskinventory_controller.go):
//     one Disk per device, never deleted (MarkMissing), published again when
//     deleted from outside.
//   - Contested disks. ClaimOwners (claims.go): the older pool owns a disk
//     two pools list; cephv1alpha1.OlderFirst is that order, and the default class's too.
//   - The union. Union and ResolvePool (union.go): what every live pool
//     selects, the node count, each pool's resolution and status
//     (DiskPoolStatus).
//   - One view of the cluster. ClusterView (clusterview.go): the CephCluster
//     (present or not, its devices, what the plugin last patched into it),
//     the union and its node count; consumers subscribe to changes.
//   - The CephCluster's device list. DeviceListReconciler
//     (devicelist_controller.go), the pools' first job, with PlanStorageNodes
//     and RetainedDevices (storagenodes.go): only devices the plugin listed
//     are ever taken out, and only through a DiskPool change.
//     DiskPoolStatusReconciler (diskpool_controller.go) is the second job:
//     each pool's status from the first job's snapshot.
//   - The replication clamp. ComputeReplication and DescribeReplicationChange
//     (replication.go): min(3, nodes) or the requested size clamped to the
//     nodes, and every change announced with its cause.
//   - Consumers. kind[T, R] (consumer_kinds.go) is everything kind-specific;
//     ConsumerReconciler[T, R] (consumer_controller.go) gathers a
//     consumerInput and runs consumerPreconditions (consumer_preconditions.go)
//     in order before it writes anything; Render* (blockpool.go,
//     filesystem.go, objectstore.go, storageclass.go) build what is derived.
//   - Refuse to adopt. IsControlledBy (claims.go): ownership is a controller
//     reference by UID; a same-named object without one is reported
//     (ForeignObject), never touched.
//   - The default class. DefaultClassHolder (claims.go): the oldest
//     BlockStorage asking for it holds it.
//   - Status phases. consumerStatus (consumer_status.go) and DiskPoolStatus
//     (union.go); every reason is a constant there or in union.go; every
//     message is bounded (BoundMessage, messages.go); Rook's own failure
//     reasons come from its Events (RookFailure, rookfailure.go).
//   - Writes. statusPatch (writes.go) writes a whole status with a merge
//     patch; writeMemory (writememory.go) is the one memory of the plugin's
//     own writes, for the window in which the cache lags behind them.
//   - The CephCluster's life. ensureCephCluster (install.go) creates it once
//     and never again (ClusterRecordName); clusterHealthReconciler
//     (cluster_health.go) makes the plugin's phase follow it.
//   - Retiring a disk. A DiskRetirement's facts (Rook's OSD Deployments read
//     as Rook reads them: rook.ParseOSDDeployment, FindOSD in retirement.go), the
//     consumers' Preflight, Ceph's own checks (CephChecks,
//     retirement_ceph.go, on a probe's CephFacts, cephfacts.go), and
//     NextRetirementStep (retirement_step.go), which names the status to
//     write and then the one action to take, in Ceph's order. The plugin's
//     one way to Ceph is a Ceph Job (RenderCephJob, cephjob.go: Rook's image
//     and admin credentials, one verb, its answer in the termination
//     message); the glue is DiskRetirementReconciler
//     (retirement_controller.go). A retired Disk
//     (RetiredAnnotation) leaves the union: the one way a device leaves the
//     CephCluster besides a DiskPool change.
package main
