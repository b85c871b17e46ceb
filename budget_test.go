package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPoolsOf(t *testing.T) {
	tests := []struct {
		consumer ConsumerBudget
		want     CephPools
	}{
		// Two rules a pool: the one named after it and <pool>_<domain>.
		{ConsumerBudget{Kind: "BlockStorage", Size: 3}, CephPools{Pools: 1, CrushRules: 2, PGReplicas: 96}},
		{ConsumerBudget{Kind: "FileStorage", Size: 3}, CephPools{Pools: 2, CrushRules: 4, PGReplicas: 192}},
		// Six metadata pools of 8 PGs and a data pool of 32, three copies each.
		{ConsumerBudget{Kind: "ObjectStorage", Size: 3}, CephPools{Pools: 7, CrushRules: 14, PGReplicas: 240}},
		{ConsumerBudget{Kind: "ObjectStorage", Size: 1}, CephPools{Pools: 7, CrushRules: 14, PGReplicas: 80}},
		// A failure domain that moved (osd to host) left its rule behind.
		{ConsumerBudget{Kind: "FileStorage", Size: 2, FailureDomains: []string{"osd", "host"}}, CephPools{Pools: 2, CrushRules: 6, PGReplicas: 128}},
		// One copy of the data asked for on three nodes: the metadata pools
		// keep the automatic three (6 × 8 × 3 + 32 × 1), not one (80).
		{ConsumerBudget{Kind: "ObjectStorage", Size: 1, MetadataSize: 3}, CephPools{Pools: 7, CrushRules: 14, PGReplicas: 176}},
		// The metadata pools moved from osd to host while the data pool,
		// one copy, stayed on osd: a rule left behind by each metadata pool.
		{ConsumerBudget{Kind: "ObjectStorage", Size: 1, MetadataSize: 3, FailureDomains: []string{"osd"}, MetadataFailureDomains: []string{"osd", "host"}},
			CephPools{Pools: 7, CrushRules: 6*3 + 2, PGReplicas: 176}},
		// The other way round: the data pool moved, the metadata pools not.
		{ConsumerBudget{Kind: "ObjectStorage", Size: 2, MetadataSize: 2, FailureDomains: []string{"osd", "host"}, MetadataFailureDomains: []string{"host"}},
			CephPools{Pools: 7, CrushRules: 6*2 + 3, PGReplicas: 160}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, PoolsOf(tc.consumer), "%+v", tc.consumer)
	}
}

func TestSharedPools(t *testing.T) {
	assert.Equal(t, CephPools{Pools: 1, CrushRules: 1, PGReplicas: 3}, SharedPools(nil), ".mgr only")
	assert.Equal(t, CephPools{Pools: 2, CrushRules: 3, PGReplicas: 3 + 16}, SharedPools([]ConsumerBudget{{Kind: "BlockStorage", Size: 3}, {Kind: "ObjectStorage", Size: 2}}),
		".rgw.root once, whatever the number of object stores")
	assert.Equal(t, CephPools{Pools: 2, CrushRules: 1 + 3, PGReplicas: 3 + 24}, SharedPools([]ConsumerBudget{
		{Kind: "ObjectStorage", Size: 3, FailureDomains: []string{"osd", "host"}}, {Kind: "BlockStorage", Size: 3, FailureDomains: []string{"osd", "host", "osd"}},
	}), ".rgw.root keeps a rule for each failure domain the object stores' metadata pools have had, as they do")
	assert.Equal(t, CephPools{Pools: 2, CrushRules: 1 + 3, PGReplicas: 3 + 16}, SharedPools([]ConsumerBudget{
		{Kind: "ObjectStorage", Size: 2, FailureDomains: []string{"host"}}, {Kind: "ObjectStorage", Size: 1, FailureDomains: []string{"osd"}},
	}), "every store reconciles .rgw.root to its own metadata pool spec: the domains of all of them")
	assert.Equal(t, CephPools{Pools: 2, CrushRules: 1 + 3, PGReplicas: 3 + 24}, SharedPools([]ConsumerBudget{
		{Kind: "ObjectStorage", Size: 1, MetadataSize: 3, FailureDomains: []string{"osd"}, MetadataFailureDomains: []string{"osd", "host"}},
	}), ".rgw.root takes the metadata pools' size and history, not the data pool's")
}

func objectStores(n int, size int32) []ConsumerBudget {
	var out []ConsumerBudget
	for i := range n {
		out = append(out, ConsumerBudget{Kind: "ObjectStorage", Name: fmt.Sprintf("s3-%d", i), Size: size})
	}
	return out
}

func TestCheckBudget(t *testing.T) {
	limits := BudgetLimits{CrushRules: CephMaxCrushRules, MaxPGsPerOSD: CephDefaultMaxPGPerOSD}
	tests := []struct {
		name     string
		existing []ConsumerBudget
		newcomer ConsumerBudget
		osds     int
		budget   string // "" fits
		message  string
	}{
		// 1 (.mgr) + 2 (.rgw.root) + 14 per store: the 18th store ends at
		// rule 255; the 19th would need 256 to 269.
		{name: "the 18th object store fits the CRUSH rules", existing: objectStores(17, 3), newcomer: ConsumerBudget{Kind: "ObjectStorage", Name: "s3-new", Size: 3}, osds: 1000},
		{name: "the 19th does not", existing: objectStores(18, 3), newcomer: ConsumerBudget{Kind: "ObjectStorage", Name: "s3-new", Size: 3}, osds: 1000,
			budget: "CRUSH rules", message: "ObjectStorage s3-new needs 14 CRUSH rules; 255 of Ceph's 256 are used (1 by Ceph's .mgr pool, 2 by .rgw.root, 252 by ObjectStorages), 1 left"},
		// 17 stores and five block pools: 251 rules, 5 left.
		{name: "a block pool fits where a store does not", existing: append(objectStores(17, 3), blockStores(5)...), newcomer: ConsumerBudget{Kind: "BlockStorage", Name: "db", Size: 3}, osds: 1000},
		{name: "the store does not", existing: append(objectStores(17, 3), blockStores(5)...), newcomer: ConsumerBudget{Kind: "ObjectStorage", Name: "s3-new", Size: 3}, osds: 1000,
			budget: "CRUSH rules", message: "251 of Ceph's 256 are used (1 by Ceph's .mgr pool, 2 by .rgw.root, 238 by ObjectStorages, 10 by BlockStorages), 5 left"},
		// Three OSDs, size 3: every PG copy lands on each OSD. 250 × 3 = 750
		// PG copies; .mgr takes 3, each block pool 96.
		{name: "seven block pools on three OSDs", existing: blockStores(6), newcomer: ConsumerBudget{Kind: "BlockStorage", Name: "db-new", Size: 3}, osds: 3},
		{name: "the eighth passes 250 per OSD", existing: blockStores(7), newcomer: ConsumerBudget{Kind: "BlockStorage", Name: "db-new", Size: 3}, osds: 3,
			budget: "placement groups per OSD", message: "BlockStorage db-new would bring placement groups to 257 per OSD over 3 OSDs (it adds 96 PG copies to 675); Ceph refuses more than 250 (mon_max_pg_per_osd): add disks"},
		{name: "more OSDs make room", existing: blockStores(7), newcomer: ConsumerBudget{Kind: "BlockStorage", Name: "db-new", Size: 3}, osds: 4},
		{name: "no OSDs yet: nothing to check", existing: blockStores(7), newcomer: ConsumerBudget{Kind: "BlockStorage", Name: "db-new", Size: 3}, osds: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckBudget(tc.existing, tc.newcomer, tc.osds, limits)
			assert.Equal(t, tc.budget, got.Budget, got.Message)
			assert.Contains(t, got.Message, tc.message)
		})
	}
	t.Run("a raised mon_max_pg_per_osd is honoured", func(t *testing.T) {
		raised := limits
		raised.MaxPGsPerOSD = 500
		assert.Empty(t, CheckBudget(blockStores(7), ConsumerBudget{Kind: "BlockStorage", Name: "db-new", Size: 3}, 3, raised).Budget)
	})
}

func blockStores(n int) []ConsumerBudget {
	var out []ConsumerBudget
	for i := range n {
		out = append(out, ConsumerBudget{Kind: "BlockStorage", Name: fmt.Sprintf("db-%d", i), Size: 3})
	}
	return out
}

func TestCrushRulesPerPool(t *testing.T) {
	tests := []struct {
		domains []string
		want    int
	}{
		{nil, 2},                            // not made yet: it will have two
		{[]string{"host"}, 2},               // <pool>, and <pool>_host Rook moves it to at once
		{[]string{"osd", "host"}, 3},        // <pool>_osd stays beside <pool>_host
		{[]string{"osd", "host", "osd"}, 3}, // back on <pool>_osd, which exists
		{[]string{"osd", "host", "osd", "host"}, 3},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, CrushRulesPerPool(tc.domains), "%v", tc.domains)
	}
}

func TestNextFailureDomains(t *testing.T) {
	tests := []struct {
		recorded, current, want, next string
	}{
		{"", "", "host", "host"},           // created
		{"host", "host", "host", "host"},   // unchanged
		{"osd", "osd", "host", "osd,host"}, // moved
		{"osd,host", "host", "osd", "osd,host,osd"},
		{"", "osd", "host", "osd,host"}, // written before the record: its current domain first
		{"", "osd", "osd", "osd"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.next, NextFailureDomains(tc.recorded, tc.current, tc.want), "%+v", tc)
	}
}
