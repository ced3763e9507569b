// The caller's position in a book: read, write (checked, healed, guarded, or a conflict), remove, history.
import { ok, type Reading, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { ConflictsTable, ProgressTable, Trx } from '../store/db';
import { byContext, conflictReason, contextHint, guardKeeps, parsePosition, place, resolve, type Position } from '../domain/position';
import { sql } from 'kysely';
import { historyRecorded, recordHistory } from '../store/history';
import { SCHEMA } from '../store/migrations';
import { t, type Ctx } from './context';
import { bad, iso, isUuid, M, newId, no, notFound, text, type Req } from './util';
import * as L from '@bindery/locator';

type Row = Selectable<ProgressTable>;
/** A row as `to_jsonb` gives it: timestamps as text */
type JsonRow<R> = Omit<R, 'created_at' | 'updated_at' | 'closed_at'> & { created_at: string; updated_at: string };

export function progressOut(r: Row): Reading.ProgressRecord {
  return {
    id: r.id,
    media_item_id: r.item_id,
    ...r.position,
    percentage: Number(r.percentage),
    finished: Number(r.percentage) >= 1,
    client: r.client,
    device: r.device,
    version: Number(r.version),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** A progress row read as JSON (`to_jsonb`): its timestamps as dates again, as a plain select gives them. */
const fromJson = (j: JsonRow<Row>): Row => ({ ...j, created_at: new Date(j.created_at), updated_at: new Date(j.updated_at) });

export const positionOf = (r: Row) => ({
  ...r.position,
  percentage: Number(r.percentage),
  client: r.client,
  device: r.device,
  version: Number(r.version),
  updated_at: iso(r.updated_at),
});

export async function getProgress(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const r = await t(ctx.db).selectFrom('progress').selectAll().where('user_id', '=', req.caller.user_id).where('item_id', '=', req.item_id!).executeTakeFirst();
  return r ? ok(progressOut(r)) : no(notFound(M.progressNotFound));
}

export async function deleteProgress(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const user = req.caller.user_id;
  const item = req.item_id!;
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, user);
    const gone = await t(trx).deleteFrom('progress').where('user_id', '=', user).where('item_id', '=', item).returningAll().executeTakeFirst();
    if (!gone) return no(notFound(M.progressNotFound));
    // the history stays: it is the way back
    const line = await recordHistory(trx, user, item, {
      percentage: 0,
      position: { percentage: 0 },
      client: gone.client,
      device: gone.device,
      reason: 'deleted',
      recorded_at: ctx.now(),
    });
    await ctx.emit(trx, user, [line, { type: 'reading.progress-deleted.v1', data: { user_id: user, media_item_id: item } }]);
    return ok({ message: 'progress deleted' });
  });
}

interface Incoming {
  position: Position;
  client: string;
  device: string;
  /** the Bindery device that sent it (its credential or sync key); the sync queue does not send it back there */
  device_id?: string | null;
}

/**
 * Stores a position as the current one, with a history entry and the device noted as a writer of
 * the book, in one statement; in the caller's transaction. The stored hashes are the item's (or,
 * while reading does not know the item, the ones the position had).
 */
export async function savePosition(ctx: Ctx, trx: Trx, user: string, item: string, inc: Incoming, reason: string): Promise<Row> {
  const now = ctx.now();
  const { percentage, ...rest } = inc.position;
  const position = JSON.stringify(rest);
  const S = sql.raw(SCHEMA);
  const itemSha = sql`(select i.sha256 from ${S}.items i where i.id = ${item})`;
  const { rows } = await sql<Row>`
    with saved as (
      insert into ${S}.progress as p (id, user_id, item_id, version, created_at, percentage, position, client, device, sha256, updated_at)
      values (${newId()}, ${user}, ${item}, 1, ${now}, ${percentage}, ${position}::jsonb, ${inc.client}, ${inc.device}, coalesce(${itemSha}, '[]'::jsonb), ${now})
      on conflict (user_id, item_id) do update set
        percentage = excluded.percentage, position = excluded.position, client = excluded.client, device = excluded.device,
        sha256 = coalesce(${itemSha}, p.sha256), updated_at = excluded.updated_at, version = p.version + 1
      returning *
    ), history as (
      insert into ${S}.progress_history (user_id, item_id, percentage, position, client, device, reason, recorded_at)
      values (${user}, ${item}, ${percentage}, ${position}::jsonb, ${inc.client}, ${inc.device}, ${reason}, ${now})
    ), writer as (
      insert into ${S}.progress_devices (user_id, item_id, device) values (${user}, ${item}, ${inc.device}) on conflict do nothing
    )
    select * from saved`.execute(trx);
  const row = rows[0]!;
  await ctx.emit(trx, user, [
    {
      type: 'reading.progress-saved.v1',
      data: { user_id: user, media_item_id: item, progress: progressOut(row), ...(inc.device_id ? { device_id: inc.device_id } : {}), sha256: row.sha256 },
    },
    historyRecorded(user, item, { percentage, position: rest, client: inc.client, device: inc.device, reason, recorded_at: now }),
  ]);
  return row;
}

/** Records that this device has written a position of the book (a later write of it is no first push). */
async function knowDevice(trx: Trx, user: string, item: string, device: string): Promise<void> {
  await t(trx)
    .insertInto('progress_devices')
    .values({ user_id: user, item_id: item, device })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function putProgress(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const prepared = await prepareProgress(ctx, req.item_id!, req.input ?? {}, req.device?.device_id);
  if (!prepared.ok) return prepared;
  return ok(await ctx.tx((trx) => writeProgress(ctx, trx, req.caller.user_id, req.item_id!, prepared.value)));
}

export interface Prepared {
  inc: Incoming;
  parsed: Extract<ReturnType<typeof parsePosition>, { ok: true }>;
  baseVersion: number | undefined;
}

/**
 * Checks a submitted position (no transaction needed): the incoming position, or the message.
 * `deviceId` is the Bindery device that sent it, when one did (never taken from the input);
 * `clampPage` heals a page past the last page to the last one (parsePosition).
 */
export async function prepareProgress(
  ctx: Ctx,
  item: string,
  input: Record<string, unknown>,
  deviceId?: string | null,
  opts: { clampPage?: boolean } = {},
): Promise<Result<Prepared>> {
  const client = text(input, 'client', 50);
  if (client === null) return no(bad('client must be text of at most 50 characters'));
  const device = text(input, 'device', 100);
  if (device === null) return no(bad('device must be text of at most 100 characters'));
  let baseVersion: number | undefined;
  if (input.version !== undefined && input.version !== null) {
    baseVersion = Number(input.version);
    if (!Number.isInteger(baseVersion) || baseVersion < 0) return no(bad('version must be a whole number'));
  }
  const meta = await ctx.itemMeta(item);
  const parsed = parsePosition(input, meta?.page_count == null ? null : Number(meta.page_count), opts);
  if (!parsed.ok) return no(bad(parsed.message));
  // an EPUB's position is checked against its locator index and the text the reader saw (pages need neither)
  const p = parsed.position;
  if (meta?.epub_sha256 && p.page === undefined && (p.epubcfi || p.xpointer || p.anchor_href || p.context_text)) {
    const sha = meta.epub_sha256;
    const index = await ctx.locators.get(sha);
    if (index) {
      const r = resolve(index, p);
      let at = r.at;
      parsed.healed.push(...L.healMessages(r.healed));
      const hint = contextHint(index, p, at);
      const found = hint && (await ctx.locators.findText(sha, p.context_text!, hint));
      if (found) {
        const moved = byContext(index, at, found);
        at = moved.at;
        parsed.healed.push(...L.healMessages(moved.healed));
      }
      if (at) parsed.healed.push(...L.healMessages(place(index, p, at)));
    }
  }
  return ok({ inc: { position: parsed.position, client: client || 'web', device: device || client || 'web', device_id: deviceId?.toLowerCase() ?? null }, parsed, baseVersion });
}

export interface Written {
  status: 'saved' | 'kept' | 'conflict';
  healed: string[];
  progress: ReturnType<typeof progressOut>;
  conflict?: unknown;
}

/**
 * Writes a checked position in the caller's transaction: saved, kept by the guard, or a conflict.
 * It copies the healed list: a retried transaction runs it again.
 */
export async function writeProgress(ctx: Ctx, trx: Trx, user: string, item: string, { inc, parsed, baseVersion }: Prepared): Promise<Written> {
  const healed = [...parsed.healed];
  await ctx.lockUser(trx, user);
  // the current position, the book's open conflict and whether this device has written it before, at once
  const S = sql.raw(SCHEMA);
  const { rows } = await sql<{ cur: JsonRow<Row> | null; open: Pick<Selectable<ConflictsTable>, 'id' | 'incoming'> | null; known: boolean }>`
    select
      (select to_jsonb(p) from ${S}.progress p where p.user_id = ${user} and p.item_id = ${item}) as cur,
      (select to_jsonb(c) from ${S}.conflicts c where c.user_id = ${user} and c.item_id = ${item} and c.status = 'open' limit 1) as open,
      exists (select 1 from ${S}.progress_devices d where d.user_id = ${user} and d.item_id = ${item} and d.device = ${inc.device}) as known`.execute(trx);
  const cur = rows[0]!.cur ? fromJson(rows[0]!.cur) : undefined;
  const open = rows[0]!.open;
  const curPct = cur ? Number(cur.percentage) : null;
  if (guardKeeps(curPct, inc.position.percentage, parsed.force)) {
    healed.push(`guard: a first-page position did not overwrite the later position at ${curPct}`);
    return { status: 'kept', healed, progress: progressOut(cur!) };
  }
  const incoming = { ...inc.position, client: inc.client, device: inc.device, ...(inc.device_id ? { bindery_device_id: inc.device_id } : {}), submitted_at: iso(ctx.now()) };
  if (open && open.incoming.device === inc.device && !parsed.force) {
    // the disagreeing device keeps reading: its latest position is what the conflict offers
    const c = await t(trx)
      .updateTable('conflicts')
      .set({ incoming: JSON.stringify(incoming) })
      .where('id', '=', open.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await ctx.emit(trx, user, [{ type: 'reading.progress-conflict-opened.v1', data: { user_id: user, conflict: conflictOut(c) } }]);
    return { status: 'conflict', healed, progress: progressOut(cur!), conflict: conflictOut(c) };
  }
  const known = cur ? rows[0]!.known : true;
  const reason = parsed.force
    ? null
    : conflictReason(
        cur ? { percentage: Number(cur.percentage), device: cur.device, version: Number(cur.version) } : null,
        { percentage: inc.position.percentage, device: inc.device, baseVersion },
        known,
      );
  if (reason && cur) {
    const c = await t(trx)
      .insertInto('conflicts')
      .values({
        id: newId(),
        user_id: user,
        item_id: item,
        status: 'open',
        reason,
        current: JSON.stringify(positionOf(cur)),
        incoming: JSON.stringify(incoming),
        created_at: ctx.now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    // the device is known from now on: what it sends next is a normal write
    await knowDevice(trx, user, item, inc.device);
    await ctx.emit(trx, user, [{ type: 'reading.progress-conflict-opened.v1', data: { user_id: user, conflict: conflictOut(c) } }]);
    return { status: 'conflict', healed, progress: progressOut(cur), conflict: conflictOut(c) };
  }
  const row = await savePosition(ctx, trx, user, item, inc, 'saved');
  return { status: 'saved', healed, progress: progressOut(row) };
}

export function conflictOut(r: Selectable<ConflictsTable>): Reading.ConflictRecord {
  return {
    id: r.id,
    media_item_id: r.item_id,
    status: r.status,
    reason: r.reason,
    current: r.current,
    incoming: r.incoming,
    resolution: r.resolution ?? null,
    created_at: r.created_at.toISOString(),
    closed_at: iso(r.closed_at),
  };
}

/** The item a history or conflict id belongs to: `<id>` is a media item id or a progress record id. */
export async function progressItem(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const id = req.id!;
  if (!isUuid(id)) return no(bad('invalid progress id'));
  const byProgress = await t(ctx.db).selectFrom('progress').select('item_id').where('id', '=', id).where('user_id', '=', req.caller.user_id).executeTakeFirst();
  return ok({ media_item_id: byProgress ? byProgress.item_id : id.toLowerCase() });
}

export async function history(ctx: Ctx, req: Req): Promise<Result<unknown>> {
  const user = req.caller.user_id;
  const item = req.item_id!;
  const rows = await t(ctx.db).selectFrom('progress_history').selectAll().where('user_id', '=', user).where('item_id', '=', item).orderBy('seq', 'desc').limit(1000).execute();
  if (rows.length === 0) return no(notFound(M.progressNotFound));
  return ok({
    media_item_id: item,
    data: rows.map((r) => ({
      ...r.position,
      percentage: Number(r.percentage),
      client: r.client,
      device: r.device,
      reason: r.reason,
      recorded_at: iso(r.recorded_at),
    })),
  });
}
