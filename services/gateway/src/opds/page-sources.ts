// The page images of the books the gateway streams (OPDS-PSE and the OPDS 2.0 page lists): CBZ
// and CBR archives, PDFs (rendered by poppler's pdftoppm when the host has it) and image-only
// EPUBs. Which entries of an archive or EPUB are its pages, and their order, is the catalog's
// alone: it records the list at scan time and the gateway reads exactly those entries (never a
// rule of its own). Read from the file in place, one page at a time, with bounded concurrency and
// an LRU of rendered pages (docs/decisions.md, "OPDS 2.0 and page streaming", "One page list").
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { findExecutable } from '@bindery/platform';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';
import { imageType, MAX_PAGE_BYTES, type Page, showable, zipPage } from './comic-pages';

export type StreamKind = 'cbz' | 'cbr' | 'pdf' | 'epub';
/** the format streamed when an item has several, best first */
export const STREAM_ORDER: readonly StreamKind[] = ['cbz', 'cbr', 'pdf', 'epub'];

export const PDFTOPPM_MISSING = 'PDF pages need pdftoppm (poppler-utils) on the gateway host';
const PDF_TIMEOUT_MS = 30_000;
/** pages rendered at once by this process (sharp, unrar, pdftoppm): bounds CPU and memory */
const RENDER_CONCURRENCY = 2;

/** pdftoppm on PATH, looked up once per process. */
export const findPdftoppm = () => findExecutable('pdftoppm');

export class PageSourceError extends Error {}

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

/** One page (0-based) of a PDF as JPEG, `width` pixels wide (150 dpi when no width is asked). */
async function pdfPage(file: string, index: number, width: number | null): Promise<Page | null> {
  const exe = await findPdftoppm();
  if (!exe) throw new PageSourceError(PDFTOPPM_MISSING);
  const dir = await mkdtemp(path.join(tmpdir(), 'bindery-pse-pdf-'));
  try {
    const prefix = path.join(dir, 'page');
    const n = String(index + 1);
    const size = width === null ? ['-r', '150'] : ['-scale-to-x', String(width), '-scale-to-y', '-1'];
    // an absolute path is never taken for an option
    const args = ['-jpeg', '-jpegopt', 'quality=85', '-f', n, '-l', n, ...size, '-singlefile', path.resolve(file), prefix];
    const failed = await new Promise<Error | null>((done) => {
      execFile(exe, args, { timeout: PDF_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024 }, (err) => done(err));
    });
    const out = `${prefix}.jpg`;
    const made = await stat(out).catch(() => null);
    // pdftoppm writes nothing for a page past the end
    if (!made) {
      if (failed && !/Wrong page range|first page.*after the last page/i.test(String((failed as { stderr?: string }).stderr ?? failed.message))) throw failed;
      return null;
    }
    if (made.size > MAX_PAGE_BYTES) throw new PageSourceError('page too large');
    return { data: await readFile(out), type: 'image/jpeg' };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
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
  private limit = pLimit(RENDER_CONCURRENCY);
  private rendered = new LRUCache<string, Page>({ max: 2000, maxSize: 96 * 1024 * 1024, sizeCalculation: (p) => p.data.length || 1 });

  /** The file's identity for the caches: a changed file is a new key. */
  private async version(abs: string): Promise<string> {
    const s = await stat(abs);
    return `${abs}|${s.size}|${s.mtimeMs}`;
  }

  /** Page `index` (0-based) as a reader can show it, at most `width` wide; null past the end. */
  async page(f: StreamFile, index: number, width: number | null, jpeg = false): Promise<Page | null> {
    const name = f.pages ? f.pages[index] : undefined;
    if (f.kind !== 'pdf' && name === undefined) return null;
    const key = `${await this.version(f.abs)}|${index}|${name ?? ''}|${width ?? ''}|${jpeg}`;
    const hit = this.rendered.get(key);
    if (hit) return hit;
    const out = await this.limit(async () => {
      let raw: Page | null;
      switch (f.kind) {
        case 'pdf':
          return pdfPage(f.abs, index, width);
        case 'cbr':
          raw = await cbrPage(f.abs, name!);
          break;
        case 'cbz':
        case 'epub':
          raw = await zipPage(f.abs, name!);
          break;
      }
      return raw ? showable(raw, width, jpeg) : null;
    });
    if (out) this.rendered.set(key, out);
    return out;
  }
}
