// Locator requests from the reading service (never routed to users):
// - catalog.locator-index {sha256}: the locator index of an EPUB, gzipped JSON in base64. Indexes are
//   made at scan time; a file catalogued before indexes existed gets its index made here, from the
//   file on disk, once its bytes are checked against the hash asked for.
// - catalog.locator-text {sha256, text, spine, offset}: where a reader's context text occurs in the
//   book, nearest the given position (white space runs compare as one space), with where the match
//   ends (a highlight's span). Book texts are kept in
//   a bounded cache, so a reader moving through one book reads its file once.
import { readFile, stat } from 'node:fs/promises';
import { LRUCache } from 'lru-cache';
import { err, fail, ok, type Catalog, type Result } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { epubText } from '../formats/epub';
import { extract, hashBytes } from '../formats/index';
import { findLibrary } from '../store/libraries';
import { loadLocatorIndexGz, saveLocatorIndexes } from '../store/locator';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from './context';

/** books larger than this are not read again on request */
const MAX_LATE_BYTES = 256 * 1024 * 1024;
const notFound = () => err(fail('not_found', 'locator index not found'));
const SHA = /^[0-9a-f]{64}$/;

export async function locatorIndex(ctx: Ctx, req: Catalog.CatalogRequest<'locator-index'>): Promise<Result<unknown>> {
  const sha256 = req.sha256.toLowerCase();
  if (!SHA.test(sha256)) return notFound();
  let gz = await loadLocatorIndexGz(ctx.db, sha256);
  if (!gz) {
    const bytes = await fileOf(ctx, sha256);
    try {
      const x = bytes && (await extract(bytes.path, 'epub', { renderPdfCover: false, bytes: bytes.data }));
      if (x?.locator) {
        await saveLocatorIndexes(ctx.db, [{ sha256, index: x.locator }]);
        gz = await loadLocatorIndexGz(ctx.db, sha256);
      }
    } catch (e) {
      ctx.rt.log.debug({ sha256, err: e instanceof Error ? e.message : String(e) }, 'no locator index');
    }
  }
  return gz ? ok({ sha256, index_gz: gz.toString('base64') }) : notFound();
}

/** The bytes of an EPUB the catalog holds with this SHA-256, checked. */
export async function fileOf(ctx: Ctx, sha256: string): Promise<{ path: string; data: Buffer } | null> {
  const files = await ctx.db
    .withSchema(SCHEMA)
    .selectFrom('media_formats')
    .select(['library_id', 'rel_path'])
    .where('sha256', '=', sha256)
    .where('format', '=', 'epub')
    .where('present', '=', true)
    .limit(3)
    .execute();
  for (const f of files) {
    try {
      const lib = await findLibrary(ctx.db, f.library_id);
      const file = lib && (await resolveInside(lib.folders, f.rel_path));
      if (!file || (await stat(file.abs)).size > MAX_LATE_BYTES) continue;
      const data = await readFile(file.abs);
      if (hashBytes(data).sha256 === sha256) return { path: file.abs, data };
    } catch {
      // try the next copy
    }
  }
  return null;
}

interface BookText {
  /** per spine item: the text with white space runs as one space, and where each of its characters was */
  docs: { flat: string; at: Int32Array }[];
  bytes: number;
}

const texts = new LRUCache<string, BookText>({ maxSize: 96 * 1024 * 1024, sizeCalculation: (v) => Math.max(1, v.bytes) });

async function bookText(ctx: Ctx, sha256: string): Promise<BookText | null> {
  const hit = texts.get(sha256);
  if (hit) return hit;
  const file = await fileOf(ctx, sha256);
  if (!file) return null;
  // the bytes fileOf read (and hashed) are the book: not read from disk a second time
  const { texts: raw } = await epubText(file.path, file.data);
  const docs = raw.map((t) => {
    let flat = '';
    const at = new Int32Array(t.length + 1);
    let n = 0;
    let space = false;
    for (let i = 0; i < t.length; i++) {
      const ws = t[i] === ' ' || t[i] === '\n' || t[i] === '\t' || t[i] === '\r' || t[i] === '\f';
      if (ws && space) continue;
      at[n++] = i;
      flat += ws ? ' ' : t[i];
      space = ws;
    }
    at[n] = t.length;
    return { flat, at: at.slice(0, n + 1) };
  });
  const book = { docs, bytes: docs.reduce((s, d) => s + d.flat.length * 2 + d.at.byteLength, 0) };
  texts.set(sha256, book);
  return book;
}

export async function locatorText(ctx: Ctx, req: Catalog.CatalogRequest<'locator-text'>): Promise<Result<unknown>> {
  const sha256 = req.sha256.toLowerCase();
  if (!SHA.test(sha256)) return notFound();
  const book = await bookText(ctx, sha256).catch(() => null);
  if (!book) return notFound();
  const needle = req.text.replace(/\s+/g, ' ').trim();
  if (!needle) return ok({ found: null });
  const hint = Math.min(Math.max(0, req.spine), book.docs.length - 1);
  // the hinted document first (its occurrence nearest the offset), then outwards, nearest first
  const order = [hint];
  for (let d = 1; d < book.docs.length; d++) {
    if (hint + d < book.docs.length) order.push(hint + d);
    if (hint - d >= 0) order.push(hint - d);
  }
  for (const spine of order) {
    const doc = book.docs[spine]!;
    let best = -1;
    let at = -1;
    for (let i = doc.flat.indexOf(needle); i >= 0; i = doc.flat.indexOf(needle, i + 1)) {
      const raw = doc.at[i]!;
      if (spine !== hint) {
        best = raw;
        at = i;
        if (spine > hint) break;
        continue;
      }
      if (best < 0 || Math.abs(raw - req.offset) < Math.abs(best - req.offset)) {
        best = raw;
        at = i;
      }
    }
    // the match ends after its last character (the needle neither starts nor ends in white space)
    if (best >= 0) return ok({ found: { spine, offset: best, end: doc.at[at + needle.length - 1]! + 1 } });
  }
  return ok({ found: null });
}
