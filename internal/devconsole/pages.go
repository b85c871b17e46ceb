package devconsole

import (
	"net/http"
	"strings"
)

// pluginSite serves the plugin origin: the plugin's console files under the
// plugin-proxy path, and the SDK, every response under the production CSP.
type pluginSite struct {
	// consolePrefix is /clusters/{id}/plugins/{installation}/{version}/console/.
	consolePrefix string
	console       http.FileSystem
	// testFiles are Options.TestFiles (nil: TestFilesPath is a 404).
	testFiles http.FileSystem
	csp       string
}

func (s *pluginSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", s.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	// Production caches per version as immutable; the development console
	// serves files as they are edited.
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if file, ok := strings.CutPrefix(r.URL.Path, "/plugins/sdk/v1/"); ok {
		s.serveSDK(w, r, file)
		return
	}
	if file, ok := strings.CutPrefix(r.URL.Path, TestFilesPath); ok && s.testFiles != nil && file != "" {
		serveFile(w, r, s.testFiles, file)
		return
	}
	file, ok := strings.CutPrefix(r.URL.Path, s.consolePrefix)
	if !ok || file == "" || strings.HasSuffix(file, "/") {
		http.NotFound(w, r)
		return
	}
	serveFile(w, r, s.console, file)
}

// serveSDK serves plugin-sdk.js and plugin-sdk.css. The NL Design System
// bundle the real console also serves there is not available to this
// project, so those paths are 404 here and pages must not need them.
func (s *pluginSite) serveSDK(w http.ResponseWriter, r *http.Request, file string) {
	switch file {
	case "plugin-sdk.js", "plugin-sdk.css":
		serveFile(w, r, http.FS(assets), "assets/sdk/"+file)
	default:
		http.NotFound(w, r)
	}
}

// serveFile serves one regular file from fsys, never a directory listing.
func serveFile(w http.ResponseWriter, r *http.Request, fsys http.FileSystem, name string) {
	f, err := fsys.Open("/" + strings.TrimPrefix(name, "/"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, info.Name(), info.ModTime(), f)
}

// pluginCSP is the policy every plugin page is served under in production:
// only its own scripts and styles, calls only to the kube-api-proxy and the
// plugin proxy, framed only by the console. frame-ancestors is the only
// framing control the pages get: X-Frame-Options cannot name another origin
// (SAMEORIGIN would refuse the console, which frames the pages from its own
// origin, console-host.md), and browsers obeying frame-ancestors ignore it.
func pluginCSP(consoleOrigin, kubeProxyOrigin, pluginOrigin string) string {
	return strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"connect-src " + kubeProxyOrigin + " " + pluginOrigin,
		"form-action " + kubeProxyOrigin + " " + pluginOrigin,
		"frame-ancestors " + consoleOrigin,
		"base-uri 'none'",
		"object-src 'none'",
	}, "; ")
}
