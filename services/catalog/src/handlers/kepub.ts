// catalog.kepub {sha256, part}: an EPUB the catalog holds, as a KEPUB for a Kobo. Made from the file
// on disk (its bytes checked against the hash asked for) on the first request, then kept by that
// hash; a book converted while another request waits for it is converted once.
import { gzipSync } from 'node:zlib';
import { Catalog, err, fail, ok, type Result } from '@bindery/contracts';
import { KEPUB_VERSION } from '../formats/kepub';
import { convertOffThread } from '../formats/book-thread';
import { loadKepub, purgeStaleKepubs, saveKepub, type StoredKepub } from '../store/kepubs';
import type { Ctx } from './context';
import { fileOf } from '../scanner/indexes';

const SHA = /^[0-9a-f]{64}$/;
const notFound = () => err(fail('not_found', 'kepub not found'));
/** A KEPUB in hand: its bytes, and its span map gzipped (made when first asked: a download needs none) */
interface Made {
  data: Buffer;
  spansGz(): Buffer;
}
const making = new Map<string, Promise<Made | null>>();
/** stale KEPUBs (of files that changed or went) are purged at most this often: a sweep of the table
 * after every conversion cost more than the conversion in embedded mode, where the database shares the thread */
const PURGE_EVERY_MS = 10 * 60_000;
let lastPurge = 0;
const STORE_AFTER_MS = 1000;

const stored = (k: StoredKepub): Made => ({ data: k.data, spansGz: () => k.spans });

function made(data: Buffer, spans: Catalog.SpanMap): Made {
  let gz: Buffer | undefined;
  return { data, spansGz: () => (gz ??= gzipSync(JSON.stringify(spans))) };
}

async function kepubOf(ctx: Ctx, sha256: string): Promise<Made | null> {
  // one being made (or just made, not yet stored) first: no database read on a Kobo's second request
  let p = making.get(sha256);
  if (p) return p;
  const hit = await loadKepub(ctx.db, sha256, KEPUB_VERSION);
  if (hit) return stored(hit);
  p = making.get(sha256);
  if (!p) {
    const done = () => making.delete(sha256);
    p = (async () => {
      const file = await fileOf(ctx, sha256);
      if (!file) return null;
      try {
        const k = await convertOffThread(file.data);
        return made(k.data, k.spans);
      } catch (e) {
        ctx.rt.log.warn({ sha256, err: e instanceof Error ? e.message : String(e) }, 'no KEPUB made');
        return null;
      }
    })();
    // kept off the answer's path: the KEPUB is sent while it is stored (until then, a second request
    // for it waits on this one instead of converting again); a new KEPUB also clears, at most every
    // PURGE_EVERY_MS, the ones of files that changed since (a cache, never a loss)
    void p.then(async (k) => {
      // after the answer has gone: in embedded mode the database (PGlite) works on this same thread,
      // and storing ~200 KB of bytea holds it for tens of milliseconds
      await new Promise((r) => setTimeout(r, STORE_AFTER_MS));
      try {
        if (k) {
          await saveKepub(ctx.db, sha256, { data: k.data, spans: k.spansGz(), v: KEPUB_VERSION });
          if (Date.now() - lastPurge > PURGE_EVERY_MS) {
            lastPurge = Date.now();
            await purgeStaleKepubs(ctx.db);
          }
        }
      } catch (e) {
        ctx.rt.log.warn({ sha256, err: e instanceof Error ? e.message : String(e) }, 'KEPUB not stored');
      } finally {
        done();
      }
    }, done);
    making.set(sha256, p);
  }
  return p;
}

export async function kepub(ctx: Ctx, req: Catalog.CatalogRequest<'kepub'>): Promise<Result<Catalog.CatalogResult<'kepub'>>> {
  const sha256 = req.sha256.toLowerCase();
  if (!SHA.test(sha256)) return notFound();
  const k = await kepubOf(ctx, sha256);
  if (!k) return notFound();
  const size = k.data.length;
  const parts = Math.max(1, Math.ceil(size / Catalog.KEPUB_PART_BYTES));
  if (req.spans_only) return ok({ sha256, size, parts, spans_gz: k.spansGz().toString('base64') });
  if (req.part >= parts) return notFound();
  const data = k.data.subarray(req.part * Catalog.KEPUB_PART_BYTES, (req.part + 1) * Catalog.KEPUB_PART_BYTES).toString('base64');
  return ok({ sha256, size, parts, part: req.part, data });
}
