package main

import (
	"fmt"
	"strings"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// deviceClasses are the Ceph device classes the plugin gives OSDs, one per
// Disk type, fastest first: the order a consumer's metadata looks for its
// class in (MetadataReplication) and the console lists them in.
var deviceClasses = []cephv1alpha1.DiskType{cephv1alpha1.DiskTypeNVMe, cephv1alpha1.DiskTypeSSD, cephv1alpha1.DiskTypeHDD}

// Tier is the part of the disk union of one device class: what a pool
// whose CRUSH rule takes only that class is placed on.
type Tier struct {
	Class cephv1alpha1.DiskType
	// Nodes is how many distinct nodes have disks of the class: what
	// replication on the tier is sized against.
	Nodes int
	// OSDs is how many devices of the class the union lists (one OSD each).
	OSDs int
	// RawBytes is the summed size of those devices.
	RawBytes int64
}

// Tiers is the disk union by device class. It is comparable, so a change
// of any tier is seen with ==.
type Tiers struct {
	// All is every disk of the union, whatever its class: where a pool
	// without a class is placed.
	All     Tier
	byClass [3]Tier // in deviceClasses' order
}

// TiersOf sums disks by their Disk type, which is the device class the
// plugin writes for each device (RenderStorageNodes). A disk without a type
// counts only in All.
func TiersOf(disks []*cephv1alpha1.Disk) Tiers {
	var t Tiers
	nodes := map[cephv1alpha1.DiskType]map[string]bool{}
	add := func(tier *Tier, d *cephv1alpha1.Disk) {
		if nodes[tier.Class] == nil {
			nodes[tier.Class] = map[string]bool{}
		}
		nodes[tier.Class][d.Status.NodeName] = true
		tier.Nodes = len(nodes[tier.Class])
		tier.OSDs++
		if d.Status.Size != nil {
			tier.RawBytes += d.Status.Size.Value()
		}
	}
	for i, class := range deviceClasses {
		t.byClass[i].Class = class
	}
	for _, d := range disks {
		add(&t.All, d)
		if i := classIndex(d.Status.Type); i >= 0 {
			add(&t.byClass[i], d)
		}
	}
	return t
}

func classIndex(class cephv1alpha1.DiskType) int {
	for i, c := range deviceClasses {
		if c == class {
			return i
		}
	}
	return -1
}

// Of is the tier of class; "" is every disk (All).
func (t Tiers) Of(class cephv1alpha1.DiskType) Tier {
	if i := classIndex(class); i >= 0 {
		return t.byClass[i]
	}
	if class == "" {
		return t.All
	}
	return Tier{Class: class}
}

// Present are the tiers that have disks, fastest first.
func (t Tiers) Present() []Tier {
	var present []Tier
	for _, tier := range t.byClass {
		if tier.OSDs > 0 {
			present = append(present, tier)
		}
	}
	return present
}

// describe lists the tiers present for a message: "hdd (3 nodes), ssd
// (1 node)", or "none".
func (t Tiers) describe() string {
	var parts []string
	for _, tier := range t.Present() {
		parts = append(parts, fmt.Sprintf("%s (%s)", tier.Class, message.Plural(tier.Nodes, "node")))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// NoDisksOfClassError refuses a consumer that asks for a device class no
// DiskPool contributes disks of.
type NoDisksOfClassError struct {
	Class cephv1alpha1.DiskType
	Tiers Tiers
}

func (e *NoDisksOfClassError) Error() string {
	return fmt.Sprintf("no DiskPool contributes disks of class %s (classes with disks: %s): add %s disks to a DiskPool, or choose another class",
		e.Class, e.Tiers.describe(), e.Class)
}

// TierReplication sizes a consumer's pools on class ("" for every OSD)
// against the nodes that have disks of it, as ComputeReplication does
// against all nodes: an explicit count is clamped to them, with the reason.
// A class without disks is a NoDisksOfClassError; no disks at all is
// ErrNoDisks.
func TierReplication(requested *int32, class cephv1alpha1.DiskType, tiers Tiers) (Replication, error) {
	if tiers.All.Nodes < 1 {
		return Replication{}, ErrNoDisks
	}
	tier := tiers.Of(class)
	if tier.Nodes < 1 {
		return Replication{}, &NoDisksOfClassError{Class: class, Tiers: tiers}
	}
	r, err := ComputeReplication(requested, tier.Nodes)
	if err != nil {
		return r, err
	}
	r.DeviceClass = class
	if class != "" && r.Message != "" {
		r.Message = strings.Replace(r.Message, "disks come from only", "disks of class "+string(class)+" are on only", 1)
	}
	return r, nil
}

// MetadataReplication is a FileStorage's metadata pool's replication, its
// data pool's being data (spec replicas requested): on explicit's class
// when the consumer names one; without a data class, as the data (every
// OSD, today's behaviour); else on the fastest class present whose nodes
// give the metadata at least the data's copies and failure domain, so a
// small fast tier never weakens what the data has, and on the data's own
// class when no faster one does.
func MetadataReplication(data Replication, requested *int32, explicit cephv1alpha1.DiskType, tiers Tiers) (Replication, error) {
	switch {
	case explicit != "":
		return TierReplication(requested, explicit, tiers)
	case data.DeviceClass == "":
		return data, nil
	}
	for _, tier := range tiers.Present() {
		r, err := TierReplication(requested, tier.Class, tiers)
		if err == nil && atLeast(r, data) {
			r.Message = ""
			return r, nil
		}
	}
	return data, nil
}

// SharedMetadataReplication is an ObjectStorage's metadata pools'
// replication. They replicate as automatic sizing over every node says
// (RenderObjectStore: Rook applies each store's metadata spec to the
// .rgw.root pool all stores share), and for the same reason their class is
// the same for every store that chooses one: the fastest class present
// whose nodes give that replication, else none (every OSD). A store
// without a class keeps today's metadata pools on every OSD.
func SharedMetadataReplication(data Replication, tiers Tiers) (Replication, error) {
	auto, err := TierReplication(nil, "", tiers)
	if err != nil || data.DeviceClass == "" {
		return auto, err
	}
	for _, tier := range tiers.Present() {
		if r, err := TierReplication(nil, tier.Class, tiers); err == nil && atLeast(r, auto) {
			return r, nil
		}
	}
	return auto, nil
}

// atLeast says whether r keeps at least want's copies, as far apart.
func atLeast(r, want Replication) bool {
	return r.Size >= want.Size && (r.FailureDomain == want.FailureDomain || want.FailureDomain == rook.FailureDomainOSD)
}
