package main

import (
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// DeviceID identifies a device the way the CephCluster lists it: the node
// and the device name under spec.storage.nodes[].devices[].
type DeviceID struct {
	Node, Device string
}

func (a DeviceID) less(b DeviceID) bool {
	if a.Node != b.Node {
		return a.Node < b.Node
	}
	return a.Device < b.Device
}

// DeviceIDOf is the CephCluster identity of a Disk.
func DeviceIDOf(d *cephv1alpha1.Disk) DeviceID {
	return DeviceID{Node: d.Status.NodeName, Device: d.Status.StorageDevice()}
}

// ClusterDevices is the set of devices a CephCluster already lists. A nil
// cluster lists none.
func ClusterDevices(cluster *cephv1.CephCluster) map[DeviceID]bool {
	set := map[DeviceID]bool{}
	if cluster == nil {
		return set
	}
	for _, node := range cluster.Spec.Storage.Nodes {
		for _, dev := range node.Devices {
			set[DeviceID{Node: node.Name, Device: dev.Name}] = true
		}
	}
	return set
}

// RenderStorageNodes turns the disk union into the CephCluster's
// spec.storage.nodes: one entry per node (named as the node's
// kubernetes.io/hostname, which is the node name discovery reports), its
// devices deduplicated, nodes and devices sorted so the same union always
// renders the same list and an unchanged union never causes a write.
// Retained devices (RetainedDevices) are listed as well.
//
// Each device of a Disk with a type carries it as its Ceph device class
// (config.deviceClass): Ceph's own detection calls an NVMe drive ssd when
// the kernel reports it as non-rotational only, and the tiers consumers
// choose from (TiersOf) are the Disks' types. A retained device, which no
// Disk describes, is listed without one.
func RenderStorageNodes(disks []*cephv1alpha1.Disk, retained ...DeviceID) []cephv1.Node {
	byNode := map[string]map[string]cephv1alpha1.DiskType{}
	add := func(id DeviceID, class cephv1alpha1.DiskType) {
		if id.Node == "" || id.Device == "" {
			return
		}
		if byNode[id.Node] == nil {
			byNode[id.Node] = map[string]cephv1alpha1.DiskType{}
		}
		if _, listed := byNode[id.Node][id.Device]; !listed || class != "" {
			byNode[id.Node][id.Device] = class
		}
	}
	for i := range disks {
		add(DeviceIDOf(disks[i]), disks[i].Status.Type)
	}
	for _, id := range retained {
		add(id, "")
	}
	nodes := make([]cephv1.Node, 0, len(byNode))
	for _, name := range sortedKeys(byNode) {
		node := cephv1.Node{Name: name}
		for _, dev := range sortedKeys(byNode[name]) {
			device := cephv1.Device{Name: dev}
			if class := byNode[name][dev]; class != "" {
				device.Config = classConfigs[class]
			}
			node.Devices = append(node.Devices, device)
		}
		nodes = append(nodes, node)
	}
	return nodes
}

// classConfigs are the device configs RenderStorageNodes gives, one per
// class, shared by every device of it (10,000 devices would otherwise
// carry 10,000 equal maps): read, never written.
var classConfigs = func() map[cephv1alpha1.DiskType]map[string]string {
	configs := map[cephv1alpha1.DiskType]map[string]string{}
	for _, class := range deviceClasses {
		configs[class] = map[string]string{DeviceClassConfigKey: string(class)}
	}
	return configs
}()

// DeviceClassConfigKey is the per-device config key Rook gives
// ceph-volume as --crush-device-class when it prepares the OSD
// (pkg/operator/ceph/cluster/osd/config: DeviceClassKey). Rook v1.18.11
// reads it at prepare only: a changed value never reaches an existing
// OSD, allowDeviceClassUpdate or not (that compares the node-level config).
const DeviceClassConfigKey = "deviceClass"
