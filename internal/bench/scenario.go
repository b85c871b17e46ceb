package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// nodeName is the i-th simulated node.
func nodeName(i int) string { return fmt.Sprintf("bench-node-%04d", i) }

// discoveryConfigMaps are every simulated node's discovery ConfigMap:
// mixed HDD/SSD/NVMe devices, a few in use.
func discoveryConfigMaps(namespace string, nodes, devices int) ([]*corev1.ConfigMap, error) {
	out := make([]*corev1.ConfigMap, 0, nodes)
	for i := range nodes {
		data, err := simulate.DevicesJSON(simulate.MixedDevices(nodeName(i), devices))
		if err != nil {
			return nil, err
		}
		out = append(out, simulate.ConfigMap(namespace, nodeName(i), data))
	}
	return out, nil
}

// parallel runs fn over items with n workers and returns the first error.
func parallel[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	ch := make(chan T)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range ch {
				if err := fn(ctx, item); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	for _, item := range items {
		ch <- item
	}
	close(ch)
	wg.Wait()
	return first
}

const floorLabel = "bench.ceph.fundament.io/floor"

// floorDisks are what a plain client writes to publish the same inventory:
// one Disk and one status per device, with no reconciler in between.
func floorDisks(nodes, devices int) []*cephv1alpha1.Disk {
	var out []*cephv1alpha1.Disk
	for i := range nodes {
		for j, d := range simulate.MixedDevices(nodeName(i), devices) {
			size := resource.NewQuantity(int64(d.Size), resource.BinarySI)
			state := cephv1alpha1.DiskAvailable
			if !d.Empty {
				state = cephv1alpha1.DiskInUse
			}
			out = append(out, &cephv1alpha1.Disk{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%04d-%02d", i, j), Labels: map[string]string{floorLabel: "true"}},
				Status: cephv1alpha1.DiskStatus{
					// displaySize as long as the plugin's ("3.6 TiB"): the same payload.
					NodeName: nodeName(i), Path: "/dev/" + d.Name, Size: size, DisplaySize: fmt.Sprintf("%.1f TiB", float64(d.Size)/(1<<40)), Model: d.Model, Serial: d.Serial,
					WWN: d.WWN, Rotational: d.Rotational, Available: d.Empty, State: state, Type: cephv1alpha1.DiskTypeHDD,
				},
			})
		}
	}
	return out
}

// writeFloor creates each Disk and writes its status with workers.
func writeFloor(ctx context.Context, c client.Client, workers int, disks []*cephv1alpha1.Disk) error {
	return parallel(ctx, workers, disks, func(ctx context.Context, d *cephv1alpha1.Disk) error {
		status := d.Status
		if err := c.Create(ctx, d); err != nil {
			return err
		}
		d.Status = status
		return c.Status().Update(ctx, d)
	})
}

// poolPlan splits the published disks (sorted by node and path) into
// contiguous pools covering about 80% of them, each overlapping the next
// by a few disks so some claims are contested.
func poolPlan(disks []cephv1alpha1.Disk, pools int) [][]string {
	sort.Slice(disks, func(i, j int) bool {
		if disks[i].Status.NodeName != disks[j].Status.NodeName {
			return disks[i].Status.NodeName < disks[j].Status.NodeName
		}
		return disks[i].Status.Path < disks[j].Status.Path
	})
	covered := len(disks) * 8 / 10
	per := max(1, covered/pools)
	overlap := max(1, per/20)
	plan := make([][]string, 0, pools)
	for p := range pools {
		start := p * per
		end := min(len(disks), start+per+overlap)
		var names []string
		for _, d := range disks[start:end] {
			names = append(names, d.Name)
		}
		plan = append(plan, names)
	}
	return plan
}
