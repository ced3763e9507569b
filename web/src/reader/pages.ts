// Comics and PDFs: pictures from the gateway's page stream (/opds/pages/<id>/<n>), one page or a
// two-page spread, left-to-right or right-to-left, or every page in one column (webtoons). A page
// fits the screen, its width or its height, or shows at its own size; it zooms by ctrl+wheel (a
// trackpad's pinch), a two-finger pinch or a double click/tap, and pans when zoomed. A slider with a
// thumbnail moves anywhere; the next pages are asked for before they are needed. A book kept in this
// browser (store.ts) shows its kept pictures instead, as blob: addresses made as a picture is shown
// and revoked when it is dropped; they are all one width, so a zoom enlarges them.
import { byId } from './dom';
import { type Chrome, pageKeys, zone } from './input';
import { t } from './messages';
import { type PageText, type TextLayers, textLayers } from './pdf-text';
import { bind, keep, setting } from './settings';

const MAX_ZOOM = 5;
const PRELOAD = 3;
const FITS = ['screen', 'width', 'height', 'original'];

/** A page position to save: the page, the count and the share of the book. */
export interface PagePosition {
  page: number;
  page_count: number;
  percentage: number;
}

/** A comic's or PDF's pages kept in this browser: each page's picture and (a PDF's) text. */
export interface KeptPages {
  count: number;
  picture(index: number): Promise<Blob | null>;
  text(index: number): Promise<PageText | null>;
}

interface Options {
  root: HTMLElement;
  item: string;
  /** the pages kept in this browser, read instead of the page stream */
  kept?: KeptPages | null;
  saved: { page?: number | null } | null;
  save: (position: PagePosition) => void;
  status: HTMLElement;
  chrome: Chrome;
}

export function pictures({ root, item, kept, saved, save, status, chrome }: Options): { jump: (page: number) => void; layers: TextLayers | null } {
  const count = kept?.count ?? Number(root.dataset.pageCount || '0');
  if (!count) throw new Error(t('reader.noPages'));
  const pages = byId('pages');
  // a PDF's pages carry their text over the picture (pdf-text.ts); comics have none
  const layers = root.dataset.format === 'pdf' ? textLayers(pages, item, kept ? (i) => kept.text(i) : undefined) : null;
  const rtl = byId('rtl', HTMLInputElement);
  const spread = byId('spread', HTMLInputElement);
  const vertical = byId('vertical', HTMLInputElement);
  const fit = byId('fit', HTMLSelectElement);
  const slider = byId('page-slider', HTMLInputElement);
  rtl.checked = setting(`rtl.${item}`, '0') === '1';
  spread.checked = setting('spread', '0') === '1';
  vertical.checked = setting(`vertical.${item}`, '0') === '1';
  const fitNow = () => (FITS.includes(fit.value) ? fit.value : 'screen');
  const dpr = () => window.devicePixelRatio || 1;
  const width = () => Math.min(2400, Math.ceil((window.innerWidth * dpr()) / (spread.checked && !vertical.checked ? 2 : 1)));
  const url = (i: number, w = width()) => `/opds/pages/${encodeURIComponent(item)}/${i}?width=${w}`;
  /** what a page's picture is known by: its address, or its page for a kept picture (one width) */
  const key = (i: number) => (kept ? `kept:${i}` : url(i));
  // the blob: address each picture of a kept book shows, revoked when the picture is dropped
  const blobs = new Map<HTMLImageElement, string>();
  const release = (img: HTMLImageElement) => {
    const u = blobs.get(img);
    if (u) URL.revokeObjectURL(u);
    blobs.delete(img);
  };
  /** Shows page `i` in `img`: the page stream's picture at width `w`, or the kept one. */
  const load = (img: HTMLImageElement, i: number, w = width()): Promise<void> => {
    img.dataset.asked = String(i);
    if (!kept) {
      img.src = url(i, w);
      return Promise.resolve();
    }
    return kept.picture(i).then((blob) => {
      // another page was asked for meanwhile (a slider's thumbnail)
      if (img.dataset.asked !== String(i)) return;
      // a page missing from the store: the page stream's, when there is a network
      if (!blob) {
        if (navigator.onLine) img.src = url(i, w);
        return;
      }
      release(img);
      const u = URL.createObjectURL(blob);
      blobs.set(img, u);
      img.src = u;
    });
  };
  // 0-based index of the first page shown
  let at = saved && typeof saved.page === 'number' && Number.isInteger(saved.page) ? Math.min(count, Math.max(1, saved.page)) - 1 : 0;
  let opened = false;
  let zoom = 1;
  // the pages ahead, loaded and decoded before they are shown: a turn moves the decoded picture
  // itself onto the screen (a new element for the same address would decode it again)
  const preloaded = new Map<string, HTMLImageElement>();
  const preload = (from: number) => {
    for (let i = from; i < Math.min(count, from + PRELOAD); i++) {
      const u = key(i);
      if (preloaded.has(u)) continue;
      layers?.prefetch(i);
      const img = image(i);
      img.decoding = 'async';
      load(img, i)
        .then(() => img.decode())
        .catch(() => undefined);
      preloaded.set(u, img);
    }
    // only the pages near the reader stay decoded
    for (const [u, img] of preloaded) {
      const i = Number(img.dataset.index);
      if (!img.isConnected && (u !== key(i) || i < from - PRELOAD - 2 || i >= from + PRELOAD)) preloaded.delete(u);
    }
    sweep();
  };
  /** a kept picture neither shown nor preloaded: its blob: address goes */
  const sweep = () => {
    if (!kept) return;
    const held = new Set(preloaded.values());
    for (const img of [...blobs.keys()]) if (!img.isConnected && !held.has(img)) release(img);
  };
  const image = (i: number) => {
    const img = document.createElement('img');
    img.alt = t('reader.pageOf', { page: i + 1, count });
    img.className = 'page-image';
    img.dataset.index = String(i);
    img.draggable = false;
    if (layers) img.addEventListener('load', () => layers.attach(img));
    return img;
  };
  const shownOf = () => {
    const n = spread.checked && at > 0 ? 2 : 1; // the cover stands alone in a spread
    const shown = [];
    for (let i = at; i < Math.min(count, at + n); i++) shown.push(i);
    return shown;
  };
  const place = (shown: number[]) => {
    const last = shown[shown.length - 1] ?? at;
    root.dataset.page = String(at + 1);
    root.dataset.percentage = String(count === 1 ? 1 : at / (count - 1));
    slider.value = String(at + 1);
    slider.setAttribute('aria-valuetext', t('reader.pageOf', { page: at + 1, count }));
    status.textContent = shown.length > 1 ? t('reader.pagesOf', { from: at + 1, to: last + 1, count }) : t('reader.pageOf', { page: at + 1, count });
    if (opened) save({ page: at + 1, page_count: count, percentage: count === 1 ? 1 : Math.round((at / (count - 1)) * 10000) / 10000 });
  };
  const classes = () => {
    // the fit and a spread are attributes: the classes say the direction and the mode
    pages.className = `pages${rtl.checked && !vertical.checked ? ' rtl' : ''}${vertical.checked ? ' vertical' : ''}`;
    pages.dataset.fit = fitNow();
    pages.toggleAttribute('data-spread', spread.checked && !vertical.checked);
    root.dataset.mode = vertical.checked ? 'vertical' : 'paged';
    root.dataset.fit = fitNow();
  };

  // one page or a spread
  const showPaged = () => {
    unzoom();
    const shown = shownOf();
    layers?.clear();
    pages.replaceChildren(
      ...shown.map((i) => {
        const ready = preloaded.get(key(i));
        if (ready) return ready;
        const img = image(i);
        void load(img, i);
        return img;
      }),
    );
    // a picture loaded before it was placed: its text layer now that it is on the screen
    if (layers) for (const img of pages.querySelectorAll<HTMLImageElement>('img.page-image')) if (img.complete && img.naturalWidth > 0) layers.attach(img);
    pages.scrollTo(0, 0);
    place(shown);
    preload((shown[shown.length - 1] ?? at) + 1);
  };

  // every page in one column, each asked for as it comes near the screen
  let watcher: IntersectionObserver | null = null;
  let scrolling = 0;
  const showColumn = () => {
    unzoom();
    watcher?.disconnect();
    watcher = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          const img = e.target;
          if (!e.isIntersecting || !(img instanceof HTMLImageElement)) continue;
          if (!img.dataset.asked) void load(img, Number(img.dataset.index));
          watcher?.unobserve(img);
        }
      },
      { root: pages, rootMargin: '150% 0px' },
    );
    const imgs: HTMLImageElement[] = [];
    for (let i = 0; i < count; i++) {
      const img = image(i);
      img.loading = 'eager';
      imgs.push(img);
    }
    layers?.clear();
    pages.replaceChildren(...imgs);
    sweep();
    for (const img of imgs) watcher.observe(img);
    const first = imgs[at];
    if (first) {
      void load(first, at);
      first.scrollIntoView({ block: 'start' });
    }
    place([at]);
  };
  // the page at the top of the column is the place
  pages.addEventListener('scroll', () => {
    if (!vertical.checked) return;
    clearTimeout(scrolling);
    scrolling = setTimeout(() => {
      // the column may have been left meanwhile: a paged view's single picture is no place
      if (!vertical.checked) return;
      const top = pages.getBoundingClientRect().top + 1;
      const imgs = [...pages.querySelectorAll<HTMLImageElement>('.page-image')];
      let i = imgs.findIndex((img) => img.getBoundingClientRect().bottom > top);
      if (i < 0) i = count - 1;
      if (i !== at) {
        at = i;
        place([at]);
        chrome.turned();
      }
    }, 120);
  });
  const show = () => {
    classes();
    if (vertical.checked) showColumn();
    else showPaged();
  };

  const step = () => (spread.checked && at > 0 ? 2 : 1);
  const goTo = (i: number) => {
    at = Math.min(count - 1, Math.max(0, i));
    if (vertical.checked) {
      pages.querySelector(`.page-image[data-index="${at}"]`)?.scrollIntoView({ block: 'start' });
      place([at]);
    } else showPaged();
    chrome.turned();
  };
  const forward = () => {
    if (vertical.checked) return at + 1 < count && goTo(at + 1);
    if (at + step() < count) goTo(at + step());
  };
  const back = () => {
    if (vertical.checked) return at > 0 && goTo(at - 1);
    if (at > 0) goTo(at - (spread.checked && at > 1 ? 2 : 1));
  };
  // right-to-left: the left side goes on
  const left = () => (rtl.checked && !vertical.checked ? forward() : back());
  const right = () => (rtl.checked && !vertical.checked ? back() : forward());
  document.addEventListener('keydown', pageKeys({ prev: back, next: forward, left, right }));
  byId('prev').addEventListener('click', left);
  byId('next').addEventListener('click', right);

  // zoom: the images' width times `zoom`, the point under the pointer kept where it is
  let base: number[] = [];
  function unzoom() {
    zoom = 1;
    pages.classList.remove('zoomed');
    for (const img of pages.querySelectorAll<HTMLImageElement>('.page-image')) img.style.width = '';
    root.dataset.zoom = '1';
  }
  const zoomTo = (z: number, cx: number, cy: number) => {
    const next = Math.min(MAX_ZOOM, Math.max(1, z));
    if (next === zoom) return;
    const imgs = [...pages.querySelectorAll<HTMLImageElement>('.page-image')];
    if (zoom === 1) base = imgs.map((img) => img.getBoundingClientRect().width);
    const box = pages.getBoundingClientRect();
    // the point under the pointer, as a share of the content, before
    const px = (pages.scrollLeft + (cx - box.left)) / Math.max(1, pages.scrollWidth);
    const py = (pages.scrollTop + (cy - box.top)) / Math.max(1, pages.scrollHeight);
    zoom = next;
    if (zoom === 1) return unzoom();
    pages.classList.add('zoomed');
    imgs.forEach((img, i) => {
      img.style.width = `${Math.round((base[i] || box.width) * zoom)}px`;
      // a sharper picture for a page shown larger than it was asked for (a kept one is enlarged: it has one width)
      const need = Math.min(2400, Math.ceil((base[i] || box.width) * zoom * dpr()));
      if (!kept && !vertical.checked && need > width() * 1.2 && !img.dataset.sharp) {
        img.dataset.sharp = '1';
        void load(img, Number(img.dataset.index), need);
      }
    });
    pages.scrollLeft = px * pages.scrollWidth - (cx - box.left);
    pages.scrollTop = py * pages.scrollHeight - (cy - box.top);
    root.dataset.zoom = String(Math.round(zoom * 100) / 100);
  };
  pages.addEventListener(
    'wheel',
    (e) => {
      if (!e.ctrlKey) return;
      e.preventDefault();
      zoomTo(zoom * Math.exp(-e.deltaY * 0.01), e.clientX, e.clientY);
    },
    { passive: false },
  );
  const toggleZoom = (x: number, y: number) => zoomTo(zoom > 1 ? 1 : 2.5, x, y);

  // a mouse: a click on a side turns (once it is sure it is no double click), a double click zooms,
  // a drag pans a zoomed page
  let clickTimer = 0;
  let dragged = false;
  let down: { x: number; y: number } | null = null;
  pages.addEventListener('click', (e) => {
    // a drag that selected text in a PDF's text layer is no tap
    const moved = down !== null && Math.hypot(e.clientX - down.x, e.clientY - down.y) > 4;
    if (dragged || (moved && e.detail < 2)) return;
    clearTimeout(clickTimer);
    if (e.detail >= 2) return toggleZoom(e.clientX, e.clientY);
    const box = pages.getBoundingClientRect();
    const z = zone(e.clientX, box.left, box.width);
    const act = () => (z === 'left' ? left() : z === 'right' ? right() : chrome.toggle());
    if (z === 'centre') clickTimer = setTimeout(act, 250);
    else if (zoom > 1) clickTimer = setTimeout(act, 250);
    else act();
  });
  pages.addEventListener('dblclick', (e) => e.preventDefault());
  pages.addEventListener('mousedown', (e) => {
    dragged = false;
    down = { x: e.clientX, y: e.clientY };
    if (zoom === 1 || e.button !== 0) return;
    e.preventDefault();
    const start = { x: e.clientX, y: e.clientY, l: pages.scrollLeft, t: pages.scrollTop };
    const move = (m: MouseEvent) => {
      if (Math.abs(m.clientX - start.x) + Math.abs(m.clientY - start.y) > 4) dragged = true;
      pages.scrollLeft = start.l - (m.clientX - start.x);
      pages.scrollTop = start.t - (m.clientY - start.y);
    };
    const up = () => {
      removeEventListener('mousemove', move);
      removeEventListener('mouseup', up);
      setTimeout(() => {
        dragged = false;
      }, 0);
    };
    addEventListener('mousemove', move);
    addEventListener('mouseup', up);
  });

  // a finger: a swipe turns the page the way it drags it (not when zoomed or in a column, which
  // scroll), two fingers pinch, a tap acts on its zone, a double tap zooms
  let touch: { x: number; y: number; at: number } | null = null;
  let pinch: { d: number; z: number } | null = null;
  let lastTap: { x: number; y: number; at: number } | null = null;
  /** the distance between two fingers */
  const dist = (a: Touch, b: Touch) => Math.hypot(a.clientX - b.clientX, a.clientY - b.clientY);
  pages.addEventListener(
    'touchstart',
    (e) => {
      const [a, b] = e.touches;
      if (e.touches.length === 2 && a && b) {
        touch = null;
        pinch = { d: dist(a, b), z: zoom };
      } else if (e.touches.length === 1 && a) {
        touch = { x: a.clientX, y: a.clientY, at: Date.now() };
      }
    },
    { passive: true },
  );
  pages.addEventListener(
    'touchmove',
    (e) => {
      const [a, b] = e.touches;
      if (!pinch || e.touches.length !== 2 || !a || !b) return;
      e.preventDefault();
      const cx = (a.clientX + b.clientX) / 2;
      const cy = (a.clientY + b.clientY) / 2;
      zoomTo(pinch.z * (dist(a, b) / pinch.d), cx, cy);
    },
    { passive: false },
  );
  pages.addEventListener('touchend', (e) => {
    if (pinch) {
      if (e.touches.length === 0) pinch = null;
      return;
    }
    const t = e.changedTouches[0];
    if (!touch || !t) return;
    const dx = t.clientX - touch.x;
    const dy = t.clientY - touch.y;
    const quick = Date.now() - touch.at < 400;
    touch = null;
    if (Math.abs(dx) < 10 && Math.abs(dy) < 10 && quick) {
      // a tap: its click is not wanted (it would come late and count twice)
      if (e.cancelable) e.preventDefault();
      clearTimeout(clickTimer);
      const now = Date.now();
      if (lastTap && now - lastTap.at < 300 && Math.hypot(t.clientX - lastTap.x, t.clientY - lastTap.y) < 40) {
        lastTap = null;
        return toggleZoom(t.clientX, t.clientY);
      }
      lastTap = { at: now, x: t.clientX, y: t.clientY };
      const box = pages.getBoundingClientRect();
      const z = zone(t.clientX, box.left, box.width);
      clickTimer = setTimeout(() => (z === 'left' ? left() : z === 'right' ? right() : chrome.toggle()), 300);
      return;
    }
    if (zoom > 1 || vertical.checked) return;
    if (Math.abs(dx) < 50 || Math.abs(dx) < Math.abs(dy)) return;
    if (dx < 0) right();
    else left();
  });

  // the slider: a thumbnail of the page it points at while it moves; let go, it goes there
  const thumb = byId('thumb');
  const thumbImage = byId('thumb-image', HTMLImageElement);
  const caption = byId('thumb-caption');
  slider.max = String(count);
  slider.addEventListener('input', () => {
    const n = Number(slider.value);
    thumb.hidden = false;
    void load(thumbImage, n - 1, Math.ceil(128 * dpr()));
    caption.textContent = t('reader.pageOf', { page: n, count });
  });
  slider.addEventListener('change', () => {
    thumb.hidden = true;
    goTo(Number(slider.value) - 1);
  });
  slider.addEventListener('blur', () => {
    thumb.hidden = true;
  });

  rtl.addEventListener('change', () => {
    keep(`rtl.${item}`, rtl.checked ? '1' : '0');
    show();
  });
  spread.addEventListener('change', () => {
    keep('spread', spread.checked ? '1' : '0');
    show();
  });
  vertical.addEventListener('change', () => {
    keep(`vertical.${item}`, vertical.checked ? '1' : '0');
    show();
  });
  bind('fit', 'fit', 'screen', () => {
    classes();
    unzoom();
  });
  show();
  opened = true;
  return { jump: (page: number) => goTo(page - 1), layers };
}
