// The page images of the books the gateway streams (OPDS-PSE and the OPDS 2.0 page lists): CBZ
// and CBR archives, PDFs (rendered by poppler's pdftoppm when the host has it) and image-only
// EPUBs (every spine document is one picture and no text). Read from the file in place, one page
// at a time, with bounded concurrency and an LRU of rendered pages (docs/decisions.md, "OPDS 2.0
// and page streaming").
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { findExecutable, isPageName, naturalCompare } from '@bindery/platform';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';
import { cbzPage, imageType, listEntries, MAX_PAGE_BYTES, openZip, type Page, readEntry, showable } from './comic-pages';

export type StreamKind = 'cbz' | 'cbr' | 'pdf' | 'epub';
/** the format streamed when an item has several, best first */
export const STREAM_ORDER: readonly StreamKind[] = ['cbz', 'cbr', 'pdf', 'epub'];

export const PDFTOPPM_MISSING = 'PDF pages need pdftoppm (poppler-utils) on the gateway host';
const PDF_TIMEOUT_MS = 30_000;
/** pages rendered at once by this process (sharp, unrar, pdftoppm): bounds CPU and memory */
const RENDER_CONCURRENCY = 2;
const MAX_SPINE = 5000;
const MAX_XHTML_BYTES = 512 * 1024;

/** pdftoppm on PATH, looked up once per process. */
export const findPdftoppm = () => findExecutable('pdftoppm');

export class PageSourceError extends Error {}

// ---------------------------------------------------------------- archives

/** One page (0-based) of a CBR: the archive is read in place, the page unpacked to a private folder. */
async function cbrPage(file: string, index: number): Promise<Page | null> {
  const { createExtractorFromFile } = await import('node-unrar-js');
  const out = await mkdtemp(path.join(tmpdir(), 'bindery-pse-'));
  try {
    // archive names never become paths: the page is written under a name of ours
    const rar = await createExtractorFromFile({ filepath: file, targetPath: out, filenameTransform: () => 'page' });
    // synchronous from here on: the wasm module is shared by every archive this process opens
    const names: { name: string; size: number }[] = [];
    for (const h of rar.getFileList().fileHeaders) {
      if (!h.flags.directory && !h.flags.encrypted) names.push({ name: h.name.replace(/\\/gu, '/'), size: h.unpSize });
    }
    const pages = names.filter((n) => isPageName(n.name)).sort((a, b) => naturalCompare(a.name, b.name));
    const want = pages[index];
    if (!want) return null;
    if (want.size > MAX_PAGE_BYTES) throw new PageSourceError('page too large');
    let found = false;
    for (const f of rar.extract({ files: (h) => h.name.replace(/\\/gu, '/') === want.name }).files) {
      if (f.fileHeader.name.replace(/\\/gu, '/') === want.name) found = true;
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

// ---------------------------------------------------------------- image-only EPUB

const attrs = (tag: string): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/gu)) out[m[1]!.toLowerCase()] = decodeEntities(m[3] ?? m[4] ?? '');
  return out;
};
const decodeEntities = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&amp;/g, '&');

/** A reference inside the EPUB, resolved against the document that makes it; null when it leaves the book. */
function resolveRef(from: string, ref: string): string | null {
  const clean = ref.split('#', 1)[0]!.split('?', 1)[0]!;
  if (clean === '' || /^[a-z][a-z0-9+.-]*:/iu.test(clean)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(clean);
  } catch {
    return null;
  }
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), decoded));
  return joined.startsWith('../') || joined === '..' ? null : joined.replace(/^\.\//u, '');
}

/**
 * The page images of an EPUB whose every spine document is a single picture without text (a comic
 * or manga made into an EPUB), in reading order; null for any EPUB with text.
 */
export async function epubPages(file: string): Promise<string[] | null> {
  const zip = await openZip(file);
  try {
    const all = new Map((await listEntries(zip)).map((e) => [e.fileName, e]));
    const text = async (name: string) => {
      const e = all.get(name);
      return e ? (await readEntry(zip, e, MAX_XHTML_BYTES)).toString('utf8') : null;
    };
    const container = await text('META-INF/container.xml');
    const opfPath = container && /<rootfile\b[^>]*>/iu.exec(container) ? attrs(/<rootfile\b[^>]*>/iu.exec(container)![0])['full-path'] : undefined;
    const opf = opfPath ? await text(opfPath) : null;
    if (!opf || !opfPath) return null;
    const manifest = new Map<string, { href: string; type: string }>();
    for (const m of opf.matchAll(/<(?:\w+:)?item\b[^>]*>/giu)) {
      const a = attrs(m[0]);
      const href = a.href ? resolveRef(opfPath, a.href) : null;
      if (a.id && href) manifest.set(a.id, { href, type: (a['media-type'] ?? '').toLowerCase() });
    }
    const spine = [...opf.matchAll(/<(?:\w+:)?itemref\b[^>]*>/giu)].map((m) => attrs(m[0])).filter((a) => a.linear !== 'no');
    if (spine.length === 0 || spine.length > MAX_SPINE) return null;
    const pages: string[] = [];
    for (const ref of spine) {
      const item = ref.idref ? manifest.get(ref.idref) : undefined;
      if (!item) return null;
      if (item.type.startsWith('image/')) {
        pages.push(item.href);
        continue;
      }
      const doc = await text(item.href);
      if (doc === null) return null;
      const body = /<body\b[^>]*>([\s\S]*)<\/body>/iu.exec(doc)?.[1] ?? doc;
      const words = body
        .replace(/<(script|style|title)\b[\s\S]*?<\/\1>/giu, '')
        .replace(/<[^>]*>/gu, '')
        .replace(/&nbsp;|&#160;|&#xa0;|\s/giu, '');
      if (words !== '') return null;
      const refs = [...body.matchAll(/<(?:img|image|svg:image)\b[^>]*>/giu)].map((m) => {
        const a = attrs(m[0]);
        return a.src ?? a['xlink:href'] ?? a.href;
      });
      if (refs.length !== 1 || !refs[0]) return null;
      const img = resolveRef(item.href, refs[0]);
      if (!img || !all.has(img) || !isPageName(img)) return null;
      pages.push(img);
    }
    return pages;
  } finally {
    zip.close();
  }
}

async function epubPage(file: string, pages: string[], index: number): Promise<Page | null> {
  const name = pages[index];
  if (name === undefined) return null;
  const zip = await openZip(file);
  try {
    const e = (await listEntries(zip)).find((x) => x.fileName === name);
    if (!e) return null;
    const data = await readEntry(zip, e, MAX_PAGE_BYTES);
    return { data, type: imageType(data) ?? 'application/octet-stream' };
  } finally {
    zip.close();
  }
}

// ---------------------------------------------------------------- the source

export interface StreamFile {
  kind: StreamKind;
  abs: string;
}

/** Rendered pages and EPUB page lists, shared by every request of this process. */
export class PageSources {
  private limit = pLimit(RENDER_CONCURRENCY);
  private rendered = new LRUCache<string, Page>({ max: 2000, maxSize: 96 * 1024 * 1024, sizeCalculation: (p) => p.data.length || 1 });
  private epubs = new LRUCache<string, { pages: string[] | null }>({ max: 20_000 });
  private epubLimit = pLimit(4);

  /** The file's identity for the caches: a changed file is a new key. */
  private async version(abs: string): Promise<string> {
    const s = await stat(abs);
    return `${abs}|${s.size}|${s.mtimeMs}`;
  }

  /** An EPUB's page images when it is image-only (null otherwise), cached per file version. */
  async epubPageList(abs: string): Promise<string[] | null> {
    const v = await this.version(abs).catch(() => null);
    if (v === null) return null;
    const hit = this.epubs.get(v);
    if (hit) return hit.pages;
    const pages = await this.epubLimit(() => epubPages(abs)).catch(() => null);
    this.epubs.set(v, { pages });
    return pages;
  }

  /** Page `index` (0-based) as a reader can show it, at most `width` wide; null past the end. */
  async page(f: StreamFile, index: number, width: number | null, jpeg = false): Promise<Page | null> {
    const key = `${await this.version(f.abs)}|${index}|${width ?? ''}|${jpeg}`;
    const hit = this.rendered.get(key);
    if (hit) return hit;
    const out = await this.limit(async () => {
      let raw: Page | null;
      switch (f.kind) {
        case 'cbz':
          raw = await cbzPage(f.abs, index);
          break;
        case 'cbr':
          raw = await cbrPage(f.abs, index);
          break;
        case 'pdf':
          return pdfPage(f.abs, index, width);
        case 'epub': {
          const pages = await this.epubPageList(f.abs);
          raw = pages ? await epubPage(f.abs, pages, index) : null;
          break;
        }
      }
      return raw ? showable(raw, width, jpeg) : null;
    });
    if (out) this.rendered.set(key, out);
    return out;
  }
}
