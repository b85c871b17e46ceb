package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// otherObject is one object the other writer edits: which fields, set to
// a counter, and where they are.
type otherObject struct {
	gvk             schema.GroupVersionKind
	namespace, name string
	// fields are paths in the object; a path element "[name=x]" picks the
	// list item with that name, "[0]" the first.
	fields [][]string
}

// otherWriter is a second client that edits fields the plugin does not own
// on the objects the plugin writes, with read-modify-write and a retry on
// conflict, as kubectl edit or another controller would. It remembers the
// last value it wrote to each field.
type otherWriter struct {
	c       client.Client
	objects []otherObject
	counter atomic.Int64

	mu       sync.Mutex
	last     map[string]string
	edits    int
	failures int
}

var listItem = regexp.MustCompile(`^\[(?:name=(.*)|(\d+))\]$`)

// resolve follows path through lists ([name=x], [0]) and returns the map
// holding its last element.
func resolve(obj map[string]any, path []string, create bool) (map[string]any, string, bool) {
	cur := obj
	for i, el := range path[:len(path)-1] {
		next := path[i+1]
		if m := listItem.FindStringSubmatch(next); m != nil {
			list, _ := cur[el].([]any)
			var item map[string]any
			for j, it := range list {
				im, _ := it.(map[string]any)
				if (m[1] != "" && im["name"] == m[1]) || (m[2] != "" && fmt.Sprint(j) == m[2]) {
					item = im
				}
			}
			if item == nil {
				return nil, "", false
			}
			rest, last, ok := resolve(item, path[i+2:], create)
			return rest, last, ok
		}
		nm, ok := cur[el].(map[string]any)
		if !ok {
			if !create {
				return nil, "", false
			}
			nm = map[string]any{}
			cur[el] = nm
		}
		cur = nm
	}
	return cur, path[len(path)-1], true
}

func (w *otherWriter) key(o otherObject, path []string) string {
	return o.gvk.Kind + "/" + o.name + ":" + strings.Join(path, ".")
}

// edit sets every field of o to a new value.
func (w *otherWriter) edit(ctx context.Context, o otherObject) {
	n := fmt.Sprint(w.counter.Add(1))
	written := map[string]string{}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: o.name}, u); err != nil {
			return err
		}
		clear(written)
		for _, path := range o.fields {
			parent, last, ok := resolve(u.Object, path, true)
			if !ok {
				continue // the list item is not there (yet)
			}
			parent[last] = "v" + n
			written[w.key(o, path)] = "v" + n
		}
		return w.c.Update(ctx, u)
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failures++
		return
	}
	w.edits++
	for k, v := range written {
		w.last[k] = v
	}
}

// verify fails for every field whose last written value is gone.
func (w *otherWriter) verify(t *testing.T, ctx context.Context) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.objects {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		require.NoError(t, w.c.Get(ctx, client.ObjectKey{Namespace: o.namespace, Name: o.name}, u))
		for _, path := range o.fields {
			want, wrote := w.last[w.key(o, path)]
			if !wrote {
				continue
			}
			parent, last, ok := resolve(u.Object, path, false)
			got := ""
			if ok {
				got, _ = parent[last].(string)
			}
			assert.Equal(t, want, got, "%s: another client's change was lost", w.key(o, path))
		}
	}
	t.Logf("other writer: %d edits (%d fields kept), %d gave up after conflicts", w.edits, len(w.last), w.failures)
}

// raceInjector makes the other writer edit an object right before the
// plugin's write of it reaches the API server, the first few times per
// resource: the plugin's view is then stale for certain, and a write that
// is not merged or guarded would lose the edit.
type raceInjector struct {
	w       *otherWriter
	perKind int

	mu        sync.Mutex
	armed     map[string]int // edits made since arm, per resource
	injected  map[string]int // edits made in all
	conflicts atomic.Int32
}

func (r *raceInjector) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch || req.Method == http.MethodPut {
			for _, o := range r.w.objects {
				plural := resourcePlural(o.gvk.Kind)
				if strings.HasSuffix(req.URL.Path, "/"+plural+"/"+o.name) && r.take(plural) {
					r.w.edit(req.Context(), o)
				}
			}
		}
		res, err := rt.RoundTrip(req)
		if err == nil && res.StatusCode == http.StatusConflict {
			r.conflicts.Add(1)
		}
		return res, err
	})
}

// resourcePlural is the resource name of the kinds edited here.
func resourcePlural(kind string) string {
	k := strings.ToLower(kind)
	if strings.HasSuffix(k, "s") {
		return k + "es"
	}
	return k + "s"
}

// arm lets perKind more edits race the plugin's writes of each resource.
func (r *raceInjector) arm(perKind int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.perKind = perKind
	r.armed = map[string]int{}
}

func (r *raceInjector) take(kind string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.armed[kind] >= r.perKind {
		return false
	}
	r.armed[kind]++
	r.injected[kind]++
	return true
}

// While the plugin converges and follows spec changes, another client keeps
// editing other fields of the CephCluster, the Rook objects and the
// StorageClass — some of its edits land right between the plugin's read and
// its write. None of its changes is lost, the plugin's conflicts are retried
// and it still converges.
func TestReliabilityConcurrentWriters(t *testing.T) {
	env := controlPlane.Env(t)
	h := newHarness(t)
	sc := newScenario(t, "conc", 2, 6)
	cl := h.cfg.ClusterNamespace
	firstNode := sortedKeys(sc.nodes)[0]
	gv := cephv1.SchemeGroupVersion
	w := &otherWriter{c: env.Client, last: map[string]string{}, objects: []otherObject{
		{gvk: cephClusterGVK, namespace: cl, name: CephClusterName, fields: [][]string{
			{"metadata", "annotations", "other.example.com/edit"},
			{"spec", "dashboard", "urlPrefix"},
			{"spec", "storage", "config", "otherKey"},
			{"spec", "storage", "nodes", "[name=" + firstNode + "]", "config", "otherKey"},
		}},
		{gvk: gv.WithKind("CephBlockPool"), namespace: cl, name: "ceph-conc-block", fields: [][]string{
			{"metadata", "annotations", "other.example.com/edit"},
			{"spec", "parameters", "otherKey"},
		}},
		{gvk: gv.WithKind("CephFilesystem"), namespace: cl, name: "cephfs-conc-file", fields: [][]string{
			{"spec", "metadataServer", "priorityClassName"},
			{"spec", "dataPools", "[0]", "parameters", "otherKey"},
		}},
		{gvk: gv.WithKind("CephObjectStore"), namespace: cl, name: "cephobj-conc-object", fields: [][]string{
			{"spec", "gateway", "priorityClassName"},
			{"spec", "dataPool", "parameters", "otherKey"},
		}},
		{gvk: storagev1.SchemeGroupVersion.WithKind("StorageClass"), name: "ceph-conc-block", fields: [][]string{
			{"metadata", "labels", "other.example.com/edit"},
		}},
	}}
	races := &raceInjector{w: w, injected: map[string]int{}}
	races.arm(3)
	h.startWith(h.host, races.wrap)
	inv := watchNothingLost(t, env.Config, cl)
	inv.waitWatching()
	inv.protect(sc.claimed...)

	// A device someone listed by hand, on a node of its own.
	cluster := h.cluster()
	h.update(cluster, func() {
		cluster.Spec.Storage.Nodes = append(cluster.Spec.Storage.Nodes, cephv1.Node{Name: "by-hand", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-0xhand"}}}})
	})
	handMade := DeviceID{Node: "by-hand", Device: "/dev/disk/by-id/wwn-0xhand"}
	inv.protect(handMade)

	// Objects of the plugin's kinds that are not the plugin's: one named
	// like a derived object of a consumer that does not exist.
	foreign := []client.Object{
		&cephv1.CephBlockPool{ObjectMeta: metav1.ObjectMeta{Namespace: cl, Name: "ceph-conc-ghost"}, Spec: cephv1.NamedBlockPoolSpec{PoolSpec: cephv1.PoolSpec{Replicated: cephv1.ReplicatedSpec{Size: 3}}}},
		&cephv1.CephBlockPool{ObjectMeta: metav1.ObjectMeta{Namespace: cl, Name: "hand-made"}, Spec: cephv1.NamedBlockPoolSpec{PoolSpec: cephv1.PoolSpec{Replicated: cephv1.ReplicatedSpec{Size: 1}}}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "cephfs-conc-ghost"}, Provisioner: "example.com/hand-made"},
	}
	for _, o := range foreign {
		require.NoError(t, h.c.Create(h.ctx, o))
	}
	inv.keepForeign(foreign...)

	require.NoError(t, sc.publish(h.ctx, h.c, h.cfg.OperatorNamespace))
	require.NoError(t, sc.request(h.ctx, h.c, cl, time.Minute))

	// The other writer keeps editing while the plugin works.
	stopWriter := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		rnd := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stopWriter:
				return
			case <-time.After(time.Duration(20+rnd.IntN(80)) * time.Millisecond):
			}
			w.edit(h.ctx, w.objects[rnd.IntN(len(w.objects))])
		}
	}()

	// The plugin has work to do meanwhile: replication changes on every
	// consumer, and a pool giving up a disk and taking it back.
	setReplicas := func(obj client.Object, n int32) {
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			switch o := obj.(type) {
			case *cephv1alpha1.BlockStorage:
				o.Spec.Replicas = &n
			case *cephv1alpha1.FileStorage:
				o.Spec.Replicas = &n
			case *cephv1alpha1.ObjectStorage:
				o.Spec.Replicas = &n
			}
			return h.c.Update(h.ctx, obj)
		}))
	}
	consumers := sc.consumers()
	alpha := sc.pools[0].DeepCopy()
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(alpha), alpha))
	dropped := alpha.Spec.Disks[len(alpha.Spec.Disks)-1]
	var droppedDisk cephv1alpha1.Disk
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: dropped}, &droppedDisk))
	for round, n := range []int32{1, 2, 1} {
		for _, c := range consumers {
			setReplicas(c, n)
		}
		if round == 1 {
			inv.release(DeviceIDOf(&droppedDisk))
			h.editPool(alpha.Name, func(p *cephv1alpha1.DiskPool) { p.Spec.Disks = p.Spec.Disks[:len(p.Spec.Disks)-1] })
		}
		time.Sleep(time.Second)
	}
	h.editPool(alpha.Name, func(p *cephv1alpha1.DiskPool) { p.Spec.Disks = append(p.Spec.Disks, dropped) })
	time.Sleep(time.Second)
	close(stopWriter)
	<-writerDone

	// Last round: every write the plugin makes for it meets an edit made
	// right before, and those edits are the other client's last word.
	races.arm(1)
	for _, c := range consumers {
		setReplicas(c, 2)
	}
	inv.release(DeviceIDOf(&droppedDisk))
	h.editPool(alpha.Name, func(p *cephv1alpha1.DiskPool) { p.Spec.Disks = p.Spec.Disks[:len(p.Spec.Disks)-1] })

	// The plugin's own fields converge ...
	h.eventually("the Rook objects follow the consumers and the cluster lists every pool disk", func() error {
		for _, c := range consumers {
			kind := kindOf(c)
			rook := kind.NewRookObject()
			if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: cl, Name: kind.DerivedName(c.GetName())}, rook); err != nil {
				return err
			}
			if size := replicatedSize(rook); size != 2 {
				return fmt.Errorf("%s %s has size %d, want 2", kind.RookKind(), rook.GetName(), size)
			}
		}
		listed := ClusterDevices(h.cluster())
		for _, id := range append(append([]DeviceID{}, sc.claimed...), handMade) {
			if !listed[id] && id != DeviceIDOf(&droppedDisk) {
				return fmt.Errorf("the CephCluster does not list %s|%s", id.Node, id.Device)
			}
		}
		if listed[DeviceIDOf(&droppedDisk)] {
			return fmt.Errorf("the CephCluster still lists the dropped %v", DeviceIDOf(&droppedDisk))
		}
		return nil
	})
	// ... and nothing the other client set is lost.
	w.verify(t, h.ctx)
	injected := 0
	for _, n := range races.injected {
		injected += n
	}
	assert.GreaterOrEqual(t, injected, 10, "edits raced the plugin's writes of every kind: %v", races.injected)
	assert.Positive(t, races.conflicts.Load(), "the plugin met conflicts (and retried them)")
	t.Logf("%d edits injected right before the plugin's writes (%v); the plugin met %d conflicts", injected, races.injected, races.conflicts.Load())
	inv.check(h.ctx, foreign...)
}

// editPool changes a pool's spec, retrying on conflict.
func (h *harness) editPool(name string, edit func(*cephv1alpha1.DiskPool)) {
	h.t.Helper()
	require.NoError(h.t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p cephv1alpha1.DiskPool
		if err := h.c.Get(h.ctx, client.ObjectKey{Name: name}, &p); err != nil {
			return err
		}
		edit(&p)
		return h.c.Update(h.ctx, &p)
	}))
}

func kindOf(obj client.Object) consumerKind {
	switch obj.(type) {
	case *cephv1alpha1.FileStorage:
		return fileStorageKind
	case *cephv1alpha1.ObjectStorage:
		return objectStorageKind
	}
	return blockStorageKind
}

// replicatedSize is the data pool's replica count of a Rook object.
func replicatedSize(obj client.Object) uint {
	switch o := obj.(type) {
	case *cephv1.CephBlockPool:
		return o.Spec.Replicated.Size
	case *cephv1.CephFilesystem:
		if len(o.Spec.DataPools) == 0 {
			return 0
		}
		return o.Spec.DataPools[0].Replicated.Size
	case *cephv1.CephObjectStore:
		return o.Spec.DataPool.Replicated.Size
	}
	return 0
}
