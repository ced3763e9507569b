// Which real Postgres and NATS the integration tests use, plus private throwaway copies of them.
// Order (STACK.md): explicit env URLs → local servers → testcontainers (if a Docker engine answers) → embedded only.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface Backends {
  /** a server URL (any database on it) to create test databases from; null when none answers */
  postgresUrl: string | null;
  /** a NATS server with JetStream; null when none answers */
  natsUrl: string | null;
  describe: string;
}

const LOCAL_PG = 'postgres://root@127.0.0.1:5432/postgres';
const LOCAL_NATS = 'nats://127.0.0.1:4222';
const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const PROBE_MS = 2_000;
const ADMIN_CONNECT_MS = 60_000;

let memo: Promise<Backends> | undefined;

export function resolveBackends(): Promise<Backends> {
  memo ??= resolve().then((b) => {
    console.log(`[test backends] ${b.describe}`);
    return b;
  });
  return memo;
}

async function resolve(): Promise<Backends> {
  const notes: string[] = [];
  const pick = async (what: string, env: string | undefined, local: string, probe: (url: string) => Promise<void>) => {
    if (env) {
      // An explicit URL that does not answer is a broken setup, not a reason to test less.
      await probe(env).catch((e) => {
        throw new Error(`${what} from the environment (${redact(env)}) does not answer: ${(e as Error).message}`);
      });
      notes.push(`${what}: env ${redact(env)}`);
      return env;
    }
    try {
      await probe(local);
      notes.push(`${what}: local ${redact(local)}`);
      return local;
    } catch (e) {
      notes.push(`${what}: no local server (${(e as Error).message})`);
      return null;
    }
  };
  const postgresUrl = await pick('postgres', process.env.TEST_DATABASE_URL, LOCAL_PG, probePostgres);
  const natsUrl = await pick('nats', process.env.TEST_NATS_URL, LOCAL_NATS, probeNats);
  if (!postgresUrl || !natsUrl) {
    notes.push(
      existsSync('/var/run/docker.sock') || process.env.DOCKER_HOST
        ? 'a Docker socket exists but the testcontainers tier is not wired in: skipped'
        : 'no Docker engine (/var/run/docker.sock absent): testcontainers tier skipped',
    );
    notes.push('embedded only for what is missing: tests that need Postgres or NATS are skipped');
  }
  return { postgresUrl, natsUrl, describe: notes.join('; ') };
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

async function probePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_MS });
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A real NATS handshake over TCP: INFO (with JetStream on), CONNECT, PING → PONG. */
export function probeNats(url: string): Promise<void> {
  const u = new URL(url.includes('://') ? url : `nats://${url}`);
  return new Promise((resolve, reject) => {
    const sock = tcpConnect({ host: u.hostname, port: Number(u.port || 4222) });
    let buf = '';
    const finish = (e?: Error) => {
      clearTimeout(timer);
      sock.destroy();
      if (e) reject(e);
      else resolve();
    };
    const timer = setTimeout(() => finish(new Error('no NATS handshake within 2 s')), PROBE_MS);
    sock.on('error', (e) => finish(e));
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      if (buf.startsWith('INFO ') && buf.includes('\r\n') && !buf.includes('PONG')) {
        const info = JSON.parse(buf.slice(5, buf.indexOf('\r\n'))) as { jetstream?: boolean };
        if (!info.jetstream) return finish(new Error('NATS answers but JetStream is off'));
        buf = '';
        sock.write('CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nPING\r\n');
      } else if (buf.includes('PONG')) finish();
      else if (buf.includes('-ERR')) finish(new Error(buf.trim()));
    });
  });
}

/** A fresh, uniquely named database on the server at `baseUrl`; drop() removes it even with connections open. */
export async function createTestDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bindery_t_${randomBytes(6).toString('hex')}`;
  // The probe's 2 s says whether a server is there; a database made for a test waits longer, since a
  // whole run's workers start their instances at once on two cores (CI once saw a 2 s connect expire).
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: ADMIN_CONNECT_MS });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

const children = new Set<ChildProcess>();
process.once('exit', () => children.forEach((c) => c.stdin?.destroy()));

/** A private nats-server with JetStream on a random port and its own store dir. */
export async function startNatsServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'bindery-nats-'));
  // A shell keeps the server on a leash: when our end of its stdin closes (stop(), or this process
  // dying without running exit handlers, as a killed test worker does) it stops the server.
  const leash = '"$0" "$@" & pid=$!; read -r _; kill $pid 2>/dev/null; wait $pid; rm -rf "$NATS_DIR"';
  const args = ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', dir, '--ports_file_dir', dir];
  const child = spawn('/bin/sh', ['-c', leash, NATS_SERVER, ...args], { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, NATS_DIR: dir } });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4_000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin!.end();
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    }
    children.delete(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nats-server exited (${child.exitCode}): ${stderr}`);
      const ports = (await readdir(dir)).find((f) => f.endsWith('.ports'));
      if (ports) {
        // the file may still be half written: read it again on the next round
        const url = await readFile(join(dir, ports), 'utf8')
          .then((t) => (JSON.parse(t) as { nats?: string[] }).nats?.[0])
          .catch(() => undefined);
        if (
          url &&
          (await probeNats(url).then(
            () => true,
            () => false,
          ))
        )
          return { url, stop };
      }
      if (Date.now() > deadline) throw new Error(`nats-server did not start within 10 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (e) {
    await stop();
    throw e;
  }
}
