// Parked events: what a durable consumer set aside after its handler kept failing, kept in the
// consuming service's own schema (event-store-002) so an operator can list them and replay them
// once the cause is fixed. A replay runs the consumer's own handler; applyOnce lets the parked
// event through below the checkpoint exactly once.
import { sql } from 'kysely';
import { err, fail, ok, type Result, type StoredEvent } from '@bindery/contracts';
import { asTables, toIso, type Db, type NoTables } from './db';
import type { EventStoreTables } from './event-store';
import type { Bus, EventHandler, Parking, RpcHandler } from './bus/types';
import type { ParkedCounter } from './metrics';
import type { Logger } from './logger';

export interface ParkedEvent {
  /** `<service>-<n>`: names the service whose parking holds it */
  id: string;
  service: string;
  consumer: string;
  source: string;
  position: number;
  event_id: string;
  event_type: string;
  error: string;
  attempts: number;
  parked_at: string;
}

export const ParkingMessages = {
  invalidId: 'invalid parked event id',
  notFound: 'parked event not found',
  alreadyReplayed: 'parked event already replayed',
  notRunning: 'the consumer of this parked event is not running here',
  replayFailed: (why: string) => `replay failed: ${why}`,
} as const;

const LIST_LIMIT = 500;

type Row = {
  id: number;
  consumer: string;
  source: string;
  position: number;
  event_id: string;
  event_type: string;
  event: StoredEvent;
  error: string;
  attempts: number;
  parked_at: Date | string;
  replayed_at: Date | string | null;
};

/** `DB`: the tables of the handle it is given (it sees only its own, the event store's: a raw handle does). */
export class ParkingLot<DB = NoTables> implements Parking, ParkedCounter {
  private handlers = new Map<string, EventHandler>();
  private readonly db: Db<EventStoreTables>;

  constructor(
    db: Db<DB>,
    /** the consuming service: its schema holds the table, and it names the ids */
    readonly service: string,
    private readonly log?: Pick<Logger, 'info' | 'warn'>,
  ) {
    this.db = asTables<EventStoreTables, DB>(db);
  }

  private t() {
    return this.db.withSchema(this.service);
  }

  attach(consumer: string, handler: EventHandler): void {
    this.handlers.set(consumer, handler);
  }

  /** Records the event (again: a re-park refreshes error and tries) and moves the consumer's checkpoint past it. */
  async park(consumer: string, event: StoredEvent, error: string, attempts: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const s = trx.withSchema(this.service);
      await s
        .insertInto('parked_events')
        .values({
          consumer,
          source: event.source,
          position: event.position,
          event_id: event.id,
          event_type: event.type,
          event: JSON.stringify(event),
          error,
          attempts,
        })
        .onConflict((oc) => oc.columns(['consumer', 'event_id']).doUpdateSet({ error, attempts, parked_at: sql`now()`, replayed_at: null }))
        .execute();
      // A restart must not start over at the parked event: the checkpoint goes past it (never back).
      await s
        .insertInto('consumer_checkpoints')
        .values({ consumer, source: event.source, position: event.position })
        .onConflict((oc) => oc.columns(['consumer', 'source']).doUpdateSet({ position: sql`greatest(consumer_checkpoints.position, excluded.position)`, updated_at: sql`now()` }))
        .execute();
    });
  }

  /** Parked events not replayed yet, oldest first. */
  async list(): Promise<ParkedEvent[]> {
    const rows = (await this.t().selectFrom('parked_events').selectAll().where('replayed_at', 'is', null).orderBy('id').limit(LIST_LIMIT).execute()) as Row[];
    return rows.map((r) => this.toPublic(r));
  }

  async pendingByConsumer(): Promise<{ consumer: string; count: number }[]> {
    const rows = await this.t()
      .selectFrom('parked_events')
      .select(['consumer', sql<number>`count(*)::int`.as('count')])
      .where('replayed_at', 'is', null)
      .groupBy('consumer')
      .execute();
    return rows.map((r) => ({ consumer: r.consumer as string, count: Number(r.count) }));
  }

  /** Runs the consumer's handler on a parked event; on success the event counts as applied and leaves the list. */
  async replay(id: string): Promise<Result<{ id: string; replayed: true }>> {
    const n = this.localId(id);
    if (n === null) return err(fail('invalid_request', ParkingMessages.invalidId));
    const row = (await this.t().selectFrom('parked_events').selectAll().where('id', '=', n).executeTakeFirst()) as Row | undefined;
    if (!row) return err(fail('not_found', ParkingMessages.notFound));
    if (row.replayed_at) return err(fail('conflict', ParkingMessages.alreadyReplayed));
    const handler = this.handlers.get(row.consumer);
    if (!handler) return err(fail('service_unavailable', ParkingMessages.notRunning));
    const event = typeof row.event === 'string' ? (JSON.parse(row.event) as StoredEvent) : row.event;
    try {
      await handler(event);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      await this.t().updateTable('parked_events').set({ error: why, attempts: sql`attempts + 1` }).where('id', '=', n).execute();
      this.log?.warn({ consumer: row.consumer, event: row.event_id, err: e }, 'parked event replay failed');
      return err(fail('conflict', ParkingMessages.replayFailed(why)));
    }
    // applyOnce marked it in the handler's transaction; a handler without applyOnce is marked here.
    await this.t().updateTable('parked_events').set({ replayed_at: sql`now()` }).where('id', '=', n).where('replayed_at', 'is', null).execute();
    this.log?.info({ consumer: row.consumer, event: row.event_id, type: row.event_type }, 'parked event replayed');
    return ok({ id, replayed: true as const });
  }

  /** `catalog-12` → 12 when it names this service; null otherwise. */
  localId(id: string): number | null {
    const m = /^([a-z_][a-z0-9_]*)-([1-9][0-9]{0,15})$/.exec(id);
    return m && m[1] === this.service ? Number(m[2]) : null;
  }

  private toPublic(r: Row): ParkedEvent {
    return {
      id: `${this.service}-${r.id}`,
      service: this.service,
      consumer: r.consumer,
      source: r.source,
      position: Number(r.position),
      event_id: r.event_id,
      event_type: r.event_type,
      error: r.error,
      attempts: Number(r.attempts),
      parked_at: toIso(r.parked_at),
    };
  }
}

/** The RPC ops every service serves for its parking: `rpc.<service>.parked-list` and `parked-replay`. */
export function parkingEndpoints<DB>(lot: ParkingLot<DB>): Record<string, RpcHandler> {
  return {
    'parked-list': async () => ok(await lot.list()),
    'parked-replay': async (body) => {
      const id = (body as { id?: unknown } | null)?.id;
      return typeof id === 'string' ? lot.replay(id) : err(fail('invalid_request', ParkingMessages.invalidId));
    },
  };
}

/** The service's view of the bus: its durable consumers park into `lot`. Everything else is the bus itself. */
export function parkingBus<DB>(bus: Bus, lot: ParkingLot<DB>): Bus {
  return new Proxy(bus, {
    get(target, prop) {
      if (prop === 'consume') return (opts: Parameters<Bus['consume']>[0]) => target.consume({ parking: lot, ...opts });
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
