package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// countingProxy sits between the plugin and the API server and counts
// every request by verb and resource, and every answer that is not a
// success. The plugin talks plain HTTP to it; it talks to the API server
// with the control plane's admin credentials.
type countingProxy struct {
	URL      string
	listener net.Listener
	server   *http.Server

	mu     sync.Mutex
	counts map[string]int
	failed map[string]int
	// sampling keeps one write's path and body per kind while set: what
	// a write that should not happen (idle, after a restart) changed.
	sampling bool
	samples  map[string]string
}

// sampleWrites starts keeping a sample write of each kind; samplesTaken
// returns them (and stops).
func (p *countingProxy) sampleWrites() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sampling, p.samples = true, map[string]string{}
}

func (p *countingProxy) samplesTaken() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sampling = false
	return p.samples
}

// sample keeps r's path and body (at most 2 KB) when sampling and the
// kind has none yet; r reads the same body after it.
func (p *countingProxy) sample(key string, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.sampling || !isWrite(key) || p.samples[key] != "" || r.Body == nil {
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.samples[key] = r.URL.Path + " " + string(body[:min(len(body), 2048)])
}

func startProxy(cfg *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{URL: "http://" + l.Addr().String(), listener: l, counts: map[string]int{}, failed: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode >= 400 {
			p.mu.Lock()
			p.failed[classify(resp.Request)+" "+resp.Status]++
			p.mu.Unlock()
		}
		return nil
	}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		// A client that went away (a stopped plugin's open watches) is
		// not an error of the run; anything else is counted as one.
		if !errors.Is(err, context.Canceled) {
			p.mu.Lock()
			p.failed[classify(r)+" proxy: "+err.Error()]++
			p.mu.Unlock()
		}
		w.WriteHeader(http.StatusBadGateway)
	}
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := classify(r)
		p.mu.Lock()
		p.counts[key]++
		p.mu.Unlock()
		p.sample(key, r)
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// classify names a request "VERB resource[/subresource]", e.g.
// "PATCH disks/status", "WATCH configmaps".
func classify(r *http.Request) string {
	verb := r.Method
	if r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// /api/v1/... or /apis/group/version/...
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[min(2, len(parts)):]
	case len(parts) > 0 && parts[0] == "apis":
		parts = parts[min(3, len(parts)):]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	resource := ""
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) == 3 {
		resource += "/" + parts[2]
	}
	return verb + " " + resource
}

// isWrite tells the requests that change something. Lease renewals and
// Events are leader election's and the recorder's cost, reported apart.
// A review (SelfSubjectReview, SubjectAccessReview, TokenReview) is a POST
// the API server answers and stores nothing for: a question, not a write.
func isWrite(key string) bool {
	verb, resource, _ := strings.Cut(key, " ")
	switch verb {
	case http.MethodGet, "WATCH":
		return false
	}
	if strings.HasSuffix(resource, "reviews") {
		return false
	}
	return !strings.HasPrefix(resource, "leases") && !strings.HasPrefix(resource, "events")
}

// snapshot returns a copy of the counts.
func (p *countingProxy) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

func (p *countingProxy) failures() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.failed))
	for k, v := range p.failed {
		out[k] = v
	}
	return out
}

// writesSince sums the writes made after an earlier snapshot, by kind.
func writesSince(before, after map[string]int) (int, map[string]int) {
	return requestsSince(before, after, isWrite)
}

// requestsSince sums the requests of the kinds keep selects made after an
// earlier snapshot, by kind.
func requestsSince(before, after map[string]int, keep func(string) bool) (int, map[string]int) {
	total, by := 0, map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 && keep(k) {
			total += d
			by[k] = d
		}
	}
	return total, by
}

// isInventoryRead tells a read of Disks or ConfigMaps: how a restart's
// initial lists arrive (GET: pages of a list; WATCH: a stream, when the
// client and the API server both speak WatchList).
func isInventoryRead(key string) bool {
	verb, resource, _ := strings.Cut(key, " ")
	return (verb == http.MethodGet || verb == "WATCH") && (resource == "disks" || resource == "configmaps")
}

func describe(counts map[string]int) string {
	return joinSorted(counts, func(k string, v int) string { return fmt.Sprintf("%s=%d", k, v) })
}

// joinSorted formats each entry of m, in the order of its keys, joined by
// commas.
func joinSorted[V any](m map[string]V, entry func(string, V) string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, entry(k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// kubeconfig writes a kubeconfig that reaches the API server through the proxy.
func (p *countingProxy) kubeconfig(dir string) (string, error) {
	path := filepath.Join(dir, "proxy.kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: %q}}]
users: [{name: bench, user: {}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
`, p.URL)
	return path, os.WriteFile(path, []byte(data), 0o600)
}

func (p *countingProxy) Close() error { return p.server.Close() }
