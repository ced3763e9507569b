// A process killed between the append and the publish (and between the publish and the relay
// checkpoint) loses no event, and no durable consumer applies one twice after the restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import {
  applyOnce,
  connectNatsBus,
  consumerCheckpoint,
  eventStoreMigrations,
  execScript,
  migrate,
  openPostgres,
  type Database,
  type NatsBus,
  type Subscription,
} from '@bindery/platform';
import { eventStreamName, rpcSubject } from '@bindery/contracts';
import { createTestDatabase, resolveBackends, startNatsServer } from '../support/backends';
import { spawnBindery, type Proc } from '../support/bindery';
import { streamEventCount } from '../support/stream-events';

const backends = await resolveBackends();
const SECRET = 'crash-test-secret-crash-test-secret-0123456789';

describe.skipIf(!backends.postgresUrl)('relay crash (distributed, real Postgres and nats-server)', () => {
  let db: { url: string; drop(): Promise<void> };
  let nats: { url: string; stop(): Promise<void> };
  let database: Database;
  let bus: NatsBus;
  let consumer: Subscription | null = null;
  const env = () => ({ DATABASE_URL: db.url, NATS_URL: nats.url, JWT_SECRET: SECRET, BINDERY_SERVICES: 'identity' });

  beforeAll(async () => {
    db = await createTestDatabase(backends.postgresUrl!);
    nats = await startNatsServer();
    database = await openPostgres(db.url);
    bus = await connectNatsBus(nats.url, { name: 'crash-test' });
  });
  afterAll(async () => {
    await consumer?.stop();
    await bus?.close();
    await database?.close();
    await nats?.stop();
    await db?.drop();
  });

  const startIdentity = (fault?: string) =>
    spawnBindery('service', { ...env(), ...(fault ? { BINDERY_FAULT_INJECTION: fault } : {}) }, /bindery identity started/).then((r) => r.proc);

  const register = (n: string) =>
    bus.request(rpcSubject('identity', 'register'), { caller: null, input: { email: `${n}@example.com`, username: n, password: 'passw0rd-crash' } }, 5000).catch(() => null);

  /** a registration appends the account (`user-registered`) and its first session (`session-started`) */
  const PER_REGISTER = 2;
  const committedEvents = async () => Number((await sql<{ n: number }>`select count(*)::int as n from identity.events`.execute(database.db)).rows[0]!.n);

  /** the events the identity stream holds (a run of them is one message) */
  const streamMessages = async () => {
    const nc = await connect({ servers: nats.url });
    try {
      return await streamEventCount(nc, eventStreamName('identity'));
    } finally {
      await nc.close();
    }
  };

  const waitFor = async (what: string, cond: () => Promise<boolean>, ms = 15000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (await cond()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  const died = async (p: Proc) => {
    await p.exited;
    return p.child.signalCode;
  };

  it('an event appended before a kill between append and publish is published after restart', async () => {
    const p = await startIdentity('relay-before-publish');
    await register(`u${randomUUID().slice(0, 8)}`);
    expect(await died(p)).toBe('SIGKILL');
    // committed in the store (the account and its first session), never published
    expect(await committedEvents()).toBe(PER_REGISTER);
    expect(await streamMessages()).toBe(0);

    const again = await startIdentity();
    try {
      await waitFor('the relay to publish the committed events', async () => (await streamMessages()) === PER_REGISTER);
    } finally {
      await again.stop();
    }
  });

  it('a kill after publish but before the relay checkpoint does not make a consumer apply an event twice', async () => {
    await migrate(database.db, 'crashtest', eventStoreMigrations);
    await execScript(database.db, 'create table if not exists crashtest.effects (event_id uuid not null, position bigint not null)');
    consumer = await bus.consume({
      source: 'identity',
      durable: 'crash-test-consumer',
      checkpoint: () => consumerCheckpoint(database.db, 'crashtest', 'crash-test-consumer', 'identity'),
      handler: async (ev) => {
        await applyOnce(database.db, 'crashtest', 'crash-test-consumer', ev, async (trx) => {
          await sql`insert into crashtest.effects (event_id, position) values (${ev.id}, ${ev.position})`.execute(trx);
        });
      },
    });

    const p = await startIdentity('relay-after-publish');
    await register(`v${randomUUID().slice(0, 8)}`);
    expect(await died(p)).toBe('SIGKILL');
    // the first test's registration and this one's
    const before = await committedEvents();
    expect(before).toBe(2 * PER_REGISTER);

    // restart, then write more so the relay has new work after the republish
    const again = await startIdentity();
    try {
      await register(`w${randomUUID().slice(0, 8)}`);
      await waitFor('every committed event to be applied', async () => {
        const n = Number((await sql<{ n: number }>`select count(distinct event_id)::int as n from crashtest.effects`.execute(database.db)).rows[0]!.n);
        return n === (await committedEvents());
      });
      // give a late duplicate the chance to arrive, then check nothing was applied twice
      await new Promise((r) => setTimeout(r, 1000));
      const dup = await sql<{ event_id: string; n: number }>`select event_id, count(*)::int as n from crashtest.effects group by event_id having count(*) > 1`.execute(database.db);
      expect(dup.rows).toEqual([]);
      const total = Number((await sql<{ n: number }>`select count(*)::int as n from crashtest.effects`.execute(database.db)).rows[0]!.n);
      expect(total).toBe(await committedEvents());
      expect(total).toBe(3 * PER_REGISTER);
      const ids = (await sql<{ id: string }>`select event_id::text as id from identity.events order by global_position`.execute(database.db)).rows.map((r) => r.id);
      const applied = (await sql<{ id: string }>`select event_id::text as id from crashtest.effects order by position`.execute(database.db)).rows.map((r) => r.id);
      expect(applied).toEqual(ids);
    } finally {
      await again.stop();
    }
  });
});
