// The page images of the books the gateway streams (OPDS-PSE and the OPDS 2.0 page lists): CBZ
// and CBR archives, PDFs (rendered by poppler's pdftoppm when the host has it) and image-only
// EPUBs. Which entries of an archive or EPUB are its pages, and their order, is the catalog's
// alone: it records the list at scan time and the gateway reads exactly those entries (never a
// rule of its own). Read from the file in place, one page at a time; pictures are decoded and PDF
// pages drawn only in child processes under memory and time limits, a bounded number at once with a
// bounded queue, and rendered pages kept in an LRU (docs/decisions.md, "OPDS 2.0 and page
// streaming", "One page list", "Page rendering limits").
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { findExecutable } from '@bindery/platform';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';
import { imageType, MAX_PAGE_BYTES, type Page, SHOWABLE, zipPage } from './comic-pages';
import { childEnv, describe, type RenderLimits, RenderLimitError, renderPicture, runLimited } from './render-child';
import { fitted, imageSize, MAX_SIDE, pdfPixels, snapWidth } from './render-limits';

export type StreamKind = 'cbz' | 'cbr' | 'pdf' | 'epub';
/** the format streamed when an item has several, best first */
export const STREAM_ORDER: readonly StreamKind[] = ['cbz', 'cbr', 'pdf', 'epub'];

export const PDFTOPPM_MISSING = 'PDF pages need pdftoppm (poppler-utils) on the gateway host';

export interface PageRenderOptions extends RenderLimits {
  /** pages read or rendered at once by this process (unrar, the render children, pdftoppm) */
  concurrency: number;
  /** requests that may wait for one of those; past it a request is refused with PageBusyError */
  queue: number;
}

export const DEFAULT_PAGE_RENDER: PageRenderOptions = { concurrency: 2, queue: 16, memoryMb: 512, timeoutMs: 30_000 };
/** what a refused request is told to wait, in seconds */
export const BUSY_RETRY_SECONDS = 2;

/** pdftoppm on PATH, looked up once per process. */
export const findPdftoppm = () => findExecutable('pdftoppm');

export class PageSourceError extends Error {}
/** Every render slot is taken and the queue is full: try again later. */
export class PageBusyError extends Error {}
export { RenderLimitError };

// ---------------------------------------------------------------- archives

/** The entry `name` of a CBR: the archive is read in place, the page unpacked to a private folder. */
async function cbrPage(file: string, name: string): Promise<Page | null> {
  const { createExtractorFromFile } = await import('node-unrar-js');
  const out = await mkdtemp(path.join(tmpdir(), 'bindery-pse-'));
  try {
    // archive names never become paths: the page is written under a name of ours
    const rar = await createExtractorFromFile({ filepath: file, targetPath: out, filenameTransform: () => 'page' });
    // synchronous from here on: the wasm module is shared by every archive this process opens
    const slashes = (n: string) => n.replace(/\\/gu, '/');
    const want = [...rar.getFileList().fileHeaders].find((h) => !h.flags.directory && !h.flags.encrypted && slashes(h.name) === name);
    if (!want) return null;
    if (want.unpSize > MAX_PAGE_BYTES) throw new PageSourceError('page too large');
    let found = false;
    for (const f of rar.extract({ files: (h) => slashes(h.name) === name }).files) {
      if (slashes(f.fileHeader.name) === name) found = true;
    }
    if (!found) return null;
    const target = path.join(out, 'page');
    if ((await stat(target)).size > MAX_PAGE_BYTES) throw new PageSourceError('page too large');
    const data = await readFile(target);
    return { data, type: imageType(data) ?? 'application/octet-stream' };
  } finally {
    await rm(out, { recursive: true, force: true }).catch(() => {});
  }
}

/** pdfinfo next to pdftoppm: the page's size is read before it is drawn. */
const findPdfinfo = () => findExecutable('pdfinfo');

/** A PDF page's size in points as drawn (its rotation applied); null when the page is past the end. */
async function pdfPageSize(file: string, n: string, limits: RenderLimits): Promise<{ w: number; h: number } | null> {
  const exe = await findPdfinfo();
  if (!exe) throw new PageSourceError(PDFTOPPM_MISSING);
  const r = await runLimited(exe, ['-f', n, '-l', n, path.resolve(file)], { memoryMb: limits.memoryMb, timeoutMs: limits.timeoutMs, maxOutput: 1024 * 1024, env: childEnv() });
  if (r.code !== 0) {
    if (/Wrong page range|first page.*after the last page/iu.test(r.stderr)) return null;
    throw new Error(`pdfinfo failed: ${describe(r)}`);
  }
  const text = r.stdout.toString();
  const size = text.match(new RegExp(`^Page\\s+${n} size:\\s+([\\d.]+) x ([\\d.]+) pts`, 'mu'));
  if (!size) return null;
  const rot = Number(text.match(new RegExp(`^Page\\s+${n} rot:\\s+(\\d+)`, 'mu'))?.[1] ?? 0);
  const [w, h] = [Number(size[1]), Number(size[2])];
  if (!(w > 0 && h > 0)) throw new Error(`pdfinfo gave no page size: ${size[0]}`);
  return rot % 180 === 90 ? { w: h, h: w } : { w, h };
}

/**
 * One page (0-based) of a PDF as JPEG, `width` pixels wide (150 dpi when no width is asked), at
 * most MAX_DPI and MAX_SIDE: the page's size is read first, so pdftoppm is told the exact pixels.
 */
async function pdfPage(file: string, index: number, width: number | null, limits: RenderLimits): Promise<Page | null> {
  const exe = await findPdftoppm();
  if (!exe) throw new PageSourceError(PDFTOPPM_MISSING);
  const n = String(index + 1);
  const pts = await pdfPageSize(file, n, limits);
  if (!pts) return null;
  const px = pdfPixels(pts.w, pts.h, width);
  // to stdout (no -singlefile file to clean up); an absolute path is never taken for an option
  const args = ['-jpeg', '-jpegopt', 'quality=85', '-f', n, '-l', n, '-scale-to-x', String(px.width), '-scale-to-y', String(px.height), path.resolve(file)];
  const r = await runLimited(exe, args, { memoryMb: limits.memoryMb, timeoutMs: limits.timeoutMs, maxOutput: MAX_PAGE_BYTES, env: childEnv() });
  if (r.code === 0 && r.stdout.length > 0) return { data: r.stdout, type: 'image/jpeg' };
  if (r.timedOut || r.overflow || r.signal !== null) throw new RenderLimitError(`PDF page over the render limits (${describe(r)})`);
  throw new Error(`pdftoppm failed: ${describe(r)}`);
}

// ---------------------------------------------------------------- the source

export interface StreamFile {
  kind: StreamKind;
  abs: string;
  /** CBZ, CBR, EPUB: the catalog's page entries in reading order; null for a PDF (pages by number) */
  pages: readonly string[] | null;
}

/** Rendered pages, shared by every request of this process. */
export class PageSources {
  private limit: ReturnType<typeof pLimit>;
  private rendered = new LRUCache<string, Page>({ max: 2000, maxSize: 96 * 1024 * 1024, sizeCalculation: (p) => p.data.length || 1 });

  constructor(
    private opts: PageRenderOptions = DEFAULT_PAGE_RENDER,
    private warn?: (msg: string) => void,
  ) {
    this.limit = pLimit(opts.concurrency);
  }

  /** The file's identity for the caches: a changed file is a new key. */
  private async version(abs: string): Promise<string> {
    const s = await stat(abs);
    return `${abs}|${s.size}|${s.mtimeMs}`;
  }

  /**
   * Page `index` (0-based) as a reader can show it, at most `width` wide (snapped to WIDTHS), at most
   * MAX_SIDE on either side and never enlarged; null past the end. Throws PageBusyError when the
   * render queue is full and RenderLimitError for a page over the render limits.
   */
  async page(f: StreamFile, index: number, asked: number | null, jpeg = false): Promise<Page | null> {
    const name = f.pages ? f.pages[index] : undefined;
    if (f.kind !== 'pdf' && name === undefined) return null;
    const width = snapWidth(asked);
    const key = `${await this.version(f.abs)}|${index}|${name ?? ''}|${width ?? ''}|${jpeg}`;
    const hit = this.rendered.get(key);
    if (hit) return hit;
    if (this.limit.activeCount >= this.opts.concurrency && this.limit.pendingCount >= this.opts.queue) throw new PageBusyError('page renders are busy');
    const out = await this.limit(async () => {
      let raw: Page | null;
      switch (f.kind) {
        case 'pdf':
          return pdfPage(f.abs, index, width, this.opts);
        case 'cbr':
          raw = await cbrPage(f.abs, name!);
          break;
        case 'cbz':
        case 'epub':
          raw = await zipPage(f.abs, name!);
          break;
      }
      return raw ? this.showable(raw, width, jpeg) : null;
    });
    if (out) this.rendered.set(key, out);
    return out;
  }

  /**
   * A page picture unchanged when it is JPEG, PNG or GIF (only JPEG with `jpeg`), its header gives a
   * size no wider than `width` and within MAX_SIDE; otherwise decoded and scaled in a child process.
   */
  private async showable(page: Page, width: number | null, jpeg: boolean): Promise<Page> {
    const keep = jpeg ? page.type === 'image/jpeg' : SHOWABLE.has(page.type);
    const size = keep ? imageSize(page.data, page.type) : null;
    if (size) {
      const fit = fitted(size.width, size.height, width);
      if (fit.width === size.width && fit.height === size.height && size.width <= MAX_SIDE && size.height <= MAX_SIDE) return page;
    }
    return { data: await renderPicture(page.data, width, this.opts, this.warn), type: 'image/jpeg' };
  }
}
