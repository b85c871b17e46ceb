package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

func TestClassMismatch(t *testing.T) {
	osd := func(class string) *cephv1alpha1.DiskOSD { return &cephv1alpha1.DiskOSD{ID: 7, DeviceClass: class} }
	cases := []struct {
		name     string
		diskType cephv1alpha1.DiskType
		osd      *cephv1alpha1.DiskOSD
		says     []string // empty: no mismatch
	}{
		{name: "the class the disk's type gives: nothing to say", diskType: cephv1alpha1.DiskTypeSSD, osd: osd("ssd")},
		{name: "no OSD on the disk: nothing to say", diskType: cephv1alpha1.DiskTypeHDD},
		{name: "a Deployment naming no class leaves CRUSH's as only Ceph knows it: nothing to say", diskType: cephv1alpha1.DiskTypeHDD, osd: osd("")},
		{name: "a disk discovery has not typed: nothing to say", osd: osd("hdd")},
		{
			name:     "an NVMe drive Ceph classed ssd before it had a class: the OSD, both classes, what it means and the fix",
			diskType: cephv1alpha1.DiskTypeNVMe, osd: osd("ssd"),
			says: []string{
				"osd.7 runs on this nvme disk with device class ssd, the class its Deployment rook-ceph-osd-7 carries and Rook keeps CRUSH's at",
				"the plugin's tiers count the disk as nvme while Ceph places data by the CRUSH class, so pools on class nvme never use this OSD and pools on class ssd do",
				"A re-created OSD fixes it: retire the disk with a DiskRetirement (its data moves off first), then remove its ceph.fundament.io/retired annotation, and Rook prepares it again as nvme",
				"`ceph osd crush set-device-class nvme osd.7` by hand does not last: Rook sets the Deployment's class back at its next OSD reconcile (allowDeviceClassUpdate)",
			},
		},
		{name: "a class of someone's own naming disagrees too", diskType: cephv1alpha1.DiskTypeHDD, osd: osd("archive"),
			says: []string{"with device class archive", "pools on class hdd never use this OSD and pools on class archive do"}},
		{name: "classes compare exactly, as CRUSH names them", diskType: cephv1alpha1.DiskTypeHDD, osd: osd("HDD"), says: []string{"device class HDD"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassMismatch(tc.diskType, tc.osd)
			if len(tc.says) == 0 {
				assert.Empty(t, got)
				return
			}
			for _, s := range tc.says {
				assert.Contains(t, got, s)
			}
		})
	}
}

func TestDiskOSDOf(t *testing.T) {
	disk := &cephv1alpha1.Disk{Status: cephv1alpha1.DiskStatus{NodeName: "node-a", Path: "/dev/sdb", StablePath: "/dev/disk/by-id/wwn-0xb", Type: cephv1alpha1.DiskTypeSSD}}
	paths := nodePathsOf([]cephv1alpha1.DiskStatus{disk.Status, {NodeName: "node-a", Path: "/dev/sdc"}})
	cases := []struct {
		name string
		node OSDNodeFacts
		want *cephv1alpha1.DiskOSD
	}{
		{name: "by the kernel path its Deployment records, with its class",
			node: OSDNodeFacts{OSDs: []rook.OSD{{ID: 1, Node: "node-a", BlockPath: "/dev/sdc", DeviceClass: "hdd"}, {ID: 2, Node: "node-a", BlockPath: "/dev/sdb", DeviceClass: "ssd"}}},
			want: &cephv1alpha1.DiskOSD{ID: 2, DeviceClass: "ssd"}},
		{name: "by the stable path", node: OSDNodeFacts{OSDs: []rook.OSD{{ID: 3, Node: "node-a", BlockPath: "/dev/disk/by-id/wwn-0xb", DeviceClass: "hdd"}}},
			want: &cephv1alpha1.DiskOSD{ID: 3, DeviceClass: "hdd"}},
		{name: "the same path on another node is another disk", node: OSDNodeFacts{OSDs: []rook.OSD{{ID: 4, Node: "node-b", BlockPath: "/dev/sdb"}}}},
		{name: "two OSDs on the device cannot tell which", node: OSDNodeFacts{OSDs: []rook.OSD{{ID: 1, Node: "node-a", BlockPath: "/dev/sdb"}, {ID: 5, Node: "node-a", BlockPath: "/dev/sdb"}}}},
		{name: "an unreadable Deployment of the node may be this disk's: none", node: OSDNodeFacts{Unreadable: []string{"rook-ceph-osd-9"}}},
		{name: "none on the node", node: OSDNodeFacts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, DiskOSDOf(disk, tc.node, paths))
		})
	}
}
