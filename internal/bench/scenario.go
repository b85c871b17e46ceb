package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"

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
