// Kobo devices: a Kobo cannot run the registration flow itself (it only knows the store address in
// its configuration), so its owner makes one here, or approves a registration whose client is `kobo`.
// Either way the device gets a Kobo token: the last step of `/kobo/<token>`, shown once, kept only as
// its SHA-256, replaced on request, gone with the device.
import { sql } from 'kysely';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { notePosition } from '@bindery/platform';
import { DeviceSync, fail, ok, type Result } from '@bindery/contracts';
import type { Trx } from '../store/db';
import { digest, newKoboToken } from '../domain/credential';
import { t, type Ctx } from './context';
import { ownDevice } from './devices';
import { bad, deviceOut, isUuid, M, newId, no, notFound, text, type Answer, type ByDevice, type ByUser } from './util';

const DEFAULT_MAX_DEVICES = 5;
type Books = 'all' | 'shelves';

/** A new token for a device, in the caller's transaction: the event (the projection keeps its hash on the row). */
export async function issueKoboToken(ctx: Ctx, trx: Trx, user: string, deviceId: string): Promise<string> {
  const token = newKoboToken();
  const hash = digest(token);
  const now = ctx.now();
  await ctx.emit(trx, user, [{ type: 'device-sync.kobo-token-issued.v1', data: { user_id: user, device_id: deviceId, token_hash: hash, issued_at: now.toISOString() } }]);
  return token;
}

/** The user's limit, checked under a per-user lock so two new devices cannot take the last place. */
export async function underLimit(trx: Trx, user: string): Promise<Result<true>> {
  await sql`select pg_advisory_xact_lock(hashtext(${'bindery.devices.' + user}))`.execute(trx);
  const facts = await t(trx).selectFrom('users').select('max_devices').where('id', '=', user).executeTakeFirst();
  const max = facts ? Number(facts.max_devices) : DEFAULT_MAX_DEVICES;
  const count = await t(trx).selectFrom('devices').select(sql<number>`count(*)`.as('n')).where('user_id', '=', user).executeTakeFirst();
  return Number(count?.n ?? 0) >= max ? no(fail('forbidden', DeviceSync.deviceLimitMessage(max))) : ok(true);
}

const booksOf = (input: Record<string, unknown>): Books | null | undefined => {
  const v = input.books;
  if (v === undefined || v === null) return undefined;
  return v === 'all' || v === 'shelves' ? v : null;
};

export async function createKobo(ctx: Ctx, req: ByUser<'kobo-create'>): Answer<'kobo-create'> {
  const input = req.input ?? {};
  const user = req.caller.user_id;
  const name = text(input, 'name', 100);
  if (name === null) return no(bad(M.nameTooLong));
  const model = text(input, 'model', 100);
  if (model === null) return no(bad(M.modelTooLong));
  const books = booksOf(input);
  if (books === null) return no(bad(M.koboBooks));
  return ctx.tx(async (trx) => {
    const room = await underLimit(trx, user);
    if (!room.ok) return room;
    const now = ctx.now();
    const row = { id: newId(), user_id: user, name: name?.trim() || 'Kobo', client: 'kobo', model: model?.trim() ?? '', created_at: now, updated_at: now };
    const device = deviceOut(row);
    await ctx.emit(trx, user, [{ type: 'device-sync.device-approved.v1', data: { user_id: user, device, approved_by: user } }]);
    if (books) await ctx.emit(trx, user, [{ type: 'device-sync.kobo-settings-saved.v1', data: { user_id: user, device_id: row.id, books } }]);
    const token = await issueKoboToken(ctx, trx, user, row.id);
    return ok({ message: 'device created', device, kobo_token: token, books: books ?? 'all' });
  });
}

/** A new token for one of the caller's Kobos; the earlier address stops working at once. */
export async function reissueKoboToken(ctx: Ctx, req: ByUser<'kobo-token-issue'>): Answer<'kobo-token-issue'> {
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    if (d.value.client !== 'kobo') return no(fail('conflict', M.notAKobo));
    const token = await issueKoboToken(ctx, trx, d.value.user_id, d.value.id);
    return ok({ device_id: d.value.id, kobo_token: token, issued_at: ctx.now().toISOString() });
  });
}

export async function koboSettings(ctx: Ctx, req: ByUser<'kobo-settings'>): Answer<'kobo-settings'> {
  const books = booksOf(req.input ?? {});
  if (!books) return no(bad(M.koboBooks));
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    if (d.value.client !== 'kobo') return no(fail('conflict', M.notAKobo));
    if (d.value.kobo_books !== books)
      await ctx.emit(trx, d.value.user_id, [{ type: 'device-sync.kobo-settings-saved.v1', data: { user_id: d.value.user_id, device_id: d.value.id, books } }]);
    return ok({ device_id: d.value.id, books });
  });
}

/** The Kobo took a book off itself: recorded (the book is not offered again until it changes); the file stays. */
export async function koboBookRemove(ctx: Ctx, req: ByDevice<'kobo-book-remove'>): Answer<'kobo-book-remove'> {
  const item = req.input?.media_item_id;
  if (typeof item !== 'string' || !isUuid(item)) return no(bad('invalid media item id'));
  const dev = req.device;
  return ctx.tx(async (trx) => {
    const d = await t(trx).selectFrom('devices').select(['id', 'user_id']).where('id', '=', dev.device_id).executeTakeFirst();
    if (!d || d.user_id !== dev.user_id) return no(notFound(M.deviceNotFound));
    const now = ctx.now().toISOString();
    await ctx.emit(trx, d.user_id, [
      { type: 'device-sync.kobo-book-removed.v1', data: { user_id: d.user_id, device_id: d.id, media_item_id: item.toLowerCase(), removed_at: now } },
    ]);
    return ok({ message: 'book removed from the device' });
  });
}

// A Kobo's sync state (decision 116): the gateway works out what a sync answer sends from its read
// model, and asks here to record it; the device presenting the answer's token confirms it. Each of
// these decides under the device's lock and appends one small event, which this service's
// projection and the gateway's read model fold alike.

const entriesCheck = Compile(Type.Array(DeviceSync.KoboSyncEntry, { maxItems: 1000 }));

/** The Kobo the request names, locked for its sync state until the transaction ends. */
async function lockedKobo(trx: Trx, req: { device: DeviceSync.DeviceCaller }): Promise<Result<{ id: string; user_id: string }>> {
  const dev = req.device;
  await sql`select pg_advisory_xact_lock(hashtext(${`bindery.kobo.${dev.device_id}`}))`.execute(trx);
  const d = await t(trx).selectFrom('devices').select(['id', 'user_id']).where('id', '=', dev.device_id).executeTakeFirst();
  return d && d.user_id === dev.user_id ? ok(d) : no(notFound(M.deviceNotFound));
}

/** The device's generation and its last sync event's position (none before its first answer). */
const genOf = (trx: Trx, device: string) => t(trx).selectFrom('kobo_gen').select(['gen', 'position']).where('device_id', '=', device).executeTakeFirst();

/**
 * A sync request's token: a generation this service gave the device confirms what answers up to it
 * sent; anything else (input gen null: the token is none of ours for this Kobo) resets the state,
 * so everything is sent again. Appends only what changes something; when nothing does, the answer
 * still names the device's last sync event, so a gateway replica waits until its read model has it.
 */
export async function koboSyncConfirm(ctx: Ctx, req: ByDevice<'kobo-sync-confirm'>): Answer<'kobo-sync-confirm'> {
  const gen = req.input?.gen;
  if (gen !== null && !(typeof gen === 'number' && Number.isSafeInteger(gen))) return no(bad('invalid generation'));
  return ctx.tx(async (trx) => {
    const d = await lockedKobo(trx, req);
    if (!d.ok) return d;
    const { id, user_id } = d.value;
    const last = await genOf(trx, id);
    const ours = gen !== null && gen >= 0 && !!last && gen <= Number(last.gen);
    const held = async (table: 'kobo_sent' | 'kobo_pending') => !!(await t(trx).selectFrom(table).select('key').where('device_id', '=', id).limit(1).executeTakeFirst());
    if (ours && (await held('kobo_pending'))) await ctx.emit(trx, user_id, [{ type: 'device-sync.kobo-sync-confirmed.v1', data: { user_id, device_id: id, gen } }]);
    else if (!ours && ((await held('kobo_sent')) || (await held('kobo_pending'))))
      await ctx.emit(trx, user_id, [{ type: 'device-sync.kobo-sync-reset.v1', data: { user_id, device_id: id } }]);
    else if (last && Number(last.position) > 0) notePosition(Number(last.position));
    return ok({ ours });
  });
}

/** What a sync answer sends, pending under the device's next generation (its token names it). */
export async function koboSyncSent(ctx: Ctx, req: ByDevice<'kobo-sync-sent'>): Answer<'kobo-sync-sent'> {
  const entries = req.input?.entries;
  if (!entriesCheck.Check(entries)) return no(bad('invalid sync entries'));
  return ctx.tx(async (trx) => {
    const d = await lockedKobo(trx, req);
    if (!d.ok) return d;
    const { id, user_id } = d.value;
    const gen = Number((await genOf(trx, id))?.gen ?? 0) + 1;
    await ctx.emit(trx, user_id, [{ type: 'device-sync.kobo-sync-sent.v1', data: { user_id, device_id: id, gen, entries } }]);
    return ok({ gen });
  });
}

/** The device wrote a book's reading state itself: it has it (recorded only when it was sent the book). */
export async function koboStateKnown(ctx: Ctx, req: ByDevice<'kobo-state-known'>): Answer<'kobo-state-known'> {
  const item = req.input?.media_item_id;
  const sver = req.input?.sver;
  if (typeof item !== 'string' || !isUuid(item)) return no(bad('invalid media item id'));
  if (typeof sver !== 'string' || sver.length === 0 || sver.length > 100) return no(bad('invalid state version'));
  const key = `i:${item.toLowerCase()}`;
  return ctx.tx(async (trx) => {
    const d = await lockedKobo(trx, req);
    if (!d.ok) return d;
    const { id, user_id } = d.value;
    const sent = await t(trx).selectFrom('kobo_sent').select('key').where('device_id', '=', id).where('key', '=', key).executeTakeFirst();
    const pending = sent
      ? null
      : await t(trx).selectFrom('kobo_pending').select('key').where('device_id', '=', id).where('key', '=', key).where('ever', 'is not', null).executeTakeFirst();
    if (sent || pending) await ctx.emit(trx, user_id, [{ type: 'device-sync.kobo-state-known.v1', data: { user_id, device_id: id, media_item_id: item.toLowerCase(), sver } }]);
    return ok({ message: 'state recorded' });
  });
}
