package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSweepDone(t *testing.T) {
	steps := func(rates ...float64) []LimitStep {
		out := make([]LimitStep, len(rates))
		for i, r := range rates {
			out[i] = LimitStep{Workers: 8 << i, WritesPerSecond: r}
		}
		return out
	}
	cases := []struct {
		name  string
		steps []LimitStep
		done  bool
	}{
		{"nothing measured yet", nil, false},
		{"a single step cannot show a limit", steps(700), false},
		{"still growing", steps(700, 900, 1100), false},
		{"one flat step may be noise", steps(700, 900, 910), false},
		{"two flat steps in a row are the limit", steps(700, 900, 910, 880), true},
		{"falling after the peak is the limit", steps(700, 1000, 800, 700), true},
		{"a flat step then growth again keeps going", steps(700, 900, 910, 1000), false},
		{"growth under 5% is flat", steps(1000, 1040, 1030), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.done, SweepDone(tc.steps))
		})
	}
}

func TestWriteLimitChoosesTheFastestStep(t *testing.T) {
	l := WriteLimit{Steps: []LimitStep{{8, 700}, {16, 1000}, {32, 990}, {64, 950}}}
	assert.Equal(t, 16, l.best().Workers)
}

func TestFloorDisksAreThePluginsSize(t *testing.T) {
	disks := floorDisks(2, 7)
	assert.Len(t, disks, 14)
	names := map[string]bool{}
	for _, d := range disks {
		names[d.Name] = true
		assert.Len(t, d.Name, len("bench-node-0000-")+16, "as long as the plugin's Disk names")
		assert.Len(t, d.Labels, 2, "two labels, as the plugin's")
		assert.NotEmpty(t, d.Status.StablePath)
		assert.NotNil(t, d.Status.LastSeenTime)
	}
	assert.Len(t, names, 14, "names are unique")
	assert.Equal(t, "InUse", string(disks[3].Status.State), "every seventh device from the fourth is in use")
	assert.NotEmpty(t, disks[3].Status.Reason)
}
