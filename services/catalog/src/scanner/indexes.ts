// Locator indexes are built after a scan, not during it: the scan records an EPUB's metadata and
// hashes, and this pass reads each EPUB once more, a few at a time, to store the index positions
// are mapped with (store/locator.ts). A request for an index not built yet builds it at once
// (handlers/locator.ts), so nothing waits for this pass; it only makes those requests rare.
import { readFile, stat } from 'node:fs/promises';
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import { resolveInside } from '@bindery/platform';
import { epubLocatorIndex } from '../formats/epub';
import { hashBytes } from '../formats/index';
import type { Ctx } from '../handlers/context';
import { breathe } from './covers';
import { findLibrary } from '../store/libraries';
import { LOCATOR_VERSION, saveLocatorIndexes } from '../store/locator';
import { SCHEMA } from '../store/migrations';

/** books larger than this are not read again after the scan */
const MAX_LATE_BYTES = 256 * 1024 * 1024;

/** EPUBs whose index could not be made (unreadable now, or broken markup): not tried again by this process */
const failed = new LRUCache<string, true>({ max: 10_000 });

/** The bytes of an EPUB the catalog holds with this SHA-256, checked against it. */
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

/** Builds and stores the locator index of the EPUB with this SHA-256. False when it cannot be made. */
export async function storeLocatorIndex(ctx: Ctx, sha256: string, book?: { path: string; data: Buffer }): Promise<boolean> {
  const file = book ?? (await fileOf(ctx, sha256));
  if (!file) return false;
  try {
    await saveLocatorIndexes(ctx.db, [{ sha256, index: await epubLocatorIndex(file.path, file.data) }]);
    return true;
  } catch (e) {
    ctx.rt.log.debug({ sha256, err: e instanceof Error ? e.message : String(e) }, 'no locator index');
    return false;
  }
}

/**
 * Builds every missing locator index, until none is left or `stopping()` says so. The EPUBs are
 * taken in order of their SHA-256, 64 after the last one taken: each batch reads the hash index from
 * there, not the whole table (asked for "the first 64 missing" every batch, the pass read every
 * format row 1,400 times at 90,000 books).
 */
export async function indexMissingBooks(ctx: Ctx, stopping: () => boolean): Promise<number> {
  let done = 0;
  let after = '';
  for (;;) {
    const todo = await ctx.db
      .withSchema(SCHEMA)
      .selectFrom('media_formats as f')
      .select('f.sha256')
      .distinct()
      .where('f.format', '=', 'epub')
      .where('f.present', '=', true)
      .where('f.sha256', '>', after)
      .where(({ not, exists, selectFrom }) =>
        // `l.sha256 > after` says again what the join implies, so that the planner's merge join starts both indexes there
        not(
          exists(
            selectFrom('locator_indexes as l').select(sql`1`.as('one')).whereRef('l.sha256', '=', 'f.sha256').where('l.sha256', '>', after).where('l.v', '>=', LOCATOR_VERSION),
          ),
        ),
      )
      .orderBy('f.sha256')
      .limit(64)
      .execute();
    if (todo.length === 0) return done;
    after = todo[todo.length - 1]!.sha256 as string;
    for (const { sha256 } of todo) {
      if (stopping()) return done;
      if (failed.has(sha256 as string)) continue;
      const before = Date.now();
      if (await storeLocatorIndex(ctx, sha256 as string)) done++;
      else failed.set(sha256 as string, true);
      await breathe(ctx, before);
    }
  }
}
