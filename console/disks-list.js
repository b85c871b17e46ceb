// Disk list: the discovered block devices, grouped by node so an operator can
// match them against lsblk on that machine.
//
// Built for 500 nodes of 20 disks: the disks arrive in pages of 500 and the
// first page is drawn as soon as it is there; a watch then keeps the page
// current, redrawing only the groups and rows whose disks changed. Groups
// start collapsed (disk-groups.js), so 10,000 rows are never in the DOM at
// once.
//
// Benchmark hooks (the lead's browser benchmark reads them):
// performance.mark('ceph-rook:disks:first-rows') once the first page's
// groups are in the DOM; performance.mark('ceph-rook:disks:complete') once
// every page is loaded and drawn, and then #app's data-loaded is
// "complete". The list's root (data-role="disk-list") counts filter
// applications in data-filter-generation.
import {
  RESOURCES, h, mount, heading, hint, badge, link, formatBytes, navigateToDetail, startPage, button, oncePerFrame,
} from './_shared.js';
import { k8s, follow, loadingSentence, followProblem } from './live.js';
import { diskFacts, compileFilter, groupByNode, nodeNames, poolNames, formatCount } from './disk-filter.js';
import { filterBar, groupedDisks, groupCounts, truncated } from './disk-groups.js';

export const FIRST_ROWS_MARK = 'ceph-rook:disks:first-rows';
export const COMPLETE_MARK = 'ceph-rook:disks:complete';

// LISTING_DRAW_MS is how often the groups are drawn while pages arrive.
const LISTING_DRAW_MS = 250;

// The page keeps itself current; a write in a sheet needs no render again.
let shown = false;
startPage(async (root) => {
  if (shown) return;
  shown = true;
  showDisks(root);
});

const COLUMNS = [
  { label: 'Name', className: 'cr-col-name' },
  { label: 'Path', className: 'cr-col-path' },
  { label: 'Stable path', className: 'cr-col-stable' },
  { label: 'Size', className: 'cr-col-size' },
  { label: 'Type', className: 'cr-col-type' },
  { label: 'State', className: 'cr-col-state' },
  { label: 'Claimed by', className: 'cr-col-pool' },
];

function showDisks(root) {
  const facts = new Map();
  const progress = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'load-progress', 'aria-live': 'polite' }, text: 'Loading disks…' });
  const problem = h('div', { attrs: { 'data-role': 'live-problem' } });
  const matchCount = h('p', { class: 'plugin-text', attrs: { 'data-role': 'match-count' } });
  const groups = groupedDisks({
    columns: COLUMNS, row: diskRow, signature: (f) => f.resourceVersion, counts: (g) => groupCounts(g),
    emptyText: 'No disks discovered yet.',
  });
  let filterGeneration = 0;
  const container = h('div', { class: 'cr-disks', attrs: { 'data-role': 'disk-list', 'data-filter-generation': '0' } });
  const filters = filterBar({
    onChange: () => {
      groups.filterChanged();
      draw();
      filterGeneration += 1;
      container.dataset.filterGeneration = String(filterGeneration);
    },
  });
  container.append(
    filters.element,
    h('div', { class: 'plugin-actions' },
      button('Expand all', () => groups.expandAll(), { secondary: true, name: 'expand-all' }),
      button('Collapse all', () => groups.collapseAll(), { secondary: true, name: 'collapse-all' })),
    matchCount,
    groups.element);
  mount(root,
    heading('Disks', 1),
    hint('Block devices Rook discovered on the cluster nodes. Select them into a disk pool to turn them into OSDs.'),
    progress, problem, container);

  function draw() {
    const all = [...facts.values()];
    filters.setChoices({ nodes: nodeNames(all), pools: poolNames(all) });
    const visible = all.filter(compileFilter(filters.read()));
    const grouped = groupByNode(visible);
    groups.update(grouped, visible.length);
    matchCount.textContent = visible.length === all.length
      ? `${formatCount(all.length)} ${all.length === 1 ? 'disk' : 'disks'} on ${formatCount(grouped.length)} ${grouped.length === 1 ? 'node' : 'nodes'}.`
      : `Showing ${formatCount(visible.length)} of ${formatCount(all.length)} disks, on ${formatCount(grouped.length)} ${grouped.length === 1 ? 'node' : 'nodes'}.`;
  }

  // Watch events come in bursts (discovery rescans a node); one draw a frame.
  const drawSoon = oncePerFrame(draw);

  // While the list comes in, the groups are drawn again at most every
  // LISTING_DRAW_MS, off the page's arrival: each draw filters and groups
  // everything so far, so one a page would grow with the square of the
  // pages, and the next page's request would wait for it.
  let listingDraw = null;
  const drawWhileListing = () => {
    if (listingDraw === null) listingDraw = setTimeout(() => { listingDraw = null; draw(); }, LISTING_DRAW_MS);
  };

  let firstRows = false;
  let complete = false;
  follow({
    list: (opts) => k8s.list(RESOURCES.disks, opts),
    watch: (opts) => k8s.watch(RESOURCES.disks, opts),
    onChange: (batch) => {
      for (const obj of batch.deleted) facts.delete(obj.metadata.name);
      for (const obj of batch.upserted) facts.set(obj.metadata.name, diskFacts(obj));
      if (batch.phase === 'watching' || complete) {
        drawSoon();
        return;
      }
      problem.replaceChildren();
      const listing = batch.phase === 'listing';
      if (listing) progress.textContent = loadingSentence('disks', batch.progress);
      if (listing && firstRows) {
        drawWhileListing();
        return;
      }
      clearTimeout(listingDraw);
      listingDraw = null;
      draw();
      if (!firstRows) {
        firstRows = true;
        performance.mark(FIRST_ROWS_MARK);
      }
      if (listing) return;
      complete = true;
      progress.textContent = 'Kept up to date as discovery reports changes.';
      performance.mark(COMPLETE_MARK);
      root.dataset.loaded = 'complete';
    },
    onError: (err, info) => problem.replaceChildren(followProblem(err, info, { listed: complete, noun: 'disks' })),
    onLive: () => problem.replaceChildren(),
  });
}

function diskRow(f) {
  const name = link(f.name, () => navigateToDetail('Disk', f.name));
  name.classList.add('cr-truncate');
  name.title = f.name;
  return h('tr', { attrs: { 'data-row': f.name } },
    h('td', {}, name),
    h('td', {}, truncated(f.path)),
    h('td', {}, truncated(f.stablePath)),
    h('td', { text: f.sizeBytes ? formatBytes(f.sizeBytes) : '—' }),
    h('td', { text: f.type || '—' }),
    h('td', {}, stateCell(f)),
    h('td', {}, truncated(f.claimedBy)));
}

// stateCell shows the state in words (the badge's symbol and text) and why.
function stateCell(f) {
  return h('span', { class: 'cr-state' }, badge(f.state), f.reason ? h('span', { class: 'plugin-hint cr-reason', attrs: { 'data-reason': 'true' }, text: ` ${f.reason}` }) : null);
}
