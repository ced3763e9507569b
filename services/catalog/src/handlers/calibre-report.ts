// `calibre-report` (admin): a library's calibre migration report as its last scan recorded it
// (catalog.calibre-report-recorded.v1, folded into calibre_reports), never read again per request.
import { err, fail, Messages, ok, type Catalog, type Result } from '@bindery/contracts';
import { isUuid } from '../domain/validate';
import { findLibrary } from '../store/libraries';
import { SCHEMA } from '../store/migrations';
import { requireAdmin, type Ctx } from './context';

export async function calibreReport(ctx: Ctx, req: { caller: Catalog.Caller; id: string }): Promise<Result<{ report: Catalog.CalibreReport | null; recorded_at: string | null }>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return err(fail('validation', Messages.invalidLibraryId));
  const id = req.id.toLowerCase();
  if (!(await findLibrary(ctx.db, id))) return err(fail('not_found', Messages.libraryNotFound));
  const row = await ctx.db.withSchema(SCHEMA).selectFrom('calibre_reports').select(['report', 'recorded_at']).where('library_id', '=', id).executeTakeFirst();
  return ok({ report: row?.report ?? null, recorded_at: row ? row.recorded_at.toISOString() : null });
}
