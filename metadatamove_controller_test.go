package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// A DiskPool edit that moves a FileStorage's or an ObjectStorage's
// metadata to another class is announced on the consumer, once, with the
// pools and both classes (MetadataTierMoved): adding the first nvme disks
// on enough nodes takes the metadata there, taking them out brings it back.
// A consumer's creation, an nvme disk on too few nodes and a reconcile
// that leaves the class where it is announce nothing.
func TestAMetadataTierMoveIsAnnounced(t *testing.T) {
	h := newHarness(t)
	h.start()
	ns := h.cfg.ClusterNamespace
	// hdd on three nodes, ssd on the first two; an nvme drive on each, not
	// pooled yet.
	var pooled []string
	nvmes := map[int]string{}
	for i := 1; i <= 3; i++ {
		node := fmt.Sprintf("mm-%d", i)
		devices := []device{hdd("sdb", fmt.Sprintf("0x5000mm%02db", i)), nvme("nvme0n1", fmt.Sprintf("00253mm%02d", i))}
		if i <= 2 {
			devices = append(devices, ssd("sdc", fmt.Sprintf("0x5002mm%02dc", i)))
		}
		h.publishDiscovery(node, devices...)
		for path, d := range h.waitDisks(node, len(devices)) {
			if path == "/dev/nvme0n1" {
				nvmes[i] = d.Name
				continue
			}
			pooled = append(pooled, d.Name)
		}
	}
	pool := h.createPool("mm", pooled...)
	h.eventually("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })

	two := int32(2)
	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "mm-files"},
		Spec: cephv1alpha1.FileStorageSpec{DeviceClass: cephv1alpha1.DiskTypeHDD, Replicas: &two, MetadataServers: 1}}
	store := &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "mm-store"}, Spec: cephv1alpha1.ObjectStorageSpec{DeviceClass: cephv1alpha1.DiskTypeHDD}}
	h.createConsumer(fs)
	h.createConsumer(store)
	h.waitPhase(fs, func() cephv1alpha1.StorageStatus { return fs.Status }, cephv1alpha1.StorageProvisioning)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageProvisioning)
	require.Equal(t, cephv1alpha1.DiskTypeSSD, fs.Status.MetadataDeviceClass, "two copies fit ssd's two hosts")
	require.Equal(t, cephv1alpha1.DiskTypeHDD, store.Status.MetadataDeviceClass, "three copies: only hdd has three hosts")
	assert.Equal(t, int32(2), fs.Status.MetadataReplicas, "the copies its metadata keeps, which the console reads")
	assert.Equal(t, int32(3), store.Status.MetadataReplicas, "an object store's metadata at automatic over every host")

	metadataClasses := func() (file, object string) {
		var cephfs cephv1.CephFilesystem
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "cephfs-mm-files"}, &cephfs))
		var cephobj cephv1.CephObjectStore
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: "cephobj-mm-store"}, &cephobj))
		return cephfs.Spec.MetadataPool.DeviceClass, cephobj.Spec.MetadataPool.DeviceClass
	}
	waitMetadata := func(what, file, object string) {
		h.eventually(what, func() error {
			if f, o := metadataClasses(); f != file || o != object {
				return fmt.Errorf("metadata on %q and %q, want %q and %q", f, o, file, object)
			}
			return nil
		})
	}
	moves := func() (file, object int) {
		return h.occurrences(fs.Name, EventMetadataTierMoved), h.occurrences(store.Name, EventMetadataTierMoved)
	}
	f, o := moves()
	assert.Zero(t, f+o, "a consumer's first placement moves nothing")

	// One nvme disk holds neither's copies: nothing moves.
	h.update(pool, func() { pool.Spec.Disks = append(pool.Spec.Disks, nvmes[1]) })
	h.eventually("the CephCluster lists the nvme disk", func() error {
		if !slices.Contains(h.clusterDevices()["mm-1"], "/dev/disk/by-id/nvme-eui.00253mm01") {
			return fmt.Errorf("mm-1's devices: %v", h.clusterDevices()["mm-1"])
		}
		return nil
	})

	// nvme on all three nodes: both consumers' metadata goes there.
	h.update(pool, func() { pool.Spec.Disks = append(pool.Spec.Disks, nvmes[2], nvmes[3]) })
	waitMetadata("both consumers' metadata pools are on nvme", "nvme", "nvme")
	h.eventually("each consumer says its metadata moved, once", func() error {
		if f, o := moves(); f != 1 || o != 1 {
			return fmt.Errorf("%d and %d MetadataTierMoved Events, want one each", f, o)
		}
		return nil
	})
	assert.Equal(t, "metadata pool cephfs-mm-files-metadata moves from the ssd OSDs to the nvme OSDs, as the DiskPools' disks changed: "+
		"Rook gives it a new CRUSH rule and Ceph copies its data onto the nvme OSDs", h.eventNote(fs.UID, string(EventMetadataTierMoved)))
	storeNote := h.eventNote(store.UID, string(EventMetadataTierMoved))
	assert.True(t, strings.HasPrefix(storeNote, "metadata pools cephobj-mm-store.rgw.control, "), storeNote)
	assert.Contains(t, storeNote, "cephobj-mm-store.rgw.buckets.index")
	assert.Contains(t, storeNote, "and .rgw.root move from the hdd OSDs to the nvme OSDs, as the DiskPools' disks changed")

	// An edit that leaves the metadata where it is announces nothing.
	h.update(fs, func() { fs.Spec.MetadataServers = 2 })
	h.waitPhase(fs, func() cephv1alpha1.StorageStatus { return fs.Status }, cephv1alpha1.StorageProvisioning)
	f, o = moves()
	assert.Equal(t, [2]int{1, 1}, [2]int{f, o}, "no move, no Event")

	// The nvme disks taken out: the metadata goes back, and says so.
	h.update(pool, func() {
		pool.Spec.Disks = slices.DeleteFunc(pool.Spec.Disks, func(name string) bool { return slices.Contains([]string{nvmes[1], nvmes[2], nvmes[3]}, name) })
	})
	waitMetadata("the metadata pools are back on ssd and hdd", "ssd", "hdd")
	h.eventually("each consumer says its metadata moved back", func() error {
		if f, o := moves(); f != 2 || o != 2 {
			return fmt.Errorf("%d and %d MetadataTierMoved Events, want two each", f, o)
		}
		return nil
	})
	assert.Contains(t, h.eventNotes(fs.UID, EventMetadataTierMoved), "metadata pool cephfs-mm-files-metadata moves from the nvme OSDs to the ssd OSDs, as the DiskPools' disks changed: "+
		"Rook gives it a new CRUSH rule and Ceph copies its data onto the ssd OSDs")
}

// eventNotes are the notes of every Event of reason about the object uid.
func (h *harness) eventNotes(uid types.UID, reason EventReason) []string {
	h.t.Helper()
	var events corev1.EventList
	require.NoError(h.t, h.c.List(h.ctx, &events))
	var notes []string
	for _, e := range events.Items {
		if e.InvolvedObject.UID == uid && e.Reason == string(reason) {
			notes = append(notes, e.Message)
		}
	}
	return notes
}
