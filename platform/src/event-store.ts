// An append-only event log per service, in the service's own schema.
// The log is also the outbox: the relay publishes it in position order from a saved checkpoint.
import { sql, type ColumnType, type Generated, type RawBuilder } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { NewEvent, StoredEvent } from '@bindery/contracts';
import type { Bus, EventLog, Subscription } from './bus/types';
import {
  asTables,
  asTablesQ,
  asTablesTrx,
  assertIdent,
  execScript,
  isStalePlan,
  isUniqueViolation,
  toIso,
  unnestRows,
  type Db,
  type DbOrTrx,
  type Migration,
  type Trx,
} from './db';
import type { Logger } from './logger';
import { carryingEvents, noteCommitted, notePosition } from './write-position';

export class ConcurrencyError extends Error {
  readonly kind = 'concurrency';
  constructor(
    readonly streamId: string,
    readonly expected: number,
    readonly actual: number,
    message = `stream ${streamId}: expected version ${expected}, found ${actual}`,
  ) {
    super(message);
  }
}

/** -1: the stream must not exist yet; 'any': no check. Versions start at 0. */
export type ExpectedVersion = number | 'any';

export const eventStoreMigrations: Migration[] = [
  {
    name: 'event-store-001',
    async up(trx, schema) {
      await execScript(
        trx,
        `
        create table ${schema}.events (
          global_position bigserial primary key,
          stream_id text not null,
          stream_version integer not null,
          event_id uuid not null unique,
          type text not null,
          data jsonb not null,
          metadata jsonb not null default '{}',
          recorded_at timestamptz not null default now(),
          tx_id xid8 not null default pg_current_xact_id(),
          constraint events_stream_version_key unique (stream_id, stream_version)
        );
        create table ${schema}.relay_checkpoints (
          name text primary key,
          position bigint not null
        );
        create table ${schema}.consumer_checkpoints (
          consumer text not null,
          source text not null,
          position bigint not null,
          updated_at timestamptz not null default now(),
          primary key (consumer, source)
        );`,
      );
    },
  },
  {
    // Events a consumer set aside after its handler kept failing (see parking.ts). The checkpoint
    // moves past a parked event; a replay applies it through applyOnce, which knows it by this row.
    name: 'event-store-002-parked-events',
    async up(trx, schema) {
      await execScript(
        trx,
        `
        create table ${schema}.parked_events (
          id bigserial primary key,
          consumer text not null,
          source text not null,
          position bigint not null,
          event_id uuid not null,
          event_type text not null,
          event jsonb not null,
          error text not null,
          attempts integer not null,
          parked_at timestamptz not null default now(),
          replayed_at timestamptz,
          constraint parked_events_consumer_event_key unique (consumer, event_id)
        );
        create index parked_events_pending on ${schema}.parked_events (consumer) where replayed_at is null;`,
      );
    },
  },
];

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** The tables platform keeps in every service's schema (event-store migrations above). */
export interface EventStoreTables {
  events: {
    global_position: Generated<number>;
    stream_id: string;
    stream_version: number;
    event_id: string;
    type: string;
    /** jsonb: written as JSON text */
    data: ColumnType<unknown, string, string>;
    metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
    recorded_at: Timestamp;
    tx_id: Generated<string>;
  };
  relay_checkpoints: { name: string; position: number };
  consumer_checkpoints: { consumer: string; source: string; position: number; updated_at: Timestamp };
  parked_events: {
    id: Generated<number>;
    consumer: string;
    source: string;
    position: number;
    event_id: string;
    event_type: string;
    event: ColumnType<StoredEvent | string, string, string>;
    error: string;
    attempts: number;
    parked_at: Timestamp;
    replayed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  };
}

type Row = {
  global_position: number;
  stream_id: string;
  stream_version: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
  recorded_at: Date | string;
};

/** An event as the log stores it (what `appendPart` returns, for `appendedInStatement`). */
export type EventRow = Row;

type Tables = EventStoreTables;

/** how many of the latest committed events a store keeps for `recent` */
const RECENT_MAX = 2048;

/** A service's log; `DB` is the service's own tables, beside which the store keeps its own. */
export class EventStore<DB> implements EventLog {
  private listeners = new Set<() => void>();
  private readonly own: Db<Tables>;
  /**
   * Embedded mode: the events each open transaction appended (by transaction), and the latest
   * committed ones by position, which the in-memory bus hands its consumers instead of reading
   * them back (`recent`). Null until `keepRecent`.
   */
  private kept: { staged: WeakMap<object, StoredEvent[]>; committed: Map<number, StoredEvent> } | null = null;
  /** the events each open transaction appended for a request that carries them (by transaction) */
  private carried = new WeakMap<object, StoredEvent[]>();

  constructor(
    readonly db: Db<DB>,
    /** the owning service: schema name and bus source name */
    readonly source: string,
  ) {
    assertIdent(source);
    this.own = asTables<Tables, DB>(db);
  }

  private t(q: DbOrTrx<DB> | DbOrTrx<Tables>) {
    return asTablesQ<Tables, unknown>(q as DbOrTrx<unknown>).withSchema(this.source);
  }

  private toStored(r: Row): StoredEvent {
    return {
      id: r.event_id,
      type: r.type,
      source: this.source,
      streamId: r.stream_id,
      version: Number(r.stream_version),
      position: Number(r.global_position),
      data: r.data,
      metadata: r.metadata ?? {},
      recordedAt: toIso(r.recorded_at),
    };
  }

  /**
   * Appends inside the caller's transaction so events, the service's own tables and the outbox commit together.
   * Call `notify()` after the transaction commits so the relay and local followers wake at once.
   */
  async append(trx: Trx<DB>, streamId: string, expected: ExpectedVersion, events: NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    if (expected === 'any') return this.appendAny(trx, streamId, events);
    await this.lockAppends(trx);
    const cur = await this.t(trx).selectFrom('events').select(sql<number | null>`max(stream_version)`.as('v')).where('stream_id', '=', streamId).executeTakeFirst();
    const current = cur?.v == null ? -1 : Number(cur.v);
    if (expected !== current) throw new ConcurrencyError(streamId, expected, current);
    const rows = events.map((e, i) => ({
      stream_id: streamId,
      stream_version: current + 1 + i,
      event_id: randomUUID(),
      type: e.type,
      data: JSON.stringify(e.data),
      metadata: JSON.stringify(e.metadata ?? {}),
    }));
    try {
      const inserted = (await this.t(trx).insertInto('events').values(rows).returningAll().execute()) as Row[];
      for (const r of inserted) notePosition(Number(r.global_position));
      return this.stage(
        trx,
        inserted.map((r) => this.toStored(r)),
      );
    } catch (e) {
      // a concurrent writer took the version between our read and insert
      if (isUniqueViolation(e, 'events_stream_version_key')) throw new ConcurrencyError(streamId, expected, current + 1);
      throw e;
    }
  }

  /**
   * Positions must be taken in commit order. Were two transactions to append at once, the later
   * position could commit first, and a reader (the relay, a follower) would take it and move past
   * the lower one for good. So an append holds its store's lock until its transaction ends: appends
   * take turns, from the append to the commit, which is the last step of most commands, and a
   * transaction is visible before its locks are let go, so a read sees a whole prefix of the log.
   */
  private appendLock() {
    return sql`pg_advisory_xact_lock(hashtext(${'bindery.events.' + this.source}))`;
  }

  /**
   * Takes the store's append lock now, held to the transaction's end (an append takes it anyway). A
   * command reads under it when its answer must match exactly what its events act on: no other
   * append lands between the read and its own.
   */
  async lockAppends(trx: Trx<DB> | Trx<Tables>): Promise<void> {
    await sql`select ${this.appendLock()}`.execute(trx);
  }

  private async appendAny(trx: Trx<DB>, streamId: string, events: NewEvent[]): Promise<StoredEvent[]> {
    return (await this.appendAnyMany(trx, [{ streamId, events }]))[0]!;
  }

  /**
   * Appends to each stream at its next versions, whatever they are, in one statement (the versions
   * are read in the insert itself): a batch of commands of different users. Positions follow the
   * order given; each stream may appear once. A concurrent writer that took a version first still
   * fails the unique key. Returns each stream's stored events, in the order given.
   */
  async appendAnyMany(trx: Trx<DB>, streams: { streamId: string; events: NewEvent[] }[]): Promise<StoredEvent[][]> {
    if (streams.every((s) => s.events.length === 0)) return streams.map(() => []);
    const rows = unnestRows(
      'v',
      { k: 'int', i: 'int', stream_id: 'text', event_id: 'uuid', type: 'text', data: 'jsonb', metadata: 'jsonb' },
      streams.flatMap((s, k) => s.events.map((e, i) => [k, i, s.streamId, randomUUID(), e.type, JSON.stringify(e.data), JSON.stringify(e.metadata ?? {})])),
    );
    try {
      const { rows: inserted } = await this.appendPart(sql`select * from ${rows}`).execute(trx);
      inserted.sort((a, b) => Number(a.global_position) - Number(b.global_position));
      for (const r of inserted) notePosition(Number(r.global_position));
      const byStream = new Map<string, StoredEvent[]>();
      for (const ev of this.stage(
        trx,
        inserted.map((r) => this.toStored(r)),
      )) {
        const list = byStream.get(ev.streamId);
        if (list) list.push(ev);
        else byStream.set(ev.streamId, [ev]);
      }
      return streams.map((s) => byStream.get(s.streamId) ?? []);
    } catch (e) {
      if (isUniqueViolation(e, 'events_stream_version_key')) {
        const ids = streams.map((s) => s.streamId).join(', ');
        throw new ConcurrencyError(streams[0]!.streamId, -1, -1, `stream ${ids}: another writer took its next version`);
      }
      throw e;
    }
  }

  /**
   * appendAnyMany's insert as a part of the caller's own statement, a data-modifying CTE: a
   * statement that saves a batch and appends its events at once, with no transaction around it
   * (decision 96), and appendAnyMany's own. `rows` is a query giving the columns k, i, stream_id,
   * event_id, type, data and metadata: a stream's i-th event of the call goes at its next version
   * plus i, positions in the order of k, then i. The append lock is taken at its first
   * row and held to the statement's end, its commit (or the transaction's). A statement of the
   * caller's own hands the rows it returned to `appendedInStatement` once it ran. A concurrent writer that took a stream's
   * next version first fails the unique key, and the whole statement with it.
   */
  appendPart(rows: RawBuilder<unknown>): RawBuilder<Row> {
    const S = sql.raw(this.source);
    return sql<Row>`
      insert into ${S}.events (stream_id, stream_version, event_id, type, data, metadata)
      select r.stream_id, coalesce((select max(e.stream_version) from ${S}.events e where e.stream_id = r.stream_id), -1) + 1 + r.i, r.event_id, r.type, r.data, r.metadata
      from (${rows}) as r
      where ${this.appendLock()} is not null
      order by r.k, r.i
      returning *`;
  }

  /**
   * The events a committed statement appended through `appendPart`, as stored: noted as an append
   * in a committed transaction is (the request's position and carried events, the recent events),
   * and the relay and followers woken. In position order.
   */
  appendedInStatement(rows: readonly Row[]): StoredEvent[] {
    const events = rows.map((r) => this.toStored(r)).sort((a, b) => a.position - b.position);
    if (events.length === 0) return events;
    for (const ev of events) notePosition(ev.position);
    noteCommitted(events);
    if (this.kept) this.hold(events.map((ev) => deepFreeze(structuredClone(ev))));
    this.notify();
    return events;
  }

  /**
   * Starts many streams in one statement (a scan adding hundreds of items). Every stream must be
   * new: one that already exists fails the whole append with a ConcurrencyError. Returns the events as stored.
   */
  async appendNewStreams(trx: Trx<DB>, streams: { streamId: string; events: NewEvent[] }[]): Promise<StoredEvent[]> {
    const rows = streams.flatMap((s) =>
      s.events.map((e, i) => ({
        stream_id: s.streamId,
        stream_version: i,
        event_id: randomUUID(),
        type: e.type,
        data: JSON.stringify(e.data),
        metadata: JSON.stringify(e.metadata ?? {}),
      })),
    );
    if (rows.length === 0) return [];
    await this.lockAppends(trx);
    try {
      // the data and metadata are the caller's: only what the database gave them comes back (a scan's
      // batch of new items would otherwise send its whole JSON back through the driver)
      const inserted = await this.t(trx).insertInto('events').values(rows).returning(['event_id', 'global_position', 'recorded_at']).execute();
      const given = streams.flatMap((s) => s.events);
      const at = new Map<string, number>(rows.map((r, k) => [r.event_id, k]));
      return inserted.map((r) => {
        notePosition(Number(r.global_position));
        const k = at.get(String(r.event_id))!;
        const e = given[k]!;
        const row = rows[k]!;
        return {
          id: row.event_id,
          type: e.type,
          source: this.source,
          streamId: row.stream_id,
          version: row.stream_version,
          position: Number(r.global_position),
          data: e.data,
          metadata: e.metadata ?? {},
          recordedAt: toIso(r.recorded_at as Date),
        };
      });
    } catch (e) {
      if (isUniqueViolation(e, 'events_stream_version_key')) throw new ConcurrencyError(rows[0]!.stream_id, -1, 0);
      throw e;
    }
  }

  /**
   * Appends to many streams, new or not, without a version check, in a few statements (a
   * library's deletion removing each of its thousands of items). A concurrent append to one of
   * them fails the whole call with a ConcurrencyError, to be retried. Returns the events as stored.
   */
  async appendToStreams(trx: Trx<DB>, streams: { streamId: string; events: NewEvent[] }[], chunk = 1000): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    for (let i = 0; i < streams.length; i += chunk) {
      const part = streams.slice(i, i + chunk);
      const heads = new Map<string, number>();
      for (const r of await this.t(trx)
        .selectFrom('events')
        .select(['stream_id', sql<number>`max(stream_version)`.as('v')])
        .where(
          'stream_id',
          'in',
          part.map((s) => s.streamId),
        )
        .groupBy('stream_id')
        .execute())
        heads.set(r.stream_id as string, Number(r.v));
      const rows = part.flatMap((s) =>
        s.events.map((e, k) => ({
          stream_id: s.streamId,
          stream_version: (heads.get(s.streamId) ?? -1) + 1 + k,
          event_id: randomUUID(),
          type: e.type,
          data: JSON.stringify(e.data),
          metadata: JSON.stringify(e.metadata ?? {}),
        })),
      );
      if (rows.length === 0) continue;
      await this.lockAppends(trx);
      try {
        const inserted = (await this.t(trx).insertInto('events').values(rows).returningAll().execute()) as Row[];
        for (const r of inserted) out.push(this.toStored(r));
      } catch (e) {
        if (isUniqueViolation(e, 'events_stream_version_key')) {
          const head = heads.get(rows[0]!.stream_id) ?? -1;
          throw new ConcurrencyError(rows[0]!.stream_id, head, head + 1);
        }
        throw e;
      }
    }
    return out;
  }

  /** The stream's last version (-1 for a stream with no events): what an append after a decision expects. */
  async streamVersion(q: DbOrTrx<DB>, streamId: string): Promise<number> {
    const r = await this.t(q).selectFrom('events').select(sql<number | null>`max(stream_version)`.as('v')).where('stream_id', '=', streamId).executeTakeFirst();
    return r?.v == null ? -1 : Number(r.v);
  }

  async readStream(q: DbOrTrx<DB>, streamId: string): Promise<StoredEvent[]> {
    const rows = (await this.t(q).selectFrom('events').selectAll().where('stream_id', '=', streamId).orderBy('stream_version').execute()) as Row[];
    return rows.map((r) => this.toStored(r));
  }

  /**
   * The log in position order after `after`. Positions are numbered in commit order (appends hold
   * the store's lock to their commit), so what a read sees is a whole prefix: no lower position can
   * commit after a higher one was read. (A guard by transaction id, `tx_id < xmin`, used to stand
   * here instead: ids follow a transaction's first write, not its append, and the guard itself hid a
   * lower position while letting a higher one through, which a reader then moved past for good.)
   */
  async readAll(after: number | RawBuilder<number>, limit = 500, q: DbOrTrx<DB> | DbOrTrx<Tables> = this.own): Promise<StoredEvent[]> {
    const rows = (await this.t(q).selectFrom('events').selectAll().where('global_position', '>', after).orderBy('global_position').limit(limit).execute()) as Row[];
    return rows.map((r) => this.toStored(r));
  }

  /** Where the named relay has published up to. */
  async relayPosition(name: string): Promise<number> {
    const cp = await this.t(this.own).selectFrom('relay_checkpoints').select('position').where('name', '=', name).executeTakeFirst();
    return Number(cp?.position ?? 0);
  }

  async headPosition(): Promise<number> {
    const r = await this.t(this.own).selectFrom('events').select(sql<number | null>`max(global_position)`.as('p')).executeTakeFirst();
    return Number(r?.p ?? 0);
  }

  /** Wakes whoever waits for new events in this process (relay, in-memory followers). */
  notify(): void {
    for (const l of this.listeners) l();
  }

  keepRecent(): void {
    this.kept ??= { staged: new WeakMap(), committed: new Map() };
  }

  /**
   * Notes what a transaction appended, for `committed`: a copy, frozen, for the recent events
   * (consumers share it), and the events themselves for a request that carries them (write-position.ts).
   */
  private stage(trx: object, events: StoredEvent[]): StoredEvent[] {
    if (events.length && carryingEvents()) {
      const list = this.carried.get(trx) ?? [];
      list.push(...events);
      this.carried.set(trx, list);
    }
    if (this.kept && events.length) {
      const list = this.kept.staged.get(trx) ?? [];
      for (const ev of events) list.push(deepFreeze(structuredClone(ev)));
      this.kept.staged.set(trx, list);
    }
    return events;
  }

  /**
   * The transaction `trx` has committed: what it appended joins the recent events, and the request
   * that carries its events gets them. (A transaction that rolled back is never named here; what it
   * staged goes with it.)
   */
  committed(trx: object): void {
    const carried = this.carried.get(trx);
    if (carried) {
      this.carried.delete(trx);
      noteCommitted(carried);
    }
    const list = this.kept?.staged.get(trx);
    if (!list) return;
    this.kept!.staged.delete(trx);
    this.hold(list);
  }

  /** Committed events (frozen copies) join the recent ones; the oldest go past RECENT_MAX. */
  private hold(list: readonly StoredEvent[]): void {
    const k = this.kept;
    if (!k) return;
    for (const ev of list) k.committed.set(ev.position, ev);
    // the map iterates in insertion order: the first keys are the oldest
    for (const p of k.committed.keys()) {
      if (k.committed.size <= RECENT_MAX) break;
      k.committed.delete(p);
    }
  }

  /**
   * The events at after+1, after+2, … for as long as they are held, at most `limit`. Positions are
   * taken in commit order, so a run with no gap is exactly what the log holds there; at the first
   * position not held (never committed here, gone from memory, or a rolled-back append's gap) the
   * caller reads the log.
   */
  recent(after: number, limit: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    const held = this.kept?.committed;
    if (!held) return out;
    for (let p = after + 1; out.length < limit; p++) {
      const ev = held.get(p);
      if (!ev) break;
      out.push(ev);
    }
    return out;
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Publishes the log from the relay checkpoint, in order, one batch per transaction.
   * `publish` must resolve only once the bus has acknowledged every event of the batch.
   * An advisory lock keeps one relay per service active across replicas; a crash before the
   * checkpoint commits republishes the batch, which the bus dedupes by event id.
   */
  async relayOnce(name: string, publish: (events: StoredEvent[]) => Promise<void>, batch = 256): Promise<number> {
    return this.own.transaction().execute(async (trx) => {
      const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtext(${'bindery.relay.' + this.source + '.' + name})) as ok`.execute(trx);
      if (!lock.rows[0]?.ok) return 0;
      // the events after the relay's checkpoint, read with it in one statement
      const after = sql<number>`coalesce((select position from ${sql.raw(this.source)}.relay_checkpoints where name = ${name}), 0)`;
      const events = await this.readAll(after, batch, trx);
      if (events.length === 0) return 0;
      crashPoint('relay-before-publish');
      await publish(events);
      crashPoint('relay-after-publish');
      const last = events[events.length - 1]!.position;
      await this.t(trx)
        .insertInto('relay_checkpoints')
        .values({ name, position: last })
        .onConflict((oc) => oc.column('name').doUpdateSet({ position: last }))
        .execute();
      return events.length;
    });
  }
}

/**
 * Applies an event at most once for a consumer: the checkpoint (source position) moves in the
 * same transaction as the effect, and anything at or below it is skipped. Positions arrive in
 * order from both buses, so a redelivery or a republish after a crash is recognised here.
 * The one exception below the checkpoint is an event parked for this consumer and not yet
 * replayed: it applies once, and its parked row is marked replayed in the same transaction.
 */
export async function applyOnce<DB>(db: Db<DB>, schema: string, consumer: string, event: StoredEvent, effect: (trx: Trx<DB>) => Promise<void>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const s = asTablesTrx<Tables, DB>(trx).withSchema(schema);
    // a row back: the event is new here, and the effect commits with the checkpoint's move
    const { rows: moved } = await moveCheckpoint(schema, consumer, event).execute(trx);
    if (moved.length === 0) {
      const parked = await s
        .updateTable('parked_events')
        .set({ replayed_at: sql`now()` })
        .where('consumer', '=', consumer)
        .where('event_id', '=', event.id)
        .where('replayed_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!parked) return false;
    }
    await effect(trx);
    return true;
  });
}

/**
 * applyOnce for an effect that is one data-modifying statement: the checkpoint's move and the
 * effect run as a single statement (one round trip, no explicit transaction). `effect` gets the
 * condition it must hold to (the event is new here). With `unless`, nothing moves and nothing is
 * written when that condition holds (in the statement's snapshot): the event needs more than these
 * statements. With `through`, the statements apply the run of events from `event` to `through` (a
 * bus that hands several at once) and hold only when the checkpoint is below `event`: every one of
 * them is new. False when the event was not applied (not new, or `unless` held): the caller goes
 * through applyOnce then, which knows parked events and does the rest.
 */
export async function applyOnceInOne<DB>(
  db: Db<DB>,
  schema: string,
  consumer: string,
  event: StoredEvent,
  effect: (isNew: RawBuilder<boolean>) => RawBuilder<unknown> | RawBuilder<unknown>[],
  unless?: RawBuilder<boolean>,
  through?: StoredEvent,
): Promise<boolean> {
  return moveWith(db, moveCheckpoint(schema, consumer, event, unless, through), effect);
}

/**
 * applyOnceInOne for a run of events, `first` to `last`, that follows the consumer's checkpoint
 * exactly (it stands at the position before `first`; no checkpoint stands at 0): events that
 * reached this process before the bus brought them (a write's answer carried them, decision 96).
 * False, and nothing written, when the checkpoint stands anywhere else: an event before the run is
 * not applied yet, or the run is. The bus then brings them as ever, and the consumer passes what
 * is applied.
 */
export async function applyFollowingInOne<DB>(
  db: Db<DB>,
  schema: string,
  consumer: string,
  first: StoredEvent,
  last: StoredEvent,
  effect: (isNew: RawBuilder<boolean>) => RawBuilder<unknown> | RawBuilder<unknown>[],
): Promise<boolean> {
  return moveWith(db, moveFollowing(schema, consumer, first, last), effect);
}

/**
 * applyFollowingInOne for a projection that folds event by event: the checkpoint moves from the
 * position right before `first` to `last` and `effect` folds the run, in one transaction. False, and
 * nothing written, when the checkpoint stands anywhere else.
 */
export async function applyFollowing<DB>(
  db: Db<DB>,
  schema: string,
  consumer: string,
  first: StoredEvent,
  last: StoredEvent,
  effect: (trx: Trx<DB>) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await moveFollowing(schema, consumer, first, last).execute(trx);
    if (rows.length === 0) return false;
    await effect(trx);
    return true;
  });
}

/** The checkpoint's move from the position right before `first` to `last` (a row back when it moved). */
function moveFollowing(schema: string, consumer: string, first: StoredEvent, last: StoredEvent): RawBuilder<{ position: number }> {
  const S = sql.raw(assertIdent(schema));
  const before = first.position - 1;
  return sql<{ position: number }>`
    insert into ${S}.consumer_checkpoints as cp (consumer, source, position)
    select ${consumer}::text, ${first.source}::text, ${last.position}::bigint
    where coalesce((select h.position from ${S}.consumer_checkpoints h where h.consumer = ${consumer}::text and h.source = ${first.source}::text), 0) = ${before}::bigint
    on conflict (consumer, source) do update set position = excluded.position, updated_at = now()
    where cp.position = ${before}::bigint
    returning position`;
}

/** A checkpoint's move and the effects that hold to it, as one statement: true when it moved. */
async function moveWith<DB>(
  db: Db<DB>,
  move: RawBuilder<{ position: number }>,
  effect: (isNew: RawBuilder<boolean>) => RawBuilder<unknown> | RawBuilder<unknown>[],
): Promise<boolean> {
  // several statements become several data-modifying CTEs (they may not nest), all under one snapshot
  // (none: only the checkpoint moves)
  const made = effect(sql<boolean>`exists (select 1 from moved)`);
  const list = Array.isArray(made) ? made : [made];
  const effects = list.length
    ? sql`, ${sql.join(
        list.map((m, i) => sql`${sql.raw(`effect${i}`)} as (${m})`),
        sql`, `,
      )}`
    : sql``;
  const { rows } = await sql<{ n: number }>`
    with moved as (${move})${effects}
    select count(*)::int as n from moved`.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * Moves a consumer's checkpoint to the event (or, for a run of events, to the last one, `through`)
 * when it is behind the event (and `unless` does not hold), in the statement that takes the
 * checkpoint's row lock; returns a row only when it moved (the event, or every event of the run, is
 * new to this consumer).
 */
function moveCheckpoint(schema: string, consumer: string, event: StoredEvent, unless?: RawBuilder<boolean>, through?: StoredEvent): RawBuilder<{ position: number }> {
  const S = sql.raw(assertIdent(schema));
  return sql`
    insert into ${S}.consumer_checkpoints as cp (consumer, source, position)
    select ${consumer}::text, ${event.source}::text, ${(through ?? event).position}::bigint where not (${unless ?? sql<boolean>`false`})
    on conflict (consumer, source) do update set position = excluded.position, updated_at = now()
    where cp.position < ${event.position}::bigint
    returning position`;
}

export async function consumerCheckpoint<DB>(db: Db<DB>, schema: string, consumer: string, source: string): Promise<number> {
  const cp = await asTables<Tables, DB>(db)
    .withSchema(schema)
    .selectFrom('consumer_checkpoints')
    .select('position')
    .where('consumer', '=', consumer)
    .where('source', '=', source)
    .executeTakeFirst();
  return Number(cp?.position ?? 0);
}

/** Where a service's reactions keep their checkpoints, and how a failing one is reported. */
export interface ReactionSite<DB> {
  db: Db<DB>;
  schema: string;
  log: Logger;
  /** names the service in the failure log line: `<label>: reaction failed; it will be retried` */
  label: string;
}

/** A durable reaction to another service's events. */
export interface Reaction<T, DB> {
  source: string;
  /** the consumer's name: its checkpoint row and the bus's durable */
  durable: string;
  types: readonly string[];
  /** applied at most once per event, in the transaction that moves the checkpoint */
  effect(trx: Trx<DB>, ev: StoredEvent): Promise<T>;
  /**
   * A read outside any transaction: true when the event certainly has nothing to do here. It is
   * then passed by without a transaction (nor `after`), and the checkpoint moves past it with the
   * next event that does something; applied again after a restart, it is asked again.
   */
  idle?(ev: StoredEvent): Promise<boolean>;
  /**
   * The effect of a frequent event as statements run in one with the checkpoint's move
   * (applyOnceInOne), when it is that simple: null for any other event. When `unless` holds, or the
   * event is not new, `effect` runs as usual instead.
   */
  inOne?(ev: StoredEvent): { statements: (isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]; unless?: RawBuilder<boolean> } | null;
  /**
   * `inOne` for a leading run of the events that follow (a bus that hands several at once): how many
   * fold together, and their statements. Fewer than two: each goes its own way.
   */
  inOneMany?(evs: StoredEvent[]): { count: number; statements: (isNew: RawBuilder<boolean>) => RawBuilder<unknown>[]; unless?: RawBuilder<boolean> } | null;
  /**
   * Runs after that transaction, on every delivery (a redelivery too): `result` is what the effect
   * returned, undefined when the event had been applied before or in one statement; `inOne` is true
   * when it was applied in one statement just now (`inOne`'s statements, nothing else). A failure
   * here is retried as well.
   */
  after?(ev: StoredEvent, result: T | undefined, inOne: boolean): void | Promise<void>;
}

/**
 * Consumes `source`'s events durably: each is applied once (applyOnce) from the consumer's own
 * checkpoint, then `after` runs. A failure is logged with the event and thrown, so the bus retries
 * it (or parks it); without the log a reaction would retry in silence.
 */
export function react<T, DB>(bus: Bus, site: ReactionSite<DB>, r: Reaction<T, DB>): Promise<Subscription> {
  const { db, schema, log, label } = site;
  return bus.consume({
    source: r.source,
    durable: r.durable,
    types: r.types,
    checkpoint: () => consumerCheckpoint(db, schema, r.durable, r.source),
    handler: async (ev) => {
      try {
        if (r.idle && (await r.idle(ev))) return;
        let result: T | undefined;
        const one = r.inOne?.(ev);
        const inOne = one ? await applyOnceInOne(db, schema, r.durable, ev, one.statements, one.unless) : false;
        if (!inOne) {
          await applyOnce(db, schema, r.durable, ev, async (trx) => {
            result = await r.effect(trx, ev);
          });
        }
        await r.after?.(ev, result, inOne);
      } catch (e) {
        log.error({ err: e, type: ev.type, position: ev.position }, `${label}: reaction failed; it will be retried`);
        throw e;
      }
    },
    ...(r.inOneMany
      ? {
          handleMany: async (evs: StoredEvent[]) => {
            const many = r.inOneMany!(evs);
            if (!many || many.count < 2) return 0;
            if (!(await applyOnceInOne(db, schema, r.durable, evs[0]!, many.statements, many.unless, evs[many.count - 1]))) return 0;
            for (const ev of evs.slice(0, many.count)) await r.after?.(ev, undefined, true);
            return many.count;
          },
        }
      : {}),
  });
}

/**
 * Fault injection for the crash tests: `BINDERY_FAULT_INJECTION=<point>` kills the process with
 * SIGKILL when it reaches that point, as a power cut would. Unset in every real deployment.
 */
export function crashPoint(point: string): void {
  if (process.env.BINDERY_FAULT_INJECTION === point) process.kill(process.pid, 'SIGKILL');
}

/** A failure a command may simply run again after: a deadlock, a serialisation failure, a stale prepared plan. */
export const retryableCode = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001' || isStalePlan(e);
};

/**
 * Runs a command in one transaction, again (up to five times) after a concurrent append, a deadlock
 * or a serialisation failure, then wakes the store's relay and followers.
 */
export async function commandTransaction<T, DB>(db: Db<DB>, store: EventStore<DB>, fn: (trx: Trx<DB>) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      let ran: Trx<DB> | null = null;
      const out = await db.transaction().execute((trx) => {
        ran = trx;
        return fn(trx);
      });
      if (ran) store.committed(ran);
      store.notify();
      return out;
    } catch (e) {
      if ((e instanceof ConcurrencyError || retryableCode(e)) && attempt < 5) continue;
      throw e;
    }
  }
}

/** Freezes an object and everything in it (events handed to several consumers: none may change one). */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}
