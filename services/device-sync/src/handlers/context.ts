// What every device-sync handler shares: the runtime, the event store, the transaction helper.
import { asTables, commandTransaction, eventSchemas, EventStore, type ExpectedVersion, type NoTables, type ReactionSite, type Runtime } from '@bindery/platform';
import { DeviceSync } from '@bindery/contracts';
import type { Db, DeviceSyncDb, Trx } from '../store/db';
import { SCHEMA } from '../store/migrations';

/** device-sync's own events, checked before each append */
export const deviceSyncEvents = eventSchemas(DeviceSync.DeviceSyncEvents);

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

  /** Appends to a user's stream; every event must match its contract schema. */
  async emit(trx: Trx, user: string, events: DeviceSync.DeviceSyncEvent[]): Promise<void> {
    await this.emitTo(trx, `user:${user}`, 'any', events);
  }

  /** Appends to any stream (a registration's is `registration:<id>`) at an expected version. */
  async emitTo(trx: Trx, stream: string, expected: ExpectedVersion, events: DeviceSync.DeviceSyncEvent[]): Promise<void> {
    deviceSyncEvents.check(events);
    await this.store.append(trx, stream, expected, events);
  }
}

export const t = (q: Trx | Db) => q.withSchema(SCHEMA);
