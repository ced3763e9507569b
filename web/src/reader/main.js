// Bindery's web reader, bundled with foliate-js by esbuild into one hashed asset (reader.<hash>.js)
// that only the reader page loads. Reflowable books (EPUB, MOBI/AZW3, FB2) render in foliate's
// <foliate-view>; comics and PDFs (CBZ, CBR, PDF) are pictures from the gateway's page stream.
// The position is saved with one PUT /api/media-items/<id>/progress a few seconds after the reader
// stops moving and when the page is left (keepalive), never on opening. Highlights and notes
// (annotations.js), search in the book (search.js), the reader's settings (settings.js) and the
// offer to go where another device is (live.js) are their own modules, bundled into the same asset.
import 'foliate-js/view.js';
import { fetchSections, sectionAt, sectionBounds, textShare } from './sections.js';
import { annotations } from './annotations.js';
import { call } from './http.js';
import { follow } from './live.js';
import { search } from './search.js';
import { applyShell, bind, bookCss, gap, keep, setting } from './settings.js';

const SAVE_AFTER_MS = 2000;
const root = document.getElementById('reader');
const status = document.getElementById('reader-position');
const item = root.dataset.item;
const saved = JSON.parse(root.dataset.progress || 'null');
applyShell();

/** The positions this page wrote (their percentage, and the version the service answered): not offered back. */
const sent = [];
const versions = new Set();

/** One position write: JSON (the same-site proof a cookie-authenticated write needs). */
function put(body, leaving) {
  sent.push({ at: Date.now(), percentage: body.percentage });
  if (sent.length > 20) sent.shift();
  return call('PUT', `/api/media-items/${encodeURIComponent(item)}/progress`, { ...body, client: 'web', device: 'web' }, leaving).then((r) => {
    if (!r.ok) return;
    const v = r.body?.progress?.version;
    if (typeof v === 'number') versions.add(v);
    root.dataset.saved = String(Number(root.dataset.saved || '0') + 1);
  });
}

/** A position from the live channel that this page wrote, or the place already shown. */
function mine(p) {
  if (versions.has(p.version)) return true;
  const near = (a, b) => typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) < 0.005;
  if (p.client === 'web' && p.device === 'web' && sent.some((s) => Date.now() - s.at < 60_000 && near(s.percentage, p.percentage))) return true;
  return near(Number(root.dataset.fraction ?? root.dataset.percentage), p.percentage);
}

/** A short message read out (and shown) for a few seconds. */
let sayTimer = 0;
function say(text) {
  const el = document.getElementById('reader-status');
  el.textContent = text;
  clearTimeout(sayTimer);
  sayTimer = setTimeout(() => {
    el.textContent = '';
  }, 5000);
}

/** Offers to go where another device is; `jump` goes there. */
function offering(jump) {
  const box = document.getElementById('offer');
  const text = document.getElementById('offer-text');
  let pending = null;
  document.getElementById('offer-go').addEventListener('click', () => {
    box.hidden = true;
    if (pending) void jump(pending);
    pending = null;
    document.getElementById('next')?.focus();
  });
  document.getElementById('offer-dismiss').addEventListener('click', () => {
    box.hidden = true;
    pending = null;
    document.getElementById('next')?.focus();
  });
  return (p) => {
    if (typeof p.percentage !== 'number') return;
    pending = p;
    const where = Number.isInteger(p.page) && p.page_count ? `page ${p.page} of ${p.page_count}` : `${Math.round(p.percentage * 100)}%`;
    box.hidden = false;
    text.textContent = `${p.device ? `Another device (${p.device})` : 'Another device'} is at ${where}.`;
  };
}

/** The position to save, kept until it is written: written SAVE_AFTER_MS after the last move, or on leaving. */
function saver() {
  let pending = null;
  let timer = 0;
  const flush = (leaving) => {
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
    pending = body;
    clearTimeout(timer);
    timer = setTimeout(() => flush(false), SAVE_AFTER_MS);
  };
}
const save = saver();

const pct = (f) => `${Math.round(f * 1000) / 10} %`;
const fontSize = () => Number(setting('font', '100'));
const isCfi = (s) => typeof s === 'string' && /^epubcfi\(\/\d/.test(s);

/** Keys that turn pages, for the page and (reflowable books) each section's frame. */
function keys(prev, next) {
  return (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t && typeof t.closest === 'function' && t.closest('input, select, textarea, button, a, summary')) return;
    if (e.key === 'ArrowLeft' || e.key === 'PageUp' || (e.key === ' ' && e.shiftKey)) {
      e.preventDefault();
      void prev();
    } else if (e.key === 'ArrowRight' || e.key === 'PageDown' || e.key === ' ') {
      e.preventDefault();
      void next();
    }
  };
}

async function reflowable() {
  const sections = root.dataset.format === 'epub' ? fetchSections(item) : Promise.resolve(null);
  const res = await fetch(root.dataset.file, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`the book file could not be read (${res.status})`);
  const file = new File([await res.blob()], root.dataset.name || 'book');
  const view = document.createElement('foliate-view');
  view.id = 'foliate';
  document.getElementById('book-view').append(view);
  await view.open(file);
  // an EPUB's sections weighed as the reading service weighs them (else foliate's own weights)
  const weighed = sectionBounds(await sections, view.book.sections.length);
  const boundsOf = () => weighed ?? view.getSectionFractions();
  const applyStyles = () => {
    view.renderer.setAttribute('gap', gap());
    view.renderer.setStyles?.(bookCss());
  };
  view.renderer.setAttribute('margin', '48px');
  applyStyles();
  // only a move the reader asked for is saved (opening at the saved place is not a move)
  let moved = false;
  // another device's position, accepted: written back as it came until the reader moves on (the
  // page's start would read to the service as a disagreement with it)
  let adopted = null;
  const turn =
    (go) =>
    (...args) => {
      moved = true;
      adopted = null;
      return go(...args);
    };
  const left = turn(() => view.goLeft());
  const right = turn(() => view.goRight());
  const go = turn((target) => view.goTo(target));
  const notes = annotations({ view, item, root, say, go });
  const onKey = keys(left, right);
  document.addEventListener('keydown', onKey);
  view.addEventListener('load', (e) => {
    const { doc, index } = e.detail;
    doc.addEventListener('keydown', onKey);
    notes.onLoad(doc, index);
    // tap zones: the outer thirds of the page turn it (not while text is selected, nor on a highlight)
    doc.addEventListener('click', (ev) => {
      if (ev.target.closest?.('a[href]')) return;
      if (!doc.getSelection()?.isCollapsed) return;
      // the frame spans every column of the section: where the click is on the screen, in the book's box
      const frame = doc.defaultView.frameElement;
      const box = document.getElementById('book-view').getBoundingClientRect();
      const x = (frame ? frame.getBoundingClientRect().left : 0) + ev.clientX - box.left;
      setTimeout(() => {
        if (notes.hit()) return;
        if (x < box.width / 3) void left();
        else if (x > (2 * box.width) / 3) void right();
      }, 0);
    });
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
    const at = (share) => Math.min(1, Math.max(0, from + share * (to - from)));
    const fraction = at(startShare ?? (Number.isFinite(inSection) ? inSection : 0));
    root.dataset.fractionEnd = String(endShare === null ? fraction : at(endShare));
    const start = range.cloneRange();
    start.collapse(true);
    const cfi = view.getCFI(index, start);
    const label = view.lastLocation?.tocItem?.label?.trim();
    root.dataset.fraction = String(fraction);
    root.dataset.cfi = cfi;
    status.textContent = `${label ? `${label} · ` : ''}${pct(fraction)}`;
    if (moved) save(adopted ?? { percentage: Math.round(fraction * 10000) / 10000, epubcfi: cfi });
  });
  if (saved && isCfi(saved.epubcfi)) await view.init({ lastLocation: saved.epubcfi });
  else if (saved && typeof saved.percentage === 'number' && saved.percentage > 0) {
    await view.init({ showTextStart: false });
    if (weighed) await view.renderer.goTo(sectionAt(weighed, saved.percentage));
    else await view.goToFraction(saved.percentage);
  } else await view.init({ showTextStart: true });
  tableOfContents(view.book.toc ?? [], go);
  search({ view, go });
  void notes.load();
  document.getElementById('prev').addEventListener('click', left);
  document.getElementById('next').addEventListener('click', right);
  document.getElementById('font-smaller').addEventListener('click', () => {
    keep('font', Math.max(60, fontSize() - 10));
    applyStyles();
  });
  document.getElementById('font-larger').addEventListener('click', () => {
    keep('font', Math.min(250, fontSize() + 10));
    applyStyles();
  });
  bind('line-spacing', 'spacing', '1.5', applyStyles);
  bind('font-family', 'family', 'publisher', applyStyles);
  bind('margins', 'margins', 'normal', applyStyles);
  bind('reader-theme', 'theme', 'profile', () => {
    applyShell();
    applyStyles();
  });
  follow({
    item,
    mine,
    offer: offering((p) => {
      const jump = isCfi(p.epubcfi) ? go(p.epubcfi) : turn(() => (weighed ? view.renderer.goTo(sectionAt(weighed, p.percentage)) : view.goToFraction(p.percentage)))();
      adopted = isCfi(p.epubcfi) ? { percentage: p.percentage, epubcfi: p.epubcfi } : { percentage: p.percentage };
      return jump;
    }),
  });
  root.dataset.ready = 'true';
}

/** The book's contents as a list of links in the toolbar's "Contents" disclosure. */
function tableOfContents(toc, go) {
  const box = document.getElementById('toc-list');
  const list = (entries) => {
    const ul = document.createElement('ul');
    for (const t of entries) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = '#';
      a.textContent = (t.label || '').trim() || '—';
      a.addEventListener('click', (e) => {
        e.preventDefault();
        document.getElementById('toc').open = false;
        void go(t.href);
      });
      li.append(a);
      if (t.subitems?.length) li.append(list(t.subitems));
      ul.append(li);
    }
    return ul;
  };
  box.replaceChildren(toc.length ? list(toc) : document.createTextNode('This book has no table of contents.'));
}

/** Comics and PDFs: the page stream's pictures, one page or a two-page spread, left-to-right or right-to-left. */
async function pictures() {
  const count = Number(root.dataset.pageCount || '0');
  if (!count) throw new Error('this book has no pages to show');
  const pages = document.getElementById('pages');
  const rtl = document.getElementById('rtl');
  const spread = document.getElementById('spread');
  rtl.checked = setting(`rtl.${item}`, '0') === '1';
  spread.checked = setting('spread', '0') === '1';
  const width = () => Math.min(2400, Math.ceil((window.innerWidth * (window.devicePixelRatio || 1)) / (spread.checked ? 2 : 1)));
  // 0-based index of the first page shown
  let at = saved && Number.isInteger(saved.page) ? Math.min(count, Math.max(1, saved.page)) - 1 : 0;
  let opened = false;
  const show = () => {
    const n = spread.checked && at > 0 ? 2 : 1; // the cover stands alone in a spread
    const shown = [];
    for (let i = at; i < Math.min(count, at + n); i++) shown.push(i);
    pages.classList.toggle('rtl', rtl.checked);
    pages.replaceChildren(
      ...shown.map((i) => {
        const img = document.createElement('img');
        img.src = `/opds/pages/${encodeURIComponent(item)}/${i}?width=${width()}`;
        img.alt = `Page ${i + 1} of ${count}`;
        img.className = 'page-image';
        return img;
      }),
    );
    const last = shown[shown.length - 1];
    root.dataset.page = String(at + 1);
    root.dataset.percentage = String(count === 1 ? 1 : at / (count - 1));
    status.textContent = shown.length > 1 ? `Pages ${at + 1}–${last + 1} of ${count}` : `Page ${at + 1} of ${count}`;
    if (opened) save({ page: at + 1, page_count: count, percentage: count === 1 ? 1 : Math.round((at / (count - 1)) * 10000) / 10000 });
  };
  const step = () => (spread.checked && at > 0 ? 2 : 1);
  const forward = () => {
    if (at + step() < count) {
      at += step();
      show();
    }
  };
  const back = () => {
    if (at > 0) {
      at = Math.max(0, at - (spread.checked && at > 1 ? 2 : 1));
      show();
    }
  };
  // right-to-left: the left side goes on
  const left = () => (rtl.checked ? forward() : back());
  const right = () => (rtl.checked ? back() : forward());
  document.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowLeft') {
      if (e.target.closest?.('input, select, textarea')) return;
      e.preventDefault();
      left();
    } else if (e.key === 'ArrowRight') {
      if (e.target.closest?.('input, select, textarea')) return;
      e.preventDefault();
      right();
    } else keys(back, forward)(e);
  });
  document.getElementById('prev').addEventListener('click', left);
  document.getElementById('next').addEventListener('click', right);
  pages.addEventListener('click', (e) => {
    const box = pages.getBoundingClientRect();
    if (e.clientX < box.left + box.width / 3) left();
    else if (e.clientX > box.left + (2 * box.width) / 3) right();
  });
  // a horizontal swipe turns the page the way a finger drags it
  let touch = null;
  pages.addEventListener(
    'touchstart',
    (e) => {
      touch = e.touches.length === 1 ? { x: e.touches[0].clientX, y: e.touches[0].clientY } : null;
    },
    { passive: true },
  );
  pages.addEventListener('touchend', (e) => {
    const t = e.changedTouches[0];
    if (!touch || !t) return;
    const dx = t.clientX - touch.x;
    const dy = t.clientY - touch.y;
    touch = null;
    if (Math.abs(dx) < 50 || Math.abs(dx) < Math.abs(dy)) return;
    if (dx < 0) right();
    else left();
  });
  rtl.addEventListener('change', () => {
    keep(`rtl.${item}`, rtl.checked ? '1' : '0');
    show();
  });
  spread.addEventListener('change', () => {
    keep('spread', spread.checked ? '1' : '0');
    show();
  });
  bind('reader-theme', 'theme', 'profile', applyShell);
  follow({
    item,
    mine,
    offer: offering((p) => {
      if (!Number.isInteger(p.page)) return;
      at = Math.min(count, Math.max(1, p.page)) - 1;
      show();
    }),
  });
  show();
  opened = true;
  root.dataset.ready = 'true';
}

(root.dataset.kind === 'pages' ? pictures() : reflowable()).catch((e) => {
  const alert = document.getElementById('reader-error');
  alert.hidden = false;
  alert.textContent = `The book could not be opened: ${e instanceof Error ? e.message : String(e)}`;
});
