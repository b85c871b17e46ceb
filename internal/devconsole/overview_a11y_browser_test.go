package devconsole_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/browser"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// The overview's fixture: a CephCluster listing five devices on two nodes
// (one of them no Disk describes), two pools that both list one disk, a
// disk gone missing and one that never existed, consumers in every phase,
// a 248-character BlockStorage, and retirements waiting and done.
const (
	ovFirstPool  = "pool-first" // older: keeps the contested disk
	ovSecondPool = "pool-second"
	ovShared     = "ov-shared" // listed by both pools
	ovLost       = "ov-lost"   // discovery no longer reports it
	ovGhost      = "ov-ghost"  // listed, but no Disk has this name
	ovBlockOK    = "bs-ok"
	ovBlockBad   = "bs-broken"
	ovFile       = "fs-new"
	ovObject     = "os-one"
	ovObjectSC   = "cephobj-os-one"
	ovClaim      = "ov-claim"
	ovWaiting    = "retire-ov-a2" // suspended: awaiting confirmation
	ovRetired    = "retire-done"
	ovBudgetMsg  = "it needs 2 CRUSH rules; 255 of Ceph's 256 are used, 1 left"
	ovPoolMsg    = "no listed disk resolved: ov-shared is claimed by the older pool pool-first; ov-lost is missing; ov-ghost: no such Disk"
	ovLastSeen   = "2026-01-02T03:04:05Z"
	ovHealthWarn = "1 osds down"
)

// ovLongName is the longest name a BlockStorage may have (its CRD's cap).
var ovLongName = strings.Repeat("a", 200) + "-" + strings.Repeat("b", 47)

// TestOverviewAndAccessibilityInBrowser drives issue 20 in headless
// Chromium: the overview page, the keyboard in sheets, long names, the
// replica warning, the name check, the deletion notes, and axe-core over
// every page and sheet. It replaces whatever the API server holds with its
// own fixture and leaves the kinds it touched empty.
func TestOverviewAndAccessibilityInBrowser(t *testing.T) {
	axeDir := filepath.Dir(cachedir.AxeCoreScript())
	_, err := os.Stat(cachedir.AxeCoreScript())
	require.NoError(t, err, "axe-core is not cached: run `just axe-core` (go run ./hack/axe)")

	resetConsoleObjects(t)
	t.Cleanup(func() { resetConsoleObjects(t) })
	createOverviewFixtures(t)
	log := &proxyLog{}
	srv := startConsoleWith(t, log.add, http.Dir(axeDir))
	b := browser.Start(t, srv.URL())
	axeURL := srv.PluginURL() + devconsole.TestFilesPath + "axe.min.js"

	t.Run("the overview is the first page, and what needs attention comes first with its reasons", func(t *testing.T) {
		b.T = t
		b.Open("/")
		b.WaitHostPath("/view/cephclusters.ceph.rook.io")
		b.WaitText(browser.PageFrame, "h1", "Ceph storage overview")
		b.WaitFor(browser.PageFrame, `[data-attention-list]`)

		first, _, err := b.Call(browser.PageFrame, "#app", `function() { return this.querySelector('section').getAttribute('data-attention'); }`)
		require.NoError(t, err)
		assert.Equal(t, `"true"`, string(first), "the attention list is the first section")

		want := []struct{ key, reason string }{
			{"Ceph health", "Ceph reports HEALTH_WARN (OSD_DOWN: " + ovHealthWarn + ")."},
			{"Degraded:DiskPool/" + ovSecondPool, ovPoolMsg},
			{"Degraded:BlockStorage/" + ovBlockBad, "OverBudget: " + ovBudgetMsg},
			{"Awaiting confirmation:DiskRetirement/" + ovWaiting, "Every check passed; confirm to stop osd.2 and remove it"},
			{"Missing disk:Disk/" + ovGhost, "No Disk of that name exists: Pool " + ovSecondPool + " lists it, and skips it."},
			{"Missing disk:Disk/" + ovLost, "Discovery no longer reports it (node node-b, /dev/sdz), last seen " + ovLastSeen + ": Pool " + ovSecondPool + " lists it."},
			{"Contested disk:Disk/" + ovShared, "Listed by pools " + ovFirstPool + " and " + ovSecondPool + ": " + ovFirstPool + ", the older, keeps it; " + ovSecondPool + " skips it and says so in status.message."},
		}
		got := attentionItems(t, b)
		var keys []string
		for _, w := range want {
			keys = append(keys, w.key)
			assert.Equal(t, w.reason, got[w.key], "the reason of %s", w.key)
		}
		assert.Equal(t, keys, attentionOrder(t, b), "cluster first, then degraded objects, then disks; nothing else")
		assert.Contains(t, b.Text(browser.PageFrame, `[data-attention] h2`), "Needs attention (7)")
		// Badges say what they mean in words, not colour alone.
		b.WaitText(browser.PageFrame, `li[data-problem="Missing disk:Disk/`+ovLost+`"] [data-badge]`, "▲ Missing")
		b.Screenshot("overview")
	})

	t.Run("the overview shows the fed CephCluster's phase, health, capacity and devices by node and type", func(t *testing.T) {
		b.T = t
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, "body", deflistValue("CephCluster", rookNS+"/rook-ceph"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Phase", "● Ready"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Health", "▲ HEALTH_WARN"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Message", "Cluster created successfully"))
		b.WaitText(browser.PageFrame, `[data-cluster]`, "2.0 TiB used of 8.0 TiB (6.0 TiB available)")
		b.WaitFor(browser.PageFrame, `[data-cluster] meter[aria-label="2.0 TiB used of 8.0 TiB (6.0 TiB available)"]`)
		for row, cells := range map[string][]string{
			"node-a":    {"node-a", "2", "1", "0", "0", "3"},
			"node-b":    {"node-b", "0", "0", "1", "1", "2"},
			"All nodes": {"All nodes", "2", "1", "1", "1", "5"},
		} {
			assert.Equal(t, cells, rowCells(t, b, browser.PageFrame, `[data-cluster] tr[data-row="`+row+`"]`), "devices on %s: node, HDD, SSD, NVMe, unknown, all", row)
		}
		assert.Zero(t, b.Count(browser.PageFrame, `[data-cluster] tr[data-row="node-x"]`), "the decoy CephCluster's devices are not shown")
		b.WaitText(browser.PageFrame, `[data-cluster]`, "5 devices on 2 nodes")
		b.WaitText(browser.PageFrame, `[data-inventory]`, "Discovery knows 7 disks (3 HDD, 3 SSD, 1 NVMe): 1 available, 5 in use, 1 missing.")
	})

	t.Run("the overview counts every kind by phase and lists each object", func(t *testing.T) {
		b.T = t
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-kinds]`)
		phases := map[string]map[string]string{
			"DiskPool":       {"Degraded": "✖ Degraded 1", "Ready": "● Ready 1"},
			"BlockStorage":   {"Degraded": "✖ Degraded 1", "Ready": "● Ready 2"},
			"FileStorage":    {"Provisioning": "◌ Provisioning 1"},
			"ObjectStorage":  {"Ready": "● Ready 1"},
			"DiskRetirement": {"Retired": "● Retired 1", "Suspended": "▲ Suspended 1"},
		}
		for kind, want := range phases {
			got := map[string]string{}
			res, _, err := b.Call(browser.PageFrame, `[data-kind="`+kind+`"] [data-phases]`, `function() {
  return Object.fromEntries([...this.querySelectorAll('[data-phase]')].map((e) => [e.dataset.phase, e.textContent]));
}`)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(res, &got))
			assert.Equal(t, want, got, "%s by phase", kind)
		}
		for _, row := range []string{"BlockStorage/" + ovBlockOK, "BlockStorage/" + ovBlockBad, "BlockStorage/" + ovLongName, "DiskPool/" + ovFirstPool, "DiskRetirement/" + ovWaiting} {
			b.WaitFor(browser.PageFrame, `[data-kinds] tr[data-row="`+row+`"]`)
		}
		assert.Zero(t, b.Count(browser.PageFrame, `[data-kinds] tr[data-row="DiskRetirement/`+ovRetired+`"]`), "finished retirements are counted, not listed")
		b.WaitText(browser.PageFrame, `[data-kind="DiskRetirement"]`, "1 finished (retired or cancelled)")
	})

	t.Run("the overview's links open each object's page", func(t *testing.T) {
		b.T = t
		links := []struct{ sel, path string }{
			{`li[data-problem="Degraded:BlockStorage/` + ovBlockBad + `"] [data-link]`, "/view/blockstorages.ceph.fundament.io/" + ovBlockBad},
			{`li[data-problem="Contested disk:Disk/` + ovShared + `"] [data-link="` + ovSecondPool + `"]`, "/view/diskpools.ceph.fundament.io/" + ovSecondPool},
			{`li[data-problem="Contested disk:Disk/` + ovShared + `"] [data-link="` + ovShared + `"]`, "/view/disks.ceph.fundament.io/" + ovShared},
			{`li[data-problem="Awaiting confirmation:DiskRetirement/` + ovWaiting + `"] [data-link]`, "/view/diskretirements.ceph.fundament.io/" + ovWaiting},
			{`[data-kinds] tr[data-row="FileStorage/` + ovFile + `"] [data-link]`, "/view/filestorages.ceph.fundament.io/" + ovFile},
		}
		for _, l := range links {
			b.Open("/view/cephclusters.ceph.rook.io")
			b.Click(browser.PageFrame, l.sel)
			b.WaitHostPath(l.path)
		}
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `li[data-problem="Missing disk:Disk/`+ovGhost+`"]`)
		assert.Zero(t, b.Count(browser.PageFrame, `li[data-problem="Missing disk:Disk/`+ovGhost+`"] [data-link="`+ovGhost+`"]`), "a disk with no Disk has no page to link")
	})

	t.Run("the overview reads one list of each kind per refresh, and follows changes", func(t *testing.T) {
		b.T = t
		disks, clusters := len(log.find("list", "disks", "")), len(log.find("list", "cephclusters", ""))
		gets := len(log.find("get", "disks", ""))
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `li[data-problem="Degraded:BlockStorage/`+ovBlockBad+`"]`)
		disks, clusters = len(log.find("list", "disks", ""))-disks, len(log.find("list", "cephclusters", ""))-clusters
		assert.Positive(t, disks)
		assert.Equal(t, clusters, disks, "every read lists the Disks once, as it lists the CephClusters once")
		assert.Equal(t, gets, len(log.find("get", "disks", "")), "no Disk is read one by one")

		// The plugin repairs bs-broken: the open overview drops it within
		// its refresh interval.
		setConsumerStatus(t, &v1alpha1.BlockStorage{}, ovBlockBad, v1alpha1.StorageStatus{Phase: v1alpha1.StorageReady, Message: "ready"})
		b.WaitForWithin(15*time.Second, browser.PageFrame, `[data-attention] h2`, browser.TextContains("Needs attention (6)"))
		assert.Zero(t, b.Count(browser.PageFrame, `li[data-problem="Degraded:BlockStorage/`+ovBlockBad+`"]`))
		setConsumerStatus(t, &v1alpha1.BlockStorage{}, ovBlockBad, degradedStatus())
	})

	// The host tells a page only of writes made in its sheets; the plugin's
	// status writes reach an open page through its watch.
	t.Run("open detail and list pages show the status the plugin writes, without a reload or a sheet", func(t *testing.T) {
		b.T = t
		// A BlockStorage detail page: Provisioning, then Ready.
		var block v1alpha1.BlockStorage
		playStatus(t, &block, ovBlockOK, func() { block.Status.Phase = v1alpha1.StorageProvisioning })
		watches := len(log.find("watch", "blockstorages", ""))
		b.Open("/view/blockstorages.ceph.fundament.io/" + ovBlockOK)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Phase", "◌ Provisioning"))
		waitWatching(t, log, "blockstorages", watches)
		playStatus(t, &block, ovBlockOK, func() { block.Status.Phase = v1alpha1.StorageReady })
		b.WaitFor(browser.PageFrame, "body", deflistValue("Phase", "● Ready"))

		// A FileStorage list page.
		var file v1alpha1.FileStorage
		watches = len(log.find("watch", "filestorages", ""))
		b.Open("/view/filestorages.ceph.fundament.io")
		b.WaitText(browser.PageFrame, `tr[data-row="`+ovFile+`"]`, "Provisioning")
		waitWatching(t, log, "filestorages", watches)
		playStatus(t, &file, ovFile, func() { file.Status.Phase = v1alpha1.StorageReady; file.Status.Message = "ready" })
		b.WaitText(browser.PageFrame, `tr[data-row="`+ovFile+`"]`, "● Ready")
		playStatus(t, &file, ovFile, func() {
			file.Status.Phase = v1alpha1.StorageProvisioning
			file.Status.Message = "waiting for CephFilesystem cephfs-fs-new"
		})
		b.WaitText(browser.PageFrame, `tr[data-row="`+ovFile+`"]`, "◌ Provisioning")

		// A DiskPool detail page, which also follows its Disks.
		var pool v1alpha1.DiskPool
		watches = len(log.find("watch", "diskpools", ""))
		b.Open("/view/diskpools.ceph.fundament.io/" + ovSecondPool)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Phase", "✖ Degraded"))
		waitWatching(t, log, "diskpools", watches)
		playStatus(t, &pool, ovSecondPool, func() { pool.Status.Phase = v1alpha1.DiskPoolReady; pool.Status.Message = "every listed disk resolved" })
		b.WaitFor(browser.PageFrame, "body", deflistValue("Phase", "● Ready"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Message", "every listed disk resolved"))
		playStatus(t, &pool, ovSecondPool, func() { pool.Status.Phase = v1alpha1.DiskPoolDegraded; pool.Status.Message = ovPoolMsg })
		b.WaitFor(browser.PageFrame, "body", deflistValue("Phase", "✖ Degraded"))

		assert.Empty(t, log.find("patch", "blockstorages", ovBlockOK), "no sheet wrote anything")
		assert.Empty(t, log.find("patch", "filestorages", ovFile), "no sheet wrote anything")
		assert.Empty(t, log.find("patch", "diskpools", ovSecondPool), "no sheet wrote anything")
	})

	t.Run("a sheet takes the keyboard: focus moves in, Tab cycles inside, Escape closes, focus returns to the opener", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + ovBlockOK)
		b.WaitFor(browser.PageFrame, `[data-action="edit"]`)
		_, _, err := b.Call(browser.PageFrame, `[data-action="edit"]`, "function() { this.focus(); }")
		require.NoError(t, err)
		require.Equal(t, "button[edit]", b.Focused(browser.PageFrame), "the Edit button has focus before the sheet opens")
		b.Press(kb.Enter)

		require.Eventually(t, b.SheetOpen, browser.DefaultWait, browser.PollEvery)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		require.Eventually(t, func() bool { return b.Focused(browser.SheetFrame) == "select[replicas]" }, browser.DefaultWait, browser.PollEvery,
			"focus moves to the sheet's first field; it is on %q", b.Focused(browser.SheetFrame))
		assert.Empty(t, b.Focused(browser.PageFrame), "the page under the sheet no longer has focus")

		want := sheetControls(t, b)
		require.GreaterOrEqual(t, len(want), 3, "the edit sheet has fields and buttons: %v", want)
		var seen []string
		for range len(want) + 1 {
			b.Press(kb.Tab)
			seen = append(seen, b.Focused(browser.SheetFrame))
		}
		// From the first field, Tab visits every other control, then wraps.
		assert.Equal(t, append(slices.Clone(want[1:]), want[0], want[1]), seen, "Tab cycles through the sheet's controls and stays inside it")
		b.Press(kb.Tab, chromedp.ModifierShift)
		b.Press(kb.Tab, chromedp.ModifierShift)
		assert.Equal(t, want[len(want)-1], b.Focused(browser.SheetFrame), "Shift-Tab from the first control goes to the last")

		b.Press(kb.Escape)
		waitSheetClosed(t, b)
		require.Eventually(t, func() bool { return b.Focused(browser.PageFrame) == "button[edit]" }, browser.DefaultWait, browser.PollEvery,
			"focus returns to the Edit button that opened the sheet; it is on %q", b.Focused(browser.PageFrame))
		assert.Empty(t, log.find("patch", "blockstorages", ovBlockOK), "Escape saves nothing")
	})

	t.Run("focus returns to the opener after a save that renders the page again", func(t *testing.T) {
		b.T = t
		b.Open("/view/filestorages.ceph.fundament.io/" + ovFile)
		b.WaitFor(browser.PageFrame, `[data-action="edit"]`)
		_, _, err := b.Call(browser.PageFrame, `[data-action="edit"]`, "function() { this.focus(); }")
		require.NoError(t, err)
		b.Press(kb.Enter)
		require.Eventually(t, func() bool { return b.Focused(browser.SheetFrame) == "select[replicas]" }, browser.DefaultWait, browser.PollEvery)
		b.Fill(browser.SheetFrame, `input[name="metadataServers"]`, "2")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		waitSheetClosed(t, b)
		require.Eventually(t, func() bool { return b.Focused(browser.PageFrame) == "button[edit]" }, browser.DefaultWait, browser.PollEvery,
			"the page listed again, and focus is on its new Edit button; it is on %q", b.Focused(browser.PageFrame))
	})

	t.Run("a 248-character name is cut in lists with its whole name in a tooltip, whole on its page, and scrolls nothing sideways", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io")
		row := `tr[data-row="` + ovLongName + `"]`
		b.WaitFor(browser.PageFrame, row)
		assertNoSidewaysScroll(t, b, browser.PageFrame, "the BlockStorage list")
		for _, sel := range []string{row + ` [data-link]`, row + ` span[title="ceph-` + ovLongName + `"]`} {
			res, _, err := b.Call(browser.PageFrame, sel, `function() { return { title: this.title, text: this.textContent, cut: this.scrollWidth > this.clientWidth }; }`)
			require.NoError(t, err)
			var cell struct {
				Title, Text string
				Cut         bool
			}
			require.NoError(t, json.Unmarshal(res, &cell))
			assert.True(t, cell.Cut, "%s is cut to its column", sel)
			assert.Equal(t, cell.Text, cell.Title, "%s carries its whole value in its title", sel)
			assert.Contains(t, cell.Title, ovLongName)
		}
		b.Screenshot("blockstorage-list-long-name")

		b.Click(browser.PageFrame, row+` [data-link]`)
		b.WaitText(browser.PageFrame, "h1", "Block storage "+ovLongName)
		b.WaitFor(browser.PageFrame, "body", deflistValue("StorageClass", "ceph-"+ovLongName))
		assertNoSidewaysScroll(t, b, browser.PageFrame, "the detail page")

		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		b.WaitText(browser.SheetFrame, "h1", ovLongName)
		assertNoSidewaysScroll(t, b, browser.SheetFrame, "the edit sheet")
		assertVisible(t, b, "", "#sheet-close", "the host's close button")
		assertVisible(t, b, browser.SheetFrame, `[data-action="cancel"]`, "the sheet's Cancel button")
		b.Screenshot("blockstorage-edit-long-name")
		b.Press(kb.Escape)
		waitSheetClosed(t, b)

		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-kinds] tr[data-row="BlockStorage/`+ovLongName+`"]`)
		assertNoSidewaysScroll(t, b, browser.PageFrame, "the overview")
	})

	t.Run("a replica change warns that Ceph re-replicates every byte before saving", func(t *testing.T) {
		b.T = t
		b.Open("/view/blockstorages.ceph.fundament.io/" + ovBlockOK)
		b.Click(browser.PageFrame, `[data-action="edit"]`)
		b.WaitFor(browser.SheetFrame, `select[name="replicas"]`, `function() { return this.value === "2"; }`)
		b.WaitFor(browser.SheetFrame, `[data-ceph-budget]`)
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-replica-warning] p`), "no warning while the choice is the spec's")

		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "1")
		b.WaitText(browser.SheetFrame, `[data-replica-warning] p[role="alert"]`,
			"▲ Ceph will re-replicate block storage "+ovBlockOK+": going from 2 copies to 1 copy, it copies every byte of its data to the new placement. Disks and network are busier until that is done.")
		b.Screenshot("blockstorage-edit-replica-warning")

		// 3 on 2 nodes is clamped to the 2 there are: nothing moves now.
		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "3")
		b.WaitText(browser.SheetFrame, `[data-replica-warning] p[role="alert"]`,
			"▲ On 2 nodes this still means 2 copies, so nothing is copied now; but when the node count changes, Ceph will re-replicate block storage "+ovBlockOK+", copying every byte of its data.")

		b.Fill(browser.SheetFrame, `select[name="replicas"]`, "2")
		require.Eventually(t, func() bool { return b.Count(browser.SheetFrame, `[data-replica-warning] p`) == 0 }, browser.DefaultWait, browser.PollEvery,
			"back at the spec's choice, the warning goes")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
	})

	t.Run("create forms check the name in a sentence, not the API server's regular expression", func(t *testing.T) {
		b.T = t
		cases := []struct{ list, name, sentence string }{
			{"filestorages", "My_Store", "A file storage name may hold only lower-case letters, digits and “-”, and start and end with a letter or digit (Kubernetes names are DNS subdomains); this one has upper-case letters and “_”."},
			{"filestorages", "fs.data", "The name has a dot; metadata.name must be at most 53 characters without dots: Rook puts each MDS daemon id, cephfs-<name>-<one or two letters>, in label values (at most 63)."},
			{"objectstorages", strings.Repeat("o", 31), "The name has 31 characters; metadata.name must be at most 30 characters without dots: the derived CephObjectStore cephobj-<name> must stay within Rook's 38 and name the Service rook-ceph-rgw-cephobj-<name>."},
			{"blockstorages", strings.Repeat("b", 249), "The name has 249 characters; metadata.name must be at most 248 characters: the derived CephBlockPool and StorageClass ceph-<name> must stay within 253."},
			{"blockstorages", "-fast..pool", "A block storage name may hold only lower-case letters, digits, “-” and “.”, start and end with a letter or digit, and have letters or digits on both sides of each dot (Kubernetes names are DNS subdomains); this one has “-” first and a dot beside a dot or a “-”."},
		}
		for _, tc := range cases {
			b.Open("/view/" + tc.list + ".ceph.fundament.io")
			b.Click(browser.PageFrame, `[data-action="create"]`)
			b.WaitFor(browser.SheetFrame, `input[name="name"]`)
			b.WaitText(browser.SheetFrame, `#name-rule`, "starting and ending with a letter or digit")
			b.Fill(browser.SheetFrame, `input[name="name"]`, tc.name)
			b.WaitFor(browser.SheetFrame, `[data-name-problem]`, fmt.Sprintf(`function() { return !this.hidden && this.textContent === %q; }`, tc.sentence))
			b.WaitFor(browser.SheetFrame, `input[name="name"][aria-invalid="true"]`)
			b.Click(browser.SheetFrame, `button[type="submit"]`)
			b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, tc.sentence)
			assert.NotContains(t, b.Text(browser.SheetFrame, `[data-form-error]`), "regex", "%s: no regular expression", tc.name)
			b.Click(browser.SheetFrame, `[data-action="cancel"]`)
			waitSheetClosed(t, b)
		}
		for _, kind := range []string{"filestorages", "objectstorages", "blockstorages"} {
			assert.Empty(t, log.find("create", kind, ""), "a name the form refuses never reaches the API server")
		}

		// A valid name passes the check, and what only the API server
		// knows still reaches the form verbatim.
		b.Open("/view/blockstorages.ceph.fundament.io")
		b.Click(browser.PageFrame, `[data-action="create"]`)
		b.Fill(browser.SheetFrame, `input[name="name"]`, ovBlockOK)
		b.WaitFor(browser.SheetFrame, `[data-name-problem]`, "function() { return this.hidden; }")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, `[data-form-error] .plugin-error`, `blockstorages.ceph.fundament.io "`+ovBlockOK+`" already exists`)
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
	})

	t.Run("every detail page says how it is deleted and what survives", func(t *testing.T) {
		b.T = t
		pages := []struct {
			crd, name, command string
			survives           []string
		}{
			{"blockstorages", ovBlockOK, "kubectl delete blockstorage " + ovBlockOK, []string{"The Ceph pool and its data survive while volumes use it", "holds RBD images", "The disks, their OSDs and every DiskPool stay"}},
			{"filestorages", ovFile, "kubectl delete filestorage " + ovFile, []string{"preserveFilesystemOnDelete", "A FileStorage created again under the name " + ovFile + " takes it back"}},
			{"objectstorages", ovObject, "kubectl delete objectstorage " + ovObject, []string{"preservePoolsOnDelete", "cephobj-" + ovObject + ".rgw.* pools and their data survive", "ceph osd pool rm", "radosgw-admin realm rm --rgw-realm=cephobj-" + ovObject}},
			{"diskpools", ovFirstPool, "kubectl delete diskpool " + ovFirstPool, []string{"their OSDs keep running, and keep their data, until they are purged from Ceph", "retire it"}},
			{"diskretirements", ovRetired, "", []string{"kubectl delete diskretirement " + ovRetired + " only removes this record"}},
			{"diskretirements", ovWaiting, "", []string{"kubectl delete diskretirement " + ovWaiting + " cancels it"}},
		}
		for _, p := range pages {
			b.Open("/view/" + p.crd + ".ceph.fundament.io/" + p.name)
			b.WaitFor(browser.PageFrame, `[data-deletion]`)
			note := b.Text(browser.PageFrame, `[data-deletion]`)
			if p.command != "" {
				assert.Equal(t, p.command, b.Text(browser.PageFrame, `[data-deletion] [data-delete-command]`), "%s/%s", p.crd, p.name)
			}
			for _, s := range p.survives {
				assert.Contains(t, note, s, "%s/%s", p.crd, p.name)
			}
		}
	})

	t.Run("the overview shows where an upgrade stands, and a refused one as needing attention", func(t *testing.T) {
		b.T = t
		recordUpgrade(t, `{"stage":"Refused","step":"Rook","from":"v1.18.0","to":"v1.18.11","done":0,"total":0,`+
			`"checks":[{"name":"Health","passed":false,"message":"Ceph reports HEALTH_WARN (OSD_DOWN)"},{"name":"Versions","passed":true,"message":"fine"}]}`)
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-upgrade="Refused"]`)
		assert.Equal(t, "The upgrade of Rook from v1.18.0 to v1.18.11 was refused and nothing changed: Health: Ceph reports HEALTH_WARN (OSD_DOWN). The plugin checks again each minute.",
			attentionItems(t, b)["Upgrade refused"])
		b.WaitFor(browser.PageFrame, "body", deflistValue("Step", "Rook: v1.18.0 → v1.18.11"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Stage", "✖ Refused"))
		assert.Equal(t, "Health: Ceph reports HEALTH_WARN (OSD_DOWN)", b.Text(browser.PageFrame, `[data-upgrade-checks]`), "only the failed checks")
		assert.Zero(t, b.Count(browser.PageFrame, `[data-upgrade-progress]`), "a refused step has no progress")

		recordUpgrade(t, `{"stage":"Rolling","step":"Ceph","from":"quay.io/ceph/ceph:v19.2.3","to":"quay.io/ceph/ceph:v19.2.4","done":2,"total":9,`+
			`"pending":["rook-ceph-osd-0","rook-ceph-osd-1","rook-ceph-osd-2","rook-ceph-osd-3","rook-ceph-osd-4"]}`)
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-upgrade="Rolling"]`)
		b.WaitFor(browser.PageFrame, "body", deflistValue("Daemons", "2 of 9 on quay.io/ceph/ceph:v19.2.4"))
		b.WaitFor(browser.PageFrame, "body", deflistValue("Waiting for", "rook-ceph-osd-0, rook-ceph-osd-1, rook-ceph-osd-2, rook-ceph-osd-3, rook-ceph-osd-4 and 2 more"))
		b.WaitFor(browser.PageFrame, `meter[data-upgrade-progress][value="2"][max="9"][aria-label="2 of 9 daemons upgraded"]`)
		_, found := attentionItems(t, b)["Upgrade refused"]
		assert.False(t, found, "a rolling upgrade needs no attention")

		recordUpgrade(t, `{"stage":`)
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitText(browser.PageFrame, `[data-upgrade="unreadable"]`, "The upgrade record on the CephCluster cannot be read")

		// The axe-core pass below sees the section as a roll shows it.
		recordUpgrade(t, `{"stage":"Rolling","step":"Ceph","from":"a","to":"b","done":1,"total":3,"pending":["rook-ceph-mon-a"]}`)
	})

	t.Run("axe-core finds no serious or critical violation on any page or sheet", func(t *testing.T) {
		b.T = t
		type target struct{ name, route, frame, ready, open string }
		var targets []target
		page := func(name, route, ready string) {
			targets = append(targets, target{name: name, route: route, frame: browser.PageFrame, ready: ready})
		}
		sheet := func(name, route, open, ready string) {
			targets = append(targets, target{name: name, route: route, frame: browser.SheetFrame, open: open, ready: ready})
		}
		page("overview", "/view/cephclusters.ceph.rook.io", `[data-attention-list]`)
		for _, p := range []struct{ crd, name, row string }{
			{"disks", ovShared, ovShared},
			{"diskpools", ovFirstPool, ovFirstPool},
			{"diskretirements", ovWaiting, ovWaiting},
			{"diskretirements", ovRetired, ovRetired},
			{"blockstorages", ovLongName, ovBlockOK},
			{"filestorages", ovFile, ovFile},
			{"objectstorages", ovObject, ovObject},
		} {
			list := "/view/" + p.crd + ".ceph.fundament.io"
			page(p.crd+" list", list, `tr[data-row="`+p.row+`"]`)
			page(p.crd+" detail "+shorten(p.name), list+"/"+p.name, `h1`)
		}
		for _, kind := range []string{"blockstorages", "filestorages", "objectstorages"} {
			list := "/view/" + kind + ".ceph.fundament.io"
			sheet(kind+" create", list, `[data-action="create"]`, `[data-ceph-budget]`)
			sheet(kind+" edit", list+"/"+map[string]string{"blockstorages": ovBlockOK, "filestorages": ovFile, "objectstorages": ovObject}[kind], `[data-action="edit"]`, `[data-ceph-budget]`)
		}
		sheet("blockstorages edit long name", "/view/blockstorages.ceph.fundament.io/"+ovLongName, `[data-action="edit"]`, `[data-ceph-budget]`)
		sheet("diskpools create", "/view/diskpools.ceph.fundament.io", `[data-action="create"]`, `input[name="name"]`)
		sheet("diskpools edit", "/view/diskpools.ceph.fundament.io/"+ovFirstPool, `[data-action="edit"]`, `button[type="submit"]`)
		sheet("bucket claim create", "/view/objectstorages.ceph.fundament.io/"+ovObject, `[data-action="create-bucket"]`, `input[name="name"]`)
		sheet("bucket claim detail", "/view/objectstorages.ceph.fundament.io/"+ovObject, `tr[data-row="`+appNamespace+`/`+ovClaim+`"] [data-link]`, `[data-snippet]`)
		sheet("disk retire", "/view/disks.ceph.fundament.io/ov-a1", `[data-action="retire"]`, `[data-action="check"]`)

		var report []string
		for _, tg := range targets {
			b.Open(tg.route)
			if tg.open != "" {
				b.Click(browser.PageFrame, tg.open)
				require.Eventually(t, b.SheetOpen, browser.DefaultWait, browser.PollEvery, "%s: the sheet opens", tg.name)
			}
			b.WaitFor(tg.frame, tg.ready)
			for _, v := range axeViolations(t, b, tg.frame, axeURL) {
				report = append(report, fmt.Sprintf("%s: %s (%s) at %s: %s", tg.name, v.ID, v.Impact, strings.Join(v.Targets, ", "), v.Help))
			}
			assertNoSidewaysScroll(t, b, tg.frame, tg.name)
		}
		assert.Empty(t, report, "axe-core %s: serious and critical violations:\n%s", cachedir.AxeCoreVersion, strings.Join(report, "\n"))
	})

	// The check above is only as good as its injection: prove axe runs and
	// reports a violation a page really has.
	t.Run("axe-core reports a violation planted in a page", func(t *testing.T) {
		b.T = t
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitFor(browser.PageFrame, `[data-attention-list]`)
		_, _, err := b.Call(browser.PageFrame, "#app", `function() { const i = document.createElement('input'); i.type = 'text'; this.append(i); }`)
		require.NoError(t, err)
		var ids []string
		for _, v := range axeViolations(t, b, browser.PageFrame, axeURL) {
			ids = append(ids, v.ID+"/"+v.Impact)
		}
		assert.Contains(t, ids, "label/critical", "an unlabelled input is a critical violation")
	})

	t.Run("the overview counts 10,000 Disks from one list without a row per disk", func(t *testing.T) {
		b.T = t
		createManyDisks(t, 10000, 20)
		disks, clusters := len(log.find("list", "disks", "")), len(log.find("list", "cephclusters", ""))
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitForWithin(60*time.Second, browser.PageFrame, `[data-inventory]`, browser.TextContains("Discovery knows 10007 disks"))
		b.WaitFor(browser.PageFrame, `[data-cluster] tr[data-row="All nodes"]`, browser.TextContains("10005"))
		assert.Equal(t, 23, b.Count(browser.PageFrame, `[data-cluster] tbody tr`), "a row per node (2 + 20) and the total")
		assert.Less(t, b.Count(browser.PageFrame, "*"), 2000, "the page's size does not grow with the disks")
		assert.Equal(t, len(log.find("list", "cephclusters", ""))-clusters, len(log.find("list", "disks", ""))-disks, "one list of Disks per read")
		assertNoSidewaysScroll(t, b, browser.PageFrame, "the overview at 10,000 Disks")
		b.Screenshot("overview-10000-disks")
	})

	t.Run("no CSP violations, page errors or dialogs on any page", func(t *testing.T) {
		assert.Empty(t, b.Problems())
	})
}

type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// axeViolations injects axe-core into the frame as a same-origin script
// file (what the production CSP allows) and returns its serious and
// critical violations.
func axeViolations(t *testing.T, b *browser.Browser, frame, axeURL string) []axeViolation {
	t.Helper()
	res, found, err := b.Call(frame, "head", `async function(src) {
  if (!window.axe) {
    await new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error('axe-core did not load from ' + src));
      this.append(script);
    });
  }
  const result = await window.axe.run(document, { resultTypes: ['violations'] });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}`, axeURL)
	require.NoError(t, err)
	require.True(t, found, "no document in %s", frame)
	var violations []axeViolation
	require.NoError(t, json.Unmarshal(res, &violations))
	return violations
}

// assertNoSidewaysScroll checks that the frame's document is no wider than
// its frame.
func assertNoSidewaysScroll(t *testing.T, b *browser.Browser, frame, what string) {
	t.Helper()
	res, _, err := b.Call(frame, "html", `function() {
  const width = this.clientWidth;
  const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 0.5)
    .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > width + 0.5))
    .slice(0, 5).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).replace(/ /g, '.') : '') + ' "' + e.textContent.slice(0, 40) + '" right ' + Math.round(e.getBoundingClientRect().right));
  return { scroll: this.scrollWidth, client: width, wide };
}`)
	require.NoError(t, err)
	var w struct {
		Scroll, Client int
		Wide           []string
	}
	require.NoError(t, json.Unmarshal(res, &w))
	assert.LessOrEqual(t, w.Scroll, w.Client, "%s scrolls sideways: %d px wide in %d; too wide: %v", what, w.Scroll, w.Client, w.Wide)
}

// assertVisible checks that an element lies inside its window, in the host
// page when frame is "".
func assertVisible(t *testing.T, b *browser.Browser, frame, sel, what string) {
	t.Helper()
	fn := `function() { const r = this.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth && r.top >= 0; }`
	var res json.RawMessage
	var err error
	if frame == "" {
		res, err = b.Host(sel, fn)
	} else {
		res, _, err = b.Call(frame, sel, fn)
	}
	require.NoError(t, err)
	assert.Equal(t, "true", string(res), "%s (%s) is inside the window", what, sel)
}

// attentionItems are the overview's problems, key → reason.
func attentionItems(t *testing.T, b *browser.Browser) map[string]string {
	t.Helper()
	res, _, err := b.Call(browser.PageFrame, `[data-attention-list]`, `function() {
  return Object.fromEntries([...this.querySelectorAll('li[data-problem]')].map((li) => [li.dataset.problem, li.querySelector('[data-reason]').textContent]));
}`)
	require.NoError(t, err)
	got := map[string]string{}
	require.NoError(t, json.Unmarshal(res, &got))
	return got
}

func attentionOrder(t *testing.T, b *browser.Browser) []string {
	t.Helper()
	res, _, err := b.Call(browser.PageFrame, `[data-attention-list]`, `function() { return [...this.querySelectorAll('li[data-problem]')].map((li) => li.dataset.problem); }`)
	require.NoError(t, err)
	var keys []string
	require.NoError(t, json.Unmarshal(res, &keys))
	return keys
}

func rowCells(t *testing.T, b *browser.Browser, frame, sel string) []string {
	t.Helper()
	b.WaitFor(frame, sel)
	res, _, err := b.Call(frame, sel, `function() { return [...this.cells].map((c) => c.textContent); }`)
	require.NoError(t, err)
	var cells []string
	require.NoError(t, json.Unmarshal(res, &cells))
	return cells
}

// sheetControls are the sheet's controls in Tab order, described as
// Focused describes them.
func sheetControls(t *testing.T, b *browser.Browser) []string {
	t.Helper()
	res, _, err := b.Call(browser.SheetFrame, "html", `function() {
  return [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
    .filter((el) => !el.disabled && el.tabIndex >= 0 && el.getClientRects().length > 0)
    .map((el) => el.tagName.toLowerCase() + '[' + (el.getAttribute('name') || el.getAttribute('data-action') || el.getAttribute('data-link') || el.id || el.textContent.trim()) + ']');
}`)
	require.NoError(t, err)
	var controls []string
	require.NoError(t, json.Unmarshal(res, &controls))
	return controls
}

func shorten(name string) string {
	if len(name) > 20 {
		return name[:20] + "…"
	}
	return name
}

// resetConsoleObjects deletes every object of the kinds the console shows,
// so that a test can show a fixture of its own.
func resetConsoleObjects(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	c := controlPlane.Env(t).Client
	for _, obj := range []client.Object{&v1alpha1.Disk{}, &v1alpha1.DiskPool{}, &v1alpha1.DiskRetirement{}, &v1alpha1.BlockStorage{}, &v1alpha1.FileStorage{}, &v1alpha1.ObjectStorage{}} {
		require.NoError(t, c.DeleteAllOf(ctx, obj))
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"},
		{Group: "objectbucket.io", Version: "v1alpha1", Kind: "ObjectBucketClaim"},
		{Group: "objectbucket.io", Version: "v1alpha1", Kind: "ObjectBucket"},
	} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		require.NoError(t, c.List(ctx, list))
		for i := range list.Items {
			if err := c.Delete(ctx, &list.Items[i]); err != nil && !apierrors.IsNotFound(err) {
				require.NoError(t, err)
			}
		}
	}
	require.Eventually(t, func() bool {
		var disks v1alpha1.DiskList
		var pools v1alpha1.DiskPoolList
		return c.List(ctx, &disks) == nil && len(disks.Items) == 0 && c.List(ctx, &pools) == nil && len(pools.Items) == 0
	}, 30*time.Second, browser.PollEvery, "the console's objects are deleted")
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := controlPlane.Env(t).Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

func degradedStatus() v1alpha1.StorageStatus {
	return v1alpha1.StorageStatus{Phase: v1alpha1.StorageDegraded, Message: ovBudgetMsg, Conditions: []metav1.Condition{{
		Type: "Ready", Status: metav1.ConditionFalse, Reason: "OverBudget", Message: ovBudgetMsg, LastTransitionTime: metav1.Now(),
	}}}
}

// playStatus writes obj's status as the plugin would: obj is read, set
// changes it, and the status subresource is updated.
func playStatus(t *testing.T, obj client.Object, name string, set func()) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	require.Eventually(t, func() bool {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, obj); err != nil {
			return false
		}
		set()
		return env.Client.Status().Update(ctx, obj) == nil
	}, browser.DefaultWait, browser.PollEvery)
}

// waitWatching waits until a page has opened a watch of resource beyond
// the before it had: from then on, a write is an event of that watch and
// not what its list read.
func waitWatching(t *testing.T, log *proxyLog, resource string, before int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(log.find("watch", resource, "")) > before }, browser.DefaultWait, browser.PollEvery,
		"the page should watch %s", resource)
}

// setConsumerStatus writes a consumer's status as its reconciler would.
func setConsumerStatus(t *testing.T, obj client.Object, name string, status v1alpha1.StorageStatus) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	require.Eventually(t, func() bool {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, obj); err != nil {
			return false
		}
		switch o := obj.(type) {
		case *v1alpha1.BlockStorage:
			o.Status = status
		case *v1alpha1.FileStorage:
			o.Status = status
		case *v1alpha1.ObjectStorage:
			o.Status = status
		}
		return env.Client.Status().Update(ctx, obj) == nil
	}, browser.DefaultWait, browser.PollEvery)
}

func createOverviewFixtures(t *testing.T) {
	t.Helper()
	for _, ns := range []string{rookNS, appNamespace, decoyNS} {
		ensureNamespace(t, ns)
	}
	lost := disk(ovLost, "node-b", "/dev/sdz", "2Ti", v1alpha1.DiskTypeSSD, v1alpha1.DiskMissing, "", "Lost SSD")
	lost.Status.LastSeenTime = &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, d := range []*v1alpha1.Disk{
		disk("ov-a1", "node-a", "/dev/sdb", "4Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, ovFirstPool, "ST4000NM0035"),
		disk("ov-a2", "node-a", "/dev/sdc", "2Ti", v1alpha1.DiskTypeSSD, v1alpha1.DiskInUse, ovFirstPool, "Samsung PM883"),
		disk("ov-b1", "node-b", "/dev/nvme0n1", "1Ti", v1alpha1.DiskTypeNVMe, v1alpha1.DiskInUse, ovFirstPool, "Micron 7450"),
		disk(ovShared, "node-a", "/dev/sdd", "4Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, ovFirstPool, "ST4000NM0035"),
		disk("ov-free", "node-b", "/dev/sde", "1Ti", v1alpha1.DiskTypeSSD, v1alpha1.DiskAvailable, "", "Samsung PM883"),
		disk("ov-spare", "node-b", "/dev/sdf", "1Ti", v1alpha1.DiskTypeHDD, v1alpha1.DiskInUse, "", "ST1000"),
		lost,
	} {
		createWithStatus(t, d)
	}
	ref := &v1alpha1.ObjectReference{Namespace: rookNS, Name: "rook-ceph"}
	createWithStatus(t, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: ovFirstPool}, Spec: v1alpha1.DiskPoolSpec{Disks: []string{"ov-a1", "ov-a2", "ov-b1", ovShared}},
		Status: v1alpha1.DiskPoolStatus{Phase: v1alpha1.DiskPoolReady, SelectedDiskCount: 4, CephCluster: ref, Message: "4 of 4 disks resolved"}})
	createWithStatus(t, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: ovSecondPool}, Spec: v1alpha1.DiskPoolSpec{Disks: []string{ovShared, ovLost, ovGhost}},
		Status: v1alpha1.DiskPoolStatus{Phase: v1alpha1.DiskPoolDegraded, CephCluster: ref, Message: ovPoolMsg}})

	ready := func(class string) v1alpha1.StorageStatus {
		return v1alpha1.StorageStatus{Phase: v1alpha1.StorageReady, StorageClassName: class, Replicas: 2, FailureDomain: "host", Message: "ready", ObservedGeneration: 1,
			CephBudget: &v1alpha1.CephBudgetUse{Pools: 1, CrushRules: 2, PGCopies: 64}}
	}
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: ovBlockOK}, Spec: v1alpha1.BlockStorageSpec{Replicas: ptr.To[int32](2)}, Status: ready("ceph-" + ovBlockOK)})
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: ovLongName}, Status: ready("ceph-" + ovLongName)})
	createWithStatus(t, &v1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: ovBlockBad}, Status: degradedStatus()})
	createWithStatus(t, &v1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: ovFile}, Status: v1alpha1.StorageStatus{Phase: v1alpha1.StorageProvisioning, Message: "waiting for CephFilesystem cephfs-fs-new"}})
	createWithStatus(t, &v1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: ovObject}, Status: ready(ovObjectSC)})

	createWithStatus(t, &v1alpha1.DiskRetirement{
		ObjectMeta: metav1.ObjectMeta{Name: ovWaiting},
		Spec:       v1alpha1.DiskRetirementSpec{Disk: "ov-a2", Suspend: true},
		Status: v1alpha1.DiskRetirementStatus{Phase: v1alpha1.RetirementSuspended, Message: "Every check passed; confirm to stop osd.2 and remove it",
			Pool: ovFirstPool, Node: "node-a", Device: "/dev/disk/by-id/wwn-ov-a2", OSDID: ptr.To[int32](2), Preflight: passedPreflight()},
	})
	createWithStatus(t, &v1alpha1.DiskRetirement{
		ObjectMeta: metav1.ObjectMeta{Name: ovRetired},
		Spec:       v1alpha1.DiskRetirementSpec{Disk: "ov-spare"},
		Status:     v1alpha1.DiskRetirementStatus{Phase: v1alpha1.RetirementRetired, Message: "osd.9 was removed", Node: "node-b", OSDID: ptr.To[int32](9), Preflight: passedPreflight()},
	})

	cluster := cephClusterWithCapacity(rookNS, "rook-ceph", 8<<40, 2<<40)
	setStorage(cluster, 0.8, map[string][]string{
		"node-a": {"/dev/disk/by-id/wwn-ov-a1", "/dev/disk/by-id/wwn-ov-a2", "/dev/disk/by-id/wwn-" + ovShared},
		"node-b": {"/dev/disk/by-id/wwn-ov-b1", "/dev/disk/by-id/wwn-not-a-disk"},
	})
	status := cluster.Object["status"].(map[string]any)
	status["message"] = "Cluster created successfully"
	status["ceph"].(map[string]any)["health"] = "HEALTH_WARN"
	status["ceph"].(map[string]any)["details"] = map[string]any{"OSD_DOWN": map[string]any{"message": ovHealthWarn, "severity": "HEALTH_WARN"}}
	createWithStatus(t, cluster)
	decoy := cephClusterWithCapacity(decoyNS, "a-decoy", 100<<30, 0)
	setStorage(decoy, 0.5, map[string][]string{"node-x": {"/dev/sda"}})
	createWithStatus(t, decoy)

	createWithStatus(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "objectbucket.io/v1alpha1", "kind": "ObjectBucketClaim",
		"metadata": map[string]any{"name": ovClaim, "namespace": appNamespace},
		"spec":     map[string]any{"storageClassName": ovObjectSC, "generateBucketName": "photos"},
		"status":   map[string]any{"phase": "Pending"},
	}})
}

// recordUpgrade writes the upgrade record on the fed CephCluster, as the
// plugin's upgrade reconciler does.
func recordUpgrade(t *testing.T, record string) {
	t.Helper()
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"})
	cluster.SetNamespace(rookNS)
	cluster.SetName("rook-ceph")
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{cephv1alpha1.UpgradeAnnotation: record}}})
	require.NoError(t, err)
	require.NoError(t, controlPlane.Env(t).Client.Patch(context.Background(), cluster, client.RawPatch(types.MergePatchType, patch)))
}

// createManyDisks publishes n Disks with status, spread over nodes nodes,
// and lists every one in the fed CephCluster, as the plugin would at that
// size (a DiskPool listing them all is not needed to count them).
func createManyDisks(t *testing.T, n, nodes int) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	diskTypes := []v1alpha1.DiskType{v1alpha1.DiskTypeHDD, v1alpha1.DiskTypeSSD, v1alpha1.DiskTypeNVMe}
	devices := map[string][]string{}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				node := fmt.Sprintf("node-s%02d", i%nodes)
				d := disk(fmt.Sprintf("scale-%05d", i), node, fmt.Sprintf("/dev/sd%d", i), "4Ti", diskTypes[i%3], v1alpha1.DiskInUse, "", "ST4000")
				withStatus := d.DeepCopy()
				err := env.Client.Create(ctx, d)
				if err == nil {
					withStatus.ResourceVersion = d.ResourceVersion
					err = env.Client.Status().Update(ctx, withStatus)
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		node := fmt.Sprintf("node-s%02d", i%nodes)
		devices[node] = append(devices[node], "/dev/disk/by-id/wwn-"+fmt.Sprintf("scale-%05d", i))
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	require.NoError(t, failed)

	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster"})
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Namespace: rookNS, Name: "rook-ceph"}, cluster))
	storage := cluster.Object["spec"].(map[string]any)["storage"].(map[string]any)
	list := storage["nodes"].([]any)
	for node, names := range devices {
		entries := make([]any, 0, len(names))
		for _, name := range names {
			entries = append(entries, map[string]any{"name": name})
		}
		list = append(list, map[string]any{"name": node, "devices": entries})
	}
	storage["nodes"] = list
	require.NoError(t, env.Client.Update(ctx, cluster))
}

// The create forms' name rules are the CRDs' own: the cap, whether dots
// are allowed, and the message the API server would answer with.
func TestConsoleNameRulesAreTheCRDs(t *testing.T) {
	root := testenv.RepoRoot()
	source, err := os.ReadFile(filepath.Join(root, "console", "consumer-pages.js"))
	require.NoError(t, err)
	kinds := regexp.MustCompile(`(?m)^  (\w+): \{\n    kind: '(\w+)'`).FindAllStringSubmatch(string(source), -1)
	rules := regexp.MustCompile(`name: \{ max: (\d+), dots: (true|false), rule: (?:'([^']+)'|"([^"]+)") \}`).FindAllStringSubmatch(string(source), -1)
	require.Len(t, kinds, 3, "CONSUMER_KINDS in consumer-pages.js could not be read")
	require.Len(t, rules, 3, "every consumer kind has a name rule")
	caps := regexp.MustCompile(`^self\.metadata\.name\.size\(\) <= (\d+)( && !self\.metadata\.name\.contains\('\.'\))?$`)
	for i, kind := range kinds {
		t.Run(kind[2], func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(root, "crds", "ceph.fundament.io_"+strings.ToLower(kind[2])+"s.yaml"))
			require.NoError(t, err)
			var crd apiextensionsv1.CustomResourceDefinition
			require.NoError(t, yaml.Unmarshal(raw, &crd))
			var found bool
			for _, v := range crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations {
				m := caps.FindStringSubmatch(v.Rule)
				if m == nil {
					continue
				}
				found = true
				rule := rules[i]
				assert.Equal(t, m[1], rule[1], "the length cap")
				assert.Equal(t, m[2] == "", rule[2] == "true", "whether dots are allowed")
				assert.Equal(t, v.Message, rule[3]+rule[4], "the sentence is the CRD's message")
			}
			assert.True(t, found, "the CRD caps metadata.name")
		})
	}
}
