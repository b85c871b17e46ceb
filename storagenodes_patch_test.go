package main

import (
	"context"
	"testing"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestStorageNodesPatch(t *testing.T) {
	const annotationPath = "/metadata/annotations/ceph.fundament.io~1managed-devices"
	twoNodes := `[{"name":"n1","devices":[{"name":"a"}]},{"name":"n2","devices":[{"name":"b","config":{"deviceClass":"ssd"}}]}]`
	rv := jsonPatchOp{Op: "replace", Path: "/metadata/resourceVersion", Value: "7"}
	cases := []struct {
		name        string
		storage     map[string]any
		annotations map[string]string
		plan        StorageNodesPlan
		want        []jsonPatchOp
	}{
		{
			name:        "a device joins a node: only that node's list",
			storage:     map[string]any{"nodes": nodesJSON(t, twoNodes)},
			annotations: map[string]string{cephv1alpha1.ManagedDevicesAnnotation: "v1:old"},
			plan:        StorageNodesPlan{Nodes: nodesJSON(t, `[{"name":"n1","devices":[{"name":"a"},{"name":"c"}]},{"name":"n2","devices":[{"name":"b","config":{"deviceClass":"ssd"}}]}]`), Managed: "v1:new"},
			want: []jsonPatchOp{rv,
				{Op: "add", Path: annotationPath, Value: "v1:new"},
				{Op: "add", Path: "/spec/storage/nodes/0/devices", Value: []any{map[string]any{"name": "a"}, map[string]any{"name": "c"}}},
			},
		},
		{
			name:        "the record is unchanged: no annotation operation",
			storage:     map[string]any{"nodes": nodesJSON(t, twoNodes)},
			annotations: map[string]string{cephv1alpha1.ManagedDevicesAnnotation: "v1:same"},
			plan:        StorageNodesPlan{Nodes: nodesJSON(t, `[{"name":"n1","devices":[]},{"name":"n2","devices":[{"name":"b","config":{"deviceClass":"ssd"}}]}]`), Managed: "v1:same"},
			want:        []jsonPatchOp{rv, {Op: "add", Path: "/spec/storage/nodes/0/devices", Value: []any{}}},
		},
		{
			name:    "a node comes: the whole list",
			storage: map[string]any{"nodes": nodesJSON(t, `[{"name":"n1","devices":[{"name":"a"}]}]`)},
			plan:    StorageNodesPlan{Nodes: nodesJSON(t, twoNodes), Managed: "v1:x"},
			want: []jsonPatchOp{rv,
				{Op: "add", Path: "/metadata/annotations", Value: map[string]string{cephv1alpha1.ManagedDevicesAnnotation: "v1:x"}},
				{Op: "add", Path: "/spec/storage/nodes", Value: nodesJSON(t, twoNodes)},
			},
		},
		{
			name:        "nodes in another order: the whole list",
			storage:     map[string]any{"nodes": nodesJSON(t, `[{"name":"n2","devices":[{"name":"b","config":{"deviceClass":"ssd"}}]},{"name":"n1","devices":[{"name":"a"}]}]`)},
			annotations: map[string]string{},
			plan:        StorageNodesPlan{Nodes: nodesJSON(t, twoNodes)},
			want:        []jsonPatchOp{rv, {Op: "add", Path: "/spec/storage/nodes", Value: nodesJSON(t, twoNodes)}},
		},
		{
			name:        "a node's own field differs: that node whole",
			storage:     map[string]any{"nodes": nodesJSON(t, `[{"name":"n1","devices":[{"name":"a"}],"config":{"osdsPerDevice":"2"}}]`)},
			annotations: map[string]string{cephv1alpha1.ManagedDevicesAnnotation: "v1:x"},
			plan:        StorageNodesPlan{Nodes: nodesJSON(t, `[{"name":"n1","devices":[{"name":"a"}]}]`), Managed: "v1:x"},
			want:        []jsonPatchOp{rv, {Op: "replace", Path: "/spec/storage/nodes/0", Value: map[string]any{"name": "n1", "devices": []any{map[string]any{"name": "a"}}}}},
		},
		{
			name:        "no nodes listed yet",
			storage:     map[string]any{"useAllNodes": false},
			annotations: map[string]string{"other": "kept"},
			plan:        StorageNodesPlan{Nodes: nodesJSON(t, twoNodes), Managed: "v1:x"},
			want: []jsonPatchOp{rv,
				{Op: "add", Path: annotationPath, Value: "v1:x"},
				{Op: "add", Path: "/spec/storage/nodes", Value: nodesJSON(t, twoNodes)},
			},
		},
		{
			name: "no spec.storage at all",
			plan: StorageNodesPlan{Nodes: nodesJSON(t, twoNodes)},
			want: []jsonPatchOp{rv, {Op: "add", Path: "/spec/storage", Value: map[string]any{"nodes": nodesJSON(t, twoNodes)}}},
		},
		{
			name:        "the plugin manages nothing any more: the record goes",
			storage:     map[string]any{"nodes": nodesJSON(t, `[{"name":"n1","devices":[{"name":"a"}]}]`)},
			annotations: map[string]string{cephv1alpha1.ManagedDevicesAnnotation: "v1:x"},
			plan:        StorageNodesPlan{Nodes: []any{}},
			want: []jsonPatchOp{rv,
				{Op: "remove", Path: annotationPath},
				{Op: "add", Path: "/spec/storage/nodes", Value: []any{}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, StorageNodesPatch("7", tc.storage, tc.annotations, tc.plan))
		})
	}
}

// TestStorageNodesPatchOnTheAPIServer applies the patch to a CephCluster
// on the real API server (Rook's CRD): the result is exactly the plan,
// whatever else is set stays, and a patch based on an old read is refused
// as a Conflict.
func TestStorageNodesPatchOnTheAPIServer(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	cfg := testConfigFor(t, "storage-nodes-patch")
	_, err := ensureCephCluster(ctx, env.Client, cfg, discardLog)
	require.NoError(t, err)
	key := types.NamespacedName{Namespace: cfg.ClusterNamespace, Name: CephClusterName}
	read := func() *unstructured.Unstructured {
		u := newCephClusterObject()
		require.NoError(t, env.Client.Get(ctx, key, u))
		return u
	}
	apply := func(cluster *unstructured.Unstructured, plan StorageNodesPlan) error {
		storage, _, _ := unstructured.NestedFieldNoCopy(cluster.Object, "spec", "storage")
		storageMap, _ := storage.(map[string]any)
		ops := StorageNodesPatch(cluster.GetResourceVersion(), storageMap, cluster.GetAnnotations(), plan)
		return env.Client.Patch(ctx, cluster.DeepCopy(), client.RawPatch(types.JSONPatchType, patch.MustJSON(ops)))
	}
	// Someone listed a device of their own, with its config.
	foreign := `[{"name":"n1","devices":[{"name":"/dev/sdz","config":{"deviceClass":"hdd"}}]}]`
	require.NoError(t, env.Client.Patch(ctx, read(), client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"storage":{"nodes":`+foreign+`}}}`))))

	steps := []struct {
		name string
		want []cephNodeDevices
	}{
		{"the pools add two devices", []cephNodeDevices{{"n1", "/dev/sda"}, {"n2", "/dev/sdb"}}},
		{"one more on a node already listed", []cephNodeDevices{{"n1", "/dev/sda"}, {"n1", "/dev/sdc"}, {"n2", "/dev/sdb"}}},
		{"one taken out", []cephNodeDevices{{"n1", "/dev/sdc"}, {"n2", "/dev/sdb"}}},
		{"all taken out", nil},
	}
	for _, step := range steps {
		cluster := read()
		current, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
		plan := PlanStorageNodes(current, cluster.GetAnnotations()[cephv1alpha1.ManagedDevicesAnnotation], wantFrom(step.want))
		require.NoError(t, apply(cluster, plan), step.name)
		after := read()
		nodes, _, _ := unstructured.NestedSlice(after.Object, "spec", "storage", "nodes")
		assert.JSONEq(t, string(patch.MustJSON(plan.Nodes)), string(patch.MustJSON(nodes)), step.name)
		assert.Equal(t, plan.Managed, after.GetAnnotations()[cephv1alpha1.ManagedDevicesAnnotation], step.name)
		useAllNodes, _, _ := unstructured.NestedBool(after.Object, "spec", "storage", "useAllNodes")
		assert.False(t, useAllNodes, "the rest of spec.storage stays")
	}
	final := read()
	nodes, _, _ := unstructured.NestedSlice(final.Object, "spec", "storage", "nodes")
	assert.JSONEq(t, foreign, string(patch.MustJSON(nodes)), "the foreign device and its config are all that is left")

	stale := read()
	require.NoError(t, env.Client.Patch(ctx, read(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"touched":"yes"}}}`))))
	plan := PlanStorageNodes(nil, "", wantFrom([]cephNodeDevices{{"n3", "/dev/sdd"}}))
	err = apply(stale, plan)
	assert.True(t, apierrors.IsConflict(err), "a patch based on an old read is a Conflict, got %v", err)
}

type cephNodeDevices struct{ node, device string }

func wantFrom(devices []cephNodeDevices) []cephv1.Node {
	var nodes []cephv1.Node
	for _, d := range devices {
		if len(nodes) == 0 || nodes[len(nodes)-1].Name != d.node {
			nodes = append(nodes, cephv1.Node{Name: d.node})
		}
		last := &nodes[len(nodes)-1]
		last.Devices = append(last.Devices, cephv1.Device{Name: d.device})
	}
	return nodes
}

func TestSameJSONValue(t *testing.T) {
	shared := map[string]any{"name": "a", "config": map[string]any{"deviceClass": "ssd"}}
	list := []any{shared}
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"the same map", shared, shared, true},
		{"the same list", list, list, true},
		{"equal copies", nodesJSON(t, `[{"name":"a","devices":[{"name":"x"}]}]`), nodesJSON(t, `[{"name":"a","devices":[{"name":"x"}]}]`), true},
		{"a device differs", nodesJSON(t, `[{"name":"a","devices":[{"name":"x"}]}]`), nodesJSON(t, `[{"name":"a","devices":[{"name":"y"}]}]`), false},
		{"a nested config differs", nodesJSON(t, `[{"name":"a","config":{"n":1}}]`), nodesJSON(t, `[{"name":"a","config":{"n":2}}]`), false},
		{"an extra key", map[string]any{"name": "a"}, map[string]any{"name": "a", "config": nil}, false},
		{"a key for another", map[string]any{"name": "a"}, map[string]any{"other": "a"}, false},
		{"lengths differ", []any{"a"}, []any{"a", "b"}, false},
		{"a list and a map", []any{}, map[string]any{}, false},
		{"numbers compare by type and value", int64(1), int64(1), true},
		{"int64 is not float64", int64(1), float64(1), false},
		{"no list is an empty list", nil, []any{}, true},
		{"a nil list is an empty list", []any(nil), []any{}, true},
		{"no list is not a list with entries", nil, []any{"a"}, false},
		{"nil is nil", nil, nil, true},
		{"nil is not a string", nil, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, sameJSONValue(tc.a, tc.b))
			assert.Equal(t, tc.want, sameJSONValue(tc.b, tc.a), "symmetric")
		})
	}
}
