package devconsole

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

func TestParseAPIRequest(t *testing.T) {
	tests := []struct {
		name, method, path, query string
		want                      apiRequest
		wantUpstream              string
	}{
		{
			name: "a cluster-scoped list", method: http.MethodGet, path: "/apis/ceph.fundament.io/v1alpha1/disks",
			want:         apiRequest{Group: "ceph.fundament.io", Version: "v1alpha1", Resource: "disks", Verb: "list"},
			wantUpstream: "/apis/ceph.fundament.io/v1alpha1/disks",
		},
		{
			name: "a named get in a namespace of the core group", method: http.MethodGet, path: "/api/v1/namespaces/apps/configmaps/photos",
			want:         apiRequest{Version: "v1", Namespace: "apps", Resource: "configmaps", Name: "photos", Verb: "get"},
			wantUpstream: "/api/v1/namespaces/apps/configmaps/photos",
		},
		{
			name: "a namespace itself is a cluster-scoped resource", method: http.MethodGet, path: "/api/v1/namespaces/apps",
			want:         apiRequest{Version: "v1", Resource: "namespaces", Name: "apps", Verb: "get"},
			wantUpstream: "/api/v1/namespaces/apps",
		},
		{
			name: "a subresource is its own resource", method: http.MethodPatch, path: "/apis/ceph.fundament.io/v1alpha1/diskpools/p/status",
			want:         apiRequest{Group: "ceph.fundament.io", Version: "v1alpha1", Resource: "diskpools/status", Name: "p", Verb: "patch"},
			wantUpstream: "/apis/ceph.fundament.io/v1alpha1/diskpools/p/status",
		},
		{
			name: "a watch", method: http.MethodGet, path: "/apis/objectbucket.io/v1alpha1/namespaces/apps/objectbucketclaims", query: "watch=true",
			want:         apiRequest{Group: "objectbucket.io", Version: "v1alpha1", Namespace: "apps", Resource: "objectbucketclaims", Verb: "watch"},
			wantUpstream: "/apis/objectbucket.io/v1alpha1/namespaces/apps/objectbucketclaims",
		},
		{
			name: "a delete of a collection", method: http.MethodDelete, path: "/apis/ceph.fundament.io/v1alpha1/diskpools",
			want:         apiRequest{Group: "ceph.fundament.io", Version: "v1alpha1", Resource: "diskpools", Verb: "deletecollection"},
			wantUpstream: "/apis/ceph.fundament.io/v1alpha1/diskpools",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			query, err := url.ParseQuery(tc.query)
			require.NoError(t, err)
			got, err := parseAPIRequest(tc.method, tc.path, query)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantUpstream, got.upstreamPath())
		})
	}
}

// TestParseAPIRequestAgreesWithTheAPIServer holds the proxy's reading of a
// request against the API server's own: what RequestInfoFactory (the
// resolver kube-apiserver's authorization reads) makes of the request the
// proxy forwards must be what the proxy checked. The watch cases are the
// ones a strconv-style parser gets wrong.
func TestParseAPIRequestAgreesWithTheAPIServer(t *testing.T) {
	const pools = "/apis/ceph.fundament.io/v1alpha1/diskpools"
	tests := []struct {
		name, method, path, query string
		wantVerb, wantResource    string
	}{
		{"no watch parameter is a list", http.MethodGet, pools, "", "list", "diskpools"},
		{"watch=true watches", http.MethodGet, pools, "watch=true", "watch", "diskpools"},
		{"watch=1 watches", http.MethodGet, pools, "watch=1", "watch", "diskpools"},
		{"watch=yes watches", http.MethodGet, pools, "watch=yes", "watch", "diskpools"},
		{"watch=True watches", http.MethodGet, pools, "watch=True", "watch", "diskpools"},
		{"an empty watch= watches", http.MethodGet, pools, "watch=", "watch", "diskpools"},
		{"a bare watch watches", http.MethodGet, pools, "watch", "watch", "diskpools"},
		{"watch=no watches: only false and 0 are false", http.MethodGet, pools, "watch=no", "watch", "diskpools"},
		{"watch=false is a list", http.MethodGet, pools, "watch=false", "list", "diskpools"},
		{"watch=FALSE is a list", http.MethodGet, pools, "watch=FALSE", "list", "diskpools"},
		{"watch=0 is a list", http.MethodGet, pools, "watch=0", "list", "diskpools"},
		{"the codec case-folds: watch=falſe is a list", http.MethodGet, pools, "watch=fal%C5%BFe", "list", "diskpools"},
		{"the first value counts: false then true is a list", http.MethodGet, pools, "watch=false&watch=true", "list", "diskpools"},
		{"the first value counts: true then false watches", http.MethodGet, pools, "watch=true&watch=false", "watch", "diskpools"},
		{"an undecodable query falls back to lower-casing: watch=falſe watches", http.MethodGet, pools, "watch=fal%C5%BFe&limit=x", "watch", "diskpools"},
		{"an undecodable query with watch=0 is a list", http.MethodGet, pools, "watch=0&limit=x", "list", "diskpools"},
		{"an undecodable query with watch=yes watches", http.MethodGet, pools, "watch=yes&limit=x", "watch", "diskpools"},
		{"an escaped parameter name is still watch", http.MethodGet, pools, "wat%63h=true", "watch", "diskpools"},
		{"parameter names are case-sensitive: Watch=true is a list", http.MethodGet, pools, "Watch=true", "list", "diskpools"},
		{"a semicolon pair is dropped, not split", http.MethodGet, pools, "limit=1;watch=true", "list", "diskpools"},
		{"a HEAD of a collection watches like a GET", http.MethodHead, pools, "watch=yes", "watch", "diskpools"},
		{"a named GET is a get whatever the query says", http.MethodGet, pools + "/p", "watch=true", "get", "diskpools"},
		{"a trailing slash is the same collection", http.MethodGet, pools + "/", "watch=yes", "watch", "diskpools"},
		{"a namespaced watch", http.MethodGet, "/api/v1/namespaces/apps/configmaps", "watch=True", "watch", "configmaps"},
		{"a subresource", http.MethodPatch, pools + "/p/status", "", "patch", "diskpools/status"},
		{"a namespace's status is the namespace's subresource", http.MethodGet, "/api/v1/namespaces/apps/status", "", "get", "namespaces/status"},
		{"finalize is the namespace's subresource", http.MethodPut, "/api/v1/namespaces/apps/finalize", "", "update", "namespaces/finalize"},
		{"a namespace's list of namespaces", http.MethodGet, "/api/v1/namespaces/apps/namespaces", "", "list", "namespaces"},
		{"an escaped letter is the letter", http.MethodGet, "/api/v1/namespaces/apps/config%6Daps/x", "", "get", "configmaps"},
		{"a delete without a name is deletecollection", http.MethodDelete, pools, "watch=true", "deletecollection", "diskpools"},
	}
	resolver := request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse("http://proxy" + tc.path + "?" + tc.query)
			require.NoError(t, err)
			query := u.Query()
			got, err := parseAPIRequest(tc.method, u.EscapedPath(), query)
			require.NoError(t, err)
			assert.Equal(t, tc.wantVerb, got.Verb)
			assert.Equal(t, tc.wantResource, got.Resource)

			forwarded, err := http.NewRequest(tc.method, "http://apiserver"+got.upstreamPath()+"?"+query.Encode(), nil)
			require.NoError(t, err)
			info, err := resolver.NewRequestInfo(forwarded)
			require.NoError(t, err)
			require.True(t, info.IsResourceRequest)
			assert.LessOrEqual(t, len(info.Parts), 3, "the API server reads nothing the proxy did not")
			resource := info.Resource
			if info.Subresource != "" {
				resource += "/" + info.Subresource
			}
			namespace := info.Namespace
			if info.Resource == "namespaces" && namespace == info.Name {
				namespace = "" // the resolver files a Namespace under itself
			}
			assert.Equal(t, apiRequest{Group: info.APIGroup, Version: info.APIVersion, Namespace: namespace, Resource: resource, Name: info.Name, Verb: info.Verb}, got)
		})
	}
}

func TestParseAPIRequestRejects(t *testing.T) {
	for _, path := range []string{
		"/version", "/apis", "/apis/ceph.fundament.io/v1alpha1", "/api/v1/../../version", "/apis/g/v1/a/b/c/d", "/api/v1//pods",
		"/api/v1/watch/pods", "/api/v1/watch/namespaces/apps/configmaps", "/apis/ceph.fundament.io/v1alpha1/watch/diskpools",
		"/api/v1/proxy/namespaces/apps/pods/p",
		"/apis/ceph.fundament.io/v1alpha1/diskpools/p%2Fstatus", "/api/v1/namespaces/apps%2Fsecrets/x",
		"/api/v1/%2e%2e/%2e%2e/version", "/api/v1/namespaces/%2E/configmaps", "/api/v1/namespaces/apps/configmaps/%zz",
		"/api/v1/namespaces/apps/status/x",
	} {
		t.Run(path, func(t *testing.T) {
			_, err := parseAPIRequest(http.MethodGet, path, nil)
			assert.Error(t, err)
		})
	}
	_, err := parseAPIRequest("TRACE", "/api/v1/pods", nil)
	assert.ErrorContains(t, err, "not a Kubernetes API verb")
}

func TestPolicyAllowsOnlyListedVerbs(t *testing.T) {
	p := newPolicy([]definition.AllowedResource{
		{Group: "ceph.fundament.io", Version: "v1alpha1", Resource: "diskpools", Verbs: []string{"list", "get", "patch"}},
		{Group: "", Version: "v1", Resource: "configmaps", Verbs: []string{"get"}},
	})
	allowed := func(group, version, resource, verb string) bool {
		return p.allows(apiRequest{Group: group, Version: version, Resource: resource, Verb: verb})
	}
	assert.True(t, allowed("ceph.fundament.io", "v1alpha1", "diskpools", "patch"))
	assert.True(t, allowed("", "v1", "configmaps", "get"))
	assert.False(t, allowed("ceph.fundament.io", "v1alpha1", "diskpools", "delete"), "a verb not listed")
	assert.False(t, allowed("ceph.fundament.io", "v1beta1", "diskpools", "list"), "another version")
	assert.False(t, allowed("ceph.fundament.io", "v1alpha1", "diskpools/status", "patch"), "a subresource must be listed itself")
	assert.False(t, allowed("", "v1", "secrets", "get"), "a resource not listed")
}
