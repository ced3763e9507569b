// `pnpm bench:sync`: KOReader's stock Progress sync (issue 10). In each mode (embedded, then
// distributed): one reader per connection, each with a scanned EPUB of their own and a signed-in
// device, then at BENCH_CONNECTIONS connections (the readers in turn) the
// kosync PUT /syncs/progress and GET /syncs/progress/<document> rates against a bare fastify route
// measured in the same run; then the web → KOReader visibility delay: a web position written,
// then the device's pull polled until it shows that position (BENCH_SYNC_SAMPLES times). Prints a
// table with the load average (the machine is shared); a benchmark, not a test: it never fails on
// its figures.
//
// Knobs: BENCH_QUICK=1 (5 s per measurement, 10 samples), BENCH_DURATION (10), BENCH_CONNECTIONS
// (16), BENCH_SYNC_SAMPLES (30), BENCH_SYNC_MODES (embedded,distributed), BENCH_DEADLINE_MINUTES (20).
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, type Mode } from '../support/bindery';
import { coresUsed, envNumber, fmt, machine, median, runWithDeadline, snapshot, startLoadGen, startRef, table, type Roles } from './lib';
import type { Job, Measured } from './load-worker';
import { fullScan, startInstance } from './scan-bindery';

const num = envNumber;
const QUICK = process.env.BENCH_QUICK === '1';
const CFG = {
  duration: Math.max(1, num('BENCH_DURATION', QUICK ? 5 : 10)),
  connections: Math.max(1, num('BENCH_CONNECTIONS', 16)),
  samples: Math.max(1, num('BENCH_SYNC_SAMPLES', QUICK ? 10 : 30)),
  modes: (process.env.BENCH_SYNC_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[],
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 20),
};
const CORPUS = join(ROOT, 'test/fixtures/corpus40');
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface ModeResult {
  mode: Mode;
  put: Measured;
  get: Measured;
  ref: Measured;
  web: Measured;
  webPut: Measured;
  delayMs: number[];
  load: { before: number[]; after: number[] };
}

/** Waits (at most 30 s) until Bindery's own processes are idle: what one measurement set off (events
 * relayed, projections folded, device-sync's reactions) must not be measured as the next one's cost. */
async function settle(roles: Roles): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < 30_000) {
    const a = snapshot();
    await new Promise((r) => setTimeout(r, 1000));
    const used = coresUsed(a, snapshot(), 1, roles);
    const ours = Object.entries(used)
      .filter(([role]) => role !== 'other' && role !== 'orchestrator')
      .reduce((sum, [, c]) => sum + c, 0);
    if (ours < 0.1) return;
  }
}

/** The first `n` EPUBs of the corpus40 fixture. */
function books(n: number): string[] {
  const rows = readFileSync(join(CORPUS, 'manifest.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'));
  return rows
    .filter((r) => r[1] === 'book' && r[2]!.startsWith('epub'))
    .map((r) => r[0]!)
    .slice(0, n);
}

async function benchMode(mode: Mode, gen: Awaited<ReturnType<typeof startLoadGen<Job, Measured>>>, refUrl: string): Promise<ModeResult> {
  // one reader per connection, each with a book of their own: what many devices syncing look like
  const n = CFG.connections;
  const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-sync-'));
  books(n).forEach((b, i) => copyFileSync(join(CORPUS, b), join(dir, `book-${i}.epub`)));
  const inst = await startInstance(mode);
  try {
    const scan = await fullScan(inst, dir, `sync ${mode}`);
    const list = await inst.call('GET', `/api/media-items?library_id=${scan.libraryId}&limit=1000`, { token: inst.token });
    const items = (list.json.data as { id: string; formats: { partial_md5: string }[] }[]).slice(0, n);
    if (items.length < n) throw new Error(`only ${items.length} books were catalogued`);
    const kosyncHeaders = (user: string, password: string) => ({
      'x-auth-user': user,
      'x-auth-key': md5(password),
      'content-type': 'application/json',
      accept: 'application/vnd.koreader.v1+json',
    });
    const readers: { headers: Record<string, string>; document: string; body: string; token: string; item: string }[] = [];
    for (let i = 0; i < n; i++) {
      const user = i === 0 ? `bench_${mode}` : `reader${i}_${mode}`;
      let token = inst.token;
      if (i > 0) {
        const r = await inst.call('POST', '/api/auth/register', { body: { email: `${user}@example.com`, username: user, password: 'passw0rd-123' } });
        if (r.status !== 201) throw new Error(`register failed: ${r.status} ${r.text}`);
        token = r.json.access_token as string;
      }
      const document = items[i]!.formats[0]!.partial_md5;
      const headers = kosyncHeaders(user, 'passw0rd-123');
      const body = JSON.stringify({ document, progress: '/body/DocFragment[2].0', percentage: 0.5, device: 'Bench', device_id: `bench${String(i).padStart(27, '0')}` });
      const auth = await inst.call('GET', '/users/auth', { headers });
      if (auth.status !== 200) throw new Error(`kosync auth failed: ${auth.status} ${auth.text}`);
      const first = await inst.call('PUT', '/syncs/progress', { headers, raw: body });
      if (first.status !== 200) throw new Error(`kosync push failed: ${first.status} ${first.text}`);
      readers.push({ headers, document, body, token, item: items[i]!.id });
    }
    const item = items[0]!;
    const { headers, document } = readers[0]!;
    const before = loadavg();
    const job = (url: string, method: Job['method'], extra: Partial<Job> = {}): Job => ({ url, method, connections: CFG.connections, duration: CFG.duration, ...extra });
    const ref = await gen.run(job(`${refUrl}/ref`, 'GET'));
    // each device signs in again when its minute of trust runs out; here every one is signed in
    // before a measurement, so the rates are of steady syncing, not of sixteen argon2 checks at once
    const warm = async () => {
      for (const r of readers) await inst.call('GET', '/users/auth', { headers: r.headers });
    };
    await settle(inst.roles);
    await warm();
    const put = await gen.run(job(`${inst.b.url}/syncs/progress`, 'PUT', { variants: readers.map((r) => ({ headers: r.headers, body: r.body })) }));
    await settle(inst.roles);
    await warm();
    const get = await gen.run(
      job(`${inst.b.url}/syncs/progress/${document}`, 'GET', { variants: readers.map((r) => ({ headers: r.headers, path: `/syncs/progress/${r.document}` })) }),
    );
    // the web's own read of a position: the same path through the gateway to the reading service
    await settle(inst.roles);
    const web = await gen.run(job(`${inst.b.url}/api/media-items/${item.id}/progress`, 'GET', { headers: { authorization: `Bearer ${inst.token}` } }));
    // the web's own write of a position (the same readers and books, in turn): the write reference
    await settle(inst.roles);
    const webPut = await gen.run(
      job(`${inst.b.url}/api/media-items/${item.id}/progress`, 'PUT', {
        variants: readers.map((r) => ({
          path: `/api/media-items/${r.item}/progress`,
          headers: { authorization: `Bearer ${r.token}`, 'content-type': 'application/json' },
          body: '{"percentage":0.5}',
        })),
      }),
    );
    const after = loadavg();
    // web → KOReader: a position written on the web, then the device's pull until it shows it
    await settle(inst.roles);
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
    return { mode, put, get, ref, web, webPut, delayMs, load: { before, after } };
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
      ['web PUT /api/media-items/<id>/progress', r.webPut],
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
