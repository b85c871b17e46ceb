package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSpreadOf(t *testing.T) {
	cases := []struct {
		name    string
		samples []float64
		want    Spread
	}{
		{"no samples say nothing", nil, Spread{}},
		{"one sample is its own median and range", []float64{2}, Spread{Median: 2, Min: 2, Max: 2, N: 1}},
		{"an odd count's median is the middle one, in any order", []float64{3, 1, 2}, Spread{Median: 2, Min: 1, Max: 3, N: 3}},
		{"an even count's median is the mean of the middle two", []float64{4, 1, 2, 3}, Spread{Median: 2.5, Min: 1, Max: 4, N: 4}},
		{"one outlier moves the range, not the median", []float64{1.0, 1.1, 9}, Spread{Median: 1.1, Min: 1, Max: 9, N: 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SpreadOf(tc.samples))
		})
	}
}

func TestSpreadFormat(t *testing.T) {
	assert.Equal(t, "2.00", Spread{Median: 2, Min: 2, Max: 2, N: 1}.Format("%.2f"), "one sample has no range")
	assert.Equal(t, "2.00 (1.00–3.00)", Spread{Median: 2, Min: 1, Max: 3, N: 3}.Format("%.2f"))
}

func TestRatiosPairSamples(t *testing.T) {
	assert.Equal(t, []float64{2, 3}, ratios([]float64{2, 6, 1}, []float64{1, 2}), "pairs beyond the shorter list are dropped")
	assert.Equal(t, []float64{2}, ratios([]float64{5, 2}, []float64{0, 1}), "a zero floor gives no ratio")
}

func TestSummariseTakesTheWorstWritesAndSumsErrors(t *testing.T) {
	res := Result{Disks: 10, Samples: []Sample{
		{FloorSeconds: 1, LimitSeconds: 0.5, ConvergeSeconds: 1.2, ConvergeWrites: 20, ReconcileErrors: 1},
		{FloorSeconds: 2, LimitSeconds: 1, ConvergeSeconds: 2.6, ConvergeWrites: 21, ConvergeWritesBy: map[string]int{"POST disks": 11}, ReconcileRetries: 2},
		{FloorSeconds: 1.5, LimitSeconds: 1, ConvergeSeconds: 1.65, ConvergeWrites: 20},
	}}
	res.summarise()
	assert.Equal(t, Spread{Median: 1.65, Min: 1.2, Max: 2.6, N: 3}, res.Converge)
	assert.Equal(t, Spread{Median: 1.5, Min: 1, Max: 2, N: 3}, res.Floor)
	assert.InDelta(t, 1.2, res.FloorRatio.Median, 1e-9, "each sample against its own floor: 1.2, 1.3, 1.1")
	assert.InDelta(t, 1.1, res.FloorRatio.Min, 1e-9)
	assert.InDelta(t, 2.6, res.LimitRatio.Max, 1e-9)
	assert.Equal(t, 21, res.ConvergeWrites)
	assert.Equal(t, map[string]int{"POST disks": 11}, res.ConvergeWritesBy)
	assert.Equal(t, 1.0, res.ReconcileErrors)
	assert.Equal(t, 2.0, res.ReconcileRetries)
}
