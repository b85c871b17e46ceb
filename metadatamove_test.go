package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestMetadataTierMove(t *testing.T) {
	fs := []string{FilesystemMetadataPoolName(FilesystemName("files"))}
	store := ObjectStoreMetadataPoolNames(ObjectStoreName("store"))
	cases := []struct {
		name        string
		pools       []string
		held, next  cephv1alpha1.DiskType
		specChanged bool
		want        string
	}{
		{name: "metadata that stays on its class is not a move", pools: fs, held: "ssd", next: "ssd"},
		{name: "metadata that stays on every OSD is not a move", pools: store, held: "", next: ""},
		{name: "the first nvme disks take a filesystem's metadata: the pool, both classes and the DiskPools as the cause",
			pools: fs, held: "ssd", next: "nvme",
			want: "metadata pool cephfs-files-metadata moves from the ssd OSDs to the nvme OSDs, as the DiskPools' disks changed: " +
				"Rook gives it a new CRUSH rule and Ceph copies its data onto the nvme OSDs"},
		{name: "an object store's seven pools, .rgw.root among them, going back to hdd",
			pools: store, held: "nvme", next: "hdd",
			want: "metadata pools cephobj-store.rgw.control, cephobj-store.rgw.meta, cephobj-store.rgw.log, cephobj-store.rgw.buckets.index, " +
				"cephobj-store.rgw.buckets.non-ec, cephobj-store.rgw.otp and .rgw.root move from the nvme OSDs to the hdd OSDs, as the DiskPools' disks changed: " +
				"Rook gives each a new CRUSH rule and Ceph copies their data onto the hdd OSDs"},
		{name: "a class chosen in the spec is the cause when the spec changed", pools: fs, held: "", next: "ssd", specChanged: true,
			want: "metadata pool cephfs-files-metadata moves from every OSD to the ssd OSDs, as its spec changed: " +
				"Rook gives it a new CRUSH rule and Ceph copies its data onto the ssd OSDs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MetadataTierMove(tc.pools, tc.held, tc.next, tc.specChanged))
		})
	}
}
