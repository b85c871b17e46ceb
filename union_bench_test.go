package main

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// benchDiskTypes are the bench nodes' disks by index, as the scale
// benchmark's simulated nodes have them (4 NVMe, 4 SSD, 12 HDD of 20):
// each device the plan lists carries its class.
var benchDiskTypes = []cephv1alpha1.DiskType{"nvme", "hdd", "hdd", "ssd", "hdd"}

// benchInventory is nodes×devices Available disks and pools over 80% of them.
func benchInventory(nodes, devices, pools int) ([]cephv1alpha1.DiskPool, []cephv1alpha1.Disk) {
	var disks []cephv1alpha1.Disk
	for n := range nodes {
		for d := range devices {
			size := resource.MustParse("4Ti")
			disks = append(disks, cephv1alpha1.Disk{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%04d-d%02d", n, d)},
				Status: cephv1alpha1.DiskStatus{NodeName: fmt.Sprintf("node-%04d", n), Path: fmt.Sprintf("/dev/sd%c", 'b'+d),
					StablePath: fmt.Sprintf("/dev/disk/by-id/wwn-%04d%02d", n, d), Size: &size, State: cephv1alpha1.DiskAvailable, Available: true,
					Type: benchDiskTypes[d%len(benchDiskTypes)]},
			})
		}
	}
	per := len(disks) * 8 / 10 / pools
	var ps []cephv1alpha1.DiskPool
	for p := range pools {
		pool := cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pool-%02d", p), CreationTimestamp: metav1.NewTime(time.Unix(int64(p), 0))}}
		for _, d := range disks[p*per : min(len(disks), (p+1)*per+per/20)] {
			pool.Spec.Disks = append(pool.Spec.Disks, d.Name)
		}
		ps = append(ps, pool)
	}
	return ps, disks
}

// BenchmarkUnionAndPlan is the DiskPool reconciler's computation for one
// edit at full scale (10,000 disks, 20 pools): the part of the edit
// latency that is ours rather than the API server's.
//
// The CephCluster already lists what the pools want (the steady state an
// edit starts from), so planning also carries the current entries over.
func BenchmarkUnionAndPlan(b *testing.B) {
	pools, list := benchInventory(500, 20, 20)
	disks := byName(list...)
	current := PlanStorageNodes(nil, "", RenderStorageNodes(Union(pools, disks, nil).Disks))
	b.ReportAllocs()
	for b.Loop() {
		u := Union(pools, disks, nil)
		PlanStorageNodes(current.Nodes, current.Managed, RenderStorageNodes(u.Disks))
	}
}

// BenchmarkSizeAfterPlan is what an edit that adds devices pays on top of
// BenchmarkUnionAndPlan, at the same scale: the CephCluster it would leave
// measured as JSON (refuseOverflow). Read the two as a ratio.
func BenchmarkSizeAfterPlan(b *testing.B) {
	pools, list := benchInventory(500, 20, 20)
	plan := PlanStorageNodes(nil, "", RenderStorageNodes(Union(pools, byName(list...), nil).Disks))
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1", "kind": "CephCluster",
		"metadata": map[string]any{"name": "rook-ceph", "namespace": "rook-ceph"},
		"spec":     map[string]any{"storage": map[string]any{"useAllNodes": false, "nodes": plan.Nodes}},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sizeAfterPlan(cluster, plan); err != nil {
			b.Fatal(err)
		}
	}
}
