// Embedded Bindery under the read benchmark, started as `pnpm start` starts it and restarted by
// hand on a fixed port and DATA_DIR, so the bench can time a start from the spawn to the first
// answer and read the one process's memory when it is idle. Shaped as scan-bindery's Instance, so
// its scan helpers apply.
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type Bindery, type Proc } from '../support/bindery';
import { client } from '../support/http';
import { children, lastStep, startSteps } from './lib';
import { freePort } from './read-calibre';
import { statusKiB, type Instance } from './scan-bindery';
import { CLK_TCK } from './scan-hash';

export interface StartTiming {
  /** spawn → the first 200 from GET /readyz */
  readySeconds: number;
  /** spawn → the first 200 from GET /api/media-items?limit=50 with the admin's token (when there is one) */
  listSeconds: number | null;
  /** CPU seconds (user + system, all threads) the process had used when /readyz first answered: less sensitive to other load than the wall time */
  readyCpuSeconds: number;
}

export interface Idle {
  /** VmRSS once the process used < 0.05 cores over a whole second (or when the wait ran out) */
  rssMiB: number;
  hwmMiB: number;
  /** seconds waited for that */
  waitedSeconds: number;
  idle: boolean;
}

export interface EmbeddedBench {
  inst: Instance;
  start(): Promise<StartTiming>;
  restart(): Promise<StartTiming>;
  /** waits (at most `maxSeconds`) for the process to go idle, then reads its memory */
  idle(maxSeconds: number): Promise<Idle>;
  destroy(): Promise<void>;
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

function cpuTicks(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/**
 * The command `pnpm start` runs, without pnpm in between (so the pid is Bindery's own): `tsx X`
 * becomes `node --import tsx X`, `node …` stays as it is. The bench so follows the start script
 * when embedded mode moves from the TypeScript loader to compiled JavaScript.
 */
export function startCommand(): { args: string[]; script: string; env: Record<string, string> } {
  const { script, steps } = startSteps();
  // `node build.mjs --if-stale && exec node dist/main.js`: build now, run what the last step runs
  if (steps.length > 1) execSync(steps.slice(0, -1).join(' && '), { cwd: ROOT, stdio: 'inherit' });
  return lastStep(script, steps);
}

/** Spawns embedded Bindery as `pnpm start` would and resolves when it prints its URL. */
function spawnEmbedded(env: Record<string, string>): Promise<Proc> {
  const cmd = startCommand();
  const child = spawn(process.execPath, cmd.args, { cwd: ROOT, env: { ...process.env, ...cmd.env, NODE_ENV: 'test', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const proc: Proc = {
    name: 'main',
    child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`embedded Bindery did not start within 300 s:\n${out}`));
    }, 300_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Bindery is running at http:\/\/\S+/.test(out)) {
        clearTimeout(timer);
        resolve(proc);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`embedded Bindery exited with ${code} before it was ready:\n${out}`));
    });
  });
}

export async function embeddedBench(): Promise<EmbeddedBench> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bindery-bench-read-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    SCAN_ON_STARTUP: 'false',
    SCAN_WATCH: 'off',
    SCAN_RECONCILE_SECONDS: '604800',
    LOG_LEVEL: 'warn',
    // the reads register one reader per connection after the admin (off by default once an admin exists)
    PUBLIC_REGISTRATION: 'true',
  };
  let proc: Proc | null = null;
  const b: Bindery = {
    mode: 'embedded',
    url,
    env,
    procs: [],
    async stop() {
      if (proc) await proc.stop();
      proc = null;
    },
    async restart() {
      await b.stop();
      await launch();
    },
  };
  const inst: Instance = {
    mode: 'embedded',
    b,
    call: client(url),
    token: '',
    catalogPid: 0,
    roles: { pids: new Map(), databases: [] },
    profileDir: null,
    stop: () => b.stop(),
  };

  /** Polls every 20 ms from the spawn: when does it answer? */
  async function poll(t0: number, path: string, token: string | null, until: Promise<unknown>): Promise<number> {
    let failed: unknown = null;
    void until.catch((e: unknown) => (failed = e ?? new Error('embedded Bindery did not start')));
    for (;;) {
      if (failed) throw failed; // the spawn's error carries the process's output
      if (performance.now() - t0 > 300_000) throw new Error(`no 200 from ${path} within 300 s of the start`);
      try {
        const r = await fetch(url + path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        await r.arrayBuffer();
        if (r.status === 200) return (performance.now() - t0) / 1000;
      } catch {
        /* not listening yet */
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function launch(): Promise<StartTiming> {
    const t0 = performance.now();
    const spawned = spawnEmbedded(env);
    const readySeconds = await poll(t0, '/readyz', null, spawned);
    const readyCpuSeconds = cpuTicks((await spawned).child.pid!) / CLK_TCK;
    const listSeconds = inst.token ? await poll(t0, '/api/media-items?limit=50', inst.token, spawned) : null;
    proc = await spawned;
    children.add(proc.child);
    b.procs = [proc];
    inst.catalogPid = proc.child.pid!;
    inst.roles = { pids: new Map([[proc.child.pid!, 'bindery']]), databases: [] };
    return { readySeconds: round(readySeconds), listSeconds: listSeconds === null ? null : round(listSeconds), readyCpuSeconds: round(readyCpuSeconds) };
  }

  return {
    inst,
    async start() {
      const t = await launch();
      const reg = await inst.call('POST', '/api/auth/register', { body: { email: 'bench-read@example.com', username: 'bench_read', password: 'passw0rd-123' } });
      if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${reg.text}`);
      inst.token = reg.json.access_token as string;
      return t;
    },
    restart: () => b.stop().then(launch),
    async idle(maxSeconds) {
      const pid = inst.catalogPid;
      const t0 = performance.now();
      let idle = false;
      while ((performance.now() - t0) / 1000 < maxSeconds) {
        const a = cpuTicks(pid);
        await new Promise((r) => setTimeout(r, 1000));
        if ((cpuTicks(pid) - a) / CLK_TCK < 0.05) {
          idle = true;
          break;
        }
      }
      return { rssMiB: mib(statusKiB(pid, 'VmRSS')), hwmMiB: mib(statusKiB(pid, 'VmHWM')), waitedSeconds: round((performance.now() - t0) / 1000), idle };
    },
    async destroy() {
      await b.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
