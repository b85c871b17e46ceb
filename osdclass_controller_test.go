package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// A Disk names the OSD Rook runs on it and that OSD's class as its
// Deployment carries it, and says so, in its status and once in an Event,
// when that class is not the Disk's type: the tiers count the disk by its
// type while Ceph places data by the class. An OSD that agrees says
// nothing; a mismatch that goes clears; one that comes back is announced
// again.
func TestADiskSaysItsOSDsClassDisagreesWithItsType(t *testing.T) {
	h := newHarness(t)
	h.start()
	const node = "classes-1"
	h.publishDiscovery(node, nvme("nvme0n1", "0025385b71b0c1a1"), ssd("sdb", "0x5002538e4000c1b1"))
	disks := h.waitDisks(node, 2)
	fast, plain := disks["/dev/nvme0n1"], disks["/dev/sdb"]
	require.Equal(t, cephv1alpha1.DiskTypeNVMe, fast.Status.Type)
	require.Equal(t, cephv1alpha1.DiskTypeSSD, plain.Status.Type)

	// osd.1 was prepared before its disk had a class: Ceph called the NVMe
	// drive ssd. osd.2 has the class its disk's type gives.
	osd1 := h.createOSD(1, node, "/dev/nvme0n1", "ssd")
	h.createOSD(2, node, "/dev/sdb", "ssd")

	h.eventually("each Disk names its OSD, and the NVMe one says its OSD's class disagrees", func() error {
		got := h.disksOf(node)
		if o := got["/dev/sdb"].Status.OSD; o == nil || *o != (cephv1alpha1.DiskOSD{ID: 2, DeviceClass: "ssd"}) {
			return fmt.Errorf("sdb's OSD %+v", o)
		}
		if o := got["/dev/nvme0n1"].Status.OSD; o == nil || *o != (cephv1alpha1.DiskOSD{ID: 1, DeviceClass: "ssd"}) {
			return fmt.Errorf("nvme0n1's OSD %+v", o)
		}
		if got["/dev/nvme0n1"].Status.ClassMismatch == "" {
			return errNotYet
		}
		return nil
	})
	got := h.disksOf(node)
	assert.Empty(t, got["/dev/sdb"].Status.ClassMismatch, "an OSD of the disk's own class says nothing")
	mismatch := got["/dev/nvme0n1"].Status.ClassMismatch
	assert.Contains(t, mismatch, "osd.1 runs on this nvme disk with device class ssd")
	assert.Contains(t, mismatch, "pools on class nvme never use this OSD and pools on class ssd do")
	h.eventually("a Warning Event says so", func() error {
		if n := h.occurrences(fast.Name, EventOSDClassMismatch); n != 1 {
			return fmt.Errorf("%d OSDClassMismatch Events about %s", n, fast.Name)
		}
		return nil
	})
	assert.Zero(t, h.occurrences(plain.Name, EventOSDClassMismatch))

	// The disk given to a pool (its status written again), the node
	// published again (a device more) and osd.1's Deployment rewritten by
	// Rook (a label of its own): the Disk still says it, and nothing is
	// announced again.
	h.createPool("classes", fast.Name)
	h.eventually("the NVMe Disk's status is written again, claimed", func() error {
		if d := h.disksOf(node)["/dev/nvme0n1"]; d.Status.ClaimedBy != "classes" {
			return errNotYet
		}
		return nil
	})
	h.publishDiscovery(node, nvme("nvme0n1", "0025385b71b0c1a1"), ssd("sdb", "0x5002538e4000c1b1"), hdd("sdc", "0x5000c500a1b2c1c1"))
	h.update(osd1, func() { osd1.Labels["rook-version"] = "v1.18.11" })
	h.waitDisks(node, 3)
	h.eventually("the new disk's publication went through the node's Disks", func() error {
		if d := h.disksOf(node)["/dev/sdc"]; d.Status.State != cephv1alpha1.DiskAvailable {
			return errNotYet
		}
		return nil
	})
	assert.Equal(t, mismatch, h.disksOf(node)["/dev/nvme0n1"].Status.ClassMismatch)
	assert.Equal(t, 1, h.occurrences(fast.Name, EventOSDClassMismatch), "announced once")

	// The OSD re-created as nvme: the mismatch goes, without an Event.
	h.update(osd1, func() { setOSDClass(osd1, "nvme") })
	h.eventually("the mismatch clears once the Deployment carries nvme", func() error {
		d := h.disksOf(node)["/dev/nvme0n1"]
		if d.Status.ClassMismatch != "" || d.Status.OSD == nil || d.Status.OSD.DeviceClass != "nvme" {
			return fmt.Errorf("OSD %+v, mismatch %q", d.Status.OSD, d.Status.ClassMismatch)
		}
		return nil
	})
	assert.Equal(t, 1, h.occurrences(fast.Name, EventOSDClassMismatch))

	// Back to ssd: a new mismatch, announced again.
	h.update(osd1, func() { setOSDClass(osd1, "ssd") })
	h.eventually("a mismatch that comes back is announced again", func() error {
		if n := h.occurrences(fast.Name, EventOSDClassMismatch); n != 2 {
			return fmt.Errorf("%d OSDClassMismatch Events about %s", n, fast.Name)
		}
		return nil
	})

	// The OSD gone: its Disk names none.
	require.NoError(t, h.c.Delete(h.ctx, osd1))
	h.eventually("a disk whose OSD is gone names none", func() error {
		d := h.disksOf(node)["/dev/nvme0n1"]
		if d.Status.OSD != nil || d.Status.ClassMismatch != "" {
			return fmt.Errorf("OSD %+v, mismatch %q", d.Status.OSD, d.Status.ClassMismatch)
		}
		return nil
	})
}

// createOSD creates Rook's Deployment of OSD id on node's device path,
// carrying class as Rook writes it (ROOK_OSD_DEVICE_CLASS and the
// device-class label).
func (h *harness) createOSD(id int, node, path, class string) *appsv1.Deployment {
	h.t.Helper()
	d := simulate.OSDDeployment(h.cfg.ClusterNamespace, id, node, path)
	setOSDClass(d, class)
	require.NoError(h.t, h.c.Create(h.ctx, d))
	return d
}

// setOSDClass gives an OSD Deployment class, as Rook's makeDeployment does.
func setOSDClass(d *appsv1.Deployment, class string) {
	d.Labels[rook.OSDDeviceClassLabel] = class
	c := &d.Spec.Template.Spec.Containers[0]
	for i := range c.Env {
		if c.Env[i].Name == rook.EnvOSDDeviceClass {
			c.Env[i].Value = class
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: rook.EnvOSDDeviceClass, Value: class})
}

// occurrences counts how often the plugin recorded an Event of reason
// about the object named regarding: each Event once, or as often as its
// series says (the recorder makes a repeated Event a series).
func (h *harness) occurrences(regarding string, reason EventReason) int {
	h.t.Helper()
	var list eventsv1.EventList
	require.NoError(h.t, h.c.List(h.ctx, &list, client.InNamespace(corev1.NamespaceDefault)))
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name != regarding || e.Reason != string(reason) {
			continue
		}
		n++
		if e.Series != nil {
			n += int(e.Series.Count) - 1
		}
	}
	return n
}
