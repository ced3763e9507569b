// `pnpm backup <file>`: a consistent snapshot of every service's log and state, while Bindery runs.
//   distributed (DATABASE_URL set): pg_dump of every service's schema from one snapshot, with the
//     logs' positions and JetStream's streams (NATS_URL); no server needs to answer.
//   embedded: the running server makes it (its PGlite is the only one that may read the data
//     directory): GET /api/admin/backup at BINDERY_URL (default http://127.0.0.1:$PORT), signed in as
//     an admin with BINDERY_TOKEN or BINDERY_ADMIN_LOGIN and BINDERY_ADMIN_PASSWORD. `--offline`
//     backs up a stopped server's DATA_DIR directly.
import { createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openPGlite } from '@bindery/platform';
import { BackupError, binderyStreams, embeddedBackup, type Manifest, postgresBackup, verifyArchive } from '@bindery/platform/backup';

const env = process.env;

function natsAccess() {
  return {
    url: env.NATS_URL!,
    ...(env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' } : {}),
    ...(env.NATS_CREDS ? { credsFile: env.NATS_CREDS } : {}),
  };
}

const serverUrl = () => (env.BINDERY_URL ?? `http://127.0.0.1:${env.PORT ?? '8080'}`).replace(/\/+$/, '');

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

async function adminToken(url: string): Promise<string> {
  if (env.BINDERY_TOKEN) return env.BINDERY_TOKEN;
  if (!env.BINDERY_ADMIN_LOGIN || !env.BINDERY_ADMIN_PASSWORD) throw new BackupError('sign in as an admin: set BINDERY_TOKEN, or BINDERY_ADMIN_LOGIN and BINDERY_ADMIN_PASSWORD');
  const r = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: env.BINDERY_ADMIN_LOGIN, password: env.BINDERY_ADMIN_PASSWORD }),
  });
  const body = (await r.json().catch(() => ({}))) as { access_token?: string; error?: string };
  if (r.status !== 200 || !body.access_token) throw new BackupError(`the sign-in as ${env.BINDERY_ADMIN_LOGIN} was refused: ${body.error ?? r.status}`);
  return body.access_token;
}

/** Downloads the running server's backup into `file` (beside it first, checked whole, then renamed). */
async function fromServer(file: string): Promise<Manifest> {
  const url = serverUrl();
  if (!(await answers(url))) throw new BackupError(`no Bindery answers at ${url} (set BINDERY_URL, or PORT); a stopped embedded server is backed up with --offline (DATA_DIR)`);
  const token = await adminToken(url);
  const r = await fetch(`${url}/api/admin/backup`, { headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 200 || !r.body) {
    const body = (await r.json().catch(() => ({}))) as { error?: string };
    throw new BackupError(`the server refused the backup (${r.status}): ${body.error ?? r.statusText}`);
  }
  const tmp = join(dirname(file), `.${basename(file)}.download`);
  try {
    await pipeline(Readable.fromWeb(r.body as import('node:stream/web').ReadableStream), createWriteStream(tmp, { mode: 0o600 }));
    const manifest = await verifyArchive(tmp);
    await rename(tmp, file);
    return manifest;
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

async function offline(file: string): Promise<Manifest> {
  if (await answers(serverUrl())) throw new BackupError(`Bindery answers at ${serverUrl()}: a running server is backed up through it (leave out --offline)`);
  const dataDir = resolve(env.DATA_DIR ?? './data');
  if (!existsSync(join(dataDir, 'db'))) throw new BackupError(`no Bindery data directory at ${dataDir} (set DATA_DIR)`);
  const database = await openPGlite(join(dataDir, 'db'));
  try {
    return await embeddedBackup({ db: database.db, dumpDataDir: database.dumpDataDir!, dataDir, coverDir: resolve(env.COVERS_DIR ?? join(dataDir, 'covers')) }).write(file);
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const files = args.filter((a) => !a.startsWith('--'));
  if (files.length !== 1) throw new BackupError('usage: pnpm backup <file> [--offline]');
  const file = resolve(files[0]!);
  if (existsSync(file)) throw new BackupError(`${file} exists already: name a new file`);
  let manifest: Manifest;
  if (env.DATABASE_URL) manifest = await postgresBackup({ url: env.DATABASE_URL, ...(env.NATS_URL ? { streams: () => binderyStreams(natsAccess()) } : {}) }).write(file);
  else if (args.includes('--offline')) manifest = await offline(file);
  else manifest = await fromServer(file);
  const events = manifest.services.map((s) => `${s.service} ${s.events}`).join(', ');
  process.stdout.write(`backup written: ${file} (${manifest.mode}, format ${manifest.format_version}, ${manifest.entries.length} parts; events: ${events})\n`);
}

main().catch((e) => {
  process.stderr.write(`backup failed: ${e instanceof BackupError ? e.message : ((e as Error).stack ?? String(e))}\n`);
  process.exitCode = 1;
});
