package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestSymmetricDifference(t *testing.T) {
	cases := []struct {
		name string
		a, b []string
		want []string
	}{
		{"nothing changed", []string{"x", "y"}, []string{"y", "x"}, nil},
		{"one added", []string{"x"}, []string{"x", "y"}, []string{"y"}},
		{"one removed", []string{"x", "y"}, []string{"x"}, []string{"y"}},
		{"replaced", []string{"x"}, []string{"y"}, []string{"y", "x"}},
		{"from nothing", nil, []string{"x"}, []string{"x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, symmetricDifference(tc.a, tc.b))
		})
	}
}

// An OSD that puts LVM or dm-crypt on a raw disk makes Rook list only that
// child, with no identity of the disk under it. The disk must stay the
// Disk it was, now in use; a second Disk for it beside a Missing original
// would invite an operator to "clean up" a live OSD's device.
func TestADiskAnOSDTookKeepsItsName(t *testing.T) {
	nodes := []struct {
		name, wwn string
		child     device
	}{
		{"keep-lvm", "0x5000c500000a1b01", osdLV("dm-0", "sdb")},
		{"keep-crypt", "0x5000c500000a1b02", osdCrypt("dm-0", "sdb")},
	}
	h := newHarness(t)
	h.start()
	before := map[string]cephv1alpha1.Disk{}
	var listed []string
	for _, n := range nodes {
		h.publishDiscovery(n.name, hdd("sdb", n.wwn), hdd("sdc", n.wwn+"c"))
		d := h.waitDisks(n.name, 2)["/dev/sdb"]
		require.Equal(t, cephv1alpha1.DiskAvailable, d.Status.State)
		before[n.name] = d
		listed = append(listed, d.Name)
	}
	pool := h.createPool("keep", listed...)
	h.eventually("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
	devicesBefore := h.clusterDevices()

	for _, n := range nodes {
		h.publishDiscovery(n.name, n.child, hdd("sdc", n.wwn+"c"))
	}
	h.eventually("each Disk is in use by its child under its own name", func() error {
		var errs []error
		for _, n := range nodes {
			var got cephv1alpha1.Disk
			if err := h.c.Get(h.ctx, client.ObjectKey{Name: before[n.name].Name}, &got); err != nil {
				return err
			}
			if got.Status.State != cephv1alpha1.DiskInUse {
				errs = append(errs, fmt.Errorf("%s under %s: state %q reason %q", got.Name, n.child["type"], got.Status.State, got.Status.Reason))
			}
		}
		return errors.Join(errs...)
	})
	for _, n := range nodes {
		want, kind := before[n.name], n.child["type"].(string)
		var all cephv1alpha1.DiskList
		require.NoError(t, h.c.List(h.ctx, &all))
		var names []string
		for _, d := range all.Items {
			if d.Status.NodeName != n.name {
				continue
			}
			names = append(names, d.Name)
			assert.NotEqual(t, cephv1alpha1.DiskMissing, d.Status.State, "%s: Disk %s (%s) went Missing", n.name, d.Name, d.Status.Path)
			if d.Name != want.Name {
				continue
			}
			assert.Equal(t, want.UID, d.UID, n.name)
			assert.Equal(t, "/dev/sdb", d.Status.Path, n.name)
			assert.Equal(t, want.Status.StablePath, d.Status.StablePath, n.name)
			assert.Equal(t, want.Status.WWN, d.Status.WWN, n.name)
			assert.Equal(t, want.Status.Serial, d.Status.Serial, n.name)
			assert.Equal(t, cephv1alpha1.DiskTypeHDD, d.Status.Type, n.name)
			assert.Equal(t, "in use by "+kind+" dm-0 (ceph_bluestore)", d.Status.Reason, n.name)
			assert.False(t, d.Status.Available, n.name)
			assert.Equal(t, "keep", d.Status.ClaimedBy, n.name)
		}
		assert.Len(t, names, 2, "%s: no second Disk for the same device: %v", n.name, names)
		assert.Contains(t, names, want.Name, n.name)
	}
	assert.Equal(t, devicesBefore, h.clusterDevices(), "the OSDs' devices stay in the CephCluster by their by-id paths")
	require.NoError(t, h.poolPhase(pool, cephv1alpha1.DiskPoolReady))
}
