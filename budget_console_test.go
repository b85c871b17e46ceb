package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheConsoleBudgetIsBudgetGos: the consumer sheets predict Ceph's
// budget from console/budget.js's data; each number there must be what
// PoolsOf, SharedPools and the limits here say, or a sheet would promise a
// consumer the plugin then refuses.
func TestTheConsoleBudgetIsBudgetGos(t *testing.T) {
	source, err := os.ReadFile("console/budget.js")
	require.NoError(t, err)
	constant := func(name string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^export const ` + name + ` = ([0-9.]+);$`).FindSubmatch(source)
		require.NotNil(t, m, "console/budget.js exports %s", name)
		v, err := strconv.ParseFloat(string(m[1]), 64)
		require.NoError(t, err)
		return v
	}
	assert.EqualValues(t, CephMaxCrushRules, constant("CEPH_MAX_CRUSH_RULES"))
	assert.EqualValues(t, CephDefaultMaxPGPerOSD, constant("CEPH_DEFAULT_MAX_PG_PER_OSD"))
	assert.EqualValues(t, CephDefaultHardRatio, constant("CEPH_DEFAULT_HARD_RATIO"))
	assert.EqualValues(t, CephDefaultTargetPGPerOSD, constant("CEPH_DEFAULT_TARGET_PG_PER_OSD"))
	// The console's autoscalerGrowth is checked in the page against these
	// (internal/devconsole budgetCases, "the autoscaler's growth is
	// budget.go's").
	assert.Equal(t, []int{134, 267, 400}, []int{AutoscalerGrowth(1, 100), AutoscalerGrowth(2, 100), AutoscalerGrowth(3, 100)})
	assert.EqualValues(t, cephDefaultFullRatio, constant("CEPH_DEFAULT_FULL_RATIO"))
	assert.EqualValues(t, CrushRulesPerPool(nil), constant("CRUSH_RULES_PER_NEW_POOL"))
	assert.EqualValues(t, SharedPools(nil).PGReplicas, constant("MGR_PG_COPIES"))
	withStore := SharedPools([]ConsumerBudget{{Kind: "ObjectStorage", Size: 1}})
	assert.EqualValues(t, withStore.PGReplicas-SharedPools(nil).PGReplicas, constant("RGW_ROOT_PGS_PER_REPLICA"))

	kinds := regexp.MustCompile(`(?m)^  (\w+): \{ pools: (\d+), pgsPerReplica: (\d+), metadataPgsPerReplica: (\d+) \},$`).FindAllSubmatch(source, -1)
	require.Len(t, kinds, len(consumerKinds), "one line per consumer kind in POOLS_PER_KIND")
	for _, m := range kinds {
		kind := string(m[1])
		pools, _ := strconv.Atoi(string(m[2]))
		pgs, _ := strconv.Atoi(string(m[3]))
		metadataPGs, _ := strconv.Atoi(string(m[4]))
		sized := func(size, metadataSize int32) CephPools {
			return PoolsOf(ConsumerBudget{Kind: kind, Size: size, MetadataSize: metadataSize})
		}
		want := sized(1, 1)
		assert.Equal(t, want.Pools, pools, "%s pools", kind)
		assert.Equal(t, sized(2, 1).PGReplicas-want.PGReplicas, pgs, "%s PG copies per replica of its data", kind)
		assert.Equal(t, sized(1, 2).PGReplicas-want.PGReplicas, metadataPGs, "%s PG copies per replica of its metadata pools sized apart", kind)
		assert.Equal(t, want.CrushRules, pools*CrushRulesPerPool(nil), "%s rules", kind)
	}
}
