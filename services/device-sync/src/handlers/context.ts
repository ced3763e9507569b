// What every device-sync handler shares: the runtime, the event store, the transaction helper.
import { Compile } from 'typebox/compile';
import { commandTransaction, EventStore, type ReactionSite, type Runtime, type Trx } from '@bindery/platform';
import { DeviceSync } from '@bindery/contracts';
import { SCHEMA } from '../store/migrations';

const checks = new Map(Object.entries(DeviceSync.DeviceSyncEvents).map(([type, schema]) => [type, Compile(schema)]));

export interface DeviceSyncOptions {
  /** how long a registration waits for approval */
  registrationTtlSeconds: number;
  /** how often a device should poll the status */
  pollIntervalSeconds: number;
}

export class Ctx {
  readonly store: EventStore;
  /** where its reactions to other services keep their checkpoints */
  readonly site: ReactionSite;

  constructor(
    readonly rt: Runtime,
    readonly opts: DeviceSyncOptions,
  ) {
    this.store = new EventStore(rt.db, SCHEMA);
    this.site = { db: rt.db, schema: SCHEMA, log: rt.log, label: 'device-sync' };
  }

  now(): Date {
    return this.rt.now();
  }

  /** Runs a command in one transaction (retried on conflicts), then wakes the relay. */
  tx<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return commandTransaction(this.rt.db, this.store, fn);
  }

  /** Appends to a user's stream; every event must match its contract schema. */
  async emit(trx: Trx, user: string, events: DeviceSync.DeviceSyncEvent[]): Promise<void> {
    for (const e of events) {
      const check = checks.get(e.type);
      if (!check || !check.Check(e.data)) throw new Error(`event ${e.type} does not match its contract schema`);
    }
    await this.store.append(trx, `user:${user}`, 'any', events);
  }
}

export const t = (q: Trx | Runtime['db']) => q.withSchema(SCHEMA);
