// What every catalog handler shares: the runtime, the event store, options and the transaction helper.
import { sql } from 'kysely';
import { asTables, commandTransaction, EventStore, eventSchemas, type ExpectedVersion, type NoTables, type ReactionSite, type Runtime } from '@bindery/platform';
import { Catalog, fail, Messages, type Failure, type StoredEvent } from '@bindery/contracts';
import { SCHEMA } from '../store/migrations';
import { FOLDED_INLINE, projectCatalog } from '../store/projection';
import type { CatalogDb, CDb, CTrx } from '../store/schema';

export interface CatalogOptions {
  /** folders the browser may show and libraries may use (absolute) */
  roots: string[];
  /** where covers and thumbnails are written */
  coverDir: string;
  watch: 'auto' | 'native' | 'poll' | 'off';
  reconcileSeconds: number;
  scanOnStartup: boolean;
  /** files hashed and read at once during a scan */
  scanConcurrency: number;
  /** files written per transaction during a scan */
  scanBatch: number;
  /** how long the scanner lease lasts unrenewed (distributed mode); renewed every third of it */
  leaseSeconds: number;
}

export type CatalogEventIn = Catalog.CatalogEvent;

/** what the catalog appends is checked against its contract first */
const catalogEvents = eventSchemas(Catalog.CatalogEvents);

export class Ctx {
  /** the runtime's database, seen through the catalog's tables */
  readonly db: CDb;
  readonly store: EventStore<CatalogDb>;
  /** set by main: asks the scheduler to look at the scan queue now */
  kick: () => void = () => undefined;
  /** where its reactions to other services keep their checkpoints */
  readonly site: ReactionSite<CatalogDb>;

  constructor(
    readonly rt: Runtime,
    readonly opts: CatalogOptions,
  ) {
    this.db = asTables<CatalogDb, NoTables>(rt.db);
    this.store = new EventStore(this.db, SCHEMA);
    this.site = { db: this.db, schema: SCHEMA, log: rt.log, label: 'catalog' };
  }

  /** Runs a command in one transaction (retried on a concurrent append, a deadlock or a serialisation failure), then wakes the relay. */
  tx<T>(fn: (trx: CTrx) => Promise<T>): Promise<T> {
    return commandTransaction(this.db, this.store, fn);
  }

  /**
   * Appends events to a stream in the caller's transaction; each must match its contract schema.
   * A command that decided from the stream's state passes the version it read (`version`), so a
   * writer that slipped in between fails the append and the command runs again. The catalog's
   * projection folds them into its tables in the same transaction (the only writer of the rows of
   * the types it folds inline: store/projection.ts).
   */
  async emit(trx: CTrx, streamId: string, events: CatalogEventIn[], expected: ExpectedVersion = 'any'): Promise<void> {
    catalogEvents.check(events);
    await this.fold(trx, await this.store.append(trx, streamId, expected, events));
  }

  private async fold(trx: CTrx, stored: readonly StoredEvent[]): Promise<void> {
    const inline = stored.filter((e) => FOLDED_INLINE.has(e.type));
    if (inline.length > 0) await projectCatalog(trx, SCHEMA, inline, { checked: true });
  }

  /** The transaction's time, which its events are recorded at: what a command gives the rows its events make. */
  async now(trx: CTrx): Promise<Date> {
    const r = await sql<{ now: Date }>`select now() as now`.execute(trx);
    return new Date(r.rows[0]!.now);
  }

  /** The stream's last version (-1: none yet), read with the state a command decides from. */
  version(trx: CTrx, streamId: string): Promise<number> {
    return this.store.streamVersion(trx, streamId);
  }

  /** Starts one new stream per entry, all in one statement (the scanner's new items). */
  async emitNew(trx: CTrx, entries: { streamId: string; events: CatalogEventIn[] }[]): Promise<void> {
    catalogEvents.check(entries.flatMap((x) => x.events));
    await this.fold(trx, await this.store.appendNewStreams(trx, entries));
  }

  /** Appends to many existing streams at once, no version check (a library's items on its deletion). */
  async emitMany(trx: CTrx, entries: { streamId: string; events: CatalogEventIn[] }[]): Promise<void> {
    catalogEvents.check(entries.flatMap((x) => x.events));
    await this.fold(trx, await this.store.appendToStreams(trx, entries));
  }

  /** Serialises changes to one library's items (scans, creates, deletes, conflict resolution). */
  async lockLibrary(trx: CTrx, libraryId: string): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtext(${'bindery.catalog.library.' + libraryId}))`.execute(trx);
  }
}

export const requireAdmin = (caller: { role: string }): Failure | null => (caller.role === 'admin' ? null : fail('admin_required', Messages.adminRequired));
