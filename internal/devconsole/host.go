package devconsole

import (
	"encoding/json"
	"net/http"
	"time"
)

// hostConfig is what host.js needs to play the console: where the plugin's
// pages and the kube-api-proxy are, the menu, the routes, and a token.
type hostConfig struct {
	PluginName      string                       `json:"pluginName"`
	PluginOrigin    string                       `json:"pluginOrigin"`
	PageBase        string                       `json:"pageBase"`
	KubeAPIProxyURL string                       `json:"kubeApiProxyUrl"`
	ClusterID       string                       `json:"clusterId"`
	Namespaces      []string                     `json:"namespaces"`
	Menu            map[string][]menuItem        `json:"menu"`
	Components      map[string]map[string]string `json:"components"`
	KindsByCRD      map[string]string            `json:"kindsByCRD"`
	CRDsByKind      map[string]string            `json:"crdsByKind"`
	Token           string                       `json:"token"`
	TokenExpiresAt  time.Time                    `json:"tokenExpiresAt"`
}

type menuItem struct {
	CRD   string `json:"crd"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
}

// hostSite serves the console origin: the host page for every /view/ route,
// its script and style, its configuration, token refresh, and the
// kube-api-proxy. Nothing on it may be framed: the host page is the top
// window (a page framing it could steer the developer's clicks into a
// sheet's save button), and only the plugin origin's pages are framed, by
// the host itself (pages.go).
func (s *Server) hostSite() http.Handler {
	mux := http.NewServeMux()
	hostPage := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", s.hostCSP())
		serveFile(w, r, http.FS(assets), "assets/host/host.html")
	}
	mux.HandleFunc("GET /{$}", hostPage)
	mux.HandleFunc("GET /view/", hostPage)
	mux.HandleFunc("GET /host/{file}", func(w http.ResponseWriter, r *http.Request) {
		switch file := r.PathValue("file"); file {
		case "host.js", "host.css":
			serveFile(w, r, http.FS(assets), "assets/host/"+file)
		case "config.json":
			ownPageOnly(s.log, s.serveConfig)(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("POST /host/token", ownPageOnly(s.log, func(w http.ResponseWriter, _ *http.Request) {
		token, expires := s.tokens.issue()
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, map[string]any{"token": token, "tokenExpiresAt": expires})
	}))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.Handle("/kube-api-proxy/", http.StripPrefix("/kube-api-proxy", s.proxy))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

// hostCSP keeps the host page as strict as the plugin pages it frames, and
// unframeable (frame-ancestors is what current browsers obey; the
// X-Frame-Options hostSite sets is for the rest).
func (s *Server) hostCSP() string {
	return "default-src 'self'; script-src 'self'; style-src 'self'; frame-src " + s.pluginURL + "; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
}

// serveConfig hands each host page load its own token.
func (s *Server) serveConfig(w http.ResponseWriter, r *http.Request) {
	namespaces, err := s.namespaces(r.Context())
	if err != nil {
		http.Error(w, "list namespaces: "+err.Error(), http.StatusBadGateway)
		return
	}
	cfg := s.config
	cfg.Namespaces = namespaces
	cfg.Token, cfg.TokenExpiresAt = s.tokens.issue()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, cfg)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
