// One contract for the bus port, run against each adapter: the in-memory bus (over PGlite) and
// the JetStream bus (a private nats-server, a fresh PostgreSQL database).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Generated } from 'kysely';
import { eventSubject, rpcSubject, type NewEvent, type StoredEvent } from '@bindery/contracts';
import { asTables, openPGlite, openPostgres, type Database, type Db, type Migration, type NoTables, type Trx } from '../../platform/src/db';
import { migrate } from '../../platform/src/migrate';
import { applyOnce, commandTransaction, consumerCheckpoint, EventStore, eventStoreMigrations, react } from '../../platform/src/event-store';
import { createLogger, type Logger } from '../../platform/src/logger';
import { MemoryBus } from '../../platform/src/bus/memory-bus';
import { connectNatsBus, type NatsBus } from '../../platform/src/bus/nats-bus';
import { RpcUnavailableError, type Bus, type ConsumeOptions, type RetryPolicy, type Subscription } from '../../platform/src/bus/types';
import type { BusLogger } from '../../platform/src/bus/failures';
import { Metrics } from '../../platform/src/metrics';
import { ParkingLot } from '../../platform/src/parking';
import { createTestDatabase, resolveBackends, startNatsServer } from '../support/backends';

interface BusCaps {
  /** serve() on two instances splits the requests between them */
  replicasShareRequests: boolean;
  /** the stores' database runs transactions side by side (PGlite runs them one after another) */
  concurrentTransactions: boolean;
  /** a transient message reaches listeners on other bus instances (other processes) */
  transientAcrossInstances: boolean;
}

interface BusHarness {
  /** the stores and the consumer's tables live here */
  database: Database;
  /** a bus as one process would have it; the harness closes them all */
  newBus(): Promise<Bus>;
  /** publishes stored events again without dedupe, as a relay replay past the duplicate window would */
  republish?(bus: Bus, events: StoredEvent[]): Promise<void>;
  close(): Promise<void>;
}

const CONSUMER = 'cons';
const consumerMigrations: Migration[] = [
  ...eventStoreMigrations,
  {
    name: 'contract-applied-001',
    async up(trx, schema) {
      // No unique key on purpose: a double application shows up as a second row.
      await sql
        .raw(`create table ${schema}.applied (seq bigserial primary key, consumer text not null, event_id uuid not null, position bigint not null, type text not null)`)
        .execute(trx);
    },
  },
];

/** The consumers' table (contract-applied-001) */
interface ContractDb {
  applied: { seq: Generated<number>; consumer: string; event_id: string; position: number; type: string };
}

const ev = (type: string, data: unknown = {}): NewEvent => ({ type, data });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` (every 50 ms, at most `timeoutMs`) until `done` holds: the wait for a positive
 * condition. A NEGATIVE (nothing more arrives) is shown with a marker where delivery is ordered:
 * append or send one more message after the ones under test, wait for it, and whatever would have
 * come before it has come. */
async function until<T>(what: string, probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last saw ${JSON.stringify(v)}`);
    await sleep(50);
  }
}

function gate() {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
}

function busContract(name: string, caps: BusCaps, open: () => Promise<BusHarness>) {
  describe(`Bus contract: ${name}`, () => {
    let h: BusHarness;
    let n = 0;
    const db = (): Db<ContractDb> => asTables<ContractDb, NoTables>(h.database.db);

    /** A source service: its schema, store and outbox, attached to `bus`. */
    async function source(label: string, bus: Bus): Promise<EventStore<ContractDb>> {
      const schema = `src_${++n}_${label}`;
      await migrate(db(), schema, eventStoreMigrations);
      const store = new EventStore(db(), schema);
      await bus.attachSource(store);
      return store;
    }
    let appends = 0;
    /**
     * Appends as a service does: every other time through commandTransaction (the in-memory bus then
     * hands the events on as committed, without reading them back), else a transaction of its own.
     */
    async function append(store: EventStore<ContractDb>, streamId: string, events: NewEvent[]): Promise<StoredEvent[]> {
      if (++appends % 2 === 0) return commandTransaction(db(), store, (trx) => store.append(trx, streamId, 'any', events));
      const out = await db()
        .transaction()
        .execute((trx) => store.append(trx, streamId, 'any', events));
      store.notify();
      return out;
    }
    /** The consumer's handler: records the event with its checkpoint in one transaction. */
    const record = (durable: string) => (e: StoredEvent) =>
      applyOnce(db(), CONSUMER, durable, e, async (trx) => {
        await trx.withSchema(CONSUMER).insertInto('applied').values({ consumer: durable, event_id: e.id, position: e.position, type: e.type }).execute();
      }).then(() => undefined);
    const applied = async (durable: string) =>
      (await db().withSchema(CONSUMER).selectFrom('applied').select(['event_id', 'position', 'type']).where('consumer', '=', durable).orderBy('seq').execute()) as {
        event_id: string;
        position: number;
        type: string;
      }[];
    const appliedIds = async (durable: string) => (await applied(durable)).map((r) => r.event_id);
    const consume = (bus: Bus, store: EventStore<ContractDb>, durable: string, handler = record(durable), types?: string[], handleMany?: ConsumeOptions['handleMany']) =>
      bus.consume({
        source: store.source,
        durable,
        types,
        checkpoint: () => consumerCheckpoint(db(), CONSUMER, durable, store.source),
        handler,
        ...(handleMany ? { handleMany } : {}),
      });

    beforeAll(async () => {
      h = await open();
      await migrate(db(), CONSUMER, consumerMigrations);
    });
    afterAll(async () => {
      await h?.close();
    });

    // ---- request / reply ----

    it('answers a request with the handler result, null for undefined', async () => {
      const bus = await h.newBus();
      await bus.serve('echo', { say: async (body) => ({ got: body }), quiet: async () => undefined });
      expect(await bus.request(rpcSubject('echo', 'say'), { a: [1, 'x'] })).toEqual({ got: { a: [1, 'x'] } });
      expect(await bus.request(rpcSubject('echo', 'quiet'), null)).toBeNull();
    });

    it('turns a throwing handler into an internal failure', async () => {
      const bus = await h.newBus();
      await bus.serve('thrower', { go: async () => Promise.reject(new Error('boom')) });
      const call = bus.request(rpcSubject('thrower', 'go'), {});
      await expect(call).resolves.toEqual({ ok: false, error: { code: 'internal', message: 'boom' } });
    });

    it('rejects a request nobody serves with RpcUnavailableError', async () => {
      const bus = await h.newBus();
      const started = Date.now();
      await expect(bus.request(rpcSubject('nobody', 'there'), {}, 2_000)).rejects.toBeInstanceOf(RpcUnavailableError);
      expect(Date.now() - started).toBeLessThan(2_000); // known at once, not by timeout
    });

    it('answers concurrent requests, running handlers side by side', async () => {
      const bus = await h.newBus();
      let running = 0;
      let most = 0;
      await bus.serve('calc', {
        double: async (body) => {
          most = Math.max(most, ++running);
          await sleep(5 + Math.random() * 20);
          running--;
          return { v: (body as { v: number }).v * 2 };
        },
      });
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => bus.request(rpcSubject('calc', 'double'), { v: i })));
      expect(answers).toEqual(Array.from({ length: 100 }, (_, i) => ({ v: i * 2 })));
      expect(most).toBeGreaterThan(1);
    });

    it.skipIf(!caps.replicasShareRequests)('shares one service between two serving replicas', async () => {
      const [a, b, client] = await Promise.all([h.newBus(), h.newBus(), h.newBus()]);
      await a.serve('shared', { who: async () => 'a' });
      await b.serve('shared', { who: async () => 'b' });
      const got = await Promise.all(Array.from({ length: 50 }, () => client.request(rpcSubject('shared', 'who'), {})));
      expect(got).toHaveLength(50);
      expect(got.filter((x) => x === 'a').length).toBeGreaterThan(0);
      expect(got.filter((x) => x === 'b').length).toBeGreaterThan(0);
      expect(got.filter((x) => x !== 'a' && x !== 'b')).toEqual([]);
    });

    // ---- durable consumers ----

    it('delivers a large batch (600 events, 1.2 MB, one transaction) once each and in order to a consumer, one that folds runs and a follower', async () => {
      const bus = await h.newBus();
      const store = await source('bigbatch', bus);
      const pad = 'x'.repeat(2000);
      const events = await append(
        store,
        'big-1',
        Array.from({ length: 600 }, (_, i) => ev(i % 3 === 0 ? 't.other.v1' : 't.a.v1', { i, pad })),
      );
      const followed: number[] = [];
      await bus.follow({ source: store.source, handler: async (e) => void followed.push(e.position) });
      await consume(bus, store, 'big-one');
      // a consumer that folds runs of the type it wants: each run it takes is recorded as one call
      const runs: number[] = [];
      await consume(bus, store, 'big-many', record('big-many'), ['t.a.v1'], async (evs) => {
        for (const e of evs) await record('big-many')(e);
        runs.push(evs.length);
        return evs.length;
      });
      const wanted = events.filter((e) => e.type === 't.a.v1');
      await until(
        'both consumers',
        async () => ({ one: (await appliedIds('big-one')).length, many: (await appliedIds('big-many')).length }),
        (k) => k.one >= 600 && k.many >= 400,
      );
      expect(await appliedIds('big-one')).toEqual(events.map((e) => e.id));
      expect(await appliedIds('big-many')).toEqual(wanted.map((e) => e.id));
      // what one run held was taken together, so not one event at a time
      expect(runs.reduce((a, b) => a + b, 0)).toBeGreaterThan(300);
      await until(
        'the follower',
        async () => followed.length,
        (k) => k >= 600,
      );
      expect(followed).toEqual(events.map((e) => e.position));
    });

    it('applies every event once and in order through the handler when the consumer refuses every run, and offers runs again only now and then', async () => {
      const bus = await h.newBus();
      const store = await source('refused', bus);
      const events = await append(
        store,
        'refused-1',
        Array.from({ length: 200 }, (_, i) => ev('t.a.v1', { i })),
      );
      let offered = 0;
      await consume(bus, store, 'refuser', record('refuser'), undefined, async () => {
        offered++;
        return 0;
      });
      await until(
        'all 200',
        async () => (await appliedIds('refuser')).length,
        (k) => k >= 200,
      );
      expect(await appliedIds('refuser')).toEqual(events.map((e) => e.id));
      // a run is offered, refused, then 16 go one at a time: about one offer in 17 events (a few
      // more where the bus reads the log in several parts)
      expect(offered).toBeGreaterThan(0);
      expect(offered).toBeLessThanOrEqual(20);
    });

    it('delivers every event once per durable consumer, in position order, across replicas', async () => {
      const bus = await h.newBus();
      const store = await source('order', bus);
      const before = await Promise.all([append(store, 'o-1', [ev('t.a.v1'), ev('t.b.v1')]), append(store, 'o-2', [ev('t.a.v1')])]);
      // Two replicas of one consumer, each in its own process, plus a second consumer.
      const replica2 = await h.newBus();
      await replica2.attachSource(store);
      await consume(bus, store, 'order-1');
      await consume(replica2, store, 'order-1');
      await consume(bus, store, 'order-2');
      const later: StoredEvent[] = [];
      for (let i = 0; i < 5; i++) later.push(...(await append(store, `o-${i % 3}`, [ev('t.c.v1', i), ev('t.d.v1', i)])));
      later.push(...(await Promise.all([append(store, 'o-7', [ev('t.e.v1')]), append(store, 'o-8', [ev('t.e.v1')])])).flat());
      const all = [...before.flat(), ...later].sort((x, y) => x.position - y.position);
      expect(all).toHaveLength(15);
      for (const durable of ['order-1', 'order-2']) {
        const rows = await until(
          `${durable} to apply 15`,
          () => applied(durable),
          (r) => r.length >= 15,
        );
        expect(rows.map((r) => r.event_id)).toEqual(all.map((e) => e.id));
      }
      // nothing applied twice: delivery is in position order, so a later marker comes after any copy
      const [marker] = await append(store, 'o-9', [ev('t.marker.v1')]);
      const rows = await until(
        'the marker',
        () => appliedIds('order-1'),
        (r) => r.includes(marker!.id),
      );
      expect(rows).toEqual([...all, marker!].map((e) => e.id));
    });

    it('redelivers an event whose handler failed, and applies it exactly once', async () => {
      const bus = await h.newBus();
      const store = await source('retry', bus);
      const events = await append(store, 'r-1', [ev('t.a.v1'), ev('t.b.v1'), ev('t.c.v1'), ev('t.d.v1')]);
      const target = events[1]!;
      const attempts = new Map<string, number>();
      const inner = record('retry');
      await consume(bus, store, 'retry', async (e) => {
        const k = (attempts.get(e.id) ?? 0) + 1;
        attempts.set(e.id, k);
        if (e.id === target.id && k === 1) throw new Error('transient');
        await inner(e);
      });
      const rows = await until(
        'all four applied',
        () => appliedIds('retry'),
        (r) => r.length >= 4,
      );
      expect(rows).toEqual(events.map((e) => e.id));
      expect(attempts.get(target.id)).toBe(2);
      expect(attempts.get(events[2]!.id)).toBe(1); // nothing overtook the failed one
    });

    it('passes by an event its reaction calls idle: no effect, no after step; the checkpoint moves with the next applied event', async () => {
      const bus = await h.newBus();
      const store = await source('idle', bus);
      const [a, quiet, b] = (await append(store, 'id-1', [ev('t.a.v1'), ev('t.quiet.v1'), ev('t.b.v1')])) as [StoredEvent, StoredEvent, StoredEvent];
      const asked: string[] = [];
      const afters: string[] = [];
      const site = { db: db(), schema: CONSUMER, log: capture().log as unknown as Logger, label: 'svc' };
      const reaction = {
        source: store.source,
        durable: 'idle',
        types: ['t.a.v1', 't.quiet.v1', 't.b.v1'],
        effect: async (trx: Trx<ContractDb>, e: StoredEvent) => {
          await trx.withSchema(CONSUMER).insertInto('applied').values({ consumer: 'idle', event_id: e.id, position: e.position, type: e.type }).execute();
        },
        idle: async (e: StoredEvent) => {
          asked.push(e.id);
          return e.type === 't.quiet.v1';
        },
        after: (e: StoredEvent) => void afters.push(e.id),
      };
      const sub = await react(bus, site, reaction);
      await until(
        'a and b applied',
        () => appliedIds('idle'),
        (r) => r.length >= 2,
      );
      expect(await appliedIds('idle')).toEqual([a.id, b.id]);
      expect(afters).toEqual([a.id, b.id]);
      expect(asked).toEqual([a.id, quiet.id, b.id]);
      expect(await consumerCheckpoint(db(), CONSUMER, 'idle', store.source)).toBe(b.position);
      // an idle event last in the log leaves the checkpoint where the last applied one put it
      const [last] = (await append(store, 'id-1', [ev('t.quiet.v1')])) as [StoredEvent];
      await until(
        'the last one asked',
        async () => asked.length,
        (n) => n >= 4,
      );
      expect(asked.at(-1)).toBe(last.id);
      expect(await consumerCheckpoint(db(), CONSUMER, 'idle', store.source)).toBe(b.position);
      await sub.stop();
    });

    it('reacts durably: each event applied once, a failure logged with the service name and retried, then the after step', async () => {
      const bus = await h.newBus();
      const store = await source('react', bus);
      const events = await append(store, 'rc-1', [ev('t.a.v1'), ev('t.b.v1'), ev('t.c.v1'), ev('t.skip.v1')]);
      const [a, b, c] = events as [StoredEvent, StoredEvent, StoredEvent];
      const { log, lines } = capture();
      const tries = new Map<string, number>();
      const afters: [string, string | undefined][] = [];
      await react(
        bus,
        { db: db(), schema: CONSUMER, log: log as unknown as Logger, label: 'svc' },
        {
          source: store.source,
          durable: 'react',
          types: ['t.a.v1', 't.b.v1', 't.c.v1'],
          effect: async (trx, e) => {
            await trx.withSchema(CONSUMER).insertInto('applied').values({ consumer: 'react', event_id: e.id, position: e.position, type: e.type }).execute();
            const k = (tries.get(e.id) ?? 0) + 1;
            tries.set(e.id, k);
            // b's first try fails inside the transaction: its row goes with it
            if (e.id === b.id && k === 1) throw new Error('effect failed');
            return e.type;
          },
          after: (e, result) => {
            afters.push([e.id, result]);
            // c's first after step fails once its effect is committed: the redelivery skips the effect
            if (e.id === c.id && afters.filter(([id]) => id === c.id).length === 1) throw new Error('after failed');
          },
        },
      );
      await until(
        'c redelivered',
        async () => afters.length,
        (len) => len >= 4,
      );
      expect(await appliedIds('react')).toEqual([a.id, b.id, c.id]);
      expect(afters).toEqual([
        [a.id, 't.a.v1'],
        [b.id, 't.b.v1'],
        [c.id, 't.c.v1'],
        [c.id, undefined],
      ]);
      expect(await consumerCheckpoint(db(), CONSUMER, 'react', store.source)).toBe(c.position);
      const failures = lines.filter((l) => l.msg === 'svc: reaction failed; it will be retried');
      expect(failures.map((l) => [l.level, l.type, l.position, (l.err as Error).message])).toEqual([
        ['error', 't.b.v1', b.position, 'effect failed'],
        ['error', 't.c.v1', c.position, 'after failed'],
      ]);
    });

    it('resumes a restarted consumer where it left off: nothing replayed, nothing lost', async () => {
      const first = await h.newBus();
      const store = await source('restart', first);
      const a = await append(store, 'rs-1', [ev('t.a.v1'), ev('t.a.v1'), ev('t.a.v1')]);
      const sub = await consume(first, store, 'restart');
      await until(
        'the first three',
        () => appliedIds('restart'),
        (r) => r.length >= 3,
      );
      await sub.stop();
      await first.close();
      // Down for a while: the source goes on (its own process, its own bus).
      const writer = await h.newBus();
      await writer.attachSource(store);
      const b = await append(store, 'rs-1', [ev('t.b.v1'), ev('t.b.v1')]);
      const c = await append(store, 'rs-2', [ev('t.c.v1')]);
      // a live follower of the source has them, so the bus has them: the stopped consumer did not apply them
      const relayed: string[] = [];
      await writer.follow({ source: store.source, handler: async (e) => void relayed.push(e.id) });
      await until(
        'the new events on the bus',
        async () => relayed.length,
        (k) => k >= 6,
      );
      expect(await appliedIds('restart')).toEqual(a.map((e) => e.id));
      const second = await h.newBus();
      await second.attachSource(store);
      const seen: string[] = [];
      const inner = record('restart');
      await consume(second, store, 'restart', async (e) => {
        seen.push(e.id);
        await inner(e);
      });
      const rows = await until(
        'all six',
        () => appliedIds('restart'),
        (r) => r.length >= 6,
      );
      expect(rows).toEqual([...a, ...b, ...c].map((e) => e.id));
      const marker = await append(store, 'rs-3', [ev('t.marker.v1')]);
      const after = await until(
        'the marker',
        () => appliedIds('restart'),
        (r) => r.includes(marker[0]!.id),
      );
      expect(after).toEqual([...a, ...b, ...c, ...marker].map((e) => e.id));
      expect(seen.filter((id) => a.some((e) => e.id === id))).toEqual([]); // did not even see the old ones again
    });

    it('passes only the wanted types to a handler, and moves on past the others', async () => {
      const bus = await h.newBus();
      const store = await source('types', bus);
      const seen: string[] = [];
      const inner = record('types');
      await consume(
        bus,
        store,
        'types',
        async (e) => {
          seen.push(e.type);
          await inner(e);
        },
        ['t.keep.v1', 't.also.v1'],
      );
      const events = await append(store, 'ty-1', [ev('t.drop.v1'), ev('t.keep.v1'), ev('t.drop.v1'), ev('t.also.v1'), ev('t.drop.v1')]);
      const last = await append(store, 'ty-2', [ev('t.drop.v1'), ev('t.keep.v1')]);
      const wanted = [...events, ...last].filter((e) => e.type !== 't.drop.v1');
      const rows = await until(
        'three wanted events',
        () => appliedIds('types'),
        (r) => r.length >= 3,
      );
      expect(rows).toEqual(wanted.map((e) => e.id));
      const marker = await append(store, 'ty-3', [ev('t.drop.v1'), ev('t.also.v1')]);
      await until(
        'the marker',
        () => appliedIds('types'),
        (r) => r.includes(marker[1]!.id),
      );
      expect(seen).toEqual(['t.keep.v1', 't.also.v1', 't.keep.v1', 't.also.v1']);
    });

    it('hands consecutive wanted events to handleMany where it can; every event applied once, in order', async () => {
      const bus = await h.newBus();
      const store = await source('many', bus);
      const runs: number[] = [];
      const one: string[] = [];
      const inner = record('many');
      // the events are all published before the consumer starts, so each bus sees the same runs
      const events = await append(store, 'many-1', [
        ...Array.from({ length: 7 }, (_, i) => ev('t.keep.v1', { i })),
        ev('t.drop.v1'),
        ev('t.keep.v1', { refuse: true }),
        ev('t.keep.v1', { i: 9 }),
      ]);
      await until(
        'the relay to publish them',
        async () => (await bus.status().relayLag()).find((x) => x.source === store.source)?.lag ?? 0,
        (lag) => lag === 0,
      );
      await bus.consume({
        source: store.source,
        durable: 'many',
        types: ['t.keep.v1'],
        checkpoint: () => consumerCheckpoint(db(), CONSUMER, 'many', store.source),
        handler: async (e) => {
          one.push(e.id);
          await inner(e);
        },
        // takes at most three at a time, never a `refuse` event (a run that starts with one: none)
        handleMany: async (evs) => {
          const refused = (e: StoredEvent) => (e.data as { refuse?: boolean }).refuse === true;
          const stop = evs.findIndex(refused);
          const take = evs.slice(0, Math.min(3, stop === -1 ? 3 : stop));
          if (take.length === 0) return 0;
          runs.push(take.length);
          for (const e of take) await inner(e);
          return take.length;
        },
      });
      const wanted = events.filter((e) => e.type === 't.keep.v1');
      const rows = await until(
        'every wanted event',
        () => appliedIds('many'),
        (r) => r.length >= wanted.length,
      );
      expect(rows).toEqual(wanted.map((e) => e.id));
      // runs of the wanted events in threes (the dropped one between does not end a run); the
      // refused one and the single one after it go to the handler
      expect(runs).toEqual([3, 3, 1]);
      expect(one).toEqual([wanted[7]!.id, wanted[8]!.id]);
      expect(await consumerCheckpoint(db(), CONSUMER, 'many', store.source)).toBe(wanted.at(-1)!.position);
    });

    it('applies every event once and in order when two replicas fold runs while events keep coming', async () => {
      // two processes where replicas share a consumer (the in-memory bus lives in one)
      const buses = caps.replicasShareRequests ? [await h.newBus(), await h.newBus()] : [await h.newBus()];
      const store = await source('manyrep', buses[0]!);
      const runs: number[] = [];
      const overlaps: string[] = [];
      const inner = record('manyrep');
      // a run must start after everything applied so far: one that does not is noted, and refused
      const many = async (evs: StoredEvent[]) => {
        const take = evs.slice(0, 5);
        const at = await consumerCheckpoint(db(), CONSUMER, 'manyrep', store.source);
        if (at >= take[0]!.position) {
          overlaps.push(`a run from ${take[0]!.position} with the checkpoint at ${at}`);
          return 0;
        }
        for (const e of take) await inner(e);
        runs.push(take.length);
        return take.length;
      };
      for (const b of buses) {
        await b.consume({
          source: store.source,
          durable: 'manyrep',
          checkpoint: () => consumerCheckpoint(db(), CONSUMER, 'manyrep', store.source),
          handler: inner,
          handleMany: many,
        });
      }
      const appended: StoredEvent[] = [];
      for (let burst = 0; burst < 6; burst++) {
        appended.push(
          ...(await append(
            store,
            `manyrep-${burst}`,
            Array.from({ length: 12 }, (_, i) => ev('t.keep.v1', { burst, i })),
          )),
        );
        await sleep(20);
      }
      const rows = await until(
        'every event',
        () => applied('manyrep'),
        (r) => r.length >= appended.length,
      );
      // once each, in position order: no run applied over another replica's events
      expect(rows.map((r) => r.event_id)).toEqual(appended.map((e) => e.id));
      expect(overlaps).toEqual([]);
      expect(runs.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      expect(await consumerCheckpoint(db(), CONSUMER, 'manyrep', store.source)).toBe(appended.at(-1)!.position);
    });

    // ---- followers ----

    it('lets every process follow all events from the first, then live, with a type filter', async () => {
      const bus = await h.newBus();
      const store = await source('follow', bus);
      const past = await append(store, 'f-1', [ev('t.a.v1'), ev('t.b.v1'), ev('t.a.v1')]);
      const p1: StoredEvent[] = [];
      const p2: StoredEvent[] = [];
      const onlyB: string[] = [];
      const procs = [await h.newBus(), await h.newBus()];
      for (const p of procs) await p.attachSource(store);
      await procs[0]!.follow({ source: store.source, handler: async (e) => void p1.push(e) });
      await procs[1]!.follow({ source: store.source, handler: async (e) => void p2.push(e) });
      await procs[1]!.follow({ source: store.source, types: ['t.b.v1'], handler: async (e) => void onlyB.push(e.id) });
      await until(
        'the past',
        async () => [p1.length, p2.length],
        ([x, y]) => x! >= 3 && y! >= 3,
      );
      const live = await append(store, 'f-2', [ev('t.b.v1'), ev('t.c.v1')]);
      // the last one is a marker: once every follower has it, each has all it will get before it
      const marker = await append(store, 'f-3', [ev('t.b.v1')]);
      const all = [...past, ...live, ...marker];
      await until(
        'live events and the marker',
        async () => [p1, p2, onlyB].map((g) => g.some((e) => (typeof e === 'string' ? e : e.id) === marker[0]!.id)),
        (got) => got.every(Boolean),
      );
      for (const got of [p1, p2]) {
        expect(got.map((e) => e.id)).toEqual(all.map((e) => e.id));
        expect(got[0]).toEqual(past[0]); // the whole envelope travels
      }
      expect(onlyB).toEqual(all.filter((e) => e.type === 't.b.v1').map((e) => e.id));
    });

    it('follows from now: only what is appended after follow() resolves, on every process', async () => {
      const bus = await h.newBus();
      const store = await source('follownow', bus);
      const past = await append(store, 'fn-1', [ev('t.a.v1'), ev('t.b.v1')]);
      // the past is on the bus (relayed) before anyone follows from now
      const seen: string[] = [];
      await bus.follow({ source: store.source, handler: async (e) => void seen.push(e.id) });
      await until(
        'the past relayed',
        async () => seen.length,
        (k) => k >= 2,
      );
      const procs = [await h.newBus(), await h.newBus()];
      const got: string[][] = [[], []];
      for (const [i, p] of procs.entries()) {
        await p.attachSource(store);
        await p.follow({ source: store.source, from: 'now', handler: async (e) => void got[i]!.push(e.id) });
      }
      const live = await append(store, 'fn-2', [ev('t.c.v1'), ev('t.a.v1')]);
      const marker = await append(store, 'fn-3', [ev('t.marker.v1')]);
      live.push(...marker);
      await until(
        'live events and the marker on both',
        async () => got.map((g) => g.includes(marker[0]!.id)),
        (has) => has.every(Boolean),
      );
      for (const g of got) expect(g).toEqual(live.map((e) => e.id));
      expect(past.some((e) => got[0]!.includes(e.id))).toBe(false);
    });

    it('retries a failing follower handler on the same event', async () => {
      const bus = await h.newBus();
      const store = await source('followretry', bus);
      const events = await append(store, 'fr-1', [ev('t.a.v1'), ev('t.b.v1')]);
      const got: string[] = [];
      let failed = false;
      await bus.follow({
        source: store.source,
        handler: async (e) => {
          if (!failed) {
            failed = true;
            throw new Error('transient');
          }
          got.push(e.id);
        },
      });
      await until(
        'both',
        async () => got.length,
        (k) => k >= 2,
      );
      expect(got).toEqual(events.map((e) => e.id));
    });

    it('waits for a source that starts after its consumer and follower', async () => {
      const schema = `src_${++n}_late`;
      const consumerBus = await h.newBus();
      const followed: string[] = [];
      await consumerBus.follow({ source: schema, handler: async (e) => void followed.push(e.id) });
      await consumerBus.consume({
        source: schema,
        durable: 'late',
        checkpoint: () => consumerCheckpoint(db(), CONSUMER, 'late', schema),
        handler: record('late'),
      });
      // A setup step, not a wait for a condition: let both ask for the absent source at least once
      // (there is nothing to observe while they wait) before it appears.
      await sleep(500);
      // The source service starts now.
      await migrate(db(), schema, eventStoreMigrations);
      const late = new EventStore(db(), schema);
      await (await h.newBus()).attachSource(late);
      await consumerBus.attachSource(late); // the memory bus reads a source's store in-process
      const events = await append(late, 'l-1', [ev('t.a.v1'), ev('t.b.v1')]);
      const rows = await until(
        'late events',
        () => appliedIds('late'),
        (r) => r.length >= 2,
      );
      expect(rows).toEqual(events.map((e) => e.id));
      await until(
        'late follow',
        async () => followed.length,
        (k) => k >= 2,
      );
      expect(followed).toEqual(events.map((e) => e.id));
    });

    // ---- the log's edges ----

    it.skipIf(!caps.concurrentTransactions)('does not skip a lower position whose transaction commits later', async () => {
      const bus = await h.newBus();
      const store = await source('xmin', bus);
      await consume(bus, store, 'xmin');
      const appended = gate();
      const commit = gate();
      let low: StoredEvent | undefined;
      const slow = db()
        .transaction()
        .execute(async (trx) => {
          [low] = await store.append(trx, 'x-slow', -1, [ev('t.slow.v1')]);
          appended.open();
          await commit.wait;
        });
      await appended.wait;
      // the later append waits for the earlier one's commit (positions are numbered in commit order)
      const fast = append(store, 'x-fast', [ev('t.fast.v1')]);
      // A negative, so a bounded wait: the relay wakes on append and at least every 250 ms
      // (RELAY_TICK_MS), so 600 ms covers two ticks; were anything let through now, `low` could later
      // count as applied
      await sleep(600);
      expect(await Promise.race([fast.then(() => 'appended'), Promise.resolve('waiting')])).toBe('waiting');
      expect(await appliedIds('xmin')).toEqual([]);
      commit.open();
      await slow;
      const [high] = await fast;
      expect(high!.position).toBeGreaterThan(low!.position);
      store.notify();
      const rows = await until(
        'both',
        () => appliedIds('xmin'),
        (r) => r.length >= 2,
      );
      expect(rows).toEqual([low!.id, high!.id]);
    });

    it('does not apply twice when the relay publishes the same events again', async () => {
      const bus = await h.newBus();
      const store = await source('replay', bus);
      const events = await append(store, 'rp-1', [ev('t.a.v1'), ev('t.b.v1'), ev('t.c.v1')]);
      events.push(...(await append(store, 'rp-2', [ev('t.d.v1')])));
      await consume(bus, store, 'replay');
      await until(
        'all four',
        () => appliedIds('replay'),
        (r) => r.length >= 4,
      );
      // A relay that crashed before saving its checkpoint starts again from the beginning.
      await sql`update ${sql.raw(store.source)}.relay_checkpoints set position = 0`.execute(db());
      store.notify();
      const head = events.at(-1)!.position;
      const relayAt = async () =>
        Number((await sql<{ p: number | null }>`select max(position) as p from ${sql.raw(store.source)}.relay_checkpoints`.execute(db())).rows[0]?.p ?? head);
      await until('the relay to publish again', relayAt, (p) => p >= head);
      // The bus kept one copy (JetStream dedupes a run published again; a follower passes an event it has seen): a new follower sees each event once.
      const follower = await h.newBus();
      await follower.attachSource(store);
      const followed: string[] = [];
      await follower.follow({ source: store.source, handler: async (e) => void followed.push(e.id) });
      await until(
        'the follower',
        async () => followed.length,
        (k) => k >= 4,
      );
      // past the duplicate window (one message an event, as earlier versions published): the
      // consumer and the follower must pass the copies themselves
      if (h.republish) await h.republish(bus, events);
      const next = await append(store, 'rp-3', [ev('t.e.v1')]);
      const rows = await until(
        'the next event',
        () => appliedIds('replay'),
        (r) => r.includes(next[0]!.id),
      );
      expect(rows).toEqual([...events, ...next].map((e) => e.id));
      const marker = await append(store, 'rp-4', [ev('t.marker.v1')]);
      await until('the marker, at the follower and the consumer', async () => followed.includes(marker[0]!.id) && (await appliedIds('replay')).includes(marker[0]!.id), Boolean);
      expect(followed).toEqual([...events, ...next, ...marker].map((e) => e.id));
      expect(await appliedIds('replay')).toHaveLength(6);
    });

    // ---- transient messages ----

    it('delivers a transient message to every listener now, never stores it, and stops on stop()', async () => {
      const sender = await h.newBus();
      const store = await source('transient', sender);
      const subject = `bindery.transient.test${n}.progress`;
      // a message nobody listens to is gone: a listener that starts later never gets it
      sender.notify(subject, { step: 0 });
      // A negative with nothing to observe (nobody hears it): a short bound, so the message has left
      // the sender before anyone listens; a later listener that got it would fail the checks below.
      await sleep(100);
      const a: unknown[] = [];
      const b: unknown[] = [];
      const wild: string[] = [];
      const others = caps.transientAcrossInstances ? [await h.newBus(), await h.newBus()] : [sender, sender];
      const subA = await others[0]!.listen(subject, (d) => void a.push(d));
      await others[1]!.listen(subject, (d) => void b.push(d));
      await others[1]!.listen(`bindery.transient.test${n}.*`, (_d, subj) => void wild.push(subj));
      await sender.listen(subject, () => {
        throw new Error('a failing listener harms no one');
      });
      const sent = { scan_id: 's-1', files_seen: 3, nested: { list: [1, 'x'] } };
      sender.notify(subject, sent);
      sent.files_seen = 99; // the receiver has a copy, as the wire gives it
      sender.notify(subject, { step: 2 });
      sender.notify(`bindery.transient.test${n}.other`, { step: 3 });
      await until(
        'both listeners',
        async () => [a.length, b.length],
        ([x, y]) => x! >= 2 && y! >= 2,
      );
      await until(
        'the wildcard listener',
        async () => wild.length,
        (k) => k >= 3,
      );
      // one sender's messages reach a listener in order, so once a marker is in, nothing more comes before it
      sender.notify(subject, { mark: 1 });
      await until('the first marker', async () => [a, b].every((got) => got.some((d) => (d as { mark?: number }).mark === 1)) && wild.length >= 4, Boolean);
      for (const got of [a, b]) expect(got).toEqual([{ scan_id: 's-1', files_seen: 3, nested: { list: [1, 'x'] } }, { step: 2 }, { mark: 1 }]);
      expect(wild).toEqual([subject, subject, `bindery.transient.test${n}.other`, subject]);
      await subA.stop();
      // a new listener on the stopped one's bus: when it has the marker sent after step 4, a listener
      // still subscribed there would have had step 4
      const probe: unknown[] = [];
      await others[0]!.listen(subject, (d) => void probe.push(d));
      sender.notify(subject, { step: 4 });
      sender.notify(subject, { mark: 2 });
      await until('the second marker, on both buses', async () => [probe, b].every((got) => got.some((d) => (d as { mark?: number }).mark === 2)), Boolean);
      expect(a).toHaveLength(3);
      expect(b.slice(-2)).toEqual([{ step: 4 }, { mark: 2 }]);
      // nothing of it went into the log
      expect(await store.readAll(0)).toEqual([]);
    });

    it('stops a subscription only after the event in hand is done', async () => {
      const bus = await h.newBus();
      const store = await source('stop', bus);
      const started = gate();
      const finish = gate();
      let finished = false;
      const inner = record('stop');
      const sub: Subscription = await consume(bus, store, 'stop', async (e) => {
        started.open();
        await finish.wait;
        await inner(e);
        finished = true;
      });
      await append(store, 's-1', [ev('t.a.v1')]);
      await started.wait;
      let stopped = false;
      const stopping = sub.stop().then(() => (stopped = true));
      // A negative (stop() has not resolved), so a short bounded wait: the handler is held by the gate,
      // and a stop that did not wait for it would resolve within a few event-loop turns
      await sleep(100);
      expect(stopped).toBe(false);
      finish.open();
      await stopping;
      expect(finished).toBe(true);
      expect(await appliedIds('stop')).toHaveLength(1);
    });
  });
}

const quiet = () => createLogger('bus-contract', process.env.LOG_LEVEL ?? 'silent');

busContract('in-memory bus over PGlite', { replicasShareRequests: false, concurrentTransactions: false, transientAcrossInstances: false }, async () => {
  const database = await openPGlite('memory://');
  const buses: Bus[] = [];
  return {
    database,
    newBus: async () => {
      const b = new MemoryBus();
      buses.push(b);
      return b;
    },
    close: async () => {
      await Promise.allSettled(buses.map((b) => b.close()));
      await database.close();
    },
  };
});

const backends = await resolveBackends();
if (backends.postgresUrl) {
  const baseUrl = backends.postgresUrl;
  busContract('JetStream bus (private nats-server, PostgreSQL)', { replicasShareRequests: true, concurrentTransactions: true, transientAcrossInstances: true }, async () => {
    const nats = await startNatsServer();
    const tdb = await createTestDatabase(baseUrl);
    const database = await openPostgres(tdb.url, { application: 'bindery-contract' });
    const buses: Bus[] = [];
    return {
      database,
      newBus: async () => {
        const b = await connectNatsBus(nats.url, { name: `contract-${buses.length}`, logger: quiet() });
        buses.push(b);
        return b;
      },
      republish: async (bus, events) => {
        // Plain NATS publishes carry no message id, so JetStream keeps every copy.
        const { nc } = bus as NatsBus;
        for (const e of events) nc.publish(eventSubject(e.source, e.type), JSON.stringify(e));
        await nc.flush();
      },
      close: async () => {
        await Promise.allSettled(buses.map((b) => b.close()));
        await database.close();
        await tdb.drop();
        await nats.stop();
      },
    };
  });
} else {
  describe.skip('Bus contract: JetStream bus (no PostgreSQL: see [test backends] above)', () => {
    it('needs PostgreSQL', () => undefined);
  });
}

// ---- poisoned events: bounded retries, parking, replay (issue 8, must-fix 4) ----

interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  [k: string]: unknown;
}

/** A logger that keeps what the bus says, so a test can show a failure is never silent. */
function capture(): { log: BusLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: unknown, msg?: string) => void lines.push({ ...(typeof obj === 'object' ? (obj as object) : {}), level, msg: msg ?? String(obj) });
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as unknown as BusLogger, lines };
}

interface ParkingHarness {
  database: Database;
  /** what a consumer's lag counts: events, or runs of them (the JetStream bus: one message a relay's run) */
  lagCounts: 'events' | 'runs';
  newBus(opts: { retry: RetryPolicy; logger: BusLogger; metrics?: Metrics }): Promise<Bus>;
  close(): Promise<void>;
}

const RETRY: RetryPolicy = { attempts: 3, baseMs: 20, maxMs: 100 };

function parkingContract(name: string, open: () => Promise<ParkingHarness>) {
  describe(`Bus contract, poisoned events: ${name}`, () => {
    let h: ParkingHarness;
    let n = 0;
    const SERVICE = 'parksvc';
    const db = (): Db<ContractDb> => asTables<ContractDb, NoTables>(h.database.db);

    beforeAll(async () => {
      h = await open();
      await migrate(db(), SERVICE, consumerMigrations);
    });
    afterAll(async () => {
      await h?.close();
    });

    async function source(bus: Bus): Promise<EventStore<ContractDb>> {
      const schema = `psrc_${++n}`;
      await migrate(db(), schema, eventStoreMigrations);
      const store = new EventStore(db(), schema);
      await bus.attachSource(store);
      return store;
    }
    async function append(store: EventStore<ContractDb>, events: NewEvent[]): Promise<StoredEvent[]> {
      const out = await db()
        .transaction()
        .execute((trx) => store.append(trx, 'p-1', 'any', events));
      store.notify();
      return out;
    }
    const applied = async (durable: string) =>
      (await db().withSchema(SERVICE).selectFrom('applied').select(['event_id']).where('consumer', '=', durable).orderBy('seq').execute()).map((r) => r.event_id as string);

    /** A consumer whose handler throws on `poison` until `fixed` is set; every try is counted. */
    function poisoned(durable: string, poison: () => string | undefined) {
      const tries = new Map<string, number>();
      const state = { fixed: false, tries };
      const handler = async (e: StoredEvent) => {
        tries.set(e.id, (tries.get(e.id) ?? 0) + 1);
        await applyOnce(db(), SERVICE, durable, e, async (trx) => {
          if (e.id === poison() && !state.fixed) throw new Error(`cannot apply ${e.type}`);
          await trx.withSchema(SERVICE).insertInto('applied').values({ consumer: durable, event_id: e.id, position: e.position, type: e.type }).execute();
        });
      };
      return { state, handler };
    }

    it('parks an event after N failed tries, logs and counts it, and applies the events after it', async () => {
      const { log, lines } = capture();
      const metrics = new Metrics();
      const lot = new ParkingLot(db(), SERVICE);
      metrics.watchParking(lot);
      const bus = await h.newBus({ retry: RETRY, logger: log, metrics });
      const store = await source(bus);
      let poison: string | undefined;
      const c = poisoned('park-1', () => poison);
      const sub = await bus.consume({
        source: store.source,
        durable: 'park-1',
        checkpoint: () => consumerCheckpoint(db(), SERVICE, 'park-1', store.source),
        handler: c.handler,
        parking: lot,
      });
      const events = await append(store, [ev('t.a.v1'), ev('t.poison.v1'), ev('t.c.v1'), ev('t.d.v1')]);
      poison = events[1]!.id;

      const rows = await until(
        'the three good events applied',
        () => applied('park-1'),
        (r) => r.length >= 3,
      );
      expect(rows).toEqual([events[0]!.id, events[2]!.id, events[3]!.id]);
      expect(c.state.tries.get(poison)).toBe(RETRY.attempts);
      expect(c.state.tries.get(events[2]!.id)).toBe(1);

      const parked = await lot.list();
      expect(parked).toHaveLength(1);
      expect(parked[0]).toMatchObject({
        service: SERVICE,
        consumer: 'park-1',
        source: store.source,
        event_id: poison,
        event_type: 't.poison.v1',
        position: events[1]!.position,
        error: 'cannot apply t.poison.v1',
        attempts: RETRY.attempts,
      });
      expect(parked[0]!.id).toMatch(new RegExp(`^${SERVICE}-\\d+$`));
      // the checkpoint is past the parked event, so a restart does not start over at it
      expect(await consumerCheckpoint(db(), SERVICE, 'park-1', store.source)).toBe(events[3]!.position);

      const warned = lines.filter((l) => l.level === 'warn' && l.event === poison);
      expect(warned.map((l) => l.attempt)).toEqual([1, 2]);
      const parkedLine = lines.filter((l) => l.level === 'error' && l.event === poison);
      expect(parkedLine).toHaveLength(1);
      expect(parkedLine[0]!.msg).toContain('event parked after repeated failures');
      const text = (await metrics.text()).body;
      expect(text).toContain('bindery_events_parked_total{consumer="park-1"} 1');
      expect(text).toContain('bindery_parked_events{consumer="park-1"} 1');
      expect(text).toContain(`bindery_event_handler_failures_total{consumer="park-1"} ${RETRY.attempts}`);
      await sub.stop();
    });

    it('replays a parked event once its cause is fixed, and applies nothing twice', async () => {
      const { log } = capture();
      const lot = new ParkingLot(db(), SERVICE);
      const bus = await h.newBus({ retry: RETRY, logger: log });
      const store = await source(bus);
      let poison: string | undefined;
      const c = poisoned('park-2', () => poison);
      const consume = (b: Bus, l: ParkingLot<ContractDb>) =>
        b.consume({ source: store.source, durable: 'park-2', checkpoint: () => consumerCheckpoint(db(), SERVICE, 'park-2', store.source), handler: c.handler, parking: l });
      const sub = await consume(bus, lot);
      const events = await append(store, [ev('t.poison.v1'), ev('t.b.v1')]);
      poison = events[0]!.id;
      await until(
        'the good event applied',
        () => applied('park-2'),
        (r) => r.length >= 1,
      );
      const mine = async () => (await lot.list()).filter((p) => p.consumer === 'park-2');
      const [parked] = await until('the poison parked', mine, (r) => r.length === 1);

      // Still broken: the replay fails, says why, and the event stays parked.
      expect(await lot.replay(parked!.id)).toEqual({ ok: false, error: { code: 'conflict', message: 'replay failed: cannot apply t.poison.v1' } });
      expect((await mine()).map((p) => p.id)).toEqual([parked!.id]);

      c.state.fixed = true;
      expect(await lot.replay(parked!.id)).toEqual({ ok: true, value: { id: parked!.id, replayed: true } });
      expect(await applied('park-2')).toEqual([events[1]!.id, events[0]!.id]);
      expect(await mine()).toEqual([]);
      expect(await lot.replay(parked!.id)).toEqual({ ok: false, error: { code: 'conflict', message: 'parked event already replayed' } });
      expect(await lot.replay(`${SERVICE}-999999`)).toEqual({ ok: false, error: { code: 'not_found', message: 'parked event not found' } });
      expect(await lot.replay('other-1')).toEqual({ ok: false, error: { code: 'invalid_request', message: 'invalid parked event id' } });

      // A restarted consumer (another process) resumes after both: nothing comes again.
      await sub.stop();
      const again = await h.newBus({ retry: RETRY, logger: log });
      await again.attachSource(store);
      const lot2 = new ParkingLot(db(), SERVICE);
      await consume(again, lot2);
      const later = await append(store, [ev('t.e.v1')]);
      await until(
        'the later event applied',
        () => applied('park-2'),
        (r) => r.length >= 3,
      );
      const marker = await append(store, [ev('t.marker.v1')]);
      await until(
        'the marker',
        () => applied('park-2'),
        (r) => r.includes(marker[0]!.id),
      );
      expect(await applied('park-2')).toEqual([events[1]!.id, events[0]!.id, later[0]!.id, marker[0]!.id]);
    });

    it('reports its durable consumers with their lag, and keeps retrying loudly when it has nowhere to park', async () => {
      const { log, lines } = capture();
      const bus = await h.newBus({ retry: RETRY, logger: log });
      const store = await source(bus);
      let poison: string | undefined;
      const c = poisoned('park-3', () => poison);
      await bus.consume({ source: store.source, durable: 'park-3', checkpoint: () => consumerCheckpoint(db(), SERVICE, 'park-3', store.source), handler: c.handler });
      const events = await append(store, [ev('t.poison.v1'), ev('t.b.v1')]);
      poison = events[0]!.id;
      await until(
        'past the retry budget',
        async () => c.state.tries.get(poison!) ?? 0,
        (t) => t > RETRY.attempts,
      );
      expect(await applied('park-3')).toEqual([]);
      expect(lines.some((l) => l.level === 'error' && l.event === poison && String(l.msg).includes('no parking'))).toBe(true);
      const status = bus.status();
      expect(status.connected).toBe(true);
      const me = status.consumers.find((s) => s.name === 'park-3')!;
      expect(me).toMatchObject({ kind: 'durable', source: store.source, running: true });
      // both events were appended together: one run
      expect(await me.lag()).toBe(h.lagCounts === 'events' ? 2 : 1);
    });
  });
}

parkingContract('in-memory bus over PGlite', async () => {
  const database = await openPGlite('memory://');
  const buses: Bus[] = [];
  return {
    database,
    lagCounts: 'events',
    newBus: async (opts) => {
      const b = new MemoryBus(opts);
      buses.push(b);
      return b;
    },
    close: async () => {
      await Promise.allSettled(buses.map((b) => b.close()));
      await database.close();
    },
  };
});

if (backends.postgresUrl) {
  const baseUrl = backends.postgresUrl;
  parkingContract('JetStream bus (private nats-server, PostgreSQL)', async () => {
    const nats = await startNatsServer();
    const tdb = await createTestDatabase(baseUrl);
    const database = await openPostgres(tdb.url, { application: 'bindery-contract-parking' });
    const buses: Bus[] = [];
    return {
      database,
      lagCounts: 'runs',
      newBus: async (opts) => {
        const b = await connectNatsBus(nats.url, { name: `parking-${buses.length}`, ...opts });
        buses.push(b);
        return b;
      },
      close: async () => {
        await Promise.allSettled(buses.map((b) => b.close()));
        await database.close();
        await tdb.drop();
        await nats.stop();
      },
    };
  });
} else {
  describe.skip('Bus contract, poisoned events: JetStream bus (no PostgreSQL: see [test backends] above)', () => {
    it('needs PostgreSQL', () => undefined);
  });
}
