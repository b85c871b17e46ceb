package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// object is one of our kinds written as raw JSON, so a test can send values
// the Go types would drop (a zero that omitempty removes).
func object(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cephv1alpha1.GroupVersion.String(),
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
	}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func createObject(t *testing.T, obj client.Object) error {
	t.Helper()
	env := controlPlane.Env(t)
	err := env.Client.Create(context.Background(), obj, strict)
	if err == nil {
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	return err
}

func TestInvalidSpecsAreRejectedNamingTheField(t *testing.T) {
	cases := []struct {
		name      string
		obj       *unstructured.Unstructured
		wantField string
		wantText  string
	}{
		{name: "BlockStorage replicas 0", obj: object("BlockStorage", "bad-bs-0", map[string]any{"replicas": 0}), wantField: "spec.replicas", wantText: "greater than or equal to 1"},
		{name: "BlockStorage replicas 4", obj: object("BlockStorage", "bad-bs-4", map[string]any{"replicas": 4}), wantField: "spec.replicas", wantText: "replicas must be at most 3: the plugin keeps min(3, nodes) copies"},
		{name: "FileStorage replicas 0", obj: object("FileStorage", "bad-fs-0", map[string]any{"replicas": 0}), wantField: "spec.replicas", wantText: "greater than or equal to 1"},
		{name: "FileStorage replicas 4", obj: object("FileStorage", "bad-fs-4", map[string]any{"replicas": 4}), wantField: "spec.replicas", wantText: "replicas must be at most 3: the plugin keeps min(3, nodes) copies"},
		{name: "ObjectStorage replicas 0", obj: object("ObjectStorage", "bad-os-0", map[string]any{"replicas": 0}), wantField: "spec.replicas", wantText: "greater than or equal to 1"},
		{name: "ObjectStorage replicas 4", obj: object("ObjectStorage", "bad-os-4", map[string]any{"replicas": 4}), wantField: "spec.replicas", wantText: "replicas must be at most 3: the plugin keeps min(3, nodes) copies"},
		{name: "FileStorage metadataServers 0", obj: object("FileStorage", "bad-mds", map[string]any{"metadataServers": 0}), wantField: "spec.metadataServers", wantText: "greater than or equal to 1"},
		{name: "FileStorage metadataServers 51", obj: object("FileStorage", "bad-mds-51", map[string]any{"metadataServers": 51}), wantField: "spec.metadataServers", wantText: "at most 50: Rook's CephFilesystem allows"},
		{name: "ObjectStorage gatewayInstances 21", obj: object("ObjectStorage", "bad-gw-21", map[string]any{"gatewayInstances": 21}), wantField: "spec.gatewayInstances", wantText: "at most 20: each is an RGW pod"},
		{name: "ObjectStorage gatewayInstances at int32's maximum", obj: object("ObjectStorage", "bad-gw-max", map[string]any{"gatewayInstances": 2147483647}), wantField: "spec.gatewayInstances", wantText: "at most 20"},
		{name: "ObjectStorage gatewayInstances 0", obj: object("ObjectStorage", "bad-gw", map[string]any{"gatewayInstances": 0}), wantField: "spec.gatewayInstances", wantText: "greater than or equal to 1"},
		{name: "BlockStorage default that is not a boolean", obj: object("BlockStorage", "bad-default", map[string]any{"default": "yes"}), wantField: "spec.default", wantText: "boolean"},
		{name: "DiskPool listing a disk twice", obj: object("DiskPool", "bad-dup", map[string]any{"disks": []any{"d1", "d2", "d1"}}), wantField: "spec.disks[2]", wantText: "Duplicate value"},
		{name: "a field our kinds do not have", obj: object("BlockStorage", "bad-field", map[string]any{"replica": 2}), wantField: "spec.replica", wantText: "unknown field"},
		// N7, N13: Disk names are DNS-1123 labels (DiskName); anything else,
		// a bidi override or a zero-width space included, is refused
		// before the plugin echoes it into a status or an Event.
		{name: "DiskPool listing a name no Disk can have", obj: object("DiskPool", "bad-name", map[string]any{"disks": []any{"node-a-\u202eabc"}}), wantField: "spec.disks[0]", wantText: "should match"},
		{name: "DiskPool listing a name longer than a Disk's", obj: object("DiskPool", "bad-long", map[string]any{"disks": []any{strings.Repeat("a", 64)}}), wantField: "spec.disks[0]", wantText: "may not be more than 63"},
		{name: "DiskPool listing more disks than the plugin is measured at", obj: object("DiskPool", "bad-many", map[string]any{"disks": manyDiskNames(10001)}), wantField: "spec.disks", wantText: "must have at most 10000 items"},
		{name: "DiskRetirement of a name no Disk can have", obj: object("DiskRetirement", "bad-ret", map[string]any{"disk": "node-a\u200b-sdb"}), wantField: "spec.disk", wantText: "should match"},
		{name: "DiskRetirement of a replacement no Disk can be", obj: object("DiskRetirement", "bad-repl", map[string]any{"disk": "node-a-sdb", "replacement": "Node-A-SDC"}), wantField: "spec.replacement", wantText: "should match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := createObject(t, tc.obj)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantField)
			assert.Contains(t, err.Error(), tc.wantText)
		})
	}
}

// manyDiskNames are n distinct Disk names.
func manyDiskNames(n int) []any {
	names := make([]any, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	return names
}

func TestNameCapsKeepDerivedNamesLegal(t *testing.T) {
	cases := []struct {
		kind      string
		max       int
		wantField string
	}{
		{kind: "Disk", max: 253, wantField: "metadata.name"},
		{kind: "DiskPool", max: 253, wantField: "metadata.name"},
		{kind: "BlockStorage", max: 248, wantField: "metadata.name must be at most 248 characters"},
		{kind: "FileStorage", max: 53, wantField: "metadata.name must be at most 53 characters"},
		{kind: "ObjectStorage", max: 30, wantField: "metadata.name must be at most 30 characters"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("a %s name of %d characters is accepted", tc.kind, tc.max), func(t *testing.T) {
			require.NoError(t, createObject(t, object(tc.kind, strings.Repeat("a", tc.max), nil)))
		})
		t.Run(fmt.Sprintf("a %s name of %d characters is rejected", tc.kind, tc.max+1), func(t *testing.T) {
			err := createObject(t, object(tc.kind, strings.Repeat("b", tc.max+1), nil))
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err), err.Error())
			assert.Contains(t, err.Error(), tc.wantField)
		})
	}
	for _, kind := range []string{"FileStorage", "ObjectStorage"} {
		t.Run(kind+" names with dots are rejected", func(t *testing.T) {
			err := createObject(t, object(kind, "with.dot", nil))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "without dots")
		})
	}
}

func TestCountsDefaultToOne(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "default-mds"}}
	require.NoError(t, createObject(t, fs))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(fs), fs))
	assert.Equal(t, int32(1), fs.Spec.MetadataServers)
	assert.Nil(t, fs.Spec.Replicas, "absent replicas stays absent: it means automatic sizing")

	store := &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "default-gw"}}
	require.NoError(t, createObject(t, store))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(store), store))
	assert.Equal(t, int32(1), store.Spec.GatewayInstances)
}

func TestDiskStatusIsValidated(t *testing.T) {
	ctx := context.Background()
	d := &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: "status-enum"}}
	require.NoError(t, createObject(t, d))
	d.Status.Type = "tape"
	err := controlPlane.Env(t).Client.Status().Update(ctx, d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "status.type")
}

// statusCase is one kind: a fresh object, a status to write through the
// status subresource, and an edit of the main resource that also tries to
// change status.
type statusCase struct {
	kind      string
	obj       client.Object
	setStatus func(client.Object)
	edit      func(client.Object)
	status    func(client.Object) any
	spec      func(client.Object) any
}

func TestStatusCannotBeChangedThroughTheMainResource(t *testing.T) {
	env := controlPlane.Env(t)
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	storageStatus := func(phase cephv1alpha1.StoragePhase) cephv1alpha1.StorageStatus {
		return cephv1alpha1.StorageStatus{Phase: phase, StorageClassName: "ceph-x", Replicas: 2, FailureDomain: "host", ObservedGeneration: 1,
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: now}}}
	}
	size := resource.MustParse("100Gi")
	cases := []statusCase{
		{
			kind: "Disk", obj: &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: "status-disk"}},
			setStatus: func(o client.Object) {
				o.(*cephv1alpha1.Disk).Status = cephv1alpha1.DiskStatus{NodeName: "n1", Path: "/dev/sdb", Size: &size, State: cephv1alpha1.DiskAvailable, Available: true}
			},
			edit: func(o client.Object) {
				d := o.(*cephv1alpha1.Disk)
				d.Labels = map[string]string{"edited": "true"}
				d.Status.ClaimedBy, d.Status.State = "thief", cephv1alpha1.DiskInUse
			},
			status: func(o client.Object) any { return o.(*cephv1alpha1.Disk).Status.State },
			spec:   func(o client.Object) any { return o.GetLabels()["edited"] },
		},
		{
			kind: "DiskPool", obj: &cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: "status-pool"}, Spec: cephv1alpha1.DiskPoolSpec{Disks: []string{"a"}}},
			setStatus: func(o client.Object) {
				o.(*cephv1alpha1.DiskPool).Status = cephv1alpha1.DiskPoolStatus{Phase: cephv1alpha1.DiskPoolReady, SelectedDiskCount: 1, RawCapacity: &size}
			},
			edit: func(o client.Object) {
				p := o.(*cephv1alpha1.DiskPool)
				p.Spec.Disks = []string{"a", "b"}
				p.Status.Phase, p.Status.SelectedDiskCount = cephv1alpha1.DiskPoolDegraded, 0
			},
			status: func(o client.Object) any { return o.(*cephv1alpha1.DiskPool).Status.Phase },
			spec:   func(o client.Object) any { return len(o.(*cephv1alpha1.DiskPool).Spec.Disks) },
		},
		{
			kind: "BlockStorage", obj: &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "status-bs"}},
			setStatus: func(o client.Object) {
				o.(*cephv1alpha1.BlockStorage).Status = storageStatus(cephv1alpha1.StorageReady)
			},
			edit: func(o client.Object) {
				b := o.(*cephv1alpha1.BlockStorage)
				b.Spec.Default = true
				b.Status.Phase = cephv1alpha1.StorageDegraded
			},
			status: func(o client.Object) any { return o.(*cephv1alpha1.BlockStorage).Status.Phase },
			spec:   func(o client.Object) any { return o.(*cephv1alpha1.BlockStorage).Spec.Default },
		},
		{
			kind: "FileStorage", obj: &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "status-fs"}},
			setStatus: func(o client.Object) { o.(*cephv1alpha1.FileStorage).Status = storageStatus(cephv1alpha1.StorageReady) },
			edit: func(o client.Object) {
				f := o.(*cephv1alpha1.FileStorage)
				f.Spec.MetadataServers = 2
				f.Status.Phase = cephv1alpha1.StorageDegraded
			},
			status: func(o client.Object) any { return o.(*cephv1alpha1.FileStorage).Status.Phase },
			spec:   func(o client.Object) any { return o.(*cephv1alpha1.FileStorage).Spec.MetadataServers },
		},
		{
			kind: "ObjectStorage", obj: &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "status-os"}},
			setStatus: func(o client.Object) {
				o.(*cephv1alpha1.ObjectStorage).Status = storageStatus(cephv1alpha1.StorageReady)
			},
			edit: func(o client.Object) {
				s := o.(*cephv1alpha1.ObjectStorage)
				s.Spec.GatewayInstances = 3
				s.Status.Phase = cephv1alpha1.StorageDegraded
			},
			status: func(o client.Object) any { return o.(*cephv1alpha1.ObjectStorage).Status.Phase },
			spec:   func(o client.Object) any { return o.(*cephv1alpha1.ObjectStorage).Spec.GatewayInstances },
		},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			ctx := context.Background()
			obj := tc.obj
			tc.setStatus(obj)
			statusAtCreate := tc.status(obj)
			require.NoError(t, createObject(t, obj))
			key := client.ObjectKeyFromObject(obj)

			require.NoError(t, env.Client.Get(ctx, key, obj))
			assert.Empty(t, tc.status(obj), "status sent with create is dropped")

			tc.setStatus(obj)
			require.NoError(t, env.Client.Status().Update(ctx, obj))
			require.NoError(t, env.Client.Get(ctx, key, obj))
			require.Equal(t, statusAtCreate, tc.status(obj), "the status subresource writes status")
			specBefore := tc.spec(obj)

			tc.edit(obj)
			require.NoError(t, env.Client.Update(ctx, obj, strict))
			require.NoError(t, env.Client.Get(ctx, key, obj))
			assert.Equal(t, statusAtCreate, tc.status(obj), "an update of the main resource leaves status as it was")
			assert.NotEqual(t, specBefore, tc.spec(obj), "the same update did change the main resource")
		})
	}
}

func TestKubectlGetShowsUsefulColumnsAndFindsEveryKindByCategory(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(controlPlane.Env(t).Config)
	require.NoError(t, err)
	list, err := dc.ServerResourcesForGroupVersion(cephv1alpha1.GroupVersion.String())
	require.NoError(t, err)

	want := map[string]struct {
		shortName string
		columns   []string
	}{
		"disks":          {"dsk", []string{"Name", "Node", "Path", "Size", "Type", "State", "Claimed By", "Reason", "OSD Class", "Stable Path", "Age"}},
		"diskpools":      {"dp", []string{"Name", "Phase", "Disks", "Raw Capacity", "Message", "Age"}},
		"blockstorages":  {"bs", []string{"Name", "Phase", "Storage Class", "Replicas", "Failure Domain", "Class", "Usable", "Default", "Message", "Age"}},
		"filestorages":   {"fs", []string{"Name", "Phase", "Storage Class", "Replicas", "Failure Domain", "Class", "Usable", "MDS", "Message", "Age"}},
		"objectstorages": {"os", []string{"Name", "Phase", "Storage Class", "Replicas", "Failure Domain", "Class", "Usable", "Gateways", "Message", "Age"}},
	}
	found := map[string]bool{}
	for _, r := range list.APIResources {
		w, ours := want[r.Name]
		if !ours {
			continue
		}
		found[r.Name] = true
		t.Run(r.Name, func(t *testing.T) {
			assert.False(t, r.Namespaced, "cluster-scoped")
			assert.Contains(t, r.Categories, "ceph-storage", "kubectl get ceph-storage lists it")
			assert.Equal(t, []string{w.shortName}, r.ShortNames)
			assert.Equal(t, w.columns, tableColumns(t, r.Name))
		})
	}
	assert.Len(t, found, len(want))
}

// TestKubectlGetPrintsSizesAsPeopleReadThem: the Size and Raw Capacity
// columns show displaySize and displayRawCapacity, not the exact
// quantities ("3907018584Ki").
func TestKubectlGetPrintsSizesAsPeopleReadThem(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	size := resource.MustParse("3907018584Ki")
	disk := &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: "printed-size"}}
	require.NoError(t, env.Client.Create(ctx, disk))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), disk) })
	disk.Status = cephv1alpha1.DiskStatus{Size: &size, DisplaySize: "3.6 TiB"}
	require.NoError(t, env.Client.Status().Update(ctx, disk))
	pool := &cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: "printed-capacity"}, Spec: cephv1alpha1.DiskPoolSpec{Disks: []string{"printed-size"}}}
	require.NoError(t, env.Client.Create(ctx, pool))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pool) })
	pool.Status = cephv1alpha1.DiskPoolStatus{RawCapacity: &size, DisplayRawCapacity: "3.6 TiB"}
	require.NoError(t, env.Client.Status().Update(ctx, pool))

	assert.Equal(t, "3.6 TiB", tableCell(t, "disks", "printed-size", "Size"))
	assert.Equal(t, "3.6 TiB", tableCell(t, "diskpools", "printed-capacity", "Raw Capacity"))
}

// tableCell is one cell of the Table kubectl get renders for one object.
func tableCell(t *testing.T, plural, name, column string) any {
	t.Helper()
	table := serverTable(t, plural+"/"+name)
	for i, c := range table.ColumnDefinitions {
		if c.Name == column {
			require.Len(t, table.Rows, 1)
			return table.Rows[0].Cells[i]
		}
	}
	t.Fatalf("%s has no column %q", plural, column)
	return nil
}

// tableColumns asks the API server for the Table kubectl get renders. A
// just-installed CRD may answer 404 or 429 until its storage is ready, so
// it polls briefly.
func tableColumns(t *testing.T, plural string) []string {
	t.Helper()
	var names []string
	for _, c := range serverTable(t, plural).ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

// serverTable is the Table the API server renders for path (a plural, or
// plural/name) of our group.
func serverTable(t *testing.T, path string) metav1.Table {
	t.Helper()
	env := controlPlane.Env(t)
	httpClient, err := rest.HTTPClientFor(env.Config)
	require.NoError(t, err)
	url, err := neturl.JoinPath(env.Config.Host, env.Config.APIPath, "apis", cephv1alpha1.GroupVersion.Group, cephv1alpha1.GroupVersion.Version, path)
	require.NoError(t, err)
	var table metav1.Table
	err = testenv.Eventually(context.Background(), 30*time.Second, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return json.Unmarshal(body, &table)
	})
	require.NoError(t, err)
	return table
}
