// One contract for the event store, run against each database it must work on: PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { NewEvent, StoredEvent } from '@bindery/contracts';
import { type NoTables, openPGlite, openPostgres, type Database, type Trx } from '../../platform/src/db';
import { EVENT_STORE_MIGRATION_TABLE, MIGRATION_TABLE, migrate } from '../../platform/src/migrate';
import { withWritePosition, type Written } from '../../platform/src/write-position';
import {
  applyFollowingInOne,
  applyOnce,
  applyOnceInOne,
  commandTransaction,
  ConcurrencyError,
  consumerCheckpoint,
  EventStore,
  eventStoreMigrations,
  type ExpectedVersion,
} from '../../platform/src/event-store';
import { createTestDatabase, resolveBackends } from '../support/backends';

interface StoreCaps {
  /** more than one connection: transactions really overlap (PGlite runs them one after another) */
  concurrentTransactions: boolean;
}

const SCHEMA = 'evs';
const ev = (type: string, data: unknown = {}): NewEvent => ({ type, data });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A deferred: lets a test hold a transaction open at a chosen point. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const wait = new Promise<T>((r) => (open = r));
  return { open, wait };
}

function eventStoreContract(name: string, caps: StoreCaps, open: () => Promise<Database>) {
  describe(`EventStore contract: ${name}`, () => {
    let database: Database;
    let store: EventStore<NoTables>;
    const db = () => database.db;
    const append = (streamId: string, expected: ExpectedVersion, events: NewEvent[]) =>
      db()
        .transaction()
        .execute((trx) => store.append(trx, streamId, expected, events));
    /** readAll honours the oldest running transaction of the whole server: wait out strangers' ones. */
    async function readAllEventually(after: number, count: number): Promise<StoredEvent[]> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const got = await store.readAll(after);
        if (got.length >= count || Date.now() > deadline) return got;
        await sleep(50);
      }
    }

    beforeAll(async () => {
      database = await open();
      await migrate(db(), SCHEMA, eventStoreMigrations);
      store = new EventStore(db(), SCHEMA);
    });
    afterAll(async () => {
      await database?.close();
    });

    it('appends to a new stream with expected version -1, numbering versions from 0', async () => {
      const out = await append('new-1', -1, [ev('t.a.v1', { n: 1 }), ev('t.b.v1', { n: 2 })]);
      expect(out.map((e) => [e.streamId, e.version, e.type, e.source])).toEqual([
        ['new-1', 0, 't.a.v1', SCHEMA],
        ['new-1', 1, 't.b.v1', SCHEMA],
      ]);
      expect(out[1]!.position).toBeGreaterThan(out[0]!.position);
      expect(out[0]!.data).toEqual({ n: 1 });
      expect(out[0]!.id).not.toBe(out[1]!.id);
    });

    it('rejects an append with the wrong expected version with ConcurrencyError', async () => {
      await append('wrong-1', -1, [ev('t.a.v1')]);
      const e = await append('wrong-1', 5, [ev('t.a.v1')]).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ConcurrencyError);
      expect(e).toMatchObject({ streamId: 'wrong-1', expected: 5, actual: 0 });
      await expect(append('wrong-1', -1, [ev('t.a.v1')])).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(db(), 'wrong-1')).toHaveLength(1);
    });

    it('lets exactly one of two concurrent appends with the same expected version win', async () => {
      let results: PromiseSettledResult<unknown>[];
      if (caps.concurrentTransactions) {
        // Interleave for real: the first holds its uncommitted insert while the second tries the same version.
        const inserted = gate();
        const commit = gate();
        const first = db()
          .transaction()
          .execute(async (trx) => {
            await store.append(trx, 'race-1', -1, [ev('t.first.v1')]);
            inserted.open();
            await commit.wait;
          });
        await inserted.wait;
        let secondSettled = false;
        const second = append('race-1', -1, [ev('t.second.v1')]).finally(() => (secondSettled = true));
        await sleep(200);
        expect(secondSettled).toBe(false); // blocked on the first transaction's row
        commit.open();
        results = await Promise.allSettled([first, second]);
      } else {
        results = await Promise.allSettled([append('race-1', -1, [ev('t.first.v1')]), append('race-1', -1, [ev('t.second.v1')])]);
      }
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason).toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(db(), 'race-1')).toHaveLength(1);
    });

    it("appends to many streams, existing or new, continuing each one's versions", async () => {
      await append('many-1', -1, [ev('t.a.v1'), ev('t.a.v1')]);
      await append('many-2', -1, [ev('t.a.v1')]);
      const streams = ['many-1', 'many-2', 'many-3'].map((streamId) => ({ streamId, events: [ev('t.gone.v1', { streamId })] }));
      // a chunk of 2 makes it two statements
      await db()
        .transaction()
        .execute((trx) => store.appendToStreams(trx, streams, 2));
      for (const [id, versions] of [
        ['many-1', [0, 1, 2]],
        ['many-2', [0, 1]],
        ['many-3', [0]],
      ] as const) {
        const got = await store.readStream(db(), id);
        expect(got.map((e) => e.version)).toEqual(versions);
        expect(got.at(-1)).toMatchObject({ type: 't.gone.v1', data: { streamId: id } });
      }
    });

    it('appends to several streams at their next versions in one statement, positions in the order given', async () => {
      await append('anymany-1', -1, [ev('t.a.v1')]);
      const out = await db()
        .transaction()
        .execute((trx) =>
          store.appendAnyMany(trx, [
            { streamId: 'anymany-2', events: [ev('t.b.v1', 'b0'), ev('t.b.v1', 'b1')] },
            { streamId: 'anymany-1', events: [ev('t.a.v1', 'a1'), ev('t.a.v1', 'a2')] },
            { streamId: 'anymany-3', events: [] },
          ]),
        );
      expect(out.map((list) => list.map((e) => [e.streamId, e.version, e.data]))).toEqual([
        [
          ['anymany-2', 0, 'b0'],
          ['anymany-2', 1, 'b1'],
        ],
        [
          ['anymany-1', 1, 'a1'],
          ['anymany-1', 2, 'a2'],
        ],
        [],
      ]);
      const positions = out.flat().map((e) => e.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect((await store.readStream(db(), 'anymany-1')).map((e) => e.version)).toEqual([0, 1, 2]);
      // a stream named twice takes one version twice: the whole append fails, nothing of it stays
      const twice = await db()
        .transaction()
        .execute((trx) =>
          store.appendAnyMany(trx, [
            { streamId: 'anymany-4', events: [ev('t.a.v1')] },
            { streamId: 'anymany-4', events: [ev('t.a.v1')] },
          ]),
        )
        .catch((e: unknown) => e);
      expect(twice).toBeInstanceOf(ConcurrencyError);
      expect(await store.readStream(db(), 'anymany-4')).toEqual([]);
    });

    it('reads a stream in version order', async () => {
      await append('order-1', -1, [ev('t.a.v1', 0)]);
      await append('other-1', -1, [ev('t.x.v1')]);
      await append('order-1', 0, [ev('t.a.v1', 1), ev('t.a.v1', 2)]);
      await append('order-1', 'any', [ev('t.a.v1', 3)]);
      const s = await store.readStream(db(), 'order-1');
      expect(s.map((e) => e.version)).toEqual([0, 1, 2, 3]);
      expect(s.map((e) => e.data)).toEqual([0, 1, 2, 3]);
      expect(s.every((e) => e.streamId === 'order-1')).toBe(true);
    });

    it('reads the whole log in position order, after a position and up to a limit', async () => {
      const start = await store.headPosition();
      const a = await append('all-1', -1, [ev('t.a.v1'), ev('t.b.v1')]);
      const b = await append('all-2', -1, [ev('t.c.v1')]);
      const c = await append('all-1', 1, [ev('t.d.v1')]);
      const ids = [...a, ...b, ...c].map((e) => e.id);
      const all = await readAllEventually(start, 4);
      expect(all.map((e) => e.id)).toEqual(ids);
      const positions = all.map((e) => e.position);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect((await store.readAll(a[1]!.position)).map((e) => e.id)).toEqual(ids.slice(2));
      expect((await store.readAll(start, 2)).map((e) => e.id)).toEqual(ids.slice(0, 2));
      expect(await store.readAll(c[0]!.position)).toEqual([]);
      expect(await store.headPosition()).toBe(c[0]!.position);
    });

    it('hands out the events commandTransaction committed as the log holds them, never a rolled-back append, up to the first gap', async () => {
      const kept = new EventStore(db(), SCHEMA);
      kept.keepRecent();
      const start = await kept.headPosition();
      // nothing held yet: the caller reads the log
      expect(kept.recent(start, 10)).toEqual([]);
      await commandTransaction(db(), kept, (trx) => kept.append(trx, 'recent-1', -1, [ev('t.a.v1', { n: 1 }), ev('t.b.v1', { n: [2] })]));
      await commandTransaction(db(), kept, (trx) => kept.appendAnyMany(trx, [{ streamId: 'recent-2', events: [ev('t.c.v1', { s: 'x' })] }]));
      const logged = await readAllEventually(start, 3);
      expect(logged).toHaveLength(3);
      expect(kept.recent(start, 10)).toEqual(logged);
      expect(kept.recent(start, 2)).toEqual(logged.slice(0, 2));
      expect(kept.recent(logged[0]!.position, 10)).toEqual(logged.slice(1));
      expect(Object.isFrozen(kept.recent(start, 1)[0]!.data)).toBe(true);
      // a transaction that fails after its append: its events never show, and its positions leave a gap
      await expect(
        commandTransaction(db(), kept, async (trx) => {
          await kept.append(trx, 'recent-3', -1, [ev('t.d.v1')]);
          throw new Error('changed its mind');
        }),
      ).rejects.toThrow('changed its mind');
      const head = logged[2]!.position;
      expect(kept.recent(head, 10)).toEqual([]);
      await commandTransaction(db(), kept, (trx) => kept.append(trx, 'recent-4', -1, [ev('t.e.v1')]));
      const after = await readAllEventually(head, 1);
      expect(after.map((e) => e.type)).toEqual(['t.e.v1']);
      // the gap the rolled-back append left: from the head, the caller reads the log; past it, the event is held
      expect(after[0]!.position).toBeGreaterThan(head + 1);
      expect(kept.recent(head, 10)).toEqual([]);
      expect(kept.recent(after[0]!.position - 1, 10)).toEqual(after);
      // an append committed outside commandTransaction is not held: read from the log
      const [outside] = await append('recent-5', -1, [ev('t.f.v1')]);
      expect(kept.recent(after[0]!.position, 10)).toEqual([]);
      expect((await kept.readAll(after[0]!.position)).map((e) => e.id)).toContain(outside!.id);
    });

    it.skipIf(!caps.concurrentTransactions)('never reads an uncommitted transaction, nor skips its lower position once it commits', async () => {
      const start = await store.headPosition();
      const appended = gate<StoredEvent>();
      const commit = gate();
      const slow = db()
        .transaction()
        .execute(async (trx) => {
          const [e] = await store.append(trx, 'slow-1', -1, [ev('t.slow.v1')]);
          appended.open(e!);
          await commit.wait;
        });
      const low = await appended.wait;
      // a second append waits for the first one's commit: it is numbered after it
      const fast = append('fast-1', -1, [ev('t.fast.v1')]);
      expect(await Promise.race([fast.then(() => 'appended'), sleep(500).then(() => 'waiting')])).toBe('waiting');
      expect((await store.readAll(start)).map((e) => e.id)).not.toContain(low.id);
      commit.open();
      await slow;
      const [high] = await fast;
      expect(high!.position).toBeGreaterThan(low.position);
      const after = await readAllEventually(start, 2);
      expect(after.map((e) => e.id)).toEqual([low.id, high!.id]);
    });

    it.skipIf(!caps.concurrentTransactions)('numbers positions in commit order when the later transaction id appends first', async () => {
      // Y gets its transaction id first, X second; X appends first and commits last. Were Y numbered
      // at once and committed, a reader would see Y's position (its id is below every running one)
      // and move past X's lower position before X commits: X's event would never be read.
      const start = await store.headPosition();
      const yHasId = gate();
      const xAppended = gate<StoredEvent>();
      const xCommit = gate();
      const y = db()
        .transaction()
        .execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx);
          yHasId.open();
          await xAppended.wait;
          const [e] = await store.append(trx, 'order-y', 'any', [ev('t.y.v1')]);
          return e!;
        });
      await yHasId.wait;
      const x = db()
        .transaction()
        .execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx);
          const [e] = await store.append(trx, 'order-x', 'any', [ev('t.x.v1')]);
          xAppended.open(e!);
          await xCommit.wait;
          return e!;
        });
      const low = await xAppended.wait;
      expect(await Promise.race([y.then(() => 'committed'), sleep(500).then(() => 'waiting')])).toBe('waiting');
      expect((await store.readAll(start)).map((e) => e.id)).toEqual([]);
      xCommit.open();
      await x;
      const high = await y;
      expect(high.position).toBeGreaterThan(low.position);
      expect((await readAllEventually(start, 2)).map((e) => e.id)).toEqual([low.id, high.id]);
    });

    it.skipIf(!caps.concurrentTransactions)('reads every committed position below a higher one, whatever transaction ids run', async () => {
      // B gets its id, then Z, then A. A appends and commits, then B. While Z still runs, a guard by
      // transaction id (below the oldest running one) would show B's higher position and hide A's
      // lower one, and a reader would move past A's for good.
      const start = await store.headPosition();
      const bHasId = gate();
      const bAppend = gate();
      const zHasId = gate();
      const zEnd = gate();
      const b = db()
        .transaction()
        .execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx);
          bHasId.open();
          await bAppend.wait;
          const [e] = await store.append(trx, 'ids-b', 'any', [ev('t.b.v1')]);
          return e!;
        });
      await bHasId.wait;
      const z = db()
        .transaction()
        .execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx);
          zHasId.open();
          await zEnd.wait;
        });
      await zHasId.wait;
      const a = await db()
        .transaction()
        .execute(async (trx) => {
          await sql`select pg_current_xact_id()`.execute(trx);
          const [e] = await store.append(trx, 'ids-a', 'any', [ev('t.a.v1')]);
          return e!;
        });
      bAppend.open();
      const bEvent = await b;
      expect(bEvent.position).toBeGreaterThan(a.position);
      expect((await store.readAll(start)).map((e) => e.id)).toEqual([a.id, bEvent.id]);
      zEnd.open();
      await z;
    });

    it('applies an event once per consumer: positions at or below the checkpoint are skipped', async () => {
      const [e1, e2, e3] = await append('once-1', -1, [ev('t.a.v1'), ev('t.b.v1'), ev('t.c.v1')]);
      const effects: number[] = [];
      const apply = (e: StoredEvent) => applyOnce(db(), SCHEMA, 'c-once', e, async () => void effects.push(e.position));
      expect(await apply(e2!)).toBe(true);
      expect(await apply(e2!)).toBe(false);
      expect(await apply(e1!)).toBe(false);
      // a failing effect moves nothing
      await expect(applyOnce(db(), SCHEMA, 'c-once', e3!, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-once', SCHEMA)).toBe(e2!.position);
      expect(await apply(e3!)).toBe(true);
      expect(effects).toEqual([e2!.position, e3!.position]);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-once', SCHEMA)).toBe(e3!.position);
      // checkpoints are per consumer
      expect(await applyOnce(db(), SCHEMA, 'c-other', e1!, async () => undefined)).toBe(true);
    });

    it('applies an event in one statement once, and not at all while its `unless` holds', async () => {
      await sql`create table if not exists ${sql.raw(SCHEMA)}.in_one (position bigint primary key)`.execute(db());
      await sql`create table if not exists ${sql.raw(SCHEMA)}.in_one_block (on_ boolean not null)`.execute(db());
      const [e1, e2] = await append('in-one-1', -1, [ev('t.a.v1'), ev('t.b.v1')]);
      const rows = async () =>
        (await sql<{ position: string }>`select position from ${sql.raw(SCHEMA)}.in_one order by position`.execute(db())).rows.map((r) => Number(r.position));
      const blocked = sql<boolean>`exists (select 1 from ${sql.raw(SCHEMA)}.in_one_block where on_)`;
      const apply = (e: StoredEvent) =>
        applyOnceInOne(db(), SCHEMA, 'c-in-one', e, (isNew) => [sql`insert into ${sql.raw(SCHEMA)}.in_one (position) select ${e.position}::bigint where ${isNew}`], blocked);
      await sql`insert into ${sql.raw(SCHEMA)}.in_one_block (on_) values (true)`.execute(db());
      // held back: neither the checkpoint nor the effect moved
      expect(await apply(e1!)).toBe(false);
      expect(await rows()).toEqual([]);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-in-one', SCHEMA)).toBe(0);
      await sql`update ${sql.raw(SCHEMA)}.in_one_block set on_ = false`.execute(db());
      expect(await apply(e1!)).toBe(true);
      expect(await apply(e1!)).toBe(false);
      expect(await apply(e2!)).toBe(true);
      expect(await rows()).toEqual([e1!.position, e2!.position]);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-in-one', SCHEMA)).toBe(e2!.position);
    });

    it('moves only the checkpoint when a run folds to no statement, and not while its `unless` holds', async () => {
      const [e1, e2, e3] = await append('in-one-none', -1, [ev('t.a.v1'), ev('t.a.v1'), ev('t.a.v1')]);
      const held = sql<boolean>`${sql.lit(true)}`;
      expect(await applyOnceInOne(db(), SCHEMA, 'c-none', e1!, () => [], held, e2)).toBe(false);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-none', SCHEMA)).toBe(0);
      expect(await applyOnceInOne(db(), SCHEMA, 'c-none', e1!, () => [], undefined, e2)).toBe(true);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-none', SCHEMA)).toBe(e2!.position);
      // the run again: applied already
      expect(await applyOnceInOne(db(), SCHEMA, 'c-none', e1!, () => [], undefined, e2)).toBe(false);
      expect(await applyOnceInOne(db(), SCHEMA, 'c-none', e3!, () => [])).toBe(true);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-none', SCHEMA)).toBe(e3!.position);
    });

    it('folds a run that follows the checkpoint exactly, from no checkpoint (0) too, and nothing otherwise', async () => {
      await sql`create table if not exists ${sql.raw(SCHEMA)}.following (position bigint primary key)`.execute(db());
      const rows = async () =>
        (await sql<{ position: string }>`select position from ${sql.raw(SCHEMA)}.following order by position`.execute(db())).rows.map((r) => Number(r.position));
      const fold = (consumer: string, run: StoredEvent[]) =>
        applyFollowingInOne(db(), SCHEMA, consumer, run[0]!, run[run.length - 1]!, (isNew) => [
          sql`insert into ${sql.raw(SCHEMA)}.following (position) select p from unnest(${run.map((e) => e.position)}::bigint[]) as p where ${isNew}`,
        ]);
      const [e1, e2, e3, e4] = await append('following-1', -1, [ev('t.a.v1'), ev('t.b.v1'), ev('t.c.v1'), ev('t.d.v1')]);
      // the consumer stands right before e2: e2 and e3 fold together
      expect(await applyOnce(db(), SCHEMA, 'c-follow', e1!, async () => undefined)).toBe(true);
      expect(await fold('c-follow', [e2!, e3!])).toBe(true);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-follow', SCHEMA)).toBe(e3!.position);
      // folded already, and a run with a gap before it: nothing moves, nothing is written
      expect(await fold('c-follow', [e2!, e3!])).toBe(false);
      expect(await fold('c-follow', [e3!])).toBe(false);
      expect(await rows()).toEqual([e2!.position, e3!.position]);
      // the bus then brings them: applyOnce passes what is applied and applies what is not
      expect(await applyOnce(db(), SCHEMA, 'c-follow', e3!, async () => undefined)).toBe(false);
      expect(await applyOnce(db(), SCHEMA, 'c-follow', e4!, async () => undefined)).toBe(true);
      expect(await fold('c-follow', [e4!])).toBe(false);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-follow', SCHEMA)).toBe(e4!.position);
      // no checkpoint yet stands at 0: only a run from position 1 would follow it
      expect(await fold('c-follow-new', [e2!])).toBe(false);
      expect(await consumerCheckpoint(db(), SCHEMA, 'c-follow-new', SCHEMA)).toBe(0);
      expect(await rows()).toEqual([e2!.position, e3!.position]);
    });

    it("carries a tracked request's committed events with its answer, never a rolled-back attempt's, and none past the cap", async () => {
      const tracked = (fn: () => Promise<unknown>) => withWritePosition(SCHEMA, async () => ({ done: await fn() }), true) as Promise<{ written?: Written }>;
      let attempt = 0;
      // the first attempt appends, then fails as a concurrent writer would make it: only the second is carried
      const answer = await tracked(() =>
        commandTransaction(db(), store, async (trx) => {
          await store.append(trx, 'carry-1', 'any', [ev('t.carried.v1', { attempt })]);
          if (attempt++ === 0) throw new ConcurrencyError('carry-1', -1, 0);
          await store.appendAnyMany(trx, [{ streamId: 'carry-2', events: [ev('t.carried.v1', { many: true })] }]);
        }),
      );
      const carried = answer.written!.events!;
      expect(carried.map((e) => e.data)).toEqual([{ attempt: 1 }, { many: true }]);
      // the log's own events: ids, positions, versions, data and times as stored
      const logged = await readAllEventually(carried[0]!.position - 1, 2);
      expect(carried).toEqual(logged.slice(0, 2));
      expect(answer.written!.position).toBe(carried[1]!.position);
      // an append outside commandTransaction is noted as a position, but not carried (its commit is not seen)
      const outside = await tracked(() => append('carry-3', -1, [ev('t.carried.v1')]));
      expect(outside.written!.position).toBeGreaterThan(carried[1]!.position);
      expect(outside.written!.events).toBeUndefined();
      // more than the cap (16): none carried, the position still noted
      const many = await tracked(() =>
        commandTransaction(db(), store, (trx) =>
          store.append(
            trx,
            'carry-4',
            -1,
            Array.from({ length: 17 }, () => ev('t.carried.v1')),
          ),
        ),
      );
      expect(many.written!.events).toBeUndefined();
      expect(many.written!.position).toBeGreaterThan(outside.written!.position);
      // untracked for events (carry off): the position only
      const plain = (await withWritePosition(SCHEMA, async () => ({
        done: await commandTransaction(db(), store, (trx) => store.append(trx, 'carry-5', -1, [ev('t.carried.v1')])),
      }))) as {
        written?: Written;
      };
      expect(plain.written!.events).toBeUndefined();
    });

    it('runs migrations idempotently', async () => {
      const before = await store.headPosition();
      await migrate(db(), SCHEMA, eventStoreMigrations);
      await Promise.all([migrate(db(), SCHEMA, eventStoreMigrations), migrate(db(), SCHEMA, eventStoreMigrations)]);
      const rows = await sql<{ name: string }>`select name from ${sql.raw(SCHEMA)}.${sql.raw(EVENT_STORE_MIGRATION_TABLE)} order by name`.execute(db());
      expect(rows.rows.map((r) => r.name)).toEqual(eventStoreMigrations.map((m) => m.name));
      expect(await store.headPosition()).toBe(before);
    });

    it('carries over the list an earlier version kept, and runs only what it lacks, in name order', async () => {
      const schema = `legacy_${Math.random().toString(36).slice(2, 8)}`;
      const ran: string[] = [];
      const step = (name: string) => ({
        name,
        up: async (trx: Trx<NoTables>, s: string) => {
          ran.push(name);
          await sql.raw(`create table ${s}.${name.replace(/-/g, '_')} (id int)`).execute(trx);
        },
      });
      const list = [step('m-b-first'), step('m-a-second'), step('m-c-third')];
      await sql.raw(`create schema ${schema}`).execute(db());
      await sql.raw(`create table ${schema}.schema_migrations (name text primary key, applied_at timestamptz not null default now())`).execute(db());
      await sql.raw(`create table ${schema}.m_b_first (id int)`).execute(db());
      await sql.raw(`insert into ${schema}.schema_migrations (name) values ('m-b-first')`).execute(db());
      await migrate(db(), schema, list);
      expect(ran).toEqual(['m-a-second', 'm-c-third']);
      await migrate(db(), schema, list);
      expect(ran).toEqual(['m-a-second', 'm-c-third']);
      const rows = await sql<{ name: string }>`select name from ${sql.raw(schema)}.${sql.raw(MIGRATION_TABLE)} order by name`.execute(db());
      expect(rows.rows.map((r) => r.name)).toEqual(['m-a-second', 'm-b-first', 'm-c-third']);
      // a list that lacks one the database has (an older version started on it) is still refused
      await expect(migrate(db(), schema, list.slice(0, 2))).rejects.toThrow(/missing/);
      expect(ran).toEqual(['m-a-second', 'm-c-third']);
      // a migration that fails names itself and leaves nothing of its own behind
      await expect(
        migrate(db(), schema, [
          ...list,
          { name: 'm-d-broken', up: async (trx: Trx<NoTables>, s: string) => void (await sql.raw(`create table ${s}.nope (id int); select 1/0`).execute(trx)) },
        ]),
      ).rejects.toThrow(/^migration m-d-broken of legacy_\w+ failed: /);
      expect((await sql<{ t: string | null }>`select to_regclass(${`${schema}.nope`})::text as t`.execute(db())).rows[0]?.t).toBeNull();
    });
  });
}

eventStoreContract('PGlite (memory://)', { concurrentTransactions: false }, () => openPGlite('memory://'));

const backends = await resolveBackends();
if (backends.postgresUrl) {
  const baseUrl = backends.postgresUrl;
  eventStoreContract('PostgreSQL', { concurrentTransactions: true }, async () => {
    const tdb = await createTestDatabase(baseUrl);
    const database = await openPostgres(tdb.url, { application: 'bindery-contract' });
    return {
      ...database,
      close: async () => {
        await database.close();
        await tdb.drop();
      },
    };
  });
} else {
  describe.skip('EventStore contract: PostgreSQL (no server: see [test backends] above)', () => {
    it('needs PostgreSQL', () => undefined);
  });
}
