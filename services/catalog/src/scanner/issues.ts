// Files the scanner could not read, kept per library path. Every change to the list is an event,
// so a read model of `GET /api/scanner/issues` can be rebuilt from the log.

import { SCHEMA } from '../store/migrations';
import type { Ctx } from '../handlers/context';
import type { FoundFile } from './crawl';
import type { CTrx } from '../store/schema';

const stream = (libraryId: string) => `issues-${libraryId}`;

export async function recordIssue(ctx: Ctx, trx: CTrx, libraryId: string, f: FoundFile, error: string): Promise<void> {
  const seen = new Date();
  await trx
    .withSchema(SCHEMA)
    .insertInto('file_issues')
    .values({ library_id: libraryId, rel_path: f.rel, format: f.format, size: f.size, mtime_ms: f.mtimeMs, error, seen_at: seen })
    .onConflict((oc) => oc.columns(['library_id', 'rel_path']).doUpdateSet({ format: f.format, size: f.size, mtime_ms: f.mtimeMs, error, seen_at: seen }))
    .execute();
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
  const gone = await trx.withSchema(SCHEMA).deleteFrom('file_issues').where('library_id', '=', libraryId).where('rel_path', 'in', paths).returning('rel_path').execute();
  if (gone.length === 0) return;
  await ctx.emit(trx, stream(libraryId), [
    {
      type: 'catalog.file-issues-cleared.v1',
      data: { library_id: libraryId, file_paths: gone.map((g) => g.rel_path).sort() },
    },
  ]);
}
