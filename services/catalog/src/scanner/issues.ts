// Files the scanner could not read, kept per library path. Every change to the list is an event,
// which the catalog's projection folds into `file_issues` (and, for a catalogued file that became
// unreadable, its file row's size and time), so a read model of `GET /api/scanner/issues` can be
// rebuilt from the log.

import { SCHEMA } from '../store/migrations';
import type { Ctx } from '../handlers/context';
import type { FoundFile } from './crawl';
import type { CTrx } from '../store/schema';

const stream = (libraryId: string) => `issues-${libraryId}`;

export async function recordIssue(ctx: Ctx, trx: CTrx, libraryId: string, f: FoundFile, error: string): Promise<void> {
  const seen = new Date();
  await ctx.emit(trx, stream(libraryId), [
    {
      type: 'catalog.file-issue-recorded.v1',
      data: { issue: { library_id: libraryId, file_path: f.rel, format: f.format, size: f.size, error, seen_at: seen.toISOString() }, mtime_ms: f.mtimeMs },
    },
  ]);
}

/** Forgets the problems of these paths; an event names the ones that had any. */
export async function clearIssues(ctx: Ctx, trx: CTrx, libraryId: string, paths: readonly string[]): Promise<void> {
  if (paths.length === 0) return;
  const gone = await trx.withSchema(SCHEMA).selectFrom('file_issues').select('rel_path').where('library_id', '=', libraryId).where('rel_path', 'in', paths).forUpdate().execute();
  if (gone.length === 0) return;
  await ctx.emit(trx, stream(libraryId), [
    {
      type: 'catalog.file-issues-cleared.v1',
      data: { library_id: libraryId, file_paths: gone.map((g) => g.rel_path).sort() },
    },
  ]);
}
