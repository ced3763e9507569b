// Progress conflicts: two devices that disagree leave both positions here until the user picks one.
// Resolving keeps the chosen position current; the other one goes into the history, never lost.
import { ok, type Reading, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { ConflictsTable, Trx } from '../store/db';
import { historyRecorded } from '../store/history';
import { t, type Ctx } from './context';
import { conflictOut, conflictRow, savePosition } from './progress';
import { bad, conflict, isUuid, M, no, notFound, q1, type Answer, type Req } from './util';
import { itemVisible } from './visible';

type Row = Selectable<ConflictsTable>;
const STATUSES = ['open', 'resolved', 'dismissed', 'all'] as const;
const isStatus = (s: string): s is (typeof STATUSES)[number] => (STATUSES as readonly string[]).includes(s);

export async function listConflicts(ctx: Ctx, req: Req<'conflicts-list'>): Answer<'conflicts-list'> {
  const status = q1(req.query, 'status') ?? 'open';
  if (!isStatus(status)) return no(bad("status must be 'open', 'resolved', 'dismissed' or 'all'"));
  let q = t(ctx.db).selectFrom('conflicts').selectAll().where('user_id', '=', req.caller.user_id).where(itemVisible(req.access));
  if (status !== 'all') q = q.where('status', '=', status);
  const item = q1(req.query, 'media_item_id');
  if (item !== undefined) {
    if (!isUuid(item)) return no(bad('invalid media item id'));
    q = q.where('item_id', '=', item.toLowerCase());
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(1000).execute();
  return ok({ data: rows.map(conflictOut) });
}

async function find(q: Trx | Ctx['db'], req: Pick<Req<'conflict-get'>, 'caller' | 'id'>, lock = false): Promise<Result<Row>> {
  if (!isUuid(req.id)) return no(bad(M.invalidConflictId));
  let s = t(q).selectFrom('conflicts').selectAll().where('id', '=', req.id.toLowerCase()).where('user_id', '=', req.caller.user_id);
  if (lock) s = s.forUpdate();
  const r = await s.executeTakeFirst();
  return r ? ok(r) : no(notFound(M.conflictNotFound));
}

export async function getConflict(ctx: Ctx, req: Req<'conflict-get'>): Answer<'conflict-get'> {
  const r = await find(ctx.db, req);
  return r.ok ? ok(conflictOut(r.value)) : r;
}

/** Closes one open conflict in the caller's transaction: keep the current or the incoming position, or dismiss. */
async function close(ctx: Ctx, trx: Trx, c: Row, how: 'current' | 'incoming' | 'dismissed'): Promise<Row> {
  const user = c.user_id;
  const item = c.item_id;
  await ctx.lockUser(trx, user);
  const { client, device, bindery_device_id, submitted_at: _submitted, ...rest } = c.incoming;
  const lines: Reading.ReadingEvent[] = [];
  if (how === 'incoming') {
    // the device that sent it has it already: the sync queue leaves that one out
    await savePosition(ctx, trx, user, item, { position: rest, client, device, device_id: bindery_device_id ?? null }, 'conflict resolved: incoming kept');
  } else {
    // the position not chosen stays findable in the history
    lines.push(
      historyRecorded(user, item, {
        percentage: rest.percentage,
        position: rest,
        client,
        device,
        reason: how === 'current' ? 'conflict resolved: not kept' : 'conflict dismissed',
        recorded_at: ctx.now(),
      }),
    );
  }
  const status = how === 'dismissed' ? 'dismissed' : 'resolved';
  const closed = { ...conflictOut(c), status, resolution: how === 'dismissed' ? null : how, closed_at: ctx.now().toISOString() } as const;
  await ctx.emit(trx, user, [...lines, { type: 'reading.progress-conflict-closed.v1', data: { user_id: user, conflict: closed } }]);
  return conflictRow(trx, c.id);
}

const keepOf = (input: Record<string, unknown> | undefined): 'current' | 'incoming' | null => {
  const k = input?.keep;
  return k === 'current' || k === 'incoming' ? k : null;
};

export async function resolveConflict(ctx: Ctx, req: Req<'conflict-resolve'>): Answer<'conflict-resolve'> {
  const keep = keepOf(req.input);
  if (!keep) return no(bad(M.keepChoice));
  return ctx.tx(async (trx) => {
    const c = await find(trx, req, true);
    if (!c.ok) return c;
    if (c.value.status !== 'open') return no(conflict(M.conflictClosed));
    return ok(conflictOut(await close(ctx, trx, c.value, keep)));
  });
}

export async function deleteConflict(ctx: Ctx, req: Req<'conflict-delete'>): Answer<'conflict-delete'> {
  return ctx.tx(async (trx) => {
    const c = await find(trx, req, true);
    if (!c.ok) return c;
    if (c.value.status === 'open') await close(ctx, trx, c.value, 'dismissed');
    await ctx.emit(trx, req.caller.user_id, [{ type: 'reading.progress-conflict-deleted.v1', data: { user_id: req.caller.user_id, conflict_id: c.value.id } }]);
    return ok({ message: 'progress conflict deleted' });
  });
}

function idsOf(input: Record<string, unknown> | undefined): string[] | null {
  const ids = input?.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || !ids.every(isUuid)) return null;
  return [...new Set(ids.map((i) => i.toLowerCase()))];
}

/** Closes many: each open one of the caller's (and visible) is closed; others are reported as failed. */
async function bulk(
  ctx: Ctx,
  req: Pick<Req<'conflicts-dismiss-all'>, 'caller' | 'access'>,
  how: 'current' | 'incoming' | 'dismissed',
  ids: string[] | 'all',
): Answer<'conflicts-dismiss-all'> {
  return ctx.tx(async (trx) => {
    let q = t(trx).selectFrom('conflicts').selectAll().where('user_id', '=', req.caller.user_id).where('status', '=', 'open').where(itemVisible(req.access));
    if (ids !== 'all') q = q.where('id', 'in', ids);
    const rows = await q.orderBy('created_at').forUpdate().execute();
    for (const r of rows) await close(ctx, trx, r, how);
    const done = new Set(rows.map((r) => r.id));
    const failed = ids === 'all' ? [] : ids.filter((i) => !done.has(i)).map((id) => ({ id, error: M.conflictNotFound }));
    return ok({ message: how === 'dismissed' ? 'progress conflicts dismissed' : 'progress conflicts resolved', succeeded: rows.map((r) => r.id), failed });
  });
}

export async function bulkResolve(ctx: Ctx, req: Req<'conflicts-bulk-resolve'>): Answer<'conflicts-bulk-resolve'> {
  const ids = idsOf(req.input);
  if (!ids) return no(bad(M.idsRequired));
  const keep = keepOf(req.input);
  if (!keep) return no(bad(M.keepChoice));
  return bulk(ctx, req, keep, ids);
}

export async function bulkDismiss(ctx: Ctx, req: Req<'conflicts-bulk-dismiss'>): Answer<'conflicts-bulk-dismiss'> {
  const ids = idsOf(req.input);
  if (!ids) return no(bad(M.idsRequired));
  return bulk(ctx, req, 'dismissed', ids);
}

export const dismissAll = (ctx: Ctx, req: Req<'conflicts-dismiss-all'>): Answer<'conflicts-dismiss-all'> => bulk(ctx, req, 'dismissed', 'all');
