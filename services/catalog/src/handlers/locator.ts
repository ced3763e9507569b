// Locator requests from the reading service (never routed to users):
// - catalog.locator-index {sha256}: the locator index of an EPUB, gzipped JSON in base64. Indexes are
//   made by the pass after a scan (scanner/indexes.ts); one not made yet is made here, from the file
//   on disk, once its bytes are checked against the hash asked for.
// - catalog.locator-text {sha256, text, spine, offset}: where a reader's context text occurs in the
//   book, nearest the given position (white space runs compare as one space), with where the match
//   ends (a highlight's span). Book texts are kept in
//   a bounded cache, so a reader moving through one book reads its file once.
import { LRUCache } from 'lru-cache';
import { err, fail, ok, type Catalog, type Result } from '@bindery/contracts';
import { epubText } from '../formats/epub';
import { storeLocatorIndex, fileOf } from '../scanner/indexes';
import { loadLocatorIndexGz } from '../store/locator';
import type { Ctx } from './context';

const notFound = () => err(fail('not_found', 'locator index not found'));
const SHA = /^[0-9a-f]{64}$/;

export async function locatorIndex(ctx: Ctx, req: Catalog.CatalogRequest<'locator-index'>): Promise<Result<Catalog.CatalogResult<'locator-index'>>> {
  const sha256 = req.sha256.toLowerCase();
  if (!SHA.test(sha256)) return notFound();
  let gz = await loadLocatorIndexGz(ctx.db, sha256);
  // not built yet (the pass after a scan has not reached it, or it was catalogued before indexes): now
  if (!gz && (await storeLocatorIndex(ctx, sha256))) gz = await loadLocatorIndexGz(ctx.db, sha256);
  return gz ? ok({ sha256, index_gz: gz.toString('base64') }) : notFound();
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

export async function locatorText(ctx: Ctx, req: Catalog.CatalogRequest<'locator-text'>): Promise<Result<Catalog.CatalogResult<'locator-text'>>> {
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
