package devconsole_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// The hostile tests of issue 17: what a web page the developer happens to
// visit, or anything else holding a page token, can make the development
// console do with the developer's kubeconfig. docs/security.md
// names the threat each one stands for.

// impatient gives up on a response that does not end: a watch the proxy took
// for a list streams until the API server's timeout.
var impatient = &http.Client{Timeout: 5 * time.Second}

// send makes one request with the given Host header and other headers and
// returns the status and body.
func send(t *testing.T, method, rawURL, host string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	for name, value := range header {
		req.Header.Set(name, value)
	}
	resp, err := impatient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func portOf(t *testing.T, origin string) string {
	t.Helper()
	u, err := url.Parse(origin)
	require.NoError(t, err)
	return u.Port()
}

// After DNS rebinding the browser sends the attacker's name as Host, and the
// attacker's page is same-origin with whatever it reaches: no request under
// such a name may be answered, least of all with a token.
func TestConsoleAnswersOnlyToLoopbackNames(t *testing.T) {
	srv := startConsole(t, &proxyLog{})
	token := srv.IssueToken()
	consolePort, pluginPort := portOf(t, srv.URL()), portOf(t, srv.PluginURL())
	endpoints := []struct {
		name, method, url, port string
		header                  map[string]string
	}{
		{"the host page", http.MethodGet, srv.URL() + "/view/disks.ceph.fundament.io", consolePort, nil},
		{"the configuration with its token", http.MethodGet, srv.URL() + "/host/config.json", consolePort, nil},
		{"the token endpoint", http.MethodPost, srv.URL() + "/host/token", consolePort, nil},
		{"the kube-api-proxy", http.MethodGet, srv.KubeAPIProxyURL() + "/clusters/" + srv.ClusterID() + "/apis/ceph.fundament.io/v1alpha1/diskpools", consolePort, map[string]string{"Authorization": "Bearer " + token}},
		{"a plugin page", http.MethodGet, srv.PluginURL() + "/clusters/" + srv.ClusterID() + "/plugins/system--ceph-rook/v0.1.0/console/disks-list.html", pluginPort, nil},
	}
	for _, e := range endpoints {
		for _, host := range []string{"evil.example:" + e.port, "localhost.evil.example:" + e.port, "192.0.2.10:" + e.port, "0.0.0.0:" + e.port} {
			t.Run(e.name+" refuses "+host, func(t *testing.T) {
				// What a rebinding page's fetch carries: its own name, as
				// the same origin.
				header := map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + host}
				for k, v := range e.header {
					header[k] = v
				}
				code, body := send(t, e.method, e.url, host, header)
				assert.Equal(t, http.StatusForbidden, code)
				assert.Contains(t, body, "answers only to localhost")
				assert.NotContains(t, body, "token")
			})
		}
		for _, host := range []string{"localhost:" + e.port, "127.0.0.1:" + e.port, "127.45.6.7:" + e.port, "localhost:9000"} {
			t.Run(e.name+" answers "+host, func(t *testing.T) {
				code, body := send(t, e.method, e.url, host, e.header)
				assert.Equal(t, http.StatusOK, code, body)
			})
		}
	}
}

// A page of another origin cannot read a token's response anyway (no CORS
// for it); the console does not hand one out to begin with.
func TestTokenEndpointsRefuseOtherOrigins(t *testing.T) {
	srv := startConsole(t, &proxyLog{})
	for _, endpoint := range []struct{ method, path string }{{http.MethodPost, "/host/token"}, {http.MethodGet, "/host/config.json"}} {
		for _, tc := range []struct {
			name   string
			header map[string]string
			want   int
		}{
			{"another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, http.StatusForbidden},
			{"the plugin origin", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": srv.PluginURL()}, http.StatusForbidden},
			{"another origin, no Sec-Fetch-Site", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
			{"an opaque origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
			{"the console's own page", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": srv.URL()}, http.StatusOK},
			{"no browser at all", nil, http.StatusOK},
		} {
			t.Run(endpoint.path+" from "+tc.name, func(t *testing.T) {
				code, body := send(t, endpoint.method, srv.URL()+endpoint.path, "", tc.header)
				assert.Equal(t, tc.want, code, body)
				if tc.want == http.StatusForbidden {
					assert.NotContains(t, body, `"token"`)
				}
			})
		}
	}
}

// Nothing on the console origin may be framed (a framing page could steer
// the developer's clicks); the plugin pages stay frameable by the console's
// own origin, which frames them.
func TestHostPagesCannotBeFramed(t *testing.T) {
	srv := startConsole(t, &proxyLog{})
	for _, path := range []string{"/", "/view/disks.ceph.fundament.io", "/host/config.json", "/host/host.js"} {
		resp, err := http.Get(srv.URL() + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"), path)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), path)
	}
	resp, err := http.Get(srv.URL() + "/view/disks.ceph.fundament.io")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")

	resp, err = http.Get(srv.PluginURL() + "/clusters/" + srv.ClusterID() + "/plugins/system--ceph-rook/v0.1.0/console/disks-list.html")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors "+srv.URL()+";")
	assert.Empty(t, resp.Header.Get("X-Frame-Options"), "X-Frame-Options would keep the console from framing its pages")
}

// syncBuffer is a log sink written from the console's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startConsoleLogged(t *testing.T, consoleAddr string) (*devconsole.Server, *syncBuffer) {
	t.Helper()
	root := testenv.RepoRoot()
	def, err := os.ReadFile(filepath.Join(root, "definition.yaml"))
	require.NoError(t, err)
	logs := &syncBuffer{}
	srv, err := devconsole.Start(context.Background(), devconsole.Options{
		Definition:  def,
		Console:     http.Dir(filepath.Join(root, "console")),
		RESTConfig:  controlPlane.Env(t).Config,
		Namespaces:  []string{appNamespace},
		ConsoleAddr: consoleAddr,
		Logger:      slog.New(slog.NewTextHandler(logs, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv, logs
}

// Bound to every interface, the console is anyone's who can reach it; it
// says so, is browsed through loopback, and still answers no foreign name.
func TestConsoleWarnsWhenBoundBeyondLoopback(t *testing.T) {
	srv, logs := startConsoleLogged(t, "0.0.0.0:0")
	assert.Contains(t, logs.String(), "level=WARN msg=\"devconsole: LISTENING BEYOND LOOPBACK")
	assert.True(t, strings.HasPrefix(srv.URL(), "http://127.0.0.1:"), "a wildcard bind is browsed through loopback: %s", srv.URL())
	code, _ := send(t, http.MethodGet, srv.URL()+"/host/config.json", "", nil)
	assert.Equal(t, http.StatusOK, code)
	code, _ = send(t, http.MethodGet, srv.URL()+"/host/config.json", "192.0.2.10:"+portOf(t, srv.URL()), nil)
	assert.Equal(t, http.StatusForbidden, code, "a wildcard bind names no host beyond loopback")

	_, quiet := startConsoleLogged(t, "")
	assert.NotContains(t, quiet.String(), "LISTENING BEYOND LOOPBACK", "loopback is the quiet default")
}

// The kube-api-proxy classifies a request as the API server will run it,
// and passes no header that changes who is asking.
func TestKubeAPIProxyRefusesHostileRequests(t *testing.T) {
	env := controlPlane.Env(t)
	srv := startConsole(t, &proxyLog{})
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: "pool-hostile"}}))
	base := srv.KubeAPIProxyURL() + "/clusters/" + srv.ClusterID()
	const pools = "/apis/ceph.fundament.io/v1alpha1/diskpools"
	// ObjectBuckets may be listed and not watched: the disguised watches
	// below must be read as watches, and refused.
	const buckets = "/apis/objectbucket.io/v1alpha1/objectbuckets"
	token := srv.IssueToken()

	tests := []struct {
		name, method, path string
		header             map[string]string
		wantCode           int
		wantMessage        string
	}{
		{"watch=yes is a watch", http.MethodGet, buckets + "?watch=yes", nil, http.StatusForbidden, "watch objectbuckets"},
		{"watch=True is a watch", http.MethodGet, buckets + "?watch=True", nil, http.StatusForbidden, "watch objectbuckets"},
		{"an empty watch= is a watch", http.MethodGet, buckets + "?watch=", nil, http.StatusForbidden, "watch objectbuckets"},
		{"a bare watch is a watch", http.MethodGet, buckets + "?watch", nil, http.StatusForbidden, "watch objectbuckets"},
		{"an undecodable query with watch=falſe is a watch", http.MethodGet, buckets + "?watch=fal%C5%BFe&limit=x", nil, http.StatusForbidden, "watch objectbuckets"},
		{"watch on a trailing slash is a watch", http.MethodGet, buckets + "/?watch=1", nil, http.StatusForbidden, "watch objectbuckets"},
		{"a semicolon-hidden watch is a list, and forwarded as one", http.MethodGet, buckets + "?limit=1;watch=true", nil, http.StatusOK, ""},
		{"watch=false is a list", http.MethodGet, buckets + "?watch=false", nil, http.StatusOK, ""},
		{"watch=0 is a list", http.MethodGet, buckets + "?watch=0", nil, http.StatusOK, ""},
		{"the /watch/ path of a collection", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/watch/diskpools", nil, http.StatusForbidden, "the /watch/ path form is not proxied"},
		{"the /watch/ path of a core collection", http.MethodGet, "/api/v1/watch/namespaces/apps/configmaps", nil, http.StatusForbidden, "the /watch/ path form is not proxied"},
		{"the /proxy/ path", http.MethodGet, "/api/v1/proxy/namespaces/apps/services/s", nil, http.StatusForbidden, "the /proxy/ path form is not proxied"},
		{"an escaped slash turning a name into a subresource", http.MethodPatch, pools + "/pool-hostile%2Fstatus", nil, http.StatusForbidden, "malformed API path"},
		{"an escaped slash in a namespace", http.MethodGet, "/api/v1/namespaces/apps%2Fsecrets/configmaps/c", nil, http.StatusForbidden, "malformed API path"},
		{"escaped dot segments", http.MethodGet, pools + "/%2e%2e/%2e%2e/%2e%2e/api/v1/namespaces/default/secrets", nil, http.StatusForbidden, "malformed API path"},
		{"a delete behind a trailing slash", http.MethodDelete, pools + "/pool-hostile/", nil, http.StatusForbidden, "delete diskpools"},
		{"a namespace's finalize is the namespace's subresource", http.MethodPut, "/api/v1/namespaces/apps/finalize", nil, http.StatusForbidden, "update namespaces/finalize (core/v1)"},
		{"a status write", http.MethodPatch, pools + "/pool-hostile/status", nil, http.StatusForbidden, "patch diskpools/status"},
		{"impersonating a user with no rights changes nothing", http.MethodGet, pools, map[string]string{"Impersonate-User": "nobody", "Impersonate-Group": "system:unauthenticated"}, http.StatusOK, ""},
		{"impersonating with a uid and extras changes nothing", http.MethodGet, pools, map[string]string{"Impersonate-User": "nobody", "Impersonate-Uid": "1", "Impersonate-Extra-Scopes": "none"}, http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{"Authorization": "Bearer " + token}
			for k, v := range tc.header {
				header[k] = v
			}
			code, body := send(t, tc.method, base+tc.path, "", header)
			assert.Equal(t, tc.wantCode, code, body)
			if tc.wantMessage != "" {
				var status struct{ Message string }
				require.NoError(t, json.Unmarshal([]byte(body), &status), body)
				assert.Contains(t, status.Message, tc.wantMessage)
			}
		})
	}
	var pool v1alpha1.DiskPool
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: "pool-hostile"}, &pool))
	assert.Empty(t, pool.Status.Phase, "no refused status write reached the API server")
}
