// `pnpm bench:read`: the read side in one run (issue 7). A 10,000-item library (real books from
// make-corpus.sh plus generated small files), scanned by Bindery in embedded and in distributed
// mode, then at 16 connections: the list page, search with a fuzzy author filter and with free
// text, the profile against a bare fastify route, and calibre-server's 30-book OPDS page as the
// reference; plus the embedded process's start times and memory. A benchmark, not a test: it
// prints verdicts and never fails on them.
//
// Steps (BENCH_STEPS, comma-separated; default calibre,embedded,distributed,memory):
//   calibre      calibre.sh bench of calibre-server's by-title OPDS page (the real books imported)
//   embedded     embedded Bindery: scan the library, then the reads
//   distributed  identity, catalog, gateway processes on a fresh Postgres database and a private
//                nats-server: scan the library, then the reads
//   memory       embedded: first start and restart times, idle RSS after a restart (empty and with
//                the library), RSS after the scan (shares the embedded instance when both run)
//   grow         after the reads, a second library takes each mode to BENCH_ITEMS_LARGE items
//                (generated), and the list and author search are measured again (BENCH_100K=1 adds it;
//                BENCH_GROW_MODES limits it to some modes)
//
// Knobs: BENCH_QUICK=1 (1,000 items, 50 real, 5 s per measurement, 1 s warm-up, one calibre run;
// growth to 10,000), BENCH_ITEMS (10000), BENCH_REAL_BOOKS (400), BENCH_ITEMS_LARGE (100000),
// BENCH_SEED (7), BENCH_DURATION (10), BENCH_WARMUP (2), BENCH_CONNECTIONS (16), BENCH_ROUNDS (1),
// BENCH_QUIET_WAIT seconds per measurement (5), BENCH_SETTLE_MAX seconds to wait after a scan until
// Bindery and its PostgreSQL are idle (900), BENCH_CALIBRE_RUNS (3),
// BENCH_READ_DIR (test/.tmp/bench-read: corpora and calibre's library, kept between runs),
// BENCH_EMBEDDED_START (the embedded command, "node …" or "tsx …"; default the root start script),
// BENCH_DEADLINE_MINUTES (90).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';
import { BENCH, envNumber, fmt, machine, runWithDeadline, startLoadGen, startRef, table, waitForOwnIdle } from './lib';
import { calibreAbsent, calibreOpdsPage, type CalibreOpds } from './read-calibre';
import { ensureGrowth, ensureReadCorpus } from './read-corpus';
import { embeddedBench, startCommand } from './read-embedded';
import { GROWTH_KEYS, loadCfgFromEnv, modeReads, type ReadGen } from './read-load';
import type { ReadJob, ReadMeasured } from './read-load-worker';
import { formatValue, TARGETS, verdicts, type MemoryResult, type ModeResult } from './read-report';
import { fullScan, startInstance, type Instance, type ScanMeasure } from './scan-bindery';

const num = envNumber;
const QUICK = process.env.BENCH_QUICK === '1';
const STEPS = ['calibre', 'embedded', 'distributed', 'memory', 'grow'] as const;
type Step = (typeof STEPS)[number];
const defaultSteps = `calibre,embedded,distributed,memory${process.env.BENCH_100K === '1' ? ',grow' : ''}`;
const CFG = {
  quick: QUICK,
  items: Math.max(100, num('BENCH_ITEMS', QUICK ? 1000 : 10_000)),
  realBooks: num('BENCH_REAL_BOOKS', QUICK ? 50 : 400),
  largeItems: num('BENCH_ITEMS_LARGE', QUICK ? 10_000 : 100_000),
  seed: num('BENCH_SEED', 7),
  steps: (process.env.BENCH_STEPS ?? defaultSteps)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as Step[],
  load: loadCfgFromEnv(QUICK),
  calibreRuns: Math.max(1, num('BENCH_CALIBRE_RUNS', QUICK ? 1 : 3)),
  dir: process.env.BENCH_READ_DIR ?? join(ROOT, 'test/.tmp/bench-read'),
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 90),
  targets: TARGETS,
};
for (const s of CFG.steps) if (!STEPS.includes(s)) throw new Error(`BENCH_STEPS: unknown step ${s} (known: ${STEPS.join(', ')})`);
if (CFG.realBooks >= CFG.items) throw new Error('BENCH_REAL_BOOKS must be below BENCH_ITEMS');
const want = (s: Step) => CFG.steps.includes(s);
const growModes = (process.env.BENCH_GROW_MODES ?? 'embedded,distributed').split(',').map((x) => x.trim());

/** A stop that may be called both in order and again by the final clean-up. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | null = null;
  return () => (p ??= fn());
}

/** Items the catalog lists as active (the search's total), to report what was really scanned. */
async function activeItems(inst: Instance): Promise<number> {
  const r = await inst.call('GET', '/api/media-items/search?limit=1', { token: inst.token });
  if (r.status !== 200) throw new Error(`search total: ${r.status} ${r.text}`);
  return Number(r.json.total);
}

async function scanned(inst: Instance, folder: string, name: string): Promise<{ scan: ScanMeasure; items: number; readModelSeconds: number }> {
  console.log(`  scanning ${folder} …`);
  const before = await activeItems(inst);
  const scan = await fullScan(inst, folder, name);
  if (scan.status !== 'completed') throw new Error(`${inst.mode} scan ${scan.status}: ${scan.error}`);
  // the reads are measured once the gateway's read model holds every item the scan added: a read
  // model still folding the scan's events would be what the figures measure
  const expected = before + (scan.counts.added ?? 0) + (scan.counts.relinked ?? 0) - (scan.counts.removed ?? 0);
  const t0 = performance.now();
  let items = await activeItems(inst);
  for (let last = items, still = performance.now(); items < expected; ) {
    await new Promise((r) => setTimeout(r, 1000));
    items = await activeItems(inst);
    if (items !== last) [last, still] = [items, performance.now()];
    else if (performance.now() - still > 120_000) throw new Error(`${inst.mode}: the read model stopped at ${items} of ${expected} items`);
  }
  const readModelSeconds = (performance.now() - t0) / 1000;
  if (readModelSeconds > 1) console.log(`  the read model held all ${expected} items ${fmt(readModelSeconds, 1)} s after the scan`);
  // and once what the scan left behind is done (the locator-index pass, PostgreSQL's autovacuum):
  // reads measured during it measure that work (BENCH_SETTLE_MAX seconds at most, 900)
  const settled = await waitForOwnIdle(inst.roles, envNumber('BENCH_SETTLE_MAX', 900) * 1000);
  console.log(
    `  ${settled.idle ? 'idle' : `still busy (${settled.busy} cores)`} ${fmt(readModelSeconds + settled.waitedMs / 1000, 1)} s after the scan (Bindery's processes and its PostgreSQL together)`,
  );
  console.log(
    `  scan: ${fmt(scan.wallSeconds, 1)} s (server ${fmt(scan.serverSeconds, 1)} s), covers done at ${scan.after ? fmt(scan.after.settledSeconds, 1) : '-'} s; ${items} active items; counts ${JSON.stringify(scan.counts)}`,
  );
  return { scan, items, readModelSeconds };
}

/** The catalog's scan record without the RSS series (kept in full only for the JSON's raw part). */
const brief = (s: ScanMeasure) => ({ ...s, rss: { ...s.rss, series: [] }, threads: [] });

async function main(): Promise<void> {
  // the generated library lives under the bench folder, which is no default library root
  process.env.LIBRARY_ROOTS ??= CFG.dir;
  const started = new Date();
  const m = machine();
  console.log(`bench:read on ${m.nproc} × ${m.cpu}, ${m.memoryGiB} GiB, node ${m.node}, git ${m.git}`);
  console.log(
    `bench:read: steps ${CFG.steps.join(', ')}; ${CFG.items} items (${CFG.realBooks} real); ${CFG.load.duration} s per measurement after ${CFG.load.warmup} s warm-up, ${CFG.load.connections} connections, ${CFG.load.rounds} round(s)${QUICK ? '; QUICK' : ''}`,
  );
  mkdirSync(CFG.dir, { recursive: true });
  const corpus = await ensureReadCorpus(CFG.dir, CFG.items, CFG.realBooks, CFG.seed);
  const growth = want('grow') && CFG.largeItems > CFG.items ? ensureGrowth(CFG.dir, CFG.seed, corpus.nextIndex, corpus.nextIndex + CFG.largeItems - CFG.items) : null;
  const result: Record<string, unknown> = {
    started: started.toISOString(),
    machine: m,
    config: CFG,
    corpus: { ...corpus, real: corpus.real && { dir: corpus.real.dir, books: corpus.real.books, summary: corpus.real.summary } },
    growth,
  };

  let calibre: CalibreOpds | null = null;
  let absent: string | null = null;
  if (want('calibre')) {
    absent = (await calibreAbsent()) ?? (corpus.real ? null : `no real books to import (${corpus.realAbsent})`);
    if (!absent) {
      console.log(`\ncalibre-server's OPDS page, ${CFG.calibreRuns} × 10 s at 16 connections (wrk) …`);
      try {
        calibre = await calibreOpdsPage(CFG.dir, corpus.real!.dir, CFG.calibreRuns);
        console.log(
          `  calibre ${calibre.version}: ${calibre.books} books, ${calibre.entriesOnPage} on the page; ${fmt(calibre.rps, 1)} req/s (runs ${calibre.runs.map((r) => fmt(r.rps, 1)).join(' / ')}), p50 ${fmt(calibre.p50, 1)} ms, p99 ${fmt(calibre.p99, 1)} ms`,
        );
      } catch (e) {
        absent = e instanceof Error ? e.message : String(e);
      }
    }
    if (absent) console.log(`  calibre: absent: ${absent}`);
  }
  result.calibre = calibre ?? { absent };

  const stops: (() => Promise<void>)[] = [];
  const errors: Record<string, string> = {};
  /** A mode that fails is reported as failed; the others still run and the report is still written. */
  const step = async (name: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (e) {
      errors[name] = e instanceof Error ? (e.stack ?? e.message) : String(e);
      console.error(`bench:read: ${name} failed: ${errors[name]}`);
    }
  };
  const modes: Record<string, ModeResult> = {};
  let memory: MemoryResult | null = null;
  try {
    const gen: ReadGen = await startLoadGen<ReadJob, ReadMeasured>(join(BENCH, 'read-load-worker.ts'));
    stops.push(() => gen.stop());
    const ref = await startRef();
    stops.push(() => ref.stop());
    const refTarget = { url: ref.url, pid: ref.child.pid! };

    if (want('embedded') || want('memory')) {
      await step('embedded', async () => {
        console.log(`\nembedded (as \`pnpm start\`: node ${startCommand().args.join(' ')})`);
        result.embeddedStart = startCommand().script;
        const eb = await embeddedBench();
        const destroy = once(() => eb.destroy());
        stops.push(destroy);
        const firstStart = await eb.start();
        const firstIdle = await eb.idle(20);
        console.log(`  first start: /readyz after ${fmt(firstStart.readySeconds, 2)} s; idle RSS ${firstIdle.rssMiB} MiB`);
        const restartEmpty = await eb.restart();
        const idleEmpty = await eb.idle(20);
        console.log(
          `  restart (empty): /readyz after ${fmt(restartEmpty.readySeconds, 2)} s, list after ${fmt(restartEmpty.listSeconds ?? NaN, 2)} s; idle RSS ${idleEmpty.rssMiB} MiB`,
        );
        const { scan, items } = await scanned(eb.inst, corpus.dir, 'bench-read');
        const afterScan = await eb.idle(30);
        console.log(`  after the scan: RSS ${afterScan.rssMiB} MiB (VmHWM ${afterScan.hwmMiB})`);
        memory = { firstStart, firstIdle, restartEmpty, idleEmpty, afterScan, items };
        const mode: ModeResult = { items, scan, reads: null };
        modes.embedded = mode;
        if (want('embedded'))
          mode.reads = await modeReads(
            gen,
            CFG.load,
            { url: eb.inst.b.url, token: eb.inst.token, roles: eb.inst.roles, login: { username: 'bench_read', password: 'passw0rd-123' } },
            refTarget,
            items,
          );
        if (want('memory')) {
          await eb.idle(60); // requests the load generator gave up on may still be running
          memory.restartFull = await eb.restart();
          memory.idleFull = await eb.idle(30);
          console.log(
            `  restart (${items} items): /readyz after ${fmt(memory.restartFull.readySeconds, 2)} s, list after ${fmt(memory.restartFull.listSeconds ?? NaN, 2)} s; idle RSS ${memory.idleFull.rssMiB} MiB`,
          );
        }
        if (growth && want('embedded') && growModes.includes('embedded')) {
          const g = await scanned(eb.inst, growth.dir, 'bench-read-growth');
          mode.grown = {
            items: g.items,
            scan: g.scan,
            reads: await modeReads(
              gen,
              CFG.load,
              { url: eb.inst.b.url, token: eb.inst.token, roles: eb.inst.roles, login: { username: 'bench_read', password: 'passw0rd-123' } },
              refTarget,
              g.items,
              GROWTH_KEYS,
            ),
          };
          // the grown library after a restart: how soon the list answers, and the idle memory
          await eb.idle(60);
          const restart = await eb.restart();
          const idle = await eb.idle(30);
          mode.grown.restart = restart;
          mode.grown.idle = idle;
          console.log(
            `  restart (${g.items} items): /readyz after ${fmt(restart.readySeconds, 2)} s, list after ${fmt(restart.listSeconds ?? NaN, 2)} s; idle RSS ${idle.rssMiB} MiB (VmHWM ${idle.hwmMiB})`,
          );
        }
        await destroy();
      });
    }

    if (want('distributed')) {
      await step('distributed', async () => {
        console.log('\ndistributed');
        const inst = await startInstance('distributed');
        const stop = once(() => inst.stop());
        stops.push(stop);
        const { scan, items } = await scanned(inst, corpus.dir, 'bench-read');
        const mode: ModeResult = {
          items,
          scan,
          reads: await modeReads(
            gen,
            CFG.load,
            { url: inst.b.url, token: inst.token, roles: inst.roles, login: { username: `bench_${inst.mode}`, password: 'passw0rd-123' } },
            refTarget,
            items,
          ),
        };
        modes.distributed = mode;
        if (growth && growModes.includes('distributed')) {
          const g = await scanned(inst, growth.dir, 'bench-read-growth');
          mode.grown = {
            items: g.items,
            scan: g.scan,
            reads: await modeReads(
              gen,
              CFG.load,
              { url: inst.b.url, token: inst.token, roles: inst.roles, login: { username: `bench_${inst.mode}`, password: 'passw0rd-123' } },
              refTarget,
              g.items,
              GROWTH_KEYS,
            ),
          };
        }
        await stop();
      });
    }
  } finally {
    for (const s of stops.reverse()) await s().catch((e: unknown) => console.error('bench:read: stop failed:', e));
  }

  // ---- report ------------------------------------------------------------------------------
  const rows = verdicts(calibre, want('calibre') ? absent : null, modes, memory);
  const lines = [['measurement', 'mode', 'measured', 'reference (same run)', 'ratio', 'target', '']];
  for (const r of rows)
    lines.push([r.measurement, r.mode, formatValue(r), r.reference, r.ratio, r.target, r.verdict === 'absent' ? `absent: ${(r.note ?? '').slice(0, 110)}` : r.verdict]);
  const failures = Object.entries(modes).flatMap(([k, x]) =>
    Object.entries(x.reads?.summary ?? {})
      .filter(([, s]) => s.failures > 0)
      .map(([r, s]) => `${k} ${r}: ${s.failures} failed`),
  );
  const noisy = Object.entries(modes).flatMap(([k, x]) =>
    Object.entries(x.reads?.summary ?? {})
      .filter(([, s]) => s.noisyRounds > 0)
      .map(([r]) => `${k} ${r}`),
  );
  const scans = Object.entries(modes).map(
    ([k, x]) =>
      `${k}: ${x.items} items scanned in ${fmt(x.scan?.wallSeconds ?? NaN, 1)} s, covers done at ${fmt(x.scan?.after?.settledSeconds ?? NaN, 1)} s${x.grown ? `; grown to ${x.grown.items} in ${fmt(x.grown.scan.wallSeconds, 1)} s` : ''}`,
  );
  const wallSeconds = Math.round((Date.now() - started.getTime()) / 1000);
  console.log(`\n${scans.join('\n')}`);
  if (noisy.length) console.log(`disturbed by other processes (> ${CFG.load.noisyCores} cores outside this run): ${noisy.join(', ')}`);
  if (failures.length) console.log(`FAILED REQUESTS: ${failures.join('; ')}`);
  for (const [k, e] of Object.entries(errors)) console.log(`STEP FAILED: ${k}: ${e.split('\n')[0]}`);
  console.log('\n' + table(lines));

  const outDir = join(BENCH, 'results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `read-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  const summary = Object.fromEntries(
    Object.entries(modes).map(([k, x]) => [
      k,
      {
        items: x.items,
        scan: x.scan && brief(x.scan),
        reads: x.reads && { summary: x.reads.summary, profileVsBare: x.reads.profileVsBare, profileVsBareRounds: x.reads.profileVsBareRounds, queries: x.reads.queries },
        grown: x.grown && { items: x.grown.items, scan: brief(x.grown.scan), summary: x.grown.reads.summary },
      },
    ]),
  );
  writeFileSync(
    file,
    JSON.stringify(
      {
        ...result,
        wallSeconds,
        verdicts: rows,
        modes: summary,
        memory,
        failures,
        noisy,
        errors,
        raw: Object.fromEntries(Object.entries(modes).map(([k, x]) => [k, { rows: x.reads?.rows, grownRows: x.grown?.reads.rows, rssSeries: x.scan?.rss.series }])),
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`\nresults: ${file}`);
  console.log(`wall time ${wallSeconds} s`);
}

await runWithDeadline('bench:read', CFG.deadlineMinutes * 60_000, main);
