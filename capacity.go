package main

import (
	"math"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// cephDefaultFullRatio is mon_osd_full_ratio's default: Ceph refuses writes
// once an OSD is this full (Rook v1.18 sets the ratio only when the
// CephCluster's spec.storage.fullRatio says so: cluster.go
// setClusterFullRatio).
const cephDefaultFullRatio = 0.95

// RawCapacity is what every consumer's usable capacity is computed from:
// the one OSD set they all share.
type RawCapacity struct {
	// CephBytes is the CephCluster's status.ceph.capacity.bytesTotal, what
	// Ceph reports of its OSDs (every minute: Rook's cephstatus.go); 0
	// until it reports.
	CephBytes int64
	// DiskBytes is the summed size of the Disks the DiskPools feed.
	DiskBytes int64
	// FullRatio is the CephCluster's spec.storage.fullRatio; 0 when unset
	// (Ceph's default applies).
	FullRatio float64
}

// OnTier is the raw capacity a pool on tier's class is placed on: the
// whole OSD set for a pool without a class; for a class, the sizes of its
// disks (Ceph reports its capacity for every OSD together only).
func (raw RawCapacity) OnTier(tier Tier) RawCapacity {
	if tier.Class == "" {
		return raw
	}
	return RawCapacity{DiskBytes: tier.RawBytes, FullRatio: raw.FullRatio}
}

// UsableCapacity is what a consumer with replicas copies can store over
// the shared OSD set: raw × full ratio / replicas, raw being what Ceph
// reports once it does and the Disks' sizes before. Nil when there is no
// capacity to speak of yet.
//
// It is an upper bound, as Ceph's own MAX AVAIL is not: every consumer
// writes to the same OSDs, and Ceph stops at the fullest one.
func UsableCapacity(raw RawCapacity, replicas int32) *cephv1alpha1.ConsumerCapacity {
	bytes, source := raw.CephBytes, cephv1alpha1.CapacityFromCeph
	if bytes <= 0 {
		bytes, source = raw.DiskBytes, cephv1alpha1.CapacityFromDisks
	}
	if bytes <= 0 || replicas < 1 {
		return nil
	}
	ratio := raw.FullRatio
	if ratio <= 0 || ratio > 1 {
		ratio = cephDefaultFullRatio
	}
	usable := int64(math.Floor(float64(bytes) * ratio / float64(replicas)))
	return &cephv1alpha1.ConsumerCapacity{
		Usable:           message.Bytes(usable),
		UsableBytes:      usable,
		RawBytes:         bytes,
		FullRatioPercent: int32(math.Round(ratio * 100)),
		Source:           source,
	}
}
