// Taking a backup while Bindery runs.
//   embedded:    the running process's PGlite writes its data directory as one tarball under its
//                own query lock (`dumpDataDir`): no statement runs while the files are read, so the
//                image is what a crash at that instant would leave, which Postgres recovers to every
//                transaction committed before it and none after. Beside it: the token secret and covers.
//   distributed: one REPEATABLE READ transaction exports its snapshot, and `pg_dump --snapshot` dumps
//                each service's schema from that same snapshot: per-service dumps, consistent with
//                each other, with each log's position and relay checkpoint read in the snapshot too.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { Db, NoTables } from '../db';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, BackupError, type Manifest, type Part, type ServiceState, writeArchive } from './archive';

/** every schema Bindery keeps, in start order; the gateway's holds read models and Kobo sync state */
export const SERVICE_SCHEMAS = [
  { service: 'identity', schema: 'identity' },
  { service: 'catalog', schema: 'catalog' },
  { service: 'reading', schema: 'reading' },
  { service: 'device-sync', schema: 'device_sync' },
  { service: 'gateway', schema: 'gateway' },
] as const;

export const binderyVersion = (): string => process.env.BINDERY_VERSION ?? 'dev';

/** What can take a backup of this deployment. */
export interface BackupSource {
  mode: 'embedded' | 'distributed';
  /** writes a whole archive to `file` (all or nothing) and answers its manifest */
  write(file: string): Promise<Manifest>;
}

type Query = (text: string) => Promise<Record<string, unknown>[]>;

async function serviceStates(query: Query): Promise<ServiceState[]> {
  const out: ServiceState[] = [];
  for (const { service, schema } of SERVICE_SCHEMAS) {
    const [has] = await query(`select to_regclass('${schema}.events') is not null as events, to_regclass('${schema}.relay_checkpoints') is not null as relay`);
    if (!has?.events) continue;
    const [row] = await query(`select count(*)::bigint as n, coalesce(max(global_position), 0)::bigint as last from ${schema}.events`);
    const relay = has.relay ? (await query(`select position from ${schema}.relay_checkpoints where name = 'jetstream'`))[0] : undefined;
    out.push({ service, schema, events: Number(row?.n ?? 0), last_position: Number(row?.last ?? 0), relay_position: relay ? Number(relay.position) : null });
  }
  return out;
}

async function filesUnder(dir: string, prefix: string): Promise<Part[]> {
  const out: Part[] = [];
  if (!existsSync(dir)) return out;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const full = join(e.parentPath, e.name);
    out.push({
      path: `${prefix}/${full
        .slice(dir.length + 1)
        .split(/[\\/]/)
        .join('/')}`,
      file: full,
    });
  }
  return out;
}

export interface EmbeddedBackupOptions {
  db: Db<NoTables>;
  /** the process's PGlite writing its data directory (`Database.dumpDataDir`) */
  dumpDataDir: () => Promise<Blob>;
  dataDir: string;
  coverDir?: string;
}

export function embeddedBackup(o: EmbeddedBackupOptions): BackupSource {
  return {
    mode: 'embedded',
    async write(file) {
      const query: Query = async (text) => (await sql.raw<Record<string, unknown>>(text).execute(o.db)).rows;
      // a checkpoint first: the image then carries little WAL to replay at restore
      await sql`checkpoint`.execute(o.db);
      const services = await serviceStates(query);
      const image = Buffer.from(await (await o.dumpDataDir()).arrayBuffer());
      const parts: Part[] = [{ path: 'database/pgdata.tar.gz', data: image }];
      const secret = join(o.dataDir, 'jwt-secret');
      if (existsSync(secret)) parts.push({ path: 'files/jwt-secret', file: secret });
      parts.push(...(await filesUnder(o.coverDir ?? join(o.dataDir, 'covers'), 'files/covers')));
      return writeArchive(
        file,
        {
          format: BACKUP_FORMAT,
          format_version: BACKUP_FORMAT_VERSION,
          bindery_version: binderyVersion(),
          mode: 'embedded',
          created_at: new Date().toISOString(),
          database: { kind: 'pglite-data-dir', path: 'database/pgdata.tar.gz' },
          services,
        },
        parts,
      );
    },
  };
}

/** Runs a client program (pg_dump, psql), feeding `input` when given; its standard output as bytes. */
export function runTool(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: Buffer): Promise<Buffer> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => {
      if (err.length < 8192) err += c.toString('utf8');
    });
    child.once('error', (e: NodeJS.ErrnoException) =>
      rej(new BackupError(e.code === 'ENOENT' ? `${cmd} is not installed here (PostgreSQL's client programs are needed for a distributed backup)` : `${cmd}: ${e.message}`)),
    );
    child.once('close', (code) => (code === 0 ? res(Buffer.concat(out)) : rej(new BackupError(`${cmd} failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' ')}`))));
    if (input) child.stdin!.end(input);
  });
}

export interface PostgresBackupOptions {
  /** a connection that can read every Bindery schema */
  url: string;
  /** JetStream's Bindery streams now, when the bus is at hand */
  streams?: () => Promise<Record<string, { messages: number; last_seq: number }>>;
}

export function postgresBackup(o: PostgresBackupOptions): BackupSource {
  return {
    mode: 'distributed',
    async write(file) {
      const client = new pg.Client({ connectionString: o.url, application_name: 'bindery-backup' });
      await client.connect();
      try {
        await client.query('begin isolation level repeatable read read only');
        const snap = (await client.query<{ id: string }>('select pg_export_snapshot() as id')).rows[0]!.id;
        const version = (await client.query<{ v: string }>('show server_version')).rows[0]!.v;
        const services = await serviceStates(async (text) => (await client.query(text)).rows);
        const present = (await client.query<{ s: string }>('select nspname as s from pg_namespace where nspname = any($1)', [SERVICE_SCHEMAS.map((s) => s.schema)])).rows.map(
          (r) => r.s,
        );
        if (!present.includes('identity')) throw new BackupError('this database holds no Bindery data (no identity schema): nothing to back up');
        const parts: Part[] = [];
        const paths: Record<string, string> = {};
        for (const { service, schema } of SERVICE_SCHEMAS) {
          if (!present.includes(schema)) continue;
          // each service's schema from the one snapshot held open above
          const dump = await runTool('pg_dump', ['--snapshot', snap, '--schema', schema, '--no-owner', '--no-privileges', '--format', 'plain', '--dbname', o.url], {});
          paths[service] = `database/${schema}.sql`;
          parts.push({ path: paths[service], data: dump });
        }
        const streams = o.streams ? await o.streams().catch(() => undefined) : undefined;
        const manifest = await writeArchive(
          file,
          {
            format: BACKUP_FORMAT,
            format_version: BACKUP_FORMAT_VERSION,
            bindery_version: binderyVersion(),
            mode: 'distributed',
            created_at: new Date().toISOString(),
            database: { kind: 'pg-dump', paths, server_version: version },
            services,
            ...(streams ? { streams } : {}),
          },
          parts,
        );
        await client.query('commit');
        return manifest;
      } finally {
        await client.end().catch(() => {});
      }
    },
  };
}
