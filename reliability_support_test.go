package main

// What the reliability tests share: a scenario (discovery, pools and
// consumers) that exercises every reconciler, a normalised snapshot of the
// state the plugin converges to (so a faulted run can be compared with an
// uninterrupted one), the "nothing lost" watcher every fault test runs, a
// kube-apiserver that can be stopped and started again, and the plugin
// binary run as a process.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/pluginproc"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

// relScenario is one storage setup: nodes with discovered devices, pools
// over them (one contested disk pair, one missing disk, one pool of in-use
// disks only) and one consumer of each kind. The same scenario yields the
// same converged state whatever happens on the way.
type relScenario struct {
	nodes map[string][]simulate.Device
	// disks is how many Disks discovery implies.
	disks int
	// claimed are the devices the pools put into the CephCluster: once
	// there, none may leave while its pool lives.
	claimed []DeviceID
	pools   []cephv1alpha1.DiskPool
	// consumers are fresh objects each call.
	consumers func() []client.Object
}

// newScenario spreads perNode mixed devices over nodes nodes named
// <prefix>-<i>.
func newScenario(t testing.TB, prefix string, nodes, perNode int) relScenario {
	t.Helper()
	sc := relScenario{nodes: map[string][]simulate.Device{}}
	var available, inUse [][]DiscoveredDisk
	for i := range nodes {
		node := fmt.Sprintf("%s-%d", prefix, i)
		devices := simulate.MixedDevices(node, perNode)
		sc.nodes[node] = devices
		data, err := simulate.DevicesJSON(devices)
		require.NoError(t, err)
		disks, err := ParseDiscovery(simulate.ConfigMap("any", node, data), DiscoveryOptions{})
		require.NoError(t, err)
		sc.disks += len(disks)
		var av, iu []DiscoveredDisk
		for _, d := range disks {
			if d.Status.Available {
				av = append(av, d)
			} else {
				iu = append(iu, d)
			}
		}
		available, inUse = append(available, av), append(inUse, iu)
	}
	names := func(ds []DiscoveredDisk) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Name)
		}
		return out
	}
	claim := func(ds ...DiscoveredDisk) {
		for _, d := range ds {
			sc.claimed = append(sc.claimed, DeviceID{Node: d.Status.NodeName, Device: d.Status.StorageDevice()})
		}
	}
	half := max(nodes/2, 1)
	var alpha, beta, gamma []string
	for i := range nodes {
		if i < half {
			alpha = append(alpha, names(available[i])...)
		} else {
			beta = append(beta, names(available[i])...)
		}
		claim(available[i]...)
		gamma = append(gamma, names(inUse[i])...)
	}
	// Two of alpha's disks are listed by beta too: the older pool keeps them.
	beta = append(beta, alpha[:min(2, len(alpha))]...)
	beta = append(beta, prefix+"-no-such-disk")
	if len(gamma) > 0 {
		beta = append(beta, gamma[0])
	}
	for _, p := range []struct {
		name  string
		disks []string
	}{{"alpha", alpha}, {"beta", beta}, {"gamma", gamma}} {
		if len(p.disks) > 0 {
			sc.pools = append(sc.pools, cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + p.name}, Spec: cephv1alpha1.DiskPoolSpec{Disks: p.disks}})
		}
	}
	two, three := int32(2), int32(3)
	sc.consumers = func() []client.Object {
		return []client.Object{
			&cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-block"}, Spec: cephv1alpha1.BlockStorageSpec{Default: true}},
			&cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-file"}, Spec: cephv1alpha1.FileStorageSpec{Replicas: &two, MetadataServers: 1}},
			&cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-object"}, Spec: cephv1alpha1.ObjectStorageSpec{Replicas: &three, GatewayInstances: 1}},
		}
	}
	return sc
}

// publish writes every node's discovery ConfigMap, as Rook's daemon does.
func (sc relScenario) publish(ctx context.Context, c client.Client, namespace string) error {
	for _, node := range sortedKeys(sc.nodes) {
		data, err := simulate.DevicesJSON(sc.nodes[node])
		if err != nil {
			return err
		}
		if err := simulate.EnsureNode(ctx, c, node); err != nil {
			return err
		}
		if err := createOrKeep(ctx, c, simulate.ConfigMap(namespace, node, data)); err != nil {
			return err
		}
	}
	return nil
}

// request creates the pools (oldest first) once every Disk is published,
// and the consumers once the pools' devices are in the CephCluster, retrying
// each step until it succeeds (the CRDs may not be installed yet, the plugin
// may be down). The order makes the consumers' history (a replication
// change announced when nodes join) the same in every run.
func (sc relScenario) request(ctx context.Context, c client.Client, clusterNamespace string, timeout time.Duration) error {
	step := func(cond func(context.Context) error) error { return testenv.Eventually(ctx, timeout, cond) }
	if err := step(func(ctx context.Context) error {
		var disks cephv1alpha1.DiskList
		if err := c.List(ctx, &disks); err != nil {
			return err
		}
		if len(disks.Items) < sc.disks {
			return fmt.Errorf("%d of %d Disks published", len(disks.Items), sc.disks)
		}
		return nil
	}); err != nil {
		return err
	}
	for i := range sc.pools {
		if err := step(func(ctx context.Context) error { return createOrKeep(ctx, c, sc.pools[i].DeepCopy()) }); err != nil {
			return err
		}
	}
	if err := step(func(ctx context.Context) error {
		var cc cephv1.CephCluster
		if err := c.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: CephClusterName}, &cc); err != nil {
			return err
		}
		listed := ClusterDevices(&cc)
		for _, id := range sc.claimed {
			if !listed[id] {
				return fmt.Errorf("the CephCluster does not list %s|%s yet", id.Node, id.Device)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, obj := range sc.consumers() {
		if err := step(func(ctx context.Context) error { return createOrKeep(ctx, c, obj) }); err != nil {
			return err
		}
	}
	return nil
}

func createOrKeep(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// clusterState is what the plugin decides, object by object, as normalised
// JSON: statuses without timestamps, derived objects without UIDs, and the
// namespaces replaced by one placeholder, so runs in different namespaces or
// on different API servers compare equal when they converged alike. (The
// reference run keeps the operator and cluster namespaces apart, the runs
// under test share one, as LoadConfig requires; which value follows which
// namespace is the renderer tests' business.)
type clusterState map[string]string

// observeState reads the state the plugin is responsible for.
func observeState(ctx context.Context, c client.Client, cfg Config) (clusterState, error) {
	st := clusterState{}
	put := func(key string, v any) {
		data, _ := json.Marshal(v)
		s := strings.ReplaceAll(string(data), cfg.ClusterNamespace, "<rook-ns>")
		st[key] = strings.ReplaceAll(s, cfg.OperatorNamespace, "<rook-ns>")
	}
	var disks cephv1alpha1.DiskList
	if err := c.List(ctx, &disks); err != nil {
		return nil, err
	}
	for _, d := range disks.Items {
		s := d.Status
		s.LastSeenTime = nil
		put("Disk/"+d.Name, map[string]any{"status": s, "configMap": d.Labels[cephv1alpha1.DiscoveryConfigMapLabel]})
	}
	var pools cephv1alpha1.DiskPoolList
	if err := c.List(ctx, &pools); err != nil {
		return nil, err
	}
	for _, p := range pools.Items {
		s := p.Status
		s.Conditions = timeless(s.Conditions)
		put("DiskPool/"+p.Name, s)
	}
	for _, kind := range consumerKinds {
		consumers, err := kind.List(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, o := range consumers {
			s := *o.StorageStatus()
			s.Conditions = timeless(s.Conditions)
			put(kind.Kind()+"/"+o.GetName(), s)
		}
	}
	cluster := newCephClusterObject()
	if err := c.Get(ctx, client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: CephClusterName}, cluster); err != nil {
		return nil, err
	}
	storage, _, _ := unstructured.NestedFieldCopy(cluster.Object, "spec", "storage")
	put("CephCluster", map[string]any{"storage": storage, "managed": cluster.GetAnnotations()[cephv1alpha1.ManagedDevicesAnnotation]})
	for _, kind := range []string{"CephBlockPool", "CephFilesystem", "CephObjectStore"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind(kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(cfg.ClusterNamespace)); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			put(kind+"/"+o.GetName(), map[string]any{"spec": o.Object["spec"], "labels": o.GetLabels(), "owners": owners(&o)})
		}
	}
	var classes storagev1.StorageClassList
	if err := c.List(ctx, &classes); err != nil {
		return nil, err
	}
	for _, sc := range classes.Items {
		if sc.Labels[cephv1alpha1.ManagedByLabel] != cephv1alpha1.ManagedByValue {
			continue
		}
		put("StorageClass/"+sc.Name, map[string]any{
			"provisioner": sc.Provisioner, "parameters": sc.Parameters, "reclaimPolicy": sc.ReclaimPolicy,
			"volumeBindingMode": sc.VolumeBindingMode, "allowVolumeExpansion": sc.AllowVolumeExpansion,
			"annotations": sc.Annotations, "labels": sc.Labels, "owners": owners(&sc),
		})
	}
	return st, nil
}

func timeless(conds []metav1.Condition) []metav1.Condition {
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		c.LastTransitionTime = metav1.Time{}
		out[i] = c
	}
	return out
}

func owners(o metav1.Object) []string {
	var out []string
	for _, ref := range o.GetOwnerReferences() {
		out = append(out, fmt.Sprintf("%s/%s controller=%v", ref.Kind, ref.Name, ref.Controller != nil && *ref.Controller))
	}
	return out
}

// diff lists how got differs from want, one line per object.
func (want clusterState) diff(got clusterState) string {
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var lines []string
	for _, k := range sortedKeys(keys) {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			lines = append(lines, "missing "+k)
		case !inWant:
			lines = append(lines, "unexpected "+k+": "+g)
		case w != g:
			lines = append(lines, fmt.Sprintf("%s:\n  want %s\n  got  %s", k, w, g))
		}
	}
	return strings.Join(lines, "\n")
}

// settled reports whether the state is complete: every Disk published and
// every pool and consumer with a status for its generation.
func (st clusterState) settled(sc relScenario) error {
	var disks, pools, consumers int
	for k, v := range st {
		switch {
		case strings.HasPrefix(k, "Disk/"):
			disks++
		case strings.HasPrefix(k, "DiskPool/"):
			if !strings.Contains(v, `"observedGeneration":1`) {
				return fmt.Errorf("%s has no status yet", k)
			}
			pools++
		case strings.HasPrefix(k, "BlockStorage/"), strings.HasPrefix(k, "FileStorage/"), strings.HasPrefix(k, "ObjectStorage/"):
			if !strings.Contains(v, `"observedGeneration":1`) {
				return fmt.Errorf("%s has no status yet", k)
			}
			consumers++
		}
	}
	if disks != sc.disks || pools != len(sc.pools) || consumers != len(sc.consumers()) {
		return fmt.Errorf("%d/%d Disks, %d/%d pools, %d/%d consumers", disks, sc.disks, pools, len(sc.pools), consumers, len(sc.consumers()))
	}
	return nil
}

// waitConverged waits until the state is settled and stays the same for a
// few seconds, and returns it.
func waitConverged(t *testing.T, ctx context.Context, c client.Client, cfg Config, sc relScenario, timeout time.Duration) clusterState {
	t.Helper()
	var last clusterState
	stableSince := time.Time{}
	err := testenv.Eventually(ctx, timeout, func(ctx context.Context) error {
		st, err := observeState(ctx, c, cfg)
		if err != nil {
			return err
		}
		if err := st.settled(sc); err != nil {
			last, stableSince = nil, time.Time{}
			return err
		}
		if last == nil || last.diff(st) != "" {
			last, stableSince = st, time.Now()
			return errors.New("still changing")
		}
		if time.Since(stableSince) < 3*time.Second {
			return errors.New("not yet stable for 3s")
		}
		return nil
	})
	require.NoError(t, err, "the plugin converges")
	return last
}

// waitState waits until the observed state is want, and fails with the
// difference.
func waitState(t *testing.T, ctx context.Context, c client.Client, cfg Config, want clusterState, timeout time.Duration) {
	t.Helper()
	err := testenv.Eventually(ctx, timeout, func(ctx context.Context) error {
		got, err := observeState(ctx, c, cfg)
		if err != nil {
			return err
		}
		if d := want.diff(got); d != "" {
			return errors.New(d)
		}
		return nil
	})
	require.NoError(t, err, "the state an uninterrupted run reaches")
}

// referenceStates caches, per scenario, the state an uninterrupted run
// converges to: the reconcilers on the package's control plane with no fault.
var referenceStates sync.Map

func referenceState(t *testing.T, name string, sc relScenario) clusterState {
	t.Helper()
	if st, ok := referenceStates.Load(name); ok {
		return st.(clusterState)
	}
	var st clusterState
	t.Run("uninterrupted reference run", func(t *testing.T) {
		h := newHarness(t)
		h.start()
		require.NoError(t, sc.publish(h.ctx, h.c, h.cfg.OperatorNamespace))
		require.NoError(t, sc.request(h.ctx, h.c, h.cfg.ClusterNamespace, time.Minute))
		st = waitConverged(t, h.ctx, h.c, h.cfg, sc, 2*time.Minute)
	})
	require.NotNil(t, st, "the reference run converged")
	referenceStates.Store(name, st)
	return st
}

// nothingLost watches, for the length of a test, for what must never
// happen: a Disk deleted; a claimed device leaving the CephCluster once it
// was there (every revision of the CephCluster is seen), unless a
// DiskRetirement's removal Job succeeded for it (or it carried no OSD: the
// one exception); a CephFilesystem or
// CephObjectStore of ours without preserve*OnDelete; a foreign object
// changed.
type nothingLost struct {
	t                *testing.T
	c                client.WithWatch
	clusterName      string
	clusterNamespace string

	mu        sync.Mutex
	protected map[DeviceID]bool
	seen      map[DeviceID]bool
	revisions int
	// fewestListed is the fewest devices any CephCluster revision listed
	// (-1 before the first): every revision, not samples of them.
	fewestListed int
	preserves    int
	replayed     int64
	replaying    atomic.Int32
	violations   []string
	foreign      map[string]string // kind/namespace/name → resourceVersion
	// ready closes when a watch has listed; a kind that does not exist yet
	// (the chart installs Rook's CRDs) is listed as soon as it does, before
	// the plugin can write any of it.
	ready []chan struct{}

	cancel context.CancelFunc
	done   sync.WaitGroup
}

// watchNothingLost starts the watches; stop ends them and reports.
func watchNothingLost(t *testing.T, cfg *rest.Config, clusterNamespace string) *nothingLost {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: controlPlane.Env(t).Scheme})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	n := &nothingLost{
		t: t, c: c, clusterName: CephClusterName, clusterNamespace: clusterNamespace,
		protected: map[DeviceID]bool{}, seen: map[DeviceID]bool{}, foreign: map[string]string{}, cancel: cancel,
		fewestListed: -1,
	}
	watches := []struct {
		kind      string
		namespace string
		onEvent   func(watch.Event, *unstructured.Unstructured)
	}{
		{"Disk", "", n.onDisk},
		{"CephCluster", clusterNamespace, n.onCluster},
		{"CephFilesystem", clusterNamespace, n.onPreserving("preserveFilesystemOnDelete")},
		{"CephObjectStore", clusterNamespace, n.onPreserving("preservePoolsOnDelete")},
	}
	for _, w := range watches {
		gvk := cephv1.SchemeGroupVersion.WithKind(w.kind)
		if w.kind == "Disk" {
			gvk = cephv1alpha1.GroupVersion.WithKind(w.kind)
		}
		ready := make(chan struct{})
		n.ready = append(n.ready, ready)
		n.done.Add(1)
		go func() {
			defer n.done.Done()
			n.follow(ctx, gvk, w.namespace, ready, w.onEvent)
		}()
	}
	t.Cleanup(n.stop)
	return n
}

// waitWatching waits until every watch runs (their kinds exist).
func (n *nothingLost) waitWatching() {
	n.t.Helper()
	for _, ready := range n.ready {
		select {
		case <-ready:
		case <-time.After(2 * time.Minute):
			n.t.Fatal("the nothing-lost watches did not start")
		}
	}
}

// follow lists once, then watches every change from that revision on.
// When the watch breaks (an API server outage) and cannot resume — a
// restarted API server's watch cache starts at the present — the revisions
// in between are read back from etcd one by one (a list at each exact
// revision), so none is skipped; only a compacted history would hide some,
// and that is a violation too.
func (n *nothingLost) follow(ctx context.Context, gvk schema.GroupVersionKind, namespace string, ready chan<- struct{}, on func(watch.Event, *unstructured.Unstructured)) {
	newList := func() *unstructured.UnstructuredList {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		return list
	}
	// current lists until it succeeds.
	current := func() *unstructured.UnstructuredList {
		for {
			list := newList()
			err := n.c.List(ctx, list, client.InNamespace(namespace))
			if err == nil && list.GetResourceVersion() != "" {
				return list
			}
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return nil
			}
		}
	}
	list := current()
	if list == nil {
		return
	}
	for i := range list.Items {
		on(watch.Event{Type: watch.Added}, &list.Items[i])
	}
	rv := list.GetResourceVersion()
	close(ready)
	for ctx.Err() == nil {
		expired := false
		w, err := n.c.Watch(ctx, newList(), client.InNamespace(namespace), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		switch {
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			expired = true
		case err != nil:
			sleepCtx(ctx, 200*time.Millisecond)
			continue
		default:
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					if status, ok := ev.Object.(*metav1.Status); ok && status.Code == http.StatusGone {
						expired = true
					}
					break
				}
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = obj.GetResourceVersion()
				if ev.Type != watch.Bookmark {
					on(ev, obj)
				}
			}
			w.Stop()
		}
		if !expired {
			continue
		}
		now := current()
		if now == nil {
			return
		}
		n.replaying.Add(1)
		err = n.replay(ctx, newList, namespace, rv, now.GetResourceVersion(), on)
		n.replaying.Add(-1)
		if err != nil {
			n.violate("the %s history from revision %s could not be read back: %v", gvk.Kind, rv, err)
			return
		}
		rv = now.GetResourceVersion()
	}
}

// replay feeds on every change between two revisions (after from, up to
// to), read from lists at each exact revision.
func (n *nothingLost) replay(ctx context.Context, newList func() *unstructured.UnstructuredList, namespace, from, to string, on func(watch.Event, *unstructured.Unstructured)) error {
	first, err := strconv.ParseInt(from, 10, 64)
	if err != nil {
		return err
	}
	last, err := strconv.ParseInt(to, 10, 64)
	if err != nil {
		return err
	}
	at := func(rev int64) (map[string]*unstructured.Unstructured, error) {
		list := newList()
		err := n.c.List(ctx, list, client.InNamespace(namespace), &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: strconv.FormatInt(rev, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		}})
		if err != nil {
			return nil, err
		}
		out := map[string]*unstructured.Unstructured{}
		for i := range list.Items {
			out[list.Items[i].GetNamespace()+"/"+list.Items[i].GetName()] = &list.Items[i]
		}
		return out, nil
	}
	prev, err := at(first)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.replayed += last - first
	n.mu.Unlock()
	for rev := first + 1; rev <= last; rev++ {
		cur, err := at(rev)
		if err != nil {
			return err
		}
		for key, obj := range cur {
			if obj.GetResourceVersion() != strconv.FormatInt(rev, 10) {
				continue
			}
			if _, existed := prev[key]; existed {
				on(watch.Event{Type: watch.Modified}, obj)
			} else {
				on(watch.Event{Type: watch.Added}, obj)
			}
		}
		for key, obj := range prev {
			if _, still := cur[key]; !still {
				on(watch.Event{Type: watch.Deleted}, obj)
			}
		}
		prev = cur
	}
	return nil
}

func (n *nothingLost) violate(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.violations = append(n.violations, fmt.Sprintf(format, args...))
}

func (n *nothingLost) onDisk(ev watch.Event, obj *unstructured.Unstructured) {
	if ev.Type == watch.Deleted {
		n.violate("Disk %s was deleted", obj.GetName())
	}
}

func (n *nothingLost) onCluster(ev watch.Event, obj *unstructured.Unstructured) {
	if obj.GetName() != n.clusterName {
		return
	}
	if ev.Type == watch.Deleted {
		n.violate("the CephCluster was deleted")
		return
	}
	cc := &cephv1.CephCluster{}
	present := map[DeviceID]bool{}
	if err := convertUnstructured(obj, cc); err == nil {
		present = ClusterDevices(cc)
	}
	n.mu.Lock()
	n.revisions++
	if n.fewestListed < 0 || len(present) < n.fewestListed {
		n.fewestListed = len(present)
	}
	var dropped []DeviceID
	for id := range n.protected {
		if present[id] {
			n.seen[id] = true
		} else if n.seen[id] {
			dropped = append(dropped, id)
			delete(n.seen, id) // report each drop once
		}
	}
	n.mu.Unlock()
	for _, id := range dropped {
		if !n.retired(id) {
			n.violate("CephCluster revision %s dropped %s|%s while a live pool claims it", obj.GetResourceVersion(), id.Node, id.Device)
		}
	}
}

// retired says whether a DiskRetirement took the device out: Ceph purged
// its OSD, or it found no OSD on the device.
func (n *nothingLost) retired(id DeviceID) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var list cephv1alpha1.DiskRetirementList
	if err := n.c.List(ctx, &list); err != nil {
		return false
	}
	for _, r := range list.Items {
		s := r.Status
		if s.Node != id.Node || s.Device != id.Device {
			continue
		}
		if s.Purged || s.OSDID == nil && (s.Phase == cephv1alpha1.RetirementWiping || s.Phase == cephv1alpha1.RetirementRetired) {
			return true
		}
	}
	return false
}

func (n *nothingLost) onPreserving(field string) func(watch.Event, *unstructured.Unstructured) {
	return func(ev watch.Event, obj *unstructured.Unstructured) {
		if ev.Type == watch.Deleted || !ownedByConsumer(obj) {
			return
		}
		n.mu.Lock()
		n.preserves++
		n.mu.Unlock()
		if v, _, _ := unstructured.NestedBool(obj.Object, "spec", field); !v {
			n.violate("%s %s revision %s has %s=false", obj.GetKind(), obj.GetName(), obj.GetResourceVersion(), field)
		}
	}
}

func ownedByConsumer(o metav1.Object) bool {
	for _, ref := range o.GetOwnerReferences() {
		if strings.HasPrefix(ref.APIVersion, cephv1alpha1.GroupVersion.Group+"/") && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

// protect adds devices that must stay in the CephCluster from the moment
// they appear; release takes them out again before a pool gives them up.
func (n *nothingLost) protect(ids ...DeviceID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		n.protected[id] = true
	}
}

func (n *nothingLost) release(ids ...DeviceID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		delete(n.protected, id)
		delete(n.seen, id)
	}
}

// keepForeign records objects the plugin must never modify.
func (n *nothingLost) keepForeign(objs ...client.Object) {
	for _, o := range objs {
		n.foreign[foreignKey(o)] = o.GetResourceVersion()
	}
}

func foreignKey(o client.Object) string {
	return fmt.Sprintf("%T|%s|%s", o, o.GetNamespace(), o.GetName())
}

func (n *nothingLost) stop() {
	if n.cancel != nil {
		n.cancel()
		n.done.Wait()
		n.cancel = nil
	}
}

// check stops the watches and fails the test for every violation; the
// revisions seen are logged (and must be more than none).
func (n *nothingLost) check(ctx context.Context, objs ...client.Object) {
	n.t.Helper()
	for _, o := range objs {
		want := n.foreign[foreignKey(o)]
		fresh := o.DeepCopyObject().(client.Object)
		if err := n.c.Get(ctx, client.ObjectKeyFromObject(o), fresh); err != nil {
			n.violate("foreign %s: %v", foreignKey(o), err)
		} else if fresh.GetResourceVersion() != want {
			n.violate("foreign %s was modified (resourceVersion %s → %s)", foreignKey(o), want, fresh.GetResourceVersion())
		}
	}
	for _, ready := range n.ready {
		select {
		case <-ready:
		default:
			n.violate("a watch never started: its revisions were not seen")
		}
	}
	// History being read back after an outage is part of what is checked.
	if err := testenv.Eventually(ctx, 5*time.Minute, func(context.Context) error {
		if n := n.replaying.Load(); n > 0 {
			return fmt.Errorf("%d watches still reading back history", n)
		}
		return nil
	}); err != nil {
		n.violate("%v", err)
	}
	n.stop()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.t.Logf("nothing lost: %d CephCluster revisions and %d revisions of preserving Rook objects watched (%d etcd revisions read back after outages), %d devices protected, %d violations",
		n.revisions, n.preserves, n.replayed, len(n.protected), len(n.violations))
	require.Positive(n.t, n.revisions, "the CephCluster watch saw revisions")
	require.Empty(n.t, n.violations, "nothing lost")
}

func convertUnstructured(obj *unstructured.Unstructured, into any) error {
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// noDuplicateDisks fails when two Disks describe the same device: the same
// kernel device with the same identity on one node. (Two kernel devices
// sharing one by-id link, a disk seen through two paths, are two Disks by
// design: discovery cannot tell which path Ceph should take.)
func noDuplicateDisks(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	var disks cephv1alpha1.DiskList
	require.NoError(t, c.List(ctx, &disks))
	seen := map[string]string{}
	for _, d := range disks.Items {
		id := d.Status.NodeName + "|" + d.Status.Path + "|" + d.Status.StablePath
		if other, dup := seen[id]; dup {
			t.Errorf("Disks %s and %s both describe %s", other, d.Name, id)
		}
		seen[id] = d.Name
	}
}

// stopAPIServer takes the kube-apiserver of cp down at once, as a crash
// would: SIGKILL to that one process (a child of this test process, found by
// its port), then envtest's Stop to reap it. A graceful stop drains the
// plugin's watches for up to 20 s first, which is a slow, polite outage.
// etcd keeps running with all data. The certificates are kept so that the
// clients made before, the plugin's included, trust it again after
// startAPIServer.
func stopAPIServer(t *testing.T, cp *testenv.Env) {
	t.Helper()
	apiServer := cp.Environment.ControlPlane.APIServer
	kept := t.TempDir()
	require.NoError(t, os.CopyFS(kept, os.DirFS(apiServer.CertDir)))
	u, err := url.Parse(cp.Config.Host)
	require.NoError(t, err)
	pid := childProcess(t, "kube-apiserver", "--secure-port="+u.Port())
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.NoError(t, apiServer.Stop())
	apiServer.CertDir = kept
}

// childProcess is the pid of this process's child running binary with arg.
func childProcess(t *testing.T, binary, arg string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 0 && filepath.Base(args[0]) == binary && slices.Contains(args, arg) {
			return pid
		}
	}
	t.Fatalf("no child %s with %s", binary, arg)
	return 0
}

func startAPIServer(t *testing.T, cp *testenv.Env) {
	t.Helper()
	require.NoError(t, cp.Environment.ControlPlane.APIServer.Start())
}

// freeAddr is a free 127.0.0.1 port.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// pluginStatusAt asks a plugin's metadata API for its phase.
func pluginStatusAt(ctx context.Context, addr string) (string, string, error) {
	c := pluginmetadatav1connect.NewPluginMetadataServiceClient(http.DefaultClient, "http://"+addr)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err := c.GetStatus(ctx, connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}))
	if err != nil {
		return "", "", err
	}
	return res.Msg.GetPhase(), res.Msg.GetMessage(), nil
}

var (
	pluginBinaryOnce sync.Once
	pluginBinaryPath string
	pluginBinaryErr  error
)

// pluginBinary builds the plugin (the repository root's main package) once
// per test process.
func pluginBinary(t *testing.T) string {
	t.Helper()
	pluginBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ceph-rook-bin-")
		if err != nil {
			pluginBinaryErr = err
			return
		}
		pluginBinaryPath = filepath.Join(dir, "ceph-rook")
		pluginBinaryErr = pluginproc.Build(context.Background(), testenv.RepoRoot(), pluginBinaryPath)
	})
	require.NoError(t, pluginBinaryErr)
	return pluginBinaryPath
}

// startPluginProcess runs the binary with the platform's variables and
// extra FUNP_ settings, logging to logFile; it is killed when the test ends.
func startPluginProcess(t *testing.T, binary string, cp *testenv.Env, repo *chartrepo.Server, logFile io.Writer, extra ...string) *pluginproc.Process {
	t.Helper()
	p, err := pluginproc.Start(pluginproc.Options{
		Binary:     binary,
		Addr:       freeAddr(t),
		Kubeconfig: cp.Kubeconfig,
		ID:         "reliability",
		Env:        append([]string{"FUNP_CHART_REPOSITORY=" + repo.URL, "FUNP_DEV_INSECURE_CHART_REPOSITORY=true", "FUNP_CHART_DIGEST=" + repo.Digest, "FUNP_ALLOW_MULTIPLE_PER_NODE=true"}, extra...),
		Output:     logFile,
	})
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	return p
}

// lockedBuffer collects a log shared by a process or logger and the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail is the end of a log, for a failure message.
func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// sortedDeviceIDs is for stable messages.
func sortedDeviceIDs(ids []DeviceID) []DeviceID {
	out := append([]DeviceID(nil), ids...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Device < out[j].Device
	})
	return out
}
