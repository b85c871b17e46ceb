package devconsole_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/browser"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// The tiers fixture: pool-tiers claims three 4 TiB hdd disks on three
// hosts and two 1 TiB ssd disks on two of them; the nvme disks are not in
// the union (three, one on each host, are claimed by no pool, the other
// retired). The
// CephCluster lists the five devices on three nodes, reports 14 TiB and
// stops writes at 80%.
const (
	tierPool      = "pool-tiers"
	tierBlockSSD  = "bs-on-ssd"  // spec and status on ssd
	tierBlockAll  = "bs-all"     // placed on every disk
	tierBlockGone = "bs-on-nvme" // names a class the pools have no disk of
	tierFile      = "fs-tiered"  // data on hdd, metadata on ssd
	tierObject    = "os-tiered"  // data and metadata pools on hdd
)

// The tier select's labels for the fixture: ssd on 2 hosts, hdd on 3.
const (
	tierEvery   = "Every disk (no class)"
	tierSSD     = "ssd — 2 hosts, 2.0 TiB raw, up to 2 copies across hosts"
	tierHDD     = "hdd — 3 hosts, 12.0 TiB raw, up to 3 copies across hosts"
	tierAutoMDS = "Automatic: fastest class that keeps the data's copies"
)

// TestTiersInBrowser drives the device classes ("tiers") in the consumer
// sheets, lists and detail pages and the overview in headless Chromium. It
// replaces whatever the API server holds with its own fixture and leaves
// the kinds it touched empty.
func TestTiersInBrowser(t *testing.T) {
	env := controlPlane.Env(t)
	axeDir := filepath.Dir(cachedir.AxeCoreScript())
	_, err := os.Stat(cachedir.AxeCoreScript())
	require.NoError(t, err, "axe-core is not cached: run `just axe-core` (go run ./hack/axe)")

	resetConsoleObjects(t)
	t.Cleanup(func() { resetConsoleObjects(t) })
	createTierFixtures(t)
	log := &proxyLog{}
	srv := startConsoleWith(t, log.add, http.Dir(axeDir))
	b := browser.Start(t, srv.URL())
	axeURL := srv.PluginURL() + devconsole.TestFilesPath + "axe.min.js"
	ctx := context.Background()

	t.Run("the create sheet offers every disk and only the classes the DiskPools' disks have, fastest first", func(t *testing.T) {
		b.T = t
		for _, kind := range []string{"blockstorages", "filestorages", "objectstorages"} {
			b.Open("/view/" + kind + ".ceph.fundament.io")
			b.Click(browser.PageFrame, `[data-action="create"]`)
			b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
			assert.Equal(t, [][2]string{{"", tierEvery}, {"ssd", tierSSD}, {"hdd", tierHDD}}, selectOptions(t, b, `select[name="deviceClass"]`),
				"%s: no nvme, which no pool's disk in Ceph has", kind)
			b.WaitFor(browser.SheetFrame, `select[name="deviceClass"]`, `function() { return this.value === ""; }`)
			b.WaitFor(browser.SheetFrame, `label[for="field-deviceClass"]`, browser.TextContains("Tier"))
			if kind == "filestorages" {
				assert.Equal(t, [][2]string{{"", tierAutoMDS}, {"ssd", tierSSD}, {"hdd", tierHDD}}, selectOptions(t, b, `select[name="metadataDeviceClass"]`))
			} else {
				assert.Zero(t, b.Count(browser.SheetFrame, `select[name="metadataDeviceClass"]`), "%s: only a FileStorage chooses its metadata tier", kind)
			}
			b.Click(browser.SheetFrame, `[data-action="cancel"]`)
			waitSheetClosed(t, b)
		}
	})

	// On every disk: 3 nodes, Ceph's 14 TiB, 3 copies: 14 × 0.8 / 3. On
	// ssd: 2 hosts, its 2 TiB, 2 copies: 2 × 0.8 / 2 = 0.8 TiB.
	//
	// Ceph's budget as budget.go counts it: 26 CRUSH rules used (.mgr 1,
	// .rgw.root 1, made with os-tiered's metadata on hdd, bs-on-nvme 2,
	// unplaced, and the others' status.cephBudget: 2 + 2 + 4 + 14); a new
	// pool takes 1 rule on a class, 2 without. PG copies by class: every
	// OSD 99 (.mgr 3, bs-all 96), hdd 472 (fs-tiered's data 64, os-tiered
	// 384, .rgw.root 8 × 3), ssd 128 (bs-on-ssd 64, fs-tiered's metadata
	// 64), nvme 32 (no OSD). On every disk, the newcomer's 96 land on
	// every OSD, the busiest the 3 hdd ones: (195 × 3/5 + 472) / 3 = 196,
	// (589 + 400) / 3 = 329 grown. On ssd its 64 land on the 2 ssd OSDs
	// only: (99 × 2/5 + 192) / 2 = 115, (231 + 267) / 2 = 249 grown.
	t.Run("a tier sizes the sheet's preview on its hosts and disks, and creating sends spec.deviceClass", func(t *testing.T) {
		b.T = t
		const name = "bs-new-ssd"
		b.Open("/view/blockstorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 3.7 TiB of 14.0 TiB raw (3 copies, Ceph stops writes at 80% full)")
		b.WaitText(browser.SheetFrame, `[data-budget="crush-rules"]`, "This BlockStorage uses 2 of Ceph's 256 CRUSH rules; 26 used, 228 left after it.")
		b.WaitText(browser.SheetFrame, `[data-budget="pgs"]`, "Placement groups: 196 copies per OSD over 3 hdd OSDs after it, up to 329 once Ceph's autoscaler grows the pools;")

		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "ssd")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 819 GiB of 2.0 TiB raw (2 copies, Ceph stops writes at 80% full)")
		assertReplicaChoices(t, b, "2", map[string][]string{"1": {"1", "1.6 TiB"}, "2": {"2", "819 GiB"}, "3": {"3 (refused: 2 nodes have ssd disks)", "—"}})
		b.WaitText(browser.SheetFrame, `[data-usable]`, "Automatic is min(3, nodes), at least 2 and never fewer than the copies it has: 2 nodes have ssd disks in the DiskPools.")
		b.WaitText(browser.SheetFrame, `[data-usable]`, "Raw capacity is the summed size of the DiskPools' ssd disks")
		b.WaitText(browser.SheetFrame, `[data-budget="crush-rules"]`, "This BlockStorage uses 1 of Ceph's 256 CRUSH rules; 26 used, 229 left after it.")
		b.WaitText(browser.SheetFrame, `[data-budget="pgs"]`, "Placement groups: 115 copies per OSD over 2 ssd OSDs after it, up to 249 once Ceph's autoscaler grows the pools;")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-budget-warning]`), "the ssd OSDs stay under 250 once grown")
		assertOnlyElements(t, b, `[data-ceph-budget]`)
		assertOnlyElements(t, b, `[data-usable]`)
		b.Screenshot("blockstorage-create-tier")

		b.Fill(browser.SheetFrame, `input[name="name"]`, name)
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitHostPath("/view/blockstorages.ceph.fundament.io/" + name)
		var created v1alpha1.BlockStorage
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: name}, &created))
		assert.Equal(t, v1alpha1.DiskTypeSSD, created.Spec.DeviceClass)
		assert.Nil(t, created.Spec.Replicas, "automatic replicas stay absent")
		creates := log.find("create", "blockstorages", "")
		require.Len(t, creates, 1)
		var body struct{ Spec map[string]any }
		require.NoError(t, json.Unmarshal(creates[0].Body, &body))
		assert.Equal(t, map[string]any{"deviceClass": "ssd", "default": false}, body.Spec, "the class is sent, automatic replicas are not")
	})

	t.Run("every disk creates without a class", func(t *testing.T) {
		b.T = t
		const name = "os-every-disk"
		b.Open("/view/objectstorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		b.Fill(browser.SheetFrame, `input[name="name"]`, name)
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitHostPath("/view/objectstorages.ceph.fundament.io/" + name)
		creates := log.find("create", "objectstorages", "")
		require.Len(t, creates, 1)
		assert.NotContains(t, string(creates[0].Body), "deviceClass")
		var created v1alpha1.ObjectStorage
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: name}, &created))
		assert.Empty(t, created.Spec.DeviceClass)
	})

	// Data on hdd (3 hosts) at automatic replicas is 3 copies across
	// hosts: ssd's 2 hosts cannot keep that, so automatic metadata stays on
	// hdd; at 2 copies ssd can, and it is the faster.
	t.Run("a FileStorage's metadata tier: automatic follows the data's copies, an explicit one is sent", func(t *testing.T) {
		b.T = t
		const name = "fs-new-tiered"
		b.Open("/view/filestorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.WaitText(browser.SheetFrame, `[data-metadata-tier]`, "The metadata pool goes on every OSD (automatic).")
		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "hdd")
		b.WaitText(browser.SheetFrame, `[data-metadata-tier]`, "The metadata pool goes on the hdd OSDs (automatic).")
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "2")
		b.WaitText(browser.SheetFrame, `[data-metadata-tier]`, "The metadata pool goes on the ssd OSDs (automatic).")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 4.8 TiB of 12.0 TiB raw (2 copies, Ceph stops writes at 80% full)")
		b.Fill(browser.SheetFrame, `select[name="metadataDeviceClass"]`, "hdd")
		b.WaitText(browser.SheetFrame, `[data-metadata-tier]`, "The metadata pool goes on the hdd OSDs.")
		b.Screenshot("filestorage-create-tiers")

		b.Fill(browser.SheetFrame, `input[name="name"]`, name)
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitHostPath("/view/filestorages.ceph.fundament.io/" + name)
		var created v1alpha1.FileStorage
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: name}, &created))
		assert.Equal(t, v1alpha1.DiskTypeHDD, created.Spec.DeviceClass)
		assert.Equal(t, v1alpha1.DiskTypeHDD, created.Spec.MetadataDeviceClass)
		assert.Equal(t, ptr.To[int32](2), created.Spec.Replicas)
	})

	t.Run("lists show each consumer's tier, detail pages its tier and metadata tier", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, `tr[data-row="`+tierBlockAll+`"]`)
		for row, want := range map[string]string{tierBlockSSD: "ssd", tierBlockAll: "every disk", "bs-new-ssd": "—"} {
			assert.Equal(t, want, cellInColumn(t, b, `tr[data-row="`+row+`"]`, "Tier"), "%s: the class status reports (none before the plugin placed it)", row)
		}
		b.Open("/view/filestorages.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, `tr[data-row="`+tierFile+`"]`)
		assert.Equal(t, "hdd", cellInColumn(t, b, `tr[data-row="`+tierFile+`"]`, "Tier"))
		b.Open("/view/objectstorages.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, `tr[data-row="`+tierObject+`"]`)
		assert.Equal(t, "hdd", cellInColumn(t, b, `tr[data-row="`+tierObject+`"]`, "Tier"))
		b.Screenshot("objectstorages-list-tier")

		b.Open("/view/filestorages.ceph.fundament.io/" + tierFile)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Tier", "hdd"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Metadata tier", "ssd"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Replicas", "2"))
		spec := b.Text(browser.PageFrame, "#app")
		assert.Contains(t, spec, "Metadata tier"+tierAutoMDS, "the Spec card: metadataDeviceClass absent is automatic")
		b.Open("/view/objectstorages.ceph.fundament.io/" + tierObject)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Metadata tier", "hdd"))
		assert.NotContains(t, b.Text(browser.PageFrame, "#app"), "Metadata tier"+tierAutoMDS, "an ObjectStorage's metadata tier is not its to choose")
		b.Open("/view/blockstorages.ceph.fundament.io/" + tierBlockAll)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Tier", "every disk"))
		assert.Contains(t, b.Text(browser.PageFrame, "#app"), "Tier"+tierEvery, "the Spec card says no class")
		assert.NotContains(t, b.Text(browser.PageFrame, "#app"), "Metadata tier", "a BlockStorage has no metadata pools")
	})

	// bs-on-ssd keeps 2 copies on ssd's 2 hosts; on hdd automatic is 3.
	t.Run("the edit sheet warns that a tier change moves the data, and every disk removes the class", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + tierBlockSSD)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="deviceClass"]`, `function() { return this.value === "ssd"; }`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 819 GiB of 2.0 TiB raw (2 copies, Ceph stops writes at 80% full)")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-tier-warning] p`), "no warning while the choice is the spec's")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-replica-warning] p`))

		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "hdd")
		b.WaitText(browser.SheetFrame, `[data-tier-warning] p[role="alert"][data-tier-move="data"]`,
			"▲ Ceph will move all of block storage "+tierBlockSSD+"'s data from the ssd OSDs to the hdd OSDs: Rook gives its pools a new CRUSH rule, "+
				"and Ceph copies every byte of its data onto the other class's OSDs. Disks and network are busier until that is done.")
		b.WaitText(browser.SheetFrame, `[data-replica-warning] p[role="alert"]`, "▲ Ceph will re-replicate block storage "+tierBlockSSD+": going from 2 copies to 3 copies")
		b.WaitText(browser.SheetFrame, `[data-usable-selected]`, "Usable: 3.2 TiB of 12.0 TiB raw (3 copies, Ceph stops writes at 80% full)")
		b.Screenshot("blockstorage-edit-tier-warning")

		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "ssd")
		require.Eventually(t, func() bool {
			return b.Count(browser.SheetFrame, `[data-tier-warning] p`) == 0 && b.Count(browser.SheetFrame, `[data-replica-warning] p`) == 0
		}, browser.DefaultWait, browser.PollEvery, "back at the spec's tier, the warnings go")

		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "")
		b.WaitText(browser.SheetFrame, `[data-tier-warning] p[data-tier-move="data"]`, "from the ssd OSDs to every OSD")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		waitSheetClosed(t, b)

		patches := log.find("patch", "blockstorages", tierBlockSSD)
		require.Len(t, patches, 1)
		assert.JSONEq(t, `{"spec":{"replicas":null,"deviceClass":null,"default":false}}`, string(patches[0].Body), "deviceClass null removes the class, as replicas null does")
		var after v1alpha1.BlockStorage
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: tierBlockSSD}, &after))
		assert.Empty(t, after.Spec.DeviceClass, "back on every disk")
	})

	// bs-all has 3 copies on every disk; ssd is on 2 hosts. The plugin
	// would refuse both (TooFewNodesOfClass), so the sheet says so with the
	// numbers, keeps the move and copy warnings back, and does not send it.
	t.Run("the edit sheet refuses a tier on too few hosts for the copies, and does not save", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + tierBlockAll)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-class-refusal] p`), "none at the spec's choice")

		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "ssd")
		b.WaitText(browser.SheetFrame, `[data-class-refusal] p[role="alert"]`,
			"✖ Device class ssd has disks on only 2 nodes; block storage "+tierBlockAll+" keeps the 3 copies it has (replicas automatic), one per node. "+
				"The plugin refuses that (TooFewNodesOfClass) and nothing moves: add ssd disks on 1 more node, choose another tier, or set replicas to 2.")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-tier-warning] p`), "nothing moves: no move is announced")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-replica-warning] p`))
		b.Screenshot("blockstorage-edit-tier-refused")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, `[data-form-error]`, "keeps the 3 copies it has")

		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "3")
		b.WaitText(browser.SheetFrame, `[data-class-refusal] p`, "block storage "+tierBlockAll+" keeps 3 copies (replicas: 3), one per node. "+
			"The plugin refuses that (TooFewNodesOfClass) and nothing moves: add ssd disks on 1 more node, or choose another tier.")

		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "2")
		require.Eventually(t, func() bool { return b.Count(browser.SheetFrame, `[data-class-refusal] p`) == 0 },
			browser.DefaultWait, browser.PollEvery, "two copies asked in so many words fit ssd's two hosts")
		b.WaitFor(browser.SheetFrame, `[data-tier-warning] p[data-tier-move="data"]`)
		b.WaitText(browser.SheetFrame, `[data-replica-warning] p`, "going from 3 copies to 2 copies")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, log.find("patch", "blockstorages", tierBlockAll), "the refused choice was never sent")
	})

	t.Run("the create sheet refuses a tier on too few hosts for the replicas asked, and does not create", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "ssd")
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "3")
		b.WaitText(browser.SheetFrame, `[data-class-refusal] p[role="alert"]`,
			"✖ Device class ssd has disks on only 2 nodes; the new block storage keeps 3 copies (replicas: 3), one per node.")
		b.Fill(browser.SheetFrame, `input[name="name"]`, "bs-refused")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, `[data-form-error]`, "keeps 3 copies (replicas: 3)")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Len(t, log.find("create", "blockstorages", ""), 1, "only bs-new-ssd was ever created: the refused one was not sent")
	})

	t.Run("tiers.js decides the copies on a class as tiers.go does", func(t *testing.T) {
		b.T = t
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "class-copies-cases.json"))
		require.NoError(t, err)
		var file struct{ Cases []json.RawMessage }
		require.NoError(t, json.Unmarshal(raw, &file))
		require.NotEmpty(t, file.Cases)
		for _, c := range file.Cases {
			var tc struct {
				Name string
				Want json.RawMessage
			}
			require.NoError(t, json.Unmarshal(c, &tc))
			t.Run(tc.Name, func(t *testing.T) {
				got, _, err := b.Call(browser.PageFrame, "body", `async function(c) {
const t = await import(new URL('tiers.js', document.baseURI).href);
return t.classCopies(c.requested, c.have, c.nodes);
}`, c)
				require.NoError(t, err)
				assert.JSONEq(t, string(tc.Want), string(got))
			})
		}
	})

	t.Run("tiers.js places metadata as tiers.go does", func(t *testing.T) {
		b.T = t
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "metadata-class-cases.json"))
		require.NoError(t, err)
		var file struct{ Cases []json.RawMessage }
		require.NoError(t, json.Unmarshal(raw, &file))
		require.NotEmpty(t, file.Cases)
		for _, c := range file.Cases {
			var tc struct {
				Name string
				Want json.RawMessage
			}
			require.NoError(t, json.Unmarshal(c, &tc))
			t.Run(tc.Name, func(t *testing.T) {
				got, _, err := b.Call(browser.PageFrame, "body", `async function(c) {
const t = await import(new URL('tiers.js', document.baseURI).href);
const disks = Object.entries(c.disks).flatMap(([type, nodes]) => nodes.map((node) => ({
  metadata: { name: type + '-' + node }, status: { nodeName: node, type, claimedBy: 'pool' },
})));
return t.placeMetadata(c.kind, c.spec, c.held, t.tiersOf(disks));
}`, c)
				require.NoError(t, err)
				assert.JSONEq(t, string(tc.Want), string(got))
			})
		}
	})

	// fs-tiered keeps 2 copies on hdd's 3 hosts, its metadata on ssd's 2
	// (the fastest that keeps them); os-tiered's metadata is at the
	// automatic 3 copies on hdd, the one class on 3 hosts. An nvme disk on
	// node-c alone holds neither; on node-a too it takes fs-tiered's; on
	// all three os-tiered's as well. An ssd disk taken out sends
	// fs-tiered's metadata to hdd.
	t.Run("the pool edit sheet says whose metadata the disks picked move, before saving", func(t *testing.T) {
		b.T = t
		b.Open("/view/diskpools.ceph.fundament.io/" + tierPool)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `[data-disk-picker][data-loaded="complete"]`)
		b.WaitFor(browser.SheetFrame, `[data-metadata-moves]`)
		moves := func() []string {
			res, _, err := b.Call(browser.SheetFrame, `[data-metadata-moves]`, `function() { return [...this.querySelectorAll('li')].map((li) => li.dataset.metadataMove); }`)
			require.NoError(t, err)
			var got []string
			require.NoError(t, json.Unmarshal(res, &got))
			return got
		}
		settled := func() {
			// The note follows the picker on the next frame.
			_, _, err := b.Call(browser.SheetFrame, "body", `function() { return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))); }`)
			require.NoError(t, err)
		}
		settled()
		assert.Empty(t, moves(), "the pool as it is moves nothing")

		b.Click(browser.SheetFrame, `input[data-disk="tier-c-nvme"]`)
		settled()
		assert.Empty(t, moves(), "one nvme host keeps no two copies on separate hosts")

		b.Click(browser.SheetFrame, `input[data-disk="tier-a-nvme"]`)
		b.WaitText(browser.SheetFrame, `[data-metadata-moves] li[data-metadata-move="FileStorage/`+tierFile+`"]`,
			"file storage "+tierFile+"'s metadata pool, from the ssd OSDs to the nvme OSDs")
		b.WaitText(browser.SheetFrame, `[data-metadata-moves] [role="alert"]`, "▲ Saving moves the metadata of a consumer to another class of disk:")
		b.WaitText(browser.SheetFrame, `[data-metadata-moves]`, "Rook gives each moved pool a new CRUSH rule and Ceph copies its data onto the other class's OSDs")
		assert.Equal(t, []string{"FileStorage/" + tierFile}, moves(), "the object store's three copies need nvme on three hosts")

		b.Click(browser.SheetFrame, `input[data-disk="tier-b-nvme"]`)
		b.WaitText(browser.SheetFrame, `[data-metadata-moves] li[data-metadata-move="ObjectStorage/`+tierObject+`"]`,
			"object storage "+tierObject+"'s metadata pools (and .rgw.root, which every object store shares), from the hdd OSDs to the nvme OSDs")
		b.WaitText(browser.SheetFrame, `[data-metadata-moves] [role="alert"]`, "Saving moves the metadata of 2 consumers")
		assert.Equal(t, []string{"FileStorage/" + tierFile, "ObjectStorage/" + tierObject}, moves())
		_, _, err := b.Call(browser.SheetFrame, `[data-metadata-moves]`, `function() { this.scrollIntoView({ block: 'center' }); return true; }`)
		require.NoError(t, err)
		b.Screenshot("diskpool-edit-metadata-moves")
		var report []string
		for _, v := range axeViolations(t, b, browser.SheetFrame, axeURL) {
			report = append(report, fmt.Sprintf("%s (%s) at %s: %s", v.ID, v.Impact, strings.Join(v.Targets, ", "), v.Help))
		}
		assert.Empty(t, report, "axe-core %s on the pool sheet with its metadata moves: serious and critical violations:\n%s", cachedir.AxeCoreVersion, strings.Join(report, "\n"))

		for _, name := range []string{"tier-a-nvme", "tier-b-nvme", "tier-c-nvme"} {
			b.Click(browser.SheetFrame, `input[data-disk="`+name+`"]`)
		}
		require.Eventually(t, func() bool { return len(moves()) == 0 }, browser.DefaultWait, browser.PollEvery, "no nvme, no move")

		b.Click(browser.SheetFrame, `input[data-disk="tier-a-ssd"]`)
		b.WaitText(browser.SheetFrame, `[data-metadata-moves] li[data-metadata-move="FileStorage/`+tierFile+`"]`,
			"file storage "+tierFile+"'s metadata pool, from the ssd OSDs to the hdd OSDs")
		assert.Equal(t, []string{"FileStorage/" + tierFile}, moves(), "ssd on one host keeps no two copies; the object store's stays on hdd")
		b.Click(browser.SheetFrame, `form > .plugin-actions [data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, log.find("patch", "diskpools", tierPool), "nothing saved")
	})

	t.Run("a class the pools no longer have stays chosen in the edit sheet, and is refused if chosen again", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + tierBlockGone)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="deviceClass"]`, `function() { return this.value === "nvme"; }`)
		assert.Equal(t, [][2]string{{"", tierEvery}, {"ssd", tierSSD}, {"hdd", tierHDD}, {"nvme", "nvme — no disks of this class in the DiskPools"}},
			selectOptions(t, b, `select[name="deviceClass"]`), "saving without touching the tier keeps it")
		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "hdd")
		b.WaitFor(browser.SheetFrame, `[data-tier-warning] p[data-tier-move="data"]`)
		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "nvme")
		require.Eventually(t, func() bool { return b.Count(browser.SheetFrame, `[data-tier-warning] p`) == 0 }, browser.DefaultWait, browser.PollEvery)
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, log.find("patch", "blockstorages", tierBlockGone))
	})

	// hdd: 3 hosts, 3 disks, 12 TiB; ssd: 2 hosts, 2 disks, 2 TiB; the
	// nvme disks are outside the union (unclaimed, retired).
	t.Run("the overview shows the capacity by class", func(t *testing.T) {
		b.T = t
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-tiers]`)
		b.WaitText(browser.PageFrame, `[data-tiers] h2`, "Capacity by class")
		for row, cells := range map[string][]string{
			"ssd": {"ssd", "2", "2", "2.0 TiB"},
			"hdd": {"hdd", "3", "3", "12.0 TiB"},
			"all": {"Every disk", "3", "5", "14.0 TiB"},
		} {
			assert.Equal(t, cells, rowCells(t, b, browser.PageFrame, `[data-tiers] tr[data-row="`+row+`"]`), "class, hosts, disks, raw capacity of %s", row)
		}
		assert.Equal(t, 3, b.Count(browser.PageFrame, `[data-tiers] tbody tr`), "ssd, hdd and every disk; no nvme")
		order, _, err := b.Call(browser.PageFrame, `[data-tiers] tbody`, `function() { return [...this.rows].map((r) => r.dataset.row); }`)
		require.NoError(t, err)
		assert.JSONEq(t, `["ssd", "hdd", "all"]`, string(order), "fastest first, then every disk")
		assertNoSidewaysScroll(t, b, browser.PageFrame, "the overview")
		b.Screenshot("overview-tiers")
	})

	t.Run("axe-core finds no serious or critical violation on the overview and the tier sheets", func(t *testing.T) {
		b.T = t
		var report []string
		check := func(name, frame string) {
			for _, v := range axeViolations(t, b, frame, axeURL) {
				report = append(report, fmt.Sprintf("%s: %s (%s) at %s: %s", name, v.ID, v.Impact, strings.Join(v.Targets, ", "), v.Help))
			}
		}
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-tiers] tr[data-row="all"]`)
		check("overview", browser.PageFrame)

		b.Open("/view/filestorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.WaitFor(browser.SheetFrame, `[data-metadata-tier]`)
		check("filestorages create", browser.SheetFrame)
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)

		b.Open("/view/filestorages.ceph.fundament.io/" + tierFile)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		b.Fill(browser.SheetFrame, `select[name="deviceClass"]`, "ssd")
		b.WaitFor(browser.SheetFrame, `[data-tier-warning] p`)
		check("filestorages edit with a tier warning", browser.SheetFrame)
		assertNoSidewaysScroll(t, b, browser.SheetFrame, "the edit sheet")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, report, "axe-core %s: serious and critical violations:\n%s", cachedir.AxeCoreVersion, strings.Join(report, "\n"))
	})

	t.Run("no CSP violations, page errors or dialogs on any page", func(t *testing.T) {
		assert.Empty(t, b.Problems())
	})
}

// selectOptions are a sheet select's options, value and label.
func selectOptions(t *testing.T, b *browser.Browser, sel string) [][2]string {
	t.Helper()
	b.WaitFor(browser.SheetFrame, sel)
	res, _, err := b.Call(browser.SheetFrame, sel, `function() { return [...this.options].map((o) => [o.value, o.textContent]); }`)
	require.NoError(t, err)
	var options [][2]string
	require.NoError(t, json.Unmarshal(res, &options))
	return options
}

// cellInColumn is the text of a page's table row in the column headed label.
func cellInColumn(t *testing.T, b *browser.Browser, row, label string) string {
	t.Helper()
	b.WaitFor(browser.PageFrame, row)
	res, _, err := b.Call(browser.PageFrame, row, `function(label) {
  const i = [...this.closest('table').tHead.rows[0].cells].findIndex((c) => c.textContent === label);
  return i < 0 ? null : this.cells[i].textContent;
}`, label)
	require.NoError(t, err)
	var cell *string
	require.NoError(t, json.Unmarshal(res, &cell))
	require.NotNil(t, cell, "the table has no column %q", label)
	return *cell
}

func createTierFixtures(t *testing.T) {
	t.Helper()
	ensureNamespace(t, rookNS)
	for _, d := range []*v1alpha1.Disk{
		disk("tier-a-hdd", "node-a", "/dev/sdb", "4Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, tierPool, "ST4000NM0035"),
		disk("tier-b-hdd", "node-b", "/dev/sdb", "4Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, tierPool, "ST4000NM0035"),
		disk("tier-c-hdd", "node-c", "/dev/sdb", "4Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, tierPool, "ST4000NM0035"),
		disk("tier-a-ssd", "node-a", "/dev/sdc", "1Ti", v1alpha1.DiskTypeSSD, v1alpha1.DiskInUse, tierPool, "Samsung PM883"),
		disk("tier-b-ssd", "node-b", "/dev/sdc", "1Ti", v1alpha1.DiskTypeSSD, v1alpha1.DiskInUse, tierPool, "Samsung PM883"),
		// Not in the union: no pool claims them, or it was retired.
		disk("tier-a-nvme", "node-a", "/dev/nvme0n1", "1Ti", v1alpha1.DiskTypeNVMe, v1alpha1.DiskAvailable, "", "Micron 7450"),
		disk("tier-b-nvme", "node-b", "/dev/nvme0n1", "1Ti", v1alpha1.DiskTypeNVMe, v1alpha1.DiskAvailable, "", "Micron 7450"),
		disk("tier-c-nvme", "node-c", "/dev/nvme0n1", "1Ti", v1alpha1.DiskTypeNVMe, v1alpha1.DiskAvailable, "", "Micron 7450"),
		retired(disk("tier-c-nvme-retired", "node-c", "/dev/nvme1n1", "1Ti", v1alpha1.DiskTypeNVMe, v1alpha1.DiskInUse, tierPool, "Micron 7450")),
	} {
		createWithStatus(t, d)
	}
	ref := &v1alpha1.ObjectReference{Namespace: rookNS, Name: "rook-ceph"}
	listed := []string{"tier-a-hdd", "tier-b-hdd", "tier-c-hdd", "tier-a-ssd", "tier-b-ssd", "tier-c-nvme-retired"}
	createWithStatus(t, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: tierPool}, Spec: v1alpha1.DiskPoolSpec{Disks: listed},
		Status: v1alpha1.DiskPoolStatus{Phase: v1alpha1.DiskPoolReady, SelectedDiskCount: 5, CephCluster: ref, Message: "5 of 6 disks resolved"}})

	placed := func(replicas int32, class, metadata v1alpha1.DiskType) v1alpha1.StorageStatus {
		return v1alpha1.StorageStatus{Phase: v1alpha1.StorageReady, Replicas: replicas, FailureDomain: "host", DeviceClass: class, MetadataDeviceClass: metadata,
			Message: "ready", ObservedGeneration: 1, CephBudget: &v1alpha1.CephBudgetUse{Pools: 1, CrushRules: 2, PGCopies: 32 * replicas}}
	}
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: tierBlockSSD}, Spec: v1alpha1.BlockStorageSpec{DeviceClass: v1alpha1.DiskTypeSSD},
		Status: placed(2, v1alpha1.DiskTypeSSD, "")})
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: tierBlockAll}, Status: placed(3, "", "")})
	gone := "no DiskPool contributes disks of class nvme (classes with disks: ssd (2 nodes), hdd (3 nodes)): add nvme disks to a DiskPool, or choose another class"
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: tierBlockGone}, Spec: v1alpha1.BlockStorageSpec{DeviceClass: v1alpha1.DiskTypeNVMe},
		Status: v1alpha1.StorageStatus{Phase: v1alpha1.StorageDegraded, Message: gone}})
	file := placed(2, v1alpha1.DiskTypeHDD, v1alpha1.DiskTypeSSD)
	file.CephBudget = &v1alpha1.CephBudgetUse{Pools: 2, CrushRules: 4, PGCopies: 128}
	createWithStatus(t, &v1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: tierFile},
		Spec: v1alpha1.FileStorageSpec{Replicas: ptr.To[int32](2), DeviceClass: v1alpha1.DiskTypeHDD}, Status: file})
	// Every store's metadata pools replicate as automatic over every node
	// (3 on host): ssd's 2 hosts cannot, so they are on hdd.
	object := placed(3, v1alpha1.DiskTypeHDD, v1alpha1.DiskTypeHDD)
	object.CephBudget = &v1alpha1.CephBudgetUse{Pools: 7, CrushRules: 14, PGCopies: 384}
	createWithStatus(t, &v1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: tierObject}, Spec: v1alpha1.ObjectStorageSpec{DeviceClass: v1alpha1.DiskTypeHDD}, Status: object})

	cluster := cephClusterWithCapacity(rookNS, "rook-ceph", 14<<40, 1<<40)
	setStorage(cluster, 0.8, map[string][]string{
		"node-a": {"/dev/disk/by-id/wwn-tier-a-hdd", "/dev/disk/by-id/wwn-tier-a-ssd"},
		"node-b": {"/dev/disk/by-id/wwn-tier-b-hdd", "/dev/disk/by-id/wwn-tier-b-ssd"},
		"node-c": {"/dev/disk/by-id/wwn-tier-c-hdd"},
	})
	createWithStatus(t, cluster)
}
