// The text of a PDF's pages for the web reader's text layer and its search (issue 45): pdf.js (through
// unpdf, as the catalog reads PDFs) gives each page's text runs, which become boxes as shares of the
// page (0..1) so a client lays them over the page picture at any size. No canvas is drawn. The work
// is bounded: files over MAX_TEXT_BYTES are not read, one document is parsed at a time for page
// reads and one for searches, each with a small queue, each read has a deadline, a search reads at
// most MAX_SEARCH_PAGES pages and answers at most MAX_HITS hits; pages read are kept in an LRU per
// file version (docs/decisions.md, "PDF text layer").
import { readFile, stat } from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';

/** One text run: its string and its box, as shares of the page's width and height (0..1, top left). */
export interface TextRun {
  str: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A page's text: its 0-based index, its size in points as shown, and its runs (none for a page without text). */
export interface PageText {
  page: number;
  width: number;
  height: number;
  items: TextRun[];
}

export interface SearchHit {
  /** 0-based, as in the page routes */
  page: number;
  pre: string;
  match: string;
  post: string;
}

export interface SearchAnswer {
  hits: SearchHit[];
  /** pages read (at most MAX_SEARCH_PAGES) */
  searched: number;
  /** whether hits or pages were left unread past the limits */
  truncated: boolean;
}

/** a PDF over this is not parsed for text (pdf.js holds it whole in memory, and about as much again while parsing) */
export const MAX_TEXT_BYTES = 64 * 1024 * 1024;
/** pages one search reads */
export const MAX_SEARCH_PAGES = 1000;
/** hits one search answers */
export const MAX_HITS = 200;
/** text runs one page answers */
export const MAX_RUNS = 20_000;
/** characters of context either side of a hit */
const CONTEXT = 40;
/** one page's text read (parsing the file included) */
export const TEXT_TIMEOUT_MS = 20_000;
/** a whole search */
export const SEARCH_TIMEOUT_MS = 60_000;

export const TEXT_TOO_LARGE = `PDF too large to read its text (over ${MAX_TEXT_BYTES / 1024 / 1024} MiB)`;
export const TEXT_TIMED_OUT = 'reading the PDF text took too long';
export const TEXT_BUSY = 'too many PDF texts are being read: try again in 2 seconds';

/** The PDF cannot be read (corrupt, truncated, protected, too large, too slow): its message is the caller's. */
export class PdfTextError extends Error {}
/** Every slot and the queue are taken. */
export class PdfTextBusyError extends Error {}

/** pdf.js's part of a text item: its string, its matrix and its advance (page units). */
export interface RawRun {
  str: string;
  transform: number[];
  width: number;
}

/** The page as pdf.js's viewport gives it: its size and its matrix from page space to the viewport (y down). */
export interface View {
  width: number;
  height: number;
  transform: number[];
}

/** [a b c d e f] × [a b c d e f], as pdf.js composes matrices (m1 after m2). */
export function multiply(m1: readonly number[], m2: readonly number[]): number[] {
  const [a1 = 0, b1 = 0, c1 = 0, d1 = 0, e1 = 0, f1 = 0] = m1;
  const [a2 = 0, b2 = 0, c2 = 0, d2 = 0, e2 = 0, f2 = 0] = m2;
  return [a1 * a2 + c1 * b2, b1 * a2 + d1 * b2, a1 * c2 + c1 * d2, b1 * c2 + d1 * d2, a1 * e2 + c1 * f2 + e1, b1 * e2 + d1 * f2 + f1];
}

/** the share of a glyph's height above the baseline: fonts' ascent is not read, this is the usual one */
const ASCENT = 0.8;
const share = (v: number) => Math.round(Math.min(1, Math.max(0, v)) * 10_000) / 10_000;

/**
 * The boxes of a page's text runs as shares of the viewport: each run's matrix composed with the
 * viewport's, the run spanning its advance along its direction and its font height across it (ascent
 * above the baseline, the rest below), the box around that. Runs of only blanks, and runs with no
 * size or outside the page, are left out.
 */
export function runBoxes(runs: readonly RawRun[], view: View): TextRun[] {
  const out: TextRun[] = [];
  if (!(view.width > 0 && view.height > 0)) return out;
  const scale = Math.hypot(view.transform[0] ?? 0, view.transform[1] ?? 0) || 1;
  for (const r of runs) {
    if (typeof r.str !== 'string' || r.str.trim() === '' || !Array.isArray(r.transform)) continue;
    const m = multiply(view.transform, r.transform);
    const size = Math.hypot(m[2]!, m[3]!);
    const along = (Number.isFinite(r.width) ? r.width : 0) * scale;
    const angle = Math.atan2(m[1]!, m[0]!);
    const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
    // y grows downwards in the viewport: "up" from the baseline is (sin, -cos)
    const [ux, uy] = [sin, -cos];
    const [x0, y0] = [m[4]!, m[5]!];
    const [x1, y1] = [x0 + along * cos, y0 + along * sin];
    const above = size * ASCENT;
    const below = size * (1 - ASCENT);
    const xs = [x0 + ux * above, x1 + ux * above, x0 - ux * below, x1 - ux * below];
    const ys = [y0 + uy * above, y1 + uy * above, y0 - uy * below, y1 - uy * below];
    if (![...xs, ...ys].every(Number.isFinite) || size <= 0) continue;
    const left = share(Math.min(...xs) / view.width);
    const top = share(Math.min(...ys) / view.height);
    const right = share(Math.max(...xs) / view.width);
    const bottom = share(Math.max(...ys) / view.height);
    if (right <= left || bottom <= top) continue;
    out.push({ str: r.str, x: left, y: top, w: share(right - left), h: share(bottom - top) });
    if (out.length >= MAX_RUNS) break;
  }
  return out;
}

/** The page's runs as one string: runs in reading order, a space between them. */
export const pageString = (items: readonly TextRun[]) =>
  items
    .map((i) => i.str)
    .join(' ')
    .replace(/\s+/gu, ' ');

/** Every hit of `query` in `text` (case-insensitive), with some context each side, at most `max`. */
export function findIn(text: string, query: string, page: number, max: number): SearchHit[] {
  const out: SearchHit[] = [];
  const re = new RegExp(query.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&').replace(/\s+/gu, '\\s+'), 'giu');
  for (const m of text.matchAll(re)) {
    if (out.length >= max) break;
    const at = m.index ?? 0;
    const start = Math.max(0, at - CONTEXT);
    const end = Math.min(text.length, at + m[0].length + CONTEXT);
    out.push({ page, pre: (start > 0 ? '…' : '') + text.slice(start, at), match: m[0], post: text.slice(at + m[0].length, end) + (end < text.length ? '…' : '') });
  }
  return out;
}

const deadline = <T>(work: Promise<T>, ms: number): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PdfTextError(TEXT_TIMED_OUT)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
};

/** What pdf.js said, as a short message for the caller. */
function unreadable(e: unknown): PdfTextError {
  if (e instanceof PdfTextError) return e;
  if ((e as { name?: unknown } | null)?.name === 'PasswordException') return new PdfTextError('cannot read the PDF text: password protected');
  const message = e instanceof Error ? e.message : String(e);
  return new PdfTextError(`cannot read the PDF text: ${message.split('\n')[0]?.slice(0, 100) || 'unreadable'}`);
}

type Doc = Awaited<ReturnType<Awaited<ReturnType<typeof import('unpdf')['getResolvedPDFJS']>>['getDocument']>['promise']>;

/** A page's text from an open document; `index` is 0-based. */
async function readPage(doc: Doc, index: number): Promise<PageText> {
  const page = await doc.getPage(index + 1);
  try {
    const view = page.getViewport({ scale: 1 });
    const content = await page.getTextContent();
    const runs: RawRun[] = content.items.flatMap((i) => ('str' in i ? [{ str: i.str, transform: i.transform as number[], width: i.width }] : []));
    return { page: index, width: Math.round(view.width * 100) / 100, height: Math.round(view.height * 100) / 100, items: runBoxes(runs, view) };
  } finally {
    page.cleanup();
  }
}

export interface PdfTextOptions {
  /** documents parsed at once for page reads, and as many for searches */
  concurrency: number;
  /** requests that may wait for one; past it PdfTextBusyError */
  queue: number;
}

/** Pages' text, shared by every request of this process. */
export class PdfTexts {
  /** page reads and searches each have their slots: a long search never holds up a page's layer */
  private limits: { page: ReturnType<typeof pLimit>; search: ReturnType<typeof pLimit> };
  private pages = new LRUCache<string, PageText>({ max: 20_000, maxSize: 64 * 1024 * 1024, sizeCalculation: (p) => 64 + p.items.reduce((n, i) => n + 48 + i.str.length * 2, 0) });

  constructor(private opts: PdfTextOptions = { concurrency: 1, queue: 8 }) {
    this.limits = { page: pLimit(opts.concurrency), search: pLimit(opts.concurrency) };
  }

  private async version(abs: string): Promise<{ key: string; size: number }> {
    const s = await stat(abs);
    return { key: `${abs}|${s.size}|${s.mtimeMs}`, size: s.size };
  }

  /** Runs `work` on the open document, in a slot, within `ms`; the document is always destroyed. */
  private async withDoc<T>(kind: 'page' | 'search', abs: string, size: number, ms: number, work: (doc: Doc) => Promise<T>): Promise<T> {
    if (size > MAX_TEXT_BYTES) throw new PdfTextError(TEXT_TOO_LARGE);
    const limit = this.limits[kind];
    if (limit.activeCount >= this.opts.concurrency && limit.pendingCount >= this.opts.queue) throw new PdfTextBusyError(TEXT_BUSY);
    return limit(async () => {
      const { getResolvedPDFJS } = await import('unpdf');
      const pdfjs = await getResolvedPDFJS();
      const data = new Uint8Array(await readFile(abs));
      const task = pdfjs.getDocument({ data, verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, enableXfa: false, stopAtErrors: false });
      try {
        return await deadline(
          task.promise.then((doc) => work(doc)),
          ms,
        );
      } catch (e) {
        throw unreadable(e);
      } finally {
        // destroying the loading task frees the document and pdf.js's memory
        await task.destroy().catch(() => {});
      }
    });
  }

  /** Page `index` (0-based) of the PDF at `abs`; null past its end. */
  async page(abs: string, index: number): Promise<PageText | null> {
    const v = await this.version(abs);
    const key = `${v.key}|${index}`;
    const hit = this.pages.get(key);
    if (hit) return hit;
    return this.withDoc('page', abs, v.size, TEXT_TIMEOUT_MS, async (doc) => {
      if (index >= doc.numPages) return null;
      const text = await readPage(doc, index);
      this.pages.set(key, text);
      return text;
    });
  }

  /**
   * The pages of the PDF at `abs` where `query` is, in page order, within the limits. `count`, the
   * catalog's page count: when every page is already read, the file is not opened again.
   */
  async search(abs: string, query: string, count?: number): Promise<SearchAnswer> {
    const v = await this.version(abs);
    const hits: SearchHit[] = [];
    let searched = 0;
    let truncated = false;
    const scan = async (text: PageText) => {
      searched++;
      const found = findIn(pageString(text.items), query, text.page, MAX_HITS - hits.length + 1);
      hits.push(...found);
      if (hits.length > MAX_HITS) {
        hits.length = MAX_HITS;
        truncated = true;
      }
    };
    const known = count !== undefined && count > 0 && count <= MAX_SEARCH_PAGES ? Array.from({ length: count }, (_, i) => this.pages.get(`${v.key}|${i}`)) : [];
    if (known.length > 0 && known.every((p) => p !== undefined)) {
      for (const text of known) {
        if (hits.length >= MAX_HITS && truncated) break;
        await scan(text!);
      }
      return { hits, searched, truncated };
    }
    await this.withDoc('search', abs, v.size, SEARCH_TIMEOUT_MS, async (doc) => {
      const count = Math.min(doc.numPages, MAX_SEARCH_PAGES);
      if (doc.numPages > MAX_SEARCH_PAGES) truncated = true;
      for (let i = 0; i < count && !(truncated && hits.length >= MAX_HITS); i++) {
        const key = `${v.key}|${i}`;
        let text = this.pages.get(key);
        if (!text) {
          text = await readPage(doc, i);
          this.pages.set(key, text);
        }
        await scan(text);
      }
    });
    return { hits, searched, truncated };
  }
}
