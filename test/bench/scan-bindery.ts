// Bindery under the scan benchmark: a fresh instance per corpus (test/support/bindery.ts), an admin
// account, and one measured scan at a time: server-side and wall time, CPU per process and per
// catalog thread, and the catalog's memory (VmHWM, and VmRSS sampled every 100 ms).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBindery, type Bindery, type Mode } from '../support/bindery';
import pg from 'pg';
import { client } from '../support/http';
import { BENCH, children, coresUsed, snapshot, startEnv, type Roles } from './lib';
import { CLK_TCK } from './scan-hash';

type Call = ReturnType<typeof client>;

export interface Instance {
  mode: Mode;
  b: Bindery;
  call: Call;
  token: string;
  catalogPid: number;
  roles: Roles;
  profileDir: string | null;
  stop(): Promise<void>;
}

const PROFILER = join(BENCH, 'cpu-profiler.mjs');

/**
 * Starts Bindery with no start-up scan, no watcher and no reconcile crawl, so the only scans are
 * the ones the bench asks for. With `profileDir` the V8 sampler is preloaded (cpu-profiler.mjs)
 * and every measured scan is profiled in the catalog, written to `<profileDir>/<label>.cpuprofile`.
 */
export async function startInstance(mode: Mode, profileDir: string | null = null, extraEnv: Record<string, string> = {}): Promise<Instance> {
  // embedded: startBindery makes (and removes) its own DATA_DIR; distributed: covers go here
  const dataDir = mode === 'distributed' ? mkdtempSync(join(tmpdir(), 'bindery-bench-data-')) : null;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  // MALLOC_ARENA_MAX and the heap cap as `pnpm start` and the image set them (docs/decisions.md, "Embedded mode: one PGlite, memory and start time")
  const env: Record<string, string> = {
    ...(mode === 'embedded' ? startEnv() : { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' }),
    SCAN_ON_STARTUP: 'false',
    SCAN_WATCH: 'off',
    SCAN_RECONCILE_SECONDS: '604800',
    LOG_LEVEL: 'warn',
  };
  if (dataDir) env.DATA_DIR = dataDir;
  Object.assign(env, extraEnv);
  if (profileDir)
    Object.assign(env, { NODE_OPTIONS: [env.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? '', `--import ${PROFILER}`].join(' ').trim(), BENCH_CPU_PROF_DIR: profileDir });
  const b = await startBindery(mode, env);
  b.procs.forEach((p) => children.add(p.child));
  const pids = new Map<number, string>();
  for (const p of b.procs) pids.set(p.child.pid!, mode === 'embedded' ? 'bindery' : serviceOf(p.child.pid!));
  const catalogPid = [...pids].find(([, role]) => role === 'catalog' || role === 'bindery')?.[0];
  if (!catalogPid) throw new Error(`no catalog process among ${[...pids.values()].join(', ')}`);
  const call = client(b.url);
  const reg = await call('POST', '/api/auth/register', { body: { email: `bench-${mode}@example.com`, username: `bench_${mode}`, password: 'passw0rd-123' } });
  if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${reg.text}`);
  const databases = b.env.DATABASE_URL ? [new URL(b.env.DATABASE_URL).pathname.slice(1)] : [];
  return {
    mode,
    b,
    call,
    token: reg.json.access_token as string,
    catalogPid,
    roles: { pids, databases },
    profileDir,
    async stop() {
      await b.stop();
      b.procs.forEach((p) => children.delete(p.child));
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Which service a distributed process runs, from its environment. */
function serviceOf(pid: number): string {
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return env.find((e) => e.startsWith('BINDERY_SERVICES='))?.slice('BINDERY_SERVICES='.length) ?? `pid ${pid}`;
}

// ---- /proc readings of the catalog process --------------------------------------------------

/** A field of /proc/<pid>/status in KiB (VmRSS, VmHWM …). */
export function statusKiB(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** CPU ticks per thread name (the main thread as "main"), plus the waited-for children (pdftoppm). */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const add = (k: string, v: number) => out.set(k, (out.get(k) ?? 0) + v);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      add(tid === String(pid) ? 'main' : comm, Number(f[11]) + Number(f[12]));
    } catch {
      /* the thread ended */
    }
  }
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  add('child processes', Number(f[13]) + Number(f[14]));
  return out;
}

/** CPU ticks of every thread by thread id, with its name. */
function perThread(pid: number): Map<string, { comm: string; ticks: number }> {
  const out = new Map<string, { comm: string; ticks: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** VmRSS every `everyMs`: the peak, and one point per second (seconds since start, MiB) for the record. */
function sampler(pid: number, everyMs: number) {
  let peak = 0;
  let n = 0;
  const t0 = performance.now();
  const series: [number, number][] = [];
  const tick = () => {
    try {
      const kib = statusKiB(pid, 'VmRSS');
      peak = Math.max(peak, kib);
      const t = (performance.now() - t0) / 1000;
      if (n++ % Math.max(1, Math.round(1000 / everyMs)) === 0) series.push([Math.round(t * 10) / 10, mib(kib)]);
    } catch {
      /* the process ended */
    }
  };
  tick();
  const t = setInterval(tick, everyMs);
  return { stop: () => (clearInterval(t), tick(), { peakKiB: peak, samples: n, series }) };
}

// ---- one scan -----------------------------------------------------------------------------

export interface ScanStatus {
  id: string;
  library_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  counts: Record<string, number>;
  error: string | null;
}

export interface ScanMeasure {
  /** finished_at − started_at, as the catalog recorded them */
  serverSeconds: number;
  /** from the HTTP request that queued the scan to the poll that saw it finished (100 ms polls) */
  wallSeconds: number;
  /** started_at − requested_at */
  queuedSeconds: number;
  status: string;
  error: string | null;
  counts: Record<string, number>;
  /** cores used over the wall time, per process role (catalog, gateway, identity, postgres, nats-server, orchestrator, other) */
  cores: Record<string, number>;
  /** CPU seconds of the catalog process by thread name, and of the processes it ran (pdftoppm) */
  catalogCpuSeconds: Record<string, number>;
  /** CPU seconds of each catalog thread that used at least 0.1 s (thread id, name) */
  threads: { tid: number; comm: string; seconds: number }[];
  /** over the scan and, when waited for, the work after it */
  rss: { hwmBeforeMiB: number; hwmAfterMiB: number; peakSampledMiB: number; samples: number; series: [number, number][] };
  /** every server process's peak resident memory since it started (VmHWM, MiB), by role: what resource requests are sized from */
  peakByRole: Record<string, number>;
  /** the catalog's work after the scan reported completion (covers rendered in the background), when waited for */
  after?: AfterScan;
  profile?: string;
}

export interface AfterScan {
  /** from the request that queued the scan until the background work was done */
  settledSeconds: number;
  /** how that was decided: no cover left to render (distributed: read from the database) or the catalog idle for 1 s (embedded) */
  by: 'covers-in-database' | 'catalog-idle';
  coversReady?: number;
  /** cores per role and catalog CPU seconds by thread between the scan's completion and settling */
  cores: Record<string, number>;
  catalogCpuSeconds: Record<string, number>;
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

/** Creates a library over `folder` (which queues its first scan) and measures that scan and the work after it. */
export function fullScan(inst: Instance, folder: string, name: string): Promise<ScanMeasure & { libraryId: string }> {
  let libraryId = '';
  // BENCH_SETTLE=0: do not wait for the covers (a quick look at the scan alone; rescans then overlap the covers)
  return measure(inst, name, process.env.BENCH_SETTLE !== '0', async () => {
    const r = await inst.call('POST', '/api/libraries', { token: inst.token, body: { name, folders: [folder], watch: false } });
    if (r.status !== 201) throw new Error(`library create failed: ${r.status} ${r.text}`);
    libraryId = r.json.id as string;
    return { libraryId };
  }).then((m) => ({ ...m, libraryId }));
}

/** Asks for a scan of an existing library and measures it. */
export function rescan(inst: Instance, libraryId: string, label: string): Promise<ScanMeasure> {
  return measure(inst, label, false, async () => {
    const r = await inst.call('POST', '/api/scanner/scan', { token: inst.token, body: { library_id: libraryId } });
    if (r.status !== 202) throw new Error(`scan request failed: ${r.status} ${r.text}`);
    return { libraryId, scanId: r.json.scans[0].id as string };
  });
}

const cpuDiff = (a: Map<string, number>, b: Map<string, number>) => {
  const out: Record<string, number> = {};
  for (const [k, v] of b) {
    const d = (v - (a.get(k) ?? 0)) / CLK_TCK;
    if (d > 0) out[k] = Math.round(d * 100) / 100;
  }
  return out;
};

async function measure(inst: Instance, label: string, settle: boolean, start: () => Promise<{ libraryId: string; scanId?: string }>): Promise<ScanMeasure> {
  const pid = inst.catalogPid;
  const hwmBefore = statusKiB(pid, 'VmHWM');
  const rss = sampler(pid, 100);
  const threadsA = threadTicks(pid);
  const tidsA = perThread(pid);
  const snapA = snapshot();
  if (inst.profileDir) process.kill(pid, 'SIGUSR2');
  const t0 = performance.now();
  const { libraryId, scanId } = await start();
  const scan = await finished(inst, libraryId, scanId);
  const wall = (performance.now() - t0) / 1000;
  const snapB = snapshot();
  const cores = coresUsed(snapA, snapB, wall, inst.roles);
  const threadsB = threadTicks(pid);
  const threads = [...perThread(pid)]
    .map(([tid, x]) => ({ tid: Number(tid), comm: x.comm, seconds: Math.round(((x.ticks - (tidsA.get(tid)?.ticks ?? 0)) / CLK_TCK) * 100) / 100 }))
    .filter((x) => x.seconds >= 0.1);
  let profile: string | undefined;
  if (inst.profileDir) profile = await collectProfile(inst.profileDir, pid, label);
  let after: AfterScan | undefined;
  if (settle) {
    const t1 = performance.now();
    const s = await settled(inst);
    after = {
      settledSeconds: Math.round((s.at - t0) / 10) / 100,
      by: s.by,
      ...(s.coversReady !== undefined ? { coversReady: s.coversReady } : {}),
      cores: coresUsed(snapB, snapshot(), (performance.now() - t1) / 1000, inst.roles),
      catalogCpuSeconds: cpuDiff(threadsB, threadTicks(pid)),
    };
  }
  const mem = rss.stop();
  const ms = (s: string | null) => (s ? Date.parse(s) : NaN);
  return {
    serverSeconds: (ms(scan.finished_at) - ms(scan.started_at)) / 1000,
    wallSeconds: Math.round(wall * 1000) / 1000,
    queuedSeconds: (ms(scan.started_at) - ms(scan.requested_at)) / 1000,
    status: scan.status,
    error: scan.error,
    counts: scan.counts,
    cores,
    catalogCpuSeconds: cpuDiff(threadsA, threadsB),
    threads,
    rss: { hwmBeforeMiB: mib(hwmBefore), hwmAfterMiB: mib(statusKiB(pid, 'VmHWM')), peakSampledMiB: mib(mem.peakKiB), samples: mem.samples, series: mem.series },
    peakByRole: Object.fromEntries([...inst.roles.pids].map(([p, role]) => [role, mib(statusKiB(p, 'VmHWM'))])),
    ...(after ? { after } : {}),
    ...(profile ? { profile } : {}),
  };
}

/**
 * Waits (at most 10 min) for the catalog's background work after a scan. Distributed: until no
 * active item has a cover still to render, read from the catalog's tables every 250 ms (falls back
 * to idleness when the table has no cover_ready column). Embedded: until the process uses less
 * than 0.05 cores over a whole second; `at` is the start of that second.
 */
async function settled(inst: Instance): Promise<{ at: number; by: AfterScan['by']; coversReady?: number }> {
  const until = Date.now() + 10 * 60_000;
  const url = inst.b.env.DATABASE_URL;
  if (url) {
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      for (;;) {
        const r = await db
          .query<{ pending: number; ready: number }>(
            `select count(*) filter (where cover_key is not null and not cover_ready and state = 'active')::int as pending,
                  count(*) filter (where cover_ready)::int as ready from catalog.media_items`,
          )
          .catch((e: Error) => (/cover_ready/.test(e.message) ? null : Promise.reject(e)));
        if (!r) break;
        if (r.rows[0]!.pending === 0) return { at: performance.now(), by: 'covers-in-database', coversReady: r.rows[0]!.ready };
        if (Date.now() > until) throw new Error(`covers still pending after 10 min: ${r.rows[0]!.pending}`);
        await new Promise((res) => setTimeout(res, 250));
      }
    } finally {
      await db.end();
    }
  }
  const total = () => [...threadTicks(inst.catalogPid).values()].reduce((a, b) => a + b, 0);
  for (;;) {
    const at = performance.now();
    const a = total();
    await new Promise((res) => setTimeout(res, 1000));
    if ((total() - a) / CLK_TCK < 0.05) return { at, by: 'catalog-idle' };
    if (Date.now() > until) throw new Error('the catalog did not go idle within 10 min');
  }
}

/** Polls the scanner status every 100 ms until the scan (or the library's latest scan) has finished; 20 min at most. */
async function finished(inst: Instance, libraryId: string, scanId?: string): Promise<ScanStatus> {
  const until = Date.now() + 20 * 60_000;
  for (;;) {
    const r = await inst.call('GET', '/api/scanner/status', { token: inst.token });
    if (r.status !== 200) throw new Error(`scanner status failed: ${r.status} ${r.text}`);
    const mine = (r.json.scans as ScanStatus[]).filter((s) => s.library_id === libraryId && (!scanId || s.id === scanId));
    const done = mine.find((s) => s.status === 'completed' || s.status === 'failed');
    if (done && !mine.some((s) => s.status === 'queued' || s.status === 'running')) return done;
    if (Date.now() > until) throw new Error(`scan of ${libraryId} did not finish within 20 min: ${JSON.stringify(mine.slice(0, 2))}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Stops the sampler in the catalog (second SIGUSR2), waits for its profile and names it after the scan. */
async function collectProfile(dir: string, pid: number, label: string): Promise<string> {
  process.kill(pid, 'SIGUSR2');
  const file = join(dir, `${pid}.cpuprofile`);
  for (let i = 0; i < 300; i++) {
    await new Promise((r) => setTimeout(r, 100));
    if (!existsSync(file)) continue;
    try {
      JSON.parse(readFileSync(file, 'utf8')); // written in one writeFileSync: complete once it parses
    } catch {
      continue;
    }
    const named = join(dir, `${label.replace(/[^\w.-]+/g, '-')}.cpuprofile`);
    renameSync(file, named);
    return named;
  }
  throw new Error(`no CPU profile from the catalog (pid ${pid}) within 30 s`);
}
