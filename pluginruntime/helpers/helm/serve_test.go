package helm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

func TestServeRequest(t *testing.T) {
	repoURL := serveChartRepo(t)
	c := newClient(t)
	req := helmexec.Request{
		Name:      "demo",
		Namespace: "serve-" + rand.String(5),
		Chart:     helmexec.Chart{RepoURL: repoURL, Name: "demo", Version: "0.1.0"},
		Values:    map[string]any{"greeting": "hoi", "replicas": 3},
	}
	serve := func(t *testing.T, in string) (helmexec.Response, error) {
		t.Helper()
		var out bytes.Buffer
		err := c.ServeRequest(context.Background(), strings.NewReader(in), &out)
		var res helmexec.Response
		require.NoError(t, json.Unmarshal(out.Bytes(), &res), "always one JSON answer: %q", out.String())
		return res, err
	}
	encode := func(r helmexec.Request) string {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		return string(data)
	}

	t.Run("installs and answers with the action and revision", func(t *testing.T) {
		res, err := serve(t, encode(req))
		require.NoError(t, err)
		assert.Equal(t, helmexec.Response{Action: "installed", Revision: 1}, res)
		assert.Equal(t, "3", configMap(t, req.Namespace, "demo-settings").Data["replicas"])
	})
	t.Run("the same request again is unchanged, although its numbers arrive as JSON", func(t *testing.T) {
		res, err := serve(t, encode(req))
		require.NoError(t, err)
		assert.Equal(t, helmexec.Response{Action: "unchanged", Revision: 1}, res)
	})
	t.Run("a failed install is answered with its message", func(t *testing.T) {
		missing := req
		missing.Chart.Version = "9.9.9"
		res, err := serve(t, encode(missing))
		require.Error(t, err)
		assert.Equal(t, err.Error(), res.Error)
		assert.Contains(t, res.Error, "9.9.9")
	})
	t.Run("a refused digest is answered as permanent, so the plugin does not retry it", func(t *testing.T) {
		swapped := req
		swapped.Namespace = "serve-" + rand.String(5)
		swapped.Chart.Digest = "sha256:" + strings.Repeat("0", 64)
		res, err := serve(t, encode(swapped))
		require.Error(t, err)
		assert.True(t, res.Permanent)
		assert.Contains(t, res.Error, "not the pinned sha256:000")
	})
	t.Run("an ordinary failure is not permanent", func(t *testing.T) {
		missing := req
		missing.Chart.Version = "9.9.9"
		res, _ := serve(t, encode(missing))
		assert.False(t, res.Permanent)
	})
	t.Run("a request with an unknown field is refused, not half understood", func(t *testing.T) {
		res, err := serve(t, `{"name":"demo","namespace":"x","chart":{"name":"demo"},"valuez":{}}`)
		require.Error(t, err)
		assert.Contains(t, res.Error, `unknown field "valuez"`)
	})
}
