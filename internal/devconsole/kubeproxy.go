package devconsole

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeProxy plays the platform's kube-api-proxy for plugin pages:
// {proxy}/clusters/{clusterId}/api[s]/… is forwarded to the API server,
// after checking the page's bearer token and that the request's group,
// version, resource and verb are in the plugin's allowedResources.
type kubeProxy struct {
	clusterID    string
	pluginOrigin string
	tokens       *tokens
	policy       policy
	upstream     *url.URL
	transport    http.RoundTripper
	log          *slog.Logger
	observe      func(ProxiedRequest)
}

// ProxiedRequest is what the kube-api-proxy saw of one API request, for
// Options.OnProxyRequest: which verb on which resource, whether it was let
// through, and a write's content type and body.
type ProxiedRequest struct {
	Verb, Group, Version, Resource, Namespace, Name string
	ContentType                                     string
	Body                                            []byte
	Allowed                                         bool
}

func (p *kubeProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.allowPluginOrigin(w)
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !p.tokens.valid(token) {
		writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "kube-api-proxy: missing, unknown or expired bearer token")
		return
	}
	prefix := "/clusters/" + url.PathEscape(p.clusterID) + "/"
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
	if !ok {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("kube-api-proxy: no cluster at %s (this console serves cluster %q)", r.URL.Path, p.clusterID))
		return
	}
	query := r.URL.Query()
	req, err := parseAPIRequest(r.Method, path, query)
	if err != nil {
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "kube-api-proxy: "+err.Error())
		return
	}
	allowed := p.policy.allows(req)
	if p.observe != nil {
		if !p.record(w, r, req, allowed) {
			return
		}
	}
	if !allowed {
		p.log.Info("kube-api-proxy refused a request outside allowedResources", "request", req.String(), "name", req.Name, "namespace", req.Namespace)
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden,
			fmt.Sprintf("kube-api-proxy: %s is not in the plugin's spec.allowedResources", req))
		return
	}
	p.forward(w, r, req, query)
}

// record reports the request to the observer, buffering the body so it
// can still be forwarded; false means the body could not be read and the
// request was answered.
func (p *kubeProxy) record(w http.ResponseWriter, r *http.Request, req apiRequest, allowed bool) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxObservedBody))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "kube-api-proxy: read request body: "+err.Error())
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.observe(ProxiedRequest{
		Verb: req.Verb, Group: req.Group, Version: req.Version, Resource: req.Resource, Namespace: req.Namespace, Name: req.Name,
		ContentType: r.Header.Get("Content-Type"), Body: body, Allowed: allowed,
	})
	return true
}

// maxObservedBody bounds what an observed request may carry; Kubernetes
// itself refuses objects over 3 MiB.
const maxObservedBody = 3 << 20

// allowPluginOrigin lets the plugin's pages, and nothing else, call the
// proxy from the browser.
func (p *kubeProxy) allowPluginOrigin(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", p.pluginOrigin)
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept")
	h.Set("Access-Control-Max-Age", "600")
	h.Add("Vary", "Origin")
}

// forwardedHeaders are the only request headers that reach the API server.
// The rest is dropped, not filtered by name: the API server gives whole
// families of headers power (Impersonate-User, -Group, -Uid and -Extra-*;
// a front proxy's X-Remote-*), and client-go's bearer round tripper keeps
// an Authorization it finds instead of setting the kubeconfig's, so a deny
// list would have to be right about every one, now and later.
var forwardedHeaders = []string{"Accept", "Content-Type"}

// forward sends the checked request to the API server with the console's
// own credentials: the path rebuilt from what was checked, the query
// re-encoded from the values the verb was read from (so no parser, here or
// in an API server built with another Go, reads a different one), and only
// forwardedHeaders of what the page sent.
func (p *kubeProxy) forward(w http.ResponseWriter, r *http.Request, req apiRequest, query url.Values) {
	proxy := &httputil.ReverseProxy{
		Transport: p.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			// upstreamPath is escaped; URL.Path is not, or a "%" in a name
			// would be escaped twice on the wire.
			escaped := req.upstreamPath()
			unescaped, _ := url.PathUnescape(escaped) // the segments were unescaped to begin with
			target := *p.upstream
			target.Path = strings.TrimSuffix(p.upstream.Path, "/") + unescaped
			target.RawPath = strings.TrimSuffix(p.upstream.EscapedPath(), "/") + escaped
			target.RawQuery = query.Encode()
			pr.Out.URL = &target
			pr.Out.Host = p.upstream.Host
			header := http.Header{}
			for _, name := range forwardedHeaders {
				if values := pr.In.Header.Values(name); len(values) > 0 {
					header[name] = values
				}
			}
			pr.Out.Header = header
		},
		ModifyResponse: func(resp *http.Response) error {
			// The API server's own CORS answer (if any) is not the proxy's.
			for name := range resp.Header {
				if strings.HasPrefix(name, "Access-Control-") {
					resp.Header.Del(name)
				}
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable, "kube-api-proxy: API server unreachable: "+err.Error())
		},
	}
	proxy.ServeHTTP(w, r)
}

// writeStatus answers with a Kubernetes Status, which the SDK turns into an
// SdkError whose message is shown to the operator.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  message,
		Reason:   reason,
		Code:     int32(code),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(status)
}
