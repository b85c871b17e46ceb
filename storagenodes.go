package main

import (
	"encoding/json"
	"sort"
	"strings"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ManagedDevicesAnnotation records, on the CephCluster, the devices the
// plugin put into spec.storage.nodes (as "node|device", sorted JSON). Only
// those are ever taken out again: a device someone else listed — in a
// CephCluster that existed before the plugin, or added by hand — is not
// the plugin's to remove, and removing a device is never undone by Rook.
const ManagedDevicesAnnotation = "ceph.fundament.io/managed-devices"

// StorageNodesPlan is the spec.storage.nodes to write and the devices the
// plugin manages afterwards.
type StorageNodesPlan struct {
	Nodes   []any
	Managed string
}

// PlanStorageNodes folds the devices the pools want (want, from
// RenderStorageNodes) into the current list: devices listed by others stay,
// devices the plugin listed and the pools no longer want go, and whatever
// else is set on a node or device (config, resources) is carried over.
// Nodes and devices come out sorted so an unchanged input never differs.
func PlanStorageNodes(current []any, managedAnnotation string, want []cephv1.Node) StorageNodesPlan {
	managed := parseManaged(managedAnnotation)
	type entry struct {
		node   map[string]any
		device map[string]map[string]any
	}
	byNode := map[string]*entry{}
	nodeOf := func(name string) *entry {
		if e, ok := byNode[name]; ok {
			return e
		}
		e := &entry{node: map[string]any{"name": name}, device: map[string]map[string]any{}}
		byNode[name] = e
		return e
	}
	for _, n := range current {
		node, ok := n.(map[string]any)
		if !ok {
			continue
		}
		name, _ := node["name"].(string)
		if name == "" {
			continue
		}
		e := nodeOf(name)
		e.node = runtime.DeepCopyJSON(node)
		devices, _ := node["devices"].([]any)
		for _, d := range devices {
			dev, ok := d.(map[string]any)
			if !ok {
				continue
			}
			devName, _ := dev["name"].(string)
			if devName == "" || managed[DeviceID{Node: name, Device: devName}] {
				continue // ours: kept below only if still wanted
			}
			e.device[devName] = runtime.DeepCopyJSON(dev)
		}
	}
	var managedNext []string
	for _, node := range want {
		e := nodeOf(node.Name)
		for _, dev := range node.Devices {
			managedNext = append(managedNext, node.Name+"|"+dev.Name)
			if _, listed := e.device[dev.Name]; listed {
				continue
			}
			if prev := previousDevice(current, node.Name, dev.Name); prev != nil {
				e.device[dev.Name] = prev
			} else {
				e.device[dev.Name] = map[string]any{"name": dev.Name}
			}
		}
	}
	names := make([]string, 0, len(byNode))
	for name, e := range byNode {
		if len(e.device) > 0 || hasOtherFields(e.node) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	nodes := make([]any, 0, len(names))
	for _, name := range names {
		e := byNode[name]
		devNames := make([]string, 0, len(e.device))
		for d := range e.device {
			devNames = append(devNames, d)
		}
		sort.Strings(devNames)
		devices := make([]any, 0, len(devNames))
		for _, d := range devNames {
			devices = append(devices, e.device[d])
		}
		e.node["devices"] = devices
		nodes = append(nodes, e.node)
	}
	sort.Strings(managedNext)
	annotation := ""
	if len(managedNext) > 0 {
		annotation = string(mustJSON(managedNext))
	}
	return StorageNodesPlan{Nodes: nodes, Managed: annotation}
}

// hasOtherFields keeps a node entry someone configured beyond its devices.
func hasOtherFields(node map[string]any) bool {
	for k := range node {
		if k != "name" && k != "devices" {
			return true
		}
	}
	return false
}

func previousDevice(current []any, node, device string) map[string]any {
	for _, n := range current {
		m, _ := n.(map[string]any)
		if name, _ := m["name"].(string); name != node {
			continue
		}
		devices, _ := m["devices"].([]any)
		for _, d := range devices {
			dm, _ := d.(map[string]any)
			if name, _ := dm["name"].(string); name == device {
				return runtime.DeepCopyJSON(dm)
			}
		}
	}
	return nil
}

func parseManaged(annotation string) map[DeviceID]bool {
	set := map[DeviceID]bool{}
	var entries []string
	if annotation == "" || json.Unmarshal([]byte(annotation), &entries) != nil {
		return set
	}
	for _, e := range entries {
		node, device, ok := strings.Cut(e, "|")
		if ok {
			set[DeviceID{Node: node, Device: device}] = true
		}
	}
	return set
}
