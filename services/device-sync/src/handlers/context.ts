// What every device-sync handler shares: the runtime, the event store, the transaction helper.
import { Compile } from 'typebox/compile';
import { ConcurrencyError, EventStore, type Runtime, type Trx } from '@bindery/platform';
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

  constructor(
    readonly rt: Runtime,
    readonly opts: DeviceSyncOptions,
  ) {
    this.store = new EventStore(rt.db, SCHEMA);
  }

  now(): Date {
    return this.rt.now();
  }

  /** Runs a command in one transaction, retrying on a deadlock or serialisation failure, then wakes the relay. */
  async tx<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.rt.db.transaction().execute(fn);
        this.store.notify();
        return out;
      } catch (e) {
        if ((e instanceof ConcurrencyError || isRetryable(e)) && attempt < 5) continue;
        throw e;
      }
    }
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

const isRetryable = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
};

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
