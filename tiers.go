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

// TooFewNodesOfClassError refuses a placement on a device class whose
// nodes cannot hold, one per node, the copies the pools keep (ClassCopies).
// It is a refusal, not a clamp: the consumer goes Degraded, nothing is
// written, and its pools keep the size and class they have.
type TooFewNodesOfClassError struct {
	Class cephv1alpha1.DiskType
	// Nodes is how many nodes have disks of Class.
	Nodes int
	// Copies is what the pools keep, and Why what sets it.
	Copies int32
	Why    CopiesFloor
	// Pools names the pools for the message ("BlockStorage fast",
	// "FileStorage files's metadata"); "" is "the pool".
	Pools string
}

// CopiesFloor is what sets the copies a pool on a class keeps (the
// console's tiers.js classCopies gives the same words).
type CopiesFloor string

const (
	// CopiesAsked: spec.replicas says so.
	CopiesAsked CopiesFloor = "asked"
	// CopiesHeld: automatic, and the pool has that many now.
	CopiesHeld CopiesFloor = "held"
	// CopiesMinimum: automatic keeps at least 2 on a class.
	CopiesMinimum CopiesFloor = "minimum"
)

func (e *TooFewNodesOfClassError) Error() string {
	pools := e.Pools
	if pools == "" {
		pools = "the pool"
	}
	keeps := fmt.Sprintf("%s keeps %d copies (replicas: %d)", pools, e.Copies, e.Copies)
	remedy := "or choose another class"
	switch e.Why {
	case CopiesHeld:
		keeps = fmt.Sprintf("%s keeps the %d copies it has (replicas automatic)", pools, e.Copies)
		remedy = fmt.Sprintf("choose another class, or set replicas: %d", e.Nodes)
	case CopiesMinimum:
		keeps = fmt.Sprintf("%s keeps at least %d copies on a class (replicas automatic)", pools, e.Copies)
		remedy = fmt.Sprintf("choose another class, or set replicas: %d", e.Nodes)
	}
	return fmt.Sprintf("device class %s has disks on only %s; %s, one per node: add %s disks on %s, %s",
		e.Class, message.Plural(e.Nodes, "node"), keeps, e.Class, message.Plural(int(e.Copies)-e.Nodes, "more node"), remedy)
}

// ClassCopies is how many copies a pool on class keeps, nodes being the
// nodes with disks of the class. A class is a choice of disks, not of
// safety, so it never lowers a consumer's copies: an explicit replicas
// count is kept as asked (one copy only when replicas: 1 says so), and
// automatic sizing, min(3, nodes), goes below neither 2 nor have, the
// copies the pool has now (0: none yet), so a class that loses nodes does
// not shrink the pools on it. Copies the nodes cannot hold, one per node,
// are a TooFewNodesOfClassError. Without a class ComputeReplication's
// clamps stand: there the node count is the cluster's own.
func ClassCopies(requested *int32, have int32, class cephv1alpha1.DiskType, nodes int) (int32, string, error) {
	copies, why, message := int32(min(maxReplicas, nodes)), CopiesMinimum, ""
	switch floor := max(2, min(have, maxReplicas)); {
	case requested != nil:
		// Out of 1..3 only past the CRD's validation.
		copies, message = clampRequested(*requested, maxReplicas)
		why = CopiesAsked
	case copies < floor:
		copies = floor
		if have >= 2 {
			why = CopiesHeld
		}
	}
	if int(copies) > nodes {
		return 0, "", &TooFewNodesOfClassError{Class: class, Nodes: nodes, Copies: copies, Why: why}
	}
	return copies, message, nil
}

// TierReplication sizes a consumer's pools on class ("" for every OSD)
// against the nodes that have disks of it. Without a class it is
// ComputeReplication over every node, clamps included; on a class,
// ClassCopies decides, have being the copies the pool has now. A class
// without disks is a NoDisksOfClassError, one on too few nodes a
// TooFewNodesOfClassError; no disks at all is ErrNoDisks.
func TierReplication(requested *int32, have int32, class cephv1alpha1.DiskType, tiers Tiers) (Replication, error) {
	if tiers.All.Nodes < 1 {
		return Replication{}, ErrNoDisks
	}
	if class == "" {
		return ComputeReplication(requested, tiers.All.Nodes)
	}
	tier := tiers.Of(class)
	if tier.Nodes < 1 {
		return Replication{}, &NoDisksOfClassError{Class: class, Tiers: tiers}
	}
	size, message, err := ClassCopies(requested, have, class, tier.Nodes)
	if err != nil {
		return Replication{}, err
	}
	// ClassCopies keeps size within the nodes: two copies or more are on
	// separate hosts.
	r := sized(size, tier.Nodes, message)
	r.DeviceClass = class
	return r, nil
}

// MetadataReplication is a FileStorage's metadata pool's replication, its
// data pool's being data (spec replicas requested), have the copies the
// metadata pool has now: on explicit's class when the consumer names one;
// without a data class, as the data (every OSD, today's behaviour); else
// on the fastest class present whose nodes give the metadata at least the
// data's copies and failure domain, so a small fast tier never weakens
// what the data has. A class never lowers the metadata's copies either
// (ClassCopies): when not even the data's class holds what the metadata
// has, it is refused.
func MetadataReplication(data Replication, requested *int32, have int32, explicit cephv1alpha1.DiskType, tiers Tiers) (Replication, error) {
	switch {
	case explicit != "":
		return TierReplication(requested, have, explicit, tiers)
	case data.DeviceClass == "":
		return data, nil
	}
	for _, tier := range tiers.Present() {
		r, err := TierReplication(requested, have, tier.Class, tiers)
		if err == nil && atLeast(r, data) {
			r.Message = ""
			return r, nil
		}
	}
	// The data's class is among those tried, and sized as the data
	// unless the metadata has more copies than it holds: that refusal.
	return TierReplication(requested, have, data.DeviceClass, tiers)
}

// SharedMetadataReplication is an ObjectStorage's metadata pools'
// replication. They replicate as automatic sizing over every node says
// (RenderObjectStore: Rook applies each store's metadata spec to the
// .rgw.root pool all stores share), and for the same reason their class is
// the same for every store that chooses one: the fastest class present
// whose nodes hold that many copies, else none (every OSD). A store
// without a class keeps today's metadata pools on every OSD. A class only
// holds what automatic sizing over every node gives (one copy only on a
// one-node cluster, as without a class): it never lowers it, so it is
// asked for that count.
func SharedMetadataReplication(data Replication, tiers Tiers) (Replication, error) {
	auto, err := TierReplication(nil, 0, "", tiers)
	if err != nil || data.DeviceClass == "" {
		return auto, err
	}
	for _, tier := range tiers.Present() {
		if r, err := TierReplication(&auto.Size, 0, tier.Class, tiers); err == nil && atLeast(r, auto) {
			return r, nil
		}
	}
	return auto, nil
}

// atLeast says whether r keeps at least want's copies, as far apart.
func atLeast(r, want Replication) bool {
	return r.Size >= want.Size && (r.FailureDomain == want.FailureDomain || want.FailureDomain == rook.FailureDomainOSD)
}
