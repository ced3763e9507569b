// Shared pieces of the benchmarks: child processes (reference server, load generator), CPU
// accounting from /proc, the per-mode setup, and small number helpers.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { ROOT, type Bindery, type Mode } from '../support/bindery';
import { client } from '../support/http';
import type { Job, Measured } from './load-worker';

export const BENCH = join(ROOT, 'test/bench');
export const PASSWORD = 'bench-passw0rd-long-enough';

// ---- child processes ----------------------------------------------------------------------

/** Every child this run started: SIGKILLed if the run exits without stopping them. */
export const children = new Set<ChildProcess>();
process.once('exit', () => children.forEach((c) => c.kill('SIGKILL')));

export interface Child {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** Spawns `node --import tsx <file>` and waits (at most 30 s) for a line matching `ready`. */
export function spawnTs(file: string, args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
    children.delete(child);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not start within 30 s:\n${out}`));
    }, 30_000);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] ?? '', stop });
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${file} exited before it was ready:\n${out}`));
    });
  });
}

export const startRef = () => spawnTs(join(BENCH, 'ref-server.ts'), [], /ref listening at (http:\/\/\S+)/);

export interface LoadGen<J extends Job = Job, M extends Measured = Measured> {
  pid: number;
  run(job: J): Promise<M>;
  stop(): Promise<void>;
}

/** autocannon in a forked process (`worker`), one job at a time over IPC; a job may take its duration + 30 s. */
export function startLoadGen<J extends Job = Job, M extends Measured = Measured>(worker = join(BENCH, 'load-worker.ts')): Promise<LoadGen<J, M>> {
  const child = fork(worker, [], { cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let next = 0;
  const pending = new Map<number, { resolve(m: M): void; reject(e: Error): void }>();
  child.on('message', (m: { id?: number; result?: M; error?: string }) => {
    if (m.id === undefined) return;
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(m.error));
    else p?.resolve(m.result!);
  });
  void exited.then(() => pending.forEach((p) => p.reject(new Error('load generator exited'))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('load generator did not start within 30 s'));
    }, 30_000);
    child.once('message', () => {
      clearTimeout(timer);
      resolve({
        pid: child.pid!,
        run: (job) =>
          new Promise<M>((res, rej) => {
            const id = next++;
            const t = setTimeout(
              () => {
                pending.delete(id);
                rej(new Error(`load job did not finish within ${job.duration + 30} s`));
              },
              (job.duration + 30) * 1000,
            );
            pending.set(id, { resolve: (m) => (clearTimeout(t), res(m)), reject: (e) => (clearTimeout(t), rej(e)) });
            child.send({ id, job });
          }),
        async stop() {
          if (child.connected) child.disconnect();
          const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(t);
          children.delete(child);
        },
      });
    });
  });
}

// ---- CPU accounting from /proc: who used the cores during a measurement -----------------------

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  comm: string;
  ppid: number;
  ticks: number;
  /** for postgres processes: the command line (a backend's names its database) */
  cmdline?: string;
}
export type Snapshot = Map<number, ProcStat>;

export function snapshot(): Snapshot {
  const out: Snapshot = new Map();
  if (!existsSync('/proc')) return out;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = s.lastIndexOf(')');
      const comm = s.slice(s.indexOf('(') + 1, close);
      const f = s.slice(close + 2).split(' '); // f[0] is field 3 (state); utime and stime are fields 14 and 15
      const st: ProcStat = { comm, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
      if (comm.startsWith('postgres')) st.cmdline = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.set(Number(d), st);
    } catch {
      /* the process ended meanwhile */
    }
  }
  return out;
}

export interface Roles {
  /** pid → role */
  pids: Map<number, string>;
  /** databases whose Postgres backends count as ours */
  databases: string[];
}

/** Whether `pid` is `ancestor` or descends from it within a few generations. */
function descends(snap: Snapshot, pid: number, ancestor: number): boolean {
  for (let i = 0, p: number | undefined = pid; i < 4 && p !== undefined && p > 1; i++, p = snap.get(p)?.ppid) if (p === ancestor) return true;
  return false;
}

function roleOf(pid: number, p: ProcStat, roles: Roles, snap: Snapshot): string {
  const r = roles.pids.get(pid) ?? roles.pids.get(p.ppid); // a helper child (esbuild) counts with its parent
  if (r) return r;
  if (pid === process.pid) return 'orchestrator';
  // our private nats-server (possibly under a small shell wrapper); the machine's own is not ours
  if (p.comm === 'nats-server') return descends(snap, p.ppid, process.pid) ? 'nats-server' : 'other';
  if (p.comm.startsWith('postgres')) {
    const cmd = p.cmdline ?? '';
    // "postgres: 15/main: root <db> 127.0.0.1(port) idle" is a backend; anything else is a shared
    // helper (checkpointer, wal writer …) and counts as ours
    const backend = /^postgres: (?:\S+: )?\S+ (\S+) (?:\[local\]|\S+\(\d+\))/.exec(cmd);
    if (!backend) return 'postgres';
    return roles.databases.includes(backend[1]!) ? 'postgres' : 'other';
  }
  return 'other';
}

/** Cores used per role between two snapshots (a process that ended in between is not counted). */
export function coresUsed(a: Snapshot, b: Snapshot, seconds: number, roles: Roles): Record<string, number> {
  const acc: Record<string, number> = {};
  for (const [pid, after] of b) {
    const before = a.get(pid);
    const ticks = after.ticks - (before && before.comm === after.comm ? before.ticks : 0);
    if (ticks <= 0) continue;
    const role = roleOf(pid, after, roles, b);
    acc[role] = (acc[role] ?? 0) + ticks / CLK_TCK / seconds;
  }
  for (const k of Object.keys(acc)) acc[k] = Math.round(acc[k]! * 100) / 100;
  return acc;
}

/**
 * Waits (at most `maxMs`) until processes outside this run use less than `limit` cores, sampled
 * over 1 s windows: other work on a shared 2-core machine would distort the figures. Returns the
 * last sample.
 */
export async function waitForQuiet(roles: Roles, maxMs: number, limit = 0.15): Promise<{ other: number; waitedMs: number }> {
  const t0 = Date.now();
  for (;;) {
    const a = snapshot();
    await new Promise((r) => setTimeout(r, 1000));
    const other = coresUsed(a, snapshot(), 1, roles).other ?? 0;
    const waitedMs = Date.now() - t0;
    if (other < limit || waitedMs >= maxMs) return { other, waitedMs };
  }
}

/**
 * Waits (at most `maxMs`) until the run's own processes — every role of `roles` and its PostgreSQL
 * backends and helpers (autovacuum included) — use less than `limit` cores together over a 1 s
 * window: the background work a large scan leaves behind (index passes, vacuum) would otherwise be
 * in every figure measured after it. Returns the last sample and how long it took.
 */
export async function waitForOwnIdle(roles: Roles, maxMs: number, limit = 0.15): Promise<{ busy: number; waitedMs: number; idle: boolean }> {
  const t0 = Date.now();
  for (;;) {
    const a = snapshot();
    await new Promise((r) => setTimeout(r, 1000));
    const used = coresUsed(a, snapshot(), 1, roles);
    const busy = Object.entries(used).reduce((n, [role, c]) => (role === 'other' || role === 'orchestrator' ? n : n + c), 0);
    const waitedMs = Date.now() - t0;
    if (busy < limit || waitedMs >= maxMs) return { busy: Math.round(busy * 100) / 100, waitedMs, idle: busy < limit };
  }
}

// ---- Bindery under test ---------------------------------------------------------------------

export interface Prepared {
  mode: Mode;
  url: string;
  token: string;
  loginBody: string;
  roles: Roles;
}

/** Registers a profile account and a fresh login account, and checks both routes answer 200 once. */
export async function prepare(b: Bindery): Promise<Prepared> {
  const http = client(b.url);
  const tag = `${b.mode}-${Date.now().toString(36)}`;
  const reg = await http('POST', '/api/auth/register', { body: { email: `profile-${tag}@example.com`, username: `profile_${b.mode}`, password: PASSWORD } });
  if (reg.status !== 201) throw new Error(`register failed in ${b.mode} mode: ${reg.status} ${reg.text}`);
  const token = reg.json.access_token as string;
  const p = await http('GET', '/api/auth/profile', { token });
  if (p.status !== 200) throw new Error(`profile failed in ${b.mode} mode: ${p.status} ${p.text}`);
  // Only the right password is ever sent, so the login lock never engages.
  const loginName = `login_${b.mode}`;
  const reg2 = await http('POST', '/api/auth/register', { body: { email: `login-${tag}@example.com`, username: loginName, password: PASSWORD } });
  if (reg2.status !== 201) throw new Error(`second register failed in ${b.mode} mode: ${reg2.status} ${reg2.text}`);
  const loginBody = JSON.stringify({ login: loginName, password: PASSWORD });
  const l = await http('POST', '/api/auth/login', { raw: loginBody });
  if (l.status !== 200) throw new Error(`login failed in ${b.mode} mode: ${l.status} ${l.text}`);
  const pids = new Map<number, string>();
  b.procs.forEach((proc, i) => pids.set(proc.child.pid!, b.mode === 'embedded' ? 'bindery' : i === 0 ? 'identity' : 'gateway'));
  const databases = b.env.DATABASE_URL ? [new URL(b.env.DATABASE_URL).pathname.slice(1)] : [];
  return { mode: b.mode, url: b.url, token, loginBody, roles: { pids, databases } };
}

// ---- numbers ------------------------------------------------------------------------------

/** A non-negative number from the environment, or the default. */
export function envNumber(name: string, dflt: number): number {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
}

export const fmt = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : '-');

export function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function machine() {
  let git = 'unknown';
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    git = head + (dirty ? '+dirty' : '');
  } catch {
    /* not a checkout */
  }
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    git,
  };
}

export function table(lines: string[][]): string {
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  return lines.map((l, i) => l.map((c, j) => (j === 0 || i === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  ')).join('\n');
}

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** A V8 CPU profile as `--cpu-prof` / cpu-profiler.mjs write it. */
export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Which package (or Bindery module) a profiled function belongs to. */
export function packageOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pnpm = /node_modules\/\.pnpm\/([^/]+)\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pnpm) return pnpm[2]!;
  const own = /\/(services\/[^/]+|platform|contracts|embedded)\/src\/(?:([^/]+)\/)?/.exec(url);
  if (own) return `bindery ${own[1]}${own[2] && own[1]!.startsWith('services/') ? `/${own[2]}` : ''}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  return url.replace(/^file:\/\//, '');
}

/** Runs a benchmark's main, giving up (and so SIGKILLing every child, see the exit hook) after `ms`. */
export async function runWithDeadline(name: string, ms: number, main: () => Promise<void>): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`${name}: gave up after ${Math.round(ms / 1000)} s`);
    process.exit(1);
  }, ms);
  try {
    await main();
    clearTimeout(deadline);
  } catch (e) {
    console.error(e);
    process.exit(1);
  }
}

// ---- the start script -----------------------------------------------------------------------

/** The environment the start script gives Bindery (`NAME=${NAME:-value}` before its command), building nothing. */
export function startEnv(): Record<string, string> {
  const { script, steps } = startSteps();
  return lastStep(script, steps).env;
}

export function startSteps(): { script: string; steps: string[] } {
  // BENCH_EMBEDDED_START (e.g. "node embedded/dist/main.js") measures another entry than the script's
  const script = process.env.BENCH_EMBEDDED_START ?? (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  return { script, steps: script.split('&&').map((x) => x.trim().replace(/^exec\s+/, '')) };
}

export function lastStep(script: string, steps: string[]): { args: string[]; script: string; env: Record<string, string> } {
  // `NAME=${NAME:-value} exec node …`: the assignments before the command, with their defaults
  const env: Record<string, string> = {};
  const assignment = /^(\w+)=(?:\$\{\1:-([^}]*)\}|(\S*))\s+(?:exec\s+)?/;
  let last = steps[steps.length - 1]!;
  for (let m = last.match(assignment); m; m = last.match(assignment)) {
    env[m[1]!] = process.env[m[1]!] ?? m[2] ?? m[3] ?? '';
    last = last.slice(m[0].length);
  }
  const words = last.split(/\s+/);
  if (words[0] === 'tsx' && words.length > 1) return { args: ['--import', 'tsx', ...words.slice(1)], script, env };
  if (words[0] === 'node' && words.length > 1) return { args: words.slice(1), script, env };
  throw new Error(`cannot run the start script without pnpm: ${script}`);
}

/** Self time per package and per function, idle excluded. */
export function analyse(file: string) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const pkg = new Map<string, number>();
  const fn = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    const cf = byId.get(p.samples[i]!)!;
    if (cf.functionName === '(idle)') continue;
    total += dt;
    const k = packageOf(cf.url, cf.functionName);
    pkg.set(k, (pkg.get(k) ?? 0) + dt);
    const f = `${cf.functionName || '(anonymous)'} ${cf.url ? cf.url.replace(/^.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '') + ':' + (cf.lineNumber + 1) : ''}`;
    fn.set(f, (fn.get(f) ?? 0) + dt);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => [k, `${fmt((v / total) * 100, 1)}%`, fmt(v / 1000, 0)]);
  return { busyMs: total / 1000, seconds: (p.endTime - p.startTime) / 1e6, samples: p.samples.length, packages: top(pkg, 14), functions: top(fn, 22) };
}
