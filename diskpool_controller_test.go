package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

// Realistic devices of one node: an HDD, an SSD, an NVMe drive, a
// partitioned disk and a disk carrying a filesystem.
func hdd(kernel, wwn string) device {
	return sdb().with(device{
		"name": kernel, "devLinks": "/dev/disk/by-id/wwn-" + wwn + " /dev/disk/by-path/pci-" + kernel,
		"wwn": wwn, "wwnVendorExtension": wwn, "serial": "ST4000_" + wwn, "real-path": "/dev/" + kernel, "kernel-name": kernel,
		"cephVolumeData": `{"path":"/dev/` + kernel + `","available":true,"rejected_reasons":[]}`,
	})
}

func ssd(kernel, wwn string) device {
	return hdd(kernel, wwn).with(device{"rotational": false, "model": "Samsung SSD 870", "size": uint64(1000204886016)})
}

func nvme(kernel, eui string) device {
	return hdd(kernel, "").with(device{
		"rotational": false, "model": "Samsung SSD 980 PRO", "wwn": "", "wwnVendorExtension": "",
		"devLinks": "/dev/disk/by-id/nvme-eui." + eui + " /dev/disk/by-id/nvme-Samsung_980_" + eui, "serial": "S5GX" + eui,
		"size": uint64(2000398934016),
	})
}

func withFilesystem(d device, fs string) device {
	return d.with(device{"filesystem": fs, "empty": false,
		"cephVolumeData": `{"available":false,"rejected_reasons":["Has a FileSystem"]}`})
}

// workerDevices are the devices of worker node i: every device kind a
// discovery report can hold.
func workerDevices(i int) []device {
	id := func(s string) string { return fmt.Sprintf("0x5000%02d%s", i, s) }
	devices := []device{
		hdd("sdb", id("b")),
		ssd("sdd", id("d")),
		nvme("nvme0n1", fmt.Sprintf("0025385b7150%02d", i)),
		withFilesystem(hdd("sde", id("e")), "ext4"),
	}
	return append(devices, partitionsOfSdc()...)
}

// The whole flow from discovery to the CephCluster's device list.
func TestDiscoveryToDisksToPoolToCephCluster(t *testing.T) {
	h := newHarness(t)
	h.start()
	for i := 1; i <= 3; i++ {
		h.publishDiscovery(fmt.Sprintf("flow-%d", i), workerDevices(i)...)
	}
	disks := h.waitDisks("flow-1", 5)

	t.Run("every device is published with its type and state", func(t *testing.T) {
		assert.Equal(t, cephv1alpha1.DiskTypeHDD, disks["/dev/sdb"].Status.Type)
		assert.Equal(t, cephv1alpha1.DiskTypeSSD, disks["/dev/sdd"].Status.Type)
		assert.Equal(t, cephv1alpha1.DiskTypeNVMe, disks["/dev/nvme0n1"].Status.Type)
		assert.Equal(t, cephv1alpha1.DiskAvailable, disks["/dev/sdb"].Status.State)
		assert.True(t, disks["/dev/sdb"].Status.Available)
		assert.Equal(t, "/dev/disk/by-id/wwn-0x500001b", disks["/dev/sdb"].Status.StablePath)
		assert.Equal(t, cephv1alpha1.DiskInUse, disks["/dev/sde"].Status.State)
		assert.Contains(t, disks["/dev/sde"].Status.Reason, "ext4")
		assert.Equal(t, cephv1alpha1.DiskInUse, disks["/dev/sdc"].Status.State, "a partitioned disk is published, not dropped")
		assert.Contains(t, disks["/dev/sdc"].Status.Reason, "partitioned")
		assert.NotNil(t, disks["/dev/sdb"].Status.LastSeenTime)
	})

	var names []string
	for i := 1; i <= 3; i++ {
		d := h.waitDisks(fmt.Sprintf("flow-%d", i), 5)
		names = append(names, d["/dev/sdb"].Name, d["/dev/nvme0n1"].Name)
	}
	// A disk in use is listed too: it is skipped and named in the message.
	names = append(names, disks["/dev/sde"].Name)
	pool := h.createPool("flow", names...)

	h.eventually("the CephCluster lists the pool's usable devices", func() error {
		got := h.clusterDevices()
		if len(got) != 3 || len(got["flow-2"]) != 2 {
			return fmt.Errorf("CephCluster devices: %v", got)
		}
		return nil
	})
	assert.Equal(t, []string{"/dev/disk/by-id/nvme-eui.0025385b715001", "/dev/disk/by-id/wwn-0x500001b"}, h.clusterDevices()["flow-1"],
		"devices are named by their stable path, sorted")

	h.eventually("the pool reports what it selected", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool))
		if pool.Status.Phase != cephv1alpha1.DiskPoolReady || pool.Status.ObservedGeneration != pool.Generation {
			return fmt.Errorf("pool status %+v", pool.Status)
		}
		return nil
	})
	assert.Equal(t, int32(6), pool.Status.SelectedDiskCount)
	assert.Contains(t, pool.Status.Message, disks["/dev/sde"].Name)
	wantCapacity := 3 * (4000787030016 + 2000398934016)
	assert.Equal(t, int64(wantCapacity), pool.Status.RawCapacity.Value())

	h.eventually("claimedBy names the pool", func() error {
		for _, d := range h.disksOf("flow-1") {
			if d.Name == disks["/dev/sdb"].Name && d.Status.ClaimedBy != "flow" {
				return fmt.Errorf("claimedBy %q", d.Status.ClaimedBy)
			}
		}
		return nil
	})
}

func TestContestedDiskBelongsToTheOlderPool(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("contest-1", hdd("sdb", "0xc1b"), hdd("sdc", "0xc1c"))
	disks := h.waitDisks("contest-1", 2)
	shared := disks["/dev/sdb"].Name

	older := h.createPool("contest-older", shared)
	h.eventually("the older pool holds the disk", func() error {
		return h.poolPhase(older, cephv1alpha1.DiskPoolReady)
	})
	younger := h.createPool("contest-younger", shared, disks["/dev/sdc"].Name)

	h.eventually("the younger pool says the disk is taken", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(younger), younger))
		if younger.Status.ObservedGeneration != younger.Generation {
			return errNotYet
		}
		if younger.Status.SelectedDiskCount != 1 {
			return fmt.Errorf("younger selected %d", younger.Status.SelectedDiskCount)
		}
		return nil
	})
	assert.Contains(t, younger.Status.Message, shared)
	assert.Contains(t, younger.Status.Message, "older DiskPool contest-older")

	h.eventually("claimedBy agrees with the reconciler", func() error {
		d := h.disksOf("contest-1")
		if d["/dev/sdb"].Status.ClaimedBy != "contest-older" || d["/dev/sdc"].Status.ClaimedBy != "contest-younger" {
			return fmt.Errorf("claimedBy sdb=%q sdc=%q", d["/dev/sdb"].Status.ClaimedBy, d["/dev/sdc"].Status.ClaimedBy)
		}
		return nil
	})
	assert.Len(t, h.clusterDevices()["contest-1"], 2, "the contested disk is counted once")
}

func TestDeletingAPoolShrinksTheDeviceList(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("shrink-1", hdd("sdb", "0xd1b"), hdd("sdc", "0xd1c"))
	disks := h.waitDisks("shrink-1", 2)
	keep := h.createPool("shrink-keep", disks["/dev/sdb"].Name)
	gone := h.createPool("shrink-gone", disks["/dev/sdc"].Name)
	h.eventually("both pools' devices are listed", func() error {
		if n := len(h.clusterDevices()["shrink-1"]); n != 2 {
			return fmt.Errorf("%d devices", n)
		}
		return nil
	})

	require.NoError(t, h.c.Delete(h.ctx, gone))
	h.eventually("only the remaining pool's device stays", func() error {
		if got := h.clusterDevices()["shrink-1"]; len(got) != 1 || got[0] != disks["/dev/sdb"].Status.StablePath {
			return fmt.Errorf("devices %v", got)
		}
		return nil
	})

	require.NoError(t, h.c.Delete(h.ctx, keep))
	h.eventually("no pool, no device", func() error {
		if got := h.clusterDevices(); len(got) != 0 {
			return fmt.Errorf("devices %v", got)
		}
		return nil
	})
}

func TestVanishedDevicesAndNodesGoMissingNeverDeleted(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("vanish-1", hdd("sdb", "0xe1b"), hdd("sdc", "0xe1c"))
	h.publishDiscovery("vanish-2", hdd("sdb", "0xe2b"))
	before := h.waitDisks("vanish-1", 2)
	h.waitDisks("vanish-2", 1)
	pool := h.createPool("vanish", before["/dev/sdc"].Name)
	h.eventually("the device is in the CephCluster", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })

	// A second later than the Disks' first sighting, so a Missing reason
	// dated by that sighting (the old behaviour) is caught.
	time.Sleep(1100 * time.Millisecond)
	pulled := time.Now().Truncate(time.Second)
	h.publishDiscovery("vanish-1", hdd("sdb", "0xe1b")) // sdc is pulled
	h.removeDiscovery("vanish-2")                       // the node leaves

	h.eventually("the pulled device is Missing", func() error {
		d := h.disksOf("vanish-1")["/dev/sdc"]
		if d.Status.State != cephv1alpha1.DiskMissing {
			return fmt.Errorf("state %q", d.Status.State)
		}
		return nil
	})
	h.eventually("the departed node's disk is Missing", func() error {
		d := h.disksOf("vanish-2")["/dev/sdb"]
		if d.Status.State != cephv1alpha1.DiskMissing || d.Status.Available {
			return fmt.Errorf("state %q available %v", d.Status.State, d.Status.Available)
		}
		return nil
	})
	missing := h.disksOf("vanish-1")["/dev/sdc"]
	assert.Contains(t, missing.Status.Reason, "not reported by discovery since")
	assert.False(t, missing.Status.LastSeenTime.Time.Before(pulled),
		"last seen %s: the list that named it was current until it was pulled at %s", missing.Status.LastSeenTime, pulled)
	assert.Equal(t, before["/dev/sdc"].UID, missing.UID, "the same Disk object, never deleted and re-created")
	assert.Len(t, h.disksOf("vanish-1"), 2)
	assert.Equal(t, []string{before["/dev/sdc"].Status.StablePath}, h.clusterDevices()["vanish-1"],
		"a vanished device a pool lists keeps its place in the CephCluster")
}

func (h *harness) poolPhase(pool *cephv1alpha1.DiskPool, want cephv1alpha1.DiskPoolPhase) error {
	if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		return err
	}
	if pool.Status.Phase != want || pool.Status.ObservedGeneration != pool.Generation {
		return fmt.Errorf("pool %s phase %q (generation %d observed %d), want %q", pool.Name, pool.Status.Phase, pool.Generation, pool.Status.ObservedGeneration, want)
	}
	return nil
}

// GitOps may apply a pool before discovery has seen its disks. Hundreds of
// names used to make a message over the condition limit (32,768), and the
// API server refused every status write: the pool showed no phase.
func TestAPoolOfManyUnknownDisksStillSaysWhy(t *testing.T) {
	h := newHarness(t)
	h.start()
	disks := make([]string, 600)
	for i := range disks {
		disks[i] = fmt.Sprintf("%s-%04d", strings.Repeat("not-discovered-yet", 3), i) // 59 characters, a Disk name's longest is 63
	}
	pool := h.createPool("gitops", disks...)
	h.eventually("the pool is Degraded and says why", func() error {
		if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return err
		}
		if pool.Status.Phase != cephv1alpha1.DiskPoolDegraded {
			return fmt.Errorf("phase %q", pool.Status.Phase)
		}
		return nil
	})
	assert.LessOrEqual(t, len(pool.Status.Message), message.MaxLength)
	assert.True(t, strings.HasPrefix(pool.Status.Message, "no listed disk is usable: disk "+disks[0]+" not found; "), pool.Status.Message[:200])
	assert.Regexp(t, `; \.\.\. and [1-9][0-9]{2} more$`, pool.Status.Message, "the rest is counted")
}

// freezeCephCluster makes the real API server refuse every update of the
// harness's CephCluster, as a webhook or an admission policy would, until
// the returned function lifts it.
func (h *harness) freezeCephCluster(message string) (lift func()) {
	h.t.Helper()
	name := "freeze-" + h.cfg.ClusterNamespace
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"ceph.rook.io"}, APIVersions: []string{"v1"}, Resources: []string{"cephclusters"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": h.cfg.ClusterNamespace},
			}},
		},
	}
	require.NoError(h.t, h.c.Create(h.ctx, policy))
	require.NoError(h.t, h.c.Create(h.ctx, binding))
	lift = func() {
		_ = h.c.Delete(context.Background(), binding)
		_ = h.c.Delete(context.Background(), policy)
	}
	h.t.Cleanup(lift)
	// The API server loads policies asynchronously: probe until an update
	// is refused.
	probe := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"e2e.test/freeze-probe":"x"}}}`))
	h.eventually("the CephCluster refuses updates", func() error {
		cluster := h.cluster()
		if err := h.c.Patch(h.ctx, cluster, probe); err == nil || !strings.Contains(err.Error(), message) {
			return fmt.Errorf("update not refused yet: %v", err)
		}
		return nil
	})
	return lift
}

// Only a missing CephCluster used to reach a pool's status: a refused
// patch left the pool Ready while its disks were not in Ceph.
func TestAPoolWhoseDisksTheCephClusterRefusesIsDegraded(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("refused-1", hdd("sdb", "0xf1b"), hdd("sdc", "0xf1c"))
	disks := h.waitDisks("refused-1", 2)
	first := h.createPool("refused-a", disks["/dev/sdb"].Name)
	h.eventually("the first pool is Ready", func() error { return h.poolPhase(first, cephv1alpha1.DiskPoolReady) })

	const why = "CephCluster edits are frozen for maintenance"
	lift := h.freezeCephCluster(why)
	second := h.createPool("refused-b", disks["/dev/sdc"].Name)
	h.eventually("the second pool says the CephCluster refused its disk", func() error {
		if err := h.poolPhase(second, cephv1alpha1.DiskPoolDegraded); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(second.Status.Conditions, cephv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != ReasonCephClusterRefused || !strings.Contains(second.Status.Message, why) {
			return fmt.Errorf("status %q: %+v", second.Status.Message, ready)
		}
		return nil
	})
	assert.NotContains(t, h.clusterDevices()["refused-1"], disks["/dev/sdc"].Status.StablePath, "the refused device is not in the CephCluster")

	lift()
	h.eventually("once the CephCluster takes it, the pool is Ready", func() error { return h.poolPhase(second, cephv1alpha1.DiskPoolReady) })
	assert.Contains(t, h.clusterDevices()["refused-1"], disks["/dev/sdc"].Status.StablePath)
}

// When the older of two pools listing a disk goes away, the younger one
// gets the disk, and must say so at once, not when something unrelated
// touches it.
func TestAContestedDiskChangingHandsUpdatesTheYoungerPool(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("hands-1", hdd("sdb", "0xh1b"))
	shared := h.waitDisks("hands-1", 1)["/dev/sdb"].Name
	older := h.createPool("hands-older", shared)
	h.eventually("the older pool holds the disk", func() error { return h.poolPhase(older, cephv1alpha1.DiskPoolReady) })
	younger := h.createPool("hands-younger", shared)
	h.eventually("the younger pool says the disk is taken", func() error { return h.poolPhase(younger, cephv1alpha1.DiskPoolDegraded) })
	require.Contains(t, younger.Status.Message, "older DiskPool hands-older")

	require.NoError(t, h.c.Delete(h.ctx, older))
	h.eventually("the younger pool holds the disk now", func() error { return h.poolPhase(younger, cephv1alpha1.DiskPoolReady) })
	assert.Equal(t, int32(1), younger.Status.SelectedDiskCount)
	assert.Empty(t, younger.Status.Message)
}

// A Disk deleted from outside (kubectl delete disk) is published again,
// its node keeps updating, and its device never leaves the CephCluster:
// the device list shrinks only through a DiskPool change (issue 16,
// defect 1).
func TestDeletedDisksArePublishedAgainAndTheirDevicesStay(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("deleted-1", hdd("sdb", "0x5000d1b"), ssd("sdd", "0x5000d1d"))
	h.publishDiscovery("deleted-2", hdd("sdb", "0x5000d2b"))
	one, two := h.waitDisks("deleted-1", 2), h.waitDisks("deleted-2", 1)
	names := []string{one["/dev/sdb"].Name, one["/dev/sdd"].Name, two["/dev/sdb"].Name}
	pool := h.createPool("deleted", names...)
	want := map[string][]string{
		"deleted-1": {"/dev/disk/by-id/wwn-0x5000d1b", "/dev/disk/by-id/wwn-0x5000d1d"},
		"deleted-2": {"/dev/disk/by-id/wwn-0x5000d2b"},
	}
	h.eventually("the CephCluster lists the pool's devices", func() error {
		if got := h.clusterDevices(); !equalDevices(got, want) {
			return fmt.Errorf("CephCluster devices: %v", got)
		}
		return nil
	})

	// Every check below reads the CephCluster while the Disks are gone:
	// a single read without the device fails the test.
	stopWatching := h.requireDevicesStay(want)
	t.Run("one Disk deleted comes back under its name, claimed, and the node keeps updating", func(t *testing.T) {
		victim := one["/dev/sdb"]
		require.NoError(t, h.c.Delete(h.ctx, &victim))
		h.eventually("the Disk is published again", func() error {
			var d cephv1alpha1.Disk
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(&victim), &d); err != nil {
				return err
			}
			if d.UID == victim.UID || d.Status.ClaimedBy != "deleted" || d.Status.State != cephv1alpha1.DiskAvailable {
				return fmt.Errorf("Disk %s: uid %s, status %+v", d.Name, d.UID, d.Status)
			}
			return nil
		})
		// The node is not wedged: a change of its other disk arrives.
		h.publishDiscovery("deleted-1", hdd("sdb", "0x5000d1b"), withFilesystem(ssd("sdd", "0x5000d1d"), "xfs"))
		h.eventually("the node's other Disk is updated", func() error {
			if d := h.waitDisks("deleted-1", 2)["/dev/sdd"]; d.Status.State != cephv1alpha1.DiskInUse {
				return fmt.Errorf("sdd is %s", d.Status.State)
			}
			return nil
		})
	})
	t.Run("kubectl delete disks --all takes no device out of the CephCluster", func(t *testing.T) {
		require.NoError(t, h.c.DeleteAllOf(h.ctx, &cephv1alpha1.Disk{}))
		h.eventually("every Disk is published again", func() error {
			if n := len(h.disksOf("deleted-1")) + len(h.disksOf("deleted-2")); n != 3 {
				return fmt.Errorf("%d Disks", n)
			}
			return nil
		})
		h.eventually("the pool is Ready again with its disks", func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool))
			if pool.Status.Phase != cephv1alpha1.DiskPoolReady || pool.Status.SelectedDiskCount != 3 {
				return fmt.Errorf("pool status %+v; CephCluster devices %v", pool.Status, h.clusterDevices())
			}
			return nil
		})
	})
	stopWatching()
	t.Run("taking the name out of the pool is what removes the device", func(t *testing.T) {
		victim := h.disksOf("deleted-1")["/dev/sdb"]
		require.NoError(t, h.c.Delete(h.ctx, &victim))
		// While the Disk is away, the pool drops its name: a pool change.
		edit := client.RawPatch(types.MergePatchType, patch.MustJSON(map[string]any{"spec": map[string]any{"disks": names[1:]}}))
		require.NoError(t, h.c.Patch(h.ctx, pool, edit))
		h.eventually("the device leaves the CephCluster", func() error {
			got := h.clusterDevices()
			if len(got["deleted-1"]) != 1 {
				return fmt.Errorf("CephCluster devices: %v", got)
			}
			return nil
		})
	})
}

func equalDevices(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for node, devices := range a {
		if strings.Join(devices, ",") != strings.Join(b[node], ",") {
			return false
		}
	}
	return true
}

// requireDevicesStay watches every revision of the CephCluster until stop
// is called, and fails the test if one lists other devices than want.
func (h *harness) requireDevicesStay(want map[string][]string) (stop func()) {
	h.t.Helper()
	c, err := client.NewWithWatch(h.env.Config, client.Options{Scheme: h.env.Scheme})
	require.NoError(h.t, err)
	w, err := c.Watch(h.ctx, &cephv1.CephClusterList{}, client.InNamespace(h.cfg.ClusterNamespace))
	require.NoError(h.t, err)
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			cc, ok := ev.Object.(*cephv1.CephCluster)
			if !ok {
				continue
			}
			got := map[string][]string{}
			for _, n := range cc.Spec.Storage.Nodes {
				for _, d := range n.Devices {
					got[n.Name] = append(got[n.Name], d.Name)
				}
			}
			if !equalDevices(got, want) {
				bad = append(bad, fmt.Sprintf("revision %s (%s): %v", cc.ResourceVersion, ev.Type, got))
			}
		}
	}()
	return func() {
		w.Stop()
		<-done
		assert.Empty(h.t, bad, "the CephCluster's device list changed while its Disks were gone")
	}
}
