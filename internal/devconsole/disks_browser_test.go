package devconsole_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/browser"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
)

// listGate records what the kube-api-proxy saw and can hold one Disk list
// request (a page of a paged list) until released, so a test sees a page
// half loaded.
type listGate struct {
	proxyLog
	mu      sync.Mutex
	lists   int
	holdAt  int
	release chan struct{}
}

func (g *listGate) observe(r devconsole.ProxiedRequest) {
	g.add(r)
	if r.Verb != "list" || r.Resource != "disks" {
		return
	}
	g.mu.Lock()
	g.lists++
	hold := g.holdAt != 0 && g.lists == g.holdAt
	release := g.release
	g.mu.Unlock()
	if hold {
		<-release
	}
}

// holdNext holds the n-th Disk list request from now; the returned func
// lets it through.
func (g *listGate) holdNext(n int) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holdAt = g.lists + n
	g.release = make(chan struct{})
	release := g.release
	var once sync.Once
	return func() { once.Do(func() { close(release) }) }
}

func (g *listGate) diskLists() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lists
}

// diskFilter is what a test sets in the filter bar of the Disks page or
// the picker.
type diskFilter struct {
	Nodes                          []string
	Type, State, Min, Max, Pool, Q string
	Hide                           bool
}

// applyFilter sets every filter control at once and fires one change, then
// waits until the page applied it (its data-filter-generation moved on).
func applyFilter(t *testing.T, b *browser.Browser, frame, root string, f diskFilter) {
	t.Helper()
	if f.Nodes == nil {
		f.Nodes = []string{}
	}
	res, _, err := b.Call(frame, root, `function(f) {
  const q = (n) => this.querySelector('[name="' + n + '"]');
  const before = Number(this.dataset.filterGeneration);
  q('disk-search').value = f.Q;
  q('disk-type').value = f.Type;
  q('disk-state').value = f.State;
  q('disk-size-min').value = f.Min;
  q('disk-size-max').value = f.Max;
  q('disk-pool').value = f.Pool;
  if (q('disk-pool').value !== f.Pool) throw new Error('no pool option ' + f.Pool);
  for (const o of q('disk-node').options) o.selected = f.Nodes.includes(o.value);
  if (q('hide-unpickable')) q('hide-unpickable').checked = f.Hide;
  q('disk-state').dispatchEvent(new Event('change', { bubbles: true }));
  return before;
}`, f)
	require.NoError(t, err)
	b.WaitFor(frame, root, fmt.Sprintf("function() { return Number(this.dataset.filterGeneration) > %s; }", res))
}

// shownRows are the disk rows in the DOM, in order.
func shownRows(t *testing.T, b *browser.Browser, frame string) []string {
	t.Helper()
	res, _, err := b.Call(frame, "html", `function() { return [...this.querySelectorAll('tr[data-row]')].map((r) => r.dataset.row); }`)
	require.NoError(t, err)
	var rows []string
	require.NoError(t, json.Unmarshal(res, &rows))
	return rows
}

// jsValue runs fn on sel in frame and decodes its result into out.
// jsCase is a case of a console module's pure functions: body, run in the
// page after a prelude that imports the module, returns what is compared
// with want (JSON).
type jsCase struct{ name, body, want string }

// runJSCases runs each case in the page, a subtest each.
func runJSCases(t *testing.T, b *browser.Browser, prelude string, cases []jsCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := b.Call(browser.PageFrame, "body", "async function() { "+prelude+tc.body+" }")
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
}

func jsValue(t *testing.T, b *browser.Browser, frame, sel, fn string, out any, args ...any) {
	t.Helper()
	res, found, err := b.Call(frame, sel, fn, args...)
	require.NoError(t, err)
	require.True(t, found, "%s in %s", sel, frame)
	require.NoError(t, json.Unmarshal(res, out))
}

// filterCase is one filter and the disks of the scale fixture it must show
// (each case names nodes of the fixture, or a search only the fixture
// matches, so disks other tests left do not count).
type filterCase struct {
	name   string
	filter diskFilter
	want   func(d bigDisk) bool
}

func nodesIn(ns ...int) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, bigNode(n))
	}
	return out
}

func onNodes(d bigDisk, nodes []string) bool { return slices.Contains(nodes, d.Node) }

var filterCases = []filterCase{
	{name: "one node shows that node's 20 disks", filter: diskFilter{Nodes: nodesIn(3)},
		want: func(d bigDisk) bool { return d.Node == bigNode(3) }},
	{name: "two nodes and type SSD show their 12 SSDs", filter: diskFilter{Nodes: nodesIn(1, 2), Type: "SSD"},
		want: func(d bigDisk) bool { return onNodes(d, nodesIn(1, 2)) && d.Type == v1alpha1.DiskTypeSSD }},
	{name: "type NVMe", filter: diskFilter{Nodes: nodesIn(7, 8, 9), Type: "NVMe"},
		want: func(d bigDisk) bool { return onNodes(d, nodesIn(7, 8, 9)) && d.Type == v1alpha1.DiskTypeNVMe }},
	{name: "type HDD", filter: diskFilter{Nodes: nodesIn(9), Type: "HDD"},
		want: func(d bigDisk) bool { return d.Node == bigNode(9) && d.Type == v1alpha1.DiskTypeHDD }},
	{name: "state Missing, with its reason", filter: diskFilter{Nodes: nodesIn(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), State: "Missing"},
		want: func(d bigDisk) bool {
			return onNodes(d, nodesIn(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)) && d.State == v1alpha1.DiskMissing
		}},
	{name: "state InUse: claimed disks and the one with a filesystem", filter: diskFilter{Nodes: nodesIn(1, 2, 3, 4), State: "InUse"},
		want: func(d bigDisk) bool { return onNodes(d, nodesIn(1, 2, 3, 4)) && d.State == v1alpha1.DiskInUse }},
	{name: "state Available includes disks another pool holds", filter: diskFilter{Nodes: nodesIn(4), State: "Available"},
		want: func(d bigDisk) bool { return d.Node == bigNode(4) && d.State == v1alpha1.DiskAvailable }},
	{name: "size from 1.5 TiB up to 4 TiB is the SSDs", filter: diskFilter{Nodes: nodesIn(11), Min: "1.5Ti", Max: "4 TiB"},
		want: func(d bigDisk) bool { return d.Node == bigNode(11) && d.SizeTiB >= 1.5 && d.SizeTiB <= 4 }},
	{name: "size from 8 TB (decimal) is the 8 TiB HDDs", filter: diskFilter{Nodes: nodesIn(12), Min: "8TB"},
		want: func(d bigDisk) bool { return d.Node == bigNode(12) && d.SizeTiB*(1<<40) >= 8e12 }},
	{name: "size up to 1 TiB is the NVMe", filter: diskFilter{Nodes: nodesIn(12, 13), Max: "1Ti"},
		want: func(d bigDisk) bool { return onNodes(d, nodesIn(12, 13)) && d.SizeTiB <= 1 }},
	{name: "a size that is not one is ignored", filter: diskFilter{Nodes: nodesIn(14), Min: "huge"},
		want: func(d bigDisk) bool { return d.Node == bigNode(14) }},
	{name: "claimed by a pool", filter: diskFilter{Pool: bigPoolA},
		want: func(d bigDisk) bool { return d.ClaimedBy == bigPoolA }},
	{name: "claimed by no pool", filter: diskFilter{Nodes: nodesIn(3, 4), Pool: "-"},
		want: func(d bigDisk) bool { return onNodes(d, nodesIn(3, 4)) && d.ClaimedBy == "" }},
	{name: "search by serial", filter: diskFilter{Q: "sn01713"},
		want: func(d bigDisk) bool { return d.Serial == "SN01713" }},
	{name: "search by model, ignoring case", filter: diskFilter{Q: "quantum fireball"},
		want: func(d bigDisk) bool { return d.Model == quantumModel }},
	{name: "search by kernel path on chosen nodes", filter: diskFilter{Nodes: nodesIn(15, 16), Q: "/dev/nvme1n1"},
		want: func(d bigDisk) bool { return onNodes(d, nodesIn(15, 16)) && d.Path == "/dev/nvme1n1" }},
	{name: "search by stable path", filter: diskFilter{Q: "wwn-0x5000c500SN0211"},
		want: func(d bigDisk) bool { return strings.Contains(d.StablePath, "wwn-0x5000c500SN0211") }},
	{name: "search by name, every word must match", filter: diskFilter{Q: "big-node-018 d1"},
		want: func(d bigDisk) bool { return d.Node == bigNode(18) && strings.Contains(d.Name, "d1") }},
	{name: "search and filters together", filter: diskFilter{Q: "samsung", Type: "SSD", State: "Available", Nodes: nodesIn(19, 20)},
		want: func(d bigDisk) bool {
			return onNodes(d, nodesIn(19, 20)) && d.Type == v1alpha1.DiskTypeSSD && d.State == v1alpha1.DiskAvailable
		}},
}

// checkFilterCases applies each case on a page and compares the rows it
// shows (the groups open by themselves: each case shows few disks).
func checkFilterCases(t *testing.T, b *browser.Browser, frame, root string, inventory []bigDisk, pickableOnly func(bigDisk) bool) {
	hide := pickableOnly != nil
	t.Helper()
	for _, tc := range filterCases {
		t.Run(tc.name, func(t *testing.T) {
			b.T = t
			f := tc.filter
			f.Hide = hide
			applyFilter(t, b, frame, root, f)
			var want []string
			for _, d := range inventory {
				if tc.want(d) && (pickableOnly == nil || pickableOnly(d)) {
					want = append(want, d.Name)
				}
			}
			if !hide {
				require.NotEmpty(t, want, "a case must show something")
			}
			got := shownRows(t, b, frame)
			assert.ElementsMatch(t, want, got)
			b.WaitText(frame, `[data-role="match-count"]`, fmt.Sprintf("Showing %d of ", len(want)))
		})
	}
	b.T = t
	applyFilter(t, b, frame, root, diskFilter{})
}

// TestDisksAtScaleInBrowser drives the Disks page and the DiskPool disk
// picker over 1,202 Disks on 61 nodes (three list pages of 500) in
// headless Chromium under the production CSP.
func TestDisksAtScaleInBrowser(t *testing.T) {
	env := controlPlane.Env(t)
	inventory := createBigInventory(t)
	gate := &listGate{}
	srv := startConsoleWith(t, gate.observe, nil)
	b := browser.Start(t, srv.URL())
	ctx := context.Background()
	all := allDisks(t)
	total, nodes := len(all), distinctNodes(all)
	require.Greater(t, total, 1000, "more Disks than two list pages")

	t.Run("pure: disk-filter.js decides as the table says", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, "#app[data-loaded='complete']")
		runJSCases(t, b, "const m = await import(new URL('disk-filter.js', document.baseURI).href); ", diskFilterCases)
	})

	t.Run("pure: live.js lists in pages, follows the watch, lists again when told 410, reconnects after a failure", func(t *testing.T) {
		b.T = t
		runJSCases(t, b, "const m = await import(new URL('live.js', document.baseURI).href); "+liveHarness, liveCases)
	})

	t.Run("the Disks page draws the first page at once and loads the rest in pages", func(t *testing.T) {
		b.T = t
		before := gate.diskLists()
		release := gate.holdNext(2) // the second page's request waits
		t.Cleanup(release)
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitText(browser.PageFrame, `[data-role="load-progress"]`, fmt.Sprintf("Loading disks: 500 of about %s", thousands(total)))
		b.WaitFor(browser.PageFrame, ".cr-group")
		var state struct {
			FirstRows, Complete int
			Loaded              string
			Groups, Rows        int
		}
		jsValue(t, b, browser.PageFrame, "#app", `function() { return {
  firstRows: performance.getEntriesByName('ceph-rook:disks:first-rows').length,
  complete: performance.getEntriesByName('ceph-rook:disks:complete').length,
  loaded: this.dataset.loaded || '', groups: document.querySelectorAll('.cr-group').length, rows: document.querySelectorAll('tr[data-row]').length }; }`, &state)
		assert.Equal(t, 1, state.FirstRows, "the first rows are marked as soon as the first page is drawn")
		assert.Zero(t, state.Complete, "not complete while a page is outstanding")
		assert.Empty(t, state.Loaded)
		assert.Positive(t, state.Groups, "the first page's nodes are drawn before the rest arrives")
		assert.Zero(t, state.Rows, "groups start collapsed: no rows in the DOM")
		b.Screenshot("disks-scale-first-page")

		release()
		b.WaitFor(browser.PageFrame, "#app[data-loaded='complete']")
		jsValue(t, b, browser.PageFrame, "#app", `function() { return {
  firstRows: performance.getEntriesByName('ceph-rook:disks:first-rows').length,
  complete: performance.getEntriesByName('ceph-rook:disks:complete').length,
  loaded: this.dataset.loaded, groups: document.querySelectorAll('.cr-group').length, rows: document.querySelectorAll('tr[data-row]').length }; }`, &state)
		assert.Equal(t, 1, state.Complete)
		assert.Equal(t, nodes, state.Groups, "a group per node")
		assert.Zero(t, state.Rows, "%d disks: every group collapsed", total)
		assert.GreaterOrEqual(t, gate.diskLists()-before, (total+499)/500, "one list request a page of 500")
		b.WaitText(browser.PageFrame, `[data-role="match-count"]`, fmt.Sprintf("%s disks on %d nodes.", thousands(total), nodes))
		b.WaitText(browser.PageFrame, `.cr-group[data-node="`+bigNode(4)+`"] [data-role="group-counts"]`, "20 disks · 18 Available · 1 In use · 1 Missing · 110 TiB")
		b.Screenshot("disks-scale-complete")
	})

	t.Run("groups open and close; only open groups have rows; Expand all stops at 1,000 rows", func(t *testing.T) {
		b.T = t
		toggle := `.cr-group[data-node="` + bigNode(7) + `"] [data-action="toggle-group"]`
		b.Click(browser.PageFrame, toggle)
		b.WaitFor(browser.PageFrame, toggle+`[aria-expanded="true"]`)
		assert.Len(t, shownRows(t, b, browser.PageFrame), disksPerNode)
		b.Click(browser.PageFrame, toggle)
		b.WaitFor(browser.PageFrame, toggle+`[aria-expanded="false"]`)
		assert.Empty(t, shownRows(t, b, browser.PageFrame))

		b.Click(browser.PageFrame, `[data-action="expand-all"]`)
		b.WaitText(browser.PageFrame, `[data-role="expand-note"]`, "disks are shown at once")
		rows := len(shownRows(t, b, browser.PageFrame))
		assert.LessOrEqual(t, rows, 1000)
		assert.Greater(t, rows, 900, "Expand all opens groups up to the limit")
		b.Click(browser.PageFrame, `[data-action="collapse-all"]`)
		b.WaitFor(browser.PageFrame, "html", "function() { return this.querySelectorAll('tr[data-row]').length === 0; }")
		assert.Empty(t, b.Text(browser.PageFrame, `[data-role="expand-note"]`))
	})

	t.Run("Disks page filters", func(t *testing.T) {
		checkFilterCases(t, b, browser.PageFrame, `[data-role="disk-list"]`, inventory, nil)
		b.T = t
		// The reason is shown beside the state, in words.
		applyFilter(t, b, browser.PageFrame, `[data-role="disk-list"]`, diskFilter{Nodes: nodesIn(2), State: "Missing"})
		b.WaitText(browser.PageFrame, `tr[data-row="big-node-002-d06"]`, "▲ Missing "+missingReason)
		applyFilter(t, b, browser.PageFrame, `[data-role="disk-list"]`, diskFilter{})
	})

	t.Run("long names and paths are cut with the whole text in a tooltip, and nothing scrolls sideways", func(t *testing.T) {
		b.T = t
		applyFilter(t, b, browser.PageFrame, `[data-role="disk-list"]`, diskFilter{Nodes: []string{longNode}})
		name := longDisk(0)
		b.WaitFor(browser.PageFrame, `tr[data-row="`+name+`"]`)
		assertTruncated(t, b, browser.PageFrame, `tr[data-row="`+name+`"] [data-link]`, name)
		assertTruncated(t, b, browser.PageFrame, `tr[data-row="`+name+`"] td:nth-child(3) .cr-truncate`, longStablePath+"-0")
		assertNoSidewaysScroll(t, b, browser.PageFrame, "the Disks page")
		b.Screenshot("disks-long-names")
		applyFilter(t, b, browser.PageFrame, `[data-role="disk-list"]`, diskFilter{})
	})

	t.Run("a Disk created, changed or deleted through the API shows without a reload, and only its row is drawn again", func(t *testing.T) {
		b.T = t
		root := `[data-role="disk-list"]`
		applyFilter(t, b, browser.PageFrame, root, diskFilter{Nodes: nodesIn(5)})
		b.WaitFor(browser.PageFrame, `tr[data-row="big-node-005-d02"]`)
		_, _, err := b.Call(browser.PageFrame, `tr[data-row="big-node-005-d02"]`, `function() { window.notReloaded = true; this.dataset.kept = 'yes'; document.querySelector('tr[data-row="big-node-005-d01"]').dataset.kept = 'yes'; }`)
		require.NoError(t, err)

		added := bigDisk{Name: "big-node-005-d20", Node: bigNode(5), Path: "/dev/sdz", StablePath: "/dev/disk/by-id/wwn-added", Size: "16Ti", Type: v1alpha1.DiskTypeHDD, State: v1alpha1.DiskAvailable, Serial: "SNADDED"}
		createWithStatus(t, added.object())
		b.WaitText(browser.PageFrame, `tr[data-row="big-node-005-d20"]`, "16.0 TiB")
		b.WaitText(browser.PageFrame, `.cr-group[data-node="`+bigNode(5)+`"] [data-role="group-counts"]`, "21 disks")

		var changed v1alpha1.Disk
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: "big-node-005-d01"}, &changed))
		changed.Status.State, changed.Status.Reason, changed.Status.Available = v1alpha1.DiskMissing, "pulled in the live test", false
		require.NoError(t, env.Client.Status().Update(ctx, &changed))
		b.WaitText(browser.PageFrame, `tr[data-row="big-node-005-d01"]`, "▲ Missing pulled in the live test")

		require.NoError(t, env.Client.Delete(ctx, &v1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: "big-node-005-d20"}}))
		b.WaitFor(browser.PageFrame, "html", `function() { return !this.querySelector('tr[data-row="big-node-005-d20"]'); }`)
		var kept struct {
			Reloaded         bool
			Unchanged, Moved string
		}
		jsValue(t, b, browser.PageFrame, "html", `function() { return { reloaded: !window.notReloaded,
  unchanged: this.querySelector('tr[data-row="big-node-005-d02"]').dataset.kept || '',
  moved: this.querySelector('tr[data-row="big-node-005-d01"]').dataset.kept || '' }; }`, &kept)
		assert.False(t, kept.Reloaded, "the page was not loaded again")
		assert.Equal(t, "yes", kept.Unchanged, "a row whose disk did not change is the same element")
		assert.Empty(t, kept.Moved, "the changed disk's row was drawn again")
		applyFilter(t, b, browser.PageFrame, root, diskFilter{})
		// Back as the fixture has it, for the subtests after this one.
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: "big-node-005-d01"}, &changed))
		changed.Status.State, changed.Status.Reason, changed.Status.Available = v1alpha1.DiskAvailable, "", true
		require.NoError(t, env.Client.Status().Update(ctx, &changed))
	})

	t.Run("the Disk detail page follows its Disk", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io/big-node-030-d05")
		b.WaitText(browser.PageFrame, "#app", "filesystem ext4")
		_, _, err := b.Call(browser.PageFrame, "html", `function() { window.notReloaded = true; }`)
		require.NoError(t, err)
		var d v1alpha1.Disk
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: "big-node-030-d05"}, &d))
		d.Status.Reason = "partitioned (seen by the detail test)"
		require.NoError(t, env.Client.Status().Update(ctx, &d))
		b.WaitText(browser.PageFrame, "#app", "partitioned (seen by the detail test)")
		var reloaded bool
		jsValue(t, b, browser.PageFrame, "html", `function() { return !window.notReloaded; }`, &reloaded)
		assert.False(t, reloaded)
	})

	t.Run("the Disks page works by keyboard alone", func(t *testing.T) {
		b.T = t
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, "#app[data-loaded='complete']")
		b.FocusOn(browser.PageFrame, `[name="disk-search"]`)
		seen := tabUntil(t, b, browser.PageFrame, "toggle-group", 30)
		assertInOrder(t, seen, "disk-search", "disk-node", "disk-type", "disk-state", "disk-size-min", "disk-size-max", "disk-pool",
			"clear-filters", "expand-all", "collapse-all", "toggle-group")
		// Enter opens the focused group, Space closes it again.
		b.PressKeys(browser.KeyEnter)
		b.WaitFor(browser.PageFrame, "html", `function() { return this.ownerDocument.activeElement.getAttribute('aria-expanded') === 'true'; }`)
		assert.Len(t, shownRows(t, b, browser.PageFrame), firstGroupSize(t, b, browser.PageFrame))
		b.PressKeys(browser.KeySpace)
		b.WaitFor(browser.PageFrame, "html", `function() { return this.ownerDocument.activeElement.getAttribute('aria-expanded') === 'false'; }`)
		assert.Empty(t, shownRows(t, b, browser.PageFrame))
		// Typing a search into the focused field filters.
		b.FocusOn(browser.PageFrame, `[name="disk-search"]`)
		b.PressKeys("SN04207")
		b.WaitFor(browser.PageFrame, `tr[data-row="big-node-042-d07"]`)
		assert.Equal(t, []string{"big-node-042-d07"}, shownRows(t, b, browser.PageFrame))
	})

	picker := `[data-role="disk-picker"]`
	// The DiskPool sheets are opened as the pool pages open them
	// (fundament.openSheet), from the Disks page, which lists in pages and
	// retries: the pool pages' plain list fails when the API server's
	// cache is reinitialising, which a loaded machine sometimes makes it.
	openSheet := func(t *testing.T, view, name string) {
		t.Helper()
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, "#app[data-loaded='complete']")
		_, _, err := b.Call(browser.PageFrame, "body", `function(view, name) { window.fundament.openSheet({ kind: 'DiskPool', view, name: name || undefined }); }`, view, name)
		require.NoError(t, err)
		b.WaitFor(browser.SheetFrame, picker+"[data-loaded='complete']")
	}
	openCreateSheet := func(t *testing.T) { t.Helper(); openSheet(t, "create", "") }

	t.Run("picker filters", func(t *testing.T) {
		b.T = t
		openCreateSheet(t)
		assert.Empty(t, shownRows(t, b, browser.SheetFrame), "%d disks: the picker's groups start collapsed", total)
		checkFilterCases(t, b, browser.SheetFrame, picker, inventory, nil)
	})

	t.Run("picker filters, hiding what cannot be picked", func(t *testing.T) {
		b.T = t
		checkFilterCases(t, b, browser.SheetFrame, picker, inventory, bigDisk.pickable)
	})

	t.Run("a disk another pool holds says so instead of Available, and the toggle hides what cannot be picked", func(t *testing.T) {
		b.T = t
		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{Nodes: nodesIn(4)})
		held := `tr[data-row="big-node-004-d00"]`
		b.WaitText(browser.SheetFrame, held, "○ Held by "+bigPoolB)
		assert.NotContains(t, b.Text(browser.SheetFrame, held), "Available", "a held disk is not shown Available")
		b.WaitFor(browser.SheetFrame, held+` input[data-disk]`, "function() { return this.disabled; }")
		b.WaitText(browser.SheetFrame, `tr[data-row="big-node-004-d02"]`, "● Available")
		assert.Len(t, shownRows(t, b, browser.SheetFrame), disksPerNode)

		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{Nodes: nodesIn(4), Hide: true})
		rows := shownRows(t, b, browser.SheetFrame)
		assert.Len(t, rows, disksPerNode-4, "held (2), in use and missing disks are hidden")
		for _, gone := range []string{"big-node-004-d00", "big-node-004-d01", "big-node-004-d05", "big-node-004-d06"} {
			assert.NotContains(t, rows, gone)
		}
		b.Screenshot("picker-held-by")
		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{})
	})

	t.Run("select a node's, a type's and the filter's disks in one action; the summary counts the cluster's nodes", func(t *testing.T) {
		b.T = t
		selection := map[string]bool{}
		selectWhere := func(keep func(bigDisk) bool) {
			for _, d := range inventory {
				if d.pickable() && keep(d) {
					selection[d.Name] = true
				}
			}
		}
		gen := selectionGeneration(t, b)

		// A node: its checkbox selects every pickable disk of it.
		b.Click(browser.SheetFrame, `input[name="select-node"][data-node="`+bigNode(10)+`"]`)
		selectWhere(func(d bigDisk) bool { return d.Node == bigNode(10) })
		gen = waitSelectionGeneration(t, b, gen)
		assertSummary(t, b, inventory, selection, "18 disks selected on 1 node, 94.0 TiB raw (10 HDD, 6 SSD, 2 NVMe).")
		b.WaitFor(browser.SheetFrame, `input[name="select-node"][data-node="`+bigNode(10)+`"]`, "function() { return this.checked && !this.indeterminate; }")

		// A type, of what the filter shows.
		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{Nodes: nodesIn(11, 12)})
		b.WaitText(browser.SheetFrame, `[data-action="select-type-SSD"]`, "(12)")
		b.Click(browser.SheetFrame, `[data-action="select-type-SSD"]`)
		selectWhere(func(d bigDisk) bool { return onNodes(d, nodesIn(11, 12)) && d.Type == v1alpha1.DiskTypeSSD })
		gen = waitSelectionGeneration(t, b, gen)
		assertSummary(t, b, inventory, selection, "30 disks selected on 3 nodes, 118 TiB raw (10 HDD, 18 SSD, 2 NVMe).")
		b.WaitFor(browser.SheetFrame, `input[name="select-node"][data-node="`+bigNode(11)+`"]`, "function() { return this.indeterminate; }")

		// The filter: every pickable disk it shows.
		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{Nodes: nodesIn(13, 14, 15), State: "Available"})
		b.WaitText(browser.SheetFrame, `[name="select-filtered"]`, "(54)")
		b.Click(browser.SheetFrame, `[name="select-filtered"]`)
		selectWhere(func(d bigDisk) bool { return onNodes(d, nodesIn(13, 14, 15)) })
		gen = waitSelectionGeneration(t, b, gen)
		assertSummary(t, b, inventory, selection, "84 disks selected on 6 nodes, 400 TiB raw (40 HDD, 36 SSD, 8 NVMe).")
		b.Screenshot("picker-selection-summary")

		// Unchecking a node's checkbox takes its disks out again.
		b.Click(browser.SheetFrame, `input[name="select-node"][data-node="`+bigNode(15)+`"]`)
		for _, d := range inventory {
			if d.Node == bigNode(15) {
				delete(selection, d.Name)
			}
		}
		waitSelectionGeneration(t, b, gen)
		assertSummary(t, b, inventory, selection, "66 disks selected on 5 nodes, 306 TiB raw (30 HDD, 30 SSD, 6 NVMe).")

		// Creating saves exactly that selection.
		b.Fill(browser.SheetFrame, `input[name="name"]`, "big-pool-new")
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitHostPath("/view/diskpools.ceph.fundament.io/big-pool-new")
		var pool v1alpha1.DiskPool
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: "big-pool-new"}, &pool))
		var want []string
		for name := range selection {
			want = append(want, name)
		}
		assert.ElementsMatch(t, want, pool.Spec.Disks)
		byName := map[string]bigDisk{}
		for _, d := range inventory {
			byName[d.Name] = d
		}
		assert.True(t, slices.IsSortedFunc(pool.Spec.Disks, func(a, b string) int {
			return strings.Compare(byName[a].Node+"\x00"+byName[a].Path, byName[b].Node+"\x00"+byName[b].Path)
		}), "new picks are saved in the order shown (node, then path): %v", pool.Spec.Disks)
	})

	t.Run("the picker works by keyboard alone", func(t *testing.T) {
		b.T = t
		openCreateSheet(t)
		b.FocusOn(browser.SheetFrame, `[name="disk-search"]`)
		seen := tabUntil(t, b, browser.SheetFrame, "select-node", 40)
		assertInOrder(t, seen, "disk-search", "disk-node", "disk-type", "disk-state", "disk-size-min", "disk-size-max", "disk-pool",
			"hide-unpickable", "clear-filters", "select-filtered", "select-type-HDD", "select-type-SSD", "select-type-NVMe",
			"expand-all", "collapse-all", "select-node")

		node := bigNode(20)
		box := `input[name="select-node"][data-node="` + node + `"]`
		b.FocusOn(browser.SheetFrame, box)
		gen := selectionGeneration(t, b)
		b.PressKeys(browser.KeySpace)
		gen = waitSelectionGeneration(t, b, gen)
		b.WaitText(browser.SheetFrame, `[data-role="selection-summary"]`, "18 disks selected on 1 node")
		b.PressKeys(browser.KeyTab)
		b.WaitFor(browser.SheetFrame, "html", fmt.Sprintf(`function() { const a = this.ownerDocument.activeElement; return a.dataset.action === 'toggle-group' && a.dataset.node === %q; }`, node))
		b.PressKeys(browser.KeyEnter)
		group := `.cr-group[data-node="` + node + `"]`
		b.WaitFor(browser.SheetFrame, group+` tr[data-row] input[data-disk]`, "function() { return this.checked; }")
		// The node's first disk in lsblk order (nvme0n1 before sdb) is next.
		first := node + "-d18"
		b.WaitFor(browser.SheetFrame, group+` tbody tr:first-child[data-row="`+first+`"]`)
		b.PressKeys(browser.KeyTab)
		b.WaitFor(browser.SheetFrame, "html", fmt.Sprintf(`function() { return this.ownerDocument.activeElement.dataset.disk === %q; }`, first))
		b.PressKeys(browser.KeySpace)
		waitSelectionGeneration(t, b, gen)
		b.WaitText(browser.SheetFrame, `[data-role="selection-summary"]`, "17 disks selected on 1 node")
		b.WaitFor(browser.SheetFrame, "html", fmt.Sprintf(`function() { const a = this.ownerDocument.activeElement; return a.dataset.disk === %q && !a.checked; }`, first))
		b.WaitFor(browser.SheetFrame, box, "function() { return this.indeterminate; }")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
	})

	t.Run("a 63-character node name hides none of Path, Size and State, and nothing scrolls sideways", func(t *testing.T) {
		b.T = t
		openCreateSheet(t)
		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{Nodes: []string{longNode}})
		name := longDisk(1)
		row := `tr[data-row="` + name + `"]`
		b.WaitFor(browser.SheetFrame, row)
		assertTruncated(t, b, browser.SheetFrame, `.cr-group[data-node="`+longNode+`"] .cr-group-toggle .cr-truncate`, longNode)
		assertTruncated(t, b, browser.SheetFrame, row+` td:nth-child(3) .cr-truncate`, longStablePath+"-1")
		var cells []columnCell
		jsValue(t, b, browser.SheetFrame, row, `function() {
  const table = this.closest('table');
  const box = table.getBoundingClientRect();
  const labels = [...table.querySelectorAll('th')].map((th) => th.textContent);
  return [...this.cells].map((td, i) => { const r = td.getBoundingClientRect();
    return { label: labels[i], visible: r.width > 30 && r.left >= box.left - 1 && r.right <= box.right + 1 && td.textContent.trim() !== '' }; });
}`, &cells)
		for _, want := range []string{"Path", "Size", "State"} {
			i := slices.IndexFunc(cells, func(c columnCell) bool { return strings.EqualFold(c.Label, want) })
			require.GreaterOrEqual(t, i, 0, "column %s", want)
			assert.True(t, cells[i].Visible, "column %s is visible beside a 63-character node name", want)
		}
		b.WaitText(browser.SheetFrame, row, "7.0 TiB")
		b.WaitText(browser.SheetFrame, row, "● Available")
		assertNoSidewaysScroll(t, b, browser.SheetFrame, "the disk picker")
		b.Screenshot("picker-long-node")
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
	})

	t.Run("the edit sheet still names each disk that leaves the pool", func(t *testing.T) {
		b.T = t
		var listed []string
		for _, d := range inventory {
			if d.ClaimedBy == bigPoolA {
				listed = append(listed, d.Name)
			}
		}
		require.NoError(t, env.Client.Create(ctx, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: bigPoolA}, Spec: v1alpha1.DiskPoolSpec{Disks: listed}}))
		openSheet(t, "edit", bigPoolA)
		b.WaitText(browser.SheetFrame, `[data-role="selection-summary"]`, "12 disks selected on 3 nodes, 96.0 TiB raw (12 HDD).")
		applyFilter(t, b, browser.SheetFrame, picker, diskFilter{Nodes: nodesIn(1)})
		b.WaitFor(browser.SheetFrame, `input[data-disk="big-node-001-d00"]`, "function() { return this.checked && !this.disabled; }")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-warning] .plugin-error`))
		node := `input[name="select-node"][data-node="` + bigNode(1) + `"]`
		b.WaitFor(browser.SheetFrame, node, "function() { return this.indeterminate; }")
		// A partly selected node's checkbox selects the rest of it first,
		b.Click(browser.SheetFrame, node)
		b.WaitText(browser.SheetFrame, `[data-role="selection-summary"]`, "26 disks selected on 3 nodes")
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-warning] .plugin-error`))
		// and then takes every disk of it out.
		b.Click(browser.SheetFrame, node)
		b.WaitText(browser.SheetFrame, `[data-warning] .plugin-error`, "Removing 4 disks from this pool: ")
		for i := range 4 {
			b.WaitText(browser.SheetFrame, `[data-warning] .plugin-error`, fmt.Sprintf("big-node-001-d%02d (/dev/sd%c on big-node-001)", i, 'b'+i))
		}
		b.WaitText(browser.SheetFrame, `[data-warning] .plugin-error`, "its OSD keeps running until it is purged from Ceph manually")
		b.WaitText(browser.SheetFrame, `[data-role="selection-summary"]`, "8 disks selected on 2 nodes")
		b.Click(browser.SheetFrame, `form > .plugin-actions [data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, gate.find("patch", "diskpools", bigPoolA))
	})

	// The pool lists a disk from each list page (500 a page, in name order:
	// big-node-001 to -025 come first, big-node-060 and the long node last),
	// a disk another pool claims and a disk the inventory does not have.
	t.Run("the pool detail page finds its disks on every list page, says how far the list is, and follows them", func(t *testing.T) {
		b.T = t
		const missing = "big-node-999-d00"
		first, middle, last, long := "big-node-001-d00", "big-node-030-d07", "big-node-060-d19", longDisk(1)
		listed := []string{first, middle, last, long, missing}
		require.NoError(t, env.Client.Create(ctx, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: bigPoolDetail}, Spec: v1alpha1.DiskPoolSpec{Disks: listed}}))
		total := len(allDisks(t))
		row := func(name string) string { return `[data-role="pool-disks"] tr[data-row="` + name + `"]` }

		release := gate.holdNext(2) // the second page's request waits
		t.Cleanup(release)
		b.Open("/view/diskpools.ceph.fundament.io/" + bigPoolDetail)
		b.WaitText(browser.PageFrame, `[data-role="load-progress"]`, fmt.Sprintf("Loading disks: 500 of about %s", thousands(total)))
		b.WaitText(browser.PageFrame, row(first), "○ InUse")
		b.WaitText(browser.PageFrame, row(first), "Claimed by the older pool "+bigPoolA+"; skipped here.")
		for _, later := range []string{middle, last, long, missing} {
			b.WaitText(browser.PageFrame, row(later), "Loading…")
			assert.NotContains(t, b.Text(browser.PageFrame, row(later)), "Missing", "%s is not missing while its page is outstanding", later)
		}
		assert.Zero(t, b.Count(browser.PageFrame, "#app[data-loaded]"))
		b.Screenshot("diskpool-detail-scale-loading")

		release()
		b.WaitFor(browser.PageFrame, "#app[data-loaded='complete']")
		b.WaitText(browser.PageFrame, `[data-role="load-progress"]`, "Kept up to date as discovery reports changes.")
		var rows []string
		jsValue(t, b, browser.PageFrame, `[data-role="pool-disks"]`, `function() { return [...this.querySelectorAll('tr[data-row]')].map((r) => r.dataset.row); }`, &rows)
		assert.Equal(t, listed, rows, "a row for every disk the pool lists, in its order")
		byName := map[string]bigDisk{}
		for _, d := range inventory {
			byName[d.Name] = d
		}
		for _, name := range []string{first, middle, last, long} {
			d := byName[name]
			text := b.Text(browser.PageFrame, row(name))
			for _, want := range []string{d.Node, d.StablePath, string(d.State)} {
				assert.Contains(t, text, want, "row %s", name)
			}
			assert.NotContains(t, text, "Loading…")
		}
		b.WaitText(browser.PageFrame, row(middle), "8.0 TiB")
		b.WaitText(browser.PageFrame, row(long), "7.0 TiB")
		b.WaitText(browser.PageFrame, row(missing), "▲ Missing")
		b.WaitText(browser.PageFrame, row(missing), "No such disk in the inventory; skipped.")
		b.Screenshot("diskpool-detail-scale")

		// A listed disk's state changes: its row says so without a reload.
		_, _, err := b.Call(browser.PageFrame, "html", `function() { window.notReloaded = true; }`)
		require.NoError(t, err)
		var changed v1alpha1.Disk
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: last}, &changed))
		changed.Status.State, changed.Status.Available = v1alpha1.DiskMissing, false
		require.NoError(t, env.Client.Status().Update(ctx, &changed))
		b.WaitText(browser.PageFrame, row(last), "▲ Missing")
		var reloaded bool
		jsValue(t, b, browser.PageFrame, "html", `function() { return !window.notReloaded; }`, &reloaded)
		assert.False(t, reloaded, "the page was not loaded again")
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: last}, &changed))
		changed.Status.State, changed.Status.Available = v1alpha1.DiskAvailable, true
		require.NoError(t, env.Client.Status().Update(ctx, &changed))
		b.WaitText(browser.PageFrame, row(last), "● Available")
	})

	t.Run("the replace sheet offers every available disk of every list page, saying how far the list is", func(t *testing.T) {
		b.T = t
		const replaced = "big-node-001-d00"
		all := allDisks(t)
		var want []string
		for _, d := range all {
			if d.Name != replaced && d.Status.State == v1alpha1.DiskAvailable && d.Status.ClaimedBy == "" && d.Annotations[v1alpha1.RetiredAnnotation] == "" {
				want = append(want, d.Name)
			}
		}
		require.Greater(t, len(want), 1000, "more replacements than two list pages")
		options := func() []string {
			var got []string
			jsValue(t, b, browser.SheetFrame, `select[name="replacement"]`, `function() { return [...this.options].map((o) => o.value); }`, &got)
			return got
		}

		// Opened as the Disk detail page's Replace opens it, from the Disks
		// page, which has listed already (see openSheet above).
		b.Open("/view/disks.ceph.fundament.io")
		b.WaitFor(browser.PageFrame, "#app[data-loaded='complete']")
		release := gate.holdNext(2) // the sheet's second page waits
		t.Cleanup(release)
		_, _, err := b.Call(browser.PageFrame, "body", `function(disk) { window.fundament.openSheet({ kind: 'DiskRetirement', view: 'create', params: { disk, replace: true } }); }`, replaced)
		require.NoError(t, err)
		b.WaitText(browser.SheetFrame, "h1", "Replace disk "+replaced)
		b.WaitText(browser.SheetFrame, `[data-role="replacement"] [data-role="load-progress"]`, fmt.Sprintf("Loading disks: 500 of about %s", thousands(len(all))))
		b.WaitFor(browser.SheetFrame, `select[name="replacement"] option[value="big-node-001-d04"]`)
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-role="replacement"][data-loaded]`))
		assert.Less(t, len(options()), len(want), "only the first page's disks so far")
		b.WaitFor(browser.SheetFrame, `[data-action="check"]`, "function() { return !this.disabled; }")
		b.Screenshot("disk-replace-scale-loading")

		release()
		b.WaitFor(browser.SheetFrame, `[data-role="replacement"][data-loaded='complete']`)
		got := options()
		assert.ElementsMatch(t, want, got, "every disk that may replace it, and no other")
		assert.Contains(t, got, longDisk(1), "the last page's disks are offered")
		assert.Empty(t, b.Text(browser.SheetFrame, `[data-role="replacement"] [data-role="load-progress"]`))
		assert.Zero(t, b.Count(browser.SheetFrame, `[data-role="no-replacement"] .plugin-error`))
		b.Click(browser.SheetFrame, `[data-action="cancel"]`)
		waitSheetClosed(t, b)
		assert.Empty(t, gate.find("create", "diskretirements", ""), "cancelling before Check creates nothing")
	})

	t.Run("no CSP violations, page errors or dialogs", func(t *testing.T) {
		assert.Empty(t, b.Problems())
	})
}

// columnCell is a row's cell, by its column's label, and whether it shows.
type columnCell struct {
	Label   string
	Visible bool
}

// tabUntil presses Tab until the focused element in frame is named want
// (name, or data-action), and returns what had the focus on the way.
func tabUntil(t *testing.T, b *browser.Browser, frame, want string, most int) []string {
	t.Helper()
	var seen []string
	for range most {
		var name string
		jsValue(t, b, frame, "html", `function() { const a = this.ownerDocument.activeElement; return a ? (a.getAttribute('name') || a.dataset.action || a.tagName) : ''; }`, &name)
		seen = append(seen, name)
		if name == want {
			return seen
		}
		b.PressKeys(browser.KeyTab)
	}
	t.Fatalf("Tab never reached %s; focus went %v", want, seen)
	return nil
}

func assertInOrder(t *testing.T, seen []string, want ...string) {
	t.Helper()
	i := 0
	for _, s := range seen {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	assert.Equal(t, len(want), i, "Tab reaches %v in order; it went %v", want, seen)
}

func firstGroupSize(t *testing.T, b *browser.Browser, frame string) int {
	t.Helper()
	var n int
	jsValue(t, b, frame, "html", `function() { const node = this.ownerDocument.activeElement.dataset.node;
  return this.querySelectorAll('.cr-group[data-node="' + CSS.escape(node) + '"] tr[data-row]').length; }`, &n)
	require.Positive(t, n)
	return n
}

func selectionGeneration(t *testing.T, b *browser.Browser) int {
	t.Helper()
	var gen string
	jsValue(t, b, browser.SheetFrame, `[data-role="disk-picker"]`, `function() { return this.dataset.selectionGeneration; }`, &gen)
	var n int
	_, err := fmt.Sscan(gen, &n)
	require.NoError(t, err)
	return n
}

// waitSelectionGeneration waits for the picker to count a selection change
// after before, and returns the new count.
func waitSelectionGeneration(t *testing.T, b *browser.Browser, before int) int {
	t.Helper()
	b.WaitFor(browser.SheetFrame, `[data-role="disk-picker"]`, fmt.Sprintf("function() { return Number(this.dataset.selectionGeneration) > %d; }", before))
	return selectionGeneration(t, b)
}

// assertSummary checks the selection sentence and that the replication
// sentence counts the cluster's nodes: every node whose disks another pool
// holds (as the API server has them now, other tests' pools included) and
// the selection's.
func assertSummary(t *testing.T, b *browser.Browser, inventory []bigDisk, selection map[string]bool, sentence string) {
	t.Helper()
	b.WaitText(browser.SheetFrame, `[data-role="selection-summary"] [data-summary="selection"]`, sentence)
	cluster := map[string]bool{}
	for _, d := range allDisks(t) {
		if d.Status.ClaimedBy != "" && d.Annotations[v1alpha1.RetiredAnnotation] == "" && d.Status.NodeName != "" {
			cluster[d.Status.NodeName] = true
		}
	}
	for _, d := range inventory {
		if selection[d.Name] {
			cluster[d.Node] = true
		}
	}
	copies := min(3, len(cluster))
	b.WaitText(browser.SheetFrame, `[data-summary="replication"]`, fmt.Sprintf(
		"Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span %d nodes, so storage kinds on automatic replication keep %d copies, one per node (failure domain host)",
		len(cluster), copies))
}

// assertTruncated checks that sel shows less than its text, with all of it
// in its title.
func assertTruncated(t *testing.T, b *browser.Browser, frame, sel, full string) {
	t.Helper()
	var got struct {
		Title, Text string
		Cut         bool
	}
	jsValue(t, b, frame, sel, `function() { return { title: this.title, text: this.textContent, cut: this.scrollWidth > this.clientWidth }; }`, &got)
	assert.Equal(t, full, got.Title, "%s: the whole text is in the tooltip", sel)
	assert.Equal(t, full, got.Text)
	assert.True(t, got.Cut, "%s is cut to its box", sel)
}

// thousands writes n as the pages do: 10,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
