package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestUsableCapacity(t *testing.T) {
	const tib = int64(1) << 40
	cases := []struct {
		name     string
		raw      RawCapacity
		replicas int32
		want     *cephv1alpha1.ConsumerCapacity
	}{
		{"nothing yet", RawCapacity{}, 3, nil},
		{"Disks before Ceph reports, Ceph's default full ratio", RawCapacity{DiskBytes: 3 * tib}, 3,
			&cephv1alpha1.ConsumerCapacity{Usable: "972.8 GiB", UsableBytes: 1044536046387, RawBytes: 3 * tib, FullRatioPercent: 95, Source: cephv1alpha1.CapacityFromDisks}},
		{"Ceph's report wins over the Disks", RawCapacity{CephBytes: 2 * tib, DiskBytes: 3 * tib}, 1,
			&cephv1alpha1.ConsumerCapacity{Usable: "1.9 TiB", UsableBytes: 2089072092774, RawBytes: 2 * tib, FullRatioPercent: 95, Source: cephv1alpha1.CapacityFromCeph}},
		{"a full ratio set on the CephCluster", RawCapacity{CephBytes: 2 * tib, FullRatio: 0.9}, 2,
			&cephv1alpha1.ConsumerCapacity{Usable: "921.6 GiB", UsableBytes: 989560464998, RawBytes: 2 * tib, FullRatioPercent: 90, Source: cephv1alpha1.CapacityFromCeph}},
		{"a nonsense full ratio falls back to Ceph's default", RawCapacity{DiskBytes: 2 * tib, FullRatio: 7}, 2,
			&cephv1alpha1.ConsumerCapacity{Usable: "972.8 GiB", UsableBytes: 1044536046387, RawBytes: 2 * tib, FullRatioPercent: 95, Source: cephv1alpha1.CapacityFromDisks}},
		{"no replica count, no figure", RawCapacity{DiskBytes: tib}, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, UsableCapacity(tc.raw, tc.replicas))
		})
	}
}

// TestUsableCapacityHalvesWithReplicas: the replica count is the divisor,
// so a consumer's figure is what it would be alone on the OSDs.
func TestUsableCapacityHalvesWithReplicas(t *testing.T) {
	raw := RawCapacity{CephBytes: 6 << 40}
	one, two, three := UsableCapacity(raw, 1), UsableCapacity(raw, 2), UsableCapacity(raw, 3)
	assert.Equal(t, one.UsableBytes/2, two.UsableBytes)
	assert.Equal(t, one.UsableBytes/3, three.UsableBytes)
}
