// The scan queue: requests become rows the scanner leader picks up, so a request made on any
// replica (or before a restart) is not lost; status and the files a scan could not read.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { err, fail, Identity, Messages, ok, type Catalog, type Result } from '@bindery/contracts';
import { notePosition, toIso } from '@bindery/platform';
import { parseBool, parseLibraryIdParam, parseLimit, q1 } from '../domain/query';
import { isUuid } from '../domain/validate';
import { allLibraries, findLibrary } from '../store/libraries';
import { SCHEMA } from '../store/migrations';
import { requireAdmin, type Ctx } from './context';
import type { CTrx, Q, ScanReason, ScanRow } from '../store/schema';

export type { ScanRow };

export const scanStream = (scanId: string) => `scan-${scanId}`;

/** Queues a scan of a library unless one is already waiting; returns the waiting or new scan's id. */
export async function requestScan(ctx: Ctx, trx: CTrx, libraryId: string, reason: ScanReason, by: string | null, full = false): Promise<string> {
  const t = trx.withSchema(SCHEMA);
  await ctx.lockLibrary(trx, libraryId);
  const waiting = await t.selectFrom('scans').select(['id', 'full_rehash']).where('library_id', '=', libraryId).where('status', '=', 'queued').forUpdate().executeTakeFirst();
  if (waiting) {
    if (full && !waiting.full_rehash) {
      const version = await ctx.version(trx, scanStream(waiting.id));
      await ctx.emit(trx, scanStream(waiting.id), [{ type: 'catalog.scan-upgraded.v1', data: { scan_id: waiting.id, library_id: libraryId, full_rehash: true } }], version);
    }
    return waiting.id;
  }
  const id = randomUUID();
  await ctx.emit(trx, scanStream(id), [{ type: 'catalog.scan-queued.v1', data: { scan_id: id, library_id: libraryId, reason, full_rehash: full, requested_by: by } }], -1);
  return id;
}

/** Scans cut short by a stop or a crash (still 'running' when a replica takes the scanner over) wait again. */
export async function requeueRunning(ctx: Ctx, trx: CTrx): Promise<void> {
  const rows = await trx.withSchema(SCHEMA).selectFrom('scans').select(['id', 'library_id']).where('status', '=', 'running').orderBy('requested_at').forUpdate().execute();
  for (const r of rows) await ctx.emit(trx, scanStream(r.id), [{ type: 'catalog.scan-requeued.v1', data: { scan_id: r.id, library_id: r.library_id } }]);
}

export const publicScan = (r: ScanRow) => ({
  id: r.id,
  library_id: r.library_id,
  reason: r.reason,
  status: r.status,
  full_rehash: r.full_rehash,
  requested_at: toIso(r.requested_at),
  started_at: r.started_at ? toIso(r.started_at) : null,
  finished_at: r.finished_at ? toIso(r.finished_at) : null,
  counts: r.counts,
  error: r.error,
});

export async function startScan(ctx: Ctx, req: { caller: Catalog.Caller; input: Record<string, unknown> }): Promise<Result<Catalog.CatalogResult<'scan-start'>>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const raw = req.input.library_id;
  if (raw !== undefined && raw !== null && !isUuid(raw)) return err(fail('validation', Messages.invalidLibraryId));
  const full = parseBool(req.input.full === undefined ? undefined : String(req.input.full), 'full');
  if (!full.ok) return full;
  const libs = raw ? [await findLibrary(ctx.db, (raw as string).toLowerCase())] : await allLibraries(ctx.db);
  if (libs.some((l) => l === undefined)) return err(fail('not_found', Messages.libraryNotFound));
  const scans: { id: string; library_id: string }[] = [];
  for (const lib of libs) {
    if (!lib || lib.folders.length === 0) continue;
    const id = await ctx.tx((trx) => requestScan(ctx, trx, lib.id, 'manual', req.caller.user_id, full.value ?? false));
    scans.push({ id, library_id: lib.id });
  }
  if (raw && scans.length === 0) return err(fail('validation', Messages.libraryHasNoFolders));
  ctx.kick();
  return ok({ message: 'scan queued', scans });
}

/**
 * The scan that catalogues an uploaded file: an admin or an editor (who may upload) asks it, for one
 * library; a waiting scan of the library is reused, as for any request. The gateway has written the
 * file into a folder of a library the caller may see before it asks.
 */
export async function uploadScan(ctx: Ctx, req: { caller: Catalog.Caller; library_id: string }): Promise<Result<{ scan_id: string }>> {
  if (!Identity.mayEditMetadata(req.caller)) return err(fail('forbidden', Messages.editorRequired));
  if (!isUuid(req.library_id)) return err(fail('validation', Messages.invalidLibraryId));
  const lib = await findLibrary(ctx.db, req.library_id.toLowerCase());
  if (!lib) return err(fail('not_found', Messages.libraryNotFound));
  if (lib.folders.length === 0) return err(fail('validation', Messages.libraryHasNoFolders));
  const id = await ctx.tx((trx) => requestScan(ctx, trx, lib.id, 'upload', req.caller.user_id));
  ctx.kick();
  return ok({ scan_id: id });
}

export async function scanStatus(ctx: Ctx, req: { caller: Catalog.Caller }): Promise<Result<Catalog.CatalogResult<'scan-status'>>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const rows = await ctx.db.withSchema(SCHEMA).selectFrom('scans').selectAll().orderBy('requested_at', 'desc').limit(100).execute();
  // a client that sees a scan finished then reads the lists: the gateway first lets its read
  // models reach what the log holds now, as after a write
  notePosition(await ctx.store.headPosition());
  return ok({
    scanning: rows.some((r) => r.status === 'running'),
    queued: rows.filter((r) => r.status === 'queued').length,
    scans: rows.map(publicScan),
  });
}

export async function scanIssues(ctx: Ctx, req: { caller: Catalog.Caller; query: Record<string, string | string[]> }): Promise<Result<Catalog.CatalogResult<'scan-issues'>>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const lib = parseLibraryIdParam(q1(req.query, 'library_id'));
  if (!lib.ok) return lib;
  const limit = parseLimit(q1(req.query, 'limit'), 100, 1000);
  if (!limit.ok) return limit;
  let s = ctx.db.withSchema(SCHEMA).selectFrom('file_issues').selectAll().orderBy('library_id').orderBy('rel_path').limit(limit.value);
  if (lib.value) s = s.where('library_id', '=', lib.value);
  const rows = await s.execute();
  return ok({
    data: rows.map((r) => ({ library_id: r.library_id, file_path: r.rel_path, format: r.format, size: Number(r.size), error: r.error, seen_at: toIso(r.seen_at) })),
  });
}

export async function runningScans(q: Q): Promise<ScanRow[]> {
  return await q.withSchema(SCHEMA).selectFrom('scans').selectAll().where('status', '=', 'running').execute();
}

export async function nextQueued(q: Q): Promise<ScanRow | undefined> {
  return await q.withSchema(SCHEMA).selectFrom('scans').selectAll().where('status', '=', 'queued').orderBy('requested_at').limit(1).executeTakeFirst();
}

/** Finished scans older than 30 days leave the history. */
export async function pruneScans(ctx: Ctx, trx: CTrx): Promise<void> {
  const gone = await trx
    .withSchema(SCHEMA)
    .selectFrom('scans')
    .select(['id', 'library_id'])
    .where('status', 'in', ['completed', 'failed'])
    .where('finished_at', '<', sql<Date>`now() - interval '30 days'`)
    .orderBy('finished_at')
    .forUpdate()
    .execute();
  await ctx.emitMany(
    trx,
    gone.map((r) => ({ streamId: scanStream(r.id), events: [{ type: 'catalog.scan-pruned.v1' as const, data: { scan_id: r.id, library_id: r.library_id } }] })),
  );
}
