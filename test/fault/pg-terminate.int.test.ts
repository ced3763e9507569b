// Postgres ends a connection (pg_terminate_backend, a restart, a failover) while a service holds it
// between two statements of a transaction: the transaction fails, the process lives on, and the pool
// answers the next query on a new connection. Found by the fault drill (`pnpm drill`, postgres row):
// such a client had no 'error' listener, and the event killed the process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { openPostgres, type Database } from '@bindery/platform';
import { createTestDatabase, resolveBackends } from '../support/backends';

const backends = await resolveBackends();

describe.skipIf(!backends.postgresUrl)('a terminated backend (distributed, real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let database: Database;
  let admin: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase(backends.postgresUrl!);
    database = await openPostgres(db.url, { max: 2 });
    admin = new pg.Client({ connectionString: backends.postgresUrl! });
    await admin.connect();
  });
  afterAll(async () => {
    await database?.close();
    await admin?.end();
    await db?.drop();
  });

  it('fails the transaction that held it and goes on with a new connection', async () => {
    const uncaught: unknown[] = [];
    const note = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', note);
    try {
      let victim = 0;
      const tx = database.db.transaction().execute(async (trx) => {
        victim = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
        // between two statements: the connection is checked out of the pool, no query running
        const ended = await admin.query('select pg_terminate_backend($1) as ok', [victim]);
        expect(ended.rows).toEqual([{ ok: true }]);
        await new Promise((r) => setTimeout(r, 500));
        await sql`select 1`.execute(trx);
      });
      await expect(tx).rejects.toThrow();
      const again = await sql<{ one: number; pid: number }>`select 1 as one, pg_backend_pid() as pid`.execute(database.db);
      expect(again.rows[0]!.one).toBe(1);
      expect(again.rows[0]!.pid).not.toBe(victim);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', note);
    }
  });
});
