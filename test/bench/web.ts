// `pnpm bench:web`: the web app (issue 19). Per mode (embedded, then distributed): BENCH_WEB_BOOKS
// small generated EPUBs and a ~1 MB EPUB of 20 chapters scanned into one library, then
//   - the library page (GET /library, signed in, server-rendered): p50/p99 and req/s at
//     BENCH_CONNECTIONS connections, beside a bare fastify route measured the same way in the same run;
//   - first contentful paint of /library in headless Chromium (Debian's), cold and warm cache;
//   - the page's own JavaScript and CSS, gzip- and brotli-compressed (what the library page loads;
//     the reader's bundle is checked to be absent from it);
//   - the reader: the 1 MB EPUB opened at a saved position in the middle, until its page is shown
//     and placed (cold and warm cache), and the number of requests one page turn saves with;
//   - curation (issue 43): the series list (/series) and a 500-book series page (/series/Bench Saga:
//     its first page, 60 books; decision 107),
//     each under load (p50/p99) and their first contentful paint cold; and a bulk edit of 1,000 books
//     (a tag added through the bulk API the grid's bulk form uses) until the grid filtered by that tag
//     counts all 1,000. The books are in series: 500 in "Bench Saga", the rest in 600 series.
// A benchmark, not a test: it prints a table with the load average and never fails on its figures.
// Figures go to docs/benchmarks.md.
//
// Knobs: BENCH_WEB_BOOKS (10000), BENCH_WEB_MODES (embedded,distributed), BENCH_CONNECTIONS (16),
// BENCH_DURATION (10 s), BENCH_WEB_RUNS (5 browser runs each), BENCH_DEADLINE_MINUTES (40),
// BENCH_WEB_PROFILE_DIR (a folder: each Bindery process CPU-profiled over the series page's load).
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Request } from 'playwright-core';
import { items, settled } from '../e2e/catalog-helpers';
import { api, register } from '../e2e/helpers';
import { bigEpub, smallEpub } from '../e2e/kobo-helpers';
import { launch } from '../e2e/web-browser';
import { ROOT, startBindery, type Mode } from '../support/bindery';
import { assetSizes, runBrowserBench } from './browser-bench';
import { envNumber, fmt, machine, startLoadGen, startRef, table } from './lib';
import type { Job, Measured } from './load-worker';

const BOOKS = Math.max(1, envNumber('BENCH_WEB_BOOKS', 10_000));
const MODES = (process.env.BENCH_WEB_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[];
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 16);
const DURATION = envNumber('BENCH_DURATION', 10);
const RUNS = Math.max(1, envNumber('BENCH_WEB_RUNS', 5));
/** The 500-book series (fewer when there are fewer books). */
const SAGA = Math.min(500, Math.floor(BOOKS / 2));
const SAGA_NAME = 'Bench Saga';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cleanup: string[] = [];

interface Row {
  mode: Mode;
  seriesList: Measured;
  seriesPage: Measured;
  seriesListFcp: number;
  seriesPageFcp: number;
  bulkMs: number;
  page: Measured;
  ref: Measured;
  fcpCold: number;
  fcpWarm: number;
  bytes: { raw: number; gzip: number; brotli: number; files: string[]; readerOnPage: boolean };
  readerCold: number;
  readerWarm: number;
  readerMax: number;
  saves: number;
}

/** BENCH_WEB_PROFILE_DIR: every Bindery process is CPU-profiled over the measured series-page load (cpu-profiler.mjs) */
const PROFILE_DIR = process.env.BENCH_WEB_PROFILE_DIR ?? '';

async function runMode(mode: Mode, browser: Browser): Promise<Row> {
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const profiled: Record<string, string> = PROFILE_DIR
    ? { NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', `--import ${join(ROOT, 'test/bench/cpu-profiler.mjs')}`].join(' ').trim(), BENCH_CPU_PROF_DIR: PROFILE_DIR }
    : {};
  const b = await startBindery(mode, profiled);
  /** starts, then stops and writes, every process's profile (a no-op without BENCH_WEB_PROFILE_DIR) */
  const profile = () => {
    if (PROFILE_DIR) for (const p of b.procs) p.child.kill('SIGUSR2');
  };
  try {
    const call = api(b);
    const admin = await register(call);
    const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-web-'));
    cleanup.push(dir);
    mkdirSync(join(dir, 'books'), { recursive: true });
    for (let i = 0; i < BOOKS; i++) {
      const series = i < SAGA ? { name: SAGA_NAME, index: i + 1 } : { name: `Series ${String((i - SAGA) % 600).padStart(3, '0')}`, index: Math.floor((i - SAGA) / 600) + 1 };
      writeFileSync(join(dir, `books/b${i}.epub`), smallEpub(`Web Book ${i}`, `Author ${i % 211}`, randomUUID(), undefined, series));
    }
    writeFileSync(join(dir, 'big.epub'), bigEpub(1024 * 1024, 20));
    const lib = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Web bench', folders: [dir], watch: false } });
    console.log(`  ${mode}: scanning ${BOOKS + 1} books …`);
    await settled(call, admin.token, lib.json.id, undefined, 30 * 60_000);
    const big = (await items(call, admin.token, lib.json.id)).find((i) => i.formats[0]?.file_path === 'big.epub');
    if (!big) throw new Error('the big EPUB was not catalogued');
    const cookie = `token=${admin.token}`;

    const one = await fetch(`${b.url}/library`, { headers: { cookie } });
    if (one.status !== 200) throw new Error(`the library page answered ${one.status}: ${(await one.text()).slice(0, 300)}`);
    const sagaUrl = `${b.url}/series/${encodeURIComponent(SAGA_NAME)}`;
    const saga = await fetch(sagaUrl, { headers: { cookie } });
    if (saga.status !== 200) throw new Error(`the series page answered ${saga.status}`);
    // the library page, the series list and a 500-book series page under load, and the bare route right after them
    const gen = await startLoadGen<Job, Measured>();
    let page: Measured;
    let seriesList: Measured;
    let seriesPage: Measured;
    let ref: Measured;
    const refServer = await startRef();
    try {
      const job = (url: string, headers: Record<string, string> = {}): Job => ({ url, method: 'GET', headers, connections: CONNECTIONS, duration: 2 });
      const measure = async (url: string, headers: Record<string, string> = { cookie }, profiling = false) => {
        await gen.run(job(url, headers));
        if (profiling) profile();
        const m = await gen.run({ ...job(url, headers), duration: DURATION });
        if (profiling) profile();
        if (m.non2xx > 0 || m.errors > 0) throw new Error(`${url} under load: ${JSON.stringify(m.statusCodes)}, ${m.errors} errors`);
        return m;
      };
      page = await measure(`${b.url}/library`);
      seriesList = await measure(`${b.url}/series`);
      seriesPage = await measure(sagaUrl, { cookie }, true);
      ref = await measure(`${refServer.url}/ref`, {});
    } finally {
      await gen.stop();
      await refServer.stop();
    }

    // the browser: first contentful paint of the library page, cold (a new context) and warm (reloaded)
    const fcps: { cold: number[]; warm: number[] } = { cold: [], warm: [] };
    // the paint entry, once the browser has made it (it may come a frame after load)
    const fcp = async (p: import('playwright-core').Page) =>
      Number(
        await p
          .waitForFunction(
            () =>
              (globalThis as unknown as { performance: { getEntriesByName(n: string): { startTime: number }[] } }).performance.getEntriesByName('first-contentful-paint')[0]
                ?.startTime,
          )
          .then((h) => h.jsonValue()),
      );
    let files: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await ctx.addCookies([{ name: 'token', value: admin.token, url: b.url }]);
      const p = await ctx.newPage();
      const loaded: string[] = [];
      p.on('request', (r: Request) => {
        if (['script', 'stylesheet'].includes(r.resourceType())) loaded.push(new URL(r.url()).pathname);
      });
      await p.goto(`${b.url}/library`, { waitUntil: 'load' });
      fcps.cold.push(await fcp(p));
      files = [...new Set(loaded)];
      await p.reload({ waitUntil: 'load' });
      fcps.warm.push(await fcp(p));
      await ctx.close();
    }
    // the series list and the 500-book series page, cold
    const coldFcp = async (url: string) => {
      const xs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        await ctx.addCookies([{ name: 'token', value: admin.token, url: b.url }]);
        const p = await ctx.newPage();
        const r = await p.goto(url, { waitUntil: 'load' });
        if (r?.status() !== 200) throw new Error(`${url} answered ${r?.status()} in the browser`);
        xs.push(await fcp(p));
        await ctx.close();
      }
      return median(xs);
    };
    const seriesListFcp = await coldFcp(`${b.url}/series`);
    const seriesPageFcp = await coldFcp(sagaUrl);

    // a bulk edit of 1,000 books, until the grid filtered by the new tag counts them all
    const bulkIds = (await items(call, admin.token, lib.json.id)).slice(0, Math.min(1000, BOOKS)).map((i) => i.id);
    const tag = `bulk-${randomUUID().slice(0, 8)}`;
    const t0 = Date.now();
    const bulk = await call('POST', '/api/media-items/bulk-update', { token: admin.token, body: { ids: bulkIds, changes: { add_tags: [tag] } } });
    if (bulk.status !== 200 || bulk.json.failed.length > 0) throw new Error(`bulk edit: ${bulk.status} ${bulk.text.slice(0, 300)}`);
    for (;;) {
      const html = await (await fetch(`${b.url}/library?tag=${tag}`, { headers: { cookie } })).text();
      // the count as the page writes it, grouped by the locale ("1,000")
      const total = /id="library-total"[^>]*>\s*(\d[\d,.\u00a0\u202f ]*)/.exec(html)?.[1]?.replace(/\D/g, '');
      if (Number(total) === bulkIds.length) break;
      if (Date.now() - t0 > 120_000) throw new Error(`the grid counts ${total} of ${bulkIds.length} bulk-edited books after 120 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const bulkMs = Date.now() - t0;

    // the page's own JavaScript and CSS, as sent (compressed by us here: the sizes a compressing proxy or the server would send)
    const sizes = await assetSizes(b.url, files);

    // the reader: the 1 MB EPUB at a saved place in its middle
    const saved = await call('PUT', `/api/media-items/${big.id}/progress`, { token: admin.token, body: { percentage: 0.5 } });
    if (saved.status !== 200) throw new Error(`saving the position: ${saved.status} ${saved.text}`);
    const opens: { cold: number[]; warm: number[] } = { cold: [], warm: [] };
    let saves = 0;
    for (let i = 0; i < RUNS; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await ctx.addCookies([{ name: 'token', value: admin.token, url: b.url }]);
      const p = await ctx.newPage();
      for (const kind of ['cold', 'warm'] as const) {
        const t0 = Date.now();
        await p.goto(`${b.url}/read/${big.id}`, { waitUntil: 'commit' });
        await p.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 60_000 });
        opens[kind].push(Date.now() - t0);
      }
      if (i === 0) {
        const puts: string[] = [];
        p.on('request', (r: Request) => {
          if (r.method() === 'PUT' && r.url().endsWith('/progress')) puts.push(r.url());
        });
        await p.locator('#next').click();
        await p.waitForSelector('#reader[data-saved="1"]', { timeout: 15_000 });
        await p.waitForTimeout(3000);
        saves = puts.length;
      }
      await ctx.close();
    }
    return {
      mode,
      seriesList,
      seriesPage,
      seriesListFcp,
      seriesPageFcp,
      bulkMs,
      page,
      ref,
      fcpCold: median(fcps.cold),
      fcpWarm: median(fcps.warm),
      bytes: { ...sizes, files, readerOnPage: files.some((f) => f.startsWith('/assets/reader.')) },
      readerCold: median(opens.cold),
      readerWarm: median(opens.warm),
      readerMax: Math.max(...opens.cold, ...opens.warm),
      saves,
    };
  } finally {
    await b.stop();
  }
}

// what `pnpm start` runs: the compiled bundle
await runBrowserBench('bench:web', envNumber('BENCH_DEADLINE_MINUTES', 40), async () => {
  console.log(`bench:web — ${BOOKS} books, ${CONNECTIONS} connections, ${DURATION} s, ${RUNS} browser runs; ${JSON.stringify(machine())}`);
  const browser = await launch();
  const rows: Row[] = [];
  try {
    for (const mode of MODES) rows.push(await runMode(mode, browser));
  } finally {
    await browser.close();
    for (const d of cleanup) rmSync(d, { recursive: true, force: true });
  }
  const kb = (n: number) => fmt(n / 1024, 1);
  console.log(
    table([
      [
        'mode',
        '/library p50 / p99 ms',
        '/library req/s',
        'bare route p99 ms / req/s',
        'FCP cold / warm ms',
        'JS+CSS KB raw / gzip / br',
        'reader 1 MB EPUB open cold / warm / max ms',
        'PUTs per page turn',
      ],
      ...rows.map((r) => [
        r.mode,
        `${fmt(r.page.p50, 1)} / ${fmt(r.page.p99, 1)}`,
        fmt(r.page.rps, 0),
        `${fmt(r.ref.p99, 1)} / ${fmt(r.ref.rps, 0)}`,
        `${fmt(r.fcpCold, 0)} / ${fmt(r.fcpWarm, 0)}`,
        `${kb(r.bytes.raw)} / ${kb(r.bytes.gzip)} / ${kb(r.bytes.brotli)}`,
        `${fmt(r.readerCold, 0)} / ${fmt(r.readerWarm, 0)} / ${fmt(r.readerMax, 0)}`,
        String(r.saves),
      ]),
    ]),
  );
  for (const r of rows) {
    console.log(`${r.mode}: library page loads ${r.bytes.files.join(', ')}${r.bytes.readerOnPage ? ' (the reader bundle too!)' : ''}`);
    const verdicts = [
      [`/library p99 ${fmt(r.page.p99, 1)} ms < 50 ms`, r.page.p99 < 50],
      [`FCP ${fmt(r.fcpCold, 0)} ms < 1000 ms`, r.fcpCold < 1000],
      [`JS+CSS ${kb(r.bytes.gzip)} KB gzip < 100 KB`, r.bytes.gzip < 100 * 1024 && !r.bytes.readerOnPage],
      [`reader opens in ${fmt(r.readerCold, 0)} ms < 1500 ms`, r.readerCold < 1500],
      [`one PUT per save (${r.saves})`, r.saves === 1],
    ] as const;
    for (const [what, ok] of verdicts) console.log(`  ${ok ? 'met' : 'MISSED'}: ${what}`);
  }
  console.log(
    `\n${table([
      [
        'mode',
        '/series p50 / p99 ms',
        '/series req/s',
        `series page (${SAGA} books) p50 / p99 ms`,
        'series page req/s',
        'FCP cold /series / series page ms',
        `bulk edit of ${Math.min(1000, BOOKS)} until the grid counts them ms`,
      ],
      ...rows.map((r) => [
        r.mode,
        `${fmt(r.seriesList.p50, 1)} / ${fmt(r.seriesList.p99, 1)}`,
        fmt(r.seriesList.rps, 0),
        `${fmt(r.seriesPage.p50, 1)} / ${fmt(r.seriesPage.p99, 1)}`,
        fmt(r.seriesPage.rps, 0),
        `${fmt(r.seriesListFcp, 0)} / ${fmt(r.seriesPageFcp, 0)}`,
        fmt(r.bulkMs, 0),
      ]),
    ])}`,
  );
  for (const r of rows) {
    const verdicts = [
      [`/series FCP ${fmt(r.seriesListFcp, 0)} ms < 1000 ms`, r.seriesListFcp < 1000],
      [`series page FCP ${fmt(r.seriesPageFcp, 0)} ms < 1000 ms`, r.seriesPageFcp < 1000],
      [`/series p99 ${fmt(r.seriesList.p99, 1)} ms < 50 ms`, r.seriesList.p99 < 50],
      [`series page p99 ${fmt(r.seriesPage.p99, 1)} ms < 50 ms`, r.seriesPage.p99 < 50],
      [`bulk edit visible in ${fmt(r.bulkMs, 0)} ms < 5000 ms`, r.bulkMs < 5000],
    ] as const;
    console.log(`${r.mode}, curation:`);
    for (const [what, ok] of verdicts) console.log(`  ${ok ? 'met' : 'MISSED'}: ${what}`);
  }
});
