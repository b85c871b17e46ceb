package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// instance is one plugin instance (its manager and reconcilers) in this
// process, with a transport it can cut: a process that dies says nothing
// more to the API server, not even that it gives up its lease.
type instance struct {
	name    string
	writes  *writeCounter
	elected <-chan struct{}
	dead    atomic.Bool
	cancel  context.CancelFunc
	done    chan error
}

func startInstance(t *testing.T, h *harness, name string) *instance {
	t.Helper()
	in := &instance{name: name, writes: &writeCounter{}, done: make(chan error, 1)}
	restCfg := configAsPlugin(t, controlPlane.Env(t))
	restCfg.Wrap(in.writes.wrap)
	restCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if in.dead.Load() {
				return nil, errors.New("instance " + name + " is dead")
			}
			return rt.RoundTrip(req)
		})
	})
	scheme, err := newScheme()
	require.NoError(t, err)
	host := &recordingHost{}
	mgr, err := newManager(restCfg, scheme, h.cfg, host, "0", "")
	require.NoError(t, err)
	require.NoError(t, setupReconcilers(mgr, h.cfg, host))
	ctx, cancel := context.WithCancel(h.ctx)
	in.cancel = cancel
	in.elected = mgr.Elected()
	go func() { in.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { in.cancel(); <-in.done })
	return in
}

func (in *instance) isLeader() bool {
	select {
	case <-in.elected:
		return true
	default:
		return false
	}
}

// kill cuts the instance off and stops it without releasing its lease.
func (in *instance) kill() {
	in.dead.Store(true)
	in.cancel()
	<-in.done
	in.done <- nil
}

// stop is a graceful stop: the lease is released on the way out.
func (in *instance) stop(t *testing.T) {
	in.cancel()
	err := <-in.done
	in.done <- nil
	assert.NoError(t, err, "instance %s stops cleanly", in.name)
}

func waitLeader(t *testing.T, h *harness, in *instance, timeout time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	err := testenv.Eventually(h.ctx, timeout, func(context.Context) error {
		if !in.isLeader() {
			return fmt.Errorf("instance %s does not lead", in.name)
		}
		return nil
	})
	require.NoError(t, err)
	return time.Since(began)
}

// During a rolling update two plugin instances run. Leader election (the
// default) lets one of them write; the other writes nothing. When the
// leader dies without a word the other takes over once the lease runs out;
// when it stops gracefully (a rolling update) it hands over at once.
func TestReliabilityTwoInstancesOneWriter(t *testing.T) {
	h := newHarness(t)
	require.True(t, h.cfg.LeaderElection, "leader election is on by default")
	sc := newScenario(t, "lead", 2, 5)
	inv := watchNothingLost(t, controlPlane.Env(t).Config, h.cfg.ClusterNamespace)
	inv.waitWatching()
	inv.protect(sc.claimed...)

	a := startInstance(t, h, "a")
	waitLeader(t, h, a, time.Minute)
	b := startInstance(t, h, "b")
	require.NoError(t, sc.publish(h.ctx, h.c, h.cfg.OperatorNamespace))
	require.NoError(t, sc.request(h.ctx, h.c, h.cfg.ClusterNamespace, time.Minute))
	waitConverged(t, h.ctx, h.c, h.cfg, sc, 2*time.Minute)
	assert.False(t, b.isLeader(), "one leader")
	assert.Positive(t, a.writes.total(), "the leader writes")
	assert.Zero(t, b.writes.total(), "the other instance writes nothing: %v", b.writes.snapshot())

	// The leader dies (SIGKILL, node loss): its lease is not released, so
	// the other instance waits it out, then takes over.
	a.kill()
	died := time.Now()
	joined := "lead-joined"
	data, err := simulate.DevicesJSON(simulate.MixedDevices(joined, 3))
	require.NoError(t, err)
	createReport(t, h.ctx, h.c, simulate.ConfigMap(h.cfg.OperatorNamespace, joined, data))
	waitLeader(t, h, b, 2*time.Minute)
	tookOver := time.Since(died)
	h.waitDisks(joined, 3)
	assert.Positive(t, b.writes.total(), "the new leader writes")
	t.Logf("after the leader died, the other took over in %s (lease duration 15s)", tookOver.Round(100*time.Millisecond))

	// A rolling update: a new instance joins, the leader stops gracefully
	// and hands over without waiting for its lease to run out.
	c := startInstance(t, h, "c")
	time.Sleep(3 * time.Second) // c has tried to acquire and lost
	assert.False(t, c.isLeader(), "one leader")
	assert.Zero(t, c.writes.total(), "the new instance writes nothing while the old one leads")
	b.stop(t)
	stopped := time.Now()
	waitLeader(t, h, c, time.Minute)
	t.Logf("after the leader stopped gracefully, the next took over in %s", time.Since(stopped).Round(100*time.Millisecond))
	bWrites := b.writes.total()
	require.NoError(t, h.c.Delete(h.ctx, simulate.ConfigMap(h.cfg.OperatorNamespace, joined, data)))
	h.eventually("the new leader marks the left node's Disks Missing", func() error {
		for _, d := range h.disksOf(joined) {
			if d.Status.State != "Missing" {
				return fmt.Errorf("%s is %s", d.Name, d.Status.State)
			}
		}
		return nil
	})
	assert.Positive(t, c.writes.total(), "the new leader writes")
	assert.Equal(t, bWrites, b.writes.total(), "the stopped instance writes nothing more")
	inv.check(h.ctx)
}
