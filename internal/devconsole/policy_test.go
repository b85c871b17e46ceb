package devconsole

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestParseAPIRequestRejects(t *testing.T) {
	for _, path := range []string{"/version", "/apis", "/apis/ceph.fundament.io/v1alpha1", "/api/v1/../../version", "/apis/g/v1/a/b/c/d", "/api/v1//pods"} {
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
