package main

import (
	"testing"
	"time"
)

func TestPollGap(t *testing.T) {
	for _, tc := range []struct {
		took, want time.Duration
	}{
		{0, minPollGap},
		{50 * time.Millisecond, minPollGap},
		{minPollGap / pollShare, minPollGap},
		{4 * time.Second, 8 * time.Second},
	} {
		if got := pollGap(tc.took); got != tc.want {
			t.Errorf("pollGap(%s) = %s, want %s", tc.took, got, tc.want)
		}
	}
}
