// Restoring a backup archive into an empty data directory (embedded) or an empty database
// (distributed). The archive is checked whole first; then everything is written aside and put in
// place in one step (a rename; one transaction), so a failure leaves the target as it was. Every
// read model of the gateway is marked for a rebuild: the next start folds them again from the logs.
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import pg from 'pg';
import { BackupError, type Manifest, openArchive } from './archive';
import { runTool, SERVICE_SCHEMAS } from './snapshot';

async function bytesOf(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Restores an embedded backup into `dataDir`, which must be missing or empty. */
export async function restoreEmbedded(file: string, dataDir: string): Promise<Manifest> {
  const target = resolve(dataDir);
  if (existsSync(target) && (await readdir(target)).length > 0)
    throw new BackupError(`the data directory ${target} is not empty: a restore writes only into an empty or new data directory (move the old one aside first)`);
  const archive = await openArchive(file);
  const m = archive.manifest;
  try {
    if (m.mode !== 'embedded' || m.database.kind !== 'pglite-data-dir') throw new BackupError(messageFor(m));
    await mkdir(dirname(target), { recursive: true });
    const aside = join(dirname(target), `.${target.split(/[\\/]/).pop()}.restoring-${randomBytes(6).toString('hex')}`);
    await mkdir(aside, { mode: 0o700 });
    try {
      for (const e of m.entries) {
        if (!e.path.startsWith('files/')) continue;
        const to = join(aside, ...e.path.slice('files/'.length).split('/'));
        await mkdir(dirname(to), { recursive: true, mode: 0o700 });
        await pipeline(await archive.read(e.path), createWriteStream(to, { mode: 0o600 }));
      }
      const image = await bytesOf(await archive.read(m.database.path));
      await loadPGlite(join(aside, 'db'), image);
      if (existsSync(target)) await rmdir(target);
      await rename(aside, target);
    } catch (e) {
      await rm(aside, { recursive: true, force: true });
      throw e;
    }
    return m;
  } finally {
    archive.close();
  }
}

function messageFor(m: Manifest): string {
  return m.mode === 'embedded'
    ? 'this backup was made by embedded Bindery (PGlite): restore it into a data directory (DATA_DIR), without DATABASE_URL'
    : 'this backup was made by distributed Bindery (PostgreSQL): restore it into a database (DATABASE_URL)';
}

/** Opens the image with PGlite (Postgres recovers it as after a crash), marks the read models for a rebuild, closes it. */
async function loadPGlite(dir: string, image: Buffer): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let lite: InstanceType<typeof PGlite>;
  try {
    lite = await PGlite.create(dir, { extensions: { pg_trgm }, loadDataDir: new Blob([image], { type: 'application/x-gzip' }) });
  } catch (e) {
    throw new BackupError(`the database image in the backup does not open: ${(e as Error).message}`);
  }
  try {
    await lite.exec(rebuildSql(await presentSchemas((q) => lite.query<{ s: string }>(q).then((r) => r.rows))));
  } finally {
    await lite.close();
  }
}

async function presentSchemas(q: (text: string) => Promise<{ s: string }[]>): Promise<string[]> {
  return (await q(`select nspname as s from pg_namespace where nspname in (${SERVICE_SCHEMAS.map((s) => `'${s.schema}'`).join(', ')})`)).map((r) => r.s);
}

/**
 * After a restore: the gateway's read models are rebuilt from the logs at the next start (no
 * projection_state: each is dropped, made again and folded from position 0), and in distributed mode
 * every outbox relay publishes its log again from the start into the (fresh) JetStream streams,
 * where each consumer passes what its own checkpoint already holds.
 */
function rebuildSql(schemas: string[], relays = false): string {
  const out: string[] = [];
  if (schemas.includes('gateway')) out.push(`do $$ begin if to_regclass('gateway.projection_state') is not null then delete from gateway.projection_state; end if; end $$;`);
  if (relays) for (const s of schemas) out.push(`do $$ begin if to_regclass('${s}.relay_checkpoints') is not null then delete from ${s}.relay_checkpoints; end if; end $$;`);
  return out.join('\n');
}

export interface PostgresRestoreOptions {
  url: string;
  /** JetStream's Bindery streams as they are now: a restore needs them empty */
  streams?: () => Promise<Record<string, { messages: number; last_seq: number }>>;
}

/** Restores a distributed backup into the database at `url`, which must hold no Bindery schema with tables. */
export async function restorePostgres(file: string, o: PostgresRestoreOptions): Promise<Manifest> {
  const client = new pg.Client({ connectionString: o.url, application_name: 'bindery-restore' });
  await client.connect();
  try {
    const held = (
      await client.query<{ s: string }>('select distinct table_schema as s from information_schema.tables where table_schema = any($1) order by 1', [
        SERVICE_SCHEMAS.map((s) => s.schema),
      ])
    ).rows.map((r) => r.s);
    if (held.length > 0)
      throw new BackupError(
        `the database already holds Bindery data (schemas ${held.join(', ')}): a restore writes only into an empty database (create a new one, or drop those schemas first)`,
      );
    if (o.streams) {
      const busy = Object.entries(await o.streams()).filter(([, s]) => s.messages > 0);
      if (busy.length > 0)
        throw new BackupError(
          `NATS still holds Bindery's streams (${busy.map(([n, s]) => `${n}: ${s.messages} messages`).join(', ')}): a restore needs them empty (remove them with \`nats stream rm\`, or use a fresh NATS server)`,
        );
    }
    const archive = await openArchive(file);
    try {
      const m = archive.manifest;
      if (m.mode !== 'distributed' || m.database.kind !== 'pg-dump') throw new BackupError(messageFor(m));
      const paths = m.database.paths;
      const schemas = SERVICE_SCHEMAS.filter((s) => paths[s.service]).map((s) => s.schema);
      const script: Buffer[] = [Buffer.from('create extension if not exists pg_trgm;\n')];
      for (const { service } of SERVICE_SCHEMAS) if (paths[service]) script.push(await bytesOf(await archive.read(paths[service]!)), Buffer.from('\n'));
      script.push(Buffer.from(`set search_path = public;\n${rebuildSql(schemas, true)}\n`));
      // one transaction: a failure anywhere leaves the database as it was
      await runTool('psql', ['--no-psqlrc', '--quiet', '--single-transaction', '--set', 'ON_ERROR_STOP=1', '--dbname', o.url, '--file', '-'], {}, Buffer.concat(script));
      return m;
    } finally {
      archive.close();
    }
  } finally {
    await client.end().catch(() => {});
  }
}
