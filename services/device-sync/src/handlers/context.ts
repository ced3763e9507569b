// What every device-sync handler shares: the runtime, the event store, the transaction helper.
import { Compile } from 'typebox/compile';
import { applyOnce, commandTransaction, consumerCheckpoint, EventStore, type Bus, type Runtime, type Subscription, type Trx } from '@bindery/platform';
import { DeviceSync, type StoredEvent } from '@bindery/contracts';
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

  constructor(
    readonly rt: Runtime,
    readonly opts: DeviceSyncOptions,
  ) {
    this.store = new EventStore(rt.db, SCHEMA);
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

/** A reaction that fails is retried by the bus; say why, or it retries in silence. */
export async function logged<T>(ctx: Ctx, ev: { type: string; position: number }, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    ctx.rt.log.error({ err: e, type: ev.type, position: ev.position }, 'device-sync: reaction failed; it will be retried');
    throw e;
  }
}

/** A durable reaction to another service's events: each applied once, with its effect, in one transaction. */
export function react(ctx: Ctx, bus: Bus, source: string, durable: string, types: readonly string[], effect: (trx: Trx, ev: StoredEvent) => Promise<void>): Promise<Subscription> {
  return bus.consume({
    source,
    durable,
    types,
    checkpoint: () => consumerCheckpoint(ctx.rt.db, SCHEMA, durable, source),
    handler: async (ev) => {
      await logged(ctx, ev, () => applyOnce(ctx.rt.db, SCHEMA, durable, ev, (trx) => effect(trx, ev)));
      ctx.store.notify();
    },
  });
}
