// Schema migrations with Kysely's Migrator: per service schema, the event store's own tables first
// (their list, their record), then the service's list. Lists only grow, and a new migration's name
// sorts after every earlier one of its list: pending migrations run in name order.
import { type Kysely, Migrator, sql } from 'kysely';
import { asTables, assertIdent, type Db, type Migration, type NoTables, type Trx } from './db';
import { eventStoreMigrations } from './event-store';

/** Where the Migrator records a service's own migrations, and the event store's, in each schema. */
export const MIGRATION_TABLE = 'kysely_migration';
export const EVENT_STORE_MIGRATION_TABLE = 'kysely_migration_event_store';
const eventStoreNames = new Set(eventStoreMigrations.map((m) => m.name));

/**
 * Creates the service's schema, then applies the event store's pending migrations and the
 * service's, each list with Kysely's Migrator (one transaction per list, under its lock, so replicas
 * can start together). A list that repeats the event store's migrations (older callers spread them
 * in) is taken without them. A database migrated before the Migrator kept one list in
 * `<schema>.schema_migrations`: it is carried over once, so nothing runs twice.
 */
export async function migrate<DB>(db: Db<DB>, schema: string, migrations: readonly Migration[]): Promise<void> {
  assertIdent(schema);
  const raw = asTables<NoTables, DB>(db);
  await raw.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${'bindery.migrate.' + schema}))`.execute(trx);
    await sql.raw(`create schema if not exists ${schema}`).execute(trx);
    await adoptEarlierList(trx, schema);
  });
  await run(raw, schema, EVENT_STORE_MIGRATION_TABLE, eventStoreMigrations);
  await run(
    raw,
    schema,
    MIGRATION_TABLE,
    migrations.filter((m) => !eventStoreNames.has(m.name)),
  );
}

async function run(db: Kysely<NoTables>, schema: string, table: string, migrations: readonly Migration[]): Promise<void> {
  // Every start of every service comes here; almost always nothing is pending. The Migrator finds
  // that out by introspecting every table of the database, several times (~15 ms each in PGlite),
  // so the list it keeps is read first: the very same names, and there is nothing to do. Anything
  // else (pending, unknown to this version, no list yet) is the Migrator's to apply or refuse.
  if (await upToDate(db, schema, table, migrations)) return;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => Object.fromEntries(migrations.map((m) => [m.name, { up: (k: Kysely<unknown>) => m.up(k as unknown as Trx<NoTables>, schema) }])) },
    migrationTableSchema: schema,
    migrationTableName: table,
    migrationLockTableName: `${table}_lock`,
    // one list was applied out of name order before the Migrator (reading-kosync-001 before
    // reading-003-annotation-anchors); what is pending still runs in name order
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(none)'} of ${schema} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** True when the Migrator's list in `schema.table` holds exactly the names of `migrations`. */
async function upToDate(db: Kysely<NoTables>, schema: string, table: string, migrations: readonly Migration[]): Promise<boolean> {
  if (!(await tableExists(db, schema, table))) return false;
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(`${schema}.${table}`)}`.execute(db);
  const done = new Set(rows.map((r) => r.name));
  return done.size === migrations.length && migrations.every((m) => done.has(m.name));
}

async function tableExists(q: Kysely<NoTables>, schema: string, table: string): Promise<boolean> {
  return (await sql<{ t: string | null }>`select to_regclass(${`${schema}.${table}`})::text as t`.execute(q)).rows[0]?.t != null;
}

/** The list an earlier version kept (`schema_migrations`) as the Migrator's two tables, once. */
async function adoptEarlierList(trx: Trx<NoTables>, schema: string): Promise<void> {
  const has = (table: string) => tableExists(trx, schema, table);
  if (!(await has('schema_migrations')) || (await has(MIGRATION_TABLE))) return;
  const stamp = `to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  for (const [table, of] of [
    [EVENT_STORE_MIGRATION_TABLE, 'in'],
    [MIGRATION_TABLE, 'not in'],
  ] as const) {
    // the table as the Migrator makes it (name and timestamp, both varchar(255))
    await sql.raw(`create table if not exists ${schema}.${table} (name varchar(255) not null primary key, timestamp varchar(255) not null)`).execute(trx);
    await sql`insert into ${sql.table(`${schema}.${table}`)} (name, timestamp) select name, ${sql.raw(stamp)} from ${sql.table(`${schema}.schema_migrations`)} where name ${sql.raw(of)} (${sql.join([...eventStoreNames])})`.execute(
      trx,
    );
  }
}
