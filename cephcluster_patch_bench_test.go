package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/fundament-oss/ceph-rook/internal/patch"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkCephClusterDevicePatch is the API server's share of a pool edit
// at full scale: one merge patch of a CephCluster listing 8,000 devices on
// 400 nodes (Rook's real CRD validates it), adding or removing one device.
func BenchmarkCephClusterDevicePatch(b *testing.B) {
	ctx := context.Background()
	cfg := testConfigFor(b, "bench-patch")
	_, err := ensureCephCluster(ctx, controlPlane.Env(b).Client, cfg, discardLog)
	if err != nil {
		b.Fatal(err)
	}
	nodes := make([]any, 0, 400)
	for n := range 400 {
		var devices []any
		for d := range 20 {
			devices = append(devices, map[string]any{"name": fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500%04d%04d", n, d)})
		}
		nodes = append(nodes, map[string]any{"name": fmt.Sprintf("node-%04d", n), "devices": devices})
	}
	key := types.NamespacedName{Namespace: cfg.ClusterNamespace, Name: CephClusterName}
	cluster := newCephClusterObject()
	cluster.SetNamespace(key.Namespace)
	cluster.SetName(key.Name)
	patchNodes := func(nodes []any) {
		data := patch.MustJSON(map[string]any{"spec": map[string]any{"storage": map[string]any{"nodes": nodes}}})
		if err := controlPlane.Env(b).Client.Patch(ctx, cluster, client.RawPatch(types.MergePatchType, data)); err != nil {
			b.Fatal(err)
		}
	}
	patchNodes(nodes)
	short := append([]any(nil), nodes...)
	short[0] = map[string]any{"name": "node-0000", "devices": nodes[0].(map[string]any)["devices"].([]any)[1:]}
	b.Run("merge patchNodes of the device list", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 {
				patchNodes(short)
			} else {
				patchNodes(nodes)
			}
		}
	})
	b.Run("json patchNodes of one node's device list (what the plugin sends)", func(b *testing.B) {
		toShort := StorageNodesPatch("", map[string]any{"nodes": nodes}, nil, StorageNodesPlan{Nodes: short})
		toFull := StorageNodesPatch("", map[string]any{"nodes": short}, nil, StorageNodesPlan{Nodes: nodes})
		for i := 0; b.Loop(); i++ {
			ops := toFull
			if i%2 == 0 {
				ops = toShort
			}
			ops[0].Value = cluster.GetResourceVersion() // the answer of the previous patch
			if err := controlPlane.Env(b).Client.Patch(ctx, cluster, client.RawPatch(types.JSONPatchType, patch.MustJSON(ops))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("merge patch of one annotation (object size alone)", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			data := patch.MustJSON(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"bench": fmt.Sprint(i)}}})
			if err := controlPlane.Env(b).Client.Patch(ctx, cluster, client.RawPatch(types.MergePatchType, data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func testConfigFor(b testing.TB, ns string) Config {
	cfg, err := LoadConfig(func(k string) string {
		if k == EnvClusterNamespace || k == EnvOperatorNamespace {
			return ns
		}
		return ""
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := createNamespaceIfMissing(context.Background(), controlPlane.Env(b).Client, ns); err != nil {
		b.Fatal(err)
	}
	return cfg
}
