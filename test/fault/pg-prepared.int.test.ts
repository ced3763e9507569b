// On PostgreSQL, frequent statements run prepared (decision 93): the same answers as unnamed ones,
// and a kept statement whose table changed under it (a migration of a rolling update) is prepared
// again rather than failing at every run.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStalePlan, openPostgres, type Database } from '@bindery/platform';
import { createTestDatabase, resolveBackends } from '../support/backends';

const backends = await resolveBackends();

describe.skipIf(!backends.postgresUrl)('statements kept prepared on PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let database: Database;
  beforeAll(async () => {
    db = await createTestDatabase(backends.postgresUrl!);
    // one connection: what this session keeps prepared is what pg_prepared_statements shows
    database = await openPostgres(db.url, { max: 1 });
    await sql`create table shelf (id int primary key, title text)`.execute(database.db);
    await sql`insert into shelf values (1, 'one'), (2, 'two')`.execute(database.db);
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const byId = (id: number, q: Pick<Database['db'], 'executeQuery'> = database.db) =>
    sql<Record<string, unknown>>`select * from shelf where id = ${id}`.execute(q as Database['db']);
  const kept = async () => (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(database.db)).rows.map((r) => r.statement);

  it('answers the same from the first run to the kept ones, and keeps only what ran four times', async () => {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push((await byId(1 + (i % 2))).rows);
    expect(answers).toEqual([1, 2, 1, 2, 1, 2].map((id) => [{ id, title: id === 1 ? 'one' : 'two' }]));
    const held = await kept();
    expect(held).toContain('select * from shelf where id = $1');
    // ran once: not kept
    await sql`select title from shelf where id = ${2}`.execute(database.db);
    expect(await kept()).not.toContain('select title from shelf where id = $1');
  });

  it('prepares a kept statement again when a column is added under it, outside a transaction and by retrying one', async () => {
    await sql`alter table shelf add column pages int not null default 7`.execute(database.db);
    // outside a transaction the wrapper runs it again at once under a new name
    expect((await byId(1)).rows).toEqual([{ id: 1, title: 'one', pages: 7 }]);
    for (let i = 0; i < 4; i++) await byId(2);
    await sql`alter table shelf add column year int`.execute(database.db);
    // inside one, the statement fails once (the transaction is aborted) and says why
    const failed = await database.db
      .transaction()
      .execute((trx) => byId(2, trx))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isStalePlan(failed)).toBe(true);
    // the command run again (what commandTransaction does) gets the new columns
    const again = await database.db.transaction().execute((trx) => byId(2, trx));
    expect(again.rows).toEqual([{ id: 2, title: 'two', pages: 7, year: null }]);
  });
});
