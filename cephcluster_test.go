package main

import (
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestRenderStorageNodes(t *testing.T) {
	loop := disk("l", "k3d-server-0", "", 10, cephv1alpha1.DiskAvailable, "")
	loop.Status.Path = "/dev/loop0"
	cases := []struct {
		name  string
		disks []cephv1alpha1.Disk
		want  []cephv1.Node
	}{
		{
			name:  "nodes and devices are sorted whatever the input order",
			disks: []cephv1alpha1.Disk{available("c", "n2", 1), available("b", "n1", 1), available("a", "n1", 1)},
			want: []cephv1.Node{
				{Name: "n1", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-a"}, {Name: "/dev/disk/by-id/wwn-b"}}}},
				{Name: "n2", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-c"}}}},
			},
		},
		{
			name:  "a device is named by its stable path, which survives reboots",
			disks: []cephv1alpha1.Disk{available("a", "n1", 1)},
			want:  []cephv1.Node{{Name: "n1", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-a"}}}}},
		},
		{
			name:  "a device without a stable path falls back to its kernel path",
			disks: []cephv1alpha1.Disk{loop},
			want:  []cephv1.Node{{Name: "k3d-server-0", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/loop0"}}}}},
		},
		{
			name:  "a device listed twice appears once",
			disks: []cephv1alpha1.Disk{available("a", "n1", 1), available("a", "n1", 1)},
			want:  []cephv1.Node{{Name: "n1", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-a"}}}}},
		},
		{
			name:  "a Disk's type is its device's class; a device without a type has none",
			disks: []cephv1alpha1.Disk{typed(available("a", "n1", 1), "nvme"), typed(available("b", "n1", 1), "hdd"), available("c", "n1", 1)},
			want: []cephv1.Node{{Name: "n1", Selection: cephv1.Selection{Devices: []cephv1.Device{
				{Name: "/dev/disk/by-id/wwn-a", Config: map[string]string{"deviceClass": "nvme"}},
				{Name: "/dev/disk/by-id/wwn-b", Config: map[string]string{"deviceClass": "hdd"}},
				{Name: "/dev/disk/by-id/wwn-c"},
			}}}},
		},
		{
			name:  "no disks render no nodes, not a nil list",
			disks: nil,
			want:  []cephv1.Node{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, RenderStorageNodes(pointers(tc.disks)))
		})
	}
	t.Run("a retained device, which no Disk describes, is listed without a class", func(t *testing.T) {
		got := RenderStorageNodes(pointers([]cephv1alpha1.Disk{typed(available("a", "n1", 1), "ssd")}), DeviceID{Node: "n1", Device: "/dev/kept"})
		assert.Equal(t, []cephv1.Node{{Name: "n1", Selection: cephv1.Selection{Devices: []cephv1.Device{
			{Name: "/dev/disk/by-id/wwn-a", Config: map[string]string{"deviceClass": "ssd"}},
			{Name: "/dev/kept"},
		}}}}, got)
	})
}

// typed is d with the Disk type t.
func typed(d cephv1alpha1.Disk, t cephv1alpha1.DiskType) cephv1alpha1.Disk {
	d.Status.Type = t
	return d
}

func TestClusterDevicesRoundTripsRenderedNodes(t *testing.T) {
	disks := []cephv1alpha1.Disk{available("a", "n1", 1), available("b", "n2", 1)}
	cluster := BootstrapCephCluster(testConfig())
	cluster.Spec.Storage.Nodes = RenderStorageNodes(pointers(disks))
	got := ClusterDevices(cluster)
	assert.Equal(t, map[DeviceID]bool{
		{Node: "n1", Device: "/dev/disk/by-id/wwn-a"}: true,
		{Node: "n2", Device: "/dev/disk/by-id/wwn-b"}: true,
	}, got)
	for i := range disks {
		assert.True(t, got[DeviceIDOf(&disks[i])])
	}
	assert.Empty(t, ClusterDevices(nil))
}

func pointers(disks []cephv1alpha1.Disk) []*cephv1alpha1.Disk {
	out := make([]*cephv1alpha1.Disk, len(disks))
	for i := range disks {
		out[i] = &disks[i]
	}
	return out
}
