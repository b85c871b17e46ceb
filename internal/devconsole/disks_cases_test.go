package devconsole_test

// diskFilterCases run disk-filter.js's pure functions in the page (m is the
// module; disks(), facts() and entries() build the inventory below); each
// body returns what is compared with want.
//
//	a1 node-10 /dev/sdb  4Ti   hdd  Available                 ST4000 SER-A1
//	a2 node-2  /dev/sdc  2Ti   ssd  InUse    claimed by p1     PM883  SER-A2
//	a3 node-2  /dev/sdb  500Gi nvme Missing  "gone since boot" 7450   SER-A3
//	a4 node-2  /dev/sdd  1Ti   SSD  Available claimed by p2    PM883  SER-A4
//	a5 node-3  /dev/sdb  8Ti   hdd  Available retired          ST8000 SER-A5
//	a6 ""      (nothing discovery said yet)
var diskFilterCases = []jsCase{
	{
		name: "types are read in any case and named as people write them",
		body: `return [m.diskType('hdd'), m.diskType('SSD'), m.diskType('nvme'), m.diskType('floppy'), m.diskType(undefined)];`,
		want: `["HDD", "SSD", "NVMe", "", ""]`,
	},
	{
		name: "sizes are read in binary and decimal units, empty is no bound, the rest is not a size",
		body: `const v = ['4Ti', '4 TiB', '500G', '1.5tb', '2TB', '512', '', ' '].map(m.parseSize);
return { v, bad: ['huge', '4 XB', '-1Ti', '1,5T'].map((s) => Number.isNaN(m.parseSize(s))) };`,
		want: `{"v": [4398046511104, 4398046511104, 500000000000, 1500000000000, 2000000000000, 512, null, null], "bad": [true, true, true, true]}`,
	},
	{
		name: "each filter narrows on its own field",
		body: filterFixture + `const names = (f) => m.filterDisks(facts(), f).map((d) => d.name);
return {
  none: names({}), node: names({ nodes: ['node-2'] }), twoNodes: names({ nodes: ['node-10', ''] }),
  type: names({ type: 'SSD' }), state: names({ state: 'Missing' }), inUse: names({ state: 'InUse' }),
  min: names({ minBytes: m.parseSize('2Ti') }), max: names({ maxBytes: m.parseSize('1Ti') }), range: names({ minBytes: m.parseSize('1Ti'), maxBytes: m.parseSize('4Ti') }),
  pool: names({ pool: 'p1' }), unclaimed: names({ pool: m.UNCLAIMED }),
  all: names({ nodes: ['node-2'], type: 'SSD', state: 'Available', pool: 'p2', minBytes: 1, search: 'pm883' }),
};`,
		want: `{"none": ["a1","a2","a3","a4","a5","a6"], "node": ["a2","a3","a4"], "twoNodes": ["a1","a6"],
"type": ["a2","a4"], "state": ["a3"], "inUse": ["a2"],
"min": ["a1","a2","a5"], "max": ["a3","a4"], "range": ["a1","a2","a4"],
"pool": ["a2"], "unclaimed": ["a1","a3","a5","a6"], "all": ["a4"]}`,
	},
	{
		name: "search finds every word, ignoring case, in name, path, stable path, model and serial — nothing else",
		body: filterFixture + `const names = (q) => m.filterDisks(facts(), { search: q }).map((d) => d.name);
return [names('A3'), names('/dev/sdb'), names('wwn-a4'), names('st8000'), names('ser-a2'), names('pm883 sdd'), names('node-2'), names('since boot'), names('  ')];`,
		want: `[["a3"], ["a1","a3","a5"], ["a4"], ["a5"], ["a2"], ["a4"], [], [], ["a1","a2","a3","a4","a5","a6"]]`,
	},
	{
		name: "groups are nodes in natural order, no node first, disks in lsblk order, with counts",
		body: filterFixture + `return m.groupByNode(facts(), new Set(['a1', 'a4'])).map((g) => ({ node: g.node, disks: g.disks.map((d) => d.name), counts: g.counts, bytes: g.bytes }));`,
		want: `[{"node": "", "disks": ["a6"], "counts": {"disks": 1, "Available": 0, "InUse": 0, "Missing": 0, "pickable": 1, "selected": 0}, "bytes": 0},
{"node": "node-2", "disks": ["a3","a2","a4"], "counts": {"disks": 3, "Available": 1, "InUse": 1, "Missing": 1, "pickable": 3, "selected": 1}, "bytes": 3835405795328},
{"node": "node-3", "disks": ["a5"], "counts": {"disks": 1, "Available": 1, "InUse": 0, "Missing": 0, "pickable": 1, "selected": 0}, "bytes": 8796093022208},
{"node": "node-10", "disks": ["a1"], "counts": {"disks": 1, "Available": 1, "InUse": 0, "Missing": 0, "pickable": 1, "selected": 1}, "bytes": 4398046511104}]`,
	},
	{
		name: "the picker offers only free available disks; another pool's is held by it; the pool's own stay pickable",
		body: filterFixture + `const show = (pool, saved) => Object.fromEntries([...entries(pool, saved).values()].map((e) => [e.name, [e.pickable, e.held, e.note]]));
return { create: show('', []), editP2: show('p2', ['a4', 'a2', 'gone']) };`,
		want: `{"create": {
  "a1": [true, "", ""],
  "a2": [false, "p1", "Claimed by pool p1: a disk serves one pool."],
  "a3": [false, "", "gone since boot"],
  "a4": [false, "p2", "Claimed by pool p2: a disk serves one pool."],
  "a5": [false, "", "Retired: wipe it and remove the annotation ceph.fundament.io/retired first."],
  "a6": [false, "", "Not available (unknown state)"]},
"editP2": {
  "a1": [true, "", ""],
  "a2": [true, "p1", "Claimed by the older pool p1; kept in this pool's list, but not used by it."],
  "a3": [false, "", "gone since boot"],
  "a4": [true, "", ""],
  "a5": [false, "", "Retired: wipe it and remove the annotation ceph.fundament.io/retired first."],
  "a6": [false, "", "Not available (unknown state)"],
  "gone": [true, "", "No such disk in the inventory any more; kept in this pool's list."]}}`,
	},
	{
		name: "selecting adds only what can be picked; deselecting removes; a group is none, some or all",
		body: filterFixture + `const list = [...entries('', []).values()];
const picked = m.selectAll(new Set(['a2']), list);
const node2 = list.filter((e) => e.node === 'node-2');
return { picked: [...picked].sort(), dropped: [...m.deselectAll(picked, node2)].sort(),
  states: [m.selectionState(new Set(), list), m.selectionState(new Set(['a1']), list), m.selectionState(new Set(['a1']), list.filter((e) => e.name === 'a1')), m.selectionState(new Set(['a1']), node2)] };`,
		want: `{"picked": ["a1","a2"], "dropped": ["a1"], "states": ["none", "all", "all", "none"]}`,
	},
	{
		name: "the summary sizes replication on the cluster's nodes: every other pool's and this selection's",
		// Creating: p1 holds node-2 (a2), p2 holds node-2 (a4); picking a1
		// (node-10) makes 2 cluster nodes. Editing p2 with a4 and a1: p1's
		// node-2 and the selection's node-10 and node-2; a2 (p1's, listed by
		// p2) counts for p1; the gone name is counted as not in the
		// inventory. The retired a5 adds no node.
		body: filterFixture + `const words = (s) => m.summarySentences(s, (b) => b + ' B');
const create = m.summarizeSelection(entries('', []), new Set(['a1']), '');
const edit = m.summarizeSelection(entries('p2', ['a4', 'a2', 'gone']), new Set(['a4', 'a2', 'gone', 'a1']), 'p2');
const none = m.summarizeSelection(new Map(), new Set(), '');
const one = m.summarizeSelection(entries('', []), new Set(['a5']), '');
return { create, edit, createWords: words(create), editWords: words(edit), none: words(none), retiredOnly: words(one).replication };`,
		want: `{
"create": {"disks": 1, "nodes": 1, "rawBytes": 4398046511104, "unknownSize": 0, "byType": {"HDD": 1, "SSD": 0, "NVMe": 0, "unknown": 0}, "notInInventory": 0, "heldElsewhere": 0, "clusterNodes": 2, "replicas": 2, "failureDomain": "host"},
"edit": {"disks": 4, "nodes": 2, "rawBytes": 5497558138880, "unknownSize": 0, "byType": {"HDD": 1, "SSD": 1, "NVMe": 0, "unknown": 0}, "notInInventory": 1, "heldElsewhere": 1, "clusterNodes": 2, "replicas": 2, "failureDomain": "host"},
"createWords": {"selection": "1 disk selected on 1 node, 4398046511104 B raw (1 HDD).",
  "replication": "Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span 2 nodes, so storage kinds on automatic replication keep 2 copies, one per node (failure domain host), and an explicit 3 replicas is clamped to 2."},
"editWords": {"selection": "4 disks selected on 2 nodes, 5497558138880 B raw (1 HDD, 1 SSD). Of these, 1 disk another pool holds counts there, not here; 1 listed disk is not in the inventory.",
  "replication": "Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span 2 nodes, so storage kinds on automatic replication keep 2 copies, one per node (failure domain host), and an explicit 3 replicas is clamped to 2."},
"none": {"selection": "No disks selected.", "replication": "No pool would give Ceph a disk: storage kinds cannot provision until one does."},
"retiredOnly": "Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span 1 node, so storage kinds on automatic replication keep 1 copy (failure domain osd: losing the node loses the data), and an explicit 2 or 3 replicas is clamped to 1."}`,
	},
	{
		name: "one node gives one copy on the osd domain; three or more give three on hosts",
		body: `const words = (n) => m.summarySentences({ disks: 1, nodes: 1, rawBytes: 1, unknownSize: 0, byType: { HDD: 1, SSD: 0, NVMe: 0 }, notInInventory: 0, heldElsewhere: 0,
  clusterNodes: n, replicas: Math.min(3, n), failureDomain: n >= 2 ? 'host' : 'osd' }, String).replication;
return [words(1), words(5)];`,
		want: `["Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span 1 node, so storage kinds on automatic replication keep 1 copy (failure domain osd: losing the node loses the data), and an explicit 2 or 3 replicas is clamped to 1.",
"Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span 5 nodes, so storage kinds on automatic replication keep 3 copies, one per node (failure domain host)."]`,
	},
}

// filterFixture defines disks(), facts() and entries(pool, saved) for the
// diskFilterCases (see the table above them).
const filterFixture = `
const disk = (name, node, path, size, type, state, extra = {}) => ({
  metadata: { name, resourceVersion: '1', annotations: extra.retired ? { 'ceph.fundament.io/retired': 'osd.1' } : undefined },
  status: node === undefined ? undefined : { nodeName: node, path, stablePath: '/dev/disk/by-id/wwn-' + name, size, type, state,
    claimedBy: extra.claimedBy, reason: extra.reason, model: extra.model, serial: 'SER-' + name.toUpperCase() } });
const disks = () => [
  disk('a1', 'node-10', '/dev/sdb', '4Ti', 'hdd', 'Available', { model: 'ST4000' }),
  disk('a2', 'node-2', '/dev/sdc', '2Ti', 'ssd', 'InUse', { claimedBy: 'p1', model: 'PM883' }),
  disk('a3', 'node-2', '/dev/sdb', '500Gi', 'nvme', 'Missing', { reason: 'gone since boot', model: '7450' }),
  disk('a4', 'node-2', '/dev/sdd', '1Ti', 'SSD', 'Available', { claimedBy: 'p2', model: 'PM883' }),
  disk('a5', 'node-3', '/dev/sdb', '8Ti', 'hdd', 'Available', { model: 'ST8000', retired: true }),
  disk('a6'),
];
const facts = () => disks().map(m.diskFacts);
const entries = (pool, saved) => {
  const s = new Set(saved);
  const out = new Map(facts().map((f) => [f.name, m.pickerEntry(f, pool, s)]));
  for (const name of saved) if (!out.has(name)) out.set(name, m.pickerEntry(m.goneFacts(name), pool, s));
  return out;
};
`

// liveHarness gives liveCases obj(name, rv), record (what follow
// reported), a scripted list and watch, and run(script), which follows
// until the script's last step stops it. Each list step is the pages a
// list returns ({pages, rv} or {fail: status}); each watch step is the
// events a watch sends, then how it ends ({events, end: 'ok'|status}).
// A watch past the script stops the feed.
const liveHarness = `
const obj = (name, rv) => ({ metadata: { name, resourceVersion: String(rv) } });
const run = (script) => new Promise((resolve) => {
  const record = { batches: [], errors: [], lists: 0, watches: [] };
  let lists = 0;
  let watches = 0;
  let feed = null;
  const finish = () => { feed.stop(); resolve(record); };
  feed = m.follow({
    batchMs: 1, backoff: { initialMs: 2, maxMs: 8, jitter: 0 },
    list: async ({ onPage }) => {
      const step = script.lists[lists++];
      record.lists = lists;
      if (!step) { finish(); return new Promise(() => {}); }
      if (step.fail) throw Object.assign(new Error('list failed'), { status: step.fail });
      let loaded = 0;
      step.pages.forEach((items, i) => { loaded += items.length; onPage({ items, loaded, about: step.about === undefined ? null : step.about, done: i === step.pages.length - 1 }); });
      return { resourceVersion: step.rv };
    },
    watch: (opts) => {
      const step = script.watches[watches++];
      record.watches.push(opts.resourceVersion);
      if (!step) { setTimeout(finish, 10); return { done: new Promise(() => {}), stop() {} }; }
      const done = (async () => {
        await null;
        opts.onOpen();
        for (const [type, o] of step.events || []) opts.onEvent(type, o);
        if (step.end !== 'ok') throw Object.assign(new Error('watch failed ' + step.end), { status: step.end });
        return {};
      })();
      return { done, stop() {} };
    },
    onChange: (b) => record.batches.push({ phase: b.phase, up: b.upserted.map((o) => o.metadata.name + '@' + o.metadata.resourceVersion),
      del: b.deleted.map((o) => o.metadata.name), items: [...b.items.keys()].sort(), progress: b.progress }),
    onError: (err, info) => record.errors.push({ message: err.message, relist: info.relist, retrying: info.retryIn > 0 }),
    onLive: () => record.batches.push({ phase: 'live' }),
  });
});
`

// liveCases drive live.js's follow() against a scripted list and watch.
var liveCases = []jsCase{
	{
		name: "pages are reported as they come, then watch events, gathered; a watch that ends goes on from the last bookmark",
		body: `return run({
  lists: [{ pages: [[obj('a', 1), obj('b', 1)], [obj('c', 1)]], about: 3, rv: '10' }],
  watches: [{ events: [['MODIFIED', obj('a', 11)], ['DELETED', obj('c', 12)], ['ADDED', obj('d', 13)], ['BOOKMARK', obj('', 20)]], end: 'ok' }],
});`,
		want: `{"batches": [
  {"phase": "listing", "up": ["a@1","b@1"], "del": [], "items": ["a","b"], "progress": {"loaded": 2, "about": 3, "done": false, "relist": false}},
  {"phase": "listed", "up": ["c@1"], "del": [], "items": ["a","b","c"], "progress": {"loaded": 3, "about": 3, "done": true, "relist": false}},
  {"phase": "live"},
  {"phase": "watching", "up": ["a@11","d@13"], "del": ["c"], "items": ["a","b","d"], "progress": {"loaded": 3, "about": 3, "done": true, "relist": false}}],
"errors": [], "lists": 1, "watches": ["10", "20"]}`,
	},
	{
		name: "a watch told 410 lists again, and reports only what changed meanwhile, deletions included",
		body: `return run({
  lists: [{ pages: [[obj('a', 1), obj('b', 1)]], rv: '10' }, { pages: [[obj('a', 1), obj('e', 30)]], rv: '31' }],
  watches: [{ end: 410 }, { end: 'ok' }],
});`,
		want: `{"batches": [
  {"phase": "listed", "up": ["a@1","b@1"], "del": [], "items": ["a","b"], "progress": {"loaded": 2, "about": null, "done": true, "relist": false}},
  {"phase": "live"},
  {"phase": "listed", "up": ["e@30"], "del": ["b"], "items": ["a","e"], "progress": {"loaded": 2, "about": null, "done": true, "relist": true}},
  {"phase": "live"}],
"errors": [{"message": "watch failed 410", "relist": true, "retrying": false}], "lists": 2, "watches": ["10", "31", "31"]}`,
	},
	{
		name: "a failed watch is tried again after a pause, from the last resourceVersion it saw",
		body: `return run({
  lists: [{ pages: [[obj('a', 1)]], rv: '10' }],
  watches: [{ events: [['MODIFIED', obj('a', 15)]], end: 500 }, { end: 'ok' }],
});`,
		want: `{"batches": [
  {"phase": "listed", "up": ["a@1"], "del": [], "items": ["a"], "progress": {"loaded": 1, "about": null, "done": true, "relist": false}},
  {"phase": "live"},
  {"phase": "watching", "up": ["a@15"], "del": [], "items": ["a"], "progress": {"loaded": 1, "about": null, "done": true, "relist": false}},
  {"phase": "live"}],
"errors": [{"message": "watch failed 500", "relist": false, "retrying": true}], "lists": 1, "watches": ["10", "15", "15"]}`,
	},
	{
		name: "a list that fails is tried again after a pause",
		body: `return run({
  lists: [{ fail: 503 }, { pages: [[obj('a', 1)]], rv: '10' }],
  watches: [],
});`,
		want: `{"batches": [
  {"phase": "listed", "up": ["a@1"], "del": [], "items": ["a"], "progress": {"loaded": 1, "about": null, "done": true, "relist": false}}],
"errors": [{"message": "list failed", "relist": true, "retrying": true}], "lists": 2, "watches": ["10"]}`,
	},
	{
		name: "what a list says while it loads, and what counts as gone",
		body: `return [m.loadingSentence('disks', { loaded: 3500, about: 10000 }), m.loadingSentence('disks', { loaded: 500, about: null }),
  m.isGone({ status: 410 }), m.isGone({ reason: 'Expired' }), m.isGone({ status: 500 }), m.isGone(null)];`,
		want: `["Loading disks: 3,500 of about 10,000", "Loading disks: 500 so far", true, true, false, false]`,
	},
}
