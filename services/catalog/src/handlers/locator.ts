// catalog.locator-index {sha256}: the locator index of an EPUB the catalog holds, gzipped JSON in
// base64. Indexes are made at scan time; a file catalogued before indexes existed gets its index
// made here, from the file on disk, once its bytes are checked against the hash asked for.
import { readFile, stat } from 'node:fs/promises';
import { err, fail, ok, type Catalog, type Result } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { extract, hashBytes } from '../formats/index';
import { findLibrary } from '../store/libraries';
import { loadLocatorIndexGz, saveLocatorIndexes } from '../store/locator';
import { SCHEMA } from '../store/migrations';
import type { Ctx } from './context';

/** books larger than this are not read again for an index on request */
const MAX_LATE_BYTES = 256 * 1024 * 1024;
const notFound = () => err(fail('not_found', 'locator index not found'));

export async function locatorIndex(ctx: Ctx, req: Catalog.CatalogRequest<'locator-index'>): Promise<Result<unknown>> {
  const sha256 = req.sha256.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) return notFound();
  let gz = await loadLocatorIndexGz(ctx.rt.db, sha256);
  if (!gz && (await makeLate(ctx, sha256))) gz = await loadLocatorIndexGz(ctx.rt.db, sha256);
  return gz ? ok({ sha256, index_gz: gz.toString('base64') }) : notFound();
}

async function makeLate(ctx: Ctx, sha256: string): Promise<boolean> {
  const files = await ctx.rt.db
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
      const lib = await findLibrary(ctx.rt.db, f.library_id as string);
      const file = lib && (await resolveInside(lib.folders, f.rel_path as string));
      if (!file || (await stat(file.abs)).size > MAX_LATE_BYTES) continue;
      const bytes = await readFile(file.abs);
      if (hashBytes(bytes).sha256 !== sha256) continue;
      const x = await extract(file.abs, 'epub', { renderPdfCover: false, bytes });
      if (!x.locator) continue;
      await saveLocatorIndexes(ctx.rt.db, [{ sha256, index: x.locator }]);
      return true;
    } catch (e) {
      ctx.rt.log.debug({ sha256, err: e instanceof Error ? e.message : String(e) }, 'no locator index');
    }
  }
  return false;
}
