package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A hostile report is a devices array of empty entries that fills the
// ConfigMap and lies far past the plugin's 4,096-entry cap.
func TestHostileDevices(t *testing.T) {
	for _, size := range []int{4, 5, 100, hostileConfigMapBytes} {
		data := hostileDevices(size)
		assert.LessOrEqual(t, len(data), size, "size %d", size)
		assert.Greater(t, len(data), size-3, "size %d: filled", size)
		var entries []map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &entries), "size %d", size)
		for _, e := range entries {
			assert.Empty(t, e)
		}
	}
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(hostileDevices(hostileConfigMapBytes)), &entries))
	assert.Greater(t, len(entries), 300_000, "1 MiB holds about 350,000 empty entries")
}

// The hostile row judges the peak against the resident memory before, and
// appears only when the phase ran.
func TestHostileRowIsJudgedAgainstTheMemoryBefore(t *testing.T) {
	row := func(r Result) (Row, bool) {
		r.FanoutWrites = map[string]int{}
		for _, row := range (Report{Scales: []Result{r}}).Rows() {
			if strings.Contains(row.Metric, "hostile") {
				return row, true
			}
		}
		return Row{}, false
	}
	_, shown := row(Result{})
	assert.False(t, shown, "no hostile phase, no row")
	for _, tc := range []struct {
		before, peak int64
		pass         bool
	}{{60 << 20, 70 << 20, true}, {60 << 20, 90 << 20, true}, {60 << 20, 400 << 20, false}} {
		got, shown := row(Result{HostileConfigMaps: 8, HostileBeforeBytes: tc.before, HostilePeakRSSBytes: tc.peak})
		require.True(t, shown)
		assert.Equal(t, tc.pass, got.Pass, "%+v", got)
	}
}
