// On PostgreSQL the planner's statistics are kept by Bindery too where autovacuum is off (as on this
// project's CI server) or behind a large scan: a table filled after its last ANALYZE is planned as if
// it were empty, and a lookup that has an index reads every row instead.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, keepPostgresStatistics, openPostgres, type Database, type Logger } from '@bindery/platform';
import { createTestDatabase, resolveBackends } from '../support/backends';

const backends = await resolveBackends();

describe.skipIf(!backends.postgresUrl)('keepPostgresStatistics', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let database: Database;
  beforeAll(async () => {
    db = await createTestDatabase(backends.postgresUrl!);
    database = await openPostgres(db.url, { max: 2 });
    // autovacuum left out of the way for this table: what is measured is this keeper alone
    await sql`create table items (id int primary key, sha text) with (autovacuum_enabled = false)`.execute(database.db);
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const analyzed = async () => (await sql<{ n: string }>`select analyze_count::text as n from pg_stat_user_tables where relname = 'items'`.execute(database.db)).rows[0]?.n ?? '0';
  const until = async (ok: () => Promise<boolean>) => {
    for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (await ok()) return true;
    return false;
  };

  it('runs ANALYZE on a table once enough of its rows changed, and not before', async () => {
    const stop = keepPostgresStatistics(database.db, createLogger('test', 'silent'), { everyMs: 30, minRows: 500 });
    try {
      await sql`insert into items select g, md5(g::text) from generate_series(1, 400) g`.execute(database.db);
      await new Promise((r) => setTimeout(r, 1500));
      // 400 rows changed: below 500, not analyzed (the counters reach the view within a second)
      expect(await analyzed()).toBe('0');
      await sql`insert into items select g, md5(g::text) from generate_series(401, 5000) g`.execute(database.db);
      expect(await until(async () => (await analyzed()) === '1')).toBe(true);
      const { rows } = await sql<{ n: number }>`select reltuples::float8 as n from pg_class where oid = 'items'::regclass`.execute(database.db);
      expect(rows[0]!.n).toBe(5000);
      // 1,000 more of 5,000: under 500 + a fifth of 5,000, not analyzed again
      await sql`update items set sha = 'x' where id <= 1000`.execute(database.db);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await analyzed()).toBe('1');
    } finally {
      await stop();
    }
  });

  it('leaves alone a table its role does not own (PostgreSQL would only warn, every time)', async () => {
    const role = `bindery_t_role_${randomBytes(4).toString('hex')}`;
    await sql`create role ${sql.id(role)} login`.execute(database.db);
    await sql`grant create on schema public to ${sql.id(role)}`.execute(database.db);
    const url = new URL(db.url);
    url.username = role;
    const other = await openPostgres(url.toString(), { max: 1 });
    const count = async (table: string) =>
      (await sql<{ n: string }>`select analyze_count::text as n from pg_stat_user_tables where relname = ${table}`.execute(database.db)).rows[0]?.n ?? '0';
    try {
      await sql`create table theirs (id int primary key) with (autovacuum_enabled = false)`.execute(other.db);
      await sql`create table ours_only (id int primary key) with (autovacuum_enabled = false)`.execute(database.db);
      await sql`insert into theirs select g from generate_series(1, 3000) g`.execute(other.db);
      await sql`insert into ours_only select g from generate_series(1, 3000) g`.execute(database.db);
      // the tables it ran ANALYZE on, from its own debug lines (PostgreSQL only warns for another's)
      const ran: string[] = [];
      const log = { debug: (o: { table?: string }) => void (o.table && ran.push(o.table)), warn: () => undefined } as unknown as Logger;
      const stop = keepPostgresStatistics(other.db, log, { everyMs: 30, minRows: 500 });
      try {
        expect(await until(async () => (await count('theirs')) === '1')).toBe(true);
        await new Promise((r) => setTimeout(r, 500));
        expect(await count('ours_only')).toBe('0');
        expect([...new Set(ran)]).toEqual(['public.theirs']);
      } finally {
        await stop();
      }
    } finally {
      await other.close();
      await sql`drop table if exists theirs`.execute(database.db);
      await sql`drop owned by ${sql.id(role)}`.execute(database.db);
      await sql`drop role ${sql.id(role)}`.execute(database.db);
    }
  });
});
