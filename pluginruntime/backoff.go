package pluginruntime

import (
	"context"
	"time"
)

// backoff doubles a delay from initial up to max. Retries of a failing
// install must not hammer the API server, yet the first retry should come
// quickly because most transient errors (a CRD not yet established) clear
// within seconds.
type backoff struct {
	initial, max, next time.Duration
}

func newBackoff(initial, max time.Duration) *backoff {
	return &backoff{initial: initial, max: max, next: initial}
}

// delay returns the next delay and doubles the one after it.
func (b *backoff) delay() time.Duration {
	d := b.next
	b.next = min(2*b.next, b.max)
	return d
}

func (b *backoff) reset() { b.next = b.initial }

// sleep waits d or until ctx ends, and reports whether the full delay passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
