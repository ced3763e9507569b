// The embedded database's driver (pglite-driver.ts) keeps statements prepared: what a statement
// answers must not depend on whether it was prepared before, kept, closed or prepared again after
// the schema changed under it.
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation, openPGlite, type Database } from '../src/index';

let database: Database;
let db: Kysely<Record<string, never>>;
beforeAll(async () => {
  database = await openPGlite('memory://');
  db = database.db;
  await sql`create table t (id uuid primary key, n int8 not null, data jsonb, at timestamptz, tags text[], ok boolean)`.execute(db);
});
afterAll(async () => {
  await database?.close();
});

const prepared = async () => Number((await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(db)).rows[0]!.n);
const ID = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const insert = (i: number, data: unknown, at: Date | null = new Date(Date.UTC(2026, 10, 28, 9, 0, i))) =>
  sql`insert into t (id, n, data, at, tags, ok) values (${ID(i)}, ${2 ** 40 + i}, ${JSON.stringify(data)}, ${at}, ${['a', `b${i}`]}, ${i % 2 === 0})`.execute(db);

describe('prepared statements on PGlite', () => {
  it('answers the same types on the first run and on every run after it (kept)', async () => {
    for (let i = 1; i <= 8; i++) await insert(i, { i, s: 'x\u00e9' }, i === 8 ? null : undefined);
    const select = (i: number) => sql<Record<string, unknown>>`select id, n, data, at, tags, ok from t where id = ${ID(i)}`.execute(db);
    const answers = [];
    for (let k = 0; k < 8; k++) answers.push((await select(3)).rows);
    for (const rows of answers) {
      expect(rows).toEqual([{ id: ID(3), n: 2 ** 40 + 3, data: { i: 3, s: 'x\u00e9' }, at: new Date(Date.UTC(2026, 10, 28, 9, 0, 3)), tags: ['a', 'b3'], ok: false }]);
    }
    expect((await select(8)).rows[0]).toMatchObject({ at: null, ok: true });
    expect((await select(99)).rows).toEqual([]);
    const names = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((r) => r.statement);
    expect(names.some((s) => s.includes('select id, n, data, at, tags, ok from t where id = $1'))).toBe(true);
  });

  it('counts the rows an update changed', async () => {
    const r = await sql`update t set n = n + 1 where ok = ${true}`.execute(db);
    expect(r.numAffectedRows).toBe(4n);
    const none = await sql`update t set n = n + 1 where id = ${ID(999)}`.execute(db);
    expect(none.numAffectedRows).toBeUndefined();
  });

  it('throws the database error with its code, and the next statement runs', async () => {
    const e = await insert(1, {}).then(
      () => null,
      (x: unknown) => x,
    );
    expect(isUniqueViolation(e, 't_pkey')).toBe(true);
    expect((e as { query?: string }).query).toContain('insert into t');
    const bad = await sql`select n from t where id = ${'not a uuid'}`.execute(db).then(
      () => null,
      (x: { message: string; code: string }) => [x.code, x.message],
    );
    expect(bad).toEqual(['22P02', 'invalid input syntax for type uuid: "not a uuid"']);
    expect((await sql<{ n: number }>`select count(*)::int as n from t`.execute(db)).rows).toEqual([{ n: 8 }]);
  });

  it('rolls a failed transaction back whole, and keeps what a committed one wrote', async () => {
    const failed = await db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into t (id, n) values (${ID(20)}, ${20})`.execute(trx);
        await sql`insert into t (id, n) values (${ID(1)}, ${1})`.execute(trx);
      })
      .then(
        () => 'committed',
        (x: { code: string }) => x.code,
      );
    expect(failed).toBe('23505');
    await db.transaction().execute(async (trx) => {
      await sql`insert into t (id, n) values (${ID(21)}, ${21})`.execute(trx);
    });
    const ids = (await sql<{ id: string }>`select id from t where n in (${20}, ${21}) order by n`.execute(db)).rows;
    expect(ids).toEqual([{ id: ID(21) }]);
  });

  it('answers the new columns after the schema changes under a kept statement', async () => {
    const star = () => sql<Record<string, unknown>>`select * from t where id = ${ID(2)}`.execute(db);
    for (let k = 0; k < 6; k++) expect(Object.keys((await star()).rows[0]!)).toEqual(['id', 'n', 'data', 'at', 'tags', 'ok']);
    await sql`alter table t add column extra text default 'new'`.execute(db);
    expect((await star()).rows[0]).toMatchObject({ id: ID(2), extra: 'new' });
    await sql`alter table t drop column extra`.execute(db);
    expect(Object.keys((await star()).rows[0]!)).toEqual(['id', 'n', 'data', 'at', 'tags', 'ok']);
  });

  it('keeps at most 256 statements, and each of 600 different ones answers right', async () => {
    for (let k = 0; k < 600; k++) {
      const r = await sql<{ k: number; n: number }>`select ${sql.lit(k)}::int as k, count(*)::int as n from t where n > ${0}`.execute(db);
      expect(r.rows).toEqual([{ k, n: 9 }]);
    }
    expect(await prepared()).toBeLessThanOrEqual(256);
    expect(await prepared()).toBeGreaterThan(200);
  });

  it('runs a statement with many parameters without keeping it', async () => {
    const rows = (from: number, n: number) => sql.join(Array.from({ length: n }, (_, i) => sql`(${ID(from + i)}, ${from + i})`));
    await sql`insert into t (id, n) values ${rows(100, 1)}`.execute(db);
    const r = await sql`insert into t (id, n) values ${rows(101, 40)}`.execute(db);
    expect(r.numAffectedRows).toBe(40n);
    const kept = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((x) => x.statement);
    expect(kept.filter((s) => s.startsWith('insert into t (id, n) values'))).toEqual(['insert into t (id, n) values ($1, $2)']);
    expect((await sql<{ n: number }>`select count(*)::int as n from t where n between ${100} and ${1000}`.execute(db)).rows).toEqual([{ n: 41 }]);
  });
});
