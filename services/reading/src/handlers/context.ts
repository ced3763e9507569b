// What every reading handler shares: the runtime, the event store, and the transaction helper.
import { sql, type RawBuilder } from 'kysely';
import { LRUCache } from 'lru-cache';
import { asTables, commandTransaction, eventSchemas, EventStore, type NoTables, type ReactionSite, type Runtime, type Subscription } from '@bindery/platform';
import { Reading, type StoredEvent } from '@bindery/contracts';
import { projectReading } from '../store/projection';
import type { Db, ReadingDb, Trx } from '../store/db';
import { SCHEMA } from '../store/migrations';
import { LocatorIndexes } from './locator';

/** reading's own events, checked before each append */
export const readingEvents = eventSchemas(Reading.ReadingEvents);

/** how long a replica keeps an item's facts in distributed mode (another replica may apply their change) */
const ITEM_META_TTL_MS = 10_000;

export interface ItemMeta {
  page_count: number | null;
  epub_sha256: string | null;
}

export class Ctx {
  readonly store: EventStore<ReadingDb>;
  /** books' locator indexes, from the catalog, for checking and healing positions */
  readonly locators: LocatorIndexes;
  /** where its reactions to other services keep their checkpoints */
  readonly site: ReactionSite<ReadingDb>;
  /** the runtime's database, typed by reading's tables */
  readonly db: Db;

  /**
   * Items' page counts and EPUB hashes, read once and kept. A process drops them whenever it applies
   * catalog events (`itemsChanged`). With replicas (distributed) the replica that applies an event
   * is not always the one asked: it tells the others (`ItemsChangedSubject`, a transient message),
   * and each copy lives at most ITEM_META_TTL_MS in case such a message was lost (decision 92).
   */
  private metas: LRUCache<string, { meta: ItemMeta | undefined }>;
  /** moves whenever the kept facts are dropped: a read that began before does not keep what it read */
  private metaGeneration = 0;
  private announcing = false;

  constructor(readonly rt: Runtime) {
    this.db = asTables<ReadingDb, NoTables>(rt.db);
    this.store = new EventStore(this.db, SCHEMA);
    this.locators = new LocatorIndexes(rt);
    this.site = { db: this.db, schema: SCHEMA, log: rt.log, label: 'reading' };
    this.metas = new LRUCache({ max: 20_000, ...(rt.mode === 'embedded' ? {} : { ttl: ITEM_META_TTL_MS }) });
  }

  async itemMeta(item: string): Promise<ItemMeta | undefined> {
    const cached = this.metas.get(item);
    if (cached) return cached.meta;
    const generation = this.metaGeneration;
    const row = await t(this.db).selectFrom('items').select(['page_count', 'epub_sha256']).where('id', '=', item).executeTakeFirst();
    const meta = row ? { page_count: row.page_count, epub_sha256: row.epub_sha256 } : undefined;
    if (generation === this.metaGeneration) this.metas.set(item, { meta });
    return meta;
  }

  /** Drops the item facts this process keeps. */
  forgetItems(): void {
    this.metaGeneration++;
    this.metas.clear();
  }

  /**
   * This process applied catalog events to reading's items (called once they are committed): its
   * kept facts go and, in distributed mode, the other replicas are told, in one message a turn of
   * the event loop however many events a run brought.
   */
  itemsChanged(): void {
    this.forgetItems();
    if (this.rt.mode === 'embedded' || this.announcing) return;
    this.announcing = true;
    setImmediate(() => {
      this.announcing = false;
      this.rt.bus.notify(Reading.ItemsChangedSubject, {});
    });
  }

  /** Distributed mode: drops the kept item facts whenever a replica (this one too) changed the items. */
  listenForItemChanges(): Promise<Subscription | null> {
    if (this.rt.mode === 'embedded') return Promise.resolve(null);
    return this.rt.bus.listen(Reading.ItemsChangedSubject, () => this.forgetItems());
  }

  now(): Date {
    return this.rt.now();
  }

  /** Runs a command in one transaction (retried on a concurrent append, a deadlock or a serialisation failure), then wakes the relay. */
  tx<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return commandTransaction(this.db, this.store, fn);
  }

  /**
   * Appends to a user's stream (every event must match its contract schema) and folds the events
   * into reading's tables in the same transaction (store/projection.ts): the one way those rows change.
   */
  async emit(trx: Trx, userOrStream: string, events: Reading.ReadingEvent[]): Promise<void> {
    readingEvents.check(events);
    const stream = userOrStream.includes(':') ? userOrStream : `user:${userOrStream}`;
    // one user's writes to different books append to one stream: taking turns here, rather than
    // racing for its next version and retrying, keeps a busy reader's writes from failing
    await this.lock(trx, `stream.${stream}`);
    await fold(trx, events, await this.store.append(trx, stream, 'any', events));
  }

  /**
   * Appends to several users' streams in one statement (a batch of writes of different users, each
   * once), and folds the events as `emit` does; every event must match its contract schema. Their
   * stream locks are taken first.
   */
  async emitMany(trx: Trx, writes: { user: string; events: Reading.ReadingEvent[] }[]): Promise<void> {
    for (const w of writes) readingEvents.check(w.events);
    await this.lockUsers(
      trx,
      writes.map((w) => w.user),
    );
    const stored = await this.store.appendAnyMany(
      trx,
      writes.map((w) => ({ streamId: `user:${w.user}`, events: w.events })),
    );
    for (const [k, w] of writes.entries()) await fold(trx, w.events, stored[k]!);
  }

  /**
   * Takes the stream locks of several users in one statement, always in the same order (two
   * batches of the same users never wait for each other in a circle).
   */
  lockUsers(trx: Trx, users: string[]): Promise<void> {
    return this.lockAll(
      trx,
      users.map((u) => `stream.user:${u}`),
    );
  }

  /**
   * Takes the user's stream lock: the one every write of theirs that emits ends up taking, so a
   * position write that takes it first needs no lock of its own (and one statement less).
   */
  lockUser(trx: Trx, user: string): Promise<void> {
    return this.lock(trx, `stream.user:${user}`);
  }

  /**
   * A statement part that takes the stream locks of `users` as `lockUsers` does (in name order; none
   * in embedded mode), for a statement with no transaction around it: its value is how many.
   */
  userLocks(users: readonly string[]): RawBuilder<number> {
    return takeLocks(this.rt.mode === 'embedded' ? [] : [...new Set(users)].map((u) => lockName(`stream.user:${u}`)));
  }

  private held = new WeakMap<Trx, Set<string>>();

  /** Serialises writes under `key` until the transaction ends; taken once per transaction. */
  lock(trx: Trx, key: string): Promise<void> {
    return this.lockAll(trx, [key]);
  }

  /** Takes the locks of `keys` not yet held by the transaction, sorted, in one statement. */
  private async lockAll(trx: Trx, keys: string[]): Promise<void> {
    // embedded: PGlite has one connection and a transaction holds it to its end, so no other
    // transaction can run in between and there is nothing to wait for
    if (this.rt.mode === 'embedded') return;
    const held = this.held.get(trx) ?? new Set<string>();
    const wanted = [...new Set(keys)].filter((k) => !held.has(k)).sort();
    if (wanted.length === 0) return;
    const names = wanted.map(lockName);
    if (names.length === 1) await sql`select pg_advisory_xact_lock(hashtext(${names[0]}))`.execute(trx);
    else await sql`select ${takeLocks(names)}`.execute(trx);
    for (const k of wanted) held.add(k);
    this.held.set(trx, held);
  }
}

/** Folds events just appended (as stored: their time) into reading's tables. */
async function fold(trx: Trx, events: readonly Reading.ReadingEvent[], stored: readonly StoredEvent[]): Promise<void> {
  for (const [i, e] of events.entries()) await projectReading(trx, SCHEMA, e, stored[i]!.recordedAt);
}

/** The advisory lock of a reading key (a user's stream: `stream.user:<id>`). */
const lockName = (key: string) => `bindery.reading.${key}`;

/** Takes the named advisory locks in name order (two holders of some of them never wait in a circle): how many. */
const takeLocks = (names: readonly string[]) => sql<number>`(select count(pg_advisory_xact_lock(hashtext(k))) from (select k from unnest(${names}::text[]) as k order by k) as s)`;

export const t = (q: Trx | Db) => q.withSchema(SCHEMA);
