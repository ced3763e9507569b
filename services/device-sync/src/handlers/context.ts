// What every device-sync handler shares: the runtime, the event store, the transaction helper.
import { asTables, commandTransaction, EventStore, type ExpectedVersion, type NoTables, type ReactionSite, type Runtime } from '@bindery/platform';
import type { DeviceSync } from '@bindery/contracts';
import { sql } from 'kysely';
import type { Db, DeviceSyncDb, Trx } from '../store/db';
import { SCHEMA } from '../store/migrations';
import { appendProjected } from '../store/projection';

export interface DeviceSyncOptions {
  /** how long a registration waits for approval */
  registrationTtlSeconds: number;
  /** how often a device should poll the status */
  pollIntervalSeconds: number;
}

export class Ctx {
  readonly store: EventStore<DeviceSyncDb>;
  /** where its reactions to other services keep their checkpoints */
  readonly site: ReactionSite<DeviceSyncDb>;
  /** the runtime's database, typed by device-sync's tables */
  readonly db: Db;

  constructor(
    readonly rt: Runtime,
    readonly opts: DeviceSyncOptions,
  ) {
    this.db = asTables<DeviceSyncDb, NoTables>(rt.db);
    this.store = new EventStore(this.db, SCHEMA);
    this.site = { db: this.db, schema: SCHEMA, log: rt.log, label: 'device-sync' };
  }

  now(): Date {
    return this.rt.now();
  }

  /** Runs a command in one transaction (retried on conflicts), then wakes the relay. */
  tx<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return commandTransaction(this.db, this.store, fn);
  }

  /**
   * Appends to a user's stream and writes the rows the events say (the projection, in `trx`): a
   * handler decides and emits, and never writes device-sync's own tables itself. Every event must
   * match its contract schema.
   */
  async emit(trx: Trx, user: string, events: DeviceSync.DeviceSyncEvent[]): Promise<void> {
    await this.emitTo(trx, `user:${user}`, 'any', events);
  }

  /** Appends to any stream (a registration's is `registration:<id>`) at an expected version, projected as `emit`. */
  async emitTo(trx: Trx, stream: string, expected: ExpectedVersion, events: DeviceSync.DeviceSyncEvent[]): Promise<void> {
    await appendProjected(this.store, trx, stream, expected, events);
  }
}

export const t = (q: Trx | Db) => q.withSchema(SCHEMA);

/**
 * Locks the rows of `table` that belong to these devices, until the transaction ends. A command locks
 * the existing rows its events will change before it appends: the projection changes them after the
 * append, holding the log's append lock, and a command that locked one of them first and then waits
 * for that lock would deadlock with it.
 */
/**
 * Holds the collection until the transaction ends. A shelf added and the collection's items changed
 * each read what the other writes (the items, the shelves); without this, two that run at once each
 * miss the other's uncommitted rows and no book is queued.
 */
export async function lockCollection(trx: Trx, collection: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${'bindery.device-sync.collection.' + collection}))`.execute(trx);
}

export async function lockRows(trx: Trx, table: 'shelves' | 'queue', devices: string[]): Promise<void> {
  if (devices.length) await t(trx).selectFrom(table).select('device_id').where('device_id', 'in', devices).forUpdate().execute();
}
