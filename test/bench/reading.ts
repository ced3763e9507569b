// `pnpm bench:reading`: the reading side in one run (issue 9). A generated 10,000-item library
// (test/bench/gen-library.ts: EPUB 3 and 2, CBZ, PDF), scanned by Bindery (so every EPUB has its
// locator index), one reader with 500 books in progress; then at 16 connections:
//   - progress writes per second: POST /api/media-items/<id>/progress round the 500 books, an EPUB
//     CFI that the server checks against the book's locator index (and heals: its percentage is
//     derived), and a bare percentage on the same books;
//   - the dashboard (GET /api/dashboard/sections) p50/p95/p99, target p99 < 50 ms (and at one
//     connection, what one request costs);
//   - the reference: a bare fastify route (test/bench/ref-server.ts), measured before and after.
// Per mode (BENCH_MODES, default embedded,distributed). The machine's load average is printed with
// every figure: on a shared machine it says how far to trust them. A benchmark, not a test: it
// prints verdicts and never fails on them.
//
// Knobs: BENCH_QUICK=1 (1,000 items, 100 in progress, 5 s per measurement), BENCH_ITEMS (10000),
// BENCH_IN_PROGRESS (500), BENCH_SEED (7), BENCH_DURATION (10), BENCH_WARMUP (2),
// BENCH_CONNECTIONS (16), BENCH_QUIET_WAIT (5), BENCH_READING_DIR (test/.tmp/bench-reading),
// BENCH_DEADLINE_MINUTES (60).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Mode } from '../support/bindery';
import { ROOT } from '../support/bindery';
import { ensureGenerated } from './gen-library';
import { envNumber, fmt, machine, runWithDeadline, startLoadGen, startRef, table } from './lib';
import { loadCfgFromEnv, measure, refJob, type ReadGen, type Row } from './read-load';
import type { ReadJob, ReadMeasured } from './read-load-worker';
import { fullScan, startInstance, type Instance } from './scan-bindery';

const num = envNumber;
const QUICK = process.env.BENCH_QUICK === '1';
const CFG = {
  items: Math.max(100, num('BENCH_ITEMS', QUICK ? 1000 : 10_000)),
  inProgress: Math.max(1, num('BENCH_IN_PROGRESS', QUICK ? 100 : 500)),
  seed: num('BENCH_SEED', 7),
  modes: (process.env.BENCH_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[],
  load: loadCfgFromEnv(QUICK, 1),
  dir: process.env.BENCH_READING_DIR ?? join(ROOT, 'test/.tmp/bench-reading'),
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 60),
};
const TARGET_DASHBOARD_P99_MS = 50;
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

interface ModeFigures {
  mode: Mode;
  scanSeconds: number;
  epubs: number;
  rows: Record<string, Row & { load: string }>;
}

async function items(inst: Instance, libraryId: string): Promise<{ id: string; format: string }[]> {
  const out: { id: string; format: string }[] = [];
  for (let offset = 0; ; offset += 1000) {
    const r = await inst.call('GET', `/api/media-items?library_id=${libraryId}&limit=1000&offset=${offset}`, { token: inst.token });
    if (r.status !== 200) throw new Error(`item list failed: ${r.status} ${r.text}`);
    const page = r.json.data as { id: string; formats: { format: string }[] }[];
    out.push(...page.map((i) => ({ id: i.id, format: i.formats[0]?.format ?? '' })));
    // offset paging over a list that may reorder between pages can repeat an item: each counts once
    if (page.length < 1000) return [...new Map(out.map((i) => [i.id, i])).values()];
  }
}

async function modeRun(mode: Mode, dir: string, gen: ReadGen): Promise<ModeFigures> {
  console.log(`\n== ${mode}`);
  const inst = await startInstance(mode);
  try {
    const scan = await fullScan(inst, dir, `Reading bench ${mode}`);
    console.log(`  scan of ${CFG.items} items: ${scan.serverSeconds.toFixed(1)} s (${scan.status}), load ${load()}`);
    const all = await items(inst, scan.libraryId);
    // EPUBs first: their writes are the ones checked against a locator index
    const picked = [...all.filter((i) => i.format === 'epub'), ...all.filter((i) => i.format !== 'epub')].slice(0, CFG.inProgress);
    const epubs = picked.filter((i) => i.format === 'epub');
    const reg = await inst.call('POST', '/api/auth/register', { body: { email: `reader-${mode}@example.com`, username: `reader_${mode}`, password: 'passw0rd-123' } });
    if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${reg.text}`);
    const token = reg.json.access_token as string;
    // first a CFI on every EPUB (the reading service fetches each book's locator index once, here;
    // on these one-document books that CFI heals to the end of the book), then the positions in progress
    const seed = async (body: (it: { id: string; format: string }, i: number) => Record<string, unknown> | null) => {
      for (let at = 0; at < picked.length; at += 8)
        await Promise.all(
          picked.slice(at, at + 8).map(async (it, k) => {
            const b = body(it, at + k);
            if (!b) return;
            const r = await inst.call('PUT', `/api/media-items/${it.id}/progress`, { token, body: b });
            if (r.status !== 200) throw new Error(`seeding progress failed: ${r.status} ${r.text}`);
          }),
        );
    };
    await seed((it) => (it.format === 'epub' ? { percentage: 0.5, epubcfi: 'epubcfi(/6/4!/4/2/1:0)' } : null));
    await seed((_, i) => ({ percentage: 0.05 + (0.9 * i) / picked.length }));
    // the reader's system collections come when reading has seen the account; the positions when the gateway has them
    const inProgress = picked.length;
    let shown = 0;
    let still = 0;
    for (const until = Date.now() + 300_000; Date.now() < until && shown < inProgress && still < 10; await new Promise((r) => setTimeout(r, 1000))) {
      const d = await inst.call('GET', '/api/dashboard/sections', { token });
      const cont = d.status === 200 ? (d.json.sections as { query_type: string; total: number }[]).find((x) => x.query_type === 'continue-reading') : undefined;
      // settled: the same count for ten polls
      still = shown > 0 && (cont?.total ?? 0) === shown ? still + 1 : 0;
      shown = cont?.total ?? 0;
    }
    console.log(`  ${picked.length} books in progress (${epubs.length} EPUBs); Continue Reading shows ${shown}, load ${load()}`);
    if (shown < inProgress * 0.9) throw new Error(`the dashboard never showed the ${inProgress} books in progress (${shown})`);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const ref = await startRef();
    const roles = { pids: new Map([...inst.roles.pids, [ref.child.pid!, 'ref']]), databases: inst.roles.databases };
    const rows: ModeFigures['rows'] = {};
    const run = async (key: string, job: ReadJob) => {
      const row = await measure(gen, CFG.load, roles, job, `${mode} ${key}`);
      rows[key] = { ...row, load: load() };
      console.log(`    load average ${rows[key].load}`);
    };
    const base = { connections: CFG.load.connections, duration: CFG.load.duration };
    try {
      await run('bare (before)', refJob(ref, CFG.load));
      // one request at a time: what a single dashboard costs, before it queues behind 15 others
      await run('dashboard, 1 connection', { ...base, connections: 1, url: `${inst.b.url}/api/dashboard/sections`, method: 'GET', headers: auth });
      await run('dashboard', { ...base, url: `${inst.b.url}/api/dashboard/sections`, method: 'GET', headers: auth });
      // the same position on every book, as a web reader would send it: the CFI is checked and healed
      const paths = (list: { id: string }[]) => list.map((i) => `/api/media-items/${i.id}/progress`);
      if (epubs.length)
        await run('write: epub cfi', {
          ...base,
          url: inst.b.url,
          method: 'POST',
          headers: auth,
          paths: paths(epubs),
          body: JSON.stringify({ percentage: 0.5, epubcfi: 'epubcfi(/6/4!/4/2/1:0)' }),
        });
      await run('write: percentage', { ...base, url: inst.b.url, method: 'POST', headers: auth, paths: paths(picked), body: JSON.stringify({ percentage: 0.61 }) });
      await run('dashboard (after writes)', { ...base, url: `${inst.b.url}/api/dashboard/sections`, method: 'GET', headers: auth });
      await run('bare (after)', refJob(ref, CFG.load));
    } finally {
      await ref.stop();
    }
    return { mode, scanSeconds: scan.serverSeconds, epubs: epubs.length, rows };
  } finally {
    await inst.stop();
  }
}

await runWithDeadline('bench:reading', CFG.deadlineMinutes * 60_000, async () => {
  console.log(`bench:reading ${JSON.stringify({ ...CFG, load: CFG.load })}`);
  console.log(`machine ${JSON.stringify(machine())}, load average ${load()}`);
  const dir = join(CFG.dir, `lib-${CFG.items}-seed${CFG.seed}`);
  // the instances may catalogue the bench's corpus
  process.env.LIBRARY_ROOTS ??= CFG.dir;
  const g = ensureGenerated(dir, CFG.seed, 0, CFG.items);
  console.log(`library ${dir}: ${g.files} files ${JSON.stringify(g.byFormat)}`);
  const gen = (await startLoadGen<ReadJob, ReadMeasured>(join(ROOT, 'test/bench/read-load-worker.ts'))) as ReadGen;
  const results: ModeFigures[] = [];
  try {
    for (const mode of CFG.modes) results.push(await modeRun(mode, dir, gen));
  } finally {
    await gen.stop();
  }
  const lines = [['mode', 'measurement', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'vs bare', 'server CPU ms/req', 'load avg (1 5 15 min)']];
  // CPU the server's processes spent per answered request: less at the mercy of a busy machine than latency
  const cpuPerReq = (row: Row) => {
    const server = Object.entries(row.cores)
      .filter(([k]) => !['loadgen', 'orchestrator', 'other', 'ref'].includes(k))
      .reduce((a, [, v]) => a + v, 0);
    return row.ok > 0 ? (server * row.seconds * 1000) / row.ok : NaN;
  };
  for (const r of results) {
    const bare = (((r.rows['bare (before)']?.rps ?? NaN) + (r.rows['bare (after)']?.rps ?? NaN)) / 2) as number;
    for (const [k, row] of Object.entries(r.rows))
      lines.push([
        r.mode,
        k,
        fmt(row.rps, 0),
        fmt(row.p50, 1),
        fmt(row.p95, 1),
        fmt(row.p99, 1),
        k.startsWith('bare') ? '' : `${fmt((row.rps / bare) * 100, 1)} %`,
        k.startsWith('bare') ? '' : fmt(cpuPerReq(row), 1),
        row.load,
      ]);
  }
  console.log(`\n${table(lines)}\n`);
  for (const r of results) {
    const p99 = Math.max(r.rows.dashboard?.p99 ?? NaN, r.rows['dashboard (after writes)']?.p99 ?? NaN);
    console.log(
      `${r.mode}: dashboard p99 ${fmt(p99, 1)} ms at ${CFG.load.connections} connections — ${p99 < TARGET_DASHBOARD_P99_MS ? 'meets' : 'misses'} the ${TARGET_DASHBOARD_P99_MS} ms target`,
    );
  }
});
