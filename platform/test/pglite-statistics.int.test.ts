// An embedded database gets planner statistics as its event logs grow: PGlite runs no autovacuum,
// and without them a table filled after start is planned as if it were empty.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger, keepStatistics, openPGlite, type Database } from '../src/index';

let database: Database;
beforeAll(async () => {
  database = await openPGlite('memory://');
  await sql`create schema s`.execute(database.db);
  await sql`create table s.events (global_position bigserial primary key, data text)`.execute(database.db);
  await sql`create table s.items (id int primary key, sha text)`.execute(database.db);
});
afterAll(async () => {
  await database?.close();
});

const tuples = async () => Number((await sql<{ n: number }>`select reltuples::float8 as n from pg_class where oid = 's.items'::regclass`.execute(database.db)).rows[0]!.n);
const until = async (ok: () => Promise<boolean>) => {
  for (const end = Date.now() + 5000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (await ok()) return true;
  return false;
};

it('runs ANALYZE once the logs moved far enough, and not before', async () => {
  const stop = keepStatistics(database.db, createLogger('test', 'silent'), { everyMs: 20, minEvents: 100 });
  try {
    // the first look analyzes what is there (never analyzed: -1 tuples)
    expect(await until(async () => (await tuples()) === 0)).toBe(true);
    await sql`insert into s.items select g, md5(g::text) from generate_series(1, 400) g`.execute(database.db);
    await sql`insert into s.events (data) select 'x' from generate_series(1, 50)`.execute(database.db);
    await new Promise((r) => setTimeout(r, 200));
    // 50 events: below the threshold, the statistics still say empty
    expect(await tuples()).toBe(0);
    await sql`insert into s.events (data) select 'x' from generate_series(1, 60)`.execute(database.db);
    expect(await until(async () => (await tuples()) === 400)).toBe(true);
  } finally {
    await stop();
  }
});
