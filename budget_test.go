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
		{ConsumerBudget{Kind: "BlockStorage", Size: 3}, CephPools{Pools: 1, CrushRules: 1, PGReplicas: 96}},
		{ConsumerBudget{Kind: "FileStorage", Size: 3}, CephPools{Pools: 2, CrushRules: 2, PGReplicas: 192}},
		// Six metadata pools of 8 PGs and a data pool of 32, three copies each.
		{ConsumerBudget{Kind: "ObjectStorage", Size: 3}, CephPools{Pools: 7, CrushRules: 7, PGReplicas: 240}},
		{ConsumerBudget{Kind: "ObjectStorage", Size: 1}, CephPools{Pools: 7, CrushRules: 7, PGReplicas: 80}},
		// A failure domain that moved (osd to host) left a second rule per pool.
		{ConsumerBudget{Kind: "FileStorage", Size: 2, FailureDomains: []string{"osd", "host"}}, CephPools{Pools: 2, CrushRules: 4, PGReplicas: 128}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, PoolsOf(tc.consumer), "%+v", tc.consumer)
	}
}

func TestSharedPools(t *testing.T) {
	assert.Equal(t, CephPools{Pools: 1, CrushRules: 1, PGReplicas: 3}, SharedPools(nil), ".mgr only")
	assert.Equal(t, CephPools{Pools: 2, CrushRules: 2, PGReplicas: 3 + 16}, SharedPools([]ConsumerBudget{{Kind: "BlockStorage", Size: 3}, {Kind: "ObjectStorage", Size: 2}}),
		".rgw.root once, whatever the number of object stores")
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
		// 1 (.mgr) + 1 (.rgw.root) + 7 per store: the 36th store ends at
		// rule 254; the 37th would need 255 to 261.
		{name: "the 36th object store fits the CRUSH rules", existing: objectStores(35, 3), newcomer: ConsumerBudget{Kind: "ObjectStorage", Name: "s3-new", Size: 3}, osds: 1000},
		{name: "the 37th does not", existing: objectStores(36, 3), newcomer: ConsumerBudget{Kind: "ObjectStorage", Name: "s3-new", Size: 3}, osds: 1000,
			budget: "CRUSH rules", message: "ObjectStorage s3-new needs 7 CRUSH rules; 254 of Ceph's 256 are used (1 by Ceph's .mgr pool, 1 by .rgw.root, 252 by ObjectStorages), 2 left"},
		{name: "a block pool still fits in the last two", existing: objectStores(36, 3), newcomer: ConsumerBudget{Kind: "BlockStorage", Name: "db", Size: 3}, osds: 1000},
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
		{nil, 1},                                    // not created yet: its first rule
		{[]string{"host"}, 1},                       // the rule named after the pool
		{[]string{"osd", "host"}, 2},                // <pool>_host beside it
		{[]string{"osd", "host", "osd"}, 3},         // back: <pool>_osd, a third
		{[]string{"osd", "host", "osd", "host"}, 3}, // <pool>_host exists already
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
