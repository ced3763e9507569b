// A user's devices: rename and delete (deleting revokes the credential at once: the gateway's
// view drops it when it applies the event).
import { ok, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { DevicesTable, Trx } from '../store/db';
import { newSyncKey, syncKeyIssued, syncKeyVerifier } from '../domain/credential';
import { lockRows, t, type Ctx } from './context';
import { bad, deviceOut, isUuid, M, no, notFound, text, userOf, type Answer, type ByUser, type Who } from './util';

/** The caller's device by id: malformed ids are 400, another user's devices do not exist (404). */
export async function ownDevice(q: Trx | Ctx['db'], req: Who & { id: string }, lock = false): Promise<Result<Selectable<DevicesTable>>> {
  if (!isUuid(req.id)) return no(bad(M.invalidDeviceId));
  const user = userOf(req);
  let query = t(q).selectFrom('devices').selectAll().where('id', '=', req.id.toLowerCase());
  if (lock) query = query.forUpdate();
  const r = await query.executeTakeFirst();
  if (!r || r.user_id !== user) return no(notFound(M.deviceNotFound));
  if (req.device && req.device.device_id !== r.id) return no(notFound(M.deviceNotFound));
  return ok(r);
}

export async function updateDevice(ctx: Ctx, req: ByUser<'device-update'>): Answer<'device-update'> {
  const name = text(req.input ?? {}, 'name', 100);
  if (name === null) return no(bad(M.nameTooLong));
  if (!name?.trim()) return no(bad(M.nameRequired));
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    if (d.value.name === name.trim()) return ok(deviceOut(d.value));
    const row = { ...d.value, name: name.trim(), updated_at: ctx.now() };
    const device = deviceOut(row);
    await ctx.emit(trx, row.user_id, [{ type: 'device-sync.device-updated.v1', data: { user_id: row.user_id, device } }]);
    return ok(device);
  });
}

export async function deleteDevice(ctx: Ctx, req: ByUser<'device-delete'>): Answer<'device-delete'> {
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    // its shelves and queue go with it: locked before the append, as the device itself
    await lockRows(trx, 'shelves', [d.value.id]);
    await lockRows(trx, 'queue', [d.value.id]);
    await ctx.emit(trx, d.value.user_id, [{ type: 'device-sync.device-deleted.v1', data: { user_id: d.value.user_id, device_id: d.value.id } }]);
    return ok({ message: 'device deleted' });
  });
}

/**
 * A new sync key for KOReader's stock sync on one of the caller's devices, answered once; the earlier
 * key stops working (the gateway verifies against the newest verifier only).
 */
export async function issueSyncKey(ctx: Ctx, req: ByUser<'sync-key-issue'>): Answer<'sync-key-issue'> {
  // the cheap checks first: argon2 runs only for a device of the caller's
  const seen = await ownDevice(ctx.db, req);
  if (!seen.ok) return seen;
  const key = newSyncKey();
  const verifier = await syncKeyVerifier(key);
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    const now = ctx.now();
    await ctx.emit(trx, d.value.user_id, [syncKeyIssued(d.value.user_id, d.value.id, verifier, now)]);
    return ok({ device_id: d.value.id, sync_key: key, issued_at: now.toISOString() });
  });
}
