// Live lists: read a collection in pages and then follow it with a watch,
// so a page showing 10,000 Disks renders the first 500 at once and stays
// current without listing again.
//
// The SDK's k8s.list reads a collection in one response and cannot watch,
// so this module reads the kube-api-proxy itself, through the SDK's fetch
// (which adds the token and refreshes it on a 401), on the URL shape the
// host contract gives (spec/console-host.md):
//
//   list:  {kubeApiProxyUrl}/clusters/{id}/apis/{group}/{version}/{resource}?limit=500&continue=…
//   watch: …/{resource}?watch=1&resourceVersion=…&allowWatchBookmarks=true&timeoutSeconds=25
//
// Pages call it as they call the SDK, naming a RESOURCES entry, so
// definition_test.go reads the verbs they use off the source:
//
//   import { k8s, follow } from './live.js';
//   const feed = follow({
//     list: (opts) => k8s.list(RESOURCES.disks, opts),
//     watch: (opts) => k8s.watch(RESOURCES.disks, opts),
//     onChange: (batch) => { ... batch.upserted, batch.deleted, batch.items ... },
//   });
//   ...
//   feed.stop();
//
// This is the one console module that calls the SDK's fetch, and the only
// one that calls fetch at all, as definition_test.go checks; every
// request it makes is a list or a watch of the resource its caller names.
import { sdk, errorBox } from './_shared.js';

// PAGE_SIZE is how many objects one list request asks for.
export const PAGE_SIZE = 500;

// WATCH_SECONDS is how long one watch request lasts before the API server
// ends it and follow() reconnects from the last resourceVersion (a
// bookmark keeps that fresh). It stays under the SDK's 30 s fetch timeout,
// so a host whose timeout covers the whole response ends no watch by
// aborting it.
export const WATCH_SECONDS = 25;

// k8s are the two reads a live page makes, named as the SDK names its
// calls. list(resource, {limit, fieldSelector, onPage}) reads every page
// and resolves to {items, resourceVersion}; onPage({items, loaded, about,
// done, resourceVersion}) sees each page as it arrives (about is the
// API server's estimate of the total, from metadata.remainingItemCount,
// or null). watch(resource, {resourceVersion, fieldSelector, onEvent})
// returns {done, stop}: onEvent(type, object) for every event (ADDED,
// MODIFIED, DELETED, BOOKMARK), onOpen() once the API server accepted the
// watch, done resolves when the API server ends the watch and rejects on an
// error (status 410 when the resourceVersion is too old to watch from: list
// again), stop() ends it.
export const k8s = { list: listPages, watch: watchStream };

async function collectionURL(resource, query) {
  const ctx = await sdk().init;
  let url = `${ctx.kubeApiProxyUrl.replace(/\/+$/, '')}/clusters/${encodeURIComponent(ctx.clusterId)}`;
  url += resource.group ? `/apis/${encodeURIComponent(resource.group)}/${encodeURIComponent(resource.version)}` : `/api/${encodeURIComponent(resource.version)}`;
  if (resource.namespace) url += `/namespaces/${encodeURIComponent(resource.namespace)}`;
  url += `/${encodeURIComponent(resource.resource)}`;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  return `${url}?${params}`;
}

// apiError is an SdkError-shaped error from a Kubernetes Status (a failed
// response's body, or a watch's ERROR event).
function apiError(status, httpStatus) {
  const code = httpStatus || (status && status.code) || 0;
  const message = (status && status.message) || `HTTP ${code}`;
  const err = new Error(message);
  err.name = 'SdkError';
  err.code = code === 401 ? 'unauthorized' : code === 403 ? 'forbidden' : 'http';
  err.status = code;
  err.reason = status && status.reason;
  return err;
}

async function failure(response) {
  let status = null;
  try { status = await response.json(); } catch (e) { status = null; }
  return apiError(status, response.status);
}

async function listPages(resource, { limit = PAGE_SIZE, fieldSelector, labelSelector, onPage } = {}) {
  const items = [];
  let token = '';
  for (;;) {
    const url = await collectionURL(resource, { limit, continue: token, fieldSelector, labelSelector });
    const response = await sdk().fetch(url, { headers: { Accept: 'application/json' } });
    if (!response.ok) throw await failure(response);
    const page = await response.json();
    const meta = page.metadata || {};
    const pageItems = page.items || [];
    items.push(...pageItems);
    token = meta.continue || '';
    const remaining = typeof meta.remainingItemCount === 'number' ? meta.remainingItemCount : null;
    const done = !token;
    const report = {
      items: pageItems, loaded: items.length, about: done ? items.length : (remaining === null ? null : items.length + remaining),
      done, resourceVersion: meta.resourceVersion,
    };
    if (onPage) onPage(report);
    if (done) return { items, resourceVersion: meta.resourceVersion };
  }
}

function watchStream(resource, { resourceVersion, fieldSelector, labelSelector, onEvent, onOpen, timeoutSeconds = WATCH_SECONDS } = {}) {
  let reader = null;
  let stopped = false;
  const done = (async () => {
    const url = await collectionURL(resource, {
      watch: 1, resourceVersion, allowWatchBookmarks: true, timeoutSeconds, fieldSelector, labelSelector,
    });
    const response = await sdk().fetch(url, { headers: { Accept: 'application/json' } });
    if (!response.ok) throw await failure(response);
    reader = response.body.getReader();
    if (stopped) { reader.cancel().catch(() => {}); return { stopped: true }; }
    if (onOpen) onOpen();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { value, done: ended } = await reader.read();
      if (ended || stopped) break;
      buffered += decoder.decode(value, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop();
      for (const line of lines) {
        if (!line.trim()) continue;
        const event = JSON.parse(line);
        if (event.type === 'ERROR') throw apiError(event.object);
        if (onEvent) onEvent(event.type, event.object);
      }
    }
    return { stopped };
  })();
  const stop = () => {
    stopped = true;
    if (reader) reader.cancel().catch(() => {});
  };
  return { done, stop };
}

// isGone says an error means "list again": the resourceVersion (or a
// list's continue token) is older than the API server keeps.
export function isGone(err) {
  return Boolean(err) && (err.status === 410 || err.reason === 'Expired' || err.reason === 'Gone');
}

// follow keeps a collection current: it lists (in pages), then watches
// from the list's resourceVersion, reconnecting when a watch ends or fails
// (after a failure with backoff: 1 s doubling to 30 s, reset once a watch
// worked) and listing again when the API server says the resourceVersion
// is gone (410); a list again is compared with what was known, so only
// what changed is reported.
//
// onChange(batch) is told what changed: batch.upserted (objects added or
// changed, by resourceVersion), batch.deleted (objects gone),
// batch.items (a Map of every object by name, current), batch.phase
// ('listing' while pages arrive, 'listed' once with the last page and
// whatever a list again found deleted, 'watching' for watch events, which
// are gathered for batchMs) and batch.progress ({loaded, about, done,
// relist} of the current list). onError(err, {retryIn, relist}) is told of
// each failure and what follow does about it; onLive() each time a watch
// is established, so a page can take back what it said about a failure.
// Returns {items, stop}.
export function follow({
  list, watch, onChange, onError = () => {}, onLive = () => {}, batchMs = 50, backoff = {}, key = (o) => o.metadata.name,
}) {
  const items = new Map();
  const retry = backoffTimer(backoff);
  let stopped = false;
  let stopWatch = null;
  let listedOnce = false;
  let progress = { loaded: 0, about: null, done: false, relist: false };
  let upserted = new Map();
  let deleted = new Map();
  let timer = null;
  let wake = null;

  const flush = (phase) => {
    clearTimeout(timer);
    timer = null;
    if (stopped) return;
    const batch = { upserted: [...upserted.values()], deleted: [...deleted.values()], items, phase, progress };
    upserted = new Map();
    deleted = new Map();
    if (phase === 'watching' && batch.upserted.length === 0 && batch.deleted.length === 0) return;
    onChange(batch);
  };
  const upsert = (obj) => {
    const k = key(obj);
    const known = items.get(k);
    if (known && known.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    items.set(k, obj);
    deleted.delete(k);
    upserted.set(k, obj);
  };
  const remove = (obj) => {
    const k = key(obj);
    if (!items.has(k)) return;
    items.delete(k);
    upserted.delete(k);
    deleted.set(k, obj);
  };
  const sleep = (ms) => new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    wake = () => { clearTimeout(t); resolve(); };
  });

  async function listAll() {
    const seen = new Set();
    const relist = listedOnce;
    progress = { loaded: 0, about: null, done: false, relist };
    const result = await list({
      onPage: (page) => {
        if (stopped) return;
        for (const obj of page.items) { seen.add(key(obj)); upsert(obj); }
        progress = { loaded: page.loaded, about: page.about, done: page.done, relist };
        if (!page.done) flush('listing');
      },
    });
    if (stopped) return null;
    for (const [k, obj] of items) if (!seen.has(k)) remove(obj);
    listedOnce = true;
    flush('listed');
    return result.resourceVersion;
  }

  async function watchFrom(resourceVersion) {
    let rv = resourceVersion;
    while (!stopped) {
      const started = Date.now();
      let heard = false;
      const handle = watch({
        resourceVersion: rv,
        onOpen: () => { if (!stopped) onLive(); },
        onEvent: (type, obj) => {
          if (stopped) return;
          if (obj && obj.metadata && obj.metadata.resourceVersion) rv = obj.metadata.resourceVersion;
          heard = true;
          if (type === 'ADDED' || type === 'MODIFIED') upsert(obj);
          else if (type === 'DELETED') remove(obj);
          else return; // BOOKMARK: only the resourceVersion moves
          if (!timer) timer = setTimeout(() => flush('watching'), batchMs);
        },
      });
      stopWatch = handle.stop;
      try {
        await handle.done;
        flush('watching');
        // A watch that ends at once, having said nothing, would spin.
        if (heard || Date.now() - started > 1000) retry.reset();
        else await sleep(retry.next());
      } catch (err) {
        flush('watching');
        if (stopped) return;
        if (isGone(err)) { onError(err, { relist: true, retryIn: 0 }); return; }
        const wait = retry.next();
        onError(err, { relist: false, retryIn: wait });
        await sleep(wait);
      }
    }
  }

  (async () => {
    while (!stopped) {
      let rv;
      try {
        rv = await listAll();
        retry.reset();
      } catch (err) {
        if (stopped) return;
        const wait = isGone(err) ? 0 : retry.next();
        onError(err, { relist: true, retryIn: wait });
        await sleep(wait);
        continue;
      }
      if (!stopped) await watchFrom(rv);
    }
  })();

  return {
    items,
    stop() {
      stopped = true;
      clearTimeout(timer);
      if (stopWatch) stopWatch();
      if (wake) wake();
    },
  };
}

// followChanges is follow for a page that renders itself again on a
// change (startPage's follow option): it lists once to learn where to
// watch from and calls changed() on every change after that. Returns stop.
export function followChanges({ list, watch, onError, onLive }, changed) {
  let primed = false;
  const feed = follow({
    list, watch, onError, onLive,
    onChange: (batch) => {
      if (batch.phase === 'listing') return;
      if (!primed) { primed = true; return; }
      if (batch.upserted.length || batch.deleted.length) changed();
    },
  });
  return () => feed.stop();
}

// followsKind is startPage's follow option for a list or detail page of
// one kind: a list page follows the kind, a detail page (named) its own
// object, by a metadata.name field selector (every kind of ours is
// cluster-scoped, so the name alone picks it). calls are the kind's list
// and watch, each naming its RESOURCES entry, as definition_test.go reads
// the verbs off the source:
//
//   startPage(render, { follow: followsKind({
//     list: (opts) => k8s.list(RESOURCES.diskpools, opts),
//     watch: (opts) => k8s.watch(RESOURCES.diskpools, opts),
//   }, { named: true }) });
export function followsKind({ list, watch }, { named = false } = {}) {
  return (ctx, changed) => {
    const fieldSelector = named ? `metadata.name=${ctx.resource.name}` : undefined;
    return followChanges({
      list: (opts) => list({ ...opts, fieldSelector }),
      watch: (opts) => watch({ ...opts, fieldSelector }),
    }, changed);
  };
}

// backoffTimer doubles a delay from initialMs up to maxMs, with ±20%
// jitter so pages do not reconnect in step.
function backoffTimer({ initialMs = 1000, maxMs = 30000, jitter = 0.2 } = {}) {
  let next = initialMs;
  return {
    next() {
      const base = next;
      next = Math.min(maxMs, next * 2);
      return Math.round(base * (1 - jitter + Math.random() * 2 * jitter));
    },
    reset() { next = initialMs; },
  };
}

// loadingSentence says how far a list is: "Loading disks: 3,500 of about
// 10,000", or "… 3,500 so far" when the API server gives no estimate.
export function loadingSentence(noun, { loaded, about }) {
  const n = (v) => Number(v).toLocaleString('en-US');
  return about === null || about === undefined
    ? `Loading ${noun}: ${n(loaded)} so far`
    : `Loading ${noun}: ${n(loaded)} of about ${n(about)}`;
}

// followProblem is what a page shows for follow's onError(err, info):
// what failed and when follow tries again. listed says the list was
// complete once (a watch broke) rather than still loading.
export function followProblem(err, { retryIn }, { listed, noun }) {
  const when = retryIn ? ` Trying again in ${Math.max(1, Math.round(retryIn / 1000))} s.` : ' Trying again now.';
  return errorBox(err, listed ? `Live updates interrupted${when}` : `Could not list the ${noun}${when}`);
}
