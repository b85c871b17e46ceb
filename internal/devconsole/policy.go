package devconsole

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
//
// path is the escaped path as the client sent it: segments are split there
// and unescaped one by one, so an escaped slash cannot move a name into
// another segment. The classification mirrors the API server's own
// (RequestInfoFactory in k8s.io/apiserver/pkg/endpoints/request, which is
// also what RBAC is asked about); policy_test.go holds the two against each
// other.
func parseAPIRequest(method, path string, query url.Values) (apiRequest, error) {
	segments, err := pathSegments(path)
	if err != nil {
		return apiRequest{}, err
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
	// The API server reads a verb from these (/api/v1/watch/pods is a
	// watch); pages ask with ?watch=true and never proxy, so the old forms
	// are refused rather than mapped.
	if rest[0] == "watch" || rest[0] == "proxy" {
		return apiRequest{}, fmt.Errorf("the /%s/ path form is not proxied (%q); a watch is ?watch=true", rest[0], path)
	}
	switch {
	case len(rest) >= 3 && rest[0] == "namespaces" && namespaceSubresources[rest[2]]:
		// /namespaces/{name}/status is the Namespace's status, not a
		// resource "status" in that namespace.
		if len(rest) > 3 {
			return apiRequest{}, fmt.Errorf("%q is not a resource path", path)
		}
		req.Resource, req.Name = "namespaces/"+rest[2], rest[1]
	default:
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
	}
	verb, err := verbOf(method, req.Name != "", query)
	if err != nil {
		return apiRequest{}, err
	}
	req.Verb = verb
	return req, nil
}

// namespaceSubresources are the subresources the API server reads right
// after /namespaces/{name}, as it lists them.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// pathSegments splits an escaped path on its literal slashes and unescapes
// each segment. An empty, "." or ".." segment, or one that unescapes to
// contain a slash, has no place in a resource path and is refused: what
// the proxy checks must be what upstreamPath rebuilds and the API server
// splits again.
func pathSegments(path string) ([]string, error) {
	raw := strings.Split(strings.Trim(path, "/"), "/")
	segments := make([]string, len(raw))
	for i, r := range raw {
		s, err := url.PathUnescape(r)
		if err != nil || s == "" || s == "." || s == ".." || strings.Contains(s, "/") {
			return nil, fmt.Errorf("malformed API path %q", path)
		}
		segments[i] = s
	}
	return segments, nil
}

// verbOf maps an HTTP request to the Kubernetes verb RBAC would check.
func verbOf(method string, named bool, query url.Values) (string, error) {
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case named:
			// A named GET is a get whatever its query says: the API
			// server routes it to the get handler, which never watches.
			return "get", nil
		case watchRequested(query):
			return "watch", nil
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

// watchRequested decides as the API server's request resolver does whether
// a GET of a collection is a watch. The parameter is not a strconv bool:
// the first value is decoded with the ListOptions codec, where everything
// but "0" and "false" (case-folded) is true — watch=yes, watch=True and an
// empty watch= all watch. A query the codec refuses (limit=x) makes the
// resolver fall back to a lower-cased compare of the first value, which
// folds less than the codec ("falſe" is false to one and true to the
// other); both are mirrored, by calling the same codec.
func watchRequested(query url.Values) bool {
	var opts metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(query, metav1.SchemeGroupVersion, &opts); err != nil {
		values := query["watch"]
		if len(values) == 0 {
			return false
		}
		switch strings.ToLower(values[0]) {
		case "false", "0":
			return false
		default:
			return true
		}
	}
	return opts.Watch
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
