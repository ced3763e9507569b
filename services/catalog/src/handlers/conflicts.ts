// Duplicate content: separate items whose files share a SHA-256 form a pending conflict, which
// an admin resolves by keeping one item (the others are removed, their reading data merged by
// the reading service on the published event) or by keeping them all (dismissed).
import { randomUUID } from 'node:crypto';
import { sql, type NotNull } from 'kysely';
import { err, fail, Messages, ok, type Catalog, type Result } from '@bindery/contracts';
import { toIso } from '@bindery/platform';
import { invalid, isUuid } from '../domain/validate';
import { publicOf } from '../store/items';
import { SCHEMA } from '../store/migrations';
import { requireAdmin, type Ctx } from './context';
import type { CTrx } from '../store/schema';

/** Opens a pending conflict for every group of active items sharing content that has none yet. */
export async function detectConflicts(ctx: Ctx, trx: CTrx): Promise<number> {
  const t = trx.withSchema(SCHEMA);
  await sql`select pg_advisory_xact_lock(hashtext('bindery.catalog.conflicts'))`.execute(trx);
  const groups = await t
    .selectFrom('media_formats as f')
    .innerJoin('media_items as i', 'i.id', 'f.item_id')
    .select(['f.sha256', sql<string[]>`array_agg(distinct f.item_id::text)`.as('items')])
    .where('i.state', '=', 'active')
    .where('f.present', '=', true)
    .where('f.sha256', 'is not', null)
    .$narrowType<{ sha256: NotNull }>()
    .groupBy('f.sha256')
    .having(sql`count(distinct f.item_id)`, '>', 1)
    .execute();
  let opened = 0;
  for (const g of groups) {
    const sha = g.sha256;
    const members = [...g.items].sort();
    const key = JSON.stringify(members);
    const existing = await t.selectFrom('hash_conflicts').selectAll().where('sha256', '=', sha).orderBy('created_at', 'desc').execute();
    const pending = existing.find((c) => c.status === 'pending');
    if (pending) {
      if (JSON.stringify([...pending.item_ids].sort()) !== key) {
        await ctx.emit(
          trx,
          `conflict-${pending.id}`,
          [{ type: 'catalog.hash-conflict-opened.v1', data: { conflict_id: pending.id, sha256: sha, item_ids: members } }],
          await ctx.version(trx, `conflict-${pending.id}`),
        );
      }
      continue;
    }
    // a group an admin already dismissed stays dismissed until another copy joins it
    if (existing.some((c) => c.status === 'dismissed' && members.every((m) => c.item_ids.includes(m)))) continue;
    const id = randomUUID();
    await ctx.emit(trx, `conflict-${id}`, [{ type: 'catalog.hash-conflict-opened.v1', data: { conflict_id: id, sha256: sha, item_ids: members } }], -1);
    opened++;
  }
  return opened;
}

export async function listConflicts(ctx: Ctx, req: { caller: Catalog.Caller }): Promise<Result<Catalog.CatalogResult<'conflicts-list'>>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  const db = ctx.db;
  const rows = await db.withSchema(SCHEMA).selectFrom('hash_conflicts').selectAll().where('status', '=', 'pending').orderBy('created_at').execute();
  const ids = [...new Set(rows.flatMap((r) => r.item_ids))];
  const items = ids.length
    ? await publicOf(db, await db.withSchema(SCHEMA).selectFrom('media_items').selectAll().where('id', 'in', ids).where('state', '=', 'active').execute())
    : [];
  const byId = new Map(items.map((i) => [i.id, i]));
  const data = rows
    .map((r) => ({
      id: r.id,
      sha256: r.sha256,
      status: r.status,
      created_at: toIso(r.created_at),
      items: r.item_ids.map((i) => byId.get(i)).filter((i): i is Catalog.MediaItem => !!i),
    }))
    .filter((c) => c.items.length > 1);
  return ok({ data });
}

export async function resolveConflict(
  ctx: Ctx,
  req: { caller: Catalog.Caller; id: string; input: Record<string, unknown> },
): Promise<Result<Catalog.CatalogResult<'conflict-resolve'>>> {
  const denied = requireAdmin(req.caller);
  if (denied) return err(denied);
  if (!isUuid(req.id)) return err(fail('validation', Messages.invalidConflictId));
  const action = req.input.action;
  if (action !== 'keep' && action !== 'keep_all') return err(invalid("action must be 'keep' or 'keep_all'"));
  const keep = req.input.keep_uuid;
  if (action === 'keep' && (typeof keep !== 'string' || keep.trim() === '')) return err(invalid('keep_uuid is required when action is keep'));
  const id = req.id.toLowerCase();
  return ctx.tx(async (trx): Promise<Result<Catalog.CatalogResult<'conflict-resolve'>>> => {
    const t = trx.withSchema(SCHEMA);
    const c = await t.selectFrom('hash_conflicts').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!c) return err(fail('not_found', Messages.hashConflictNotFound));
    if (c.status !== 'pending') return err(fail('conflict', Messages.hashConflictAlreadyResolved));
    const version = await ctx.version(trx, `conflict-${id}`);
    // the projection writes the outcome, at its event's time
    if (action === 'keep_all') {
      await ctx.emit(
        trx,
        `conflict-${id}`,
        [{ type: 'catalog.hash-conflict-dismissed.v1', data: { conflict_id: id, item_ids: c.item_ids, resolved_by: req.caller.user_id } }],
        version,
      );
      return ok({ message: 'conflict dismissed', conflict: { id, status: 'dismissed', kept_item_id: null, removed_item_ids: [] } });
    }
    const kept = (keep as string).trim().toLowerCase();
    if (!c.item_ids.includes(kept)) return err(invalid('keep_uuid must name an item of this conflict'));
    const others = c.item_ids.filter((i) => i !== kept);
    const live = await t.selectFrom('media_items').select(['id', 'library_id']).where('id', 'in', c.item_ids).execute();
    if (!live.some((i) => i.id === kept)) return err(fail('not_found', Messages.mediaItemNotFound));
    const removed: string[] = [];
    for (const item of live.filter((i) => others.includes(i.id))) {
      await ctx.lockLibrary(trx, item.library_id);
      await removeItem(ctx, trx, item.id, 'duplicate');
      removed.push(item.id);
    }
    await ctx.emit(
      trx,
      `conflict-${id}`,
      [{ type: 'catalog.hash-conflict-resolved.v1', data: { conflict_id: id, kept_item_id: kept, removed_item_ids: removed, resolved_by: req.caller.user_id } }],
      version,
    );
    return ok({ message: 'conflict resolved', conflict: { id, status: 'resolved', kept_item_id: kept, removed_item_ids: removed } });
  });
}

/**
 * Removes an item from the catalog, never its files: each file it had is remembered as excluded
 * so a rescan does not bring the item back while the file is unchanged.
 */
export async function removeItem(ctx: Ctx, trx: CTrx, itemId: string, reason: 'deleted' | 'duplicate'): Promise<void> {
  const t = trx.withSchema(SCHEMA);
  const item = await t.selectFrom('media_items').select(['id', 'library_id']).where('id', '=', itemId).forNoKeyUpdate().executeTakeFirst();
  if (!item) return;
  const version = await ctx.version(trx, `item-${itemId}`);
  // its files are remembered as excluded by the files-excluded event's fold
  const formats = await t.selectFrom('media_formats').selectAll().where('item_id', '=', itemId).execute();
  const hashes = await t.selectFrom('format_hashes').select('sha256').where('item_id', '=', itemId).execute();
  // the removed event's fold deletes the item's rows (its files and hashes go with them)
  const files = formats.map((f) => ({ file_path: f.rel_path, sha256: f.sha256, size: f.size, mtime_ms: f.mtime_ms }));
  await ctx.emit(
    trx,
    `item-${itemId}`,
    [
      ...(files.length > 0 ? [{ type: 'catalog.files-excluded.v1' as const, data: { item_id: itemId, library_id: item.library_id, files } }] : []),
      {
        type: 'catalog.media-item-removed.v1',
        data: { item_id: itemId, library_id: item.library_id, reason, sha256: hashes.map((h) => h.sha256) },
      },
    ],
    version,
  );
}
