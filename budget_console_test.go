package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
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
	// (internal/devconsole TestBudgetInBrowser, "the autoscaler's growth is
	// budget.go's"); its crushRulesPerPool against CrushRulesPerPool's
	// tables there, and the classes' rules and PG copies per OSD in
	// TestTheConsoleBudgetDecidesAsBudgetGo's cases.
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

// budgetCase is one of testdata/budget-cases.json, which budget.js decides
// too (internal/devconsole TestBudgetInBrowser): both must come to want.
type budgetCase struct {
	Name     string
	OSDs     int
	Disks    map[cephv1alpha1.DiskType]int
	Existing []caseConsumer
	Newcomer caseConsumer
	Want     budgetOutcome
}

// caseConsumer is a consumer placed as a case says (as budgetOf makes a
// ConsumerBudget of one whose Rook object holds one placement, or none).
type caseConsumer struct {
	Count                      int
	Kind, Name                 string
	Replicas, MetadataReplicas int32
	FailureDomain              string
	DeviceClass, MetadataClass cephv1alpha1.DiskType
	Placed                     *bool
	CephBudget                 *cephv1alpha1.CephBudgetUse
}

type budgetOutcome struct {
	CrushRules int    `json:"crushRules"`
	Takes      int    `json:"takes"`
	PGCopies   int    `json:"pgCopies"`
	Over       string `json:"over"`
	PGPerOSD   int    `json:"pgPerOSD"`
	Grown      int    `json:"grown"`
	Budget     string `json:"budget"`
	Warned     bool   `json:"warned"`
}

func (c caseConsumer) budget(name string) ConsumerBudget {
	b := ConsumerBudget{Kind: c.Kind, Name: name, Size: c.Replicas, DeviceClass: c.DeviceClass, MetadataClass: c.MetadataClass}
	if c.Kind == "BlockStorage" {
		b.MetadataClass = c.DeviceClass // no metadata pools: they go with the data
	} else {
		b.MetadataSize = cmp.Or(c.MetadataReplicas, c.Replicas) // as the data's when the case does not say
	}
	if c.Placed == nil || *c.Placed {
		b.FailureDomains = []string{PoolPlacement(c.FailureDomain, b.DeviceClass)}
		b.MetadataFailureDomains = []string{PoolPlacement(c.FailureDomain, b.MetadataClass)}
	}
	return b
}

// TestTheConsoleBudgetDecidesAsBudgetGo: what CheckBudget decides in each
// shared case, with the figures its message gives (busiestOSDs'), and each
// cephBudget the cases give is PoolsOf's.
func TestTheConsoleBudgetDecidesAsBudgetGo(t *testing.T) {
	raw, err := os.ReadFile("testdata/budget-cases.json")
	require.NoError(t, err)
	var file struct{ Cases []budgetCase }
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Cases)
	limits := CephBudgetLimits(CephDefaultMaxPGPerOSD)
	for _, tc := range file.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			var existing []ConsumerBudget
			for _, c := range tc.Existing {
				for i := range max(c.Count, 1) {
					b := c.budget(fmt.Sprintf("%s-%d", c.Name, i))
					if c.CephBudget != nil {
						require.Equal(t, c.CephBudget, PoolsOf(b).Use(), "%s's cephBudget is PoolsOf's", c.Name)
					}
					existing = append(existing, b)
				}
			}
			var disks []*cephv1alpha1.Disk
			for class, n := range tc.Disks {
				for i := range n {
					disks = append(disks, &cephv1alpha1.Disk{Status: cephv1alpha1.DiskStatus{NodeName: fmt.Sprintf("node-%d", i%3), Type: class}})
				}
			}
			tiers := TiersOf(disks)
			newcomer := tc.Newcomer.budget(tc.Newcomer.Name)
			used, all := TotalPools(existing), TotalPools(append(slices.Clone(existing), newcomer))
			load := busiestOSDs(all.byClass, all.byClass.minus(used.byClass), tc.OSDs, tiers)
			verdict := CheckBudget(existing, newcomer, tc.OSDs, tiers, limits)
			got := budgetOutcome{
				CrushRules: all.CrushRules, Takes: all.CrushRules - used.CrushRules, PGCopies: all.PGReplicas, Over: load.describe(),
				PGPerOSD: load.pgs / load.osds, Grown: (load.pgs + AutoscalerGrowth(load.osds, limits.TargetPGsPerOSD)) / load.osds,
				Budget: verdict.Budget, Warned: verdict.Warning != "",
			}
			assert.Equal(t, tc.Want, got)
			if said := verdict.Message + verdict.Warning; verdict.Budget != "CRUSH rules" && said != "" {
				assert.Contains(t, said, fmt.Sprintf(" placement groups to %d per OSD over %s ", got.PGPerOSD, got.Over), "the figures are CheckBudget's")
			}
		})
	}
}
