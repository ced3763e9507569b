// `pnpm bench:kobo`: native Kobo sync (issue 20). Per mode (embedded, then distributed): BENCH_KOBO_BOOKS
// small generated EPUBs scanned into one library, a Kobo made for a reader, then a simulated Kobo's
// first sync followed to its end — total time, requests, each page's latency (p50/p99) and the server
// processes' resident memory after it; then the KEPUB conversion of five ~1 MB EPUBs: each one's first download
// (conversion included; median and slowest) and one cached. Prints a table with the load average (the machine
// is shared); a benchmark, not a test: it never fails on its figures. Figures go to docs/benchmarks.md.
//
// Knobs: BENCH_KOBO_BOOKS (10000), BENCH_KOBO_MODES (embedded,distributed), BENCH_KOBO_SETTLE_MS (10000: the
// wait after the sync before the KEPUBs are timed), BENCH_DEADLINE_MINUTES (30), BENCH_KOBO_PROFILE=1 (the
// server processes' V8 sampler over the sync alone: self time by package and function, printed per process).
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { settled } from '../e2e/catalog-helpers';
import { api, register } from '../e2e/helpers';
import { bigEpub, smallEpub } from '../e2e/kobo-helpers';
import { startBindery, type Mode } from '../support/bindery';
import { analyse, BENCH, envNumber, fmt, machine, runWithDeadline, table } from './lib';
import { statusKiB } from './scan-bindery';

const BOOKS = Math.max(1, envNumber('BENCH_KOBO_BOOKS', 10_000));
/** distinct ~1 MB EPUBs whose first KEPUB download is timed */
const BIG = 5;
const MODES = (process.env.BENCH_KOBO_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

const cleanup: string[] = [];

/** Each process's profile of the sync, once all are written: where its main thread spent the time. */
async function profiles(dir: string, n: number): Promise<void> {
  const files = () => readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  for (const until = Date.now() + 15_000; files().length < n && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
  for (const f of files()) {
    const r = analyse(join(dir, f));
    console.log(`\n== pid ${f.split('.')[0]}: ${fmt(r.busyMs / 1000 / r.seconds, 2)} cores of main-thread time over the ${fmt(r.seconds, 1)} s profile`);
    console.log(table([['self time by package', 'share', 'ms'], ...r.packages]));
    console.log(table([['self time by function', 'share', 'ms'], ...r.functions]));
  }
}

const PROFILE = process.env.BENCH_KOBO_PROFILE === '1';

async function runMode(mode: Mode): Promise<string[][]> {
  const profDir = mkdtempSync(join(tmpdir(), 'bindery-kobo-prof-'));
  cleanup.push(profDir);
  // --cpu-prof is refused in NODE_OPTIONS: a preloaded module profiles between two SIGUSR2s instead
  const profEnv: Record<string, string> = PROFILE
    ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${process.env.BENCH_KOBO_PRELOAD ?? join(BENCH, 'cpu-profiler.mjs')}`.trim(), BENCH_CPU_PROF_DIR: profDir }
    : {};
  const b = await startBindery(mode, profEnv);
  const signal = () => PROFILE && b.procs.forEach((p) => p.child.kill('SIGUSR2'));
  try {
    const call = api(b);
    const admin = await register(call);
    const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-kobo-'));
    cleanup.push(dir);
    mkdirSync(join(dir, 'books'), { recursive: true });
    for (let i = 0; i < BOOKS; i++) writeFileSync(join(dir, `books/b${i}.epub`), smallEpub(`Bench Book ${i}`, `Author ${i % 97}`, randomUUID()));
    for (let i = 0; i < BIG; i++) writeFileSync(join(dir, `big${i}.epub`), bigEpub(1024 * 1024));
    const lib = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Kobo bench', folders: [dir], watch: false } });
    // creating the library queued its scan; 10,000 books take longer than a test's minute
    await settled(call, admin.token, lib.json.id, undefined, 20 * 60_000);
    // and the gateway's read model holds every book (it folds the scan's events a moment after it)
    for (const until = Date.now() + 5 * 60_000; ; await new Promise((r) => setTimeout(r, 250))) {
      const r = await call('GET', `/api/media-items/search?limit=1&library_id=${lib.json.id}`, { token: admin.token });
      if (Number(r.json.total) === BOOKS + BIG) break;
      if (Date.now() > until) throw new Error(`the read model holds ${r.json.total} of ${BOOKS + BIG} books`);
    }
    const k = await call('POST', '/api/devices/kobo', { token: admin.token, body: { name: 'Bench Kobo' } });
    const base = `/kobo/${k.json.kobo_url.split('/kobo/')[1]}`;
    const pages: number[] = [];
    let token: string | null = null;
    let entries = 0;
    signal();
    const t0 = performance.now();
    for (;;) {
      const p0 = performance.now();
      const r = await call('GET', `${base}/v1/library/sync`, token ? { headers: { 'x-kobo-synctoken': token } } : {});
      pages.push(performance.now() - p0);
      entries += (r.json as unknown[]).length;
      token = r.headers.get('x-kobo-synctoken');
      if (r.headers.get('x-kobo-sync') !== 'continue') break;
    }
    const total = performance.now() - t0;
    signal();
    if (PROFILE) await profiles(profDir, b.procs.length);
    const rss = b.procs.reduce((s, p) => s + (p.child.pid ? statusKiB(p.child.pid, 'VmRSS') : 0), 0);
    // by search: 10,000 "Bench Book …" titles sort before it
    const items = await call('GET', `/api/media-items/search?q=${encodeURIComponent('Big Book')}&library_id=${lib.json.id}`, { token: admin.token });
    const bigs = (items.json.data as { id: string; title: string }[]).filter((i) => i.title === 'Big Book');
    if (bigs.length !== BIG) throw new Error(`${bigs.length} big books found, ${BIG} made`);
    // the scan's background work (covers) settles first: the conversion is measured alone
    await new Promise((r) => setTimeout(r, Number(process.env.BENCH_KOBO_SETTLE_MS ?? 10_000)));
    // each book's first download (converted on the way), then one cached
    const firsts: number[] = [];
    let bytes = 0;
    for (const big of bigs) {
      const d0 = performance.now();
      const first = await call('GET', `${base}/v1/books/${big.id}/file/kepub`);
      firsts.push(performance.now() - d0);
      bytes = first.bytes.length;
    }
    const d1 = performance.now();
    await call('GET', `${base}/v1/books/${bigs[0]!.id}/file/kepub`);
    const cachedMs = performance.now() - d1;
    const firstMs = pct(firsts, 50);
    return [
      [mode, 'first sync', `${BOOKS + 1} books, ${entries} entries, ${pages.length} requests`, `${fmt(total / 1000, 1)} s`],
      [mode, 'sync page', `p50 ${fmt(pct(pages, 50), 1)} ms, p99 ${fmt(pct(pages, 99), 1)} ms`, pct(pages, 99) < 200 ? 'under 200 ms' : 'OVER 200 ms'],
      [mode, 'server RSS after sync', `${fmt(rss / 1024, 0)} MiB`, ''],
      [
        mode,
        'KEPUB of a 1 MB EPUB',
        `first: median ${fmt(firstMs, 0)} ms, slowest ${fmt(Math.max(...firsts), 0)} ms of ${BIG} books (${bytes} bytes each); cached ${fmt(cachedMs, 0)} ms`,
        firstMs < 200 ? 'under 200 ms' : 'OVER 200 ms',
      ],
    ];
  } finally {
    await b.stop();
    for (const d of cleanup.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

await runWithDeadline('bench:kobo', envNumber('BENCH_DEADLINE_MINUTES', 30) * 60_000, async () => {
  const before = loadavg();
  const rows: string[][] = [['mode', 'measure', 'figure', 'target']];
  for (const mode of MODES) rows.push(...(await runMode(mode)));
  console.log(machine());
  console.log(table(rows));
  console.log(
    `load average before ${before.map((x) => x.toFixed(2)).join(' ')}, after ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
});
