// `pnpm bench:sync`: KOReader's stock Progress sync (issue 10). In each mode (embedded, then
// distributed): a scanned EPUB, a signed-in device, then at BENCH_CONNECTIONS connections the
// kosync PUT /syncs/progress and GET /syncs/progress/<document> rates against a bare fastify route
// measured in the same run; then the web → KOReader visibility delay: a web position written,
// then the device's pull polled until it shows that position (BENCH_SYNC_SAMPLES times). Prints a
// table with the load average (the machine is shared); a benchmark, not a test: it never fails on
// its figures.
//
// Knobs: BENCH_QUICK=1 (5 s per measurement, 10 samples), BENCH_DURATION (10), BENCH_CONNECTIONS
// (16), BENCH_SYNC_SAMPLES (30), BENCH_SYNC_MODES (embedded,distributed), BENCH_DEADLINE_MINUTES (20).
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, type Mode } from '../support/bindery';
import { fmt, machine, median, runWithDeadline, startLoadGen, startRef, table } from './lib';
import type { Job, Measured } from './load-worker';
import { fullScan, startInstance } from './scan-bindery';

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};
const QUICK = process.env.BENCH_QUICK === '1';
const CFG = {
  duration: Math.max(1, num('BENCH_DURATION', QUICK ? 5 : 10)),
  connections: Math.max(1, num('BENCH_CONNECTIONS', 16)),
  samples: Math.max(1, num('BENCH_SYNC_SAMPLES', QUICK ? 10 : 30)),
  modes: (process.env.BENCH_SYNC_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[],
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 20),
};
const BOOK = join(ROOT, 'test/fixtures/corpus40/J. R. Hartley/The Hidden Crown (1864).epub');
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface ModeResult {
  mode: Mode;
  put: Measured;
  get: Measured;
  ref: Measured;
  web: Measured;
  delayMs: number[];
  load: { before: number[]; after: number[] };
}

async function benchMode(mode: Mode, gen: Awaited<ReturnType<typeof startLoadGen<Job, Measured>>>, refUrl: string): Promise<ModeResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-sync-'));
  copyFileSync(BOOK, join(dir, 'crown.epub'));
  mkdirSync(join(dir, 'empty'), { recursive: true });
  const inst = await startInstance(mode);
  try {
    const scan = await fullScan(inst, dir, `sync ${mode}`);
    const list = await inst.call('GET', `/api/media-items?library_id=${scan.libraryId}`, { token: inst.token });
    const item = list.json.data[0] as { id: string; formats: { partial_md5: string }[] };
    const document = item.formats[0]!.partial_md5;
    const headers = { 'x-auth-user': `bench_${mode}`, 'x-auth-key': md5('passw0rd-123'), 'content-type': 'application/json', accept: 'application/vnd.koreader.v1+json' };
    const auth = await inst.call('GET', '/users/auth', { headers });
    if (auth.status !== 200) throw new Error(`kosync auth failed: ${auth.status} ${auth.text}`);
    const body = JSON.stringify({ document, progress: '/body/DocFragment[2].0', percentage: 0.5, device: 'Bench', device_id: 'bench0000000000000000000000000000' });
    const first = await inst.call('PUT', '/syncs/progress', { headers, raw: body });
    if (first.status !== 200) throw new Error(`kosync push failed: ${first.status} ${first.text}`);
    const before = loadavg();
    const job = (url: string, method: 'GET' | 'POST' | 'PUT', extra: Partial<Job> = {}): Job => ({ url, method, connections: CFG.connections, duration: CFG.duration, ...extra });
    const ref = await gen.run(job(`${refUrl}/ref`, 'GET'));
    const put = await gen.run(job(`${inst.b.url}/syncs/progress`, 'PUT', { headers, body }));
    const get = await gen.run(job(`${inst.b.url}/syncs/progress/${document}`, 'GET', { headers }));
    // the web's own read of a position: the same path through the gateway to the reading service
    const web = await gen.run(job(`${inst.b.url}/api/media-items/${item.id}/progress`, 'GET', { headers: { authorization: `Bearer ${inst.token}` } }));
    const after = loadavg();
    // web → KOReader: a position written on the web, then the device's pull until it shows it
    const delayMs: number[] = [];
    for (let i = 0; i < CFG.samples; i++) {
      const p = Math.round((0.2 + (0.6 * i) / CFG.samples) * 1e4) / 1e4;
      const t0 = performance.now();
      const w = await inst.call('PUT', `/api/media-items/${item.id}/progress`, { token: inst.token, body: { percentage: p, force: true } });
      if (w.status !== 200) throw new Error(`web write failed: ${w.status} ${w.text}`);
      for (let tries = 0; ; tries++) {
        const r = await inst.call('GET', `/syncs/progress/${document}`, { headers });
        if (r.status === 200 && r.json.percentage === p) break;
        if (tries > 500) throw new Error(`the pull never showed ${p}: ${r.text}`);
      }
      delayMs.push(performance.now() - t0);
    }
    return { mode, put, get, ref, web, delayMs, load: { before, after } };
  } finally {
    await inst.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runWithDeadline('bench:sync', CFG.deadlineMinutes * 60_000, async () => {
  const m = machine();
  console.log(`bench:sync — ${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB, node ${m.node}, ${m.git}; ${CFG.connections} connections, ${CFG.duration} s each`);
  const ref = await startRef();
  const gen = await startLoadGen<Job, Measured>();
  const results: ModeResult[] = [];
  try {
    for (const mode of CFG.modes) {
      console.log(`${mode}: starting`);
      results.push(await benchMode(mode, gen, ref.url));
    }
  } finally {
    await gen.stop();
    await ref.stop();
  }
  const rows = [['mode', 'route', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'vs bare fastify']];
  for (const r of results) {
    for (const [name, x] of [
      ['PUT /syncs/progress', r.put],
      ['GET /syncs/progress/<doc>', r.get],
      ['web GET /api/media-items/<id>/progress', r.web],
      ['bare fastify GET /ref', r.ref],
    ] as const)
      rows.push([r.mode, name, fmt(x.rps, 0), fmt(x.p50, 1), fmt(x.p99, 1), String(x.non2xx + x.errors), `${fmt((100 * x.rps) / r.ref.rps, 1)} %`]);
  }
  console.log(`\n${table(rows)}`);
  const d = [['mode', 'web → KOReader delay: median ms', 'p95 ms', 'max ms', 'samples', 'load avg 1 min (before → after the rates)']];
  for (const r of results)
    d.push([
      r.mode,
      fmt(median(r.delayMs), 1),
      fmt(pct(r.delayMs, 95), 1),
      fmt(Math.max(...r.delayMs), 1),
      String(r.delayMs.length),
      `${fmt(r.load.before[0]!, 2)} → ${fmt(r.load.after[0]!, 2)}`,
    ]);
  console.log(`\n${table(d)}`);
  const out = join(ROOT, 'test/.tmp');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'bench-sync.json'), JSON.stringify({ machine: m, config: CFG, results }, null, 2));
  console.log(`\nresults: test/.tmp/bench-sync.json`);
  process.exit(0);
});
