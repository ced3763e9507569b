// Registration: a device asks (public), a signed-in user approves or rejects it by the id in the
// approval URL, and the device, polling with its secret device_code, collects its credential once.
import { sql } from 'kysely';
import { DeviceSync, fail, ok, type Result } from '@bindery/contracts';
import type { Trx } from '../store/db';
import { digest, newDeviceCode, newDeviceToken, newRegistrationId, newSyncKey, syncKeyIssued, syncKeyVerifier } from '../domain/credential';
import { t, type Ctx } from './context';
import { issueKoboToken } from './kobo';
import { bad, deviceOut, M, newId, no, notFound, text, type Answer, type ByUser, type PendingRow, type Req } from './util';

const DEFAULT_MAX_DEVICES = 5;

export async function register(ctx: Ctx, req: Req<'register'>): Answer<'register'> {
  const input = req.input ?? {};
  const name = text(input, 'name', 100);
  if (name === null) return no(bad(M.nameTooLong));
  if (!name?.trim()) return no(bad(M.nameRequired));
  const client = text(input, 'client', 50);
  if (client === null) return no(bad(M.clientTooLong));
  const model = text(input, 'model', 100);
  if (model === null) return no(bad(M.modelTooLong));
  const now = ctx.now();
  const code = newDeviceCode();
  const id = newRegistrationId();
  const row = {
    id,
    device_code_hash: digest(code),
    name: name.trim(),
    client: client?.trim() || 'other',
    model: model?.trim() ?? '',
    created_at: now,
    expires_at: new Date(now.getTime() + ctx.opts.registrationTtlSeconds * 1000),
  };
  await ctx.tx(async (trx) => {
    const { id: registration_id, created_at, expires_at, ...rest } = row;
    // a new stream: the id is fresh, so a clash is a second registration with the same id, refused
    await ctx.emitTo(trx, `registration:${id}`, -1, [
      { type: 'device-sync.registration-requested.v1', data: { registration_id, ...rest, created_at: created_at.toISOString(), expires_at: expires_at.toISOString() } },
    ]);
  });
  return ok({ registration_id: id, device_code: code, expires_in: ctx.opts.registrationTtlSeconds, poll_interval: ctx.opts.pollIntervalSeconds });
}

const secondsLeft = (r: PendingRow, now: Date) => Math.max(0, Math.ceil((r.expires_at.getTime() - now.getTime()) / 1000));
const expired = (r: PendingRow, now: Date) => r.expires_at.getTime() <= now.getTime();

/** The device's poll: pending, approved once (with the credential), 410 after expiry or once used. */
export async function status(ctx: Ctx, req: Req<'register-status'>): Answer<'register-status'> {
  const code = req.input?.device_code;
  if (typeof code !== 'string' || code === '' || code.length > 200) return no(bad(M.deviceCodeRequired));
  return ctx.tx(async (trx) => {
    const r = await t(trx).selectFrom('pending').selectAll().where('device_code_hash', '=', digest(code)).forUpdate().executeTakeFirst();
    const now = ctx.now();
    // unknown: never made, or lost with a restart; either way the device must start again
    if (!r) return ok({ status: 'expired', error: M.registrationUnknown });
    if (r.status === 'claimed') return ok({ status: 'expired', error: M.registrationUsed });
    if (r.status === 'rejected') return no(fail('forbidden', M.registrationRejected));
    if (r.status === 'pending') return expired(r, now) ? ok({ status: 'expired', error: M.registrationExpired }) : ok({ status: 'pending', expires_in: secondsLeft(r, now) });
    // approved: hand the credential over, once
    // locked: its credential is written after the append (see `lockRows`)
    const device = r.device_id ? await t(trx).selectFrom('devices').selectAll().where('id', '=', r.device_id).forUpdate().executeTakeFirst() : undefined;
    await ctx.emitTo(trx, `registration:${r.id}`, 'any', [{ type: 'device-sync.registration-claimed.v1', data: { registration_id: r.id, user_id: r.user_id } }]);
    if (!device) return ok({ status: 'expired', error: M.registrationClosed });
    const token = newDeviceToken();
    const hash = digest(token);
    await ctx.emit(trx, device.user_id, [
      { type: 'device-sync.device-credential-issued.v1', data: { user_id: device.user_id, device_id: device.id, credential_hash: hash, issued_at: now.toISOString() } },
    ]);
    return ok({ status: 'approved', device_id: device.id, device_token: token, name: device.name });
  });
}

/** A pending registration the caller may act on: unknown, expired or finished ones are 404. */
async function openPending(q: Trx | Ctx['db'], ctx: Ctx, id: string | undefined, lock: boolean): Promise<Result<PendingRow>> {
  if (typeof id !== 'string' || !/^[0-9A-Za-z]{1,40}$/.test(id)) return no(notFound(M.registrationNotFound));
  let query = t(q).selectFrom('pending').selectAll().where('id', '=', id.toUpperCase());
  if (lock) query = query.forUpdate();
  const r = await query.executeTakeFirst();
  if (!r || expired(r, ctx.now())) return no(notFound(M.registrationNotFound));
  return ok(r);
}

export async function getPending(ctx: Ctx, req: ByUser<'pending-get'>): Answer<'pending-get'> {
  const r = await openPending(ctx.db, ctx, req.id, false);
  if (!r.ok) return r;
  const p = r.value;
  // once decided, only the user who decided sees it (the page then shows the outcome)
  if (p.status !== 'pending' && p.user_id !== req.caller.user_id) return no(notFound(M.registrationNotFound));
  return ok({
    id: p.id,
    name: p.name,
    client: p.client,
    model: p.model,
    status: p.status === 'claimed' ? 'approved' : p.status,
    device_id: p.user_id === req.caller.user_id ? (p.device_id ?? null) : null,
    created_at: p.created_at.toISOString(),
    expires_in: secondsLeft(p, ctx.now()),
  });
}

/**
 * Approves a registration for the caller's account. Unless `input.sync_key` is false, the device also
 * gets a sync key for KOReader's stock Progress sync, answered here once (kept only as a verifier).
 */
export async function approve(ctx: Ctx, req: ByUser<'pending-approve'>): Answer<'pending-approve'> {
  const user = req.caller.user_id;
  const want = req.input?.sync_key;
  if (want !== undefined && want !== null && typeof want !== 'boolean') return no(bad(M.syncKeyFlag));
  if (!(await openPending(ctx.db, ctx, req.id, false)).ok) return no(notFound(M.registrationNotFound));
  const key = want === false ? null : newSyncKey();
  // hashed before the transaction: argon2 takes a while and the transaction holds locks
  const verifier = key ? await syncKeyVerifier(key) : null;
  return ctx.tx(async (trx) => {
    const r = await openPending(trx, ctx, req.id, true);
    if (!r.ok) return r;
    const p = r.value;
    if (p.status !== 'pending') return no(fail('conflict', M.registrationClosed));
    // one approval at a time per user, so two cannot both take the last free place
    await sql`select pg_advisory_xact_lock(hashtext(${'bindery.devices.' + user}))`.execute(trx);
    const facts = await t(trx).selectFrom('users').select('max_devices').where('id', '=', user).executeTakeFirst();
    const max = facts ? Number(facts.max_devices) : DEFAULT_MAX_DEVICES;
    const count = await t(trx).selectFrom('devices').select(sql<number>`count(*)`.as('n')).where('user_id', '=', user).executeTakeFirst();
    if (Number(count?.n ?? 0) >= max) return no(fail('forbidden', DeviceSync.deviceLimitMessage(max)));
    const now = ctx.now();
    const row = { id: newId(), user_id: user, name: p.name, client: p.client, model: p.model, created_at: now, updated_at: now };
    await ctx.emitTo(trx, `registration:${p.id}`, 'any', [{ type: 'device-sync.registration-approved.v1', data: { registration_id: p.id, user_id: user, device_id: row.id } }]);
    const device = deviceOut(row);
    await ctx.emit(trx, user, [
      { type: 'device-sync.device-approved.v1', data: { user_id: user, device, approved_by: user } },
      ...(verifier ? [syncKeyIssued(user, row.id, verifier, now)] : []),
    ]);
    // a Kobo's registration also gets its store address (the gateway makes the URL of the token)
    const koboToken = p.client === 'kobo' ? await issueKoboToken(ctx, trx, user, row.id) : null;
    return ok({ message: 'device approved', device, ...(key ? { sync_key: key } : {}), ...(koboToken ? { kobo_token: koboToken } : {}) });
  });
}

export async function reject(ctx: Ctx, req: ByUser<'pending-reject'>): Answer<'pending-reject'> {
  return ctx.tx(async (trx) => {
    const r = await openPending(trx, ctx, req.id, true);
    if (!r.ok) return r;
    if (r.value.status !== 'pending') return no(fail('conflict', M.registrationClosed));
    const user = req.caller.user_id;
    await ctx.emitTo(trx, `registration:${r.value.id}`, 'any', [{ type: 'device-sync.registration-rejected.v1', data: { registration_id: r.value.id, user_id: user } }]);
    return ok({ message: 'device registration rejected' });
  });
}
