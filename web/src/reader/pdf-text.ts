// A PDF page's text over its picture: the gateway reads the page's text runs with pdf.js and answers
// their boxes as shares of the page (/opds/pages/<id>/<n>/text); here each run becomes a transparent
// span over the picture's drawn area, its font height the box's and stretched to the box's width,
// so the text can be selected, copied and found in the page (docs/decisions.md, "PDF text layer").
// The text goes in as text only (textContent), never markup. A layer follows its picture's size
// (fit, zoom, spread, column) by a ResizeObserver; a page's text is asked for once, when its picture
// loads or is preloaded. A page without text gets no layer. A PDF kept in this browser reads its
// pages' texts from there (`source`), as they were kept with its pictures.

/** One run as the gateway answers it: its text and its box as shares of the page (0..1). */
export interface Run {
  str: string;
  x: number;
  y: number;
  w: number;
  h: number;
}
export interface PageText {
  page: number;
  width: number;
  height: number;
  items: Run[];
}

/** the family the spans are set in, and measured in */
const FONT = 'sans-serif';
let measurer: CanvasRenderingContext2D | null | undefined;
/** a string's width per pixel of font size in FONT (an estimate when there is no canvas) */
function widthPerPx(s: string): number {
  if (measurer === undefined) {
    measurer = document.createElement('canvas').getContext('2d');
    if (measurer) measurer.font = `100px ${FONT}`;
  }
  const w = measurer ? measurer.measureText(s).width / 100 : s.length * 0.5;
  return w > 0 ? w : 0.5;
}

/**
 * How a run is laid out in a layer of the page's shape (`aspect` = width / height): where it starts
 * and its size as percentages of the layer, its font size as a share of the layer's height, and the
 * horizontal stretch that makes its text as wide as its box (the same at any layer size).
 */
export function runStyle(run: Run, aspect: number, perPx: number): { left: string; top: string; font: number; stretch: number } {
  const pct = (v: number) => `${Math.round(v * 1_000_000) / 10_000}%`;
  const font = run.h;
  // the text's natural width, as a share of the layer's width: perPx × font height (share of H) × H / W
  const natural = (perPx * font) / aspect;
  const stretch = natural > 0 ? Math.round((run.w / natural) * 10_000) / 10_000 : 1;
  return { left: pct(run.x), top: pct(run.y), font, stretch };
}

/** The area an `object-fit: contain` picture is drawn in inside its box. */
export function drawnArea(boxW: number, boxH: number, naturalW: number, naturalH: number): { x: number; y: number; w: number; h: number } {
  if (!(naturalW > 0 && naturalH > 0 && boxW > 0 && boxH > 0)) return { x: 0, y: 0, w: boxW, h: boxH };
  const scale = Math.min(boxW / naturalW, boxH / naturalH);
  const w = naturalW * scale;
  const h = naturalH * scale;
  return { x: (boxW - w) / 2, y: (boxH - h) / 2, w, h };
}

/**
 * A search's query as the gateway's search reads it: its text taken literally, its spaces matching
 * any run of spaces, case-insensitive (here, in a kept PDF's search and in the marks of a hit).
 */
export const queryPattern = (query: string): RegExp =>
  new RegExp(
    query
      .trim()
      .replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')
      .replace(/\s+/gu, '\\s+'),
    'giu',
  );

/** A page text answer (the gateway's, or as kept) that can be laid out, else null. */
export const usablePageText = (t: PageText | null | undefined): PageText | null => (t && Array.isArray(t.items) && t.width > 0 && t.height > 0 ? t : null);

/**
 * Where `query` lies in a page's runs, read as the gateway's search reads them (the runs joined by a
 * space, the query's spaces matching any, case-insensitive): [run, from, to] for every part of a
 * match, in order, so a match across two runs (a line's end and the next line's start) is marked
 * in both.
 */
export function hitRanges(runs: string[], query: string): [number, number, number][] {
  if (!query.trim()) return [];
  const re = queryPattern(query);
  const starts: number[] = [];
  let joined = '';
  runs.forEach((r, i) => {
    if (i > 0) joined += ' ';
    starts.push(joined.length);
    joined += r;
  });
  const out: [number, number, number][] = [];
  let run = 0;
  for (const m of joined.matchAll(re)) {
    const a = m.index ?? 0;
    const b = a + m[0].length;
    // runs end before this match: never needed again (matches come in order)
    while (run < runs.length && (starts[run] ?? 0) + (runs[run]?.length ?? 0) <= a) run++;
    for (let i = run; i < runs.length && (starts[i] ?? 0) < b; i++) {
      const s = starts[i] ?? 0;
      const from = Math.max(a, s) - s;
      const to = Math.min(b, s + (runs[i]?.length ?? 0)) - s;
      if (to > from) out.push([i, from, to]);
    }
  }
  return out;
}

export interface TextLayers {
  /** a page picture was shown (or loaded again, sharper): its layer, once */
  attach(img: HTMLImageElement): void;
  /** ask for a page's text ahead (a preloaded page) */
  prefetch(index: number): void;
  /** mark `query` on page `index` (a search result went there) */
  mark(index: number, query: string): void;
  /** the pictures are about to be replaced */
  clear(): void;
}

export function textLayers(pages: HTMLElement, item: string, source?: (index: number) => Promise<PageText | null>): TextLayers {
  const texts = new Map<number, Promise<PageText | null>>();
  const layers = new Map<HTMLImageElement, HTMLElement>();
  let marked: { index: number; query: string } | null = null;

  const fetchText = (index: number) => {
    let p = texts.get(index);
    if (!p) {
      const asked = source
        ? source(index)
        : fetch(`/opds/pages/${encodeURIComponent(item)}/${index}/text`, { credentials: 'same-origin' }).then((r) => (r.ok ? (r.json() as Promise<PageText>) : null));
      p = asked.then(usablePageText).catch(() => null);
      // a failure is asked again next time the page is shown
      p.then((t) => {
        if (!t) texts.delete(index);
      });
      texts.set(index, p);
    }
    return p;
  };

  /** the layer over its picture's drawn area, in the scrolling box's coordinates */
  const place = (img: HTMLImageElement, layer: HTMLElement) => {
    if (!img.isConnected || !img.naturalWidth) {
      layer.hidden = true;
      return;
    }
    const area = drawnArea(img.clientWidth, img.clientHeight, img.naturalWidth, img.naturalHeight);
    layer.hidden = false;
    layer.style.left = `${img.offsetLeft + img.clientLeft + area.x}px`;
    layer.style.top = `${img.offsetTop + img.clientTop + area.y}px`;
    layer.style.width = `${area.w}px`;
    layer.style.height = `${area.h}px`;
    layer.style.setProperty('--layer-h', `${area.h}px`);
  };
  const placeAll = () => {
    for (const [img, layer] of layers) place(img, layer);
  };
  const resized = new ResizeObserver(placeAll);
  resized.observe(pages);

  const highlight = (layer: HTMLElement, query: string) => {
    for (const old of layer.querySelectorAll('mark')) old.replaceWith(...old.childNodes);
    layer.normalize();
    const spans = [...layer.querySelectorAll<HTMLElement>('span')];
    const texts = spans.map((span) => span.textContent ?? '');
    const bySpan = new Map<number, [number, number][]>();
    for (const [i, from, to] of hitRanges(texts, query)) {
      const ranges = bySpan.get(i);
      if (ranges) ranges.push([from, to]);
      else bySpan.set(i, [[from, to]]);
    }
    for (const [i, ranges] of bySpan) {
      const text = texts[i] ?? '';
      const parts: (string | HTMLElement)[] = [];
      let last = 0;
      for (const [from, to] of ranges) {
        parts.push(text.slice(last, from));
        const hit = document.createElement('mark');
        hit.className = 'text-hit';
        // text, never markup
        hit.textContent = text.slice(from, to);
        parts.push(hit);
        last = to;
      }
      parts.push(text.slice(last));
      spans[i]?.replaceChildren(...parts);
    }
  };

  const build = (text: PageText): HTMLElement => {
    const layer = document.createElement('div');
    layer.className = 'text-layer';
    layer.dataset.index = String(text.page);
    const aspect = text.width / text.height;
    for (const run of text.items) {
      if (typeof run.str !== 'string') continue;
      const s = runStyle(run, aspect, widthPerPx(run.str));
      const span = document.createElement('span');
      // text, never markup
      span.textContent = run.str;
      span.style.left = s.left;
      span.style.top = s.top;
      span.style.fontSize = `calc(var(--layer-h) * ${s.font})`;
      span.style.transform = `scaleX(${s.stretch})`;
      layer.append(span);
    }
    return layer;
  };

  return {
    attach(img) {
      // every picture: one that changes size moves the layers after it
      resized.observe(img);
      const index = Number(img.dataset.index);
      if (!Number.isInteger(index) || layers.has(img)) {
        const layer = layers.get(img);
        if (layer) place(img, layer);
        return;
      }
      void fetchText(index).then((text) => {
        if (!text || text.items.length === 0 || !img.isConnected || layers.has(img)) return;
        const layer = build(text);
        layers.set(img, layer);
        img.after(layer);
        place(img, layer);
        if (marked?.index === index) highlight(layer, marked.query);
        pages.dataset.textLayers = String(pages.querySelectorAll('.text-layer').length);
      });
    },
    prefetch(index) {
      void fetchText(index);
    },
    mark(index, query) {
      marked = { index, query };
      for (const [img, layer] of layers) if (Number(img.dataset.index) === index) highlight(layer, query);
    },
    clear() {
      resized.disconnect();
      resized.observe(pages);
      layers.clear();
    },
  };
}
