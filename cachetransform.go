package main

import (
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// What the cache keeps of an object: its informer's transform. At 10,000
// Disks the cached objects are most of the plugin's live heap, and the
// peak heap (a restart's, as the caches fill) follows the live one. Much of what
// they hold repeats: the twenty Disks of a node carry the same labels, node
// name, model and state, and every device of the CephCluster carries one of
// three class configs. The transforms keep one copy of each repeated value.
//
// Sharing is safe because the plugin never writes into a cached object:
// reads without a copy (UnsafeDisableDeepCopy, informerStore) only read, and
// every write starts from a deep copy or a new object.

// stripManagedFields is every kind's transform: nothing reads managedFields,
// and at 10,000 Disks they would be a large share of the cache.
var stripManagedFields = cache.TransformStripManagedFields()

// storedDisk is the Disk informer's transform: managed fields stripped,
// the labels map shared with every Disk carrying the same labels, and the
// status strings that repeat across Disks interned.
func storedDisk(in *interner) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := stripManagedFields(obj)
		disk, ok := obj.(*cephv1alpha1.Disk)
		if err != nil || !ok {
			return obj, err
		}
		disk.Labels = in.labelSet(disk.Labels)
		disk.APIVersion, disk.Kind = in.string(disk.APIVersion), in.string(disk.Kind)
		s := &disk.Status
		// Name, serial, WWN and stable path are the disk's own; these are
		// shared by a node's disks, by a model, or by every disk.
		for _, field := range []*string{&s.NodeName, &s.Path, &s.DisplaySize, &s.Model, &s.Filesystem, &s.ClaimedBy, &s.Reason} {
			*field = in.string(*field)
		}
		s.Type = cephv1alpha1.DiskType(in.string(string(s.Type)))
		s.State = cephv1alpha1.DiskState(in.string(string(s.State)))
		return disk, nil
	}
}

// storedOSDDeployment is the transform of the OSD Deployment informer,
// which only the inventory reads (a Disk's OSD, osdclass.go): of a
// Deployment, what rook.ParseOSDDeployment reads and nothing else (its
// name, labels and replicas, and of its "osd" container the name, the
// image and the variables Rook's getOSDInfo reads), a few hundred bytes instead of the
// tens of kilobytes of a whole pod template, one per disk. Everything
// else reads OSD Deployments from the API server.
func storedOSDDeployment(obj any) (any, error) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return obj, nil
	}
	kept := &appsv1.Deployment{
		TypeMeta: d.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, UID: d.UID, ResourceVersion: d.ResourceVersion,
			Generation: d.Generation, Labels: d.Labels, DeletionTimestamp: d.DeletionTimestamp},
		Spec:   appsv1.DeploymentSpec{Replicas: d.Spec.Replicas},
		Status: appsv1.DeploymentStatus{Replicas: d.Status.Replicas},
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != rook.OSDContainer {
			continue
		}
		osd := corev1.Container{Name: c.Name, Image: c.Image}
		for _, env := range c.Env {
			if osdFactVariables[env.Name] {
				osd.Env = append(osd.Env, corev1.EnvVar{Name: env.Name, Value: env.Value})
			}
		}
		kept.Spec.Template.Spec.Containers = []corev1.Container{osd}
	}
	return kept, nil
}

// osdFactVariables are the OSD container's variables
// rook.ParseOSDDeployment reads.
var osdFactVariables = map[string]bool{
	rook.EnvNodeName: true, rook.EnvOSDUUID: true, rook.EnvBlockPath: true, rook.EnvLVPath: true,
	rook.EnvPVCBacked: true, rook.EnvOSDDeviceClass: true,
}

// storedCephCluster is the CephCluster informer's transform: managed
// fields stripped, and every listed device's config that holds nothing but
// a known class replaced by the shared classOnlyConfigs map (one map per
// class instead of one per device: at 10,000 devices, about 3.5 MB). Any
// other config is left as it is.
func storedCephCluster(obj any) (any, error) {
	obj, err := stripManagedFields(obj)
	cluster, ok := obj.(*unstructured.Unstructured)
	if err != nil || !ok {
		return obj, err
	}
	nodes, _ := storageNodesOf(cluster) // not a list: nothing to share
	eachListedDevice(nodes, func(_ DeviceID, device map[string]any) {
		config, _ := device["config"].(map[string]any)
		if len(config) != 1 {
			return
		}
		class, _ := config[DeviceClassConfigKey].(string)
		if shared, ok := classOnlyConfigs[class]; ok {
			device["config"] = shared
		}
	})
	return cluster, nil
}

// maxInterned bounds each table of an interner. A Disk's repeated values
// number about one per node (its name, its labels) and a few per model,
// pool and state; a table that grows past twice the nodes of the largest
// cluster Kubernetes supports (5,000) starts over rather than keep the
// values of nodes long gone. Starting over loses no value, only sharing.
const maxInterned = 10_000

// interner hands out one copy of each equal string and one map of each
// equal label set it was given, each the first it was given. Its tables
// hold them strongly: a weak table (Go's unique) forgets a value at the
// next collection while the cache still holds copies of it.
type interner struct {
	mu     sync.Mutex
	limit  int
	values map[string]string
	labels map[string]map[string]string
}

func newInterner() *interner {
	return &interner{limit: maxInterned}
}

// string is the copy of s handed out first.
func (in *interner) string(s string) string {
	if s == "" {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return keep(&in.values, in.limit, s, s)
}

// labelSet is the map handed out first with labels' content. Its content is
// never changed.
func (in *interner) labelSet(labels map[string]string) map[string]string {
	if len(labels) == 0 {
		return labels
	}
	key := labelSetKey(labels)
	in.mu.Lock()
	defer in.mu.Unlock()
	return keep(&in.labels, in.limit, key, labels)
}

// keep is what table holds for key, or else value, remembered for key in
// a table that starts over when it is missing or holds limit entries.
func keep[V any](table *map[string]V, limit int, key string, value V) V {
	if kept, ok := (*table)[key]; ok {
		return kept
	}
	if *table == nil || len(*table) >= limit {
		*table = map[string]V{}
	}
	(*table)[key] = value
	return value
}

// labelSetKey identifies a label set by its sorted keys and values (a
// label key or value holds no NUL, so the separator cannot be forged).
func labelSetKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}
