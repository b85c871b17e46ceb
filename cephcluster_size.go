package main

import (
	"encoding/json"
	"fmt"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The CephCluster lists every pool device in one object, and the API
// server stores a custom resource as one JSON value in etcd, which refuses
// a request over its --max-request-bytes (1.5 MiB by default) with
// "etcdserver: request is too large". Measured on the real API server
// (TestTheCephClusterCeilingIsBelowTheAPIServersLimit): about 25,700
// devices with by-id paths, 20 to a node.
const (
	// defaultCephClusterMaxBytes leaves, below etcd's 1.5 MiB, room for
	// what others add after the plugin's write: Rook's status (conditions,
	// Ceph's health messages, versions), managedFields, etcd's own framing.
	defaultCephClusterMaxBytes = 1_400_000
	// annotationsMaxBytes is the API server's limit on an object's
	// annotations, keys and values together (apimachinery's
	// TotalAnnotationSizeLimitB): the record of the plugin's devices
	// (ManagedDevicesAnnotation) is one of them, 8 bytes a device.
	annotationsMaxBytes = 256 << 10
)

// CephClusterSize is how large a CephCluster is, as the API server limits it.
type CephClusterSize struct {
	// Bytes is the object as JSON.
	Bytes int
	// AnnotationBytes is its annotations' keys and values.
	AnnotationBytes int
	// Devices is how many devices spec.storage.nodes lists.
	Devices int
}

// CheckCephClusterSize says why a CephCluster of size cannot be written,
// or "" when it can: over maxBytes, or over the API server's limit on
// annotations.
func CheckCephClusterSize(size CephClusterSize, maxBytes int) string {
	switch {
	case size.Bytes > maxBytes:
		return fmt.Sprintf("with %d devices listed the CephCluster would be %s of JSON, over the %s the plugin writes (FUNP_CEPHCLUSTER_MAX_BYTES; etcd refuses requests over 1.5 MiB by default)",
			size.Devices, message.Bytes(int64(size.Bytes)), message.Bytes(int64(maxBytes)))
	case size.AnnotationBytes > annotationsMaxBytes:
		return fmt.Sprintf("with %d devices listed the CephCluster's annotations would be %s, over the API server's %s (the record of the plugin's devices takes 8 bytes a device)",
			size.Devices, message.Bytes(int64(size.AnnotationBytes)), message.Bytes(annotationsMaxBytes))
	}
	return ""
}

// sizeAfterPlan is the size of cluster once plan is written to it: the
// object as read, with plan's device list and record in place.
func sizeAfterPlan(cluster *unstructured.Unstructured, plan StorageNodesPlan) (CephClusterSize, error) {
	// A shallow copy along the path written: the cached object is shared.
	obj := shallowWith(cluster.Object, []string{"spec", "storage", "nodes"}, plan.Nodes)
	annotations := map[string]any{}
	for k, v := range cluster.GetAnnotations() {
		annotations[k] = v
	}
	delete(annotations, cephv1alpha1.ManagedDevicesAnnotation)
	if plan.Managed != "" {
		annotations[cephv1alpha1.ManagedDevicesAnnotation] = plan.Managed
	}
	obj = shallowWith(obj, []string{"metadata", "annotations"}, annotations)
	data, err := json.Marshal(obj)
	if err != nil {
		return CephClusterSize{}, fmt.Errorf("measure the CephCluster: %w", err)
	}
	size := CephClusterSize{Bytes: len(data), Devices: deviceCount(plan.Nodes)}
	for k, v := range annotations {
		size.AnnotationBytes += len(k) + len(v.(string))
	}
	return size, nil
}

// shallowWith is obj with value at path, copying only the maps on the
// path.
func shallowWith(obj map[string]any, path []string, value any) map[string]any {
	out := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		out[k] = v
	}
	if len(path) == 1 {
		out[path[0]] = value
		return out
	}
	child, _ := obj[path[0]].(map[string]any)
	out[path[0]] = shallowWith(child, path[1:], value)
	return out
}
