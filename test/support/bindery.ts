// Starts Bindery as real processes for end-to-end tests:
//   embedded    — one `pnpm start` process (PGlite in a temp DATA_DIR, in-memory bus)
//   distributed — identity, catalog, reading, device-sync and gateway as separate processes on a fresh Postgres database and a private nats-server
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, resolveBackends, startNatsServer } from './backends';

export const ROOT = resolve(import.meta.dirname, '../..');
export type Mode = 'embedded' | 'distributed';

export interface Proc {
  /** what it runs: `main` (embedded) or the services it was started with */
  name: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait for exit */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Node's arguments for an entry: the compiled bundle when the run's global setup built it (what `pnpm start` runs), else the sources. */
export const entryArgs = (entry: 'main' | 'service'): string[] =>
  process.env.BINDERY_TEST_ENTRY === 'dist' ? [join(ROOT, 'embedded/dist', `${entry}.js`)] : ['--import', 'tsx', join(ROOT, 'embedded/src', `${entry}.ts`)];

export function spawnBindery(entry: 'main' | 'service', env: Record<string, string>, readyPattern: RegExp): Promise<{ proc: Proc; match: RegExpMatchArray }> {
  const args = entryArgs(entry);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // OPS_PORT 0: the ops listener is off unless a test asks for it (three processes share this host);
    // libraries in tests live under the OS temp dir, which is no default root; the tests register
    // accounts freely, so public registration is on unless a test says otherwise
    // the sources under tsx: the web package's pages are JSX for preact (its tsconfig says so; the root's names no files)
    env: {
      ...process.env,
      TSX_TSCONFIG_PATH: join(ROOT, 'web/tsconfig.json'),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
      OPS_PORT: '0',
      LIBRARY_ROOTS: process.env.LIBRARY_ROOTS ?? tmpdir(),
      PUBLIC_REGISTRATION: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: Proc = {
    name: env.BINDERY_SERVICES ?? entry,
    child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 20000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
  return new Promise((resolveP, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bindery ${entry} did not start in time:\n${out}`));
      // generous: the shared test machines start a process in 30 s or more under load
    }, 150_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(readyPattern);
      if (m) {
        clearTimeout(timer);
        resolveP({ proc, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`bindery ${entry} exited with ${code} before it was ready:\n${out}`));
    });
  });
}

export interface Bindery {
  mode: Mode;
  url: string;
  /** stop every process and remove what the run created */
  stop(): Promise<void>;
  /** stop and start the processes again on the same data */
  restart(): Promise<void>;
  /** environment the processes run with (DATABASE_URL, NATS_URL, JWT_SECRET, DATA_DIR …) */
  env: Record<string, string>;
  procs: Proc[];
}

const SECRET = 'test-secret-test-secret-test-secret-0123456789';
/**
 * The suites register and log in hundreds of accounts from 127.0.0.1, anonymously: a high limit and
 * public registration on (rate-limit.e2e starts its own low limit; registration-default.e2e the defaults).
 */
const TEST_LIMITS = { AUTH_RATE_LIMIT_MAX: '1000000', PUBLIC_REGISTRATION: 'true' };

/** The processes of a distributed Bindery, in the order `startBindery` starts them (OPS_PORT_BASE + this index). */
export const SERVICE_ORDER = ['identity', 'catalog', 'reading', 'device-sync', 'gateway'] as const;

/**
 * `extraEnv.OPS_PORT_BASE`: each process's ops listener on 127.0.0.1 at that port plus its place in
 * SERVICE_ORDER (embedded: the one process at that port); without it, ops listeners are off.
 */
export async function startBindery(mode: Mode, extraEnv: Record<string, string> = {}): Promise<Bindery> {
  const ops = (service: (typeof SERVICE_ORDER)[number]): Record<string, string> =>
    extraEnv.OPS_PORT_BASE ? { OPS_HOST: '127.0.0.1', OPS_PORT: String(Number(extraEnv.OPS_PORT_BASE) + SERVICE_ORDER.indexOf(service)) } : {};
  if (mode === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'bindery-e2e-'));
    // a copy of the run's empty data directory (global-setup.ts) saves PGlite's first start
    const template = process.env.BINDERY_TEST_EMBEDDED_TEMPLATE;
    if (template && existsSync(template) && !extraEnv.DATA_DIR) cpSync(template, dataDir, { recursive: true });
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...TEST_LIMITS, ...extraEnv, ...ops('identity') };
    const start = async () => {
      const { proc, match } = await spawnBindery('main', env, /Bindery is running at (http:\/\/\S+)/);
      return { proc, url: match[1]! };
    };
    let cur = await start();
    const b: Bindery = {
      mode,
      url: cur.url,
      env,
      procs: [cur.proc],
      async stop() {
        await cur.proc.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
      async restart() {
        await cur.proc.stop();
        cur = await start();
        b.url = cur.url;
        b.procs = [cur.proc];
      },
    };
    return b;
  }

  const backends = await resolveBackends();
  if (!backends.postgresUrl) throw new Error('distributed mode needs Postgres: none was found');
  const db = await createTestDatabase(backends.postgresUrl);
  const nats = await startNatsServer();
  const env = { DATABASE_URL: db.url, NATS_URL: nats.url, JWT_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1', ...TEST_LIMITS, ...extraEnv };
  const start = async () => {
    const started = await Promise.allSettled([
      spawnBindery('service', { ...env, BINDERY_SERVICES: 'identity', ...ops('identity') }, /bindery identity started/),
      spawnBindery('service', { ...env, BINDERY_SERVICES: 'catalog', ...ops('catalog') }, /bindery catalog started/),
      spawnBindery('service', { ...env, BINDERY_SERVICES: 'reading', ...ops('reading') }, /bindery reading started/),
      spawnBindery('service', { ...env, BINDERY_SERVICES: 'device-sync', ...ops('device-sync') }, /bindery device-sync started/),
    ]);
    const procs = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.proc] : []));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      const gateway = await spawnBindery('service', { ...env, BINDERY_SERVICES: 'gateway', ...ops('gateway') }, /bindery gateway started \(distributed\) at (http:\/\/\S+)/);
      return { procs: [...procs, gateway.proc], url: gateway.match[1]! };
    } catch (e) {
      await Promise.all(procs.map((p) => p.stop()));
      throw e;
    }
  };
  let cur: Awaited<ReturnType<typeof start>>;
  try {
    cur = await start();
  } catch (e) {
    await nats.stop();
    await db.drop();
    throw e;
  }
  const b: Bindery = {
    mode,
    url: cur.url,
    env,
    procs: cur.procs,
    async stop() {
      await Promise.all(cur.procs.map((p) => p.stop()));
      await nats.stop();
      await db.drop();
    },
    async restart() {
      await Promise.all(cur.procs.map((p) => p.stop()));
      cur = await start();
      b.url = cur.url;
      b.procs = cur.procs;
    },
  };
  return b;
}

/**
 * The modes this machine can run: distributed only when Postgres answers (nats-server is started
 * privately). Under vitest, a test file that cannot run its distributed suites shows a skipped one
 * that says why, instead of leaving them out silently.
 */
export async function availableModes(): Promise<Mode[]> {
  const b = await resolveBackends();
  if (b.postgresUrl) return ['embedded', 'distributed'];
  if (process.env.VITEST) {
    const { describe, it } = await import('vitest');
    describe.skip(`distributed mode (${b.describe})`, () => it('needs PostgreSQL', () => undefined));
  }
  return ['embedded'];
}
