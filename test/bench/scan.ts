// `pnpm bench:scan`: how fast the catalog scanner reads a library, against references measured in
// the same run — calibre's `calibredb add` of the same corpus, coreutils sha256sum over the same
// files — plus the rescan time and the catalog's peak memory at two corpus sizes.
//
// Steps (BENCH_STEPS, comma-separated; all but `profile` by default):
//   hash         hashFile (the catalog's own) vs `xargs -0 sha256sum` over every book file, warm cache
//   stages       hashFile, extract (per format) and the cover files alone over the large corpus, in
//                this process, no database: their CPU cost, to set against the catalog's
//   calibre      calibre.sh import: calibredb add -r of the large corpus into an empty library
//   calibre-library  Bindery (distributed, then embedded unless BENCH_CALIBRE_EMBEDDED=0) given that calibre library as a library folder (issue 44:
//                metadata.db read, one item per calibre book): its full scan against the calibredb add
//                that made the library (≥ 10× faster), and the catalog's peak RSS against the plain
//                scan of the same corpus (within 1.2×); runs the calibre import itself when that step is off
//   distributed  Bindery with the catalog in its own process: full scan of the large corpus, the
//                covers the catalog renders after it, then rescans of the unchanged corpus
//   small        the same on the small corpus (peak memory at 500 vs 2,000 books)
//   embedded     one embedded process (PGlite): full scan of the large corpus and one rescan
//   profile      another distributed full scan + rescan with the V8 sampler in the catalog (slower;
//                not used for the figures): where its main thread spends the time
//
// Knobs: BENCH_CORPUS_2000 (/tmp/c2k), BENCH_CORPUS_500 (/tmp/c500) — made with make-corpus.sh
// (SEED=7 JOBS=2) when missing, or generated small EPUBs with BENCH_CORPUS=generated (seconds, not
// the hour make-corpus takes for 2,000; say which in the figures); BENCH_RESCANS (3); BENCH_HASH_RUNS (5; the first is a warm-up, the median of the rest counts);
// BENCH_QUIET_WAIT seconds before each measurement (10); BENCH_DEADLINE_MINUTES (60).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';
import { coresUsed, fmt, machine, median, runWithDeadline, snapshot, table, waitForQuiet, type Roles } from './lib';
import { calibreImport, type CalibreImport } from './scan-calibre';
import { describeCorpus, ensureCorpus, fingerprint, type Corpus } from './scan-corpus';
import { compareHashing, type HashVariant } from './scan-hash';
import { fullScan, rescan, startInstance, type ScanMeasure } from './scan-bindery';
import { analyseProfile, type ProfileSummary } from './scan-profile';
import { stageCosts, type StageCost } from './scan-stages';

const num = (name: string, dflt: number) => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};
const STEPS = ['hash', 'stages', 'calibre', 'calibre-library', 'distributed', 'small', 'embedded', 'profile'] as const;
type Step = (typeof STEPS)[number];
const CFG = {
  large: { n: 2000, dir: process.env.BENCH_CORPUS_2000 ?? join(ROOT, `test/.tmp/bench-scan/c2k${process.env.BENCH_CORPUS === 'generated' ? '-generated' : ''}`) },
  small: { n: 500, dir: process.env.BENCH_CORPUS_500 ?? join(ROOT, `test/.tmp/bench-scan/c500${process.env.BENCH_CORPUS === 'generated' ? '-generated' : ''}`) },
  generated: process.env.BENCH_CORPUS === 'generated',
  steps: (process.env.BENCH_STEPS ?? 'hash,stages,calibre,calibre-library,distributed,small,embedded')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as Step[],
  rescans: Math.max(1, num('BENCH_RESCANS', 3)),
  hashRuns: Math.max(2, num('BENCH_HASH_RUNS', 5)),
  quietWait: num('BENCH_QUIET_WAIT', 10),
  deadlineMinutes: num('BENCH_DEADLINE_MINUTES', 60),
  scanConcurrency: 4, // SCAN_CONCURRENCY's default, which the bench leaves alone
  targets: { vsCalibre: 10, hashRatio: 0.8, rescanSeconds: 2, rssGrowth: 1.2 },
};
for (const s of CFG.steps) if (!STEPS.includes(s)) throw new Error(`BENCH_STEPS: unknown step ${s} (known: ${STEPS.join(', ')})`);
const want = (s: Step) => CFG.steps.includes(s);
const OUT = join(ROOT, 'test/.tmp/bench-scan');
// the corpora live here, which is no default library root
process.env.LIBRARY_ROOTS ??= OUT;

/** Outside load (cores) while `fn` ran: processes of this run that outlive it do not count as outside. */
async function withLoad<T>(roles: Roles, fn: () => Promise<T>): Promise<{ value: T; otherCores: number }> {
  await waitForQuiet(roles, CFG.quietWait * 1000);
  const a = snapshot();
  const t0 = performance.now();
  const value = await fn();
  const cores = coresUsed(a, snapshot(), (performance.now() - t0) / 1000, roles);
  return { value, otherCores: cores.other ?? 0 };
}
const NOBODY: Roles = { pids: new Map(), databases: [] };

interface Scans {
  full: ScanMeasure;
  rescans: ScanMeasure[];
}

async function binderyRuns(mode: 'distributed' | 'embedded', corpus: Corpus, rescans: number, profileDir: string | null = null, label = `${mode}-${corpus.n}`): Promise<Scans> {
  const inst = await startInstance(mode, profileDir);
  try {
    await waitForQuiet(inst.roles, CFG.quietWait * 1000);
    const full = await fullScan(inst, corpus.dir, `${label}-full`);
    if (full.status !== 'completed') throw new Error(`${mode} full scan of ${corpus.n} ${full.status}: ${full.error}`);
    const out: ScanMeasure[] = [];
    for (let i = 0; i < rescans; i++) {
      await waitForQuiet(inst.roles, CFG.quietWait * 1000);
      out.push(await rescan(inst, full.libraryId, `${label}-rescan-${i + 1}`));
    }
    return { full, rescans: out };
  } finally {
    await inst.stop();
  }
}

const s2 = (x: number) => fmt(x, 2);
/** the RSS series at 0, 10, 25, 50, 75, 90 and 100 % of the scan's duration */
const quartiles = (series: [number, number][]) =>
  series.length === 0 ? [] : [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1].map((q) => series[Math.min(series.length - 1, Math.round(q * (series.length - 1)))]!);
const verdict = (ok: boolean | undefined) => (ok === undefined ? '' : ok ? 'MET' : 'MISSED');

async function main(): Promise<void> {
  const started = new Date();
  const m = machine();
  console.log(`bench:scan on ${m.nproc} × ${m.cpu}, ${m.memoryGiB} GiB, node ${m.node}, git ${m.git}; steps ${CFG.steps.join(', ')}`);
  const tmp = mkdtempSync(join(tmpdir(), 'bindery-bench-scan-'));
  const cleanups = [tmp];
  mkdirSync(OUT, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  try {
    const needSmall = want('small');
    await ensureCorpus(CFG.large.n, CFG.large.dir, CFG.generated);
    if (needSmall) await ensureCorpus(CFG.small.n, CFG.small.dir, CFG.generated);
    const large = await describeCorpus(CFG.large.n, CFG.large.dir);
    const small = needSmall ? await describeCorpus(CFG.small.n, CFG.small.dir) : null;
    const prints = { large: await fingerprint(large.dir), small: small ? await fingerprint(small.dir) : '' };
    for (const c of [large, small]) {
      if (!c) continue;
      const formats = Object.entries(c.byFormat)
        .map(([f, x]) => `${f} ${x.files} (${fmt(x.bytes / 1e6, 1)} MB)`)
        .join(', ');
      console.log(
        `corpus ${c.dir}: n=${String(c.summary.n)} seed=${String(c.summary.seed)}, ${c.files.length} book files, ${fmt(c.bookBytes / 1e6, 1)} MB (${fmt(c.allBytes / 1e6, 1)} MB in all): ${formats}`,
      );
    }

    const result: Record<string, unknown> = { started: started.toISOString(), machine: m, config: CFG };
    result.corpora = Object.fromEntries(
      [large, small]
        .filter((c): c is Corpus => c !== null)
        .map((c) => [c.n, { dir: c.dir, summary: c.summary, bookFiles: c.files.length, bookBytes: c.bookBytes, allBytes: c.allBytes, byFormat: c.byFormat }]),
    );

    let hashing: { variants: HashVariant[]; otherCores: number } | undefined;
    if (want('hash')) {
      console.log(`\nhashing ${large.files.length} files, ${CFG.hashRuns} runs each …`);
      const r = await withLoad(NOBODY, () =>
        compareHashing(
          large.files.map((f) => f.abs),
          large.bookBytes,
          tmp,
          CFG.hashRuns,
          CFG.scanConcurrency,
        ),
      );
      hashing = { variants: r.value, otherCores: r.otherCores };
      result.hashing = hashing;
    }

    let stages: { costs: StageCost[]; otherCores: number } | undefined;
    if (want('stages')) {
      console.log(`\nthe scanner's file stages alone over ${large.files.length} files …`);
      const r = await withLoad(NOBODY, () => stageCosts(large.files, join(tmp, 'covers'), CFG.scanConcurrency));
      stages = { costs: r.value, otherCores: r.otherCores };
      result.stages = stages;
    }

    let calibre: (CalibreImport & { otherCores: number }) | undefined;
    // the calibre library lives under the library roots (a Bindery library in the calibre-library step)
    const calibreDir = join(OUT, `calibre-${stamp}`);
    cleanups.push(calibreDir);
    if (want('calibre') || want('calibre-library')) {
      console.log(`\ncalibredb add -r of ${large.dir} …`);
      const r = await withLoad(NOBODY, () => calibreImport(large.dir, calibreDir));
      calibre = { ...r.value, otherCores: r.otherCores };
      result.calibre = calibre;
      console.log(`calibre: ${calibre.seconds} s, ${calibre.books} books, ${calibre.cpuSeconds} CPU s`);
    }
    let calibreLibrary: Scans | undefined;
    if (want('calibre-library') && calibre) {
      console.log(`\nBindery distributed: the calibre library of ${calibre.books} books as a library + 1 rescan …`);
      calibreLibrary = await binderyRuns('distributed', { ...large, dir: join(calibreDir, 'calibre-lib') }, 1, process.env.BENCH_CALIBRE_PROFILE_DIR ?? null, `calibre-${large.n}`);
      console.log(
        `  full ${s2(calibreLibrary.full.serverSeconds)} s (wall ${s2(calibreLibrary.full.wallSeconds)}), counts ${JSON.stringify(calibreLibrary.full.counts)}, rescan ${s2(calibreLibrary.rescans[0]!.serverSeconds)} s`,
      );
      result.calibreLibrary = calibreLibrary;
    }
    // the same calibre library in the embedded mode (one process: the self-hoster's default)
    let calibreLibraryEmbedded: Scans | undefined;
    if (want('calibre-library') && calibre && process.env.BENCH_CALIBRE_EMBEDDED !== '0') {
      console.log(`\nBindery embedded: the calibre library of ${calibre.books} books as a library + 1 rescan …`);
      calibreLibraryEmbedded = await binderyRuns('embedded', { ...large, dir: join(calibreDir, 'calibre-lib') }, 1, null, `calibre-embedded-${large.n}`);
      console.log(
        `  full ${s2(calibreLibraryEmbedded.full.serverSeconds)} s (wall ${s2(calibreLibraryEmbedded.full.wallSeconds)}), rescan ${s2(calibreLibraryEmbedded.rescans[0]!.serverSeconds)} s`,
      );
      result.calibreLibraryEmbedded = calibreLibraryEmbedded;
    }

    const runs: Record<string, Scans> = {};
    const plan: [string, 'distributed' | 'embedded', Corpus | null, number][] = [
      ['distributed', 'distributed', large, CFG.rescans],
      ['small', 'distributed', small, 1],
      ['embedded', 'embedded', large, 1],
    ];
    for (const [step, mode, corpus, n] of plan) {
      if (!want(step as Step) || !corpus) continue;
      console.log(`\nBindery ${mode}: full scan of ${corpus.n} + ${n} rescan(s) …`);
      runs[`${mode}_${corpus.n}`] = await binderyRuns(mode, corpus, n);
      const r = runs[`${mode}_${corpus.n}`]!;
      console.log(
        `  full ${s2(r.full.serverSeconds)} s (wall ${s2(r.full.wallSeconds)}, covers done at ${r.full.after ? s2(r.full.after.settledSeconds) : '-'}), rescans ${r.rescans.map((x) => s2(x.serverSeconds)).join(' / ')} s, catalog VmHWM ${r.full.rss.hwmAfterMiB} MiB`,
      );
    }
    if (calibreLibrary) runs[`calibre-library_${large.n}`] = calibreLibrary;
    result.scans = runs;

    let profile: Record<string, ProfileSummary> | undefined;
    if (want('profile')) {
      // BENCH_PROFILE_MODE=embedded profiles the one embedded process instead (every service's work on its main thread)
      const mode = process.env.BENCH_PROFILE_MODE === 'embedded' ? 'embedded' : 'distributed';
      console.log(`\nprofiled run (${mode}, ${large.n}) …`);
      const dir = join(OUT, `profiles-${stamp}`);
      const r = await binderyRuns(mode, large, 1, dir);
      profile = {};
      for (const [k, s] of [
        ['full', r.full],
        ['rescan', r.rescans[0]!],
      ] as const)
        if (s.profile) profile[k] = { ...analyseProfile(s.profile), file: s.profile } as ProfileSummary;
      result.profile = { scans: r, summaries: profile };
    }

    const after = { large: await fingerprint(large.dir), small: small ? await fingerprint(small.dir) : '' };
    const untouched = after.large === prints.large && after.small === prints.small;
    if (!untouched) console.warn('WARNING: the corpus changed during the run (paths, sizes or mtimes)');
    result.corpusUntouched = untouched;

    // ---- report ----------------------------------------------------------------------------
    const dist = runs[`distributed_${large.n}`];
    const distSmall = small ? runs[`distributed_${small.n}`] : undefined;
    const emb = runs[`embedded_${large.n}`];
    const T = CFG.targets;
    const verdicts: Record<string, { value: number; target: string; met: boolean }> = {};
    const lines: string[][] = [['measurement', 'value', 'reference', 'ratio', 'target', '']];

    if (dist && calibre) {
      const ratio = calibre.seconds / dist.full.wallSeconds;
      verdicts.fullScanVsCalibre = { value: ratio, target: `≥ ${T.vsCalibre}×`, met: ratio >= T.vsCalibre };
      lines.push([
        `full scan, ${large.n} books (distributed, wall)`,
        `${s2(dist.full.wallSeconds)} s`,
        `calibredb add ${s2(calibre.seconds)} s`,
        `${fmt(ratio, 1)}× faster`,
        `≥ ${T.vsCalibre}×`,
        verdict(ratio >= T.vsCalibre),
      ]);
    } else if (dist) lines.push([`full scan, ${large.n} books (distributed, wall)`, `${s2(dist.full.wallSeconds)} s`, '', '', '', '']);
    if (dist)
      lines.push([
        `  same, server side (finished − started)`,
        `${s2(dist.full.serverSeconds)} s`,
        '',
        calibre ? `${fmt(calibre.seconds / dist.full.serverSeconds, 1)}×` : '',
        '',
        '',
      ]);
    // covers are made after the scan reports completion; calibredb add stores each cover as it goes
    const settledRow = (what: string, x: Scans | undefined) => {
      if (!x?.full.after) return;
      const a = x.full.after.settledSeconds;
      lines.push([what, `${s2(a)} s`, calibre ? `calibredb add ${s2(calibre.seconds)} s` : '', calibre ? `${fmt(calibre.seconds / a, 1)}×` : '', '', '']);
    };
    settledRow(`  same, until covers are rendered`, dist);
    if (hashing) {
      const [sum, one, many] = hashing.variants;
      const ratio = sum!.warmSeconds / one!.warmSeconds;
      verdicts.hashThroughput = { value: ratio, target: `≥ ${T.hashRatio}`, met: ratio >= T.hashRatio };
      lines.push([
        `hashing, hashFile one at a time`,
        `${fmt(one!.mbPerSecond, 0)} MB/s`,
        `sha256sum ${fmt(sum!.mbPerSecond, 0)} MB/s`,
        fmt(ratio, 2),
        `≥ ${T.hashRatio}`,
        verdict(ratio >= T.hashRatio),
      ]);
      // how the scanner calls it (SCAN_CONCURRENCY files at once), against the same single sha256sum
      const ratioMany = sum!.warmSeconds / many!.warmSeconds;
      verdicts.hashThroughputScannerConcurrency = { value: ratioMany, target: `≥ ${T.hashRatio}`, met: ratioMany >= T.hashRatio };
      lines.push([
        `  hashFile, ${CFG.scanConcurrency} in flight (as the scanner)`,
        `${fmt(many!.mbPerSecond, 0)} MB/s`,
        'same',
        fmt(ratioMany, 2),
        `≥ ${T.hashRatio}`,
        verdict(ratioMany >= T.hashRatio),
      ]);
    }
    if (dist) {
      const med = median(dist.rescans.map((r) => r.serverSeconds));
      verdicts.rescan = { value: med, target: `< ${T.rescanSeconds} s`, met: med < T.rescanSeconds };
      lines.push([
        `rescan, unchanged ${large.n} (median of ${dist.rescans.length})`,
        `${s2(med)} s`,
        `wall ${s2(median(dist.rescans.map((r) => r.wallSeconds)))} s`,
        '',
        `< ${T.rescanSeconds} s`,
        verdict(med < T.rescanSeconds),
      ]);
    }
    const peak = (s: Scans) => Math.max(s.full.rss.hwmAfterMiB, s.full.rss.peakSampledMiB);
    if (dist && distSmall) {
      const ratio = peak(dist) / peak(distSmall);
      verdicts.rssGrowth = { value: ratio, target: `≤ ${T.rssGrowth}`, met: ratio <= T.rssGrowth };
      lines.push([
        `catalog peak RSS, ${large.n} books`,
        `${fmt(peak(dist), 0)} MiB`,
        `${small!.n} books: ${fmt(peak(distSmall), 0)} MiB`,
        fmt(ratio, 2),
        `≤ ${T.rssGrowth}`,
        verdict(ratio <= T.rssGrowth),
      ]);
    }
    if (calibreLibrary && calibre) {
      const ratio = calibre.seconds / calibreLibrary.full.wallSeconds;
      verdicts.calibreLibraryVsCalibre = { value: ratio, target: `≥ ${T.vsCalibre}×`, met: ratio >= T.vsCalibre };
      lines.push([
        `calibre library of ${calibre.books} books (distributed, wall)`,
        `${s2(calibreLibrary.full.wallSeconds)} s`,
        `calibredb add ${s2(calibre.seconds)} s`,
        `${fmt(ratio, 1)}× faster`,
        `≥ ${T.vsCalibre}×`,
        verdict(ratio >= T.vsCalibre),
      ]);
      settledRow(`  same, until covers are rendered`, calibreLibrary);
      if (dist) {
        const r = peak(calibreLibrary) / peak(dist);
        verdicts.calibreLibraryRss = { value: r, target: `≤ ${T.rssGrowth}`, met: r <= T.rssGrowth };
        lines.push([
          `  catalog peak RSS`,
          `${fmt(peak(calibreLibrary), 0)} MiB`,
          `plain scan of the corpus: ${fmt(peak(dist), 0)} MiB`,
          fmt(r, 2),
          `≤ ${T.rssGrowth}`,
          verdict(r <= T.rssGrowth),
        ]);
      } else lines.push([`  catalog peak RSS`, `${fmt(peak(calibreLibrary), 0)} MiB`, '', '', '', '']);
      lines.push([`  rescan, unchanged calibre library`, `${s2(calibreLibrary.rescans[0]!.serverSeconds)} s`, '', '', '', '']);
    }
    if (calibreLibraryEmbedded && calibre) {
      const ratio = calibre.seconds / calibreLibraryEmbedded.full.wallSeconds;
      verdicts.calibreLibraryEmbeddedVsCalibre = { value: ratio, target: `≥ ${T.vsCalibre}×`, met: ratio >= T.vsCalibre };
      lines.push([
        `calibre library of ${calibre.books} books (embedded, wall)`,
        `${s2(calibreLibraryEmbedded.full.wallSeconds)} s`,
        `calibredb add ${s2(calibre.seconds)} s`,
        `${fmt(ratio, 1)}× faster`,
        `≥ ${T.vsCalibre}×`,
        verdict(ratio >= T.vsCalibre),
      ]);
      lines.push([`  rescan, unchanged calibre library`, `${s2(calibreLibraryEmbedded.rescans[0]!.serverSeconds)} s`, '', '', '', '']);
    }
    if (distSmall) lines.push([`full scan, ${small!.n} books (distributed, wall)`, `${s2(distSmall.full.wallSeconds)} s`, '', '', '', '']);
    if (emb) {
      lines.push([
        `full scan, ${large.n} books (embedded, wall)`,
        `${s2(emb.full.wallSeconds)} s`,
        calibre ? `calibredb add ${s2(calibre.seconds)} s` : '',
        calibre ? `${fmt(calibre.seconds / emb.full.wallSeconds, 1)}×` : '',
        '',
        '',
      ]);
      settledRow(`  same, until the process is idle (covers)`, emb);
      lines.push([`rescan, unchanged ${large.n} (embedded)`, `${s2(emb.rescans[0]!.serverSeconds)} s`, '', '', '', '']);
      lines.push([`embedded process peak RSS, ${large.n}`, `${fmt(peak(emb), 0)} MiB`, '', '', '', '']);
    }
    console.log('\n' + table(lines));

    for (const [k, s] of Object.entries(runs)) {
      const f = s.full;
      console.log(`\n${k}: counts ${JSON.stringify(f.counts)}; queued ${s2(f.queuedSeconds)} s`);
      console.log(
        `  cores during the full scan: ${Object.entries(f.cores)
          .map(([r, c]) => `${r} ${c}`)
          .join(', ')}`,
      );
      console.log(
        `  catalog CPU s by thread: ${Object.entries(f.catalogCpuSeconds)
          .map(([r, c]) => `${r} ${c}`)
          .join(', ')}`,
      );
      if (f.after) {
        console.log(
          `  after the scan (${f.after.by}${f.after.coversReady !== undefined ? `, ${f.after.coversReady} covers ready` : ''}): settled ${s2(f.after.settledSeconds)} s after the request`,
        );
        console.log(
          `    cores: ${Object.entries(f.after.cores)
            .map(([r, c]) => `${r} ${c}`)
            .join(', ')}; catalog CPU s by thread: ${Object.entries(f.after.catalogCpuSeconds)
            .map(([r, c]) => `${r} ${c}`)
            .join(', ')}`,
        );
      }
      console.log(`  catalog threads (CPU s): ${f.threads.map((x) => `${x.comm}#${x.tid} ${x.seconds}`).join(', ')}`);
      console.log(
        `  catalog memory (scan${f.after ? ' and covers' : ''}): VmHWM ${f.rss.hwmBeforeMiB} → ${f.rss.hwmAfterMiB} MiB, sampled peak ${f.rss.peakSampledMiB} MiB (${f.rss.samples} samples)`,
      );
      console.log(
        `  peak memory since start, by process (VmHWM, MiB): ${Object.entries(f.peakByRole)
          .map(([r, m]) => `${r} ${m}`)
          .join(', ')}`,
      );
      console.log(
        `  VmRSS through it (s: MiB): ${quartiles(f.rss.series)
          .map(([t, v]) => `${t}: ${v}`)
          .join(', ')}`,
      );
      // cores over a window shorter than a second are mostly tick rounding: not shown
      for (const [i, r] of s.rescans.entries())
        console.log(
          `  rescan ${i + 1}: ${s2(r.serverSeconds)} s server, ${s2(r.wallSeconds)} s wall, counts ${JSON.stringify(r.counts)}${
            r.wallSeconds >= 1
              ? `, cores ${Object.entries(r.cores)
                  .map(([x, c]) => `${x} ${c}`)
                  .join(', ')}`
              : ''
          }`,
        );
    }
    if (stages) {
      const rows = stages.costs.map((c) => [c.stage, String(c.files), s2(c.wallSeconds), s2(c.cpu.main), s2(c.cpu.threads), s2(c.cpu.children), fmt(c.msPerFile, 1)]);
      const sum = (k: 'main' | 'threads' | 'children') => stages!.costs.reduce((a, c) => a + c.cpu[k], 0);
      rows.push(['all stages', '', s2(stages.costs.reduce((a, c) => a + c.wallSeconds, 0)), s2(sum('main')), s2(sum('threads')), s2(sum('children')), '']);
      console.log(`\nfile stages alone (${CFG.scanConcurrency} in flight, no database; outside load ${stages.otherCores} cores):`);
      console.log(table([['stage', 'files', 'wall s', 'main CPU s', 'other threads', 'children', 'CPU ms/file'], ...rows]));
      if (dist) {
        const cat = Object.values(dist.full.catalogCpuSeconds).reduce((a, b) => a + b, 0);
        const later = dist.full.after ? Object.values(dist.full.after.catalogCpuSeconds).reduce((a, b) => a + b, 0) : 0;
        console.log(
          `the catalog spent ${s2(cat)} CPU s on the full scan of ${large.n} and ${s2(later)} after it (covers); the stages alone ${s2(sum('main') + sum('threads') + sum('children'))}`,
        );
      }
    }
    if (hashing) for (const v of hashing.variants) console.log(`\n${v.what}: runs ${v.runs.map((r) => `${fmt(r.seconds, 2)} s (${r.cpuSeconds} CPU s)`).join(', ')}`);
    if (hashing) console.log(`outside load during hashing: ${hashing.otherCores} cores`);
    if (calibre)
      console.log(
        `calibre ${calibre.version}: ${calibre.seconds} s, ${calibre.books} books, CPU ${calibre.cpuSeconds} s, outside load ${calibre.otherCores} cores; log ${calibre.log}`,
      );
    if (profile) {
      for (const [k, p] of Object.entries(profile)) {
        console.log(`\n== catalog main thread, ${k} scan (profiled run): busy ${fmt(p.busySeconds, 1)} of ${fmt(p.seconds, 1)} s`);
        console.log(table([['self time by package', 'share', 'ms'], ...p.packages]));
        console.log(table([['nearest catalog function (inclusive of libraries it calls)', 'share', 'ms'], ...p.catalogSteps]));
        console.log(table([['self time by function', 'share', 'ms'], ...p.functions]));
      }
    }
    for (const [k, v] of Object.entries(verdicts)) console.log(`${k}: ${fmt(v.value, 2)} (target ${v.target}) ${verdict(v.met)}`);

    result.verdicts = verdicts;
    result.wallSeconds = Math.round((Date.now() - started.getTime()) / 1000);
    const file = join(OUT, `${stamp}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    console.log(`\nresults: ${file}\nwall time ${String(result.wallSeconds)} s`);
  } finally {
    for (const d of cleanups) rmSync(d, { recursive: true, force: true });
  }
}

await runWithDeadline('bench:scan', CFG.deadlineMinutes * 60_000, main);
