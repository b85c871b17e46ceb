package devconsole

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// apiRequest is a Kubernetes API request as the kube-api-proxy sees it: the
// resource it addresses and the verb it amounts to.
type apiRequest struct {
	Group     string
	Version   string
	Namespace string
	// Resource includes a subresource ("diskpools/status"), which
	// allowedResources must list on its own.
	Resource string
	Name     string
	Verb     string
}

// String names the request the way refusals quote it.
func (r apiRequest) String() string {
	group := r.Group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%s %s (%s/%s)", r.Verb, r.Resource, group, r.Version)
}

// upstreamPath is the API server path of the request, rebuilt from the
// parsed parts so exactly what was checked is what is forwarded.
func (r apiRequest) upstreamPath() string {
	segments := []string{"apis", r.Group, r.Version}
	if r.Group == "" {
		segments = []string{"api", r.Version}
	}
	if r.Namespace != "" {
		segments = append(segments, "namespaces", r.Namespace)
	}
	resource, subresource, _ := strings.Cut(r.Resource, "/")
	segments = append(segments, resource)
	if r.Name != "" {
		segments = append(segments, r.Name)
	}
	if subresource != "" {
		segments = append(segments, subresource)
	}
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segments, "/")
}

// parseAPIRequest reads a path below {proxy}/clusters/{id} — /api/{version}/…
// or /apis/{group}/{version}/… — and the method and query into an
// apiRequest. Anything else (discovery, /version, odd shapes) is an error.
func parseAPIRequest(method, path string, query url.Values) (apiRequest, error) {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	for _, s := range segments {
		if s == "" || s == "." || s == ".." {
			return apiRequest{}, fmt.Errorf("malformed API path %q", path)
		}
	}
	var req apiRequest
	var rest []string
	switch {
	case len(segments) >= 3 && segments[0] == "api":
		req.Version, rest = segments[1], segments[2:]
	case len(segments) >= 4 && segments[0] == "apis":
		req.Group, req.Version, rest = segments[1], segments[2], segments[3:]
	default:
		return apiRequest{}, fmt.Errorf("%q is not a resource path (/api/<version>/… or /apis/<group>/<version>/…)", path)
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		req.Namespace, rest = rest[1], rest[2:]
	}
	if len(rest) > 3 {
		return apiRequest{}, fmt.Errorf("%q is not a resource path", path)
	}
	req.Resource = rest[0]
	if len(rest) >= 2 {
		req.Name = rest[1]
	}
	if len(rest) == 3 {
		req.Resource += "/" + rest[2]
	}
	verb, err := verbOf(method, req.Name != "", query)
	if err != nil {
		return apiRequest{}, err
	}
	req.Verb = verb
	return req, nil
}

// verbOf maps an HTTP request to the Kubernetes verb RBAC would check.
func verbOf(method string, named bool, query url.Values) (string, error) {
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case isTrue(query.Get("watch")):
			return "watch", nil
		case named:
			return "get", nil
		default:
			return "list", nil
		}
	case http.MethodPost:
		return "create", nil
	case http.MethodPut:
		return "update", nil
	case http.MethodPatch:
		return "patch", nil
	case http.MethodDelete:
		if named {
			return "delete", nil
		}
		return "deletecollection", nil
	default:
		return "", fmt.Errorf("method %s is not a Kubernetes API verb", method)
	}
}

func isTrue(v string) bool {
	return v == "true" || v == "1"
}

// policy is spec.allowedResources: per group, version and resource, the
// verbs the console pages may use.
type policy map[string]map[string]bool

func newPolicy(allowed []definition.AllowedResource) policy {
	p := policy{}
	for _, a := range allowed {
		key := policyKey(a.Group, a.Version, a.Resource)
		if p[key] == nil {
			p[key] = map[string]bool{}
		}
		for _, verb := range a.Verbs {
			p[key][verb] = true
		}
	}
	return p
}

func policyKey(group, version, resource string) string {
	return group + "/" + version + "/" + resource
}

// allows reports whether the request's verb is listed for its resource.
func (p policy) allows(req apiRequest) bool {
	return p[policyKey(req.Group, req.Version, req.Resource)][req.Verb]
}
