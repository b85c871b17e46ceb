package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// A small run of the benchmark as a smoke test: it completes, and the write
// counts hold (≤ 2 per published disk, none when idle or after a restart).
// No timing is asserted here; `just bench` reports times as ratios.
func TestBenchmarkSmoke(t *testing.T) {
	report, err := Measure(context.Background(), Options{
		RepoRoot: testenv.RepoRoot(),
		Sizes:    []int{5},
		// Two samples: the interleaving and the medians run as in `just bench`.
		Scenario: Scenario{DevicesPerNode: 4, Pools: 2, Block: 2, File: 1, Object: 1, Edits: 2, Idle: 2 * time.Second, FloorWorkers: 8, Samples: 2},
		Out:      &logWriter{t},
	})
	require.NoError(t, err)
	require.Len(t, report.Scales, 1)
	res := report.Scales[0]
	assert.Equal(t, 20, res.Disks)
	require.Len(t, res.Samples, 2)
	for i, s := range res.Samples {
		assert.Positive(t, s.FloorSeconds, "sample %d", i)
		assert.Positive(t, s.LimitSeconds, "sample %d", i)
		assert.Positive(t, s.ConvergeSeconds, "sample %d", i)
		assert.LessOrEqual(t, s.FirstDiskSeconds, s.ConvergeSeconds, "sample %d", i)
	}
	require.NotNil(t, report.WriteLimit, "the first size sweeps the write limit")
	assert.Greater(t, len(report.WriteLimit.Steps), limitFlatSteps)
	assert.Equal(t, report.WriteLimit.Workers, res.LimitWorkers)
	assert.Equal(t, 2, res.Converge.N)
	assert.LessOrEqual(t, res.WritesPerDisk(), TargetWritesPerDisk, "writes by kind: %v", res.ConvergeWritesBy)
	assert.Zero(t, res.IdleWrites, "writes while idle: %v", res.IdleWritesBy)
	assert.Zero(t, res.RestartWrites, "writes after a restart: %v", res.RestartWritesBy)
	assert.Zero(t, res.ReconcileErrors)
	assert.True(t, fanoutOK(res.FanoutWrites, res.Consumers), "fan-out writes %v", res.FanoutWrites)
}

func TestClassify(t *testing.T) {
	cases := map[string]string{
		"/apis/ceph.fundament.io/v1alpha1/disks":                            "POST disks",
		"/apis/ceph.fundament.io/v1alpha1/disks/d1/status":                  "POST disks/status",
		"/api/v1/namespaces/rook-ceph/configmaps":                           "POST configmaps",
		"/apis/ceph.rook.io/v1/namespaces/rook-ceph/cephclusters/rook-ceph": "POST cephclusters",
	}
	for path, want := range cases {
		req := httptestRequest("POST", path)
		assert.Equal(t, want, classify(req), path)
	}
	assert.False(t, isWrite("PATCH leases"))
	assert.False(t, isWrite("WATCH disks"))
	assert.True(t, isWrite("PATCH disks/status"))
	assert.False(t, isWrite("POST selfsubjectreviews"), "a review is answered, not stored")
	assert.False(t, isWrite("POST subjectaccessreviews"))
	assert.True(t, isWrite("POST validatingadmissionpolicies"))
}

func httptestRequest(method, path string) *http.Request {
	return httptest.NewRequest(method, path, nil)
}

type logWriter struct{ t *testing.T }

func (w *logWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
