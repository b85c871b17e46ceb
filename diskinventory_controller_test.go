package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
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

func TestPlanPublications(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 30, 500, time.UTC)
	earlier := &metav1.Time{Time: time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)}
	stamped := &metav1.Time{Time: now.Truncate(time.Second)}
	disk := func(name string, s cephv1alpha1.DiskStatus) *cephv1alpha1.Disk {
		return &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: s}
	}
	seen := cephv1alpha1.DiskStatus{NodeName: "n1", Path: "/dev/sdb", State: cephv1alpha1.DiskAvailable, Available: true, LastSeenTime: earlier}
	missing := cephv1alpha1.DiskStatus{NodeName: "n1", Path: "/dev/sdc", State: cephv1alpha1.DiskMissing, Reason: "gone", LastSeenTime: earlier}
	typed := func(disks []DiscoveredDisk, t cephv1alpha1.DiskType) []DiscoveredDisk {
		for i := range disks {
			disks[i].Status.Type = t
		}
		return disks
	}
	withOSD := func(s cephv1alpha1.DiskStatus) cephv1alpha1.DiskStatus {
		s.Type = cephv1alpha1.DiskTypeNVMe
		s.OSD = &cephv1alpha1.DiskOSD{ID: 8, DeviceClass: "ssd"}
		s.ClassMismatch = ClassMismatch(s.Type, s.OSD)
		return s
	}
	reported := func(names ...string) []DiscoveredDisk {
		var out []DiscoveredDisk
		for _, n := range names {
			out = append(out, DiscoveredDisk{Name: n, Status: cephv1alpha1.DiskStatus{NodeName: "n1", Path: "/dev/" + n, State: cephv1alpha1.DiskAvailable, Available: true}})
		}
		return out
	}
	cases := []struct {
		name       string
		discovered []DiscoveredDisk
		existing   map[string]*cephv1alpha1.Disk
		owners     map[string]string
		osds       OSDNodeFacts
		check      func(t *testing.T, got []Publication)
	}{
		{
			name: "a new disk gets its claimant and is stamped now", discovered: reported("a"), owners: map[string]string{"a": "pool-1"},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Nil(t, got[0].Prev)
				assert.Equal(t, "pool-1", got[0].Want.ClaimedBy)
				assert.Equal(t, stamped, got[0].Want.LastSeenTime)
			},
		},
		{
			name: "a disk still reported keeps when it was first seen", discovered: reported("a"), existing: map[string]*cephv1alpha1.Disk{"a": disk("a", seen)},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Equal(t, earlier, got[0].Want.LastSeenTime)
				assert.NotNil(t, got[0].Prev)
			},
		},
		{
			name: "a disk back from Missing is stamped now", discovered: reported("a"), existing: map[string]*cephv1alpha1.Disk{"a": disk("a", missing)},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Equal(t, stamped, got[0].Want.LastSeenTime)
				assert.Equal(t, cephv1alpha1.DiskAvailable, got[0].Want.State)
			},
		},
		{
			name: "a disk no longer reported is marked Missing and keeps its claimant", existing: map[string]*cephv1alpha1.Disk{"a": disk("a", seen)}, owners: map[string]string{"a": "pool-1"},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Equal(t, cephv1alpha1.DiskMissing, got[0].Want.State)
				assert.False(t, got[0].Want.Available)
				assert.Equal(t, "pool-1", got[0].Want.ClaimedBy)
				assert.Equal(t, stamped, got[0].Want.LastSeenTime, "missing since now, not since it appeared")
			},
		},
		{
			name: "a Missing disk still not reported stays as it was", existing: map[string]*cephv1alpha1.Disk{"c": disk("c", missing)},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Equal(t, missing, got[0].Want)
			},
		},
		{
			name:       "a disk its node's OSD runs on names it, and a class that agrees says nothing",
			discovered: typed(reported("sdb"), cephv1alpha1.DiskTypeSSD),
			osds:       OSDNodeFacts{OSDs: []rook.OSD{{ID: 3, Node: "n1", BlockPath: "/dev/sdb", DeviceClass: "ssd"}, {ID: 4, Node: "n1", BlockPath: "/dev/sdc", DeviceClass: "ssd"}}},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Equal(t, &cephv1alpha1.DiskOSD{ID: 3, DeviceClass: "ssd"}, got[0].Want.OSD)
				assert.Empty(t, got[0].Want.ClassMismatch)
			},
		},
		{
			name:       "an OSD whose class is not the disk's type: the disk says so",
			discovered: typed(reported("sdb"), cephv1alpha1.DiskTypeNVMe),
			osds:       OSDNodeFacts{OSDs: []rook.OSD{{ID: 3, Node: "n1", BlockPath: "/dev/sdb", DeviceClass: "ssd"}}},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Contains(t, got[0].Want.ClassMismatch, "osd.3 runs on this nvme disk with device class ssd")
			},
		},
		{
			name: "a Missing disk keeps the OSD and mismatch it had", existing: map[string]*cephv1alpha1.Disk{"c": disk("c", withOSD(missing))},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Equal(t, withOSD(missing), got[0].Want)
			},
		},
		{
			name: "an OSD gone takes the disk's OSD and mismatch with it", discovered: typed(reported("sdb"), cephv1alpha1.DiskTypeNVMe),
			existing: map[string]*cephv1alpha1.Disk{"sdb": disk("sdb", withOSD(seen))},
			check: func(t *testing.T, got []Publication) {
				require.Len(t, got, 1)
				assert.Nil(t, got[0].Want.OSD)
				assert.Empty(t, got[0].Want.ClassMismatch)
			},
		},
		{
			name: "reported disks come first, then the missing ones by name", discovered: reported("b"),
			existing: map[string]*cephv1alpha1.Disk{"z": disk("z", seen), "b": disk("b", seen), "m": disk("m", seen)},
			check: func(t *testing.T, got []Publication) {
				var names []string
				for _, p := range got {
					names = append(names, p.Name)
				}
				assert.Equal(t, []string{"b", "m", "z"}, names)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, PlanPublications(tc.discovered, tc.existing, tc.owners, tc.osds, now))
		})
	}
}

// A node's new Disks cost two writes each, and the second is a status
// update on the resourceVersion the create returned, not a patch the API
// server must apply to the stored object. A node's Disks are published
// together, and every one of them is there.
func TestANewDiskIsCreatedThenItsStatusUpdated(t *testing.T) {
	h := newHarness(t)
	h.start()
	before := h.writes.snapshot()
	var devices []device
	for i := range 8 {
		devices = append(devices, hdd(fmt.Sprintf("sd%c", 'b'+i), fmt.Sprintf("0x5000c50000ab%04d", i)))
	}
	h.publishDiscovery("two-writes", devices...)
	disks := h.waitDisks("two-writes", 8)
	h.eventually("every Disk has its status", func() error {
		for _, d := range h.disksOf("two-writes") {
			if d.Status.State != cephv1alpha1.DiskAvailable || d.Status.LastSeenTime == nil {
				return fmt.Errorf("%s: %+v", d.Name, d.Status)
			}
		}
		return nil
	})
	counts := map[string]int{}
	for k, v := range h.writes.snapshot() {
		if d := v - before[k]; d > 0 && strings.Contains(k, "/disks") {
			method, path, _ := strings.Cut(k, " ")
			kind := "disk"
			if strings.HasSuffix(path, "/status") {
				kind = "status"
			}
			counts[method+" "+kind] += d
		}
	}
	assert.Equal(t, map[string]int{"POST disk": len(disks), "PUT status": len(disks)}, counts)
}

// Rook's daemon only runs on Nodes, so a report naming no Node is invented
// (anyone who can write ConfigMaps in the operator namespace can make one)
// or left by a deleted node: it publishes nothing, says why, and its Node's
// registration publishes it; a Node deleted marks its Disks Missing and
// deletes none.
func TestAReportForANodeThatIsNotANodePublishesNothing(t *testing.T) {
	h := newHarness(t)
	h.start()
	ns := h.cfg.OperatorNamespace
	cm := discoveryConfigMap(t, "invented", hdd("sdb", "0x5000inv0b"), hdd("sdc", "0x5000inv0c"))
	cm.Namespace = ns
	require.NoError(t, h.c.Create(h.ctx, cm)) // no Node "invented"
	h.eventually("a Warning names the ConfigMap and the missing Node", func() error {
		return warningAbout(h, ns, cm.Name, "UnknownNode", `reports node "invented", which is not a Node of the cluster`)
	})
	// N1: a report for a name that is no Node is not even parsed (a
	// megabyte of it per invented name would be decoded): malformed, it
	// is still only an unknown node.
	junk := rawDiscoveryConfigMap("invented-junk", `[{"name":"sdb"},`)
	junk.Namespace = ns
	require.NoError(t, h.c.Create(h.ctx, junk))
	h.eventually("the unparsed report is named an unknown node's", func() error {
		return warningAbout(h, ns, junk.Name, "UnknownNode", `reports node "invented-junk"`)
	})
	assert.Error(t, warningAbout(h, ns, junk.Name, "MalformedDiscovery"), "its text was never parsed")
	h.publishDiscovery("real-1", hdd("sdb", "0x5000rea1b")) // a later report, published
	h.waitDisks("real-1", 1)
	assert.Empty(t, h.disksOf("invented"), "no Disk for a node that is not a Node")

	require.NoError(t, simulate.EnsureNode(h.ctx, h.c, "invented"))
	disks := h.waitDisks("invented", 2)

	require.NoError(t, h.c.Delete(h.ctx, simulate.Node("invented")))
	h.eventually("the deleted Node's Disks are Missing, none deleted", func() error {
		now := h.disksOf("invented")
		if len(now) != len(disks) {
			return fmt.Errorf("%d Disks, want %d", len(now), len(disks))
		}
		for _, d := range now {
			if d.Status.State != cephv1alpha1.DiskMissing {
				return fmt.Errorf("%s is %s", d.Name, d.Status.State)
			}
		}
		return nil
	})
}

// warningAbout finds a Warning Event of reason about a ConfigMap whose note
// says every one of notes.
func warningAbout(h *harness, namespace, cmName, reason string, notes ...string) error {
	var list eventsv1.EventList
	if err := h.c.List(h.ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == cmName && e.Type == corev1.EventTypeWarning && e.Reason == reason {
			for _, note := range notes {
				if !strings.Contains(e.Note, note) {
					return fmt.Errorf("event %s %q does not say %q", e.Reason, e.Note, note)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("no Warning %s about ConfigMap %s among %d Events", reason, cmName, len(list.Items))
}
