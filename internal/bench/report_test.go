package bench

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConvergenceIsJudgedAtEverySizeByItsMedianRatio(t *testing.T) {
	scale := func(disks int, ratios ...float64) Result {
		r := Result{Disks: disks, FanoutWrites: map[string]int{}}
		for _, x := range ratios {
			r.Samples = append(r.Samples, Sample{FloorSeconds: 1, LimitSeconds: 0.5, ConvergeSeconds: x})
		}
		r.summarise()
		return r
	}
	cases := []struct {
		name   string
		scales []Result
		pass   map[int]bool
	}{
		{"within the target at both sizes", []Result{scale(1000, 1.1, 1.2, 1.3), scale(2500, 1.0, 1.1, 1.2)}, map[int]bool{1000: true, 2500: true}},
		{"one slow sample does not fail a size", []Result{scale(1000, 1.1, 1.2, 3.0)}, map[int]bool{1000: true}},
		{"a small size over the target fails though the largest passes", []Result{scale(1000, 1.3, 1.4, 1.5), scale(2500, 1.1, 1.1, 1.1)}, map[int]bool{1000: false, 2500: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[int]bool{}
			for _, row := range (Report{Scales: tc.scales}).Rows() {
				for _, s := range tc.scales {
					if strings.HasPrefix(row.Metric, "discovery convergence, ") && strings.Contains(row.Metric, fmt.Sprintf(" %d disks", s.Disks)) {
						got[s.Disks] = row.Pass
					}
				}
			}
			assert.Equal(t, tc.pass, got)
		})
	}
}

func TestTheTableShowsBothFloorsAndEverySample(t *testing.T) {
	r := Result{Disks: 1000, LimitWorkers: 32, FanoutWrites: map[string]int{}, Samples: []Sample{
		{FloorSeconds: 2, LimitSeconds: 1, ConvergeSeconds: 2.4}, {FloorSeconds: 2.2, LimitSeconds: 1.1, ConvergeSeconds: 2.5},
	}}
	r.summarise()
	var out strings.Builder
	Report{Scales: []Result{r}, WriteLimit: &WriteLimit{DisksPerStep: 1000, Workers: 32, Steps: []LimitStep{{8, 900}, {16, 1500}, {32, 1800}}}}.WriteTable(&out)
	table := out.String()
	require.Contains(t, table, "against the write limit (32 workers)")
	assert.Contains(t, table, "2.45 (2.40–2.50)", "the plugin's median and range")
	assert.Contains(t, table, "2.10 (2.00–2.20)", "the floor's median and range")
	assert.Contains(t, table, "1.05 (1.00–1.10)", "the write limit's median and range")
	assert.Contains(t, table, "32 workers 1800/s")
	assert.Len(t, regexp.MustCompile(`(?m)^1000\s+[12]\s+2\.[02]0\s+1\.[01]0\s`).FindAllString(table, -1), 2, "a line per sample")
}

func TestFanoutOK(t *testing.T) {
	cases := []struct {
		name   string
		writes map[string]int
		want   bool
	}{
		{"one of each and every consumer once", map[string]int{"PATCH cephclusters": 1, "PATCH diskpools/status": 1, "PATCH disks/status": 1, "PATCH blockstorages/status": 2, "PATCH filestorages/status": 1}, true},
		{"the pool's status twice (its reconcile ran between the CephCluster patch and the disk's)", map[string]int{"PATCH cephclusters": 1, "PATCH diskpools/status": 2, "PATCH disks/status": 1}, true},
		{"the pool's status three times", map[string]int{"PATCH cephclusters": 1, "PATCH diskpools/status": 3}, false},
		{"the CephCluster twice", map[string]int{"PATCH cephclusters": 2, "PATCH diskpools/status": 1}, false},
		{"the disk twice", map[string]int{"PATCH disks/status": 2}, false},
		{"more consumer writes than consumers", map[string]int{"PATCH blockstorages/status": 3, "PATCH filestorages/status": 2}, false},
		{"a write of another kind", map[string]int{"PATCH cephblockpools": 1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, fanoutOK(tc.writes, 4))
		})
	}
}
