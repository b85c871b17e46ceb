package devconsole_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/browser"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// proxyLog keeps what the kube-api-proxy saw, to check what pages sent.
type proxyLog struct {
	mu       sync.Mutex
	requests []devconsole.ProxiedRequest
}

func (l *proxyLog) add(r devconsole.ProxiedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, r)
}

func (l *proxyLog) find(verb, resource, name string) []devconsole.ProxiedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []devconsole.ProxiedRequest
	for _, r := range l.requests {
		if r.Verb == verb && r.Resource == resource && r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

func startConsole(t *testing.T, log *proxyLog) *devconsole.Server {
	t.Helper()
	root := testenv.RepoRoot()
	def, err := os.ReadFile(filepath.Join(root, "definition.yaml"))
	require.NoError(t, err)
	srv, err := devconsole.Start(context.Background(), devconsole.Options{
		Definition:     def,
		Console:        http.Dir(filepath.Join(root, "console")),
		RESTConfig:     env.Config,
		Namespaces:     []string{appNamespace, "default"},
		OnProxyRequest: log.add,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// TestConsoleInBrowser drives the plugin's real pages in headless Chromium
// through the development console against a real API server. The scenarios
// share one browser and run in order; after all of them, no page may have
// violated the CSP, thrown, logged an error or opened a dialog.
func TestConsoleInBrowser(t *testing.T) {
	createFixtures(t)
	log := &proxyLog{}
	srv := startConsole(t, log)
	b := browser.Start(t, srv.URL())

	t.Run("every list and detail page renders real objects", func(t *testing.T) {
		b.T = t
		pages := []struct {
			crd, name, heading, shot string
			rows                     []string
		}{
			{crd: "disks.ceph.fundament.io", name: "disk-a1", heading: "Disk disk-a1", shot: "disks", rows: []string{"disk-a1", "disk-a2", "disk-b1", "disk-xss"}},
			{crd: "diskpools.ceph.fundament.io", name: existingPool, heading: "Disk pool " + existingPool, shot: "diskpools", rows: []string{existingPool}},
			{crd: "blockstorages.ceph.fundament.io", name: blockName, heading: "Block storage " + blockName, shot: "blockstorages", rows: []string{blockName}},
			{crd: "filestorages.ceph.fundament.io", name: fileName, heading: "File storage " + fileName, shot: "filestorages", rows: []string{fileName}},
			{crd: "objectstorages.ceph.fundament.io", name: objectName, heading: "Object storage " + objectName, shot: "objectstorages", rows: []string{objectName}},
		}
		for _, p := range pages {
			b.Open("/view/" + p.crd)
			for _, row := range p.rows {
				b.WaitFor(browser.PageFrame, `tr[data-row="`+row+`"]`)
			}
			b.Screenshot(p.shot + "-list")

			b.Open("/view/" + p.crd + "/" + p.name)
			b.WaitText(browser.PageFrame, "h1", p.heading)
			b.Screenshot(p.shot + "-detail")
		}
	})

	t.Run("detail pages show status, the StorageClass and the cluster capacity", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + blockName)
		b.WaitFor(browser.PageFrame, `meter[data-capacity]`)
		body, err := b.FrameText(browser.PageFrame)
		require.NoError(t, err)
		for _, want := range []string{"Ready", "ceph-" + blockName, "host", "1.0 TiB used of 7.0 TiB", "Reference StorageClass ceph-" + blockName} {
			assert.Contains(t, body, want)
		}
	})

	t.Run("a Disk model with markup is shown as text and runs nothing", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io/disk-xss")
		b.WaitText(browser.PageFrame, "#app", xssModel)
		assert.Zero(t, b.Count(browser.PageFrame, "img"), "the model must not become an element")
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitText(browser.PageFrame, `tr[data-row="disk-xss"]`, "/dev/sdd")
		assert.Zero(t, b.Count(browser.PageFrame, "img"))
	})

	t.Run("create a DiskPool through the sheet and the disk picker", func(t *testing.T) {
		b.T = t
		b.Open("/view/diskpools.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		require.True(t, b.SheetOpen())
		b.WaitFor(browser.SheetFrame, `[data-disk-picker]`)
		b.WaitFor(browser.SheetFrame, `input[data-disk="disk-b1"]`, "function() { return this.disabled; }")
		b.WaitText(browser.SheetFrame, `tr[data-row="disk-b1"]`, "Claimed by pool "+existingPool)
		b.Fill(browser.SheetFrame, `input[name="name"]`, "pool-new")
		b.Click(browser.SheetFrame, `input[data-disk="disk-a1"]`)
		b.Click(browser.SheetFrame, `input[data-disk="disk-a2"]`)
		b.Screenshot("diskpool-create-sheet")
		b.Click(browser.SheetFrame, `button[type="submit"]`)

		b.WaitHostPath("/view/diskpools.ceph.fundament.io/pool-new")
		assert.False(t, b.SheetOpen(), "the console closes the sheet and opens the new pool")
		b.WaitText(browser.PageFrame, "h1", "Disk pool pool-new")
		var pool v1alpha1.DiskPool
		require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Name: "pool-new"}, &pool))
		assert.Equal(t, []string{"disk-a1", "disk-a2"}, pool.Spec.Disks)
	})

	t.Run("unchecking a disk warns, and entries the picker cannot offer are kept", func(t *testing.T) {
		b.T = t
		b.Open("/view/diskpools.ceph.fundament.io/" + existingPool)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `input[data-disk="`+goneDisk+`"]`, "function() { return this.checked; }")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-warning] .plugin-error`), "no warning before anything is unchecked")
		b.Click(browser.SheetFrame, `input[data-disk="disk-b1"]`)
		b.WaitText(browser.SheetFrame, `[data-warning] .plugin-error`, "its OSD keeps running until it is purged from Ceph manually, and data may rebalance in the meantime")
		b.WaitText(browser.SheetFrame, `[data-warning] .plugin-error`, "disk-b1 (/dev/nvme0n1 on node-b)")
		b.Screenshot("diskpool-edit-uncheck-warning")
		b.Click(browser.SheetFrame, `button[type="submit"]`)

		waitSheetClosed(t, b)
		var pool v1alpha1.DiskPool
		require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Name: existingPool}, &pool))
		assert.Equal(t, []string{goneDisk}, pool.Spec.Disks, "the disk array is replaced whole, keeping the entry with no Disk")
		assert.Equal(t, v1alpha1.DiskPoolReady, pool.Status.Phase, "status is not the console's to write")
	})

	t.Run("edit BlockStorage replicas with a merge patch of spec only", func(t *testing.T) {
		b.T = t
		ctx := context.Background()
		var before v1alpha1.BlockStorage
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: blockName}, &before))

		b.Open("/view/blockstorages.ceph.fundament.io/" + blockName)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="replicas"]`, `function() { return this.value === "2"; }`)
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "3")
		b.Screenshot("blockstorage-edit-sheet")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		waitSheetClosed(t, b)

		var after v1alpha1.BlockStorage
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: blockName}, &after))
		require.NotNil(t, after.Spec.Replicas)
		assert.Equal(t, int32(3), *after.Spec.Replicas)
		assert.True(t, after.Spec.Default, "fields the form did not change stay")
		assert.Equal(t, before.Status, after.Status, "the edit left status intact")

		patches := log.find("patch", "blockstorages", blockName)
		require.Len(t, patches, 1)
		assert.Equal(t, "application/merge-patch+json", patches[0].ContentType)
		var body map[string]any
		require.NoError(t, json.Unmarshal(patches[0].Body, &body))
		assert.Equal(t, map[string]any{"spec": map[string]any{"replicas": float64(3), "default": true}}, body, "only spec is sent")

		// Back to automatic: replicas null removes the field.
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="replicas"]`, `function() { return this.value === "3"; }`)
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		waitSheetClosed(t, b)
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: blockName}, &after))
		assert.Nil(t, after.Spec.Replicas, "replicas: null returns to automatic sizing")
	})

	t.Run("a CRD validation error is shown in the form with the API server's message", func(t *testing.T) {
		b.T = t
		b.Open("/view/filestorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.Fill(browser.SheetFrame, `input[name="name"]`, strings.Repeat("a", 60))
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, "metadata.name must be at most 53 characters")
		assert.True(t, b.SheetOpen(), "the form stays open with what was typed")
		b.Screenshot("filestorage-create-validation-error")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
	})

	t.Run("create a bucket claim with a quota from the Buckets section", func(t *testing.T) {
		b.T = t
		b.Open("/view/objectstorages.ceph.fundament.io/" + objectName)
		b.WaitFor(browser.PageFrame, `tr[data-row="apps/existing-claim"]`)
		b.Click(browser.PageFrame, `[data-action="create-bucket"]`)
		b.WaitFor(browser.SheetFrame, `select[name="namespace"]`)

		// An exact name that exists, or another claim asked for, is caught
		// before creating.
		b.Fill(browser.SheetFrame, `input[name="name"]`, "photos")
		b.Fill(browser.SheetFrame, `select[name="naming"]`, "exact")
		b.Fill(browser.SheetFrame, `input[name="bucketName"]`, "taken-bucket")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, "A bucket named taken-bucket already exists (ObjectBucket obc-apps-existing-claim)")
		b.Fill(browser.SheetFrame, `input[name="bucketName"]`, "requested-bucket")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, "apps/pending-claim already asks for a bucket named requested-bucket")

		b.Fill(browser.SheetFrame, `input[name="bucketName"]`, "photos-bucket")
		b.Fill(browser.SheetFrame, `input[name="maxSize"]`, "10Gi")
		b.Fill(browser.SheetFrame, `input[name="maxObjects"]`, "1000")
		b.Screenshot("bucket-create-sheet")
		b.Click(browser.SheetFrame, `button[type="submit"]`)

		// The claim's detail sheet replaces the create sheet.
		b.WaitText(browser.SheetFrame, "h1", "Bucket claim apps/photos")
		b.WaitText(browser.SheetFrame, `[data-snippet="envFrom"]`, "secretRef")
		b.Screenshot("bucket-detail-sheet")
		claim := &unstructured.Unstructured{}
		claim.SetAPIVersion("objectbucket.io/v1alpha1")
		claim.SetKind("ObjectBucketClaim")
		require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: appNamespace, Name: "photos"}, claim))
		spec := claim.Object["spec"].(map[string]any)
		assert.Equal(t, objectClass, spec["storageClassName"])
		assert.Equal(t, "photos-bucket", spec["bucketName"])
		assert.Equal(t, map[string]any{"maxSize": "10Gi", "maxObjects": "1000"}, spec["additionalConfig"])

		// The page under the sheet listed again after the write.
		b.WaitFor(browser.PageFrame, `tr[data-row="apps/photos"]`)
	})

	t.Run("an existing claim's detail names its ConfigMap and Secret, never their values", func(t *testing.T) {
		b.T = t
		b.Open("/view/objectstorages.ceph.fundament.io/" + objectName)
		b.Click(browser.PageFrame, `tr[data-row="apps/existing-claim"] button`)
		b.WaitText(browser.SheetFrame, "dl", "rook-ceph-rgw-cephobj-os-s3.rook-ceph.svc:80")
		body, err := b.FrameText(browser.SheetFrame)
		require.NoError(t, err)
		assert.Contains(t, body, "taken-bucket")
		assert.NotContains(t, body, "AWS_SECRET_ACCESS_KEY=")
		for _, r := range append(log.find("get", "secrets", "existing-claim"), log.find("list", "secrets", "")...) {
			t.Errorf("a page asked for a Secret: %+v", r)
		}
	})

	t.Run("no CSP violations, page errors or dialogs on any page", func(t *testing.T) {
		assert.Empty(t, b.Problems())
	})

	// The check above is only as good as the recorder: prove it sees an
	// inline style the CSP blocks and an uncaught exception in a page.
	t.Run("the recorder sees a CSP violation and an uncaught error", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, `tr[data-row="disk-a1"]`)
		_, _, err := b.Call(browser.PageFrame, "body", `function() {
  this.insertAdjacentHTML('beforeend', '<p style="color: red">probe</p>');
  setTimeout(() => { throw new Error('probe exception'); });
}`)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			all := strings.Join(b.Problems(), "\n")
			return strings.Contains(all, "CSP-VIOLATION style-src") && strings.Contains(all, "probe exception")
		}, browser.DefaultWait, browser.PollEvery, "recorded: %v", b.Problems())
	})
}

func waitSheetClosed(t *testing.T, b *browser.Browser) {
	t.Helper()
	require.Eventually(t, func() bool { return !b.SheetOpen() }, browser.DefaultWait, browser.PollEvery, "the sheet should close after a successful save")
}

// The kube-api-proxy refuses what allowedResources does not list, with a
// message a page can show; nothing refused reaches the API server.
func TestKubeAPIProxyEnforcesAllowedResources(t *testing.T) {
	srv := startConsole(t, &proxyLog{})
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: "pool-kept"}}))
	base := srv.KubeAPIProxyURL() + "/clusters/" + srv.ClusterID()
	token := srv.IssueToken()

	tests := []struct {
		name, method, path, token string
		wantCode                  int
		wantMessage               string
	}{
		{"a delete of one of the plugin's kinds", http.MethodDelete, "/apis/ceph.fundament.io/v1alpha1/diskpools/pool-kept", token, http.StatusForbidden, "delete diskpools (ceph.fundament.io/v1alpha1) is not in the plugin's spec.allowedResources"},
		{"a resource not listed at all", http.MethodGet, "/api/v1/namespaces/default/secrets", token, http.StatusForbidden, "list secrets (core/v1) is not in the plugin's spec.allowedResources"},
		{"a verb not listed for a listed resource", http.MethodPost, "/apis/ceph.fundament.io/v1alpha1/disks", token, http.StatusForbidden, "create disks (ceph.fundament.io/v1alpha1)"},
		{"a status write", http.MethodPatch, "/apis/ceph.fundament.io/v1alpha1/diskpools/pool-kept/status", token, http.StatusForbidden, "patch diskpools/status"},
		{"a watch", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools?watch=true", token, http.StatusForbidden, "watch diskpools"},
		{"a path that is no resource", http.MethodGet, "/version", token, http.StatusForbidden, "is not a resource path"},
		{"no token", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools", "", http.StatusUnauthorized, "bearer token"},
		{"a token the console never issued", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools", "forged", http.StatusUnauthorized, "bearer token"},
		{"an allowed list", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools", token, http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, nil)
			require.NoError(t, err)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.wantCode, resp.StatusCode)
			if tc.wantMessage == "" {
				return
			}
			var status struct{ Message string }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&status))
			assert.Contains(t, status.Message, tc.wantMessage)
		})
	}
	var pool v1alpha1.DiskPool
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: "pool-kept"}, &pool), "the refused delete must not have reached the API server")
}

// Every plugin page and the SDK carry the production CSP; the pages come
// from a different origin than the console.
func TestPluginPagesAreServedUnderTheProductionCSP(t *testing.T) {
	srv := startConsole(t, &proxyLog{})
	require.NotEqual(t, srv.URL(), srv.PluginURL())
	pageBase := srv.PluginURL() + "/clusters/" + srv.ClusterID() + "/plugins/system--ceph-rook/v0.1.0/console/"
	want := "default-src 'self'; script-src 'self'; style-src 'self'; connect-src " + srv.URL() + " " + srv.PluginURL() +
		"; form-action " + srv.URL() + " " + srv.PluginURL() + "; frame-ancestors " + srv.URL() + "; base-uri 'none'; object-src 'none'"
	for _, url := range []string{pageBase + "disks-list.html", pageBase + "_shared.js", srv.PluginURL() + "/plugins/sdk/v1/plugin-sdk.js"} {
		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, url)
		assert.Equal(t, want, resp.Header.Get("Content-Security-Policy"), url)
	}
	resp, err := http.Get(pageBase)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no directory listings")
}
