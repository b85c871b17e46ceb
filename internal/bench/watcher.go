package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// watcher follows Disks and the CephCluster through informers, so waiting
// costs the API server nothing beyond one watch each.
type watcher struct {
	cache cache.Cache
	// stop ends the watches.
	stop context.CancelFunc

	mu sync.Mutex
	// published holds the Disks seen with a status: only their names, so
	// following 10,000 of them costs the watch's decoding and no copies.
	published   map[string]bool
	first, last time.Time
	clusterCh   chan *unstructured.Unstructured
}

// newWatcher starts the watches; stop ends them.
func newWatcher(parent context.Context, cfg *rest.Config, scheme *runtime.Scheme) (*watcher, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(parent)
	w := &watcher{cache: c, stop: stop, published: map[string]bool{}, clusterCh: make(chan *unstructured.Unstructured, 1024)}
	disks, err := c.GetInformer(ctx, &cephv1alpha1.Disk{})
	if err != nil {
		stop()
		return nil, err
	}
	_, err = disks.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.disk(obj, false) },
		UpdateFunc: func(_, obj any) { w.disk(obj, false) },
		DeleteFunc: func(obj any) { w.disk(obj, true) },
	})
	if err != nil {
		stop()
		return nil, err
	}
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("ceph.rook.io/v1")
	cluster.SetKind("CephCluster")
	clusters, err := c.GetInformer(ctx, cluster)
	if err != nil {
		stop()
		return nil, err
	}
	_, err = clusters.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.cluster(obj) },
		UpdateFunc: func(_, obj any) { w.cluster(obj) },
	})
	if err != nil {
		stop()
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		stop()
		return nil, fmt.Errorf("bench watcher: caches did not sync")
	}
	return w, nil
}

func (w *watcher) disk(obj any, deleted bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	d, ok := obj.(*cephv1alpha1.Disk)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if deleted || d.Status.NodeName == "" || strings.HasPrefix(d.Name, floorPrefix) {
		return
	}
	if _, seen := w.published[d.Name]; !seen {
		w.last = time.Now()
		if w.first.IsZero() {
			w.first = w.last
		}
	}
	w.published[d.Name] = true
}

func (w *watcher) cluster(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	select {
	case w.clusterCh <- u.DeepCopy():
	default:
	}
}

func (w *watcher) publishedDisks() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.published)
}

// publishedSpan is when the watch saw the first and the last Disk with
// a status.
func (w *watcher) publishedSpan() (first, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first, w.last
}

// disks are the published Disks as the watch has them now.
func (w *watcher) disks() []cephv1alpha1.Disk {
	var list cephv1alpha1.DiskList
	if err := w.cache.List(context.Background(), &list); err != nil {
		return nil
	}
	out := list.Items[:0]
	for _, d := range list.Items {
		if d.Status.NodeName != "" && !strings.HasPrefix(d.Name, floorPrefix) {
			out = append(out, d)
		}
	}
	return out
}

// disk1 is one published Disk as the watch has it now.
func (w *watcher) disk1(name string) (cephv1alpha1.Disk, bool) {
	var d cephv1alpha1.Disk
	if err := w.cache.Get(context.Background(), client.ObjectKey{Name: name}, &d); err != nil || d.Status.NodeName == "" {
		return d, false
	}
	return d, true
}

// waitDevice waits until the CephCluster lists (or no longer lists) the
// device on the node, and returns when it saw it.
func (w *watcher) waitDevice(ctx context.Context, node, device string, present bool, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case u := <-w.clusterCh:
			if hasDevice(u, node, device) == present {
				return time.Now(), nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("CephCluster did not %s %s on %s within %s", map[bool]string{true: "list", false: "drop"}[present], device, node, timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// waitCluster waits until a CephCluster update satisfies cond.
func (w *watcher) waitCluster(ctx context.Context, cond func(*unstructured.Unstructured) bool, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case u := <-w.clusterCh:
			if cond(u) {
				return time.Now(), nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("CephCluster update not seen within %s", timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// drainCluster forgets CephCluster updates seen so far.
func (w *watcher) drainCluster() {
	for {
		select {
		case <-w.clusterCh:
		default:
			return
		}
	}
}

func hasDevice(u *unstructured.Unstructured, node, device string) bool {
	nodes, _, _ := unstructured.NestedSlice(u.Object, "spec", "storage", "nodes")
	for _, n := range nodes {
		m, _ := n.(map[string]any)
		if m["name"] != node {
			continue
		}
		devices, _ := m["devices"].([]any)
		for _, d := range devices {
			dm, _ := d.(map[string]any)
			if dm["name"] == device {
				return true
			}
		}
	}
	return false
}
