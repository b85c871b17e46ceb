package devconsole

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// proxyTo is a kube-api-proxy in front of an upstream that records what
// reached it, with a token it accepts.
func proxyTo(t *testing.T) (*kubeProxy, string, <-chan *http.Request) {
	t.Helper()
	seen := make(chan *http.Request, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Clone(r.Context())
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(upstream.Close)
	target, err := url.Parse(upstream.URL)
	require.NoError(t, err)
	tokens := newTokens(time.Hour)
	token, _ := tokens.issue()
	return &kubeProxy{
		clusterID: "dev",
		tokens:    tokens,
		policy: newPolicy([]definition.AllowedResource{
			{Group: "ceph.fundament.io", Version: "v1alpha1", Resource: "diskpools", Verbs: []string{"list", "patch"}},
			{Version: "v1", Resource: "configmaps", Verbs: []string{"get"}},
		}),
		upstream:  target,
		transport: http.DefaultTransport,
		log:       slog.New(slog.DiscardHandler),
	}, token, seen
}

// A page (or anything holding a token) sets whatever headers it likes; the
// API server must see the proxy's credentials and the two headers an API
// call needs, nothing that could change who is asking.
func TestKubeProxyForwardsNoCredentialHeaders(t *testing.T) {
	p, token, seen := proxyTo(t)
	r := httptest.NewRequest(http.MethodPatch, "/clusters/dev/apis/ceph.fundament.io/v1alpha1/diskpools/p", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("Content-Type", "application/merge-patch+json")
	r.Header.Set("Accept", "application/json")
	hostile := map[string]string{
		"Impersonate-User":         "system:admin",
		"Impersonate-Group":        "system:masters",
		"Impersonate-Uid":          "1",
		"Impersonate-Extra-Scopes": "all",
		"X-Remote-User":            "system:admin",
		"X-Remote-Group":           "system:masters",
		"X-Remote-Extra-Scopes":    "all",
		"Proxy-Authorization":      "Basic YWRtaW46YWRtaW4=",
		"Cookie":                   "session=stolen",
		"Origin":                   "http://evil.example",
		"X-Forwarded-For":          "10.0.0.1",
	}
	for name, value := range hostile {
		r.Header.Set(name, value)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())

	got := <-seen
	for name := range hostile {
		assert.Empty(t, got.Header.Values(name), name)
	}
	assert.Empty(t, got.Header.Values("Authorization"), "the page's token never reaches the API server")
	assert.Equal(t, "application/merge-patch+json", got.Header.Get("Content-Type"))
	assert.Equal(t, "application/json", got.Header.Get("Accept"))
}

// What the API server receives is what the proxy checked: the path rebuilt
// from the parsed parts, escaped once, and the query re-encoded from the
// values the verb was read from.
func TestKubeProxyForwardsWhatItChecked(t *testing.T) {
	tests := []struct {
		name, path, wantPath, wantQuery string
	}{
		{"a semicolon pair the API server might split is dropped", "/apis/ceph.fundament.io/v1alpha1/diskpools?limit=1;watch=true", "/apis/ceph.fundament.io/v1alpha1/diskpools", ""},
		{"a list's other parameters pass re-encoded", "/apis/ceph.fundament.io/v1alpha1/diskpools?watch=false&labelSelector=a%3Db", "/apis/ceph.fundament.io/v1alpha1/diskpools", "labelSelector=a%3Db&watch=false"},
		{"a trailing slash is not passed on", "/apis/ceph.fundament.io/v1alpha1/diskpools/", "/apis/ceph.fundament.io/v1alpha1/diskpools", ""},
		{"an escaped letter arrives as the letter", "/api/v1/namespaces/apps/config%6Daps/c", "/api/v1/namespaces/apps/configmaps/c", ""},
		{"a percent in a name is escaped once", "/api/v1/namespaces/apps/configmaps/a%25b", "/api/v1/namespaces/apps/configmaps/a%25b", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, token, seen := proxyTo(t)
			r := httptest.NewRequest(http.MethodGet, "/clusters/dev"+tc.path, nil)
			r.Header.Set("Authorization", "Bearer "+token)
			w := httptest.NewRecorder()
			p.ServeHTTP(w, r)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			got := <-seen
			assert.Equal(t, tc.wantPath, got.URL.EscapedPath())
			assert.Equal(t, tc.wantQuery, got.URL.RawQuery)
		})
	}
}
