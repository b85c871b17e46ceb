package devconsole_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// The objects the console is shown. Status is written as the reconcilers
// would, through the status subresource.
const (
	xssModel     = `<img src=x onerror=alert(1)>`
	existingPool = "pool-existing"
	goneDisk     = "disk-gone" // listed by existingPool, no Disk any more
	blockName    = "bs-fast"
	waitingName  = "bs-waiting" // a BlockStorage the plugin has not reconciled yet
	fileName     = "fs-shared"
	// fileSnapshotRefusal is the FileStorage's SnapshotClass condition.
	fileSnapshotRefusal = "VolumeSnapshotClass cephfs-fs-shared already exists and is not owned by this resource; it is left untouched: delete or rename it"
	objectName          = "os-s3"
	objectClass         = "cephobj-os-s3"
	appNamespace        = "apps"
	rookNS              = "rook-ceph"
	decoyNS             = "other-ceph"

	// The pool whose disks the retirement scenarios retire, the disk that
	// can replace one, and a finished retirement of a disk already retired.
	retirePool       = "pool-retire"
	spareDisk        = "disk-c9"
	retiredDisk      = "disk-c0"
	finishedRetiring = "retire-disk-c0"
	retiredSteps     = "Wipe the disk before it is used again: on node node-c, run sgdisk --zap-all /dev/disk/by-id/wwn-disk-c0"
)

func disk(name, node, path, size string, typ v1alpha1.DiskType, state v1alpha1.DiskState, claimedBy, model string) *v1alpha1.Disk {
	q := resource.MustParse(size)
	return &v1alpha1.Disk{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1alpha1.DiskStatus{
			NodeName: node, Path: path, StablePath: "/dev/disk/by-id/wwn-" + name, Size: &q, Type: typ,
			Rotational: typ == v1alpha1.DiskTypeHDD, Model: model, Serial: "SER-" + name, State: state, ClaimedBy: claimedBy,
			Available: state == v1alpha1.DiskAvailable,
		},
	}
}

func createFixtures(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	c := controlPlane.Env(t).Client

	for _, d := range []*v1alpha1.Disk{
		disk("disk-a1", "node-a", "/dev/sdb", "4Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskAvailable, "", "ST4000NM0035"),
		disk("disk-a2", "node-a", "/dev/sdc", "2Ti", v1alpha1.DiskTypeSSD, v1alpha1.DiskAvailable, "", "Samsung PM883"),
		disk("disk-b1", "node-b", "/dev/nvme0n1", "1Ti", v1alpha1.DiskTypeNVMe, v1alpha1.DiskInUse, existingPool, "Micron 7450"),
		disk("disk-xss", "node-b", "/dev/sdd", "500Gi", v1alpha1.DiskTypeSSD, v1alpha1.DiskAvailable, "", xssModel),
		disk("disk-c1", "node-c", "/dev/sdb", "8Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, retirePool, "ST8000NM000A"),
		disk("disk-c2", "node-c", "/dev/sdc", "8Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, retirePool, "ST8000NM000A"),
		disk("disk-c3", "node-c", "/dev/sdd", "8Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, retirePool, "ST8000NM000A"),
		disk(spareDisk, "node-c", "/dev/sdj", "8Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskAvailable, "", "ST8000NM000A"),
		retired(disk(retiredDisk, "node-c", "/dev/sda", "8Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, retirePool, "ST8000NM000A")),
	} {
		createWithStatus(t, d)
	}
	createWithStatus(t, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: retirePool}, Spec: v1alpha1.DiskPoolSpec{Disks: []string{retiredDisk, "disk-c1", "disk-c2", "disk-c3"}},
		Status: v1alpha1.DiskPoolStatus{Phase: v1alpha1.DiskPoolReady, SelectedDiskCount: 3, CephCluster: &v1alpha1.ObjectReference{Namespace: rookNS, Name: "rook-ceph"}}})
	createWithStatus(t, &v1alpha1.DiskRetirement{
		ObjectMeta: metav1.ObjectMeta{Name: finishedRetiring},
		Spec:       v1alpha1.DiskRetirementSpec{Disk: retiredDisk},
		Status: v1alpha1.DiskRetirementStatus{
			Phase: v1alpha1.RetirementRetired, Message: "osd.7 was removed; the device left the CephCluster", Pool: retirePool,
			Node: "node-c", Device: "/dev/disk/by-id/wwn-" + retiredDisk, OSDID: ptr.To[int32](7), OSDUUID: "7f1c2d3e-0000-4000-8000-000000000007", Purged: true, PGsLeft: ptr.To[int32](0),
			Preflight: passedPreflight(), ManualSteps: retiredSteps,
		},
	})

	pool := &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: existingPool}, Spec: v1alpha1.DiskPoolSpec{Disks: []string{"disk-b1", goneDisk}}}
	raw := resource.MustParse("1Ti")
	pool.Status = v1alpha1.DiskPoolStatus{Phase: v1alpha1.DiskPoolReady, SelectedDiskCount: 1, RawCapacity: &raw, Message: "1 of 2 disks resolved; disk-gone: no such Disk",
		CephCluster: &v1alpha1.ObjectReference{Namespace: rookNS, Name: "rook-ceph"}}
	createWithStatus(t, pool)

	// The consumers as the plugin leaves them on the CephCluster below (2
	// nodes, so 2 copies; Ceph reports 7 TiB and stops writes at 80%):
	// each with its share of Ceph's budget at 2 copies (2 CRUSH rules a
	// pool, budget.go) and its usable capacity, 7 TiB × 0.8 / 2. The FileStorage's was last written before
	// Ceph reported, from the 1 TiB of disks existingPool then fed.
	ready := func(class string, budget v1alpha1.CephBudgetUse, capacity v1alpha1.ConsumerCapacity) v1alpha1.StorageStatus {
		return v1alpha1.StorageStatus{Phase: v1alpha1.StorageReady, StorageClassName: class, Replicas: 2, FailureDomain: "host", Message: "ready", ObservedGeneration: 1,
			Capacity: &capacity, CephBudget: &budget}
	}
	fromCeph := v1alpha1.ConsumerCapacity{Usable: "2.8 TiB", UsableBytes: 3078632557772, RawBytes: cephRawBytes, FullRatioPercent: 80, Source: v1alpha1.CapacityFromCeph}
	fromDisks := v1alpha1.ConsumerCapacity{Usable: "409.6 GiB", UsableBytes: 439804651110, RawBytes: 1 << 40, FullRatioPercent: 80, Source: v1alpha1.CapacityFromDisks}
	// The BlockStorage has its VolumeSnapshotClass; the FileStorage's was
	// refused (a foreign class holds the name), as its condition says.
	block := ready("ceph-"+blockName, v1alpha1.CephBudgetUse{Pools: 1, CrushRules: 2, PGCopies: 64}, fromCeph)
	block.SnapshotClassName = "ceph-" + blockName
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: blockName}, Spec: v1alpha1.BlockStorageSpec{Replicas: ptr.To[int32](2), Default: true},
		Status: block})
	file := ready("cephfs-"+fileName, v1alpha1.CephBudgetUse{Pools: 2, CrushRules: 4, PGCopies: 128}, fromDisks)
	file.Conditions = []metav1.Condition{{Type: "SnapshotClass", Status: metav1.ConditionFalse, Reason: "ForeignObject",
		Message: fileSnapshotRefusal, LastTransitionTime: metav1.Now()}}
	createWithStatus(t, &v1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: fileName}, Status: file})
	createWithStatus(t, &v1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: objectName},
		Status: ready(objectClass, v1alpha1.CephBudgetUse{Pools: 7, CrushRules: 14, PGCopies: 160}, fromCeph)})
	// No status yet: the sheets count it at the size the plugin gives its
	// spec, 1 copy (1 pool, 2 rules, 32 PG copies).
	require.NoError(t, c.Create(ctx, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: waitingName}, Spec: v1alpha1.BlockStorageSpec{Replicas: ptr.To[int32](1)}}))

	for _, ns := range []string{rookNS, appNamespace, decoyNS} {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	// The CephCluster the pools feed lists one device on each of 2 nodes
	// (2 OSDs) and stops writes at 80%.
	cluster := cephClusterWithCapacity(rookNS, "rook-ceph", cephRawBytes, 1099511627776)
	setStorage(cluster, 0.8, map[string][]string{"node-b": {"/dev/disk/by-id/wwn-disk-b1"}, "node-c": {"/dev/disk/by-id/wwn-disk-c1"}})
	createWithStatus(t, cluster)

	// Another CephCluster, which sorts first: not the one the pools feed,
	// so its capacity, devices and full ratio must not be shown.
	decoy := cephClusterWithCapacity(decoyNS, "a-decoy", 107374182400, 0)
	setStorage(decoy, 0.5, map[string][]string{"node-x": {"/dev/sda", "/dev/sdb"}, "node-y": {"/dev/sda", "/dev/sdb"}, "node-z": {"/dev/sda", "/dev/sdb"}})
	createWithStatus(t, decoy)

	// A claim Rook has bound to its ObjectBucket, with the ConfigMap it
	// writes from the ObjectBucket's endpoint (no page reads it).
	createWithStatus(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "objectbucket.io/v1alpha1", "kind": "ObjectBucketClaim",
		"metadata": map[string]any{"name": "existing-claim", "namespace": appNamespace},
		"spec":     map[string]any{"storageClassName": objectClass, "bucketName": "taken-bucket", "objectBucketName": "obc-apps-existing-claim"},
		"status":   map[string]any{"phase": "Bound"},
	}})
	createWithStatus(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "objectbucket.io/v1alpha1", "kind": "ObjectBucket",
		"metadata": map[string]any{"name": "obc-apps-existing-claim"},
		"spec": map[string]any{"storageClassName": objectClass, "reclaimPolicy": "Delete", "endpoint": map[string]any{
			"bucketHost": "rook-ceph-rgw-cephobj-os-s3.rook-ceph.svc", "bucketPort": int64(80), "bucketName": "taken-bucket",
		}},
		"status": map[string]any{"phase": "Bound"},
	}})
	// A claim still waiting for its bucket.
	createWithStatus(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "objectbucket.io/v1alpha1", "kind": "ObjectBucketClaim",
		"metadata": map[string]any{"name": "pending-claim", "namespace": appNamespace},
		"spec":     map[string]any{"storageClassName": objectClass, "bucketName": "requested-bucket"},
		"status":   map[string]any{"phase": "Pending"},
	}})
	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "existing-claim", Namespace: appNamespace},
		Data:       map[string]string{"BUCKET_HOST": "rook-ceph-rgw-cephobj-os-s3.rook-ceph.svc", "BUCKET_PORT": "80", "BUCKET_NAME": "taken-bucket"},
	}))
}

// retired marks d as a DiskRetirement leaves it.
func retired(d *v1alpha1.Disk) *v1alpha1.Disk {
	d.Annotations = map[string]string{v1alpha1.RetiredAnnotation: "osd.7"}
	return d
}

// passedPreflight is the preflight of a retirement the cluster can afford.
func passedPreflight() []v1alpha1.PreflightCheck {
	return []v1alpha1.PreflightCheck{
		{Name: "Hosts", Passed: true, Message: "3 hosts remain; every consumer needs at most 2"},
		{Name: "Capacity", Passed: true, Message: "1.0 TiB stored fits below 85% of the 16 TiB that remain"},
		{Name: "Health", Passed: true, Message: "Ceph reports HEALTH_OK"},
	}
}

// createWithStatus creates obj and then writes its status, which the API
// server drops on create when status is a subresource.
func createWithStatus(t *testing.T, obj client.Object) {
	t.Helper()
	require.NoError(t, createWithStatusErr(context.Background(), controlPlane.Env(t).Client, obj))
}

// createWithStatusErr is createWithStatus for the fixtures' writer
// goroutines, which must not fail the test themselves.
func createWithStatusErr(ctx context.Context, c client.Client, obj client.Object) error {
	withStatus := obj.DeepCopyObject().(client.Object)
	if err := c.Create(ctx, obj); err != nil {
		return err
	}
	withStatus.SetResourceVersion(obj.GetResourceVersion())
	withStatus.SetUID(obj.GetUID())
	err := c.Status().Update(ctx, withStatus)
	if apierrors.IsNotFound(err) {
		return nil // no status subresource: the create kept the status
	}
	return err
}

// cephRawBytes is what the pools' CephCluster reports: 7 TiB.
const cephRawBytes = 7 << 40

// setStorage gives a CephCluster spec.storage: its full ratio and the
// devices it lists per node (one OSD each).
func setStorage(cluster *unstructured.Unstructured, fullRatio float64, devices map[string][]string) {
	nodes := []any{}
	for _, node := range slices.Sorted(maps.Keys(devices)) {
		list := []any{}
		for _, d := range devices[node] {
			list = append(list, map[string]any{"name": d})
		}
		nodes = append(nodes, map[string]any{"name": node, "devices": list})
	}
	spec := cluster.Object["spec"].(map[string]any)
	spec["storage"] = map[string]any{"useAllNodes": false, "useAllDevices": false, "fullRatio": fullRatio, "nodes": nodes}
}

// cephClusterWithCapacity is a Ready CephCluster reporting its raw capacity.
func cephClusterWithCapacity(namespace, name string, total, used int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1", "kind": "CephCluster",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"cephVersion": map[string]any{"image": "quay.io/ceph/ceph:v19.2.3"}, "dataDirHostPath": "/var/lib/rook"},
		"status": map[string]any{"phase": "Ready", "ceph": map[string]any{
			"health":   "HEALTH_OK",
			"capacity": map[string]any{"bytesTotal": total, "bytesUsed": used, "bytesAvailable": total - used},
		}},
	}}
}
