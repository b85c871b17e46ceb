package bench

import (
	"fmt"
	"slices"
)

// Spread is what several samples of one measure say: their median and
// their range. A difference between two medians that stays inside both
// ranges is noise until more samples say otherwise.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// N is the number of samples.
	N int `json:"n"`
}

// SpreadOf summarises samples (the median of an even count is the mean of
// the middle two). No samples give the zero Spread.
func SpreadOf(samples []float64) Spread {
	if len(samples) == 0 {
		return Spread{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return Spread{Median: median, Min: sorted[0], Max: sorted[n-1], N: n}
}

// Format prints the median and, for more than one sample, the range:
// "3.6 (3.4–4.1)".
func (s Spread) Format(verb string) string {
	if s.N <= 1 {
		return fmt.Sprintf(verb, s.Median)
	}
	return fmt.Sprintf(verb+" ("+verb+"–"+verb+")", s.Median, s.Min, s.Max)
}

// ratios are a[i]/b[i] for every pair with a non-zero b.
func ratios(a, b []float64) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		if b[i] != 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}
