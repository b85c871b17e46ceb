package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

const editedPool = "pool-00"

// editableDisk is an Available disk only the edited pool lists: taking it
// out and putting it back moves the CephCluster's device list each time.
// (The pool's last disks are also listed by the next pool, which would
// take them over; its first ones are its alone.)
func editableDisk(ctx context.Context, c client.Client, w *watcher) (cephv1alpha1.DiskPool, cephv1alpha1.Disk, error) {
	var pool cephv1alpha1.DiskPool
	if err := c.Get(ctx, client.ObjectKey{Name: editedPool}, &pool); err != nil {
		return pool, cephv1alpha1.Disk{}, err
	}
	// A disk another pool lists too would change hands on every edit, and
	// that pool's status with it: the edits and the fan-out measure one
	// pool's disk.
	var pools cephv1alpha1.DiskPoolList
	if err := c.List(ctx, &pools); err != nil {
		return pool, cephv1alpha1.Disk{}, err
	}
	listedElsewhere := map[string]bool{}
	for _, other := range pools.Items {
		if other.Name != editedPool {
			for _, name := range other.Spec.Disks {
				listedElsewhere[name] = true
			}
		}
	}
	for i := range pool.Spec.Disks {
		d, ok := w.disk1(pool.Spec.Disks[i])
		if ok && d.Status.State == cephv1alpha1.DiskAvailable && d.Status.ClaimedBy == editedPool && !listedElsewhere[d.Name] {
			return pool, d, nil
		}
	}
	return pool, cephv1alpha1.Disk{}, fmt.Errorf("%s owns no Available disk that no other pool lists", editedPool)
}

func deviceName(d cephv1alpha1.Disk) string {
	if d.Status.StablePath != "" {
		return d.Status.StablePath
	}
	return d.Status.Path
}

// editTime is how long one pool edit took until the CephCluster reflected
// it, and of that, the DiskPool write itself (until its answer came).
type editTime struct{ total, poolWrite time.Duration }

// setMember adds or removes the disk from the pool and returns when the
// CephCluster reflects it, with the time that took.
func setMember(ctx context.Context, c client.Client, w *watcher, disk cephv1alpha1.Disk, member bool) (editTime, error) {
	var pool cephv1alpha1.DiskPool
	if err := c.Get(ctx, client.ObjectKey{Name: editedPool}, &pool); err != nil {
		return editTime{}, err
	}
	base := pool.DeepCopy()
	pool.Spec.Disks = slices.DeleteFunc(pool.Spec.Disks, func(n string) bool { return n == disk.Name })
	if member {
		pool.Spec.Disks = append(pool.Spec.Disks, disk.Name)
	}
	w.drainCluster()
	start := time.Now()
	// A merge patch of spec, as the console sends: the plugin writes the
	// pool's status meanwhile, which an Update would conflict with.
	if err := c.Patch(ctx, &pool, client.MergeFrom(base)); err != nil {
		return editTime{}, err
	}
	written := time.Now()
	seen, err := w.waitDevice(ctx, disk.Status.NodeName, deviceName(disk), member, 30*time.Second)
	if err != nil {
		return editTime{}, err
	}
	return editTime{total: seen.Sub(start), poolWrite: written.Sub(start)}, nil
}

// measureEdits alternates, n times each, an edit (one disk taken out of
// a pool or put back, timed until the CephCluster's device list reflects
// it) and its floor (serverWrite): interleaved, so what disturbs the
// machine meanwhile falls on both alike.
func measureEdits(ctx context.Context, c client.Client, w *watcher, n int) (edits []editTime, floor []time.Duration, err error) {
	_, disk, err := editableDisk(ctx, c, w)
	if err != nil {
		return nil, nil, err
	}
	for i := range n {
		e, err := setMember(ctx, c, w, disk, i%2 == 1)
		if err != nil {
			return edits, floor, fmt.Errorf("edit %d: %w", i, err)
		}
		edits = append(edits, e)
		d, err := serverWrite(ctx, c, w, i)
		if err != nil {
			return edits, floor, fmt.Errorf("floor of edit %d: %w", i, err)
		}
		floor = append(floor, d)
	}
	if n%2 == 1 { // leave the pool as it was
		if _, err := setMember(ctx, c, w, disk, true); err != nil {
			return edits, floor, err
		}
	}
	return edits, floor, nil
}

// fanoutQuiet is how long nothing is written before a fan-out step counts
// as done: longer than the plugin waits to tell consumers of a capacity
// change (capacityNoticeDelay, 5 s), so that each step's own writes fall
// in it, and none of the step before.
const fanoutQuiet = 6 * time.Second

// measureFanout counts the reconciles and writes that follow one disk
// joining one pool (its node already contributes, so replication does not
// change): the CephCluster patch, the pool's status and the disk's
// claimedBy, and each consumer's capacity once (fanoutOK).
func measureFanout(ctx context.Context, c client.Client, w *watcher, p *countingProxy, plugin *pluginProcess) (map[string]int, map[string]int, error) {
	_, disk, err := editableDisk(ctx, c, w)
	if err != nil {
		return nil, nil, err
	}
	if _, err := setMember(ctx, c, w, disk, false); err != nil {
		return nil, nil, err
	}
	if err := waitQuiet(ctx, p, fanoutQuiet, time.Minute); err != nil {
		return nil, nil, err
	}
	before, metricsBefore := p.snapshot(), mustMetrics(plugin)
	if _, err := setMember(ctx, c, w, disk, true); err != nil {
		return nil, nil, err
	}
	if err := waitQuiet(ctx, p, fanoutQuiet, time.Minute); err != nil {
		return nil, nil, err
	}
	_, writes := writesSince(before, p.snapshot())
	reconciles := map[string]int{}
	for k, v := range mustMetrics(plugin) {
		controller, _, _ := strings.Cut(k, " ")
		if controller == "all" || controller == "errors" {
			continue
		}
		if d := int(v - metricsBefore[k]); d > 0 {
			reconciles[controller] += d
		}
	}
	return reconciles, writes, nil
}

// serverWrite times a write to the CephCluster that needs no reconciler
// (an annotation) until the watch shows it: what the API server alone
// costs for an object of this size. It is answered with metadata only, as
// the plugin's device-list patch is, so the API server does for it what
// it does for the plugin's write. An edit cannot reach the device list
// faster than this.
func serverWrite(ctx context.Context, c client.Client, w *watcher, i int) (time.Duration, error) {
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"})
	answer.SetNamespace(Namespace)
	answer.SetName("rook-ceph")
	value := fmt.Sprint(i)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, floorAnnotation, value)
	w.drainCluster()
	start := time.Now()
	if err := c.Patch(ctx, answer, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return 0, err
	}
	seen, err := w.waitCluster(ctx, func(u *unstructured.Unstructured) bool {
		return u.GetAnnotations()[floorAnnotation] == value
	}, 30*time.Second)
	if err != nil {
		return 0, err
	}
	return seen.Sub(start), nil
}

const floorAnnotation = "bench.ceph.fundament.io/floor"
