package controllerruntime

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// controller-runtime exports client-go's request counts only; where an API
// request's time goes — waiting for the client's own rate limiter, or for
// the API server — is what an operator asks when a plugin is slow, so the
// manager's metrics carry both, by verb (the URL would make a series per
// object).
var (
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_request_duration_seconds",
		Help:    "Time of an API request, from sending it to its answer, by verb.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"verb"})
	rateLimiterDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_rate_limiter_duration_seconds",
		Help:    "Time an API request waited for the client's rate limiter (QPS and burst), by verb.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"verb"})
	registerClientMetrics sync.Once
)

// latencyByVerb observes client-go's latencies into a histogram by verb.
type latencyByVerb struct{ *prometheus.HistogramVec }

func (l latencyByVerb) Observe(_ context.Context, verb string, _ url.URL, latency time.Duration) {
	l.WithLabelValues(verb).Observe(latency.Seconds())
}

// exportClientLatencies registers the two histograms once per process and
// points client-go at them. client-go's own Register runs once per process
// and controller-runtime has already called it (for the request counts),
// so its variables are set here directly, before any client is made.
func exportClientLatencies() {
	registerClientMetrics.Do(func() {
		ctrlmetrics.Registry.MustRegister(requestDuration, rateLimiterDuration)
		clientmetrics.RequestLatency = latencyByVerb{requestDuration}
		clientmetrics.RateLimiterLatency = latencyByVerb{rateLimiterDuration}
	})
}
