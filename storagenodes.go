package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"sort"
	"strings"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
)

const managedVersion = "v1:"

// managedKey is a device's entry in the record.
type managedKey [6]byte

func managedKeyOf(id DeviceID) managedKey {
	sum := sha256.Sum256([]byte(id.Node + "|" + id.Device))
	var k managedKey
	copy(k[:], sum[:])
	return k
}

// encodeManaged renders the record of a set of devices ("" for none).
func encodeManaged(ids []DeviceID) string {
	if len(ids) == 0 {
		return ""
	}
	keys := make([]managedKey, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, managedKeyOf(id))
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i][:], keys[j][:]) < 0 })
	raw := make([]byte, 0, len(keys)*len(managedKey{}))
	for i, k := range keys {
		if i > 0 && k == keys[i-1] {
			continue
		}
		raw = append(raw, k[:]...)
	}
	return managedVersion + base64.StdEncoding.EncodeToString(raw)
}

// StorageNodesPlan is the spec.storage.nodes to write and the devices the
// plugin manages afterwards.
type StorageNodesPlan struct {
	Nodes   []any
	Managed string
}

// PlanStorageNodes folds the devices the pools want (want, from
// RenderStorageNodes) into the current list: devices listed by others stay,
// devices the plugin listed and the pools no longer want go, and whatever
// else is set on a node or device (config, resources) is carried over but
// the device class of the plugin's devices, which follows their Disks.
// Nodes and devices come out sorted so an unchanged input never differs.
//
// Entries carried over are shared with current, not copied (at 10,000
// devices copying them was most of an edit's planning): neither current
// nor the plan may be modified afterwards.
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
	// ours are the current entries of devices the plugin listed: kept
	// (with whatever was set on them) only if the pools still want them.
	ours := make(map[DeviceID]map[string]any, deviceCount(current))
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
		e.node = withoutDevices(node)
		devices, _ := node["devices"].([]any)
		for _, d := range devices {
			dev, ok := d.(map[string]any)
			if !ok {
				continue
			}
			devName, _ := dev["name"].(string)
			if devName == "" {
				continue
			}
			if id := (DeviceID{Node: name, Device: devName}); managed[managedKeyOf(id)] {
				ours[id] = dev
				continue
			}
			e.device[devName] = dev
		}
	}
	var managedNext []DeviceID
	for _, node := range want {
		e := nodeOf(node.Name)
		for _, dev := range node.Devices {
			id := DeviceID{Node: node.Name, Device: dev.Name}
			managedNext = append(managedNext, id)
			if _, listed := e.device[dev.Name]; listed {
				continue
			}
			prev, ok := ours[id]
			if !ok {
				prev = map[string]any{"name": dev.Name}
			}
			e.device[dev.Name] = withDeviceClass(prev, dev.Config[DeviceClassConfigKey])
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
	return StorageNodesPlan{Nodes: nodes, Managed: encodeManaged(managedNext)}
}

// withDeviceClass is a device entry of the plugin's carrying class as its
// config.deviceClass (RenderStorageNodes), the rest of its config kept:
// entry itself when it already does or class is "", else a copy (entries
// are shared with the CephCluster as read).
func withDeviceClass(entry map[string]any, class string) map[string]any {
	config, _ := entry["config"].(map[string]any)
	if have, _ := config[DeviceClassConfigKey].(string); class == "" || have == class {
		return entry
	}
	out := make(map[string]any, len(entry)+1)
	for k, v := range entry {
		out[k] = v
	}
	if len(config) == 0 || len(config) == 1 && config[DeviceClassConfigKey] != nil {
		out["config"] = classOnlyConfig(class)
		return out
	}
	nextConfig := make(map[string]any, len(config))
	for k, v := range config {
		nextConfig[k] = v
	}
	nextConfig[DeviceClassConfigKey] = class
	out["config"] = nextConfig
	return out
}

// classOnlyConfigs are the configs of devices that carry nothing but
// their class, shared by every such device of a plan (a plan is never
// modified).
var classOnlyConfigs = func() map[string]map[string]any {
	configs := map[string]map[string]any{}
	for _, class := range deviceClasses {
		configs[string(class)] = map[string]any{DeviceClassConfigKey: string(class)}
	}
	return configs
}()

// classOnlyConfig is the shared config of a device carrying only class.
func classOnlyConfig(class string) map[string]any {
	if config, ok := classOnlyConfigs[class]; ok {
		return config
	}
	return map[string]any{DeviceClassConfigKey: class}
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

// withoutDevices is a copy of a node entry's own fields; its device list
// is rebuilt by the plan.
func withoutDevices(node map[string]any) map[string]any {
	out := make(map[string]any, len(node))
	for k, v := range node {
		if k != "devices" {
			out[k] = v
		}
	}
	return out
}

// parseManaged reads the record. Anything it cannot read is taken as
// managing nothing, so nothing is removed because of it.
func parseManaged(annotation string) map[managedKey]bool {
	set := map[managedKey]bool{}
	encoded, ok := strings.CutPrefix(annotation, managedVersion)
	if !ok {
		return set
	}
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(raw)%len(managedKey{}) != 0 {
		return set
	}
	for i := 0; i < len(raw); i += len(managedKey{}) {
		var k managedKey
		copy(k[:], raw[i:])
		set[k] = true
	}
	return set
}

// RetainedDevices are the devices the plugin listed in the CephCluster that
// the pools no longer select but may still name: no Disk describes them any
// more (someone deleted it: kubectl delete disks --all) while some pool
// lists a name no Disk answers to (or a Disk published again, whose status
// is not written yet). The device list shrinks only through a
// DiskPool change (removing a device never removes its OSD, so it must be
// deliberate), and a deleted Disk says nothing about its device: the
// inventory publishes it again from discovery, and the name resolves again.
// Once no pool lists an unresolved name, such a device goes as any other.
//
// inCluster is what the CephCluster lists, managedAnnotation its record of
// the plugin's devices, described whether some Disk describes a device.
// The result is sorted.
func RetainedDevices(inCluster map[DeviceID]bool, managedAnnotation string, union DiskUnion, described func(DeviceID) bool) []DeviceID {
	if !union.namesUnresolved() {
		return nil
	}
	wanted := make(map[DeviceID]bool, len(union.Disks))
	for _, d := range union.Disks {
		wanted[DeviceIDOf(d)] = true
	}
	managed := parseManaged(managedAnnotation)
	var kept []DeviceID
	for id := range inCluster {
		if !wanted[id] && managed[managedKeyOf(id)] && !described(id) {
			kept = append(kept, id)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].less(kept[j]) })
	return kept
}
