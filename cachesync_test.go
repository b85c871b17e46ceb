package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// The informers the controllers start, seen as the watches the manager
// opens, are exactly the kinds Start waits for: a controller watching a
// kind the list lacks would be reconciling from a cache Start never waited
// for. Every controller has reconciled once before the comparison, and a
// controller reconciles only after all of its watches synced.
func TestWatchedKindsAreTheInformersTheControllersStart(t *testing.T) {
	h := newHarness(t)
	h.cfg.DevLoopDevices = true // the loop-device controller runs too
	requests := newCollectionRequests()
	h.startWith(h.host, requests.wrap)

	h.withPooledNodes("watched", 1) // the inventory and the pools
	two := int32(2)
	consumers := []consumerObject{
		&cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "watched-block"}},
		&cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "watched-file"}, Spec: cephv1alpha1.FileStorageSpec{Replicas: &two, MetadataServers: 1}},
		&cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "watched-object"}, Spec: cephv1alpha1.ObjectStorageSpec{GatewayInstances: 1}},
	}
	for _, obj := range consumers {
		h.createConsumer(obj)
	}
	for _, obj := range consumers {
		h.eventually(obj.GetName()+" has a status", func() error {
			status, err := h.statusOf(obj)
			if err != nil || status.ObservedGeneration == 0 {
				return fmt.Errorf("no status yet (%v)", err)
			}
			return nil
		})
	}
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.cfg.OperatorNamespace, Name: RookOperatorConfigMap}}
	require.NoError(t, h.c.Create(h.ctx, config))
	require.NoError(t, h.c.Create(h.ctx, discoverDaemonSet(h.cfg.OperatorNamespace)))
	h.eventually("the loop-device controller touched Rook's config", func() error {
		if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(config), config); err != nil {
			return err
		}
		if config.Annotations[cephv1alpha1.ReconcileForLoopDevicesAnnotation] == "" {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	h.eventually("the health controller reported the CephCluster", func() error {
		if h.host.last() == (pluginruntime.PluginStatus{}) {
			return fmt.Errorf("no status yet")
		}
		return nil
	})

	// And, started once the snapshot CRD serves v1 (this control plane has
	// it), the VolumeSnapshotClasses.
	want := append(resourcesOf(t, watchedKinds(h.cfg)), "volumesnapshotclasses.snapshot.storage.k8s.io")
	slices.Sort(want)
	assert.Equal(t, want, requests.watched())
}

// statusOf is a consumer's status, read again.
func (h *harness) statusOf(obj consumerObject) (cephv1alpha1.StorageStatus, error) {
	if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return cephv1alpha1.StorageStatus{}, err
	}
	return *obj.StorageStatus(), nil
}

// A kind the plugin may not list (RBAC that grants get but not list and
// watch on StorageClasses) can never sync: Start does not report ready,
// says while it waits that it waits for the caches, and within its bound
// returns a transient error naming that kind alone.
func TestStartNamesTheCacheThatNeverSyncsAndStaysUnready(t *testing.T) {
	restCfg := impersonating(t, denyListing("storage.k8s.io", "storageclasses"))
	host := &recordingHost{}
	sp := startOnEnv(t, restCfg, host, func(p *Plugin) { p.cacheSyncTimeout = 5 * time.Second })

	err := sp.wait(t, time.Minute)

	require.Error(t, err)
	assert.True(t, pluginerrors.IsTransient(err), "the runtime retries: %v", err)
	assert.Contains(t, err.Error(), "the caches of StorageClass did not sync within 5s")
	assert.False(t, host.isReady(), "never ready")
	assert.Contains(t, host.statuses, pluginruntime.PluginStatus{
		Phase: pluginruntime.PhaseInstalling, Message: "waiting for the caches of the watched kinds to sync (at most 5s)",
	})
}

// When the manager fails while Start waits for the caches, the wait ends
// at once and the manager's error is Start's: here its metrics server
// cannot listen, and a cache that never syncs keeps the wait going so that
// only the manager's failure can end it within the test's bound.
func TestStartReturnsTheManagersErrorWhileWaitingForCaches(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = taken.Close() })
	restCfg := impersonating(t, denyListing("storage.k8s.io", "storageclasses"))
	host := &recordingHost{}
	sp := startOnEnv(t, restCfg, host, func(p *Plugin) {
		p.metricsAddr = taken.Addr().String()
		p.cacheSyncTimeout = time.Hour
	})

	err = sp.wait(t, time.Minute)

	require.Error(t, err)
	assert.True(t, pluginerrors.IsTransient(err), "the runtime retries: %v", err)
	assert.Contains(t, err.Error(), "manager: ")
	assert.Contains(t, err.Error(), "metrics server")
	assert.False(t, host.isReady(), "never ready")
}

// ReportReady comes only after every watched kind's informer has had its
// answer from the API server. StorageClass requests are held back until
// ReportReady (or for 5 s), so that a Start reporting ready before that
// informer synced is caught every time, not only when it loses a race.
func TestStartReportsReadyOnlyAfterEveryCacheSynced(t *testing.T) {
	requests := newCollectionRequests()
	readyCalled := make(chan struct{})
	requests.hold = func(r *http.Request, resource string) {
		if resource != "storageclasses.storage.k8s.io" {
			return
		}
		select {
		case <-readyCalled:
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}
	restCfg := configAsPlugin(t, controlPlane.Env(t))
	restCfg.Wrap(requests.wrap)
	var answeredAtReady []string
	host := &readyHook{recordingHost: &recordingHost{}, onReady: func() {
		answeredAtReady = requests.answered()
		close(readyCalled)
	}}
	sp := startOnEnv(t, restCfg, host, nil)
	cfg := sp.cfg

	err := testenv.Eventually(context.Background(), time.Minute, func(context.Context) error {
		if !host.isReady() {
			return fmt.Errorf("not ready: %+v", host.last())
		}
		return nil
	})
	require.NoError(t, err)
	sp.cancel()
	require.NoError(t, sp.wait(t, time.Minute))

	for _, resource := range resourcesOf(t, watchedKinds(cfg)) {
		assert.Contains(t, answeredAtReady, resource, "ReportReady before the %s cache synced", resource)
	}
}

// readyHook runs onReady once, when the plugin reports ready.
type readyHook struct {
	*recordingHost
	once    sync.Once
	onReady func()
}

func (r *readyHook) ReportReady() {
	r.once.Do(r.onReady)
	r.recordingHost.ReportReady()
}

func (r *recordingHost) isReady() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready
}

// noChart installs nothing: the package's API server has Rook's CRDs, and
// these tests are about what Start does after the install.
type noChart struct{}

func (noChart) EnsureRelease(context.Context, chartRelease) error { return nil }

// runningStart is one run of Plugin.Start on the package's API server.
type runningStart struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan error
}

// startOnEnv runs Start through restCfg in a namespace of its own, with
// tune (if any) applied to the plugin first. The run is stopped when the
// test ends.
func startOnEnv(t *testing.T, restCfg *rest.Config, host pluginruntime.Host, tune func(*Plugin)) *runningStart {
	t.Helper()
	namespace := fmt.Sprintf("cache-sync-%d", harnessSeq.Add(1))
	getenv := func(key string) string {
		if key == EnvOperatorNamespace {
			return namespace
		}
		return ""
	}
	cfg, err := LoadConfig(getenv)
	require.NoError(t, err)
	p := &Plugin{
		definition: definition.MustParseDefinition(definitionYAML),
		getenv:     getenv,
		restConfig: func() (*rest.Config, error) { return rest.CopyConfig(restCfg), nil },
		installer:  noChart{},
	}
	if tune != nil {
		tune(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sp := &runningStart{cfg: cfg, cancel: cancel, done: make(chan error, 1)}
	go func() { sp.done <- p.Start(ctx, host) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-sp.done:
		case <-time.After(time.Minute):
			t.Error("Start did not return after its context ended")
		}
	})
	return sp
}

// wait is what Start returned, failing the test when it does not return
// within timeout.
func (sp *runningStart) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-sp.done:
		sp.done <- err // for the cleanup
		return err
	case <-time.After(timeout):
		t.Fatalf("Start did not return within %s", timeout)
		return nil
	}
}

// denyListing is a ClusterRole for everything the plugin does, except that
// resource of group may be read one at a time and written, but not listed
// or watched.
func denyListing(group, resource string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			APIGroups: []string{"", "apps", "coordination.k8s.io", "apiextensions.k8s.io", "ceph.rook.io", "ceph.fundament.io", "events.k8s.io", "objectbucket.io", "admissionregistration.k8s.io", "authentication.k8s.io"},
			Resources: []string{"*"},
			Verbs:     []string{"*"},
		},
		{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{"get", "create", "update", "patch", "delete"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}
}

// impersonating is the package's API server as a user of its own, bound
// to a ClusterRole with rules: the API server's own RBAC decides.
func impersonating(t *testing.T, rules []rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	name := fmt.Sprintf("cache-sync-user-%d", harnessSeq.Add(1))
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
	}
	for _, obj := range []client.Object{role, binding} {
		require.NoError(t, env.Client.Create(ctx, obj))
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	return cfg
}

// resourcesOf is the sorted group/resource of each kind on the package's
// API server, as collectionRequests names them.
func resourcesOf(t *testing.T, kinds []client.Object) []string {
	t.Helper()
	env := controlPlane.Env(t)
	var out []string
	for _, obj := range kinds {
		gvk, err := apiutil.GVKForObject(obj, env.Scheme)
		require.NoError(t, err)
		mapping, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		require.NoError(t, err)
		out = append(out, mapping.Resource.GroupResource().String())
	}
	slices.Sort(out)
	return out
}

// collectionRequests records the requests for whole collections (lists
// and watches, which is what informers make) that pass through it, by
// group/resource; hold, when set, runs before such a request is sent.
type collectionRequests struct {
	hold func(r *http.Request, resource string)

	mu             sync.Mutex
	watches, found map[string]bool
}

func newCollectionRequests() *collectionRequests {
	return &collectionRequests{watches: map[string]bool{}, found: map[string]bool{}}
}

func (c *collectionRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resource := collectionOf(r)
		if resource == "" {
			return rt.RoundTrip(r)
		}
		if watch := r.URL.Query().Get("watch"); watch == "true" || watch == "1" {
			c.record(c.watches, resource)
		}
		if c.hold != nil {
			c.hold(r, resource)
		}
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusOK {
			// Headers are in, the body not yet read: this comes before the
			// informer can have synced.
			c.record(c.found, resource)
		}
		return resp, err
	})
}

func (c *collectionRequests) record(set map[string]bool, resource string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	set[resource] = true
}

// watched is every resource watched so far, sorted.
func (c *collectionRequests) watched() []string { return c.sorted(c.watches) }

// answered is every resource a list or watch was answered for, sorted.
func (c *collectionRequests) answered() []string { return c.sorted(c.found) }

func (c *collectionRequests) sorted(set map[string]bool) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for resource := range set {
		out = append(out, resource)
	}
	slices.Sort(out)
	return out
}

// collectionOf is the group/resource ("storageclasses.storage.k8s.io",
// "configmaps") a GET of a whole collection is for, or "" for any other
// request.
func collectionOf(r *http.Request) string {
	if r.Method != http.MethodGet {
		return ""
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) > 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) > 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return ""
	}
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) != 1 {
		return ""
	}
	return schema.GroupResource{Group: group, Resource: parts[0]}.String()
}
