package devconsole_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/browser"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// budgetPrelude imports the console's budget.js (m) and tiers.js (t) in the
// page, with at(kind, replicas, nodes), where the plugin places a consumer
// asking replicas on nodes nodes and no class, and disks(counts), a union
// of Disks, counts[class] of each on 3 hosts.
const budgetPrelude = `const m = await import(new URL('budget.js', document.baseURI).href);
const t = await import(new URL('tiers.js', document.baseURI).href);
const at = (kind, replicas, nodes) => t.placementOf(kind, { replicas }, t.tiersOf([]), nodes);
const disks = (counts) => Object.entries(counts).flatMap(([type, n]) => Array.from({ length: n },
  (_, i) => ({ metadata: { name: type + '-' + i }, status: { claimedBy: 'pool', type, nodeName: 'node-' + (i % 3), size: '1Ti' } })));
`

// sharedBudgetCase decides one case of testdata/budget-cases.json (c) with
// budget.js, as TestTheConsoleBudgetDecidesAsBudgetGo does with budget.go:
// a consumer with cephBudget through its status, one without through the
// place the plugin would give it.
const sharedBudgetCase = `async function(c) {
` + budgetPrelude + `
const placeOf = (x) => ({
  replicas: x.replicas ?? 1, failureDomain: x.failureDomain ?? '', deviceClass: x.deviceClass ?? '',
  metadataReplicas: x.metadataReplicas ?? x.replicas ?? 1,
  metadataClass: x.kind === 'BlockStorage' ? x.deviceClass ?? '' : x.metadataClass ?? '', placed: x.placed !== false,
});
const others = c.existing.flatMap((x) => Array.from({ length: x.count || 1 }, (_, i) => {
  const place = placeOf(x);
  const status = x.cephBudget ? { replicas: place.replicas, failureDomain: place.failureDomain, deviceClass: place.deviceClass, metadataDeviceClass: place.metadataClass, cephBudget: x.cephBudget } : {};
  return m.existingConsumer(x.kind, { metadata: { name: x.name + '-' + i }, status }, place);
}));
const subject = m.plannedConsumer(c.newcomer.kind, c.newcomer.name, '', placeOf(c.newcomer));
const a = m.checkBudget({ others, subject, osds: c.osds, tiers: t.tiersOf(disks(c.disks)) });
return { crushRules: a.after.crushRules, takes: a.takes.crushRules, pgCopies: a.after.pgCopies, over: a.over, pgPerOSD: a.pgPerOSD,
  grown: a.pgPerOSDGrown, budget: a.refusal ? a.refusal.budget : '', warned: Boolean(a.warning) };
}`

// TestBudgetInBrowser runs the console's budget.js in headless Chromium: on
// the cases budget.go decides too (testdata/budget-cases.json), and on
// budgetCases, its own functions against the plugin's rules worked by hand.
func TestBudgetInBrowser(t *testing.T) {
	// The page that imports the modules lists ObjectStorages: once the API
	// server serves them (a CRD's storage initialises after it is made).
	c := controlPlane.Env(t).Client
	require.Eventually(t, func() bool { return c.List(context.Background(), &v1alpha1.ObjectStorageList{}) == nil },
		browser.DefaultWait, browser.PollEvery)
	srv := startConsole(t, &proxyLog{})
	b := browser.Start(t, srv.URL())
	b.Open("/view/objectstorages.ceph.fundament.io")
	b.WaitFor(browser.PageFrame, `[data-action="create"]`)

	t.Run("budget.js decides the cases budget.go decides", func(t *testing.T) {
		b.T = t
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "budget-cases.json"))
		require.NoError(t, err)
		var file struct {
			Cases []json.RawMessage
		}
		require.NoError(t, json.Unmarshal(raw, &file))
		require.NotEmpty(t, file.Cases)
		for _, c := range file.Cases {
			var tc struct {
				Name string
				Want json.RawMessage
			}
			require.NoError(t, json.Unmarshal(c, &tc))
			t.Run(tc.Name, func(t *testing.T) {
				got, _, err := b.Call(browser.PageFrame, "body", sharedBudgetCase, c)
				require.NoError(t, err)
				assert.JSONEq(t, string(tc.Want), string(got))
			})
		}
	})

	t.Run("budget.js decides as budget.go and capacity.go", func(t *testing.T) {
		b.T = t
		runJSCases(t, b, budgetPrelude, budgetCases)
	})

	t.Run("no CSP violations, page errors or dialogs", func(t *testing.T) {
		assert.Empty(t, b.Problems())
	})
}

// budgetCases run budget.js's and tiers.js's pure functions in the page
// (budgetPrelude's m, t, at and disks); each body returns what is compared
// with want. The figures are budget.go's, tiers.go's and capacity.go's
// rules worked by hand.
var budgetCases = []jsCase{
	{
		name: "the first ObjectStorage brings .rgw.root: 14 + 2 rules, 80×3 + 8×3 PG copies",
		body: `const subject = m.plannedConsumer('ObjectStorage', 'x', '', at('ObjectStorage', 3, 3));
const a = m.checkBudget({ others: [], subject, osds: 3 });
return { takes: a.takes, after: a.after, pgPerOSD: a.pgPerOSD, refusal: a.refusal };`,
		want: `{"takes": {"crushRules": 16, "pgCopies": 264}, "after": {"pools": 9, "crushRules": 17, "pgCopies": 267, "byClass": {"": 267}}, "pgPerOSD": 89, "refusal": null}`,
	},
	{
		name: "the 257th CRUSH rule is refused, with what is used and left",
		// 18 ObjectStorages: 252 rules, .mgr's 1 and .rgw.root's 2: 255.
		body: `const others = Array.from({ length: 18 }, (_, i) => m.existingConsumer('ObjectStorage', { metadata: { name: 'os-' + i }, status: { replicas: 1 } }, at('ObjectStorage', null, 3)));
const subject = m.plannedConsumer('ObjectStorage', 'x', '', at('ObjectStorage', 1, 3));
const a = m.checkBudget({ others, subject, osds: 1000 });
return { left: a.rulesLeft, refusal: a.refusal, refused: m.budgetSentences(subject, a).refused };`,
		want: `{"left": 0, "refusal": {"budget": "CRUSH rules", "reason": "it needs 14 CRUSH rules; 255 of Ceph's 256 are used, 1 left."},
"refused": "Ceph would refuse it: it needs 14 CRUSH rules; 255 of Ceph's 256 are used, 1 left. The plugin will report it Degraded (OverBudget) and create nothing."}`,
	},
	{
		name: "17 ObjectStorages leave room for one more",
		body: `const others = Array.from({ length: 17 }, (_, i) => m.existingConsumer('ObjectStorage', { metadata: { name: 'os-' + i }, status: { replicas: 1 } }, at('ObjectStorage', null, 3)));
const a = m.checkBudget({ others, subject: m.plannedConsumer('ObjectStorage', 'x', '', at('ObjectStorage', 1, 3)), osds: 1000 });
return { used: a.after.crushRules, refusal: a.refusal };`,
		want: `{"used": 255, "refusal": null}`,
	},
	{
		name: "an ObjectStorage of one copy on three nodes keeps its metadata pools and .rgw.root at three: 32×1 + 48×3 and 8×3",
		body: `const subject = m.plannedConsumer('ObjectStorage', 'x', '', at('ObjectStorage', 1, 3));
const a = m.checkBudget({ others: [], subject, osds: 3 });
return { use: subject.use, takes: a.takes };`,
		want: `{"use": {"pools": 7, "crushRules": 14, "pgCopies": 176, "byClass": {"": 176}}, "takes": {"crushRules": 16, "pgCopies": 200}}`,
	},
	{
		name: "an ObjectStorage's edit moves only its data pool: one rule more, not seven",
		body: `const self = m.existingConsumer('ObjectStorage', { metadata: { name: 'os' }, status: { replicas: 1, failureDomain: 'osd', cephBudget: { pools: 7, crushRules: 14, pgCopies: 176 } } }, at('ObjectStorage', null, 3));
const edited = m.editedConsumer(self, at('ObjectStorage', 3, 3));
return { use: edited.use, movesDomain: edited.movesDomain };`,
		want: `{"use": {"pools": 7, "crushRules": 15, "pgCopies": 240, "byClass": {"": 240}}, "movesDomain": true}`,
	},
	{
		name: "a fourth three-copy BlockStorage on three OSDs passes 250 once grown: made, with Ceph's warning (budget_test.go's case)",
		body: `const others = Array.from({ length: 3 }, (_, i) => m.existingConsumer('BlockStorage', { metadata: { name: 'bs-' + i }, status: { replicas: 3, cephBudget: { pools: 1, crushRules: 2, pgCopies: 96 } } }, at('BlockStorage', null, 3)));
const subject = m.plannedConsumer('BlockStorage', 'x', '', at('BlockStorage', 3, 3));
const a = m.checkBudget({ others, subject, osds: 3 });
return { now: a.pgPerOSD, grown: a.pgPerOSDGrown, refusal: a.refusal, warned: m.budgetSentences(subject, a).warned };`,
		want: `{"now": 129, "grown": 262, "refusal": null,
"warned": "Ceph will warn: placement groups would reach 129 per OSD over 3 OSDs (it adds 96 PG copies to 291), up to 262 once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (100); past 250 (mon_max_pg_per_osd) Ceph reports TOO_MANY_PGS (HEALTH_WARN) but makes the pools. The plugin makes it and says so in its CephWarning condition."}`,
	},
	{
		// budget_test.go's TestCheckBudget: AutoscalerGrowth(1, 100) = 134,
		// (2, 100) = 267, (3, 100) = 400.
		name: "the autoscaler's growth is budget.go's",
		body: `return [1, 2, 3].map((osds) => m.autoscalerGrowth(osds, m.CEPH_DEFAULT_TARGET_PG_PER_OSD));`,
		want: `[134, 267, 400]`,
	},
	{
		name: "with no OSD, placement groups are not checked",
		body: `const subject = m.plannedConsumer('BlockStorage', 'x', '', at('BlockStorage', 3, 3));
const a = m.checkBudget({ others: [], subject, osds: 0 });
return { pgPerOSD: a.pgPerOSD, refusal: a.refusal, pgs: m.budgetSentences(subject, a).pgs };`,
		want: `{"pgPerOSD": null, "refusal": null, "pgs": "Placement groups cannot be checked until disks are in the cluster: the CephCluster lists no device yet."}`,
	},
	{
		name: "a counted consumer over the limit is not refused by the plugin, Ceph would refuse the change",
		// From 1 copy on osd to 3 on host: a rule more per pool, 64×3 PG
		// copies; with the BlockStorage's 96 and .mgr's 3, 291 over 3 OSDs,
		// (291 + 400) / 3 = 230 once grown: past 60 × 3.
		body: `const self = m.existingConsumer('FileStorage', { metadata: { name: 'fs' }, status: { replicas: 1, failureDomain: 'osd', cephBudget: { pools: 2, crushRules: 4, pgCopies: 64 } } }, at('FileStorage', null, 3));
const block = m.existingConsumer('BlockStorage', { metadata: { name: 'bs' }, status: { replicas: 3, cephBudget: { pools: 1, crushRules: 2, pgCopies: 96 } } }, at('BlockStorage', null, 3));
const subject = m.editedConsumer(self, at('FileStorage', 3, 3));
const a = m.checkBudget({ others: [block], subject, current: self, osds: 3, maxPGsPerOSD: 60 });
return { use: subject.use, movesDomain: subject.movesDomain, today: a.pgPerOSDBefore, refused: m.budgetSentences(subject, a, { counted: true }).refused };`,
		want: `{"use": {"pools": 2, "crushRules": 6, "pgCopies": 192, "byClass": {"": 192}}, "movesDomain": true, "today": 54,
"refused": "Ceph would refuse it: placement groups would reach 97 per OSD over 3 OSDs (it adds 192 PG copies to 99), up to 230 once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (100); an OSD withholds PGs past 180 (mon_max_pg_per_osd 60 × osd_max_pg_per_osd_hard_ratio 3) and they stay inactive. The plugin keeps a consumer whose pools exist: Rook would make the change and Ceph would refuse it."}`,
	},
	{
		name: "a pool that has had no class holds at most 3 rules: a third move of domain makes none",
		body: `const self = m.existingConsumer('BlockStorage', { metadata: { name: 'bs' }, status: { replicas: 2, failureDomain: 'host', cephBudget: { pools: 1, crushRules: 3, pgCopies: 64 } } }, at('BlockStorage', null, 3));
return m.editedConsumer(self, at('BlockStorage', 1, 3)).use;`,
		want: `{"pools": 1, "crushRules": 3, "pgCopies": 32, "byClass": {"": 32}}`,
	},
	{
		name: "replicas are sized as the plugin sizes them",
		body: `return [m.effectiveReplicas(null, 5), m.effectiveReplicas(null, 2), m.effectiveReplicas(3, 2), m.effectiveReplicas(1, 2), m.effectiveReplicas(null, 0), m.effectiveReplicas(2, 0)];`,
		want: `[3, 2, 2, 1, 3, 2]`,
	},
	{
		name: "a consumer without cephBudget counts its kind at status.replicas, else at what its spec is sized to",
		body: `const none = t.tiersOf([]);
const spec = { replicas: 3 };
return [
  m.existingConsumer('FileStorage', { metadata: { name: 'a' }, status: { replicas: 3 } }, at('FileStorage', null, 2)).use,
  m.existingConsumer('FileStorage', { metadata: { name: 'b' }, spec: {} }, t.placementOf('FileStorage', {}, none, 2)).use,
  m.existingConsumer('FileStorage', { metadata: { name: 'c' }, spec }, t.placementOf('FileStorage', spec, none, 0)).use];`,
		want: `[{"pools": 2, "crushRules": 4, "pgCopies": 192, "byClass": {"": 192}}, {"pools": 2, "crushRules": 4, "pgCopies": 128, "byClass": {"": 128}},
{"pools": 2, "crushRules": 4, "pgCopies": 192, "byClass": {"": 192}}]`,
	},
	{
		// budget_test.go's TestCrushRulesPerPool and tiers_test.go's
		// TestCrushRulesPerPoolWithClasses.
		name: "crushRulesPerPool counts as budget.go's CrushRulesPerPool, classes included",
		body: `return [[], ['host'], ['osd', 'host'], ['osd', 'host', 'osd'], ['osd', 'host', 'osd', 'host'],
  ['host~ssd'], ['host~ssd', 'host~hdd'], ['host~ssd', 'host~hdd', 'host~ssd'], ['host', 'host~ssd'], ['osd~nvme', 'host~nvme']].map(m.crushRulesPerPool);`,
		want: `[2, 2, 3, 3, 3, 1, 2, 3, 3, 2]`,
	},
	{
		// hdd on 3 hosts, ssd on 2. A FileStorage on hdd: automatic is 3
		// copies across hosts, which ssd cannot keep, so its metadata stays
		// on hdd; at 2 copies ssd keeps them and is the faster. An object
		// store's metadata pools keep the automatic 3 on host: on hdd. A
		// class without disks places nothing, nor does one on fewer hosts
		// than the copies asked (3 on ssd's 2: refused, not clamped).
		name: "placementOf places as the plugin's Place, and kindCost counts 1 rule a pool made on a class",
		body: `const tiers = t.tiersOf(disks({ hdd: 3, ssd: 2 }));
const places = [
  t.placementOf('FileStorage', { deviceClass: 'hdd' }, tiers, 3),
  t.placementOf('FileStorage', { replicas: 2, deviceClass: 'hdd' }, tiers, 3),
  t.placementOf('ObjectStorage', { replicas: 1, deviceClass: 'ssd' }, tiers, 3),
  t.placementOf('BlockStorage', { deviceClass: 'nvme' }, tiers, 3),
  t.placementOf('BlockStorage', { replicas: 3, deviceClass: 'ssd' }, tiers, 3)];
return places.map((p, i) => ({ place: p, use: m.kindCost(['FileStorage', 'FileStorage', 'ObjectStorage', 'BlockStorage', 'BlockStorage'][i], p) }));`,
		want: `[
{"place": {"replicas": 3, "failureDomain": "host", "deviceClass": "hdd", "metadataReplicas": 3, "metadataClass": "hdd", "placed": true},
 "use": {"pools": 2, "crushRules": 2, "pgCopies": 192, "byClass": {"hdd": 192}}},
{"place": {"replicas": 2, "failureDomain": "host", "deviceClass": "hdd", "metadataReplicas": 2, "metadataClass": "ssd", "placed": true},
 "use": {"pools": 2, "crushRules": 2, "pgCopies": 128, "byClass": {"hdd": 64, "ssd": 64}}},
{"place": {"replicas": 1, "failureDomain": "osd", "deviceClass": "ssd", "metadataReplicas": 3, "metadataClass": "hdd", "placed": true},
 "use": {"pools": 7, "crushRules": 7, "pgCopies": 176, "byClass": {"ssd": 32, "hdd": 144}}},
{"place": {"replicas": 1, "failureDomain": "", "deviceClass": "nvme", "metadataReplicas": 1, "metadataClass": "nvme", "placed": false},
 "use": {"pools": 1, "crushRules": 2, "pgCopies": 32, "byClass": {"nvme": 32}}},
{"place": {"replicas": 1, "failureDomain": "", "deviceClass": "ssd", "metadataReplicas": 1, "metadataClass": "ssd", "placed": false},
 "use": {"pools": 1, "crushRules": 2, "pgCopies": 32, "byClass": {"ssd": 32}}}]`,
	},
	{
		name: "a measured budget's PG copies are its data pool's on its class and the rest on its metadata's",
		body: `return m.existingConsumer('FileStorage', { metadata: { name: 'fs' }, status: { replicas: 2, failureDomain: 'host', deviceClass: 'hdd', metadataDeviceClass: 'ssd',
  cephBudget: { pools: 2, crushRules: 2, pgCopies: 128 } } }, at('FileStorage', null, 3)).use;`,
		want: `{"pools": 2, "crushRules": 2, "pgCopies": 128, "byClass": {"hdd": 64, "ssd": 64}}`,
	},
	{
		// budget-cases.json's refusal on one ssd OSD, worded: over every
		// OSD it would be (643 + 1334) / 10 = 197, under even the warning.
		// One copy on a class is asked in so many words.
		name: "the refusal names the class's OSDs, where every OSD together would have had room",
		body: `const tiers = t.tiersOf(disks({ ssd: 1, hdd: 9 }));
const place = t.placementOf('BlockStorage', { replicas: 1, deviceClass: 'ssd' }, tiers, 3);
const others = Array.from({ length: 19 }, (_, i) => m.existingConsumer('BlockStorage', { metadata: { name: 'bs-' + i }, status: { replicas: 1, failureDomain: 'osd', deviceClass: 'ssd',
  cephBudget: { pools: 1, crushRules: 1, pgCopies: 32 } } }, place));
const subject = m.plannedConsumer('BlockStorage', 'x', '', place);
const a = m.checkBudget({ others, subject, osds: 10, tiers });
const words = m.budgetSentences(subject, a);
return { everyOSDGrown: Math.floor((a.after.pgCopies + m.autoscalerGrowth(10, 100)) / 10), rules: words.rules, pgs: words.pgs, refused: words.refused };`,
		want: `{"everyOSDGrown": 197, "rules": "This BlockStorage uses 1 of Ceph's 256 CRUSH rules; 20 used, 235 left after it.",
"pgs": "Placement groups: 640 copies per OSD over 1 ssd OSD after it, up to 774 once Ceph's autoscaler grows the pools; Ceph warns past 250 (mon_max_pg_per_osd) and an OSD takes at most 750.",
"refused": "Ceph would refuse it: placement groups would reach 640 per OSD over 1 ssd OSD (it adds 32 PG copies to 611), up to 774 once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (100); an OSD withholds PGs past 750 (mon_max_pg_per_osd 250 × osd_max_pg_per_osd_hard_ratio 3) and they stay inactive. The plugin will report it Degraded (OverBudget) and create nothing."}`,
	},
	{
		// From every OSD to ssd at the same 2 copies on host: each pool
		// moves to a rule of the class (its automatic metadata too, ssd
		// keeping the data's copies); no domain moves. An object store's 6
		// metadata pools follow the class the stores share.
		name: "an edit onto a class counts a rule for each pool that moves, and its PG copies on the class",
		body: `const tiers = t.tiersOf(disks({ hdd: 3, ssd: 2 }));
const fs = m.existingConsumer('FileStorage', { metadata: { name: 'fs' }, status: { replicas: 2, failureDomain: 'host', cephBudget: { pools: 2, crushRules: 4, pgCopies: 128 } } },
  t.placementOf('FileStorage', { replicas: 2 }, tiers, 3));
const os = m.existingConsumer('ObjectStorage', { metadata: { name: 'os' }, status: { replicas: 3, failureDomain: 'host', cephBudget: { pools: 7, crushRules: 14, pgCopies: 240 } } },
  t.placementOf('ObjectStorage', {}, tiers, 3));
const fsEdit = m.editedConsumer(fs, t.placementOf('FileStorage', { replicas: 2, deviceClass: 'ssd' }, tiers, 3));
const osEdit = m.editedConsumer(os, t.placementOf('ObjectStorage', { deviceClass: 'hdd' }, tiers, 3));
return [fsEdit, osEdit].map((e) => ({ use: e.use, movesDomain: e.movesDomain, metadataPlacements: e.metadataPlacements }));`,
		want: `[{"use": {"pools": 2, "crushRules": 6, "pgCopies": 128, "byClass": {"ssd": 128}}, "movesDomain": false, "metadataPlacements": ["", "~ssd"]},
{"use": {"pools": 7, "crushRules": 21, "pgCopies": 240, "byClass": {"hdd": 240}}, "movesDomain": false, "metadataPlacements": ["", "~hdd"]}]`,
	},
	{
		name: "before Ceph reports, raw is the fed DiskPools' rawCapacity, at Ceph's default full ratio",
		body: `const ref = { namespace: 'rook-ceph', name: 'rook-ceph' };
const pools = [{ status: { rawCapacity: '1Ti', cephCluster: ref } }, { status: { rawCapacity: '3Ti', cephCluster: ref } },
  { status: { rawCapacity: '8Ti', cephCluster: { namespace: 'x', name: 'y' } } }, { status: {} }];
const cluster = { spec: { storage: { nodes: [{ name: 'n1', devices: [{ name: 'a' }, { name: 'b' }] }, { name: 'n2', devices: [] }] } }, status: {} };
const raw = m.rawCapacity(cluster, pools, ref);
const ratio = m.fullRatio(cluster);
return { raw, ratio, devices: m.clusterDevices(cluster), usable: m.usableBytes(raw.bytes, ratio, 2), sentence: m.usableSentence(raw.bytes, ratio, 2) };`,
		want: fmt.Sprintf(`{"raw": {"bytes": %d, "source": "Disks"}, "ratio": 0.95, "devices": {"osds": 2, "nodes": 1}, "usable": %d,
"sentence": "Usable: 1.9 TiB of 4.0 TiB raw (2 copies, Ceph stops writes at 95%% full)"}`, int64(4<<40), int64(math.Floor(float64(4<<40)*0.95/2))),
	},
}
