package simulate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Discovery plays Rook's discovery daemon for simulated nodes: one
// ConfigMap per node in the operator namespace, as Rook names and labels
// it, rewritten when a device comes or goes and deleted when its node goes.
type Discovery struct {
	Client    client.Client
	Namespace string

	mu    sync.Mutex
	nodes map[string][]Device
	// next is each node's next device index: indexes only grow, so a new
	// device never takes a removed one's identity.
	next map[string]int
}

// ConfigMapName is Rook's name for a node's discovery ConfigMap: the node
// name is replaced by a hash when the name would exceed 63 characters.
func ConfigMapName(node string) string {
	const prefix = "local-device-"
	if len(prefix)+len(node) > 63 {
		sum := sha256.Sum256([]byte(node))
		return prefix + hex.EncodeToString(sum[:])[:32]
	}
	return prefix + node
}

// Nodes lists the simulated nodes and their devices.
func (d *Discovery) Nodes() map[string][]Device {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string][]Device, len(d.nodes))
	for n, devs := range d.nodes {
		out[n] = append([]Device(nil), devs...)
	}
	return out
}

// SetNode publishes (or replaces) a node's devices.
func (d *Discovery) SetNode(ctx context.Context, node string, devices []Device) error {
	d.mu.Lock()
	if d.nodes == nil {
		d.nodes, d.next = map[string][]Device{}, map[string]int{}
	}
	d.nodes[node] = append([]Device(nil), devices...)
	d.next[node] = max(d.next[node], len(devices))
	d.mu.Unlock()
	return d.publish(ctx, node, devices)
}

// RemoveNode deletes a node's ConfigMap, as the DaemonSet's garbage does
// when a node leaves, and the node's Node.
func (d *Discovery) RemoveNode(ctx context.Context, node string) error {
	d.mu.Lock()
	delete(d.nodes, node)
	d.mu.Unlock()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(node), Namespace: d.Namespace}}
	if err := client.IgnoreNotFound(d.Client.Delete(ctx, cm)); err != nil {
		return err
	}
	return client.IgnoreNotFound(d.Client.Delete(ctx, Node(node)))
}

// Node is a simulated node's Node object, as its kubelet registers it.
func Node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{SimulatedLabel: "true"},
	}}
}

// EnsureNode registers a simulated node's Node unless it exists: Rook's
// discovery daemon runs only on Nodes, and the plugin publishes only the
// reports of nodes that are.
func EnsureNode(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, Node(name))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// AddDevice adds a device of kind k to a node and republishes it.
func (d *Discovery) AddDevice(ctx context.Context, node string, k Kind) (Device, error) {
	d.mu.Lock()
	devices, ok := d.nodes[node]
	if !ok {
		d.mu.Unlock()
		return Device{}, fmt.Errorf("no simulated node %q", node)
	}
	dev := NewDevice(node, d.next[node], k)
	d.next[node]++
	devices = append(devices, dev)
	d.nodes[node] = devices
	d.mu.Unlock()
	return dev, d.publish(ctx, node, devices)
}

// RemoveDevice pulls a device (by kernel name) from a node.
func (d *Discovery) RemoveDevice(ctx context.Context, node, kernelName string) error {
	d.mu.Lock()
	devices := d.nodes[node]
	kept := devices[:0:0]
	for _, dev := range devices {
		if dev.Name != kernelName {
			kept = append(kept, dev)
		}
	}
	if len(kept) == len(devices) {
		d.mu.Unlock()
		return fmt.Errorf("node %q has no device %q", node, kernelName)
	}
	d.nodes[node] = kept
	d.mu.Unlock()
	return d.publish(ctx, node, kept)
}

func (d *Discovery) publish(ctx context.Context, node string, devices []Device) error {
	data, err := DevicesJSON(devices)
	if err != nil {
		return err
	}
	if err := EnsureNode(ctx, d.Client, node); err != nil {
		return err
	}
	want := ConfigMap(d.Namespace, node, data)
	var have corev1.ConfigMap
	err = d.Client.Get(ctx, client.ObjectKeyFromObject(want), &have)
	switch {
	case apierrors.IsNotFound(err):
		return d.Client.Create(ctx, want)
	case err != nil:
		return err
	}
	if have.Data["devices"] == data {
		return nil
	}
	have.Data = want.Data
	return d.Client.Update(ctx, &have)
}

// ConfigMap is a node's discovery ConfigMap as Rook writes it, marked as
// simulated.
func ConfigMap(namespace, node, devicesJSON string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ConfigMapName(node),
			Namespace: namespace,
			Labels:    map[string]string{"app": "rook-discover", "rook.io/node": node, SimulatedLabel: "true"},
		},
		Data: map[string]string{"devices": devicesJSON},
	}
}
