// Bindery's web reader, bundled with foliate-js by esbuild into one hashed asset (reader.<hash>.js)
// that only the reader page loads. Reflowable books (EPUB, MOBI/AZW3, FB2) render in foliate's
// <foliate-view>; comics and PDFs (CBZ, CBR, PDF) are pictures from the gateway's page stream
// (pages.ts). Keys, tap zones and the phone's immersive chrome are input.ts; styles beyond app.css
// are style.ts.
// The position is saved with one PUT /api/media-items/<id>/progress a few seconds after the reader
// stops moving and when the page is left (keepalive), never on opening. Highlights and notes
// (annotations.ts), search in the book (search.ts), the reader's settings (settings.ts), the offer
// to go where another device is (live.ts) and the cleaning of each section before foliate shows it
// (sanitize.ts: a book is hostile content) are their own modules, bundled into the same asset.
// A book kept offline (store.ts, filled by the book page's "Keep offline") is read from this
// browser: its file, locator data and annotations (a comic's or PDF's page pictures and texts);
// positions and highlights made without a network wait in the outbox and go through the same API
// writes when it is back.
import { type Book, makeBook, type TocItem } from 'foliate-js/view.js';
import { MAX_ACTIVE_SECONDS, watchActivity } from './active-time';
import { annotations } from './annotations';
import { byId, within } from './dom';
import { takeEarly } from './early';
import { call } from './http';
import { chrome, pageKeys, zone } from './input';
import { follow, type LivePosition } from './live';
import { num, t } from './messages';
import { type PagePosition, pictures } from './pages';
import { remoteEpub } from './remote-epub';
import { cleanSections } from './sanitize';
import { pageSearch, search } from './search';
import { sectionAt, sectionBounds, textShare } from './sections';
import { applyShell, bind, bookCss, followProfile, forBook, hasOwn, keepText, margins, type ProfileSettings, SIZES, setOwn, type TextKey, text } from './settings';
import { drop, flush, type KeptBook, keptBook, keptPages, markedKept, queue, searchKept, updateKept, waiting } from './store';
import { adoptStyles } from './style';

/** A position to save: an EPUB's share and CFI, or a page of pictures. */
type Position = { percentage: number; epubcfi?: string } | PagePosition;
/** The position the reader opens at: the server's (the page's data-progress) or the one read here. */
type Saved = { percentage?: number | null; epubcfi?: string | null; page?: number | null };

const SAVE_AFTER_MS = 2000;
const root = byId('reader');
const status = byId('reader-position');
const item = root.dataset.item ?? '';
forBook(item);
// the profile's settings (null when the page could not read them) become the browser's copy
const profile: ProfileSettings | null = JSON.parse(root.dataset.settings || 'null');
followProfile(profile, call);
let saved: Saved | null = JSON.parse(root.dataset.progress || 'null');
/** the book as kept in this browser, or null */
let kept: KeptBook | null = null;
const progressUrl = `/api/media-items/${encodeURIComponent(item)}/progress`;
adoptStyles();
applyShell();
const shell = chrome();

/** The positions this page wrote (their percentage, and the version the service answered): not offered back. */
const sent: { at: number; percentage: number }[] = [];
const versions = new Set<number>();

/** The seconds the reader was active (active-time.ts), sent with each position as `active_seconds`. */
const activity = watchActivity();
/** the seconds in this book's position waiting in the outbox: a later position replaces it, so carries them */
let carried = 0;
const outboxKey = `progress:${item}`;

/** One position write: JSON (the same-site proof a cookie-authenticated write needs). */
function put(body: Position, leaving: boolean) {
  sent.push({ at: Date.now(), percentage: body.percentage });
  if (sent.length > 20) sent.shift();
  const active_seconds = Math.min(MAX_ACTIVE_SECONDS, activity.take(Date.now()) + carried);
  const full = { ...body, client: 'web', device: 'web', active_seconds };
  void updateKept(item, (k) => ({ ...k, local: { ...body, at: Date.now() } }));
  return call<{ progress?: { version?: number } }>('PUT', progressUrl, full, leaving).then(async (r) => {
    if (r.status === 0) {
      // no network: kept here, sent when it is back (the latest position of the book replaces an earlier one)
      carried = active_seconds;
      await queue({ key: outboxKey, method: 'PUT', url: progressUrl, body: full, item });
      root.dataset.pending = String(Number(root.dataset.pending || '0') + 1);
      root.dataset.pendingPosition = String(body.percentage);
      return;
    }
    // this position reached the server (with the seconds of one waiting from before): that one must not follow it
    carried = 0;
    await drop(outboxKey);
    if (!r.ok) return;
    const v = r.body?.progress?.version;
    if (typeof v === 'number') versions.add(v);
    root.dataset.saved = String(Number(root.dataset.saved || '0') + 1);
  });
}

/** A position from the live channel that this page wrote, or the place already shown. */
function mine(p: LivePosition): boolean {
  if (p.version !== undefined && versions.has(p.version)) return true;
  const near = (a: unknown, b: unknown) => typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 0.005;
  if (p.client === 'web' && p.device === 'web' && sent.some((s) => Date.now() - s.at < 60_000 && near(s.percentage, p.percentage))) return true;
  return near(Number(root.dataset.fraction ?? root.dataset.percentage), p.percentage);
}

/** A short message read out (and shown) for a few seconds. */
let sayTimer = 0;
function say(text: string) {
  const el = byId('reader-status');
  el.textContent = text;
  clearTimeout(sayTimer);
  sayTimer = setTimeout(() => {
    el.textContent = '';
  }, 5000);
}

/** Offers to go where another device is; `jump` goes there. */
function offering(jump: (p: LivePosition) => unknown): (p: LivePosition) => void {
  const box = byId('offer');
  const text = byId('offer-text');
  let pending: LivePosition | null = null;
  byId('offer-go').addEventListener('click', () => {
    box.hidden = true;
    if (pending) void jump(pending);
    pending = null;
    document.getElementById('next')?.focus();
  });
  byId('offer-dismiss').addEventListener('click', () => {
    box.hidden = true;
    pending = null;
    document.getElementById('next')?.focus();
  });
  return (p) => {
    if (typeof p.percentage !== 'number') return;
    pending = p;
    const percent = Math.round(p.percentage * 100);
    const device = p.device;
    box.hidden = false;
    if (Number.isInteger(p.page) && p.page_count) {
      const at = { page: Number(p.page), count: p.page_count };
      text.textContent = device ? t('reader.offer.devicePage', { ...at, device }) : t('reader.offer.page', at);
    } else text.textContent = device ? t('reader.offer.devicePercent', { percent, device }) : t('reader.offer.percent', { percent });
  };
}

/** The position to save, kept until it is written: written SAVE_AFTER_MS after the last move, or on leaving. */
function saver(): (body: Position) => void {
  let pending: Position | null = null;
  let timer = 0;
  const flush = (leaving: boolean) => {
    clearTimeout(timer);
    if (!pending) return;
    const body = pending;
    pending = null;
    void put(body, leaving);
  };
  addEventListener('pagehide', () => flush(true));
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') flush(true);
  });
  return (body) => {
    // a page turn is the reader at work, wherever its input went (foliate's frame keeps its own events)
    activity.touch(Date.now());
    pending = body;
    clearTimeout(timer);
    timer = setTimeout(() => flush(false), SAVE_AFTER_MS);
  };
}
const save = saver();

/** The reader's place as the toolbar shows it: the chapter (when known) and the per cent read, to a tenth. */
const placeOf = (label: string | undefined, f: number) => {
  const percent = num(Math.round(f * 1000) / 10);
  return label ? t('reader.position', { label, percent }) : t('reader.positionBare', { percent });
};
const isCfi = (s: unknown): s is string => typeof s === 'string' && /^epubcfi\(\/\d/.test(s);

const byParts = root.dataset.format === 'epub' || root.dataset.format === 'kepub';
/**
 * An EPUB's opening (its first and last 64 KiB) and its sections as the reading service weighs them,
 * asked for by the boot script as the page was parsed (early.ts), beside the look for a kept copy:
 * the first page waits for one round trip less. Unused when the book is kept.
 */
const { opening: early, sections: earlySections } = takeEarly();

/** Whether the kept copy is of the library's file as it is now (unknown counts as the same). */
const keptIsCurrent = () => !kept?.sha256 || !root.dataset.sha256 || kept.sha256 === root.dataset.sha256;

/** The book: an EPUB read by parts with range requests (remote-epub.ts), else the whole file. */
async function openBook(): Promise<Book> {
  // the kept file, unless the library's file has changed since it was kept (then the network's)
  if (kept?.file && keptIsCurrent()) return makeBook(new File([kept.file], kept.name || root.dataset.name || 'book'));
  try {
    if (byParts) {
      const parts = await remoteEpub(root.dataset.file ?? '', early ?? undefined).catch((e: unknown) => {
        console.warn('the book is read whole:', e);
        return null;
      });
      if (parts) return parts;
    }
    const res = await fetch(root.dataset.file ?? '', { credentials: 'same-origin' });
    if (!res.ok) throw new Error(t('reader.fileFailed', { status: String(res.status) }));
    return makeBook(new File([await res.blob()], root.dataset.name || 'book'));
  } catch (e) {
    // no network, and the book was not looked for here (its mark was missing): a kept copy still opens
    const found = kept ?? (await lookedUp);
    if (found?.file) return makeBook(new File([found.file], found.name || root.dataset.name || 'book'));
    throw e;
  }
}

async function reflowable() {
  const sections: Promise<unknown> = earlySections ? earlySections.then((s) => s ?? kept?.sections ?? null) : Promise.resolve(null);
  // every section is cleaned before it is shown: a book is hostile content (sanitize.ts)
  const book = cleanSections(await openBook());
  performance.mark('reader:book');
  const view = document.createElement('foliate-view');
  view.id = 'foliate';
  byId('book-view').append(view);
  await view.open(book);
  performance.mark('reader:view');
  // an EPUB's sections weighed as the reading service weighs them (else foliate's own weights)
  const weighed = sectionBounds(await sections, view.book.sections.length);
  const boundsOf = () => weighed ?? view.getSectionFractions();
  const applyStyles = () => {
    const [gap, margin] = margins();
    view.renderer.setAttribute('gap', gap);
    view.renderer.setAttribute('margin', margin);
    view.renderer.setStyles?.(bookCss());
    const size = document.getElementById('font-size');
    if (size) size.textContent = t('reader.fontSize', { size: Number(text('font')) });
  };
  applyStyles();
  // only a move the reader asked for is saved (opening at the saved place is not a move)
  let moved = false;
  // another device's position, accepted: written back as it came until the reader moves on (the
  // page's start would read to the service as a disagreement with it)
  let adopted: Position | null = null;
  const turn =
    <A extends unknown[], R>(go: (...args: A) => R) =>
    (...args: A): R => {
      moved = true;
      adopted = null;
      return go(...args);
    };
  const left = turn(() => view.goLeft());
  const right = turn(() => view.goRight());
  const go = turn((target: string) => view.goTo(target));
  const notes = annotations({ view, item, root, say, go, kept });
  const onKey = pageKeys({ prev: left, next: right });
  document.addEventListener('keydown', onKey);
  view.addEventListener('load', (e) => {
    const { doc, index } = e.detail;
    doc.addEventListener('keydown', onKey);
    notes.onLoad(doc, index);
    // tap zones: the outer thirds of the page turn it (not while text is selected, nor on a highlight)
    doc.addEventListener('click', (ev) => {
      if (within(ev.target, 'a[href]')) return;
      if (!doc.getSelection()?.isCollapsed) return;
      // the frame spans every column of the section: where the click is on the screen, in the book's box
      const frame = doc.defaultView?.frameElement;
      const box = byId('book-view').getBoundingClientRect();
      const x = (frame ? frame.getBoundingClientRect().left : 0) + ev.clientX - box.left;
      setTimeout(() => {
        if (notes.hit()) return;
        const z = zone(x, 0, box.width);
        if (z === 'left') void left();
        else if (z === 'right') void right();
        else shell.toggle();
      }, 0);
    });
  });
  // a tap beside the section's frame (foliate's margins): the same zones
  byId('book-view').addEventListener('click', (ev) => {
    const box = byId('book-view').getBoundingClientRect();
    const z = zone(ev.clientX, box.left, box.width);
    if (z === 'left') void left();
    else if (z === 'right') void right();
    else shell.toggle();
  });
  // the renderer's own event: the section and the fraction of it where the page starts
  view.renderer.addEventListener('relocate', (e) => {
    const { index, range, fraction: inSection, reason } = e.detail;
    if (!range || typeof index !== 'number') return;
    // a swipe (foliate's own touch handling) is a move the reader asked for
    if (reason === 'snap') moved = true;
    const bounds = boundsOf();
    const from = bounds[index] ?? 0;
    const to = bounds[index + 1] ?? 1;
    // an EPUB's place is where its page's text starts, measured as the reading service measures it;
    // otherwise the renderer's share of the section
    const doc = range.startContainer?.ownerDocument;
    const startShare = weighed ? textShare(doc, range.startContainer, range.startOffset) : null;
    const endShare = weighed ? textShare(doc, range.endContainer, range.endOffset) : null;
    const at = (share: number) => Math.min(1, Math.max(0, from + share * (to - from)));
    const fraction = at(startShare ?? (Number.isFinite(inSection) ? inSection : 0));
    root.dataset.fractionEnd = String(endShare === null ? fraction : at(endShare));
    const start = range.cloneRange();
    start.collapse(true);
    const cfi = view.getCFI(index, start);
    const label = view.lastLocation?.tocItem?.label?.trim();
    // a tap makes foliate snap back to the page it is on: only a new page hides the chrome
    if (moved && cfi !== root.dataset.cfi) shell.turned();
    root.dataset.fraction = String(fraction);
    root.dataset.cfi = cfi;
    status.textContent = placeOf(label, fraction);
    if (moved) save(adopted ?? { percentage: Math.round(fraction * 10000) / 10000, epubcfi: cfi });
  });
  if (saved && isCfi(saved.epubcfi)) await view.init({ lastLocation: saved.epubcfi });
  else if (saved && typeof saved.percentage === 'number' && saved.percentage > 0) {
    await view.init({ showTextStart: false });
    if (weighed) await view.renderer.goTo(sectionAt(weighed, saved.percentage));
    else await view.goToFraction(saved.percentage);
  } else await view.init({ showTextStart: true });
  performance.mark('reader:placed');
  tableOfContents(view.book.toc ?? [], go);
  search({ view, go });
  void notes.load();
  byId('prev').addEventListener('click', left);
  byId('next').addEventListener('click', right);
  textSettings(applyStyles);
  follow({
    item,
    mine,
    offer: offering((p) => {
      const percentage = p.percentage ?? 0;
      const jump = isCfi(p.epubcfi) ? go(p.epubcfi) : turn(() => (weighed ? view.renderer.goTo(sectionAt(weighed, percentage)) : view.goToFraction(percentage)))();
      adopted = isCfi(p.epubcfi) ? { percentage, epubcfi: p.epubcfi } : { percentage };
      return jump;
    }),
  });
  root.dataset.ready = 'true';
  performance.mark('reader:ready');
}

/** The "Text" panel: size, font, spacing, margins, alignment, hyphenation (this book's or all books'), and the theme. */
function textSettings(applyStyles: () => void) {
  const size = (d: number) => () => {
    keepText('font', Math.min(SIZES.max, Math.max(SIZES.min, Number(text('font')) + d)));
    applyStyles();
  };
  byId('font-smaller').addEventListener('click', size(-SIZES.step));
  byId('font-larger').addEventListener('click', size(SIZES.step));
  const controls = (
    [
      ['font-family', 'family'],
      ['line-spacing', 'spacing'],
      ['margins', 'margins'],
      ['text-align', 'align'],
      ['hyphens', 'hyphens'],
    ] satisfies [string, TextKey][]
  ).map(([id, k]) => bind(id, k, '', applyStyles, text, keepText));
  const only = byId('only-this-book', HTMLInputElement);
  only.checked = hasOwn();
  only.addEventListener('change', () => {
    setOwn(only.checked);
    for (const show of controls) show();
    applyStyles();
  });
  bind('reader-theme', 'theme', 'profile', () => {
    applyShell();
    applyStyles();
  });
}

/** The book's contents as a list of links in the toolbar's "Contents" disclosure. */
function tableOfContents(toc: TocItem[], go: (target: string) => unknown) {
  const box = byId('toc-list');
  const list = (entries: TocItem[]): HTMLUListElement => {
    const ul = document.createElement('ul');
    for (const t of entries) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = '#';
      a.textContent = (t.label || '').trim() || '—';
      a.addEventListener('click', (e) => {
        e.preventDefault();
        byId('toc', HTMLDetailsElement).open = false;
        void go(t.href);
      });
      li.append(a);
      if (t.subitems?.length) li.append(list(t.subitems));
      ul.append(li);
    }
    return ul;
  };
  box.replaceChildren(toc.length ? list(toc) : document.createTextNode(t('reader.noToc')));
}

/** Comics and PDFs: the picture viewer (pages.ts), with the theme and the offer of another device's page. */
function comics() {
  // the kept pages, unless the library's file has changed since they were kept and the network is there
  const own = kept?.kind === 'pages' && kept.page_count && (keptIsCurrent() || !navigator.onLine) ? keptPages(item, kept) : null;
  if (own) root.dataset.keptPages = String(own.count);
  const viewer = pictures({ root, item, kept: own, saved, save, status, chrome: shell });
  const layers = viewer.layers;
  if (layers && document.getElementById('search-menu')) {
    pageSearch({
      item,
      local: own ? (query) => searchKept(item, query) : undefined,
      count: own?.count ?? Number(root.dataset.pageCount || '0'),
      go: (index, query) => {
        layers.mark(index, query);
        viewer.jump(index + 1);
      },
    });
  }
  bind('reader-theme', 'theme', 'profile', applyShell);
  follow({
    item,
    mine,
    offer: offering((p) => {
      if (typeof p.page === 'number' && Number.isInteger(p.page)) viewer.jump(p.page);
    }),
  });
  root.dataset.ready = 'true';
  performance.mark('reader:ready');
}

/** Sends what waited for the network, now and whenever it comes back. */
function sendWaiting() {
  const go = () =>
    flush(call).then(async (n) => {
      if (n) root.dataset.outboxSent = String(Number(root.dataset.outboxSent || '0') + n);
      // the waiting position went with its seconds: the next one does not carry them again
      if (n && !(await waiting()).some((w) => w.key === outboxKey)) carried = 0;
    });
  addEventListener('online', () => void go());
  setInterval(() => {
    if (navigator.onLine) void go();
  }, 20_000);
  return go();
}

/** the look for a kept copy of the book, started with the page */
const lookedUp = keptBook(item);

async function start() {
  performance.mark('reader:start');
  // IndexedDB is waited for only when the book may be kept here (or there is no network); else the
  // network's copy opens (a copy kept without its mark is read only when the network fails)
  if (markedKept(item) || !navigator.onLine) kept = await lookedUp;
  else
    void lookedUp.then((k) => {
      if (k) root.dataset.kept = 'true';
    });
  performance.mark('reader:kept');
  // a position read here after this page was made (offline, from the kept page) is the newer one
  const made = Date.parse(root.dataset.renderedAt ?? '');
  if (kept?.local && Number.isFinite(made) && kept.local.at > made) saved = kept.local;
  if (kept) root.dataset.kept = 'true';
  void sendWaiting();
  return root.dataset.kind === 'pages' ? comics() : reflowable();
}

start().catch((e) => {
  const alert = byId('reader-error');
  alert.hidden = false;
  alert.textContent = t('reader.openFailed', { reason: e instanceof Error ? e.message : String(e) });
});
