// The sync queue: what is waiting for each device and why. Entries come from reactions (a book put
// on a shelf, a position saved elsewhere); the device takes them and acknowledges (done or failed);
// users see them per device, retry failed ones, delete one or clear a device's queue.
import { sql } from 'kysely';
import { type DeviceSync, fail, Messages, ok, type Result } from '@bindery/contracts';
import type { Trx } from '../store/db';
import { lockRows, t, type Ctx } from './context';
import { ownDevice } from './devices';
import { bad, entryOut, isUuid, M, newId, no, notFound, userOf, type Answer, type ByDevice, type ByUser, type QueueRow, type Req, type Who } from './util';

type Action = DeviceSync.QueueEntry['action'];

/** Adds or refreshes the entry for (device, item, action): a newer reason replaces an older one. */
export async function enqueue(ctx: Ctx, trx: Trx, device: string, user: string, item: string | null, action: Action, reason: string): Promise<void> {
  const now = ctx.now();
  const existing = await t(trx)
    .selectFrom('queue')
    .selectAll()
    .where('device_id', '=', device)
    .where('action', '=', action)
    .where((eb) => (item === null ? eb('media_item_id', 'is', null) : eb('media_item_id', '=', item)))
    .forUpdate()
    .executeTakeFirst();
  // the opposite wish cancels a waiting one (a book put on and taken off again before the device came)
  const opposite = action === 'download' ? 'remove' : action === 'remove' ? 'download' : null;
  if (opposite && item) {
    const o = await t(trx)
      .selectFrom('queue')
      .select('id')
      .where('device_id', '=', device)
      .where('media_item_id', '=', item)
      .where('action', '=', opposite)
      .forUpdate()
      .executeTakeFirst();
    if (o) await ctx.emit(trx, user, [{ type: 'device-sync.queue-entry-removed.v1', data: { user_id: user, device_id: device, entry_id: o.id } }]);
  }
  const row = existing
    ? { ...existing, reason: reason.slice(0, 300), status: 'pending' as const, last_error: null, updated_at: now }
    : {
        id: newId(),
        device_id: device,
        user_id: user,
        media_item_id: item,
        action,
        reason: reason.slice(0, 300),
        status: 'pending' as const,
        attempts: 0,
        last_error: null,
        created_at: now,
        updated_at: now,
      };
  await ctx.emit(trx, user, [{ type: 'device-sync.queue-entry-saved.v1', data: { user_id: user, device_id: device, entry: entryOut(row) } }]);
}

async function isAdmin(ctx: Ctx, user: string): Promise<boolean> {
  const r = await t(ctx.db).selectFrom('users').select('role').where('id', '=', user).executeTakeFirst();
  return r?.role === 'admin';
}

function statusFilter(req: Pick<Req<'queue-list'>, 'query'>): Result<DeviceSync.QueueEntry['status'] | null> {
  const s = req.query?.status;
  const v = Array.isArray(s) ? s[0] : s;
  if (v === undefined || v === '') return ok(null);
  return v === 'pending' || v === 'failed' ? ok(v) : no(bad(M.invalidStatus));
}

export async function stats(ctx: Ctx, req: ByUser<'queue-stats'>): Answer<'queue-stats'> {
  const user = userOf(req)!;
  const rows = await t(ctx.db)
    .selectFrom('devices as d')
    .leftJoin('queue as q', 'q.device_id', 'd.id')
    .select([
      'd.id',
      'd.name',
      sql<number>`count(q.id) filter (where q.status = 'pending')`.as('pending'),
      sql<number>`count(q.id) filter (where q.status = 'failed')`.as('failed'),
      sql<string | null>`min(q.created_at)`.as('oldest'),
    ])
    .where('d.user_id', '=', user)
    .groupBy(['d.id', 'd.name'])
    .orderBy('d.name')
    .execute();
  const devices = rows.map((r) => ({
    device_id: r.id,
    name: r.name,
    pending: Number(r.pending),
    failed: Number(r.failed),
    oldest_entry_at: r.oldest ? new Date(r.oldest).toISOString() : null,
  }));
  return ok({ devices, pending: devices.reduce((n, d) => n + d.pending, 0), failed: devices.reduce((n, d) => n + d.failed, 0) });
}

export async function list(ctx: Ctx, req: Req<'queue-list'>): Answer<'queue-list'> {
  const d = await ownDevice(ctx.db, req);
  if (!d.ok) return d;
  const s = statusFilter(req);
  if (!s.ok) return s;
  let q = t(ctx.db).selectFrom('queue').selectAll().where('device_id', '=', d.value.id);
  if (s.value) q = q.where('status', '=', s.value);
  const rows = await q.orderBy('created_at').orderBy('id').execute();
  return ok({ device_id: d.value.id, entries: rows.map(entryOut) });
}

/** Every entry of the caller's devices; an admin may ask for every user's with `all=true`. */
export async function listAll(ctx: Ctx, req: ByUser<'queue-all'>): Answer<'queue-all'> {
  const user = req.caller.user_id;
  const s = statusFilter(req);
  if (!s.ok) return s;
  const everyone = (Array.isArray(req.query?.all) ? req.query.all[0] : req.query?.all) === 'true';
  if (everyone && !(await isAdmin(ctx, user))) return no(fail('admin_required', Messages.adminRequired));
  let q = t(ctx.db).selectFrom('queue as q').innerJoin('devices as d', 'd.id', 'q.device_id').selectAll('q').select('d.name as device_name');
  if (!everyone) q = q.where('q.user_id', '=', user);
  if (s.value) q = q.where('q.status', '=', s.value);
  const rows = await q.orderBy('q.created_at').orderBy('q.id').limit(5000).execute();
  return ok({ entries: rows.map((r) => ({ ...entryOut(r), device_name: r.device_name })) });
}

async function ownEntry(trx: Trx, req: Who & { id: string }) {
  if (!isUuid(req.id)) return no(bad(M.invalidQueueEntryId));
  const r = await t(trx).selectFrom('queue').selectAll().where('id', '=', req.id.toLowerCase()).forUpdate().executeTakeFirst();
  if (!r || r.user_id !== userOf(req) || (req.device && req.device.device_id !== r.device_id)) return no(notFound(M.queueEntryNotFound));
  return ok(r);
}

export async function retry(ctx: Ctx, req: ByUser<'queue-retry'>): Answer<'queue-retry'> {
  return ctx.tx(async (trx) => {
    const e = await ownEntry(trx, req);
    if (!e.ok) return e;
    if (e.value.status !== 'failed') return no(fail('conflict', M.queueEntryNotFailed));
    const row: QueueRow = { ...e.value, status: 'pending', updated_at: ctx.now() };
    const entry = entryOut(row);
    await ctx.emit(trx, row.user_id, [{ type: 'device-sync.queue-entry-saved.v1', data: { user_id: row.user_id, device_id: row.device_id, entry } }]);
    return ok(entry);
  });
}

export async function remove(ctx: Ctx, req: ByUser<'queue-delete'>): Answer<'queue-delete'> {
  return ctx.tx(async (trx) => {
    const e = await ownEntry(trx, req);
    if (!e.ok) return e;
    await ctx.emit(trx, e.value.user_id, [{ type: 'device-sync.queue-entry-removed.v1', data: { user_id: e.value.user_id, device_id: e.value.device_id, entry_id: e.value.id } }]);
    return ok({ message: 'sync queue entry deleted' });
  });
}

export async function clear(ctx: Ctx, req: ByUser<'queue-clear'>): Answer<'queue-clear'> {
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    // The entries are locked before the append (see `lockRows`), and counted under the log's append
    // lock: an entry a reaction adds meanwhile is either in the log before the clear, so removed and
    // counted, or after it.
    await lockRows(trx, 'queue', [d.value.id]);
    await ctx.store.lockAppends(trx);
    const gone = await t(trx).selectFrom('queue').select(sql<number>`count(*)`.as('n')).where('device_id', '=', d.value.id).executeTakeFirst();
    await ctx.emit(trx, d.value.user_id, [{ type: 'device-sync.queue-cleared.v1', data: { user_id: d.value.user_id, device_id: d.value.id } }]);
    return ok({ message: 'sync queue cleared', removed: Number(gone?.n ?? 0) });
  });
}

/** The device took entries (`done`: they leave the queue) or could not (`failed`: with why). */
export async function ack(ctx: Ctx, req: ByDevice<'queue-ack'>): Answer<'queue-ack'> {
  const dev = req.device;
  const input = req.input ?? {};
  const done = input.done ?? [];
  const failed = input.failed ?? [];
  if (!Array.isArray(done) || !done.every(isUuid) || done.length > 1000) return no(bad('done must be a list of sync queue entry ids'));
  if (!Array.isArray(failed) || failed.length > 1000 || !failed.every((f) => f && typeof f === 'object' && isUuid((f as { id?: unknown }).id)))
    return no(bad('failed must be a list of {id, error}'));
  if (done.length + failed.length === 0) return no(bad(M.idsRequired));
  return ctx.tx(async (trx) => {
    // every entry named is read and locked in one statement, before anything is appended
    const ids = [...new Set((done as string[]).map((id) => id.toLowerCase()))];
    const named = [...new Set([...ids, ...(failed as { id: string }[]).map((f) => f.id.toLowerCase())])];
    const rows = new Map(
      (await t(trx).selectFrom('queue').selectAll().where('id', 'in', named).where('device_id', '=', dev.device_id).forUpdate().execute()).map((r) => [r.id, r]),
    );
    // the taken entries leave first; their events keep the order the device gave
    const removed = ids.filter((id) => rows.has(id));
    for (const id of removed) rows.delete(id);
    if (removed.length)
      await ctx.emit(
        trx,
        dev.user_id,
        removed.map((id) => ({ type: 'device-sync.queue-entry-removed.v1', data: { user_id: dev.user_id, device_id: dev.device_id, entry_id: id } })),
      );
    let marked = 0;
    for (const f of failed as { id: string; error?: unknown }[]) {
      const why = typeof f.error === 'string' ? f.error.slice(0, 500) : 'failed on the device';
      const r = rows.get(f.id.toLowerCase());
      if (!r) continue;
      marked++;
      // an id the device names twice counts two failed attempts
      const next: QueueRow = { ...r, status: 'failed', last_error: why, attempts: Number(r.attempts) + 1, updated_at: ctx.now() };
      rows.set(r.id, next);
      await ctx.emit(trx, dev.user_id, [{ type: 'device-sync.queue-entry-saved.v1', data: { user_id: dev.user_id, device_id: dev.device_id, entry: entryOut(next) } }]);
    }
    return ok({ removed: removed.length, failed: marked });
  });
}
