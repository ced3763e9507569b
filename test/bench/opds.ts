// `pnpm bench:opds`: the OPDS catalog on the read bench's 10,000-item library (issue 11). At 16
// connections with HTTP Basic (as reader apps sign in): a 50-entry OPDS 1.2 acquisition page (page 1
// of the library by title), every page of the library in turn, the search feed going round several
// queries, and the 50-entry OPDS 2.0 page; against calibre-server's 30-book OPDS page and a bare
// fastify route measured in the same run; plus the first (uncached) render of 20 different pages.
// Reuses the read bench's corpus, calibre peer, load worker and bare route (read-*.ts, lib.ts). A
// benchmark, not a test: it prints verdicts and never fails on them.
//
// Knobs: BENCH_OPDS_MODES (embedded; or embedded,distributed), BENCH_ITEMS (10000),
// BENCH_REAL_BOOKS (400), BENCH_SEED (7), BENCH_DURATION (10), BENCH_WARMUP (2),
// BENCH_CONNECTIONS (16), BENCH_ROUNDS (1), BENCH_QUIET_WAIT (5), BENCH_CALIBRE_RUNS (3),
// BENCH_READ_DIR (test/.tmp/bench-read, shared with bench:read), BENCH_CORPUS_WAIT_MINUTES (60: how
// long to wait for a corpus or calibre library another run is still making), BENCH_QUICK=1
// (1,000 items, 5 s per measurement), BENCH_DEADLINE_MINUTES (60).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';
import { BENCH, envNumber, fmt, machine, runWithDeadline, startLoadGen, startRef, table, type Roles } from './lib';
import { calibreAbsent, calibreOpdsPage, type CalibreOpds } from './read-calibre';
import { ensureReadCorpus } from './read-corpus';
import { FREE_TEXT, getJobs, loadCfgFromEnv, measure, refJob, summarise, type ReadGen, type Row, type Summary } from './read-load';
import type { ReadJob, ReadMeasured } from './read-load-worker';
import { fullScan, startInstance } from './scan-bindery';

const num = envNumber;
const QUICK = process.env.BENCH_QUICK === '1';
const CFG = {
  items: Math.max(100, num('BENCH_ITEMS', QUICK ? 1000 : 10_000)),
  realBooks: num('BENCH_REAL_BOOKS', QUICK ? 50 : 400),
  seed: num('BENCH_SEED', 7),
  modes: (process.env.BENCH_OPDS_MODES ?? 'embedded').split(',').map((m) => m.trim()) as ('embedded' | 'distributed')[],
  load: loadCfgFromEnv(QUICK),
  calibreRuns: Math.max(1, num('BENCH_CALIBRE_RUNS', QUICK ? 1 : 3)),
  dir: process.env.BENCH_READ_DIR ?? join(ROOT, 'test/.tmp/bench-read'),
  corpusWaitMinutes: num('BENCH_CORPUS_WAIT_MINUTES', 60),
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 60),
};
const TARGETS = { pageRps: 2000, pageP99Ms: 50, pageVsCalibre: 30, searchP95Ms: 50 };
const PER_PAGE = 50;
const PASSWORD = 'passw0rd-123'; // startInstance's account

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running = (name: string) => {
  try {
    execFileSync('pgrep', ['-x', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/**
 * Waits while another run (bench:read) is still making the shared corpus or importing it into
 * calibre, rather than making a second copy beside it; returns when the folder is complete or no
 * one is working on it.
 */
async function waitForShared(): Promise<void> {
  const lib = join(CFG.dir, `lib-${CFG.items}-seed${CFG.seed}-real${CFG.realBooks}`);
  const complete = () =>
    (CFG.realBooks === 0 || existsSync(join(lib, 'real/corpus-summary.json'))) &&
    existsSync(join(lib, 'gen/.generated.json')) &&
    (CFG.realBooks === 0 || existsSync(join(CFG.dir, `calibre-lib-${CFG.items}-seed${CFG.seed}-real${CFG.realBooks}`, 'metadata.db')) || !running('calibredb'));
  const busy = () => running('make-corpus.sh') || running('calibredb') || running('pandoc') || running('ebook-convert');
  const until = Date.now() + CFG.corpusWaitMinutes * 60_000;
  let said = false;
  while (existsSync(lib) && !complete() && busy() && Date.now() < until) {
    if (!said) console.log(`waiting for the shared corpus in ${lib} (another run is making it) …`);
    said = true;
    await sleep(15_000);
  }
}

interface ModeOpds {
  items: number;
  scanSeconds: number;
  firstRenderMs: number[];
  rows: Record<string, Row[]>;
  summary: Record<string, Summary>;
  checks: Record<string, unknown>;
}

async function modeOpds(gen: ReadGen, mode: 'embedded' | 'distributed', corpusDir: string, ref: { url: string; pid: number }): Promise<ModeOpds> {
  console.log(`\n${mode}`);
  const inst = await startInstance(mode);
  try {
    const t0 = performance.now();
    const scan = await fullScan(inst, corpusDir, 'bench-opds');
    if (scan.status !== 'completed') throw new Error(`${mode} scan ${scan.status}: ${scan.error}`);
    const scanSeconds = (performance.now() - t0) / 1000;
    const auth = { authorization: `Basic ${Buffer.from(`bench_${mode}:${PASSWORD}`).toString('base64')}` };
    const get = async (path: string) => {
      const r = await fetch(inst.b.url + path, { headers: auth });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${text.slice(0, 300)}`);
      return text;
    };
    const lib = scan.libraryId;
    const page = (n: number) => `/opds/libraries/${lib}?page=${n}&per_page=${PER_PAGE}`;
    const first = await get(page(1));
    const entries = (first.match(/<entry>/g) ?? []).length;
    const items = Number(/<opensearch:totalResults>(\d+)</.exec(first)?.[1] ?? NaN);
    if (entries !== Math.min(PER_PAGE, items)) throw new Error(`page 1 has ${entries} entries of ${items}`);
    const pages = Math.ceil(items / PER_PAGE);
    console.log(`  scanned ${items} items in ${fmt(scanSeconds, 1)} s; the library feed has ${pages} pages of ${PER_PAGE}`);
    // the first render of 20 pages nobody asked for yet (no cached answer): what a cold page costs
    const firstRenderMs: number[] = [];
    for (let n = 2; n < 2 + Math.min(20, pages - 1); n++) {
      const s = performance.now();
      await get(page(n));
      firstRenderMs.push(performance.now() - s);
    }
    const sorted = [...firstRenderMs].sort((a, b) => a - b);
    console.log(`  first render of ${sorted.length} pages: median ${fmt(sorted[Math.floor(sorted.length / 2)] ?? NaN, 1)} ms, max ${fmt(sorted[sorted.length - 1] ?? NaN, 1)} ms`);
    const searches: string[] = [];
    for (const q of FREE_TEXT) {
      const path = `/opds/search?q=${encodeURIComponent(q)}&per_page=${PER_PAGE}`;
      const total = Number(/<opensearch:totalResults>(\d+)</.exec(await get(path))?.[1] ?? 0);
      if (total > 0) searches.push(path);
    }
    if (searches.length === 0) throw new Error('no OPDS search found anything');
    const v2 = `/opds/v2/libraries/${lib}?per_page=${PER_PAGE}`;
    const v2doc = JSON.parse(await get(v2)) as { publications: unknown[] };
    if (v2doc.publications.length !== Math.min(PER_PAGE, items)) throw new Error(`the OPDS 2.0 page has ${v2doc.publications.length} publications`);

    const cfg = CFG.load;
    const job = getJobs(cfg, auth);
    const refRoles: Roles = { pids: new Map([[ref.pid, 'ref']]), databases: [] };
    const rows: Record<string, Row[]> = {};
    const add = (k: string, r: Row) => (rows[k] ??= []).push(r);
    const allPages = Array.from({ length: pages }, (_, i) => page(i + 1));
    for (let round = 0; round < cfg.rounds; round++) {
      if (cfg.rounds > 1) console.log(` round ${round + 1}/${cfg.rounds}`);
      add('bare', await measure(gen, cfg, refRoles, refJob(ref, cfg), 'bare fastify GET /ref'));
      add('page', await measure(gen, cfg, inst.roles, job(inst.b.url + page(1)), `OPDS 1.2 page 1 (${PER_PAGE} entries)`));
      add('pages', await measure(gen, cfg, inst.roles, job(inst.b.url + page(1), allPages), `OPDS 1.2 pages 1-${pages} in turn`));
      add('search', await measure(gen, cfg, inst.roles, job(inst.b.url + searches[0]!, searches), `OPDS search (${searches.length} terms)`));
      add('v2', await measure(gen, cfg, inst.roles, job(inst.b.url + v2), `OPDS 2.0 page 1 (${PER_PAGE})`));
    }
    const summary = Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, summarise(r)]));
    return { items, scanSeconds, firstRenderMs, rows, summary, checks: { entries, pages, searches, bytesPage1: Buffer.byteLength(first) } };
  } finally {
    await inst.stop();
  }
}

async function main(): Promise<void> {
  process.env.LIBRARY_ROOTS ??= CFG.dir;
  const started = new Date();
  const m = machine();
  const load = (await import('node:os')).loadavg().map((x) => x.toFixed(2));
  console.log(`bench:opds on ${m.nproc} × ${m.cpu}, ${m.memoryGiB} GiB, node ${m.node}, git ${m.git}; load average ${load.join(' ')}`);
  console.log(
    `bench:opds: modes ${CFG.modes.join(', ')}; ${CFG.items} items (${CFG.realBooks} real); ${CFG.load.duration} s per measurement after ${CFG.load.warmup} s warm-up, ${CFG.load.connections} connections`,
  );
  mkdirSync(CFG.dir, { recursive: true });
  await waitForShared();
  const corpus = await ensureReadCorpus(CFG.dir, CFG.items, CFG.realBooks, CFG.seed);

  let calibre: CalibreOpds | null = null;
  let absent = (await calibreAbsent()) ?? (corpus.real ? null : `no real books to import (${corpus.realAbsent})`);
  if (!absent) {
    console.log(`\ncalibre-server's OPDS page, ${CFG.calibreRuns} × 10 s at 16 connections (wrk) …`);
    try {
      calibre = await calibreOpdsPage(CFG.dir, corpus.real!.dir, CFG.calibreRuns);
      console.log(
        `  calibre ${calibre.version}: ${calibre.entriesOnPage} books on the page; ${fmt(calibre.rps, 1)} req/s, p50 ${fmt(calibre.p50, 1)} ms, p99 ${fmt(calibre.p99, 1)} ms`,
      );
    } catch (e) {
      absent = e instanceof Error ? e.message : String(e);
    }
  }
  if (absent) console.log(`  calibre: absent: ${absent}`);

  const modes: Record<string, ModeOpds> = {};
  const errors: Record<string, string> = {};
  const gen: ReadGen = await startLoadGen<ReadJob, ReadMeasured>(join(BENCH, 'read-load-worker.ts'));
  const ref = await startRef();
  try {
    for (const mode of CFG.modes) {
      try {
        modes[mode] = await modeOpds(gen, mode, corpus.dir, { url: ref.url, pid: ref.child.pid! });
      } catch (e) {
        errors[mode] = e instanceof Error ? (e.stack ?? e.message) : String(e);
        console.error(`bench:opds: ${mode} failed: ${errors[mode]}`);
      }
    }
  } finally {
    await gen.stop().catch(() => {});
    await ref.stop().catch(() => {});
  }

  const lines = [['measurement', 'mode', 'measured', 'reference (same run)', 'ratio', 'target', '']];
  if (calibre)
    lines.push([`calibre-server OPDS page (${calibre.entriesOnPage} books)`, 'reference', `${fmt(calibre.rps, 1)} req/s, p99 ${fmt(calibre.p99, 1)} ms`, '', '', '', '']);
  const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
  for (const [mode, x] of Object.entries(modes)) {
    const s = x.summary;
    const bare = s.bare!;
    lines.push(['bare fastify GET /ref', mode, `${fmt(bare.rps, 0)} req/s`, '', '', '', '']);
    const p = s.page!;
    lines.push([
      `OPDS 1.2 page 1 (${PER_PAGE} entries) req/s`,
      mode,
      `${fmt(p.rps, 0)} req/s`,
      `bare ${fmt(bare.rps, 0)}`,
      `${fmt(p.rps / bare.rps, 3)} of bare`,
      `≥ ${TARGETS.pageRps}`,
      met(p.rps >= TARGETS.pageRps),
    ]);
    lines.push([`OPDS 1.2 page 1 p99`, mode, `${fmt(p.p99, 1)} ms`, '', '', `< ${TARGETS.pageP99Ms} ms`, met(p.p99 < TARGETS.pageP99Ms)]);
    lines.push([
      'OPDS page vs calibre-server',
      mode,
      `${fmt(p.rps, 0)} req/s`,
      calibre ? `calibre ${fmt(calibre.rps, 1)} req/s` : 'absent',
      calibre ? `${fmt(p.rps / calibre.rps, 1)}×` : '',
      `≥ ${TARGETS.pageVsCalibre}×`,
      calibre ? met(p.rps / calibre.rps >= TARGETS.pageVsCalibre) : 'absent',
    ]);
    const all = s.pages!;
    lines.push([`OPDS 1.2 every page in turn (${x.checks.pages} pages)`, mode, `${fmt(all.rps, 0)} req/s, p99 ${fmt(all.p99, 1)} ms`, '', '', '', '']);
    const q = s.search!;
    lines.push([
      `OPDS search feed p95 (${(x.checks.searches as string[]).length} terms)`,
      mode,
      `${fmt(q.p95, 1)} ms (${fmt(q.rps, 0)} req/s)`,
      '',
      '',
      `< ${TARGETS.searchP95Ms} ms`,
      met(q.p95 < TARGETS.searchP95Ms),
    ]);
    lines.push([`OPDS 2.0 page 1 (${PER_PAGE})`, mode, `${fmt(s.v2!.rps, 0)} req/s, p99 ${fmt(s.v2!.p99, 1)} ms`, '', '', '', '']);
    const fr = [...x.firstRenderMs].sort((a, b) => a - b);
    lines.push([
      `first render of a page (${fr.length} pages)`,
      mode,
      `median ${fmt(fr[Math.floor(fr.length / 2)] ?? NaN, 1)} ms, max ${fmt(fr[fr.length - 1] ?? NaN, 1)} ms`,
      '',
      '',
      '',
      '',
    ]);
    const noisy = Object.entries(s)
      .filter(([, v]) => v.noisyRounds > 0)
      .map(([k]) => k);
    if (noisy.length) console.log(`${mode}: disturbed by other processes (> ${CFG.load.noisyCores} cores outside this run): ${noisy.join(', ')}`);
    const failed = Object.entries(s).filter(([, v]) => v.failures > 0);
    if (failed.length) console.log(`${mode}: FAILED REQUESTS: ${failed.map(([k, v]) => `${k} ${v.failures}`).join(', ')}`);
  }
  for (const [k, e] of Object.entries(errors)) console.log(`MODE FAILED: ${k}: ${e.split('\n')[0]}`);
  const loadAfter = (await import('node:os')).loadavg().map((x) => x.toFixed(2));
  console.log(`\n${table(lines)}`);
  console.log(`load average at the start ${load.join(' ')}, at the end ${loadAfter.join(' ')}`);
  const outDir = join(BENCH, 'results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `opds-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ started: started.toISOString(), machine: m, load: { start: load, end: loadAfter }, config: CFG, calibre: calibre ?? { absent }, modes, errors }, null, 2)}\n`,
  );
  console.log(`results: ${file}`);
}

await runWithDeadline('bench:opds', CFG.deadlineMinutes * 60_000, main);
