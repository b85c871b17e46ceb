package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// disk is a published Disk on node with a by-id path and size in GiB.
func disk(name, node, stablePath string, gib int64, state cephv1alpha1.DiskState, reason string) cephv1alpha1.Disk {
	size := resource.NewQuantity(gib<<30, resource.BinarySI)
	return cephv1alpha1.Disk{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: cephv1alpha1.DiskStatus{
			NodeName: node, Path: "/dev/sd" + name, StablePath: stablePath, Size: size,
			State: state, Available: state == cephv1alpha1.DiskAvailable, Reason: reason,
		},
	}
}

func available(name, node string, gib int64) cephv1alpha1.Disk {
	return disk(name, node, "/dev/disk/by-id/wwn-"+name, gib, cephv1alpha1.DiskAvailable, "")
}

func byName(disks ...cephv1alpha1.Disk) map[string]*cephv1alpha1.Disk {
	m := map[string]*cephv1alpha1.Disk{}
	for i := range disks {
		m[disks[i].Name] = &disks[i]
	}
	return m
}

func names(disks []*cephv1alpha1.Disk) []string {
	out := []string{}
	for _, d := range disks {
		out = append(out, d.Name)
	}
	return out
}

func TestResolvePool(t *testing.T) {
	a := available("a", "n1", 100)
	b := available("b", "n2", 200)
	ext4 := disk("e", "n1", "/dev/disk/by-id/wwn-e", 50, cephv1alpha1.DiskInUse, "filesystem ext4")
	osdTook := disk("o", "n1", "/dev/disk/by-id/wwn-o", 300, cephv1alpha1.DiskInUse, "rejected by ceph-volume: LVM detected")
	gone := disk("g", "n2", "/dev/disk/by-id/wwn-g", 400, cephv1alpha1.DiskMissing, "not reported by discovery since 2026-01-01T00:00:00Z")
	all := byName(a, b, ext4, osdTook, gone)

	cases := []struct {
		name          string
		pool          cephv1alpha1.DiskPool
		owners        map[string]string
		inCluster     map[DeviceID]bool
		wantSelected  []string
		wantMissing   []string
		wantContested []ContestedDisk
		wantUnusable  []UnusableDisk
		wantCapacity  string
		wantPhase     cephv1alpha1.DiskPoolPhase
		wantMessage   string
	}{
		{
			name:         "available owned disks are selected and their sizes summed",
			pool:         pool("p", 0, "a", "b"),
			owners:       map[string]string{"a": "p", "b": "p"},
			wantSelected: []string{"a", "b"}, wantCapacity: "300Gi",
			wantPhase: cephv1alpha1.DiskPoolReady,
		},
		{
			name:         "a listed name with no Disk is reported missing",
			pool:         pool("p", 0, "a", "nope"),
			owners:       map[string]string{"a": "p", "nope": "p"},
			wantSelected: []string{"a"}, wantMissing: []string{"nope"}, wantCapacity: "100Gi",
			wantPhase: cephv1alpha1.DiskPoolReady, wantMessage: "skipped disk nope not found",
		},
		{
			name:         "a disk an older pool owns is skipped and named with its owner",
			pool:         pool("young", 5, "a", "b"),
			owners:       map[string]string{"a": "old", "b": "young"},
			wantSelected: []string{"b"}, wantCapacity: "200Gi",
			wantContested: []ContestedDisk{{Disk: "a", Owner: "old"}},
			wantPhase:     cephv1alpha1.DiskPoolReady, wantMessage: "skipped disk a belongs to older DiskPool old",
		},
		{
			name:         "a disk with a filesystem that is not yet in the cluster is not selected",
			pool:         pool("p", 0, "e"),
			owners:       map[string]string{"e": "p"},
			wantUnusable: []UnusableDisk{{Disk: "e", Reason: "filesystem ext4"}}, wantCapacity: "0",
			wantPhase: cephv1alpha1.DiskPoolDegraded, wantMessage: "no listed disk is usable: disk e unusable: filesystem ext4",
		},
		{
			name:         "a selected disk stays selected when its OSD makes it stop looking empty",
			pool:         pool("p", 0, "o"),
			owners:       map[string]string{"o": "p"},
			inCluster:    map[DeviceID]bool{{Node: "n1", Device: "/dev/disk/by-id/wwn-o"}: true},
			wantSelected: []string{"o"}, wantCapacity: "300Gi",
			wantPhase: cephv1alpha1.DiskPoolReady,
		},
		{
			name:         "a vanished disk keeps its place in the cluster until the pool drops it",
			pool:         pool("p", 0, "g"),
			owners:       map[string]string{"g": "p"},
			inCluster:    map[DeviceID]bool{{Node: "n2", Device: "/dev/disk/by-id/wwn-g"}: true},
			wantSelected: []string{"g"}, wantCapacity: "400Gi",
			wantPhase:   cephv1alpha1.DiskPoolReady,
			wantMessage: "disk g is missing (not reported by discovery since 2026-01-01T00:00:00Z) and keeps its place in the CephCluster until it is taken out of this pool",
		},
		{
			name:         "a vanished disk that never joined the cluster is not selected",
			pool:         pool("p", 0, "g"),
			owners:       map[string]string{"g": "p"},
			wantUnusable: []UnusableDisk{{Disk: "g", Reason: "not reported by discovery since 2026-01-01T00:00:00Z"}}, wantCapacity: "0",
			wantPhase: cephv1alpha1.DiskPoolDegraded, wantMessage: "no listed disk is usable: disk g unusable: not reported by discovery since 2026-01-01T00:00:00Z",
		},
		{
			name:         "an empty pool is degraded and says so",
			pool:         pool("p", 0),
			wantCapacity: "0", wantPhase: cephv1alpha1.DiskPoolDegraded, wantMessage: "no disks listed",
		},
		{
			name:         "every skipped disk is reported in spec order",
			pool:         pool("p", 0, "nope", "e", "a", "b"),
			owners:       map[string]string{"nope": "p", "e": "p", "a": "old", "b": "p"},
			wantSelected: []string{"b"}, wantMissing: []string{"nope"}, wantCapacity: "200Gi",
			wantContested: []ContestedDisk{{Disk: "a", Owner: "old"}},
			wantUnusable:  []UnusableDisk{{Disk: "e", Reason: "filesystem ext4"}},
			wantPhase:     cephv1alpha1.DiskPoolReady,
			wantMessage:   "skipped disk nope not found; disk a belongs to older DiskPool old; disk e unusable: filesystem ext4",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ResolvePool(&tc.pool, all, tc.owners, tc.inCluster)
			assert.Equal(t, tc.pool.Name, got.Pool)
			assert.Equal(t, tc.wantSelected, nilIfEmpty(names(got.Selected)))
			assert.Equal(t, tc.wantMissing, got.Missing)
			assert.Equal(t, tc.wantContested, got.Contested)
			assert.Equal(t, tc.wantUnusable, got.Unusable)
			assert.Equal(t, tc.wantCapacity, got.RawCapacity.String())
			assert.Equal(t, tc.wantPhase, got.Phase())
			assert.Equal(t, tc.wantMessage, got.Message())
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestDiskPoolStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	a := available("a", "n1", 100)
	at := func(gen int64, p cephv1alpha1.DiskPool) *cephv1alpha1.DiskPool { p.Generation = gen; return &p }
	ready := ResolvePool(at(3, pool("p", 0, "a")), byName(a), map[string]string{"a": "p"}, nil)
	degraded := ResolvePool(at(4, pool("p", 0, "x")), byName(a), map[string]string{"x": "p"}, nil)
	cluster := &cephv1alpha1.ObjectReference{Namespace: "rook-ceph", Name: "rook-ceph"}
	none := ClusterProblem{}

	first := ready.Report(none).DiskPoolStatus(cephv1alpha1.DiskPoolStatus{}, cluster, t0)
	t.Run("reports the resolution at the generation it describes, and the CephCluster it feeds", func(t *testing.T) {
		assert.Equal(t, cephv1alpha1.DiskPoolReady, first.Phase)
		assert.Equal(t, int32(1), first.SelectedDiskCount)
		assert.Equal(t, "100Gi", first.RawCapacity.String())
		assert.Equal(t, int64(3), first.ObservedGeneration)
		assert.Equal(t, cluster, first.CephCluster)
		cond := meta.FindStatusCondition(first.Conditions, cephv1alpha1.ConditionReady)
		require.NotNil(t, cond)
		assert.Equal(t, metav1.ConditionTrue, cond.Status)
		assert.Equal(t, int64(3), cond.ObservedGeneration)
		assert.Equal(t, "1 disk selected", cond.Message)
	})
	t.Run("an unchanged resolution keeps the transition time, so nothing needs writing", func(t *testing.T) {
		again := ready.Report(none).DiskPoolStatus(first, cluster, t1)
		assert.True(t, equality.Semantic.DeepEqual(first, again), "want %+v, got %+v", first, again)
	})
	t.Run("a pool that loses its disks turns Ready false with the reason and a new transition time", func(t *testing.T) {
		next := degraded.Report(none).DiskPoolStatus(first, cluster, t1)
		assert.Equal(t, cephv1alpha1.DiskPoolDegraded, next.Phase)
		cond := meta.FindStatusCondition(next.Conditions, cephv1alpha1.ConditionReady)
		require.NotNil(t, cond)
		assert.Equal(t, metav1.ConditionFalse, cond.Status)
		assert.Equal(t, "NoUsableDisks", cond.Reason)
		assert.Equal(t, "no listed disk is usable: disk x not found", cond.Message)
		assert.True(t, cond.LastTransitionTime.Time.Equal(t1))
		assert.Equal(t, metav1.ConditionTrue, first.Conditions[0].Status, "the previous status is not modified")
	})
	t.Run("disks that resolve but go nowhere are Degraded with the CephCluster's problem", func(t *testing.T) {
		problem := ClusterProblem{Reason: ReasonCephClusterRefused, Message: "admission webhook denied the request"}
		next := ready.Report(problem).DiskPoolStatus(first, cluster, t1)
		assert.Equal(t, cephv1alpha1.DiskPoolDegraded, next.Phase)
		assert.Equal(t, problem.Message, next.Message)
		assert.Equal(t, int32(1), next.SelectedDiskCount, "what resolved is still said")
		cond := meta.FindStatusCondition(next.Conditions, cephv1alpha1.ConditionReady)
		require.NotNil(t, cond)
		assert.Equal(t, metav1.ConditionFalse, cond.Status)
		assert.Equal(t, ReasonCephClusterRefused, cond.Reason)
	})
}

func TestPoolWaitsOnTheCephClusterOnlyForDevicesItLacks(t *testing.T) {
	a := available("a", "n1", 100)
	res := ResolvePool(ptrTo(pool("p", 0, "a")), byName(a), map[string]string{"a": "p"}, nil)
	empty := ResolvePool(ptrTo(pool("q", 0)), byName(a), map[string]string{}, nil)
	refused := ClusterProblem{Reason: ReasonCephClusterRefused, Message: "denied"}
	missing := ClusterProblem{Reason: ReasonNoCephCluster, Message: "gone"}
	listed := map[DeviceID]bool{DeviceIDOf(&a): true}
	for _, tc := range []struct {
		name      string
		res       PoolResolution
		problem   ClusterProblem
		inCluster map[DeviceID]bool
		want      bool
	}{
		{"no problem", res, ClusterProblem{}, nil, false},
		{"a missing CephCluster concerns every pool", empty, missing, nil, true},
		{"a refusal concerns a pool whose device is not listed yet", res, refused, nil, true},
		{"a refusal leaves alone a pool whose devices are all in", res, refused, listed, false},
		{"a refusal leaves alone a pool that selects nothing", empty, refused, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.res.WaitsOn(tc.problem, tc.inCluster))
		})
	}
}

func TestUnion(t *testing.T) {
	a := available("a", "n1", 100)
	b := available("b", "n2", 100)
	c := available("c", "n2", 100)
	// A second Disk object for a's device (its identity changed once);
	// the device must be counted once.
	aAgain := available("a2", "n1", 100)
	aAgain.Status.StablePath = a.Status.StablePath
	disks := []cephv1alpha1.Disk{c, b, a, aAgain}

	cases := []struct {
		name       string
		pools      []cephv1alpha1.DiskPool
		wantDisks  []string
		wantNodes  int
		wantOwners map[string]string
	}{
		{
			name:      "one pool's disks on two nodes count two nodes",
			pools:     []cephv1alpha1.DiskPool{pool("p", 0, "a", "b")},
			wantDisks: []string{"a", "b"}, wantNodes: 2,
			wantOwners: map[string]string{"a": "p", "b": "p"},
		},
		{
			name:      "nodes are counted across pools, not per pool",
			pools:     []cephv1alpha1.DiskPool{pool("p", 0, "a"), pool("q", 1, "b")},
			wantDisks: []string{"a", "b"}, wantNodes: 2,
			wantOwners: map[string]string{"a": "p", "b": "q"},
		},
		{
			name:      "a disk two pools list is counted once",
			pools:     []cephv1alpha1.DiskPool{pool("p", 0, "a", "b"), pool("q", 1, "b", "c")},
			wantDisks: []string{"a", "b", "c"}, wantNodes: 2,
			wantOwners: map[string]string{"a": "p", "b": "p", "c": "q"},
		},
		{
			name:      "two Disks for one device are deduplicated by node and device",
			pools:     []cephv1alpha1.DiskPool{pool("p", 0, "a"), pool("q", 1, "a2")},
			wantDisks: []string{"a"}, wantNodes: 1,
			wantOwners: map[string]string{"a": "p", "a2": "q"},
		},
		{
			name:      "a pool being deleted contributes nothing",
			pools:     []cephv1alpha1.DiskPool{deleting(pool("p", 0, "a")), pool("q", 1, "b")},
			wantDisks: []string{"b"}, wantNodes: 1,
			wantOwners: map[string]string{"b": "q"},
		},
		{
			name:       "no pools, no disks, no nodes",
			wantNodes:  0,
			wantOwners: map[string]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Union(tc.pools, byName(disks...), nil)
			assert.Equal(t, tc.wantDisks, nilIfEmpty(names(got.Disks)))
			assert.Equal(t, tc.wantNodes, got.Nodes)
			assert.Equal(t, tc.wantOwners, got.Owners)
			for _, p := range tc.pools {
				_, resolved := got.Pools[p.Name]
				assert.Equal(t, p.DeletionTimestamp == nil, resolved, "live pools, and only they, are resolved: %s", p.Name)
			}
		})
	}
}

func TestUnionIsSortedByNodeThenDevice(t *testing.T) {
	disks := []cephv1alpha1.Disk{available("z", "n1", 1), available("y", "n2", 1), available("x", "n1", 1)}
	got := Union([]cephv1alpha1.DiskPool{pool("p", 0, "y", "z", "x")}, byName(disks...), nil)
	assert.Equal(t, []string{"x", "z", "y"}, names(got.Disks))
}

// Equal inputs give equal fingerprints, and each input DiskPoolStatus
// reads changes it.
func TestPoolResolutionFingerprint(t *testing.T) {
	a, b := available("a", "n1", 100), available("b", "n2", 100)
	base := ResolvePool(ptrTo(pool("p", 0, "a", "b", "x")), byName(a, b), map[string]string{"a": "p", "b": "q", "x": "p"}, nil)
	none := ClusterProblem{}
	fp := base.Fingerprint(none)
	assert.Equal(t, fp, ResolvePool(ptrTo(pool("p", 0, "a", "b", "x")), byName(a, b), map[string]string{"a": "p", "b": "q", "x": "p"}, nil).Fingerprint(none))

	bigger := available("a", "n1", 200)
	missing := a
	missing.Status.State, missing.Status.Reason = cephv1alpha1.DiskMissing, "gone since noon"
	edited := pool("p", 0, "a", "b", "x")
	edited.Generation = 2
	for name, other := range map[string]uint64{
		"a selected disk's size":        ResolvePool(ptrTo(pool("p", 0, "a", "b", "x")), byName(bigger, b), map[string]string{"a": "p", "b": "q", "x": "p"}, nil).Fingerprint(none),
		"a selected disk going missing": ResolvePool(ptrTo(pool("p", 0, "a", "b", "x")), byName(missing, b), map[string]string{"a": "p", "b": "q", "x": "p"}, map[DeviceID]bool{DeviceIDOf(&missing): true}).Fingerprint(none),
		"a contested disk's owner":      ResolvePool(ptrTo(pool("p", 0, "a", "b", "x")), byName(a, b), map[string]string{"a": "p", "b": "r", "x": "p"}, nil).Fingerprint(none),
		"a missing name resolving":      ResolvePool(ptrTo(pool("p", 0, "a", "b", "x")), byName(a, b, available("x", "n3", 1)), map[string]string{"a": "p", "b": "q", "x": "p"}, nil).Fingerprint(none),
		"the generation":                ResolvePool(&edited, byName(a, b), map[string]string{"a": "p", "b": "q", "x": "p"}, nil).Fingerprint(none),
		"the CephCluster's problem":     base.Fingerprint(ClusterProblem{Reason: ReasonNoCephCluster, Message: "gone"}),
		"the problem's message alone":   base.Fingerprint(ClusterProblem{Reason: ReasonNoCephCluster, Message: "still gone"}),
	} {
		assert.NotEqual(t, fp, other, name)
	}
}
