package main

import (
	"errors"
	"fmt"
	"strings"
)

// CRUSH failure domains the plugin uses.
const (
	FailureDomainHost = "host"
	FailureDomainOSD  = "osd"
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
// cluster still provisions. Zero nodes is ErrNoDisks.
func ComputeReplication(requested *int32, nodes int) (Replication, error) {
	if nodes < 1 {
		return Replication{}, ErrNoDisks
	}
	size := int32(min(maxReplicas, nodes))
	var message string
	if requested != nil {
		size, message = clampRequested(*requested, nodes)
	}
	domain := FailureDomainOSD
	if size >= 2 && nodes >= 2 {
		domain = FailureDomainHost
	}
	return Replication{
		Size:                   size,
		FailureDomain:          domain,
		RequireSafeReplicaSize: size > 1,
		Message:                message,
		Nodes:                  nodes,
	}, nil
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
			requested, plural(nodes, "node"), nodes)
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

// DescribeReplicationChange says, for an Event and a condition, how a
// pool's replication changes and what Ceph does about it, with its cause:
// specChanged when the consumer's spec was edited since the sizing it had,
// else the contributing nodes changed (more copies or wider placement mean
// nodes joined). Every change of size or failure domain is described,
// explicit or automatic; a first sizing or an unchanged one is not ("").
func DescribeReplicationChange(oldSize int32, oldDomain string, next Replication, specChanged bool) (reason, message string) {
	if oldSize == 0 || oldSize == next.Size && oldDomain == next.FailureDomain {
		return "", ""
	}
	var effects []string
	switch {
	case next.Size > oldSize:
		effects = append(effects, "Ceph re-replicates every byte in the pool")
	case next.Size < oldSize:
		effects = append(effects, "Ceph drops the extra copies")
	}
	switch {
	case oldDomain == FailureDomainOSD && next.FailureDomain == FailureDomainHost:
		// enableCrushUpdates (replicatedPool) is what lets this reach Ceph.
		effects = append(effects, "Rook gives it a new CRUSH rule that moves the copies onto separate hosts")
	case oldDomain == FailureDomainHost && next.FailureDomain == FailureDomainOSD:
		effects = append(effects, "Rook gives it a new CRUSH rule that lets copies share a host")
	}
	message = fmt.Sprintf("replication changes from %d (%s) to %d (%s): %s",
		oldSize, oldDomain, next.Size, next.FailureDomain, strings.Join(effects, ", and "))
	switch {
	case specChanged:
		reason = ReasonSpecChanged
	case next.Size > oldSize || next.FailureDomain == FailureDomainHost && oldDomain != FailureDomainHost:
		reason = ReasonNodesJoined
	default:
		reason = ReasonNodesLeft
	}
	return reason, message
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
