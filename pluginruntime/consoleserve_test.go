package pluginruntime_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/console"
)

func mustGet(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return req
}

func hostileConsolePlugin() *consolePlugin {
	return &consolePlugin{testPlugin: newTestPlugin(), assets: console.MustFileSystem(fstest.MapFS{
		"console/index.html":          {Data: []byte("<h1>pools</h1>")},
		"console/pools/list.html":     {Data: []byte("<table>")},
		"console/pools/list.js":       {Data: []byte("export {}")},
		"console/internal/notes.txt":  {Data: []byte("not for browsers")},
		"console/internal/draft.html": {Data: []byte("<p>draft")},
	}, "console")}
}

// Every console response — a page, a script, a refusal — carries the
// console-host.md policy and nosniff, set by the runtime itself; a
// directory is 404, never a listing of what the plugin ships.
func TestConsoleResponsesCarryThePolicyAndNoListings(t *testing.T) {
	rt := startRuntime(t, hostileConsolePlugin(), []string{
		"FUNDAMENT_CONSOLE_ORIGIN=https://console.example.com",
		"FUNDAMENT_KUBE_API_PROXY_ORIGIN=https://kube.example.com:8443",
	})
	// The plugin proxy, which serves the pages, is 'self'.
	wantCSP := "default-src 'self'; script-src 'self'; style-src 'self'; " +
		"connect-src https://kube.example.com:8443 'self'; form-action https://kube.example.com:8443 'self'; " +
		"frame-ancestors https://console.example.com; base-uri 'none'; object-src 'none'"

	tests := []struct {
		path        string
		wantStatus  int
		wantType    string
		wantBody    string
		notInBodies []string
	}{
		{path: "/console/pools/list.html", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8", wantBody: "<table>"},
		{path: "/console/pools/list.js", wantStatus: http.StatusOK, wantType: "text/javascript; charset=utf-8", wantBody: "export {}"},
		{path: "/console/", wantStatus: http.StatusOK, wantBody: "<h1>pools</h1>"},
		{path: "/console/internal/", wantStatus: http.StatusNotFound, notInBodies: []string{"notes.txt", "draft.html"}},
		{path: "/console/internal", wantStatus: http.StatusNotFound, notInBodies: []string{"notes.txt", "draft.html"}},
		{path: "/console/pools/", wantStatus: http.StatusNotFound, notInBodies: []string{"list.html"}},
		{path: "/console/missing.html", wantStatus: http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			// A redirect to a listing would be a listing: none is followed.
			res, err := http.DefaultTransport.RoundTrip(mustGet(t, rt.baseURL+tc.path))
			require.NoError(t, err)
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			assert.Equal(t, tc.wantStatus, res.StatusCode, "%s", body)
			assert.Equal(t, wantCSP, res.Header.Get("Content-Security-Policy"))
			assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
			if tc.wantType != "" {
				assert.Equal(t, tc.wantType, res.Header.Get("Content-Type"))
			}
			if tc.wantBody != "" {
				assert.Equal(t, tc.wantBody, string(body))
			}
			for _, s := range tc.notInBodies {
				assert.NotContains(t, string(body), s, "no listing")
			}
		})
	}
}

// Without the origins the platform knows, the runtime still sends the
// directives that stop injected script, style and plugins, and leaves the
// origin lists open rather than guess them.
func TestConsolePolicyWithoutOriginsLeavesOnlyOriginsOpen(t *testing.T) {
	rt := startRuntime(t, hostileConsolePlugin(), nil)
	res, err := http.Get(rt.baseURL + "/console/pools/list.html")
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, "default-src 'self'; script-src 'self'; style-src 'self'; connect-src * 'self'; form-action * 'self'; "+
		"frame-ancestors *; base-uri 'none'; object-src 'none'", res.Header.Get("Content-Security-Policy"))
	assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	warnings := rt.logs.records(t, "console CSP left partly open")
	require.Len(t, warnings, 1)
	assert.Len(t, warnings[0]["reasons"], 2)
}

// An origin variable that is not exactly an origin stops the plugin: a
// ';' in it would add directives to the policy.
func TestInvalidConsoleOriginRefusesToStart(t *testing.T) {
	for _, origin := range []string{
		"https://console.example.com; script-src *",
		"https://console.example.com/path",
		"javascript:alert(1)",
		"console.example.com",
	} {
		t.Run(origin, func(t *testing.T) {
			// The deadline only ends a runtime that wrongly started.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := pluginruntime.RunContext(ctx, hostileConsolePlugin(),
				pluginruntime.WithEnviron(append(append([]string{}, baseEnviron...), "FUNDAMENT_CONSOLE_ORIGIN="+origin)),
				pluginruntime.WithAddr("127.0.0.1:0"), pluginruntime.WithSignals(), pluginruntime.WithLogOutput(io.Discard))
			require.Error(t, err, "the runtime must not start")
			assert.Contains(t, err.Error(), "FUNDAMENT_CONSOLE_ORIGIN")
		})
	}
}
