// Reading offline (issue 45), on every page: registers the service worker (/sw.js), runs the book
// page's "Keep offline", fills the offline books page, and sends the writes made offline (the
// reader's outbox) when the network is back. The books are kept in IndexedDB (offline-db.ts, the
// same module the reader reads them with); our own pages for them (the reader page, this list) and
// their covers and assets in the service worker's Cache Storage. Bundled as /assets/offline.<hash>.js.
import { allBooks, allWaiting, deleteBook, deleteWaiting, getBook, KEPT_PAGE_WIDTH, type KeptBook, type KeptPageText, putBook, putPage } from './offline-db';
import { type FormatValues, formatter } from '../i18n/format';
import { usablePageText } from '../reader/pdf-text';

const CACHE = 'bindery-offline-v1';
/** pages of a comic or PDF asked for at once while it is kept */
const PARALLEL_PAGES = 4;
const csrf = () => document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((e) => console.warn('the offline worker could not start:', e));
}

// What this script says comes from the page, in the reader's language: the catalog's messages
// (ICU), formatted here by the catalogs' own small formatter; English when a page gives none.
type Words = Record<string, string | undefined>;
const ENGLISH: Words = {
  keep: 'Keep offline',
  removeCopy: 'Remove offline copy',
  keeping: 'Keeping the book offline…',
  keepingPages: 'Keeping the book offline… ({done, number} of {count, plural, one {# page} other {# pages}})',
  removed: 'The offline copy was removed.',
  kept: 'Kept offline ({size}).',
  keptReady: 'Kept offline ({size}): it opens in the reader without a network.',
  failed: 'The book could not be kept offline: {error}.',
  quota: 'This browser has no room left to keep the book offline. Remove books from Offline books, or free space on this device, and try again.',
  quotaNeed: 'This browser has no room left to keep the book offline (it needs about {size}). Remove books from Offline books, or free space on this device, and try again.',
  kb: '{n} KB',
  mb: '{n} MB',
};
function wordsOf(el: HTMLElement | null): Words {
  try {
    return { ...ENGLISH, ...(JSON.parse(el?.dataset.words ?? '{}') as Words) };
  } catch {
    return ENGLISH;
  }
}
const lang = document.documentElement.lang || 'en';
let words: Words = ENGLISH;
const format = formatter(lang);
/** A message of the page with its placeholders filled in (numbers and plurals by the page's language). */
function say(key: string, values: FormatValues = {}): string {
  const w = words[key];
  return w === undefined ? key : format(w, values);
}
const mb = (n: number) =>
  n >= 1024 * 1024
    ? say('mb', { n: new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(n / 1024 / 1024) })
    : say('kb', { n: new Intl.NumberFormat(lang).format(Math.max(1, Math.round(n / 1024))) });

/** No room left to keep the book: `need` is its size when it was known before writing. */
class QuotaError extends Error {
  override name = 'QuotaExceededError';
  constructor(readonly need: number) {
    super('quota');
  }
}
const isQuota = (e: unknown) => e instanceof Error && (e.name === 'QuotaExceededError' || e.name === 'NS_ERROR_DOM_QUOTA_REACHED' || /quota/i.test(String(e.message)));
const quotaMessage = (need: number) => (need ? say('quotaNeed', { size: mb(need) }) : say('quota'));

async function getJson(url: string): Promise<Record<string, unknown>> {
  const r = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (!r.ok) throw new Error(`${url} answered ${r.status}`);
  return r.json();
}
const list = (v: unknown) => (Array.isArray(v) ? v : []);

/** the size of the book being kept (for the message when there is no room) */
let need = 0;
/** Room for `size` more bytes, as far as the browser says (a book is refused before anything is written). */
async function room(size: number): Promise<void> {
  need = size;
  const est = navigator.storage?.estimate ? await navigator.storage.estimate() : null;
  if (est && typeof est.quota === 'number' && est.quota - (est.usage ?? 0) < size * 1.2) throw new QuotaError(size);
}

/** A page stream answer, asked again while the gateway says it is busy (503 with Retry-After). */
async function pageFetch(url: string): Promise<Response> {
  for (let tries = 0; ; tries++) {
    const r = await fetch(url, { credentials: 'same-origin' });
    if (r.status !== 503 || tries >= 4) return r;
    const wait = Number(r.headers.get('retry-after')) || 1;
    await new Promise((done) => setTimeout(done, Math.min(5, wait) * 1000));
  }
}

/**
 * A comic's or PDF's pages: each page's picture at KEPT_PAGE_WIDTH and a PDF page's text, stored
 * page by page in IndexedDB, a few at a time. The size is estimated from the first picture before
 * anything is written; the book's record, which says it is kept, is written after the last page.
 */
async function keepPages(b: HTMLElement, id: string, tell: (t: string) => void): Promise<{ size: number; count: number }> {
  const count = Number(b.dataset.pageCount || '0');
  if (!(count > 0)) throw new Error('the book has no pages');
  const pdf = b.dataset.format === 'pdf';
  const base = `/opds/pages/${encodeURIComponent(id)}`;
  const picture = async (n: number) => {
    const r = await pageFetch(`${base}/${n}?width=${KEPT_PAGE_WIDTH}`);
    if (!r.ok) throw new Error(`page ${n + 1} could not be read (${r.status})`);
    return r.blob();
  };
  // a page without text (a scan) or whose text cannot be read keeps its picture alone
  const text = async (n: number): Promise<KeptPageText | null> => {
    if (!pdf) return null;
    const r = await pageFetch(`${base}/${n}/text`);
    if (r.status === 404 || r.status === 422) return null;
    if (!r.ok) throw new Error(`the text of page ${n + 1} could not be read (${r.status})`);
    return usablePageText((await r.json()) as KeptPageText);
  };
  tell(say('keeping'));
  const first = await picture(0);
  await room(first.size * count);
  let done = 0;
  let size = 0;
  const progress = () => tell(say('keepingPages', { done, count }));
  progress();
  const store = async (n: number, pic?: Blob) => {
    const [p, t] = await Promise.all([pic ?? picture(n), text(n)]);
    await putPage({ item: id, n, picture: p, text: t });
    size += p.size + (t ? JSON.stringify(t).length : 0);
    done++;
    progress();
  };
  let next = 1;
  await store(0, first);
  // a few pages at once: the gateway renders them in parallel, within its own limits. A failure
  // stops them all, and is answered only once none is still writing (what was written is then removed)
  let failure: { error: unknown } | null = null;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL_PAGES, count - 1) }, async () => {
      while (next < count && !failure) {
        try {
          await store(next++);
        } catch (error) {
          failure ??= { error };
        }
      }
    }),
  );
  if (failure) throw (failure as { error: unknown }).error;
  return { size, count };
}

/** Keeps a book: its file (or its pages' pictures), locator data, annotations and position in IndexedDB; its reader page, assets and cover in the cache. */
async function keep(b: HTMLElement, tell: (t: string) => void): Promise<KeptBook> {
  const id = b.dataset.item ?? '';
  const pages = b.dataset.kind === 'pages';
  let file: Blob | null = null;
  if (!pages) {
    const fileRes = await fetch(b.dataset.file ?? '', { credentials: 'same-origin' });
    if (!fileRes.ok) throw new Error(`the book file could not be read (${fileRes.status})`);
    file = await fileRes.blob();
    await room(file.size);
    tell(say('keeping'));
  }
  const base = `/api/media-items/${encodeURIComponent(id)}`;
  const [sections, highlights, notes, progress] = await Promise.all([
    b.dataset.format === 'epub'
      ? getJson(`${base}/sections`).then(
          (j) => j.sections ?? null,
          () => null,
        )
      : null,
    getJson(`${base}/highlights`).then((j) => list(j.data)),
    getJson(`${base}/notes`).then((j) => list(j.data)),
    getJson(`${base}/progress`).catch(() => null),
  ]);
  const kept = pages ? await keepPages(b, id, tell) : null;
  // our pages and what they need, for the service worker to answer with offline
  const cache = await caches.open(CACHE);
  const page = await fetch(`/read/${encodeURIComponent(id)}`, { credentials: 'same-origin' });
  if (!page.ok) throw new Error(`the reader page could not be read (${page.status})`);
  const html = await page.clone().text();
  await cache.put(`/read/${encodeURIComponent(id)}`, page);
  const offlinePage = await fetch('/offline', { credentials: 'same-origin' });
  if (offlinePage.ok) await cache.put('/offline', offlinePage);
  const assets = [...new Set([...html.matchAll(/(?:src|href)="(\/assets\/[^"?#]+)"/g)].map((m) => m[1] ?? ''))];
  for (const a of document.querySelectorAll('script[src^="/assets/"], link[rel="stylesheet"][href^="/assets/"]'))
    assets.push(a.getAttribute('src') ?? a.getAttribute('href') ?? '');
  await cache.addAll([...new Set([...assets, '/manifest.webmanifest', '/icon.svg'])]);
  if (b.dataset.cover) await cache.add(b.dataset.cover).catch(() => undefined);
  const record: KeptBook = {
    id,
    title: b.dataset.title,
    authors: b.dataset.authors ?? '',
    format: b.dataset.format,
    name: b.dataset.name || 'book',
    cover: b.dataset.cover ?? null,
    sha256: b.dataset.sha256 ?? null,
    file,
    ...(kept ? { kind: 'pages' as const, page_count: kept.count, page_width: KEPT_PAGE_WIDTH } : { kind: 'text' as const }),
    sections,
    annotations: { highlights, notes },
    progress: progress?.progress ?? progress,
    local: null,
    kept_at: Date.now(),
    size: 0,
  };
  record.size = (file?.size ?? 0) + (kept?.size ?? 0) + JSON.stringify({ ...record, file: null }).length + html.length;
  // last: only now is the book kept (a failure before leaves pages that remove() takes away)
  await putBook(record);
  navigator.storage?.persist?.().catch(() => undefined);
  return record;
}

async function remove(id: string): Promise<void> {
  await deleteBook(id);
  const cache = await caches.open(CACHE);
  await cache.delete(`/read/${encodeURIComponent(id)}`);
  await cache.delete(`/api/media-items/${encodeURIComponent(id)}/cover`);
}

/** The book page's button. */
function keepButton(button: HTMLButtonElement, status: HTMLElement): void {
  words = wordsOf(button);
  const tell = (t: string) => {
    status.textContent = t;
  };
  const id = button.dataset.item ?? '';
  const show = (rec: KeptBook | null | undefined) => {
    button.textContent = rec ? say('removeCopy') : say('keep');
    button.dataset.kept = rec ? 'true' : 'false';
  };
  getBook(id)
    .then((rec) => {
      show(rec);
      if (rec) tell(say('kept', { size: mb(rec.size) }));
      button.hidden = false;
    })
    .catch(() => undefined);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      if (button.dataset.kept === 'true') {
        await remove(id);
        show(null);
        tell(say('removed'));
      } else {
        await navigator.serviceWorker.ready;
        const rec = await keep(button, tell);
        show(rec);
        tell(say('keptReady', { size: mb(rec.size) }));
      }
    } catch (e) {
      // nothing half kept
      await remove(id).catch(() => undefined);
      show(null);
      tell(isQuota(e) ? quotaMessage(e instanceof QuotaError ? e.need : need) : say('failed', { error: e instanceof Error ? e.message : String(e) }));
    } finally {
      button.disabled = false;
    }
  });
}
const button = document.getElementById('keep-offline');
const keepStatus = document.getElementById('keep-offline-status');
if (button instanceof HTMLButtonElement && keepStatus && 'indexedDB' in window && 'caches' in window && 'serviceWorker' in navigator) keepButton(button, keepStatus);

/** The offline books page: the books kept in this browser, each with a link to read it and a button to remove it. */
async function fillList(listEl: HTMLElement): Promise<void> {
  const books = (await allBooks().catch(() => [])) ?? [];
  books.sort((a, b) => String(a.title).localeCompare(String(b.title)));
  listEl.replaceChildren();
  for (const rec of books) {
    const li = document.createElement('li');
    li.dataset.id = rec.id;
    const a = document.createElement('a');
    a.href = `/read/${encodeURIComponent(rec.id)}`;
    a.textContent = rec.title || say('untitled');
    const meta = document.createElement('span');
    meta.className = 'muted';
    const format = String(rec.format).toUpperCase();
    meta.textContent = ` ${rec.authors ? say('metaBy', { authors: rec.authors, format, size: mb(rec.size) }) : say('meta', { format, size: mb(rec.size) })}`;
    const del = document.createElement('button');
    del.type = 'button';
    del.textContent = say('remove');
    del.setAttribute('aria-label', rec.title ? say('removeLabel', { title: rec.title }) : say('removeLabelUntitled'));
    del.addEventListener('click', async () => {
      await remove(rec.id);
      text('offline-state', say('removedState', { title: rec.title ?? '' }));
      await fillList(listEl);
      listEl.querySelector('button')?.focus();
    });
    li.append(a, meta, ' ', del);
    listEl.append(li);
  }
  const empty = document.getElementById('offline-empty');
  if (empty) empty.hidden = books.length > 0;
  const total = books.reduce((n, b) => n + (b.size || 0), 0);
  const est = navigator.storage?.estimate ? await navigator.storage.estimate().catch(() => null) : null;
  text(
    'offline-usage',
    books.length > 0
      ? est?.quota
        ? say('usageQuota', { count: books.length, size: mb(total), quota: mb(est.quota) })
        : say('usage', { count: books.length, size: mb(total) })
      : '',
  );
  listEl.dataset.count = String(books.length);
}
function text(id: string, t: string): void {
  const el = document.getElementById(id);
  if (el) el.textContent = t;
}
const listEl = document.getElementById('offline-books');
if (listEl) {
  words = wordsOf(listEl);
  if (!navigator.onLine) text('offline-state', say('offlineNow'));
  void fillList(listEl);
}

/** Writes the reader made without a network, sent through the normal API when it is back. */
async function sendWaiting(): Promise<void> {
  if (!navigator.onLine) return;
  const waiting = ((await allWaiting().catch(() => [])) ?? []).sort((a, b) => a.at - b.at);
  for (const w of waiting) {
    let status = 0;
    try {
      const r = await fetch(w.url, {
        method: w.method,
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf() },
        body: JSON.stringify(w.body),
      });
      status = r.status;
    } catch {
      return;
    }
    if (status >= 500) return;
    await deleteWaiting(w.key).catch(() => undefined);
  }
}
addEventListener('online', () => void sendWaiting());
void sendWaiting();
