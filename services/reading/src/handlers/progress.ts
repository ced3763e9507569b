// The caller's position in a book: read, write (checked, healed, guarded, or a conflict), remove, history.
import { ok, type Reading, type Result } from '@bindery/contracts';
import type { Selectable } from 'kysely';
import type { ConflictsTable, ProgressTable, Trx } from '../store/db';
import { byContext, conflictReason, contextHint, type Given, guardKeeps, parsePosition, place, resolve, type Position } from '../domain/position';
import { sql } from 'kysely';
import { GroupCommit, isUniqueViolation, retryableCode, unnestRows, type EventRow } from '@bindery/platform';
import { historyEntry, historyRecorded } from '../store/history';
import { SCHEMA } from '../store/migrations';
import { foldSavedRun } from '../store/projection';
import { readingEvents, t, type Ctx } from './context';
import { bad, iso, isUuid, M, newId, no, notFound, text, type Answer, type Req } from './util';
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

export async function getProgress(ctx: Ctx, req: Req<'progress-get'>): Answer<'progress-get'> {
  const r = await t(ctx.db).selectFrom('progress').selectAll().where('user_id', '=', req.caller.user_id).where('item_id', '=', req.item_id).executeTakeFirst();
  if (!r) return no(notFound(M.progressNotFound));
  // the caller was given this position: a device credential's device (the KOReader plugin's pull),
  // else the web (its pages and the reader read it here), whose next write follows it
  await deliverQuietly(ctx, req.caller.user_id, req.device?.name ?? 'web', req.device ? 'plugin' : 'web', [{ item: r.item_id, version: Number(r.version) }]);
  return ok(progressOut(r));
}

/** A position a device was given: the item, and which version of its position (or the time it was written). */
export interface Delivery {
  item: string;
  version?: number;
  updated_at?: string;
}

const sameTime = (a: Date | string, b: string) => new Date(a).getTime() === new Date(b).getTime();

/**
 * Records what `device` was given of the user's positions (`reading.progress-delivered.v1`): for
 * each book whose current position is the one delivered, its id, version and place, unless the
 * device already holds that version or wrote it itself. Under the user's lock, so the receipts are
 * written in the order of their events. Returns how many were recorded.
 */
export async function deliver(ctx: Ctx, user: string, device: string, via: string, list: Delivery[]): Promise<number> {
  if (list.length === 0) return 0;
  const wanted = new Map(list.map((d) => [d.item, d]));
  const matches = (p: Pick<Row, 'item_id' | 'version' | 'updated_at' | 'device'>) => {
    const w = wanted.get(p.item_id);
    if (!w || p.device === device) return false;
    if (w.version !== undefined) return Number(p.version) === w.version;
    return w.updated_at !== undefined && sameTime(p.updated_at, w.updated_at);
  };
  const read = async (db: Trx | Ctx['db']) =>
    (
      await t(db)
        .selectFrom('progress as p')
        .leftJoin('progress_receipts as r', (j) => j.onRef('r.user_id', '=', 'p.user_id').onRef('r.item_id', '=', 'p.item_id').on('r.device', '=', device))
        .select(['p.id', 'p.item_id', 'p.version', 'p.percentage', 'p.updated_at', 'p.device', 'r.progress_id as held_id', 'r.version as held_version'])
        .where('p.user_id', '=', user)
        .where('p.item_id', 'in', [...wanted.keys()])
        .execute()
    ).filter((p) => matches(p) && !(p.held_id === p.id && Number(p.held_version) === Number(p.version)));
  if ((await read(ctx.db)).length === 0) return 0;
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, user);
    const rows = await read(trx);
    if (rows.length === 0) return 0;
    const now = ctx.now();
    const delivered = rows.map((p) => ({ media_item_id: p.item_id, progress_id: p.id, version: Number(p.version), percentage: Number(p.percentage) }));
    const data = { user_id: user, device, via, delivered, delivered_at: iso(now)! };
    // the projection folds it into the receipts (store/receipts.ts)
    await ctx.emit(trx, user, [{ type: 'reading.progress-delivered.v1', data }]);
    return delivered.length;
  });
}

/** deliver for a read that answers anyway: a failure to record is logged, never the reader's error. */
export async function deliverQuietly(ctx: Ctx, user: string, device: string, via: string, list: Delivery[]): Promise<void> {
  try {
    await deliver(ctx, user, device, via, list);
  } catch (e) {
    ctx.rt.log.warn({ user_id: user, via, err: (e as Error).message }, 'reading: a delivered position was not recorded');
  }
}

/** `progress-delivered` (the Kobo routes): the reading states a device credential's Kobo was sent. */
export async function progressDelivered(ctx: Ctx, req: Req<'progress-delivered'>): Answer<'progress-delivered'> {
  if (!req.device) return no(bad('a device is required'));
  const raw = req.input?.delivered;
  if (!Array.isArray(raw) || raw.length > 500) return no(bad('delivered must be a list of at most 500 positions'));
  const list: Delivery[] = [];
  for (const d of raw as Record<string, unknown>[]) {
    if (typeof d !== 'object' || d === null || !isUuid(d.media_item_id)) return no(bad('delivered must name media items'));
    const version = d.version;
    const at = d.updated_at;
    if (version !== undefined && !(Number.isInteger(version) && (version as number) > 0)) return no(bad('version must be a whole number'));
    if (at !== undefined && (typeof at !== 'string' || Number.isNaN(new Date(at).getTime()))) return no(bad('updated_at must be a time'));
    list.push({
      item: (d.media_item_id as string).toLowerCase(),
      ...(version !== undefined ? { version: version as number } : {}),
      ...(at !== undefined ? { updated_at: at as string } : {}),
    });
  }
  const via = typeof req.input?.via === 'string' && /^[a-z-]{1,40}$/.test(req.input.via) ? req.input.via : 'device';
  return ok({ recorded: await deliver(ctx, req.caller.user_id, req.device.name, via, list) });
}

export async function deleteProgress(ctx: Ctx, req: Req<'progress-delete'>): Answer<'progress-delete'> {
  const user = req.caller.user_id;
  const item = req.item_id;
  return ctx.tx(async (trx) => {
    await ctx.lockUser(trx, user);
    const gone = await t(trx).selectFrom('progress').selectAll().where('user_id', '=', user).where('item_id', '=', item).executeTakeFirst();
    if (!gone) return no(notFound(M.progressNotFound));
    // the history stays: it is the way back
    const line = historyRecorded(user, item, {
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
  /** another name the device was given positions under (a stock KOReader's pull by password: `kosync:<document>`) */
  receivedAs?: string | null;
  /** what the device counts of its reading time (decision 120): carried by the `progress-saved` event */
  time?: ReadingTime;
}

/** A device's own count of reading time, as a save's event carries it (decision 120). */
export interface ReadingTime {
  spent_seconds?: number;
  active_seconds?: number;
}

/** the most reading time a device may state: its total in a book (ten years), or its active time since its previous save (a day) */
const MAX_SPENT_SECONDS = 10 * 366 * 86400;
const MAX_ACTIVE_SECONDS = 86400;

/** The reading time a position's input states (`spent_seconds`, `active_seconds`), or the message; both optional. */
function readingTime(input: Record<string, unknown>): Result<ReadingTime> {
  const out: ReadingTime = {};
  for (const [key, max] of [
    ['spent_seconds', MAX_SPENT_SECONDS],
    ['active_seconds', MAX_ACTIVE_SECONDS],
  ] as const) {
    const v = input[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) return no(bad(`${key} must be a whole number of seconds from 0 to ${max}`));
    out[key] = v;
  }
  return ok(out);
}

/** A position to store as the current one (savePositions). */
export interface ToSave {
  user: string;
  item: string;
  inc: Incoming;
  reason: string;
}

/**
 * Stores a position as the current one, with a history entry and the device noted as a writer of
 * the book (its `progress-saved` event, which the projection folds); in the caller's transaction.
 * The stored hashes are the item's (or, while reading does not know the item, the ones the position
 * had).
 */
export async function savePosition(ctx: Ctx, trx: Trx, user: string, item: string, inc: Incoming, reason: string): Promise<Row> {
  return (await savePositions(ctx, trx, [{ user, item, inc, reason }]))[0]!;
}

/**
 * savePosition for several (user, book) pairs at once, each once: one statement reads their current
 * positions and the items' hashes, one appends every user's events (folded by the projection), one
 * reads the stored rows back. Returns the stored rows in the order given.
 */
export async function savePositions(ctx: Ctx, trx: Trx, list: ToSave[]): Promise<Row[]> {
  const now = ctx.now();
  const S = sql.raw(SCHEMA);
  const values = unnestRows(
    'v',
    { k: 'int', user_id: 'uuid', item_id: 'uuid' },
    list.map((w, k) => [k, w.user, w.item]),
  );
  const { rows: found } = await sql<{ k: number; cur: JsonRow<Row> | null; sha256: string[] | null }>`
    select v.k,
      (select to_jsonb(p) from ${S}.progress p where p.user_id = v.user_id and p.item_id = v.item_id) as cur,
      (select i.sha256 from ${S}.items i where i.id = v.item_id) as sha256
    from ${values}
    order by v.k`.execute(trx);
  await ctx.emitMany(
    trx,
    list.map((w, k) => {
      const f = found[k]!;
      const cur = f.cur ? fromJson(f.cur) : undefined;
      const { percentage, ...rest } = w.inc.position;
      const sha256 = f.sha256 ?? cur?.sha256 ?? [];
      const progress = progressOut({
        id: cur?.id ?? newId(),
        user_id: w.user,
        item_id: w.item,
        version: cur ? Number(cur.version) + 1 : 1,
        created_at: cur?.created_at ?? now,
        updated_at: now,
        percentage,
        position: rest,
        client: w.inc.client,
        device: w.inc.device,
        sha256,
      });
      return {
        user: w.user,
        // one event a save: its history line rides in it (half the events of the busiest write)
        events: [
          {
            type: 'reading.progress-saved.v1',
            data: {
              user_id: w.user,
              media_item_id: w.item,
              progress,
              ...(w.inc.device_id ? { device_id: w.inc.device_id } : {}),
              ...w.inc.time,
              sha256,
              history: historyEntry({ percentage, position: rest, client: w.inc.client, device: w.inc.device, reason: w.reason, recorded_at: now }),
            },
          },
        ],
      };
    }),
  );
  const { rows } = await sql<Row & { k: number }>`
    select p.*, v.k from ${values} join ${S}.progress p on p.user_id = v.user_id and p.item_id = v.item_id order by v.k`.execute(trx);
  const byK = new Map(rows.map((r) => [Number(r.k), r]));
  return list.map((_, k) => {
    const { k: _k, ...row } = byK.get(k)!;
    return row as Row;
  });
}

export async function putProgress(ctx: Ctx, req: Req<'progress-put'>): Answer<'progress-put'> {
  const prepared = await prepareProgress(ctx, req.item_id, req.input ?? {}, req.device?.device_id);
  if (!prepared.ok) return prepared;
  const job = { user: req.caller.user_id, item: req.item_id, prepared: prepared.value };
  // null: a conflict to open, or a position that moved since it was read: the locked way, in a transaction
  return ok((await positionWrites(ctx).submit(job)) ?? (await ctx.tx((trx) => writeProgress(ctx, trx, job.user, job.item, job.prepared))));
}

const groups = new WeakMap<Ctx, GroupCommit<WriteJob, Written | null>>();

/**
 * The service's position writes, group-committed (decision 86) without a transaction (decision
 * 96): writes of different users that arrive while a batch runs go together in the next; a user's
 * own writes take turns.
 */
function positionWrites(ctx: Ctx): GroupCommit<WriteJob, Written | null> {
  let g = groups.get(ctx);
  if (!g) {
    const { groupCommit, groupCommitJobs } = ctx.rt.metrics;
    const name = { name: 'reading.progress' };
    g = new GroupCommit<WriteJob, Written | null>({
      many: (jobs) => writeBatch(ctx, jobs),
      alone: async (job) => (await writeBatch(ctx, [job]))[0]!,
      key: (job) => job.user,
      // a write's answer carries and waits for its own events only (its user's stream), not the batch's
      own: (job, events) => events.filter((e) => e.streamId === `user:${job.user}`),
      observe: (jobs, seconds) => {
        groupCommit.observe(name, seconds);
        groupCommitJobs.observe(name, jobs);
      },
    });
    groups.set(ctx, g);
  }
  return g;
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
  const time = readingTime(input);
  if (!time.ok) return time;
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
  return ok({
    inc: { position: parsed.position, client: client || 'web', device: device || client || 'web', device_id: deviceId?.toLowerCase() ?? null, time: time.value },
    parsed,
    baseVersion,
  });
}

/** A write's outcome, as `progress-put` answers it. */
export type Written = Reading.ProgressWritten;

/**
 * What a write is decided on: the book's current position, its open conflict, whether the device
 * wrote it before, and what it was last given of the current position (null: nothing of it).
 */
interface Found {
  cur: Row | undefined;
  open: Pick<Selectable<ConflictsTable>, 'id' | 'incoming'> | null;
  known: boolean;
  received: Given | null;
}

/** Found for several (user, book, device) at once, in one statement, in the order given. */
async function findMany(trx: Trx | Ctx['db'], list: { user: string; item: string; device: string; also?: string | null }[]): Promise<Found[]> {
  const S = sql.raw(SCHEMA);
  const values = unnestRows(
    'v',
    { k: 'int', user_id: 'uuid', item_id: 'uuid', device: 'text', also: 'text' },
    list.map((w, k) => [k, w.user, w.item, w.device, w.also ?? null]),
  );
  const { rows } = await sql<{
    k: number;
    cur: JsonRow<Row> | null;
    open: Found['open'];
    known: boolean;
    received: { progress_id: string; version: number; percentage: number } | null;
  }>`
    select v.k,
      (select to_jsonb(p) from ${S}.progress p where p.user_id = v.user_id and p.item_id = v.item_id) as cur,
      (select to_jsonb(c) from ${S}.conflicts c where c.user_id = v.user_id and c.item_id = v.item_id and c.status = 'open' limit 1) as open,
      exists (select 1 from ${S}.progress_devices d where d.user_id = v.user_id and d.item_id = v.item_id and d.device = v.device) as known,
      (select jsonb_build_object('progress_id', r.progress_id, 'version', r.version, 'percentage', r.percentage) from ${S}.progress_receipts r
        where r.user_id = v.user_id and r.item_id = v.item_id and (r.device = v.device or r.device = v.also) order by r.version desc limit 1) as received
    from ${values}
    order by v.k`.execute(trx);
  return rows.map((r) => {
    const cur = r.cur ? fromJson(r.cur) : undefined;
    // a receipt counts only for the record it was given of (a position deleted and begun again is another)
    const received = r.received && cur && r.received.progress_id === cur.id ? { version: Number(r.received.version), percentage: Number(r.received.percentage) } : null;
    return { cur, open: r.open, known: r.known, received };
  });
}

/** A write of one user's position in a book (a batch holds several, of different users). */
export interface WriteJob {
  user: string;
  item: string;
  prepared: Prepared;
}

/**
 * Writes a checked position in the caller's transaction: saved, kept by the guard, or a conflict.
 * It copies the healed list: a retried transaction runs it again.
 */
export async function writeProgress(ctx: Ctx, trx: Trx, user: string, item: string, prepared: Prepared): Promise<Written> {
  return (await writeMany(ctx, trx, [{ user, item, prepared }]))[0]!;
}

/**
 * writeProgress for several users' writes in one transaction (each user once): their locks in one
 * statement, their current positions in one, the saved positions in one and their events in one.
 */
export async function writeMany(ctx: Ctx, trx: Trx, jobs: WriteJob[]): Promise<Written[]> {
  await ctx.lockUsers(
    trx,
    jobs.map((j) => j.user),
  );
  const found = await findMany(
    trx,
    jobs.map((j) => ({ user: j.user, item: j.item, device: j.prepared.inc.device, also: j.prepared.inc.receivedAs })),
  );
  const out: (Written | null)[] = [];
  const toSave: { at: number; save: ToSave; healed: string[] }[] = [];
  for (const [k, job] of jobs.entries()) {
    const healed = [...job.prepared.parsed.healed];
    const decided = await decide(ctx, trx, job, found[k]!, healed);
    out.push(decided);
    if (!decided) toSave.push({ at: k, save: { user: job.user, item: job.item, inc: job.prepared.inc, reason: 'saved' }, healed });
  }
  if (toSave.length) {
    const rows = await savePositions(
      ctx,
      trx,
      toSave.map((x) => x.save),
    );
    for (const [i, x] of toSave.entries()) out[x.at] = { status: 'saved', healed: x.healed, progress: progressOut(rows[i]!) };
  }
  return out as Written[];
}

/**
 * A batch of position writes with no transaction around it (decision 96): the current positions
 * are read without a lock and each write judged on them; those to save are saved, recorded in the
 * history and appended in one statement, each only where its position is still the one read (its
 * version), under its user's lock. Null for a write that goes the locked way (writeProgress in a
 * transaction): a conflict to open or offer, or a position that moved meanwhile (another replica,
 * another route). The statement is the batch's only write: a batch that throws wrote nothing.
 */
async function writeBatch(ctx: Ctx, jobs: WriteJob[]): Promise<(Written | null)[]> {
  const found = await findMany(
    ctx.db,
    jobs.map((j) => ({ user: j.user, item: j.item, device: j.prepared.inc.device, also: j.prepared.inc.receivedAs })),
  );
  const out: (Written | null)[] = jobs.map(() => null);
  const toSave: Optimistic[] = [];
  for (const [k, job] of jobs.entries()) {
    const healed = [...job.prepared.parsed.healed];
    const v = judge(job, found[k]!, healed);
    if (v.kind === 'save') toSave.push({ at: k, job, cur: found[k]!.cur, known: found[k]!.known, healed });
    else if (v.kind === 'kept') out[k] = v.written;
    // a conflict to open or offer: the locked way writes it, judged again under the user's lock
  }
  if (toSave.length === 0) return out;
  const saved = await saveIfUnmoved(ctx, toSave);
  for (const x of toSave) {
    const row = saved?.get(x.at);
    if (row) out[x.at] = { status: 'saved', healed: x.healed, progress: progressOut(row) };
  }
  return out;
}

/** A write to save where its position is still `cur` (writeBatch). */
interface Optimistic {
  at: number;
  job: WriteJob;
  cur: Row | undefined;
  known: boolean;
  healed: string[];
}

/** What a write comes to, judged on the book's current position (no write made here). */
type Verdict =
  | { kind: 'kept'; written: Written }
  | { kind: 'save' }
  /** the device that disagrees keeps reading: its open conflict offers this position instead */
  | { kind: 'offer'; open: NonNullable<Found['open']> }
  | { kind: 'conflict'; reason: NonNullable<ReturnType<typeof conflictReason>>; cur: Row };

/** The guard, then whether the write offers its position to an open conflict or opens one, else save. */
function judge({ prepared }: WriteJob, { cur, open, known, received }: Found, healed: string[]): Verdict {
  const { inc, parsed, baseVersion } = prepared;
  const curPct = cur ? Number(cur.percentage) : null;
  if (guardKeeps(curPct, inc.position.percentage, parsed.force)) {
    healed.push(`guard: a first-page position did not overwrite the later position at ${curPct}`);
    return { kind: 'kept', written: { status: 'kept', healed, progress: progressOut(cur!) } };
  }
  if (parsed.force) return { kind: 'save' };
  if (open && open.incoming.device === inc.device) return { kind: 'offer', open };
  const reason = conflictReason(
    cur ? { percentage: Number(cur.percentage), device: cur.device, version: Number(cur.version) } : null,
    { percentage: inc.position.percentage, device: inc.device, baseVersion },
    cur ? known : true,
    received,
  );
  return reason && cur ? { kind: 'conflict', reason, cur } : { kind: 'save' };
}

/** errors after which a batch's writes go the locked way: another writer took a stream's version, or one a command runs again after */
const goesLocked = (e: unknown): boolean => isUniqueViolation(e, 'events_stream_version_key') || retryableCode(e);

/**
 * Saves each position where it is still the one read (its version; none for a book not read yet),
 * with its history line, the device noted as a writer of the book, and its event appended, in one
 * statement under the users' locks (taken first, sorted, as `lockUsers` takes them). The saved rows
 * by `at`; a write missing from them moved meanwhile. Null when the statement gave way to another
 * writer (all go the locked way).
 */
async function saveIfUnmoved(ctx: Ctx, list: Optimistic[]): Promise<Map<number, Row> | null> {
  const now = ctx.now();
  const S = sql.raw(SCHEMA);
  const rows = list.map((x) => {
    const { user, item, prepared } = x.job;
    const { percentage, ...rest } = prepared.inc.position;
    const id = x.cur?.id ?? newId();
    const version = x.cur ? Number(x.cur.version) + 1 : 1;
    const progress = progressOut({
      id,
      user_id: user,
      item_id: item,
      version,
      created_at: x.cur?.created_at ?? now,
      updated_at: now,
      percentage,
      position: rest,
      client: prepared.inc.client,
      device: prepared.inc.device,
      sha256: x.cur?.sha256 ?? [],
    });
    // the event as savePositions makes it; its sha256 (the item's, else the row's) is set in the statement
    const event: Reading.ReadingEvent = {
      type: 'reading.progress-saved.v1',
      data: {
        user_id: user,
        media_item_id: item,
        progress,
        ...(prepared.inc.device_id ? { device_id: prepared.inc.device_id } : {}),
        ...prepared.inc.time,
        sha256: x.cur?.sha256 ?? [],
        history: historyEntry({ percentage, position: rest, client: prepared.inc.client, device: prepared.inc.device, reason: 'saved', recorded_at: now }),
      },
    };
    readingEvents.check([event]);
    return [x.at, user, item, x.known, x.cur ? JSON.stringify(x.cur.sha256) : null, `user:${user}`, newId(), JSON.stringify(event.data)];
  });
  const values = unnestRows('v', { k: 'int', user_id: 'uuid', item_id: 'uuid', known: 'boolean', cur_sha256: 'jsonb', stream_id: 'text', event_id: 'uuid', data: 'jsonb' }, rows);
  // the events as appended, each its position's `progress-saved` with the hashes stored: the item's, else the row's
  const appended = ctx.store.appendPart(sql`
    select ev.k, 0 as i, ev.stream_id, ev.event_id, 'reading.progress-saved.v1' as type, ev.d as data, '{}'::jsonb as metadata
    from ev join saved s on s.user_id = ev.user_id and s.item_id = ev.item_id`);
  const ofSaved = sql`join saved s on s.user_id = ev.user_id and s.item_id = ev.item_id`;
  let result: { rows: (EventRow & { k: number; saved: JsonRow<Row> })[] };
  try {
    // the projection's batched fold of these events (store/projection.ts, foldSavedRun), each
    // where its position is still the one read
    result = await sql<EventRow & { k: number; saved: JsonRow<Row> }>`
    with v as (select * from ${values}),
    locks as materialized (select ${ctx.userLocks(list.map((x) => x.job.user))} as n),
    ev as (
      select v.k, v.user_id, v.item_id, v.known, v.stream_id, v.event_id, v.data || jsonb_build_object('sha256', coalesce(i.sha256, v.cur_sha256, '[]'::jsonb)) as d
      from v left join ${S}.items i on i.id = v.item_id
    ),
    ${foldSavedRun(S, sql`(select n from locks) >= 0`)}, appended as (${appended})
    select a.*, ev.k, to_jsonb(s) as saved
    from appended a join ev on ev.event_id = a.event_id ${ofSaved}`.execute(ctx.db);
  } catch (e) {
    if (goesLocked(e)) return null;
    throw e;
  }
  ctx.store.appendedInStatement(result.rows);
  return new Map(result.rows.map((r) => [Number(r.k), fromJson(r.saved)]));
}

/** Kept by the guard or a conflict (written here), or null: the position is to be saved. */
async function decide(ctx: Ctx, trx: Trx, job: WriteJob, found: Found, healed: string[]): Promise<Written | null> {
  const v = judge(job, found, healed);
  if (v.kind === 'kept') return v.written;
  if (v.kind === 'save') return null;
  const { user, item, prepared } = job;
  const { inc } = prepared;
  const incoming = { ...inc.position, client: inc.client, device: inc.device, ...(inc.device_id ? { bindery_device_id: inc.device_id } : {}), submitted_at: iso(ctx.now()) };
  if (v.kind === 'offer') {
    const open = await conflictRow(trx, v.open.id);
    await ctx.emit(trx, user, [{ type: 'reading.progress-conflict-opened.v1', data: { user_id: user, conflict: { ...conflictOut(open), incoming } } }]);
    const c = await conflictRow(trx, open.id);
    return { status: 'conflict', healed, progress: progressOut(found.cur!), conflict: conflictOut(c) };
  }
  const now = ctx.now();
  const opened: Reading.ConflictRecord = {
    id: newId(),
    media_item_id: item,
    status: 'open',
    reason: v.reason,
    current: positionOf(v.cur),
    incoming,
    resolution: null,
    created_at: now.toISOString(),
    closed_at: null,
  };
  // the projection notes the device as known from now on: what it sends next is a normal write
  await ctx.emit(trx, user, [{ type: 'reading.progress-conflict-opened.v1', data: { user_id: user, conflict: opened } }]);
  const c = await conflictRow(trx, opened.id);
  return { status: 'conflict', healed, progress: progressOut(v.cur), conflict: conflictOut(c) };
}

/** A conflict as stored (the projection's row). */
export const conflictRow = (trx: Trx, id: string) => t(trx).selectFrom('conflicts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

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
export async function progressItem(ctx: Ctx, req: Req<'progress-item'>): Answer<'progress-item'> {
  const id = req.id;
  if (!isUuid(id)) return no(bad('invalid progress id'));
  const byProgress = await t(ctx.db).selectFrom('progress').select('item_id').where('id', '=', id).where('user_id', '=', req.caller.user_id).executeTakeFirst();
  return ok({ media_item_id: byProgress ? byProgress.item_id : id.toLowerCase() });
}

export async function history(ctx: Ctx, req: Req<'progress-history'>): Answer<'progress-history'> {
  const user = req.caller.user_id;
  const item = req.item_id;
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
