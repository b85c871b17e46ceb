package main

import (
	"fmt"
	"slices"
	"sort"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// A BlockStorage and a FileStorage each derive a VolumeSnapshotClass beside
// their StorageClass, of the same name, under the same rules: controlled
// by the consumer, never adopted, restored when edited. The snapshot API
// is not part of Kubernetes itself: its CRDs and its controller come from
// the external-snapshotter, installed by the cluster's distribution or its
// administrator, so the plugin works without them and says so.

// SnapshotClassCRD is the CustomResourceDefinition that serves
// VolumeSnapshotClasses; the plugin needs its v1.
const SnapshotClassCRD = "volumesnapshotclasses.snapshot.storage.k8s.io"

// SnapshotControllerLease is the Lease the external-snapshotter's snapshot
// controller holds while it leads (cmd/snapshot-controller, lockName). It
// is the only trace of the controller the API shows whatever namespace and
// name it was deployed under.
const SnapshotControllerLease = "snapshot-controller-leader"

// VeleroSnapshotClassLabel is what Velero's CSI support looks for: of the
// VolumeSnapshotClasses of a PVC's driver it takes one carrying this
// label. Every class of one driver here snapshots the same way (clusterID
// and secrets are the cluster's; Ceph keeps a snapshot in its volume's
// pool), so whichever Velero takes is right.
const VeleroSnapshotClassLabel = "velero.io/csi-volumesnapshot-class"

// The parameters ceph-csi reads from a VolumeSnapshotClass: the secret the
// snapshotter sidecar passes to CreateSnapshot and DeleteSnapshot.
const (
	paramSnapshotterSecretName = csiPrefix + "snapshotter-secret-name"
	paramSnapshotterSecretNS   = csiPrefix + "snapshotter-secret-namespace"
)

// The SnapshotClass condition of a BlockStorage or FileStorage.
const (
	ConditionSnapshotClass = "SnapshotClass"
	// ReasonSnapshotClassReady: the class is in place and a snapshot
	// controller leads.
	ReasonSnapshotClassReady = "Ready"
	// ReasonSnapshotAPIMissing: the CRD is not installed.
	ReasonSnapshotAPIMissing = "SnapshotAPIMissing"
	// ReasonSnapshotAPIVersion: the CRD does not serve v1.
	ReasonSnapshotAPIVersion = "SnapshotAPIVersionUnsupported"
	// ReasonNoSnapshotController (status Unknown): the class is in place,
	// but no snapshot controller was seen leading.
	ReasonNoSnapshotController = "NoSnapshotControllerSeen"
)

// RenderRBDSnapshotClass is the VolumeSnapshotClass ceph-<name> of a
// BlockStorage: its RBD driver and the provisioner secret its StorageClass
// names, as Rook's example class has them.
func RenderRBDSnapshotClass(bs *cephv1alpha1.BlockStorage, cfg Config) *snapshotv1.VolumeSnapshotClass {
	return snapshotClass(BlockPoolName(bs.Name), bs, "BlockStorage", RBDProvisioner(cfg), "rook-csi-rbd-provisioner", cfg)
}

// RenderCephFSSnapshotClass is the VolumeSnapshotClass cephfs-<name> of a
// FileStorage. ceph-csi finds the filesystem from the volume's handle, so
// the class names none.
func RenderCephFSSnapshotClass(fs *cephv1alpha1.FileStorage, cfg Config) *snapshotv1.VolumeSnapshotClass {
	return snapshotClass(FilesystemName(fs.Name), fs, "FileStorage", CephFSProvisioner(cfg), "rook-csi-cephfs-provisioner", cfg)
}

// snapshotClass deletes the snapshot with its VolumeSnapshot (Delete): a
// snapshot of a consumer's volume lives in the consumer's pools, which go
// with it, so keeping the Ceph snapshot past its VolumeSnapshot would only
// strand it.
func snapshotClass(name string, owner metav1.Object, ownerKind, driver, secret string, cfg Config) *snapshotv1.VolumeSnapshotClass {
	meta := derivedMeta(name, "", owner, ownerKind)
	meta.Labels[VeleroSnapshotClassLabel] = "true"
	return &snapshotv1.VolumeSnapshotClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: snapshotv1.SchemeGroupVersion.String(), Kind: "VolumeSnapshotClass"},
		ObjectMeta: meta,
		Driver:     driver,
		Parameters: map[string]string{
			"clusterID":                cfg.ClusterNamespace,
			paramSnapshotterSecretName: secret,
			paramSnapshotterSecretNS:   cfg.ClusterNamespace,
		},
		DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete,
	}
}

// SnapshotAPIRefusal says why VolumeSnapshotClasses cannot be written
// given the CRD that would serve them (nil: not installed); ok when its v1
// is served.
func SnapshotAPIRefusal(crd *apiextensionsv1.CustomResourceDefinition) (reason, message string, refused bool) {
	const install = "install the external-snapshotter's CRDs (v4 or newer) and its snapshot controller to get snapshots; volumes work without them"
	if crd == nil {
		return ReasonSnapshotAPIMissing, fmt.Sprintf("the snapshot API is not installed (no CRD %s): %s", SnapshotClassCRD, install), true
	}
	var served []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = append(served, v.Name)
		}
	}
	if slices.Contains(served, snapshotv1.SchemeGroupVersion.Version) {
		return "", "", false
	}
	return ReasonSnapshotAPIVersion, fmt.Sprintf("CRD %s serves %v, not %s: %s", SnapshotClassCRD, served, snapshotv1.SchemeGroupVersion, install), true
}

// SnapshotControllerLeads reports whether one of leases (those named
// SnapshotControllerLease, in any namespace) has a holder.
func SnapshotControllerLeads(leases []coordinationv1.Lease) bool {
	return slices.ContainsFunc(leases, func(l coordinationv1.Lease) bool {
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
	})
}

// SnapshotClassDrift lists, sorted, every field of have that is not as
// want: the driver, the deletion policy, each parameter and each label the
// plugin sets. The API server lets them change (Kubernetes calls a class
// fixed once created, but the CRD does not enforce it), so the reconciler
// restores them and says what it restored.
func SnapshotClassDrift(want, have *snapshotv1.VolumeSnapshotClass) []string {
	var diffs []string
	if want.Driver != have.Driver {
		diffs = append(diffs, fmt.Sprintf("driver is %q, want %q", have.Driver, want.Driver))
	}
	if want.DeletionPolicy != have.DeletionPolicy {
		diffs = append(diffs, fmt.Sprintf("deletionPolicy is %q, want %q", have.DeletionPolicy, want.DeletionPolicy))
	}
	diffs = append(diffs, mapDrift("parameters", want.Parameters, have.Parameters, true)...)
	diffs = append(diffs, mapDrift("labels", want.Labels, have.Labels, false)...)
	sort.Strings(diffs)
	return diffs
}
