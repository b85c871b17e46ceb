package main

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// storedDiskJSON is disk i of node as the API server sends it in a watch
// event: with its managed fields, labels and a full status.
func storedDiskJSON(node, i int) []byte {
	id := node*20 + i
	return fmt.Appendf(nil, `{"apiVersion":"ceph.fundament.io/v1alpha1","kind":"Disk","metadata":{`+
		`"name":"node-%04d-wwn-0x5000c500a1b2%05d","uid":"0b7c2c3e-8f0e-4d7b-9a51-%012d","resourceVersion":"%d","generation":1,`+
		`"creationTimestamp":"2026-12-07T03:50:00Z","labels":{"ceph.fundament.io/discovery-configmap":"local-device-node-%04d","app.kubernetes.io/managed-by":"ceph-rook"},`+
		`"managedFields":[{"manager":"ceph-rook","operation":"Update","apiVersion":"ceph.fundament.io/v1alpha1","time":"2026-12-07T03:50:00Z","fieldsType":"FieldsV1",`+
		`"fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/managed-by":{},"f:ceph.fundament.io/discovery-configmap":{}}}}}]},`+
		`"status":{"nodeName":"node-%04d","path":"/dev/sd%c","stablePath":"/dev/disk/by-id/wwn-0x5000c500a1b2%05d","size":"4000787030016","displaySize":"3.6 TiB",`+
		`"type":"hdd","rotational":true,"model":"ST4000NM0035-1V4107","serial":"ZC1%05d","wwn":"0x5000c500a1b2%05d","available":true,"claimedBy":"pool-%d",`+
		`"state":"Available","lastSeenTime":"2026-12-07T03:50:00Z"}}`,
		node, id, id, 1000+id, node, node, 'a'+i, id, id, id, node%3)
}

// decodeDisk decodes a Disk with the scheme's codecs, as the informer does.
func decodeDisk(t testing.TB, raw []byte) *cephv1alpha1.Disk {
	t.Helper()
	scheme, err := newScheme()
	require.NoError(t, err)
	obj, _, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(raw, nil, &cephv1alpha1.Disk{})
	require.NoError(t, err)
	return obj.(*cephv1alpha1.Disk)
}

func sameString(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func sameMap[K comparable, V any](a, b map[K]V) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Two Disks of a node keep one labels map and one copy of each status
// string they repeat; what is each disk's own stays its own, and nothing
// but the managed fields is lost.
func TestStoredDiskSharesWhatRepeats(t *testing.T) {
	transform := storedDisk(newInterner())
	store := func(raw []byte) *cephv1alpha1.Disk {
		obj, err := transform(decodeDisk(t, raw))
		require.NoError(t, err)
		runtime.GC() // what is shared stays shared across collections
		return obj.(*cephv1alpha1.Disk)
	}
	a, b, other := store(storedDiskJSON(7, 0)), store(storedDiskJSON(7, 1)), store(storedDiskJSON(8, 0))

	want := decodeDisk(t, storedDiskJSON(7, 0))
	want.ManagedFields = nil
	assert.Equal(t, want, a, "the content is kept, managed fields stripped")
	assert.Empty(t, a.ManagedFields)

	assert.True(t, sameMap(a.Labels, b.Labels), "the node's Disks share one labels map")
	assert.False(t, sameMap(a.Labels, other.Labels), "another node's labels are its own")
	assert.Equal(t, "local-device-node-0008", other.Labels[cephv1alpha1.DiscoveryConfigMapLabel])
	for field, pair := range map[string][2]string{
		"nodeName": {a.Status.NodeName, b.Status.NodeName}, "model": {a.Status.Model, other.Status.Model},
		"displaySize": {a.Status.DisplaySize, other.Status.DisplaySize}, "type": {string(a.Status.Type), string(other.Status.Type)},
		"state": {string(a.Status.State), string(other.Status.State)}, "claimedBy": {a.Status.ClaimedBy, b.Status.ClaimedBy},
		"kind": {a.Kind, other.Kind}, "apiVersion": {a.APIVersion, other.APIVersion},
	} {
		assert.True(t, sameString(pair[0], pair[1]), "%s is interned", field)
	}
	assert.False(t, sameString(a.Status.Serial, b.Status.Serial))
}

// The interner's tables are bounded: past its limit a table starts over,
// and whatever it hands out still holds exactly what it was given.
func TestInternerStartsOverPastItsLimit(t *testing.T) {
	in := &interner{limit: 2}
	set := func(node string) map[string]string {
		return map[string]string{cephv1alpha1.DiscoveryConfigMapLabel: "local-device-" + node, cephv1alpha1.ManagedByLabel: cephv1alpha1.ManagedByValue}
	}
	a := in.labelSet(set("a"))
	assert.True(t, sameMap(a, in.labelSet(set("a"))))
	in.labelSet(set("b"))
	assert.Equal(t, set("c"), in.labelSet(set("c")), "the third set: the table starts over")
	assert.Len(t, in.labels, 1)
	again := in.labelSet(set("a"))
	assert.False(t, sameMap(a, again), "a forgotten set is remembered anew")
	assert.Equal(t, set("a"), again)
	assert.Nil(t, in.labelSet(nil))
	// Labels are told apart by key and value, not by their concatenation.
	assert.NotEqual(t, labelSetKey(map[string]string{"ab": "c"}), labelSetKey(map[string]string{"a": "bc"}))

	node := string([]byte("node-1")) // a copy of its own, as decoded
	first := in.string(node)
	assert.True(t, sameString(first, in.string(string([]byte("node-1")))))
	in.string("node-2")
	assert.Equal(t, "node-3", in.string("node-3"))
	assert.Len(t, in.values, 1)
	assert.False(t, sameString(first, in.string(string([]byte("node-1")))), "forgotten: a new copy")
	assert.Empty(t, in.string(""))
}

// The cache keeps one config map per class: a device whose config is only
// a known class shares it; any other config is left as decoded.
func TestStoredCephClusterSharesClassConfigs(t *testing.T) {
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "ceph", "managedFields": []any{map[string]any{"manager": "rook"}}},
		"spec": map[string]any{"storage": map[string]any{"nodes": nodesJSON(t,
			`[{"name":"a","devices":[{"name":"/dev/x","config":{"deviceClass":"ssd"}},{"name":"/dev/y","config":{"deviceClass":"ssd"}},`+
				`{"name":"/dev/z","config":{"deviceClass":"hdd","osdsPerDevice":"2"}},{"name":"/dev/w","config":{"deviceClass":"tape"}},{"name":"/dev/v"}]}]`)}},
	}}
	before := cluster.DeepCopy()
	unstructured.RemoveNestedField(before.Object, "metadata", "managedFields")
	obj, err := storedCephCluster(cluster)
	require.NoError(t, err)
	stored := obj.(*unstructured.Unstructured)
	assert.JSONEq(t, string(patch.MustJSON(before.Object)), string(patch.MustJSON(stored.Object)), "the content is kept, managed fields stripped")

	nodes, err := storageNodesOf(stored)
	require.NoError(t, err)
	devices := nodes[0].(map[string]any)["devices"].([]any)
	config := func(i int) map[string]any { return devices[i].(map[string]any)["config"].(map[string]any) }
	assert.True(t, sameMap(config(0), config(1)), "two ssd devices share one map")
	assert.True(t, sameMap(config(0), classOnlyConfigs["ssd"]))
	assert.False(t, sameMap(config(2), classOnlyConfigs["hdd"]), "a config with more than its class is its own")
	assert.Equal(t, "tape", config(3)[DeviceClassConfigKey], "an unknown class is left as decoded")
}

// BenchmarkCachedDisks measures what the cache holds per Disk (live heap
// after a collection, 10,000 Disks of 500 nodes) with managed fields
// stripped alone, the floor, and with storedDisk's sharing; the ratio is
// stored to stripped.
func BenchmarkCachedDisks(b *testing.B) {
	raw := make([][]byte, 0, 10_000)
	for node := range 500 {
		for i := range 20 {
			raw = append(raw, storedDiskJSON(node, i))
		}
	}
	var stripped, stored float64
	for b.Loop() {
		stripped = cachedBytesPerDisk(b, raw, stripManagedFields)
		stored = cachedBytesPerDisk(b, raw, storedDisk(newInterner()))
	}
	b.ReportMetric(stripped, "stripped-B/disk")
	b.ReportMetric(stored, "stored-B/disk")
	b.ReportMetric(stored/stripped, "ratio")
}

// cachedBytesPerDisk is the live heap that raw's Disks, decoded and
// transformed, hold per Disk.
func cachedBytesPerDisk(b *testing.B, raw [][]byte, transform func(any) (any, error)) float64 {
	scheme, err := newScheme()
	require.NoError(b, err)
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	kept := make([]any, 0, len(raw))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, r := range raw {
		decoded, _, err := decoder.Decode(r, nil, &cephv1alpha1.Disk{})
		require.NoError(b, err)
		obj, err := transform(decoded)
		require.NoError(b, err)
		kept = append(kept, obj)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(cap(kept))*16) / float64(len(raw))
}

// On the real API server, the plugin's cache holds what the transforms
// keep: a node's Disks share their labels map and node name, and every
// device of the CephCluster that carries only its class shares that
// class's config map.
func TestTheCacheKeepsOneCopyOfWhatRepeats(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withTieredNodes("shared")

	var disks cephv1alpha1.DiskList
	require.NoError(t, h.cache.List(h.ctx, &disks, client.UnsafeDisableDeepCopy))
	byNode := map[string][]*cephv1alpha1.Disk{}
	for i := range disks.Items {
		d := &disks.Items[i]
		byNode[d.Status.NodeName] = append(byNode[d.Status.NodeName], d)
	}
	require.Len(t, byNode["shared-1"], 2)
	a, b := byNode["shared-1"][0], byNode["shared-1"][1]
	assert.True(t, sameMap(a.Labels, b.Labels), "a node's Disks share one labels map in the cache")
	assert.True(t, sameString(a.Status.NodeName, b.Status.NodeName), "and one node name")
	assert.Empty(t, a.ManagedFields)

	h.eventually("the cached CephCluster shares its class configs", func() error {
		raw, err := (&ClusterView{Cache: h.cache, Cluster: types.NamespacedName{Namespace: h.cfg.ClusterNamespace, Name: CephClusterName}}).readCached(h.ctx)
		if err != nil {
			return err
		}
		nodes, err := storageNodesOf(raw)
		if err != nil {
			return err
		}
		shared := 0
		for _, n := range nodes {
			for _, d := range n.(map[string]any)["devices"].([]any) {
				config, _ := d.(map[string]any)["config"].(map[string]any)
				class, _ := config[DeviceClassConfigKey].(string)
				if !sameMap(config, classOnlyConfigs[class]) {
					return fmt.Errorf("device %v keeps a config of its own", d)
				}
				shared++
			}
		}
		if shared != 5 {
			return fmt.Errorf("%d devices listed, want 5", shared)
		}
		return nil
	})
}

// BenchmarkDiskTransform is the informer's work per Disk event: decoding
// it and transforming it, with managed fields stripped alone (the floor)
// and with storedDisk's sharing, over the Disks of 500 nodes in turn.
func BenchmarkDiskTransform(b *testing.B) {
	scheme, err := newScheme()
	require.NoError(b, err)
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	raw := make([][]byte, 0, 10_000)
	for node := range 500 {
		for i := range 20 {
			raw = append(raw, storedDiskJSON(node, i))
		}
	}
	for _, c := range []struct {
		name      string
		transform func(any) (any, error)
	}{{"stripped", stripManagedFields}, {"stored", storedDisk(newInterner())}} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				obj, _, err := decoder.Decode(raw[i%len(raw)], nil, &cephv1alpha1.Disk{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.transform(obj); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// The OSD Deployment cache keeps what rook.ParseOSDDeployment reads and
// nothing else: the parse of what is kept is the parse of the whole.
func TestStoredOSDDeploymentKeepsWhatAnOSDIsReadFrom(t *testing.T) {
	d := simulate.OSDDeployment("rook-ceph", 5, "node-a", "/dev/sdb")
	pod := &d.Spec.Template.Spec
	osd := &pod.Containers[0]
	osd.Env = append(osd.Env, corev1.EnvVar{Name: rook.EnvOSDDeviceClass, Value: "ssd"}, corev1.EnvVar{Name: "CEPH_ARGS", Value: strings.Repeat("-x ", 100)})
	osd.Args = []string{"--foreground", "--id", "5"}
	pod.InitContainers = []corev1.Container{{Name: "activate", Env: osd.Env}}
	pod.Containers = append([]corev1.Container{{Name: "log-collector", Env: []corev1.EnvVar{{Name: rook.EnvNodeName, Value: "elsewhere"}}}}, pod.Containers...)
	d.Status.Replicas = 1
	want, err := rook.ParseOSDDeployment(d)
	require.NoError(t, err)

	obj, err := storedOSDDeployment(d.DeepCopy())
	require.NoError(t, err)
	kept, ok := obj.(*appsv1.Deployment)
	require.True(t, ok)
	got, err := rook.ParseOSDDeployment(kept)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, "ssd", got.DeviceClass)
	require.Len(t, kept.Spec.Template.Spec.Containers, 1, "the osd container alone")
	assert.Empty(t, kept.Spec.Template.Spec.InitContainers)
	assert.Empty(t, kept.Spec.Template.Spec.Containers[0].Args)
	assert.Len(t, kept.Spec.Template.Spec.Containers[0].Env, 4, "node, UUID, block path, class; not CEPH_ARGS nor ROOK_OSD_ID")
	assert.Equal(t, d.Labels, kept.Labels)
	assert.Equal(t, "node-a", osdNodeOf(kept))
}
