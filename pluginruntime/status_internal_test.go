package pluginruntime

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckTransition(t *testing.T) {
	const (
		I = PhaseInstalling
		R = PhaseRunning
		D = PhaseDegraded
		F = PhaseFailed
		U = PhaseUninstalling
	)
	// allowed lists every legal change of phase; every other pair of
	// distinct phases must be refused.
	allowed := map[[2]Phase]string{
		{I, R}: "setup completed",
		{I, D}: "recoverable error during setup",
		{I, F}: "permanent error during setup",
		{I, U}: "deleted while installing",
		{R, D}: "transient error during reconciliation",
		{R, F}: "permanent error while running",
		{R, U}: "deleted while running",
		{D, R}: "the transient error is resolved",
		{D, F}: "permanent error while degraded",
		{D, U}: "deleted while degraded",
		{F, U}: "deleted while failed; cleanup still runs",
		{U, F}: "permanent error during cleanup",
	}
	phases := []Phase{I, R, D, F, U}
	for _, from := range phases {
		for _, to := range phases {
			reason, ok := allowed[[2]Phase{from, to}]
			switch {
			case from == to:
				reason, ok = "staying to update the message", true
			case !ok:
				reason = "not in the lifecycle"
			}
			t.Run(fmt.Sprintf("%s to %s: %s", from, to, reason), func(t *testing.T) {
				err := checkTransition(from, to)
				if ok {
					assert.NoError(t, err)
				} else {
					assert.EqualError(t, err, fmt.Sprintf("illegal phase transition %s → %s", from, to))
				}
			})
		}
	}
	t.Run("an unknown phase is refused", func(t *testing.T) {
		assert.EqualError(t, checkTransition(R, "paused"), `unknown phase "paused"`)
	})
}

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	b := newBackoff(1, 5)
	var got []int
	for range 5 {
		got = append(got, int(b.delay()))
	}
	assert.Equal(t, []int{1, 2, 4, 5, 5}, got)
	b.reset()
	assert.Equal(t, 1, int(b.delay()))
}
