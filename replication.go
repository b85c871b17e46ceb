package main

import (
	"errors"
	"fmt"
	"strings"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// maxReplicas caps automatic sizing: three copies is Ceph's usual safety
// level, and more nodes do not warrant more copies.
const maxReplicas = 3

// ErrNoDisks means no DiskPool contributes any disk, so there is nothing to
// size replication against; a consumer goes Degraded with this message.
var ErrNoDisks = errors.New("no DiskPool contributes disks")

// Replication is how a consumer's Ceph pools are sized.
type Replication struct {
	// Size is the replica count of every pool the consumer derives.
	Size int32
	// FailureDomain is host when the copies can sit on different nodes,
	// else osd.
	FailureDomain string
	// RequireSafeReplicaSize is false only for size 1: Ceph refuses a
	// size-1 pool unless the safety check is switched off.
	RequireSafeReplicaSize bool
	// Message explains a clamped request; empty when nothing was clamped.
	Message string
	// Nodes is the node count the replication was sized against.
	Nodes int
	// DeviceClass is the class the pool's CRUSH rule takes its OSDs from
	// (TierReplication); "" for every OSD.
	DeviceClass cephv1alpha1.DiskType
}

// Placement is how a consumer's pools replicate and where: its data
// pool's, and its metadata pools' (a FileStorage's, an ObjectStorage's;
// a BlockStorage has none, and its Metadata is its Data).
type Placement struct {
	Data, Metadata Replication
}

// Automatic is the replication an absent replicas field gives on the same
// nodes: what every consumer agrees on, for pools consumers share.
func (r Replication) Automatic() Replication {
	auto, err := ComputeReplication(nil, r.Nodes)
	if err != nil {
		return r // no nodes: nothing is derived anyway
	}
	return auto
}

// ComputeReplication sizes a consumer's pools against nodes, the number of
// nodes that contribute disks cluster-wide (see Union): every DiskPool feeds
// one OSD set, so sizing against one pool would under-replicate.
//
// Absent requested means min(3, nodes). An explicit count is clamped down to
// nodes, with the reason in Message, so the consumer provisions instead of
// waiting for disks that may never arrive. The failure domain is host when
// at least 2 replicas span at least 2 nodes, otherwise osd, so a single-node
// cluster still provisions. Zero nodes is ErrNoDisks. These are the seed's
// rules for pools without a class, whose nodes are the whole cluster's; on
// a device class nothing is clamped down (ClassCopies).
func ComputeReplication(requested *int32, nodes int) (Replication, error) {
	if nodes < 1 {
		return Replication{}, ErrNoDisks
	}
	size := int32(min(maxReplicas, nodes))
	var message string
	if requested != nil {
		size, message = clampRequested(*requested, nodes)
	}
	return sized(size, nodes, message), nil
}

// sized is size copies over nodes: on separate hosts when at least two
// copies span at least two nodes, else on OSDs (a single-node cluster
// still provisions); Ceph's size-1 safety check only for one copy.
func sized(size int32, nodes int, message string) Replication {
	domain := rook.FailureDomainOSD
	if size >= 2 && nodes >= 2 {
		domain = rook.FailureDomainHost
	}
	return Replication{
		Size:                   size,
		FailureDomain:          domain,
		RequireSafeReplicaSize: size > 1,
		Message:                message,
		Nodes:                  nodes,
	}
}

// clampRequested keeps an explicit replica count within 1..3 (the CRD
// already enforces that) and within the node count.
func clampRequested(requested int32, nodes int) (int32, string) {
	switch {
	case requested < 1:
		return 1, fmt.Sprintf("%d replicas requested; using 1", requested)
	case requested > maxReplicas && nodes >= maxReplicas:
		return maxReplicas, fmt.Sprintf("%d replicas requested; using the maximum of %d", requested, maxReplicas)
	case int(requested) > nodes:
		return int32(nodes), fmt.Sprintf("%d replicas requested but disks come from only %s; using %d",
			requested, message.Plural(nodes, "node"), nodes)
	}
	return requested, ""
}

// Causes of a replication change, as the ReplicationChanged condition's
// reason.
const (
	ReasonSpecChanged = "SpecChanged"
	ReasonNodesJoined = "NodesJoined"
	ReasonNodesLeft   = "NodesLeft"
)

// Placed is a consumer's placement as its status last reported it.
type Placed struct {
	Size                       int32
	FailureDomain              string
	DeviceClass, MetadataClass cephv1alpha1.DiskType
}

// PlacedOf reads a consumer's last placement from its status.
func PlacedOf(s *cephv1alpha1.StorageStatus) Placed {
	return Placed{Size: s.Replicas, FailureDomain: s.FailureDomain, DeviceClass: s.DeviceClass, MetadataClass: s.MetadataDeviceClass}
}

// DescribeReplicationChange says, for an Event and a condition, how a
// consumer's pools' replication or device class changes and what Ceph does
// about it, with its cause: specChanged when the consumer's spec was
// edited since the placement it had, else the contributing nodes changed
// (more copies, wider placement or a faster metadata class mean nodes
// joined). Every change is described, explicit or automatic; a first
// placement or an unchanged one is not ("").
func DescribeReplicationChange(old Placed, next Placement, specChanged bool) (reason, message string) {
	data := next.Data
	if old.Size == 0 || old.Size == data.Size && old.FailureDomain == data.FailureDomain &&
		old.DeviceClass == data.DeviceClass && old.MetadataClass == next.Metadata.DeviceClass {
		return "", ""
	}
	var effects []string
	switch {
	case data.Size > old.Size:
		effects = append(effects, "Ceph re-replicates every byte in the pool")
	case data.Size < old.Size:
		effects = append(effects, "Ceph drops the extra copies")
	}
	switch {
	case old.FailureDomain == rook.FailureDomainOSD && data.FailureDomain == rook.FailureDomainHost:
		// enableCrushUpdates (replicatedPool) is what lets this reach Ceph.
		effects = append(effects, "Rook gives it a new CRUSH rule that moves the copies onto separate hosts")
	case old.FailureDomain == rook.FailureDomainHost && data.FailureDomain == rook.FailureDomainOSD:
		effects = append(effects, "Rook gives it a new CRUSH rule that lets copies share a host")
	}
	if old.DeviceClass != data.DeviceClass {
		effects = append(effects, fmt.Sprintf("Rook gives it a new CRUSH rule and Ceph moves every byte in it from %s to %s",
			classOSDs(old.DeviceClass), classOSDs(data.DeviceClass)))
	}
	// Metadata that only follows its data is told by the data's move.
	followsData := old.MetadataClass == old.DeviceClass && next.Metadata.DeviceClass == data.DeviceClass
	if old.MetadataClass != next.Metadata.DeviceClass && !followsData {
		effects = append(effects, fmt.Sprintf("Ceph moves its metadata from %s to %s",
			classOSDs(old.MetadataClass), classOSDs(next.Metadata.DeviceClass)))
	}
	message = fmt.Sprintf("replication changes from %s to %s: %s",
		describePlaced(old.Size, old.FailureDomain, old.DeviceClass), describePlaced(data.Size, data.FailureDomain, data.DeviceClass), strings.Join(effects, ", and "))
	switch {
	case specChanged:
		reason = ReasonSpecChanged
	case data.Size > old.Size || data.FailureDomain == rook.FailureDomainHost && old.FailureDomain != rook.FailureDomainHost ||
		data.Size == old.Size && data.FailureDomain == old.FailureDomain && fasterOrEqual(next.Metadata.DeviceClass, old.MetadataClass):
		reason = ReasonNodesJoined
	default:
		reason = ReasonNodesLeft
	}
	return reason, message
}

// describePlaced is "3 (host)", or "3 (host, ssd)" for a pool on a class.
func describePlaced(size int32, domain string, class cephv1alpha1.DiskType) string {
	if class == "" {
		return fmt.Sprintf("%d (%s)", size, domain)
	}
	return fmt.Sprintf("%d (%s, %s)", size, domain, class)
}

// classOSDs names the OSDs of a class for a message.
func classOSDs(class cephv1alpha1.DiskType) string {
	if class == "" {
		return "every OSD"
	}
	return "the " + string(class) + " OSDs"
}

// fasterOrEqual says whether class a comes no later than b in
// deviceClasses (a class comes before none).
func fasterOrEqual(a, b cephv1alpha1.DiskType) bool {
	ai, bi := classIndex(a), classIndex(b)
	if bi < 0 {
		return true
	}
	return ai >= 0 && ai <= bi
}
