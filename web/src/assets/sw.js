// Bindery's service worker (served as /sw.js, scope /): it keeps our own pages for the books kept
// offline — the reader page of each (/read/<id>), the offline books page, their scripts and styles —
// and the books' covers, in Cache Storage, and answers with them when the network does not. The
// books themselves, their locator data and annotations are in IndexedDB (offline.js and the reader),
// never in this cache: a book's file is never answered as a page of this site (docs/architecture.md,
// "What a book may do"). Nothing else is touched: every other request goes to the network as usual.
const CACHE = 'bindery-offline-v1';
/** the paths this worker may answer from its cache: our pages, our assets, covers */
const OURS = [
  /^\/read\/[0-9a-f-]{36}$/,
  /^\/offline$/,
  /^\/assets\/[^/]+$/,
  /^\/api\/media-items\/[0-9a-f-]{36}\/(cover|thumbnail)$/,
  /^\/manifest\.webmanifest$/,
  /^\/icon\.svg$/,
];
const ours = (url) => url.origin === self.location.origin && OURS.some((r) => r.test(url.pathname));

self.addEventListener('install', () => {
  void self.skipWaiting();
});
self.addEventListener('activate', (e) => {
  e.waitUntil(
    (async () => {
      for (const k of await caches.keys()) if (k.startsWith('bindery-offline-') && k !== CACHE) await caches.delete(k);
      await self.clients.claim();
    })(),
  );
});

/** The assets a cached page names (its scripts and styles), added when missing. */
async function keepAssets(cache, html) {
  const paths = [...new Set([...html.matchAll(/(?:src|href)="(\/assets\/[^"?#]+)"/g)].map((m) => m[1]))];
  for (const p of paths) if (!(await cache.match(p))) await cache.add(p).catch(() => undefined);
}

self.addEventListener('fetch', (e) => {
  const req = e.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (!ours(url)) {
    // any other page, while offline: the offline books page (when kept) rather than the browser's error
    // (online, other pages are not touched at all)
    if (req.mode === 'navigate' && url.origin === self.location.origin && !self.navigator.onLine) {
      e.respondWith(
        fetch(req).catch(async (err) => {
          const list = await (await caches.open(CACHE)).match('/offline');
          if (list) return list;
          throw err;
        }),
      );
    }
    return;
  }
  e.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      const key = url.pathname;
      const kept = await cache.match(key);
      // hashed assets never change: the kept copy is the answer
      if (kept && key.startsWith('/assets/')) return kept;
      try {
        const res = await fetch(req);
        // a kept page or cover is refreshed by a good answer (a new session token, a new bundle)
        if (kept && res.ok && res.type === 'basic') {
          await cache.put(key, res.clone());
          if ((res.headers.get('content-type') ?? '').startsWith('text/html')) await keepAssets(cache, await res.clone().text());
        }
        return res;
      } catch (err) {
        if (kept) return kept;
        // a page not kept, while offline: the offline books page, when it is kept
        if (req.mode === 'navigate') {
          const list = await cache.match('/offline');
          if (list) return list;
        }
        throw err;
      }
    })(),
  );
});
