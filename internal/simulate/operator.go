package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Operator plays the Rook operator's visible side: after Delay, every
// CephBlockPool, CephFilesystem and CephObjectStore in the cluster
// namespace reports phase Ready, and the CephCluster reports Ready,
// HEALTH_OK and a capacity summed from the devices it lists. It writes only
// status (and the SimulatedLabel), and only when something changed.
type Operator struct {
	Client    client.Client
	Namespace string
	// Delay is how long a new object stays unready, as a real one would.
	Delay time.Duration
	// DeviceSize returns the size of a device the CephCluster lists on a node
	// (by its name there), for the capacity; 0 when unknown.
	DeviceSize func(node, device string) uint64
	// Interval is how often the simulation looks (default 1s).
	Interval time.Duration
	// OSDs, when set, also plays Rook's OSDs: their Deployments and the
	// removal Jobs a DiskRetirement runs.
	OSDs *OSDs
}

var derivedKinds = []string{"CephBlockPool", "CephFilesystem", "CephObjectStore"}

// Run marks objects Ready until ctx ends.
func (o *Operator) Run(ctx context.Context) error {
	interval := o.Interval
	if interval == 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		if err := o.Step(ctx, time.Now()); err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Step does one pass at time now.
func (o *Operator) Step(ctx context.Context, now time.Time) error {
	for _, kind := range derivedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: kind + "List"})
		if err := o.Client.List(ctx, list, client.InNamespace(o.Namespace)); err != nil {
			return fmt.Errorf("list %s: %w", kind, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if now.Sub(obj.GetCreationTimestamp().Time) < o.Delay || !obj.GetDeletionTimestamp().IsZero() {
				continue
			}
			if err := o.setStatus(ctx, obj, map[string]any{"phase": "Ready"}); err != nil {
				return err
			}
		}
	}
	if err := o.stepCluster(ctx, now); err != nil {
		return err
	}
	if o.OSDs != nil {
		return o.OSDs.Step(ctx)
	}
	return nil
}

func (o *Operator) stepCluster(ctx context.Context, now time.Time) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephClusterList"})
	if err := o.Client.List(ctx, list, client.InNamespace(o.Namespace)); err != nil {
		return fmt.Errorf("list CephCluster: %w", err)
	}
	for i := range list.Items {
		cluster := &list.Items[i]
		total := o.capacity(cluster)
		used := total / 50 // a little metadata and a few volumes
		lastUpdated, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "capacity", "lastUpdated")
		prevTotal, _, _ := unstructured.NestedInt64(cluster.Object, "status", "ceph", "capacity", "bytesTotal")
		if prevTotal != int64(total) || lastUpdated == "" {
			lastUpdated = now.UTC().Format(time.RFC3339)
		}
		status := map[string]any{
			"phase":   "Ready",
			"state":   "Created",
			"message": "simulated: no Ceph daemons run in this local mode",
			"ceph": map[string]any{
				"health": "HEALTH_OK",
				"capacity": map[string]any{
					"bytesTotal":     int64(total),
					"bytesUsed":      int64(used),
					"bytesAvailable": int64(total - used),
					"lastUpdated":    lastUpdated,
				},
			},
		}
		if err := o.setStatus(ctx, cluster, status); err != nil {
			return err
		}
	}
	return nil
}

func (o *Operator) capacity(cluster *unstructured.Unstructured) uint64 {
	if o.DeviceSize == nil {
		return 0
	}
	var total uint64
	for _, d := range clusterDevices(cluster) {
		total += o.DeviceSize(d.Node, d.Device)
	}
	return total
}

// setStatus merges want into the object's status and labels it simulated,
// writing nothing when both are already so.
func (o *Operator) setStatus(ctx context.Context, obj *unstructured.Unstructured, want map[string]any) error {
	have, _, _ := unstructured.NestedMap(obj.Object, "status")
	if containsAll(have, want) && obj.GetLabels()[SimulatedLabel] == "true" {
		return nil
	}
	if obj.GetLabels()[SimulatedLabel] != "true" {
		labels := map[string]any{"metadata": map[string]any{"labels": map[string]any{SimulatedLabel: "true"}}}
		if err := o.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, mustJSON(labels))); err != nil {
			return fmt.Errorf("label %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	patch := client.RawPatch(types.MergePatchType, mustJSON(map[string]any{"status": want}))
	if err := o.Client.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// containsAll reports whether have already holds every value of want.
func containsAll(have, want map[string]any) bool {
	for k, w := range want {
		h, ok := have[k]
		if !ok {
			return false
		}
		if wm, isMap := w.(map[string]any); isMap {
			hm, _ := h.(map[string]any)
			if !containsAll(hm, wm) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(normalize(h), normalize(w)) {
			return false
		}
	}
	return true
}

// normalize makes JSON numbers from the server comparable with Go ints.
func normalize(v any) any {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	case float64:
		return n
	}
	return v
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// DeviceSizes indexes simulated devices by node and by every name the
// CephCluster may list them under (stable by-id path or kernel path).
func DeviceSizes(nodes map[string][]Device) func(node, device string) uint64 {
	index := map[string]uint64{}
	for node, devices := range nodes {
		for _, d := range devices {
			index[node+"|/dev/"+d.Name] = d.Size
			for _, link := range strings.Fields(d.DevLinks) {
				index[node+"|"+link] = d.Size
			}
		}
	}
	return func(node, device string) uint64 { return index[node+"|"+device] }
}
