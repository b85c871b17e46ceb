package devconsole_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

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

func startConsole(t testing.TB, log *proxyLog) *devconsole.Server {
	t.Helper()
	return startConsoleWith(t, log.add, nil)
}

// startConsoleWith is the dev console on the package's API server, every
// proxied request told to onRequest, and testFiles (when set) served on
// the plugin origin.
func startConsoleWith(t testing.TB, onRequest func(devconsole.ProxiedRequest), testFiles http.FileSystem) *devconsole.Server {
	t.Helper()
	root := testenv.RepoRoot()
	def, err := os.ReadFile(filepath.Join(root, "definition.yaml"))
	require.NoError(t, err)
	srv, err := devconsole.Start(context.Background(), devconsole.Options{
		Definition:     def,
		Console:        http.Dir(filepath.Join(root, "console")),
		RESTConfig:     controlPlane.Env(t).Config,
		Namespaces:     []string{appNamespace, "default"},
		OnProxyRequest: onRequest,
		TestFiles:      testFiles,
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
	env := controlPlane.Env(t)
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
			{crd: "diskretirements.ceph.fundament.io", name: finishedRetiring, heading: "Disk retirement " + finishedRetiring, shot: "diskretirements", rows: []string{finishedRetiring}},
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

	t.Run("block and file detail pages name the VolumeSnapshotClass and show how to claim, snapshot and restore", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + blockName)
		b.WaitFor(browser.PageFrame, `pre[data-snippet="restore"]`)
		body, err := b.FrameText(browser.PageFrame)
		require.NoError(t, err)
		assert.Regexp(t, `VolumeSnapshotClass\s+ceph-`+blockName, body)
		snippets := map[string][]string{
			"pvc":      {"kind: PersistentVolumeClaim", "storageClassName: ceph-" + blockName, "accessModes: [ReadWriteOnce]"},
			"snapshot": {"kind: VolumeSnapshot", "volumeSnapshotClassName: ceph-" + blockName, "persistentVolumeClaimName: data"},
			"restore":  {"storageClassName: ceph-" + blockName, "kind: VolumeSnapshot", "name: data-snap"},
		}
		for name, wants := range snippets {
			text := b.Text(browser.PageFrame, `pre[data-snippet="`+name+`"]`)
			for _, want := range wants {
				assert.Contains(t, text, want, "snippet %s", name)
			}
		}
		b.Screenshot("blockstorages-detail-snippets")

		b.Open("/view/filestorages.ceph.fundament.io/" + fileName)
		b.WaitFor(browser.PageFrame, `pre[data-snippet="pvc"]`)
		body, err = b.FrameText(browser.PageFrame)
		require.NoError(t, err)
		assert.Contains(t, body, "None: "+fileSnapshotRefusal, "why there is no class")
		assert.Contains(t, body, "accessModes: [ReadWriteMany]")
		assert.Zero(t, b.Count(browser.PageFrame, `pre[data-snippet="snapshot"]`), "no snapshot snippet without a class")
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
		assert.Equal(t, map[string]any{"spec": map[string]any{"replicas": float64(3), "deviceClass": nil, "default": true}}, body,
			"only spec is sent; deviceClass null keeps it on every disk, as it was")

		// Back to automatic: replicas null removes the field.
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="replicas"]`, `function() { return this.value === "3"; }`)
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		waitSheetClosed(t, b)
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: blockName}, &after))
		assert.Nil(t, after.Spec.Replicas, "replicas: null returns to automatic sizing")
	})

	// The budget scenario, by hand. The pools feed CephCluster rook-ceph: 2
	// devices on 2 nodes (2 OSDs, so Automatic is 2 copies and 3 is clamped
	// to 2), 7 TiB reported, writes stop at 80%. What is used before a new
	// consumer (status.cephBudget, bs-waiting at its spec's 1 copy; a new
	// pool takes 2 CRUSH rules):
	//   CRUSH rules: .mgr 1 + .rgw.root 2 + bs-fast 2 + bs-waiting 2 + fs-shared 4 + os-s3 14 = 25
	//   PG copies:   .mgr 3 + .rgw.root 8×2 + 64 + 32 + 128 + 160 = 403 (201 per OSD)
	// A new ObjectStorage adds 14 rules (.rgw.root exists): 39, 217 left; at
	// 2 copies 80×2 = 160 PG copies: 563 / 2 = 281 per OSD, up to
	// (563 + 267) / 2 = 415 once the autoscaler grows the pools (4/3 of 100
	// per OSD): past 250, Ceph warns; under 750, its OSDs take them: made. Usable: 7 TiB × 0.8 = 5.6 TiB at 1
	// copy, 2.8 TiB at 2.
	t.Run("budget: the create sheet shows Ceph's budget and usable capacity, live as replicas change", func(t *testing.T) {
		b.T = t
		b.Open("/view/objectstorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.WaitText(browser.SheetFrame, `[data-budget="crush-rules"]`, "This ObjectStorage uses 14 of Ceph's 256 CRUSH rules; 25 used, 217 left after it.")

		// Automatic: 2 copies on 2 nodes, which Ceph would warn of.
		b.WaitText(browser.SheetFrame, `[data-budget="pgs"]`, "Placement groups: 281 copies per OSD over 2 OSDs after it, up to 415 once Ceph's autoscaler grows the pools; "+
			"Ceph warns past 250 (mon_max_pg_per_osd) and an OSD takes at most 750.")
		b.WaitText(browser.SheetFrame, `[data-budget-warning][role="status"]`, "Ceph will warn: placement groups would reach 281 per OSD over 2 OSDs "+
			"(it adds 160 PG copies to 403), up to 415 once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (100); "+
			"past 250 (mon_max_pg_per_osd) Ceph reports TOO_MANY_PGS (HEALTH_WARN) but makes the pools. The plugin makes it and says so in its CephWarning condition.")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-budget-refusal]`), "Ceph makes the pools: no refusal")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 2.8 TiB of 7.0 TiB raw (2 copies, Ceph stops writes at 80% full)")
		assertReplicaChoices(t, b, "2", map[string][]string{"1": {"1", "5.6 TiB"}, "2": {"2", "2.8 TiB"}, "3": {"3 (clamped to 2: 2 nodes)", "2.8 TiB"}})
		assertOnlyElements(t, b, `[data-ceph-budget]`)
		assertOnlyElements(t, b, `[data-usable]`)
		b.WaitText(browser.SheetFrame, `[data-usable]`, "Automatic is min(3, nodes): 2 nodes list devices in CephCluster rook-ceph/rook-ceph.")
		b.WaitText(browser.SheetFrame, `[data-usable]`, "Raw capacity is what Ceph reports of its OSDs (CephCluster rook-ceph/rook-ceph).")
		b.WaitText(browser.SheetFrame, `[data-usable]`, "Every storage kind shares the same disks: what one stores, the others can no longer.")
		b.WaitFor(browser.SheetFrame, `button[type="submit"]`, "function() { return !this.disabled; }")
		b.Screenshot("objectstorage-create-over-budget")

		// One copy of the data still leaves the metadata pools at the
		// automatic two: 32 + 48×2 PG copies, warned of too.
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "1")
		b.WaitText(browser.SheetFrame, `[data-budget="pgs"]`, "Placement groups: 265 copies per OSD over 2 OSDs after it, up to 399 once Ceph's autoscaler grows the pools;")
		b.WaitText(browser.SheetFrame, `[data-budget-warning][role="status"]`, "placement groups would reach 265 per OSD over 2 OSDs (it adds 128 PG copies to 403)")
		b.WaitText(browser.SheetFrame, `[data-budget="crush-rules"]`, "This ObjectStorage uses 14 of Ceph's 256 CRUSH rules; 25 used, 217 left after it.")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 5.6 TiB of 7.0 TiB raw (1 copy, Ceph stops writes at 80% full)")
		assertReplicaChoices(t, b, "1", nil)
		b.Screenshot("objectstorage-create-one-copy")

		// Three is clamped to the 2 nodes: warned of again.
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "3")
		b.WaitText(browser.SheetFrame, `[data-budget-warning][role="status"]`, "placement groups would reach 281 per OSD over 2 OSDs")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 2.8 TiB of 7.0 TiB raw (2 copies, Ceph stops writes at 80% full)")
		assertReplicaChoices(t, b, "3", nil)

		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, log.find("create", "objectstorages", ""), "the sheet writes nothing before Create")
	})

	// The edit sheet of os-s3 counts it once, as it is today: 25 rules
	// (16 of them its pools' 14 and .rgw.root's 2, which it alone brings),
	// 403 PG copies, 201 per OSD. At 1 copy its data pool moves from host
	// to osd (its metadata pools keep the automatic 2 copies on host): Rook
	// makes one rule and keeps the old: 9 + 15 + 2 = 26 rules; PG copies
	// 227 (the others and .mgr) + 32 + 48×2 + .rgw.root 8×2 = 371, 185 per
	// OSD.
	t.Run("budget: the edit sheet counts the consumer itself once", func(t *testing.T) {
		b.T = t
		b.Open("/view/objectstorages.ceph.fundament.io/" + objectName)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="replicas"]`, `function() { return this.value === ""; }`)
		b.WaitText(browser.SheetFrame, `[data-budget="crush-rules"]`, "This ObjectStorage uses 16 of Ceph's 256 CRUSH rules "+
			"(14 for its pools, 2 for .rgw.root, which every ObjectStorage shares); 25 used with it, 231 left.")
		b.WaitText(browser.SheetFrame, `[data-budget="pgs"]`, "Placement groups: 201 copies per OSD over 2 OSDs with it, up to 335 once Ceph's autoscaler grows the pools; "+
			"Ceph warns past 250 (mon_max_pg_per_osd) and an OSD takes at most 750.")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-budget-refusal]`), "counted once, it fits as it does today")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-budget="domain-move"]`))
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 2.8 TiB of 7.0 TiB raw (2 copies, Ceph stops writes at 80% full)")

		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "1")
		b.WaitText(browser.SheetFrame, `[data-budget="crush-rules"]`, "This ObjectStorage uses 17 of Ceph's 256 CRUSH rules "+
			"(15 for its pools, 2 for .rgw.root, which every ObjectStorage shares); 26 used with it, 230 left.")
		b.WaitText(browser.SheetFrame, `[data-budget="pgs"]`, "Placement groups: 185 copies per OSD over 2 OSDs with it (201 today), up to 319 once Ceph's autoscaler grows the pools;")
		b.WaitText(browser.SheetFrame, `[data-budget="domain-move"]`, "At 1 copy its data pool's failure domain moves from host: Rook makes 1 more CRUSH rule and removes none.")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 5.6 TiB of 7.0 TiB raw (1 copy, Ceph stops writes at 80% full)")
		assertOnlyElements(t, b, `[data-ceph-budget]`)
		b.Screenshot("objectstorage-edit-budget")

		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, log.find("patch", "objectstorages", objectName))
	})

	t.Run("budget: lists show Usable, detail pages the usable capacity and the Ceph budget", func(t *testing.T) {
		b.T = t
		b.Open("/view/objectstorages.ceph.fundament.io")
		b.WaitText(browser.PageFrame, "thead", "Usable")
		b.WaitText(browser.PageFrame, `tr[data-row="`+objectName+`"]`, "2.8 TiB")
		b.Open("/view/filestorages.ceph.fundament.io")
		b.WaitText(browser.PageFrame, `tr[data-row="`+fileName+`"]`, "409.6 GiB")

		b.Open("/view/objectstorages.ceph.fundament.io/" + objectName)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Usable capacity", "2.8 TiB from Ceph's report (7.0 TiB raw, 2 copies, Ceph stops writes at 80% full)"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Ceph budget", "7 pools, 14 CRUSH rules, 160 PG copies"))
		b.WaitText(browser.PageFrame, "#app", "Every storage kind shares the same disks: what one stores, the others can no longer.")
		b.Open("/view/filestorages.ceph.fundament.io/" + fileName)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Usable capacity", "409.6 GiB from Disk sizes, before Ceph reports (1.0 TiB raw, 2 copies, Ceph stops writes at 80% full)"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Ceph budget", "2 pools, 4 CRUSH rules, 128 PG copies"))
		b.Open("/view/blockstorages.ceph.fundament.io/" + blockName)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Ceph budget", "1 pool, 2 CRUSH rules, 64 PG copies"))
		b.Screenshot("blockstorage-detail-budget")
	})

	// The form checks names itself, so the refusal here is one only the
	// CRD makes: 51 metadata servers passes the field's own constraints
	// (a whole number from 1) and the CEL rule self <= 50 refuses it.
	t.Run("a CRD validation error is shown in the form with the API server's message", func(t *testing.T) {
		b.T = t
		const name = "fs-too-many-mds"
		creates := len(log.find("create", "filestorages", ""))
		b.Open("/view/filestorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.Fill(browser.SheetFrame, `input[name="name"]`, name)
		b.Fill(browser.SheetFrame, `input[name="metadataServers"]`, "51")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		// The API server's words: the field path it found, then the CRD's message.
		b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, "spec.metadataServers: Invalid value")
		b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, "metadataServers must be at most 50: Rook's CephFilesystem allows at most 50 active MDS daemons, each with a standby pod")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-name-problem]:not([hidden])`), "the form's own name check passed")
		require.Len(t, log.find("create", "filestorages", ""), creates+1, "the form sent the create, and the API server refused it")
		err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, &v1alpha1.FileStorage{})
		assert.True(t, apierrors.IsNotFound(err), "nothing was created: %v", err)
		assert.True(t, b.SheetOpen(), "the form stays open with what was typed")
		b.WaitFor(browser.SheetFrame, `input[name="metadataServers"]`, `function() { return this.value === "51"; }`)
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

	t.Run("an existing claim's detail names its ConfigMap and Secret, never their values, and reads its ObjectBucket for the endpoint", func(t *testing.T) {
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
		assert.NotEmpty(t, log.find("get", "objectbuckets", "obc-apps-existing-claim"), "the endpoint comes from the claim's ObjectBucket")
		for _, r := range log.find("get", "configmaps", "existing-claim") {
			t.Errorf("a page asked for a ConfigMap: %+v", r)
		}
	})

	t.Run("a retired DiskRetirement shows its manual steps first, its checks, and what deleting does", func(t *testing.T) {
		b.T = t
		b.Open("/view/diskretirements.ceph.fundament.io")
		b.WaitText(browser.PageFrame, `tr[data-row="`+finishedRetiring+`"]`, "osd.7")
		b.WaitText(browser.PageFrame, `tr[data-row="`+finishedRetiring+`"]`, "Retired")
		b.Open("/view/diskretirements.ceph.fundament.io/" + finishedRetiring)
		b.WaitText(browser.PageFrame, `[data-manual-steps][role="alert"]`, retiredSteps)
		b.WaitFor(browser.PageFrame, `tr[data-row="Health"] [data-passed="true"]`)
		body, err := b.FrameText(browser.PageFrame)
		require.NoError(t, err)
		for _, want := range []string{"To do by hand before this disk is used again", "Yes: Ceph no longer has the OSD", "node-c", "/dev/disk/by-id/wwn-" + retiredDisk, "only removes this record"} {
			assert.Contains(t, body, want)
		}
		assert.Zero(t, b.Count(browser.PageFrame, `[data-action="proceed"]`), "a finished retirement has nothing to confirm")

		// A retired disk offers no second retirement.
		b.Open("/view/disks.ceph.fundament.io/" + retiredDisk)
		b.WaitText(browser.PageFrame, "#app", "out of the CephCluster until the annotation")
		assert.Zero(t, b.Count(browser.PageFrame, `[data-action="retire"]`))
		assert.Zero(t, b.Count(browser.PageFrame, `[data-action="replace"]`))
	})

	t.Run("retire a disk: the sheet shows the preflight of a suspended retirement before confirming", func(t *testing.T) {
		b.T = t
		ctx := context.Background()
		b.Open("/view/disks.ceph.fundament.io/disk-c1")
		b.Click(browser.PageFrame, `[data-action="retire"]`)
		require.True(t, b.SheetOpen())
		b.WaitText(browser.SheetFrame, `[data-steps]`, "cannot be cancelled")
		b.WaitText(browser.SheetFrame, `[data-steps]`, "The disk is wiped on its node, after its label is checked")
		b.Click(browser.SheetFrame, `[data-action="check"]`)

		ret := waitRetirementOf(t, "disk-c1")
		assert.True(t, ret.Spec.Suspend, "the sheet creates the retirement suspended")
		assert.Empty(t, ret.Spec.Replacement)
		b.WaitText(browser.SheetFrame, `[data-waiting]`, "the plugin is checking it")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-action="confirm"]`), "nothing to confirm before the checks ran")

		// The plugin's controller does not run here: write what it would.
		playController(t, ret.Name, v1alpha1.DiskRetirementStatus{
			Phase: v1alpha1.RetirementSuspended, Message: "Every check passed; confirm to stop osd.3 and remove it", Pool: retirePool,
			Node: "node-c", Device: "/dev/disk/by-id/wwn-disk-c1", OSDID: ptr.To[int32](3), Preflight: passedPreflight(),
		})
		for _, check := range []string{"Hosts", "Capacity", "Health"} {
			b.WaitFor(browser.SheetFrame, `tr[data-row="`+check+`"] [data-passed="true"]`)
		}
		b.WaitText(browser.SheetFrame, `tr[data-row="Capacity"]`, "fits below 85%")
		b.WaitText(browser.SheetFrame, `[data-preview-message]`, "confirm to stop osd.3")
		b.WaitText(browser.SheetFrame, `[data-facts]`, "osd.3 on disk disk-c1 (/dev/disk/by-id/wwn-disk-c1 on node-c in pool "+retirePool+")")
		b.WaitFor(browser.SheetFrame, `[data-action="confirm"]`)
		b.Screenshot("disk-retire-sheet")
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: ret.Name}, &ret))
		assert.True(t, ret.Spec.Suspend, "showing the checks confirms nothing")

		b.Click(browser.SheetFrame, `[data-action="confirm"]`)
		b.WaitHostPath("/view/diskretirements.ceph.fundament.io/" + ret.Name)
		assert.False(t, b.SheetOpen())
		b.WaitText(browser.PageFrame, "h1", "Disk retirement "+ret.Name)
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: ret.Name}, &ret))
		assert.False(t, ret.Spec.Suspend, "confirming lets the retirement proceed")
		assert.Equal(t, "disk-c1", ret.Spec.Disk)

		patches := log.find("patch", "diskretirements", ret.Name)
		require.Len(t, patches, 1)
		assert.Equal(t, "application/merge-patch+json", patches[0].ContentType)
		assert.JSONEq(t, `{"spec":{"suspend":false}}`, string(patches[0].Body))
		assert.Empty(t, log.find("delete", "diskretirements", ret.Name), "a confirmed retirement is not deleted")
	})

	t.Run("a refused retirement shows the failed check, offers no confirmation, and closing deletes it", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io/disk-c2")
		b.Click(browser.PageFrame, `[data-action="retire"]`)
		b.Click(browser.SheetFrame, `[data-action="check"]`)
		ret := waitRetirementOf(t, "disk-c2")
		assert.True(t, ret.Spec.Suspend)
		checks := passedPreflight()
		checks[2] = v1alpha1.PreflightCheck{Name: "Health", Passed: false, Message: "Ceph reports HEALTH_ERR: 1 pg inconsistent"}
		playController(t, ret.Name, v1alpha1.DiskRetirementStatus{
			Phase: v1alpha1.RetirementRefused, Message: "Refused: Ceph reports HEALTH_ERR: 1 pg inconsistent", Pool: retirePool,
			Node: "node-c", Device: "/dev/disk/by-id/wwn-disk-c2", OSDID: ptr.To[int32](4), Preflight: checks,
		})
		b.WaitText(browser.SheetFrame, `tr[data-row="Health"]`, "HEALTH_ERR")
		b.WaitFor(browser.SheetFrame, `tr[data-row="Health"] [data-passed="false"]`)
		b.WaitText(browser.SheetFrame, `[data-preview-message][role="alert"]`, "Refused")
		assert.Equal(t, 1, b.Count(browser.SheetFrame, `[data-passed="false"]`), "exactly the failed check is shown as failed")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-action="confirm"]`), "a refused retirement cannot be confirmed")
		b.Screenshot("disk-retire-refused-sheet")

		b.Click(browser.SheetFrame, `[data-action="close"]`)
		waitSheetClosed(t, b)
		waitRetirementGone(t, ret.Name)
		assert.Empty(t, log.find("patch", "diskretirements", ret.Name))
	})

	t.Run("replace a disk: the sheet offers only available disks, and Cancel deletes the preview", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io/disk-c3")
		b.Click(browser.PageFrame, `[data-action="replace"]`)
		b.WaitFor(browser.SheetFrame, `select[name="replacement"] option[value="`+spareDisk+`"]`)
		for _, unavailable := range []string{"disk-c1", "disk-c3", "disk-b1", retiredDisk} {
			assert.Zero(t, b.Count(browser.SheetFrame, `select[name="replacement"] option[value="`+unavailable+`"]`), "%s cannot replace a disk", unavailable)
		}
		b.WaitText(browser.SheetFrame, `[data-steps]`, "the replacement joins the pool")
		b.Fill(browser.SheetFrame, `select[name="replacement"]`, spareDisk)
		b.Screenshot("disk-replace-sheet")
		b.Click(browser.SheetFrame, `[data-action="check"]`)

		ret := waitRetirementOf(t, "disk-c3")
		assert.True(t, ret.Spec.Suspend)
		assert.Equal(t, spareDisk, ret.Spec.Replacement)
		playController(t, ret.Name, v1alpha1.DiskRetirementStatus{
			Phase: v1alpha1.RetirementSuspended, Message: "Every check passed, counting disk-c9 as joined", Pool: retirePool,
			Node: "node-c", Device: "/dev/disk/by-id/wwn-disk-c3", OSDID: ptr.To[int32](5), Preflight: passedPreflight(),
		})
		b.WaitFor(browser.SheetFrame, `[data-action="confirm"]`)
		b.WaitText(browser.SheetFrame, `[data-facts]`, "replacement "+spareDisk)
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		waitRetirementGone(t, ret.Name)
		assert.Empty(t, log.find("patch", "diskretirements", ret.Name), "cancelling confirms nothing")
	})

	t.Run("the pool edit sheet offers Retire instead for an unchecked disk, and Cancel returns to the unsaved form", func(t *testing.T) {
		b.T = t
		ctx := context.Background()
		var before v1alpha1.DiskPool
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: retirePool}, &before))

		b.Open("/view/diskpools.ceph.fundament.io/" + retirePool)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `input[data-disk="disk-c2"]`, "function() { return this.checked; }")
		b.Click(browser.SheetFrame, `input[data-disk="disk-c2"]`)
		b.Click(browser.SheetFrame, `input[data-disk="`+retiredDisk+`"]`)
		b.WaitText(browser.SheetFrame, `[data-warning] .plugin-error`, "disk-c2 (/dev/sdc on node-c)")
		b.WaitFor(browser.SheetFrame, `[data-retire-offer="disk-c2"] [data-action="retire-instead"]`)
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-retire-offer="`+retiredDisk+`"]`), "a retired disk offers no second retirement")
		b.Screenshot("diskpool-edit-retire-instead")
		b.Click(browser.SheetFrame, `[data-retire-offer="disk-c2"] [data-action="retire-instead"]`)

		// The Disk detail page's retire flow, in the same sheet.
		b.WaitText(browser.SheetFrame, "h1", "Retire disk disk-c2")
		b.WaitText(browser.SheetFrame, `[data-steps]`, "cannot be cancelled")
		b.Click(browser.SheetFrame, `[data-action="check"]`)
		ret := waitRetirementOf(t, "disk-c2")
		assert.True(t, ret.Spec.Suspend, "Retire instead creates the retirement suspended")
		assert.Empty(t, ret.Spec.Replacement)
		playController(t, ret.Name, v1alpha1.DiskRetirementStatus{
			Phase: v1alpha1.RetirementSuspended, Message: "Every check passed; confirm to stop osd.4 and remove it", Pool: retirePool,
			Node: "node-c", Device: "/dev/disk/by-id/wwn-disk-c2", OSDID: ptr.To[int32](4), Preflight: passedPreflight(),
		})
		for _, check := range []string{"Hosts", "Capacity", "Health"} {
			b.WaitFor(browser.SheetFrame, `tr[data-row="`+check+`"] [data-passed="true"]`)
		}
		b.WaitText(browser.SheetFrame, `[data-facts]`, "osd.4 on disk disk-c2")
		b.WaitFor(browser.SheetFrame, `[data-action="confirm"]`)
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitRetirementGone(t, ret.Name)

		// Back in the pool's form, the disk checked again; nothing saved.
		b.WaitText(browser.SheetFrame, "h1", "Edit disk pool "+retirePool)
		assert.True(t, b.SheetOpen())
		b.WaitFor(browser.SheetFrame, `input[data-disk="disk-c2"]`, "function() { return this.checked; }")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-retire-offer="disk-c2"]`))
		b.Click(browser.SheetFrame, `form > .plugin-actions [data-action="cancel"]`)
		waitSheetClosed(t, b)

		var after v1alpha1.DiskPool
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: retirePool}, &after))
		assert.Equal(t, before.Spec, after.Spec, "Retire instead leaves the pool's spec alone")
		assert.Empty(t, log.find("patch", "diskpools", retirePool))
		assert.Empty(t, log.find("patch", "diskretirements", ret.Name), "cancelling confirms nothing")
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

// assertReplicaChoices checks the sheet's table of what 1, 2 and 3
// replicas give (want: row → replicas and usable cells) and that exactly
// the selected row is marked, in words.
func assertReplicaChoices(t *testing.T, b *browser.Browser, selected string, want map[string][]string) {
	t.Helper()
	for row, cells := range want {
		for _, cell := range cells {
			b.WaitText(browser.SheetFrame, `[data-usable] tr[data-row="`+row+`"]`, cell)
		}
	}
	b.WaitText(browser.SheetFrame, `[data-usable] tr[data-row="`+selected+`"][aria-current="true"]`, "✔ Selected")
	assert.Equal(t, 1, b.Count(browser.SheetFrame, `[data-usable] tr[aria-current]`), "one row is the selected one")
	res, _, err := b.Call(browser.SheetFrame, "[data-usable] tbody", `function() { return [...this.rows].filter((r) => r.textContent.includes('Selected')).length; }`)
	require.NoError(t, err)
	assert.Equal(t, "1", string(res), "the word Selected marks one row")
}

// assertOnlyElements checks that a sheet card holds elements only: no stray
// text ("null", "undefined") beside its paragraphs.
func assertOnlyElements(t *testing.T, b *browser.Browser, sel string) {
	t.Helper()
	res, _, err := b.Call(browser.SheetFrame, sel, `function() { return [...this.childNodes].filter((n) => n.nodeType !== Node.ELEMENT_NODE).map((n) => n.textContent); }`)
	require.NoError(t, err)
	assert.JSONEq(t, "[]", string(res), "%s has text outside its elements", sel)
}

// deflistValue is a WaitFor check on a page's body: the deflist entry
// labelled label reads want.
func deflistValue(label, want string) string {
	raw, _ := json.Marshal([]string{label, want})
	return fmt.Sprintf(`function() {
  const [label, want] = %s;
  const dt = [...this.querySelectorAll('dt')].find((d) => d.textContent === label);
  return Boolean(dt) && dt.nextElementSibling.textContent === want;
}`, raw)
}

func waitSheetClosed(t *testing.T, b *browser.Browser) {
	t.Helper()
	require.Eventually(t, func() bool { return !b.SheetOpen() }, browser.DefaultWait, browser.PollEvery, "the sheet should close after a successful save")
}

// waitRetirementOf waits until a DiskRetirement of disk exists and returns
// it (the sheet names it with generateName).
func waitRetirementOf(t *testing.T, disk string) v1alpha1.DiskRetirement {
	t.Helper()
	var found []v1alpha1.DiskRetirement
	require.Eventually(t, func() bool {
		var list v1alpha1.DiskRetirementList
		if err := controlPlane.Env(t).Client.List(context.Background(), &list); err != nil {
			return false
		}
		found = found[:0]
		for _, r := range list.Items {
			if r.Spec.Disk == disk {
				found = append(found, r)
			}
		}
		return len(found) > 0
	}, browser.DefaultWait, browser.PollEvery, "the sheet should create a DiskRetirement of %s", disk)
	require.Len(t, found, 1, "one retirement per click")
	return found[0]
}

// playController writes a retirement's status as the plugin's controller
// would, through the status subresource.
func playController(t *testing.T, name string, status v1alpha1.DiskRetirementStatus) {
	t.Helper()
	env := controlPlane.Env(t)
	require.Eventually(t, func() bool {
		var ret v1alpha1.DiskRetirement
		if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, &ret); err != nil {
			return false
		}
		ret.Status = status
		return env.Client.Status().Update(context.Background(), &ret) == nil
	}, browser.DefaultWait, browser.PollEvery)
}

func waitRetirementGone(t *testing.T, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var ret v1alpha1.DiskRetirement
		return apierrors.IsNotFound(controlPlane.Env(t).Client.Get(context.Background(), types.NamespacedName{Name: name}, &ret))
	}, browser.DefaultWait, browser.PollEvery, "the suspended DiskRetirement %s should be deleted", name)
}

// The kube-api-proxy refuses what allowedResources does not list, with a
// message a page can show; nothing refused reaches the API server.
func TestKubeAPIProxyEnforcesAllowedResources(t *testing.T) {
	env := controlPlane.Env(t)
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
		{"a watch of a resource listed without watch", http.MethodGet, "/apis/objectbucket.io/v1alpha1/objectbuckets?watch=true", token, http.StatusForbidden, "watch objectbuckets (objectbucket.io/v1alpha1) is not in the plugin's spec.allowedResources"},
		{"a path that is no resource", http.MethodGet, "/version", token, http.StatusForbidden, "is not a resource path"},
		{"no token", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools", "", http.StatusUnauthorized, "bearer token"},
		{"a token the console never issued", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools", "forged", http.StatusUnauthorized, "bearer token"},
		{"an allowed list", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools", token, http.StatusOK, ""},
		{"an allowed watch", http.MethodGet, "/apis/ceph.fundament.io/v1alpha1/diskpools?watch=true&timeoutSeconds=1", token, http.StatusOK, ""},
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
