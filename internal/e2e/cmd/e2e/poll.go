package main

import (
	"context"
	"time"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// The e2e's waits poll what Ceph and the API server say. Most of what they
// read goes through the Ceph CLI (kubectl exec into the operator's pod, a
// Python process started per command, about a CPU-second each on this
// machine): polled back to back, as testenv.Eventually's 100 ms would, the
// e2e's own reads kept a core busy and pushed the load of a machine that
// runs three nodes and eleven Ceph daemons past 30.
const (
	// minPollGap is the least time between two reads.
	minPollGap = 2 * time.Second
	// pollShare: a read that took d is followed by a gap of pollShare × d,
	// so polling never takes more than 1/(1+pollShare) of the time it waits.
	pollShare = 2
)

// pollGap is the pause after a read that took took.
func pollGap(took time.Duration) time.Duration {
	return max(minPollGap, pollShare*took)
}

// until calls cond until it returns nil, pausing pollGap between calls,
// and fails with cond's last error once timeout has passed.
func (r *run) until(timeout time.Duration, cond func(context.Context) error) error {
	return testenv.Poll(r.ctx, timeout, pollGap, cond)
}
