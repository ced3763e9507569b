// Where the time of GET /api/auth/profile goes. Not part of `pnpm bench` (it would blow the time
// budget); run `pnpm exec tsx test/bench/diag.ts [jwt] [nats] [cpu] [cpu-embedded]` (all but
// cpu-embedded when no argument is given; about 1.5 min).
//   jwt           token verification cost in-process: jose as Bindery calls it (a Uint8Array key)
//                 against jose with a key imported once, a KeyObject, and a bare node:crypto HMAC
//   nats          request/reply alone on a private nats-server, no handler work and no database:
//                 Bindery's NatsBus both ends, a plain queue subscription, and a requester with
//                 noAsyncTraces; responder and requester in their own processes
//   cpu           a distributed Bindery under profile load (50 connections, 10 s), profiled with the
//                 V8 sampler over the load window only (cpu-profiler.mjs, preloaded): self time per
//                 package and the top functions of gateway and identity; then identity's query
//                 alone against Postgres (kysely + pg)
//   cpu-embedded  the same for the single embedded process
//   sync          KOReader pulls and progress writes (DIAG_CONNECTIONS readers, 16, one per connection,
//                 DIAG_DURATION s each, 10) in each mode (DIAG_MODES=embedded,distributed), every process
//                 profiled over each load window (DIAG_PROFILE=0: not), and each step's count and mean
//                 from the processes' histograms (ops ports from DIAG_OPS_PORT_BASE, 9480): where a sync
//                 request's time goes
//   lag           distributed: a scan of DIAG_SYNC_ITEMS generated books (10,000), then how long until
//                 the gateway's read model lists every item (the covers not waited for), and until
//                 every process is idle, with what Postgres was doing meanwhile (DIAG_SETTLE_MAX s);
//                 DIAG_LAG_DIR: a folder of books to scan instead
//   peak          embedded: the process's peak resident memory over a scan of DIAG_SYNC_ITEMS generated
//                 books (10,000) or of the folder DIAG_PEAK_DIR, and the work after it (DIAG_PEAK_SETTLE
//                 seconds at most, 600), with V8's heap and external memory sampled from the ops port
//                 (DIAG_DEADLINE_MINUTES: 5 unless set)
//   ratio         the profile against the bare fastify route in each mode (bare, profile, bare; 16
//                 connections, 6 s each; DIAG_MODES=distributed,embedded), a quick check of the
//                 ratio `pnpm bench:read` reports on an empty library
import { spawn } from 'node:child_process';
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify, SignJWT } from 'jose';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { IDENTITY_SCHEMA, type IdentityDb } from '@bindery/identity';
import { startNatsServer } from '../support/backends';
import { ROOT, SERVICE_ORDER, startBindery, type Mode } from '../support/bindery';
import { ensureGenerated } from './gen-library';
import { pullRequests, registerReaders, writeRequests } from './read-load';
import type { ReadJob, ReadMeasured } from './read-load-worker';
import { fullScan, startInstance, statusKiB } from './scan-bindery';
import { analyse, BENCH, children, coresUsed, fmt, PASSWORD, prepare, snapshot, spawnTs, startLoadGen, startRef, table, waitForOwnIdle } from './lib';

const DEADLINE_MS = Number(process.env.DIAG_DEADLINE_MINUTES ?? 5) * 60_000;

// ---- jwt ------------------------------------------------------------------------------------

async function rate(label: string, seconds: number, concurrency: number, op: () => Promise<unknown>): Promise<string[]> {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await op();
        n++;
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  return [label, fmt(n / s, 0), fmt((s * 1e6) / n, 1)];
}

async function jwt(): Promise<void> {
  const secret = 'test-secret-test-secret-test-secret-0123456789';
  const raw = new TextEncoder().encode(secret);
  const token = await new SignJWT({ jti: 'a', user_id: 'b', user_role: 'user', user_email: 'e', user_username: 'u' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(raw);
  const imported = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const keyObject = createSecretKey(raw);
  const opts = { algorithms: ['HS256'] };
  const [h, p, sig] = token.split('.') as [string, string, string];
  const expected = Buffer.from(sig, 'base64url');
  const hmac = async () => {
    const mac = createHmac('sha256', raw).update(`${h}.${p}`).digest();
    if (!timingSafeEqual(mac, expected)) throw new Error('bad');
    return JSON.parse(Buffer.from(p, 'base64url').toString());
  };
  const rows = [['verification (50 concurrent loops, 1.5 s each)', 'verifies/s', 'µs each']];
  rows.push(await rate('jose jwtVerify, Uint8Array key (as Bindery does)', 1.5, 50, () => jwtVerify(token, raw, opts)));
  rows.push(await rate('jose jwtVerify, CryptoKey imported once', 1.5, 50, () => jwtVerify(token, imported, opts)));
  rows.push(await rate('jose jwtVerify, KeyObject (createSecretKey)', 1.5, 50, () => jwtVerify(token, keyObject, opts)));
  rows.push(await rate('node:crypto createHmac + JSON.parse', 1.5, 50, hmac));
  console.log('\n' + table(rows));
}

// ---- nats -----------------------------------------------------------------------------------

async function nats(): Promise<void> {
  const rows = [['NATS request/reply, 50 concurrent loops, 5 s', 'req/s', 'p50 ms', 'p99 ms', 'cores: requester / responder / nats-server', 'requester µs/req']];
  const variants = [
    { serve: 'bus', load: 'bus', label: "NatsBus.request → NatsBus.serve (Bindery's path)" },
    { serve: 'plain', load: 'bus', label: 'NatsBus.request → plain queue subscription' },
    { serve: 'bus', load: 'notraces', label: 'nc.request with noAsyncTraces → NatsBus.serve' },
  ] as const;
  for (const v of variants) {
    const server = await startNatsServer();
    const echo = await spawnTs(join(BENCH, 'nats-echo.ts'), ['serve', server.url, v.serve], /echo serving()/);
    try {
      const load = spawn(process.execPath, ['--import', 'tsx', join(BENCH, 'nats-echo.ts'), 'load', server.url, '50', '5', v.load], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.add(load);
      const exited = new Promise<void>((r) => load.once('exit', () => r()));
      let out = '';
      load.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((r) => setTimeout(r, 1500)); // its start-up (tsx, connect) stays out of the window
      const a = snapshot();
      const t0 = performance.now();
      const kill = setTimeout(() => load.kill('SIGKILL'), 40_000);
      await exited;
      clearTimeout(kill);
      const j = JSON.parse(/^\{.*\}$/m.exec(out)?.[0] ?? '{}') as { rps?: number; p50?: number; p99?: number; cores?: number };
      const cores = coresUsed(a, snapshot(), (performance.now() - t0) / 1000, { pids: new Map([[echo.child.pid!, 'responder']]), databases: [] });
      cores.requester = Math.round((j.cores ?? NaN) * 100) / 100;
      rows.push([
        v.label,
        fmt(j.rps ?? NaN, 0),
        fmt(j.p50 ?? NaN, 2),
        fmt(j.p99 ?? NaN, 2),
        `${cores.requester ?? 0} / ${cores.responder ?? 0} / ${cores['nats-server'] ?? 0}`,
        fmt(((j.cores ?? NaN) / (j.rps ?? NaN)) * 1e6, 0),
      ]);
    } finally {
      await echo.stop();
      await server.stop();
    }
  }
  console.log('(requester cores: its own cpuUsage over the loop; responder and nats-server: /proc over about the same 5 s, other processes on the machine excluded)');
  console.log('\n' + table(rows));
}

// ---- cpu ------------------------------------------------------------------------------------

async function cpu(mode: Mode): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-cpuprof-'));
  // --cpu-prof is refused in NODE_OPTIONS: a preloaded module profiles between two SIGUSR2s instead
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', `--import ${join(BENCH, 'cpu-profiler.mjs')}`].join(' ').trim();
  try {
    await profiled(mode, dir, nodeOptions);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function profiled(mode: Mode, dir: string, nodeOptions: string): Promise<void> {
  const b = await startBindery(mode, { LOG_LEVEL: 'warn', NODE_OPTIONS: nodeOptions, BENCH_CPU_PROF_DIR: dir });
  b.procs.forEach((p) => children.add(p.child));
  const gen = await startLoadGen();
  const signal = () => b.procs.forEach((p) => p.child.kill('SIGUSR2'));
  const names = new Map<number, string>();
  try {
    const p = await prepare(b);
    p.roles.pids.forEach((role, pid) => names.set(pid, role));
    const job = { url: `${p.url}/api/auth/profile`, method: 'GET' as const, headers: { authorization: `Bearer ${p.token}` }, connections: 50, duration: 10 };
    await gen.run({ ...job, duration: 2 });
    signal(); // start profiling
    const a = snapshot();
    const t0 = performance.now();
    const m = await gen.run(job);
    signal(); // stop and write
    await waitFor(() => readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).length >= b.procs.length, 15_000);
    const cores = coresUsed(a, snapshot(), (performance.now() - t0) / 1000, { pids: new Map([...p.roles.pids, [gen.pid, 'loadgen']]), databases: p.roles.databases });
    console.log(`\nprofile load (${mode}, profiler on): ${fmt(m.rps, 0)} req/s, p99 ${fmt(m.p99, 1)} ms; cores ${JSON.stringify(cores)}`);
    if (mode === 'distributed') await dbAlone(b.env.DATABASE_URL!, JSON.parse(Buffer.from(p.token.split('.')[1]!, 'base64url').toString()).user_id as string);
  } finally {
    await gen.stop();
    await b.stop();
  }
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const pid = Number(f.split('.')[0]);
    const role = names.get(pid) ?? `pid ${pid}`;
    const r = analyse(join(dir, f));
    console.log(`\n== ${role}: ${fmt(r.busyMs / 1000 / r.seconds, 2)} cores of main-thread time over the ${fmt(r.seconds, 1)} s profile (${r.samples} samples)`);
    console.log(table([['self time by package', 'share', 'ms'], ...r.packages]));
    console.log(table([['self time by function', 'share', 'ms'], ...r.functions]));
  }
}

/** The identity query of profile-get alone: kysely + pg pool (10 connections), 50 concurrent loops, 5 s. */
async function dbAlone(url: string, userId: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const db = new Kysely<IdentityDb>({ dialect: new PostgresDialect({ pool }) });
  try {
    const a = snapshot();
    const t0 = performance.now();
    const row = await rate('identity.users by id (kysely + pg, pool 10)', 5, 50, () =>
      db.withSchema(IDENTITY_SCHEMA).selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst(),
    );
    const cores = coresUsed(a, snapshot(), (performance.now() - t0) / 1000, { pids: new Map([[process.pid, 'client']]), databases: [new URL(url).pathname.slice(1)] });
    console.log('\n' + table([['query alone, 50 concurrent, 5 s', 'queries/s', 'µs each (wall / n)'], row]));
    console.log(`cores: client ${cores.client ?? cores.orchestrator ?? 0}, postgres ${cores.postgres ?? 0}`);
  } finally {
    await db.destroy();
  }
}

async function waitFor(ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
}

// ---- sync ---------------------------------------------------------------------------------

/** the ops ports of the sync instance's processes: this plus each one's place in SERVICE_ORDER */
const OPS_BASE = Number(process.env.DIAG_OPS_PORT_BASE ?? 9480);
/** the histograms of a write's steps, from each process's /metrics (platform/src/metrics.ts) */
const STEP_METRICS =
  /^bindery_((http_request_duration_seconds|rpc_duration_seconds|read_your_writes_wait_seconds|outbox_relay_pass_(seconds|events)|consumer_delivery_seconds|group_commit_batch_(seconds|jobs))_(sum|count)|read_model_offered_events_total)$/;

/** Every step histogram's sum and count, by process and series. */
async function stepSamples(mode: Mode): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const procs: [string, number][] = mode === 'embedded' ? [['bindery', 0]] : SERVICE_ORDER.map((s, i) => [s, i]);
  for (const [role, i] of procs) {
    const r = await fetch(`http://127.0.0.1:${OPS_BASE + i}/metrics`).catch(() => null);
    if (!r?.ok) continue;
    for (const line of (await r.text()).split('\n')) {
      const m = /^(\w+)(\{.*\})? (\S+)$/.exec(line);
      if (m && STEP_METRICS.test(m[1]!)) out.set(`${role} ${m[1]}${m[2] ?? ''}`, Number(m[3]));
    }
  }
  return out;
}

/** What each step did between two samples: how many times, and its mean (ms, or events and jobs a time). */
function stepTable(a: Map<string, number>, b: Map<string, number>, seconds: number): string {
  const rows: string[][] = [['process and series (between the two samples)', 'per second', 'mean']];
  for (const [key, count] of b) {
    // counters: their rate only (the events a write's answer carried, folded or left to the bus)
    if (/_total(\{|$)/.test(key)) {
      const n = count - (a.get(key) ?? 0);
      if (n >= seconds * 5) rows.push([key, fmt(n / seconds, 0), '–']);
      continue;
    }
    if (!/_count(\{|$)/.test(key)) continue;
    const n = count - (a.get(key) ?? 0);
    // the steps that ran often enough to be part of the load, not the set-up
    if (n < seconds * 5) continue;
    const sumKey = key.replace(/_count(\{|$)/, '_sum$1');
    const mean = ((b.get(sumKey) ?? 0) - (a.get(sumKey) ?? 0)) / n;
    const isTime = key.includes('_seconds');
    rows.push([key.replace(/_count(\{|$)/, '$1'), fmt(n / seconds, 0), isTime ? `${fmt(mean * 1000, 2)} ms` : fmt(mean, 1)]);
  }
  return table(rows);
}

/** DIAG_SYNC_ITEMS generated books (gen-library.ts, seed 7), made once under test/.tmp and kept. */
function generatedBooks(dflt: number): { items: number; books: string } {
  const items = Number(process.env.DIAG_SYNC_ITEMS ?? dflt);
  const books = join(ROOT, 'test/.tmp/diag-sync', String(items));
  ensureGenerated(books, 7, 0, items);
  return { items, books };
}

async function sync(mode: Mode): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-cpuprof-'));
  const { items, books } = generatedBooks(50);
  try {
    const inst = await startInstance(mode, dir, { OPS_PORT_BASE: String(OPS_BASE) });
    const gen = await startLoadGen<ReadJob, ReadMeasured>(join(BENCH, 'read-load-worker.ts'));
    try {
      const scanned = await fullScan(inst, books, 'sync');
      // the scan's work after its end (covers, locator indexes) would share the load's cores
      const settled = await waitForOwnIdle(inst.roles, 300_000);
      console.log(
        `${mode}: ${items} generated books scanned in ${fmt(scanned.wallSeconds, 1)} s; ${settled.idle ? 'idle' : `still busy (${settled.busy} cores)`} ${fmt(settled.waitedMs / 1000, 1)} s later`,
      );
      const list = await inst.call('GET', '/api/media-items?limit=50', { token: inst.token });
      const picked = (list.json.data as { id: string; formats: { partial_md5?: string }[] }[]).filter((i) => i.formats[0]?.partial_md5);
      if (picked.length === 0) throw new Error(`no scanned book has a KOReader document hash: ${list.status} ${list.text.slice(0, 200)}`);
      const readers = await registerReaders(inst.b.url, PASSWORD, picked, Number(process.env.DIAG_CONNECTIONS ?? 16));
      const base = {
        url: inst.b.url,
        method: 'GET' as const,
        connections: Number(process.env.DIAG_CONNECTIONS ?? 16),
        duration: Number(process.env.DIAG_DURATION ?? 10),
        perConnection: process.env.DIAG_SHARED !== '1',
      };
      const jobs: [string, ReadJob][] = [
        ['kosync pull', { ...base, requests: pullRequests(readers) }],
        ['progress write', { ...base, method: 'PUT', requests: writeRequests(readers) }],
      ];
      // DIAG_SYNC_ROWS: some of them ("kosync pull", "progress write")
      const rows = process.env.DIAG_SYNC_ROWS?.split(',');
      for (const [label, job] of jobs.filter(([l]) => !rows || rows.includes(l))) {
        await gen.run({ ...job, duration: 2 });
        for (const f of readdirSync(dir)) rmSync(join(dir, f));
        // DIAG_PROFILE=0: no profiles (the sampler costs each process some CPU: the figures as bench:read sees them)
        const profiling = process.env.DIAG_PROFILE !== '0';
        const signal = () => profiling && inst.b.procs.forEach((p) => p.child.kill('SIGUSR2'));
        signal();
        const stepsBefore = await stepSamples(mode);
        const a = snapshot();
        const t0 = performance.now();
        const m = await gen.run(job);
        signal();
        const stepsAfter = await stepSamples(mode);
        if (profiling) await waitFor(() => readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).length >= inst.b.procs.length, 15_000);
        const cores = coresUsed(a, snapshot(), (performance.now() - t0) / 1000, { pids: new Map([...inst.roles.pids, [gen.pid, 'loadgen']]), databases: inst.roles.databases });
        console.log(`\n######## ${mode}: ${label}: ${fmt(m.rps, 0)} req/s, p99 ${fmt(m.p99, 1)} ms, non-2xx ${m.non2xx ?? 0}; cores ${JSON.stringify(cores)}`);
        // where a request's time went, step by step, from the processes' own histograms
        console.log(stepTable(stepsBefore, stepsAfter, job.duration));
        for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
          const role = inst.roles.pids.get(Number(f.split('.')[0])) ?? f;
          const r = analyse(join(dir, f));
          // DIAG_KEEP=<folder>: the profiles stay there, for a closer look (chrome://inspect, speedscope)
          if (process.env.DIAG_KEEP) cpSync(join(dir, f), join(process.env.DIAG_KEEP, `${mode}-${label.replace(/\W+/g, '-')}-${role}.cpuprofile`));
          rmSync(join(dir, f));
          if (r.busyMs / 1000 / r.seconds < 0.05) continue;
          console.log(`\n== ${role}: ${fmt(r.busyMs / 1000 / r.seconds, 2)} cores of main-thread time over the ${fmt(r.seconds, 1)} s profile`);
          console.log(table([['self time by package', 'share', 'ms'], ...r.packages]));
          console.log(table([['self time by function', 'share', 'ms'], ...r.functions]));
        }
      }
    } finally {
      await gen.stop();
      await inst.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- lag ------------------------------------------------------------------------------------

async function lag(): Promise<void> {
  const folder = process.env.DIAG_LAG_DIR;
  const { items, books } = folder ? { items: Number.NaN, books: folder } : generatedBooks(10_000);
  process.env.BENCH_SETTLE = '0';
  const inst = await startInstance('distributed');
  try {
    const total = async () => Number((await inst.call('GET', '/api/media-items/search?limit=1', { token: inst.token })).json.total ?? 0);
    const scan = await fullScan(inst, books, 'lag');
    const t0 = performance.now();
    let n = await total();
    while (n < (scan.counts.added ?? 0)) {
      await new Promise((r) => setTimeout(r, 250));
      n = await total();
    }
    console.log(
      `distributed: ${scan.counts.added ?? items} books scanned in ${fmt(scan.wallSeconds, 1)} s (server ${fmt(scan.serverSeconds, 1)} s); the read model listed all ${n} ${fmt((performance.now() - t0) / 1000, 1)} s after the scan ended`,
    );
    await afterScan(inst, t0);
  } finally {
    await inst.stop();
  }
}

/**
 * After the scan, until every process of the instance is idle (DIAG_SETTLE_MAX seconds at most,
 * 300): the cores each role used, and what Postgres' backends of the instance's database were doing
 * (pg_stat_activity sampled every 100 ms: application and the statement's first words).
 */
async function afterScan(inst: Awaited<ReturnType<typeof startInstance>>, t0: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: inst.b.env.DATABASE_URL, max: 1 });
  const seen = new Map<string, number>();
  let samples = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await pool.query<{ app: string; q: string }>(
        `select application_name as app, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as q from pg_stat_activity
          where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
      );
      samples++;
      for (const r of rows) seen.set(`${r.app}: ${r.q}`, (seen.get(`${r.app}: ${r.q}`) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const a = snapshot();
  const ta = performance.now();
  const settled = await waitForOwnIdle(inst.roles, Number(process.env.DIAG_SETTLE_MAX ?? 300) * 1000);
  const used = coresUsed(a, snapshot(), (performance.now() - ta) / 1000, inst.roles);
  sampling = false;
  await sampler;
  await pool.end();
  console.log(
    `  ${settled.idle ? 'idle' : 'still busy'} ${fmt((performance.now() - t0) / 1000, 1)} s after the scan ended; cores used meanwhile: ${Object.entries(used)
      .map(([r, c]) => `${r} ${c}`)
      .join(', ')}`,
  );
  console.log(`  Postgres, ${samples} samples of its active backends (count: application: statement):`);
  for (const [k, v] of [...seen].sort((x, y) => y[1] - x[1]).slice(0, 12)) console.log(`    ${v}: ${k}`);
}

// ---- peak -----------------------------------------------------------------------------------

/**
 * Embedded: the process's peak resident memory over a scan of DIAG_SYNC_ITEMS generated books
 * (10,000), or of the folder DIAG_PEAK_DIR, and the work after it; with the ops port on, V8's heap
 * and the external memory (PGlite's WebAssembly memory among it) sampled every 100 ms beside RSS,
 * each at the moment RSS was highest.
 */
async function peak(): Promise<void> {
  const folder = process.env.DIAG_PEAK_DIR;
  const { items, books } = folder ? { items: Number.NaN, books: folder } : generatedBooks(10_000);
  const inst = await startInstance('embedded', null, { OPS_PORT: '9469' });
  const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  let top = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0 };
  let maxHeapTotal = 0;
  let maxExternal = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        const m = await (await fetch('http://127.0.0.1:9469/metrics')).text();
        const rss = statusKiB(inst.catalogPid, 'VmRSS') / 1024;
        const now = {
          rss,
          heapUsed: gauge(m, 'nodejs_heap_size_used_bytes'),
          heapTotal: gauge(m, 'nodejs_heap_size_total_bytes'),
          external: gauge(m, 'nodejs_external_memory_bytes'),
        };
        if (now.rss > top.rss) top = now;
        maxHeapTotal = Math.max(maxHeapTotal, now.heapTotal);
        maxExternal = Math.max(maxExternal, now.external);
      } catch {
        /* the ops port is not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    const scan = await fullScan(inst, books, 'peak');
    const settled = await waitForOwnIdle(inst.roles, Number(process.env.DIAG_PEAK_SETTLE ?? 600) * 1000);
    sampling = false;
    await sampler;
    console.log(
      `embedded: ${scan.counts.added ?? items} books scanned in ${fmt(scan.wallSeconds, 1)} s; peak RSS during the scan ${scan.rss.hwmAfterMiB} MiB (sampled ${scan.rss.peakSampledMiB}), after its work (${settled.idle ? 'idle' : 'still busy'} ${fmt(settled.waitedMs / 1000, 0)} s later) ${statusKiB(inst.catalogPid, 'VmHWM') >> 10} MiB, RSS now ${statusKiB(inst.catalogPid, 'VmRSS') >> 10} MiB`,
    );
    console.log(
      `  at the highest sampled RSS (${fmt(top.rss, 0)} MiB): V8 heap ${fmt(top.heapUsed, 0)} MiB used of ${fmt(top.heapTotal, 0)}, external ${fmt(top.external, 0)} MiB; highest heap total ${fmt(maxHeapTotal, 0)} MiB, highest external ${fmt(maxExternal, 0)} MiB`,
    );
  } finally {
    sampling = false;
    await inst.stop();
  }
}

// ---- ratio ----------------------------------------------------------------------------------

async function ratio(mode: Mode): Promise<void> {
  const b = await startBindery(mode, { LOG_LEVEL: 'warn' });
  b.procs.forEach((p) => children.add(p.child));
  const gen = await startLoadGen();
  const ref = await startRef();
  try {
    const p = await prepare(b);
    const run = (url: string, headers: Record<string, string> = {}) => gen.run({ url, method: 'GET', headers, connections: 16, duration: 6 });
    const profile = () => run(`${p.url}/api/auth/profile`, { authorization: `Bearer ${p.token}` });
    await profile();
    await run(`${ref.url}/ref`);
    const before = await run(`${ref.url}/ref`);
    const m = await profile();
    const after = await run(`${ref.url}/ref`);
    console.log(
      `${mode}: profile ${fmt(m.rps, 0)} req/s (p99 ${fmt(m.p99, 1)} ms), bare ${fmt(before.rps, 0)} / ${fmt(after.rps, 0)} req/s: ${fmt((m.rps / ((before.rps + after.rps) / 2)) * 100, 1)} %`,
    );
  } finally {
    await ref.stop();
    await gen.stop();
    await b.stop();
  }
}

// ---- main -----------------------------------------------------------------------------------

const deadline = setTimeout(() => {
  console.error(`diag: gave up after ${DEADLINE_MS / 1000} s`);
  process.exit(1);
}, DEADLINE_MS);
const args = process.argv.slice(2);
const want = (x: string) => (args.length === 0 ? x !== 'cpu-embedded' && x !== 'ratio' && x !== 'sync' && x !== 'lag' && x !== 'peak' : args.includes(x));
try {
  if (want('jwt')) await jwt();
  if (want('nats')) await nats();
  if (want('cpu')) await cpu('distributed');
  if (want('cpu-embedded')) await cpu('embedded');
  if (args.includes('lag')) await lag();
  if (args.includes('peak')) await peak();
  if (args.includes('sync')) for (const m of (process.env.DIAG_MODES ?? 'embedded,distributed').split(',')) await sync(m as Mode);
  if (args.includes('ratio')) for (const m of (process.env.DIAG_MODES ?? 'distributed,embedded').split(',')) await ratio(m as Mode);
  clearTimeout(deadline);
} catch (e) {
  console.error(e);
  process.exit(1);
}
