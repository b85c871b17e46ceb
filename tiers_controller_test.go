package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// withTieredNodes publishes an HDD on each of three nodes and an SSD on
// the first two, and pools them all: hdd is on three hosts, ssd on two.
func (h *harness) withTieredNodes(prefix string) *cephv1alpha1.DiskPool {
	h.t.Helper()
	var names []string
	for i := 1; i <= 3; i++ {
		node := fmt.Sprintf("%s-%d", prefix, i)
		devices := []device{hdd("sdb", fmt.Sprintf("0x%s%02db", prefix, i))}
		if i <= 2 {
			devices = append(devices, ssd("sdc", fmt.Sprintf("0x%s%02dc", prefix, i)))
		}
		h.publishDiscovery(node, devices...)
		for _, d := range h.waitDisks(node, len(devices)) {
			names = append(names, d.Name)
		}
	}
	pool := h.createPool(prefix, names...)
	h.eventually("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
	return pool
}

// A consumer's class reaches its Rook object's pools and its status, its
// replication follows the hosts of that class, a class without disks is
// refused, and a class change is announced as the data move it is; each
// OSD's device carries its Disk's class in the CephCluster.
func TestConsumersOnATier(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withTieredNodes("tier")
	ns := h.cfg.ClusterNamespace

	t.Run("every device carries its Disk's type as its class", func(t *testing.T) {
		h.eventually("the CephCluster lists the five devices with their classes", func() error {
			classes := map[string]string{}
			for _, n := range h.cluster().Spec.Storage.Nodes {
				for _, d := range n.Devices {
					classes[n.Name+" "+d.Name] = d.Config[DeviceClassConfigKey]
				}
			}
			want := map[string]string{}
			for i := 1; i <= 3; i++ {
				want[fmt.Sprintf("tier-%d /dev/disk/by-id/wwn-0xtier%02db", i, i)] = "hdd"
				if i <= 2 {
					want[fmt.Sprintf("tier-%d /dev/disk/by-id/wwn-0xtier%02dc", i, i)] = "ssd"
				}
			}
			if fmt.Sprint(classes) != fmt.Sprint(want) {
				return fmt.Errorf("devices: %v, want %v", classes, want)
			}
			return nil
		})
		assert.True(t, h.cluster().Spec.Storage.AllowDeviceClassUpdate, "OSDs made before classes take theirs too")
	})

	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Spec: cephv1alpha1.BlockStorageSpec{DeviceClass: cephv1alpha1.DiskTypeSSD}}
	t.Run("a pool on ssd: two copies, as ssd is on two hosts", func(t *testing.T) {
		h.createConsumer(bs)
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
		var pool cephv1.CephBlockPool
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "ceph-fast"}, &pool))
		assert.Equal(t, "ssd", pool.Spec.DeviceClass)
		assert.Equal(t, uint(2), pool.Spec.Replicated.Size)
		assert.Equal(t, "host", pool.Spec.FailureDomain)
		assert.Equal(t, "host~ssd", pool.Annotations[cephv1alpha1.FailureDomainsAnnotation])
		assert.Equal(t, cephv1alpha1.DiskTypeSSD, bs.Status.DeviceClass)
		assert.Equal(t, int32(2), bs.Status.Replicas)
		require.NotNil(t, bs.Status.Capacity)
		assert.Equal(t, 2*int64(1000204886016), bs.Status.Capacity.RawBytes, "the ssd disks' raw capacity")
		assert.Equal(t, cephv1alpha1.CapacityFromDisks, bs.Status.Capacity.Source)
		require.NotNil(t, bs.Status.CephBudget)
		assert.Equal(t, int32(1), bs.Status.CephBudget.CrushRules, "made on its class, it keeps the rule named after it")
	})

	t.Run("a class no DiskPool has disks of is refused, and nothing is made", func(t *testing.T) {
		nv := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "nv"}, Spec: cephv1alpha1.BlockStorageSpec{DeviceClass: cephv1alpha1.DiskTypeNVMe}}
		h.createConsumer(nv)
		h.waitPhase(nv, func() cephv1alpha1.StorageStatus { return nv.Status }, cephv1alpha1.StorageDegraded)
		ready := meta.FindStatusCondition(nv.Status.Conditions, cephv1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, ReasonNoDisksOfClass, ready.Reason)
		assert.Contains(t, nv.Status.Message, "no DiskPool contributes disks of class nvme (classes with disks: ssd (2 nodes), hdd (3 nodes))")
		err := h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "ceph-nv"}, &cephv1.CephBlockPool{})
		assert.True(t, apierrors.IsNotFound(err), "no CephBlockPool: %v", err)
	})

	t.Run("moving to hdd moves the data, and says so", func(t *testing.T) {
		h.update(bs, func() { bs.Spec.DeviceClass = cephv1alpha1.DiskTypeHDD })
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
		var pool cephv1.CephBlockPool
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "ceph-fast"}, &pool))
		assert.Equal(t, "hdd", pool.Spec.DeviceClass)
		assert.Equal(t, uint(3), pool.Spec.Replicated.Size)
		assert.Equal(t, "host~ssd,host~hdd", pool.Annotations[cephv1alpha1.FailureDomainsAnnotation])
		changed := meta.FindStatusCondition(bs.Status.Conditions, ConditionReplicationChanged)
		require.NotNil(t, changed)
		assert.Equal(t, ReasonSpecChanged, changed.Reason)
		assert.Contains(t, changed.Message, "replication changes from 2 (host, ssd) to 3 (host, hdd)")
		assert.Contains(t, changed.Message, "Ceph moves every byte in it from the ssd OSDs to the hdd OSDs")
		assert.Equal(t, int32(2), bs.Status.CephBudget.CrushRules, "<pool>_host_hdd beside the rule it was made on")
		h.eventually("the Event says so", func() error {
			if note := h.eventNote(bs.UID, "ReplicationChanged"); !strings.Contains(note, "from the ssd OSDs to the hdd OSDs") {
				return fmt.Errorf("note %q", note)
			}
			return nil
		})
	})

	t.Run("dropping the class puts the pool back on every OSD", func(t *testing.T) {
		h.update(bs, func() { bs.Spec.DeviceClass = "" })
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
		var pool cephv1.CephBlockPool
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "ceph-fast"}, &pool))
		assert.Empty(t, pool.Spec.DeviceClass, "the merge patch removes the class")
		assert.Empty(t, bs.Status.DeviceClass)
		assert.Contains(t, meta.FindStatusCondition(bs.Status.Conditions, ConditionReplicationChanged).Message, "to every OSD")
	})

	t.Run("a filesystem's metadata goes to the fastest class that keeps its copies", func(t *testing.T) {
		two := int32(2)
		fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "files"},
			Spec: cephv1alpha1.FileStorageSpec{DeviceClass: cephv1alpha1.DiskTypeHDD, Replicas: &two, MetadataServers: 1}}
		h.createConsumer(fs)
		h.waitPhase(fs, func() cephv1alpha1.StorageStatus { return fs.Status }, cephv1alpha1.StorageProvisioning)
		var cephfs cephv1.CephFilesystem
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "cephfs-files"}, &cephfs))
		assert.Equal(t, "ssd", cephfs.Spec.MetadataPool.DeviceClass, "two copies fit ssd's two hosts")
		require.Len(t, cephfs.Spec.DataPools, 1)
		assert.Equal(t, "hdd", cephfs.Spec.DataPools[0].DeviceClass)
		assert.Equal(t, cephv1alpha1.DiskTypeHDD, fs.Status.DeviceClass)
		assert.Equal(t, cephv1alpha1.DiskTypeSSD, fs.Status.MetadataDeviceClass)

		h.update(fs, func() { fs.Spec.Replicas = nil })
		h.waitPhase(fs, func() cephv1alpha1.StorageStatus { return fs.Status }, cephv1alpha1.StorageProvisioning)
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "cephfs-files"}, &cephfs))
		assert.Equal(t, "hdd", cephfs.Spec.MetadataPool.DeviceClass, "three copies: ssd's two hosts would weaken the metadata")
		assert.Equal(t, "host~ssd,host~hdd", cephfs.Annotations[cephv1alpha1.MetadataFailureDomainsAnnotation])
		assert.Contains(t, meta.FindStatusCondition(fs.Status.Conditions, ConditionReplicationChanged).Message,
			"Ceph moves its metadata from the ssd OSDs to the hdd OSDs")
	})
}

// A device class never lowers a consumer's copies: a class change onto
// fewer nodes than its replicas, and a DiskPool edit that leaves its class
// on fewer nodes than the copies it has, are refused with the numbers, and
// its CephBlockPool keeps the size and class it had (Rook would take a
// size of 1, and Ceph gives a size of 2 a min_size of 1).
func TestAClassNeverLowersCopies(t *testing.T) {
	h := newHarness(t)
	h.start()
	pool := h.withTieredNodes("few")
	ns := h.cfg.ClusterNamespace
	blockPool := func(name string) cephv1.CephBlockPool {
		var p cephv1.CephBlockPool
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: name}, &p))
		return p
	}
	refusal := func(bs *cephv1alpha1.BlockStorage) string {
		ready := meta.FindStatusCondition(bs.Status.Conditions, cephv1alpha1.ConditionReady)
		require.NotNil(t, ready)
		assert.Equal(t, ReasonTooFewNodesOfClass, ready.Reason)
		return bs.Status.Message
	}

	t.Run("three replicas onto ssd's two nodes is refused, and the pool keeps three copies on hdd", func(t *testing.T) {
		three := int32(3)
		bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "three"},
			Spec: cephv1alpha1.BlockStorageSpec{Replicas: &three, DeviceClass: cephv1alpha1.DiskTypeHDD}}
		h.createConsumer(bs)
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
		require.Equal(t, uint(3), blockPool("ceph-three").Spec.Replicated.Size)

		h.update(bs, func() { bs.Spec.DeviceClass = cephv1alpha1.DiskTypeSSD })
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageDegraded)
		assert.Equal(t, "device class ssd has disks on only 2 nodes; BlockStorage three keeps 3 copies (replicas: 3), one per node: add ssd disks on 1 more node, or choose another class",
			refusal(bs))
		p := blockPool("ceph-three")
		assert.Equal(t, uint(3), p.Spec.Replicated.Size, "not clamped to ssd's two nodes")
		assert.Equal(t, "hdd", p.Spec.DeviceClass, "nothing moves")
		assert.Equal(t, "host", p.Spec.FailureDomain)
		assert.Equal(t, int32(3), bs.Status.Replicas, "status keeps the placement the pool has")
		assert.Equal(t, cephv1alpha1.DiskTypeHDD, bs.Status.DeviceClass)
	})

	t.Run("a DiskPool edit that leaves ssd on one node keeps its consumer's two copies", func(t *testing.T) {
		bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "two"}, Spec: cephv1alpha1.BlockStorageSpec{DeviceClass: cephv1alpha1.DiskTypeSSD}}
		h.createConsumer(bs)
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
		require.Equal(t, uint(2), blockPool("ceph-two").Spec.Replicated.Size)

		gone := h.disksOf("few-2")["/dev/sdc"].Name
		require.NotEmpty(t, gone)
		h.update(pool, func() {
			pool.Spec.Disks = slices.DeleteFunc(pool.Spec.Disks, func(name string) bool { return name == gone })
		})
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageDegraded)
		assert.Equal(t, "device class ssd has disks on only 1 node; BlockStorage two keeps the 2 copies it has (replicas automatic), one per node: add ssd disks on 1 more node, choose another class, or set replicas: 1",
			refusal(bs))
		p := blockPool("ceph-two")
		assert.Equal(t, uint(2), p.Spec.Replicated.Size, "not one copy")
		assert.True(t, p.Spec.Replicated.RequireSafeReplicaSize)
		assert.Equal(t, "host", p.Spec.FailureDomain)
		assert.Equal(t, "ssd", p.Spec.DeviceClass)
	})
}
