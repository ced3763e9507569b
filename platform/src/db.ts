// Database access: a pg pool in distributed mode, ONE PGlite per process in embedded mode.
import type { PoolClient, QueryConfig, QueryResult } from 'pg';
import { Kysely, PostgresDialect, type RawBuilder, sql, type Transaction } from 'kysely';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

/** A database handle typed by the tables of one service's schema (queries go through `withSchema`). */
export type Db<DB> = Kysely<DB>;
export type Trx<DB> = Transaction<DB>;
export type DbOrTrx<DB> = Db<DB> | Trx<DB>;

/** No tables: a handle used only for raw SQL (DDL, probes). */
export type NoTables = Record<never, never>;

/** Platform code sees a service's handle through its own tables only (the schema holds both). */
export const asTables = <T, DB>(q: Db<DB>): Db<T> => q as unknown as Db<T>;
export const asTablesTrx = <T, DB>(q: Trx<DB>): Trx<T> => q as unknown as Trx<T>;
export const asTablesQ = <T, DB>(q: DbOrTrx<DB>): DbOrTrx<T> => q as unknown as DbOrTrx<T>;

export interface Database {
  /** raw SQL only: each service sees it through its own tables (`asTables`) */
  db: Db<NoTables>;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
  /** PGlite: its data directory as one gzipped tarball, written under its query lock (a backup's image) */
  dumpDataDir?: () => Promise<Blob>;
}

/** a statement text runs this often before it is kept prepared */
const PREPARE_AFTER = 4;
/** at most this many texts kept prepared by one process (each connection may hold all of them) */
const MAX_PREPARED = 256;

/** Which statement texts a pool keeps prepared, under which name (decision 93). */
function keptStatements() {
  const seen = new Map<string, number>();
  const names = new Map<string, string>();
  let made = 0;
  return {
    /** the name to run `text` under, or undefined: not (yet) kept */
    nameFor(text: string, params: number): string | undefined {
      const name = names.get(text);
      if (name || made >= MAX_PREPARED || params === 0 || params > 64 || !/^\s*(select|insert|update|delete|with)\b/iu.test(text)) return name;
      const n = (seen.get(text) ?? 0) + 1;
      if (n < PREPARE_AFTER) {
        if (seen.size < 10_000) seen.set(text, n);
        return undefined;
      }
      seen.delete(text);
      names.set(text, `bindery_${made++}`);
      return names.get(text);
    },
    /** a text whose kept plan went stale gets a new name (its next run is parsed again), or none once all are spent */
    renew(text: string): string | undefined {
      if (made >= MAX_PREPARED) {
        names.delete(text);
        return undefined;
      }
      const name = `bindery_${made++}`;
      names.set(text, name);
      return name;
    },
  };
}

/**
 * PostgreSQL refuses a kept statement whose result columns changed since it was prepared (a
 * migration added a column to a table it reads with `*`, a rolling update's other replica ran it).
 */
export function isStalePlan(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  return err?.code === '0A000' && typeof err.message === 'string' && err.message.includes('cached plan must not change result type');
}

/**
 * Frequent statements run as named prepared statements (decision 93): PostgreSQL parses and plans
 * them once per connection, not at every run. A stale one is prepared again under a new name and
 * run again at once; inside a transaction that retry fails too (the transaction is aborted), and
 * the first error goes to the caller (`commandTransaction` runs the command again).
 */
function keepPrepared(client: PoolClient, kept: ReturnType<typeof keptStatements>): void {
  const plain = client.query.bind(client) as (...args: unknown[]) => unknown;
  const query = plain as (q: string | QueryConfig, v?: unknown) => Promise<QueryResult>;
  client.query = ((text: unknown, values?: unknown, ...rest: unknown[]) => {
    // what Kysely sends: a text and its parameters; anything else (a callback, a query object) as it came
    if (typeof text !== 'string' || !Array.isArray(values) || rest.length > 0) return plain(text, values, ...rest);
    const name = kept.nameFor(text, values.length);
    if (!name) return query(text, values);
    return query({ name, text, values }).catch((e: unknown) => {
      if (!isStalePlan(e)) throw e;
      const again = kept.renew(text);
      return (again ? query({ name: again, text, values }) : query(text, values)).catch(() => {
        throw e;
      });
    });
  }) as PoolClient['query'];
}

export async function openPostgres(url: string, opts: { max?: number; application?: string } = {}): Promise<Database> {
  // loaded here, not at the top: embedded mode never needs it (start time)
  const { default: pg } = await import('pg');
  // int8 comes back from pg as a string and from PGlite as a number: make both numbers.
  pg.types.setTypeParser(20, (v) => Number(v));
  // numeric likewise; timestamps stay Date objects (PGlite does the same).
  pg.types.setTypeParser(1700, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, application_name: opts.application ?? 'bindery' });
  pool.on('error', () => {
    /* an idle client lost its connection; the pool replaces it on next use */
  });
  // A client checked out (a transaction between two statements) has no pool listener: Postgres
  // ending its connection then (pg_terminate_backend, a restart) emitted an unheard 'error' that
  // killed the process. The statement that follows fails instead, and the pool drops the client.
  const kept = keptStatements();
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    keepPrepared(client, kept);
  });
  const db = new Kysely<NoTables>({ dialect: new PostgresDialect({ pool }) });
  await sql`select 1`.execute(db);
  return { db, kind: 'postgres', close: () => db.destroy() };
}

export interface PGliteTuning {
  /** Postgres `shared_buffers` inside the WASM heap, e.g. `32MB` */
  sharedBuffers?: string;
}

// PGlite's default shared_buffers (128MB) is allocated and touched in the WASM heap at start:
// ~140 MB of an idle embedded process's RSS. Reads past the buffers come from the OS page cache.
export const PGLITE_SHARED_BUFFERS = '32MB';

export async function openPGlite(dataDir: string, tuning: PGliteTuning = {}): Promise<Database> {
  const pglite = await import('@electric-sql/pglite');
  const { PGlite } = pglite;
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { PreparedPGliteDialect } = await import('./pglite-driver');
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${tuning.sharedBuffers ?? PGLITE_SHARED_BUFFERS}`];
  if (dataDir !== 'memory://') {
    mkdirSync(dataDir, { recursive: true });
    if (readdirSync(dataDir).length === 0) await initdbApart(dataDir, startParams);
  }
  const lite = await PGlite.create(dataDir, { extensions: { pg_trgm }, startParams });
  await lite.exec('create extension if not exists pg_trgm');
  if (process.env.BINDERY_SQL_PROFILE) profileStatements(lite, process.env.BINDERY_SQL_PROFILE);
  const db = new Kysely<NoTables>({ dialect: new PreparedPGliteDialect(lite, pglite) });
  return { db, kind: 'pglite', close: () => db.destroy(), dumpDataDir: () => lite.dumpDataDir('gzip') };
}

/**
 * A diagnostic for benchmarks (`BINDERY_SQL_PROFILE=<file>`, embedded mode): the time PGlite spends
 * on each statement text (parse, plan, execute, results), written to `file` every 2 s, slowest
 * first. It wraps PGlite's protocol entry point (`execProtocolStream`, not a public API): where that
 * is missing it says so and measures nothing. Never set in a deployment.
 */
function profileStatements(lite: object, file: string): void {
  const L = lite as { execProtocolStream?: (m: Uint8Array, o?: unknown) => Promise<unknown> };
  if (typeof L.execProtocolStream !== 'function') {
    console.error('BINDERY_SQL_PROFILE: this PGlite has no execProtocolStream; nothing is measured');
    return;
  }
  const run = L.execProtocolStream.bind(lite);
  const stats = new Map<string, { n: number; ms: number }>();
  const text = new TextDecoder();
  const cstring = (m: Uint8Array, at: number) => text.decode(m.subarray(at, m.indexOf(0, at)));
  /** the texts of the statements prepared under a name (pglite-driver.ts) */
  const named = new Map<string, string>();
  let current = '?';
  const count = (key: string) => {
    current = key.replace(/\s+/g, ' ').slice(0, 150);
    const st = stats.get(current) ?? { n: 0, ms: 0 };
    st.n++;
    stats.set(current, st);
  };
  L.execProtocolStream = async (m: Uint8Array, o?: unknown) => {
    // the first message that names a statement: Parse ('P': length, name, query), Bind ('B': length,
    // portal, statement) or a simple Query ('Q': length, query); Close messages may come before it
    let at = 0;
    while (at < m.length && m[at] === 0x43) at += 1 + new DataView(m.buffer, m.byteOffset + at + 1, 4).getInt32(0);
    if (m[at] === 0x50) {
      const name = cstring(m, at + 5);
      const query = cstring(m, at + 5 + Buffer.byteLength(name) + 1);
      if (name) named.set(name, query);
      count(query);
    } else if (m[at] === 0x42) {
      const portal = cstring(m, at + 5);
      const name = cstring(m, at + 5 + Buffer.byteLength(portal) + 1);
      if (name) count(named.get(name) ?? `statement ${name}`);
    } else if (m[at] === 0x51) count(`Q: ${cstring(m, at + 5)}`);
    const key = current;
    const t = performance.now();
    try {
      return await run(m, o);
    } finally {
      const st = stats.get(key) ?? { n: 0, ms: 0 };
      st.ms += performance.now() - t;
      stats.set(key, st);
    }
  };
  setInterval(() => {
    const rows = [...stats].sort((x, y) => y[1].ms - x[1].ms).slice(0, 50);
    writeFileSync(file, rows.map(([k, v]) => `${v.ms.toFixed(0).padStart(7)} ms ${String(v.n).padStart(6)} × ${k}`).join('\n'));
  }, 2000).unref();
}

// What a child process runs to create a new data directory (initdb and pg_trgm), then exits. With a
// template (a data directory made the same way when the bundle was built, embedded/build.mjs) it
// unpacks that instead of running initdb: a first start then takes ~0.7 s here, not ~3 s. A
// template that cannot be loaded is left for initdb.
const INITDB = `
import { readFileSync, rmSync, mkdirSync } from 'node:fs';
const [pglite, trgm, dir, params, template] = process.argv.slice(1);
const { PGlite } = await import(pglite);
const { pg_trgm } = await import(trgm);
const opts = { extensions: { pg_trgm }, startParams: JSON.parse(params) };
let db = null;
if (template) {
  try {
    db = await PGlite.create(dir, { ...opts, loadDataDir: new Blob([readFileSync(template)]) });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  }
}
db ??= await PGlite.create(dir, opts);
await db.exec('create extension if not exists pg_trgm');
await db.close();
`;

/** the bundle's template data directory (embedded/build.mjs), beside the built code; none when run from sources */
const TEMPLATE = fileURLToPath(new URL('./pgdata.tar.gz', import.meta.url));

/**
 * A new PGlite data directory is made in a child process: initdb touches ~400 MB of WASM memory
 * that a process never gives back, so made here it would stay in the server's RSS for its whole
 * life (a first start then idles at ~700 MB, a restart at ~300). The child builds the directory
 * beside the empty one and it is renamed into place only when complete, so a start cut short
 * leaves the empty directory, never a half-made one.
 */
async function initdbApart(dataDir: string, startParams: string[]): Promise<void> {
  const tmp = `${dataDir.replace(/\/+$/, '')}.initdb-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    const args = [
      '--input-type=module',
      '-e',
      INITDB,
      import.meta.resolve('@electric-sql/pglite'),
      import.meta.resolve('@electric-sql/pglite/contrib/pg_trgm'),
      tmp,
      JSON.stringify(startParams),
      existsSync(TEMPLATE) ? TEMPLATE : '',
    ];
    await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20 });
    if (!existsSync(`${tmp}/PG_VERSION`)) throw new Error('initdb made no data directory');
    rmSync(dataDir, { recursive: true });
    renameSync(tmp, dataDir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;
export function assertIdent(name: string): string {
  if (!IDENT.test(name)) throw new Error(`not a safe SQL identifier: ${name}`);
  return name;
}

export interface Migration {
  name: string;
  /** DDL (and raw SQL) only: a migration runs before the tables it makes exist */
  up(trx: Trx<NoTables>, schema: string): Promise<void>;
}

const SQL_TYPE = /^[a-z][a-z0-9 ]{0,40}$/;

/**
 * Rows given to a statement as one array a column: `unnestRows('v', { k: 'int', id: 'uuid' }, rows)`
 * reads `unnest($1::int[], $2::uuid[]) as v (k, id)`. The statement's text is the same for one row
 * or five hundred (a VALUES list is a new text for every count), so the embedded database keeps it
 * prepared, and either database parses an array a column instead of a parameter a cell. A cell of
 * a jsonb column is its JSON text.
 */
export function unnestRows(alias: string, columns: Record<string, string>, rows: readonly (readonly unknown[])[]): RawBuilder<unknown> {
  const names = Object.keys(columns).map(assertIdent);
  const arrays = names.map((name, c) => {
    const type = columns[name]!;
    if (!SQL_TYPE.test(type)) throw new Error(`not a plain SQL type: ${type}`);
    return sql`${rows.map((r) => r[c] ?? null)}::${sql.raw(type)}[]`;
  });
  return sql`unnest(${sql.join(arrays)}) as ${sql.raw(assertIdent(alias))} (${sql.raw(names.join(', '))})`;
}

export const toIso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();

/** True when `e` is a Postgres unique violation, optionally on the named constraint. */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const x = e as { code?: string; constraint?: string; message?: string } | null;
  if (!x || x.code !== '23505') return false;
  if (!constraint) return true;
  return x.constraint === constraint || (x.message ?? '').includes(constraint);
}

/** Runs DDL statement by statement (PGlite refuses several commands in one prepared statement). */
export async function execScript<DB>(q: DbOrTrx<DB>, script: string): Promise<void> {
  for (const stmt of script.split(/;\s*(?:\n|$)/)) {
    if (stmt.trim() !== '') await sql.raw(stmt).execute(q);
  }
}
