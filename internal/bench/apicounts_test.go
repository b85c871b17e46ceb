package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRequestCounts(t *testing.T) {
	metrics := []byte(`# HELP apiserver_request_total [STABLE] Counter of apiserver requests
apiserver_request_total{code="201",component="apiserver",dry_run="",group="ceph.fundament.io",resource="disks",scope="cluster",subresource="",verb="POST",version="v1alpha1"} 1000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="ceph.fundament.io",resource="disks",scope="cluster",subresource="status",verb="PUT",version="v1alpha1"} 990
apiserver_request_total{code="409",component="apiserver",dry_run="",group="ceph.fundament.io",resource="disks",scope="cluster",subresource="status",verb="PUT",version="v1alpha1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="leases",scope="namespace",subresource="",verb="APPLY",version="v1"} 4
apiserver_request_duration_seconds_bucket{le="0.005",resource="disks",verb="POST"} 7
`)
	counts, err := ParseRequestCounts(metrics)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"POST disks": 1000, "PUT disks/status": 1000, "GET configmaps": 5, "PATCH leases": 4}, counts,
		"keyed as the proxy keys a request, failures included")
	n, _ := writesSince(map[string]int{}, counts)
	assert.Equal(t, 2000, n, "lease renewals are not writes")
	_, err = ParseRequestCounts([]byte("apiserver_request_total{verb=\"POST\"} many\n"))
	assert.Error(t, err, "an unreadable count is an error, not a zero")
}

func TestWaitsBetween(t *testing.T) {
	before := map[string]float64{"queue seconds": 1, "queue count": 10, "work seconds": 2, "work count": 10, "request seconds": 3, "request count": 100, "limiter seconds": 0.5}
	after := map[string]float64{"queue seconds": 3, "queue count": 30, "work seconds": 12, "work count": 30, "request seconds": 7, "request count": 500, "limiter seconds": 0.75}
	assert.Equal(t, Waits{QueueMillis: 100, ReconcileMillis: 500, RequestMillis: 10, LimiterSeconds: 0.25}, waitsBetween(before, after),
		"means over what happened between the readings")
	assert.Equal(t, Waits{}, waitsBetween(after, after), "nothing happened: no division by zero")
}
