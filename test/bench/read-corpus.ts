// The read benchmark's library: real books from ../shared/peers/make-corpus.sh (pandoc, calibre,
// ImageMagick) plus generated small files for volume (gen-library.ts), in one folder so a single
// Bindery library holds both. Made once and kept under BENCH_READ_DIR (test/.tmp/bench-read).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGenerated, type GenSummary } from './gen-library';
import { PEERS } from './scan-corpus';

export interface RealBooks {
  dir: string;
  books: number;
  summary: Record<string, unknown>;
}

export interface ReadCorpus {
  /** the library's one folder: real/ and gen/ under it */
  dir: string;
  items: number;
  real: RealBooks | null;
  /** why there are no real books, when there are none */
  realAbsent?: string;
  gen: GenSummary;
  /** generated items are numbered from 0; the first one not in this library (where growth starts) */
  nextIndex: number;
}

/** Runs make-corpus.sh unless `dir` already holds a finished corpus; throws with its output when it fails. */
async function makeReal(n: number, dir: string, seed: number): Promise<RealBooks> {
  const summaryFile = join(dir, 'corpus-summary.json');
  if (!existsSync(summaryFile)) {
    if (existsSync(dir) && readdirSync(dir).length > 0) rmSync(dir, { recursive: true, force: true }); // an unfinished earlier attempt
    console.log(`making ${n} real books with make-corpus.sh in ${dir} (SEED=${seed} JOBS=2; about ${Math.max(1, Math.round(n / 150))} min) …`);
    const child = spawn(join(PEERS, 'make-corpus.sh'), [String(n), dir], { env: { ...process.env, SEED: String(seed), JOBS: '2' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0 || !existsSync(summaryFile)) throw new Error(`make-corpus.sh exited ${code}: ${err.trim().split('\n').slice(-4).join(' | ')}`);
  }
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as Record<string, unknown>;
  return { dir, books: Number(summary.n ?? n), summary };
}

export async function ensureReadCorpus(base: string, items: number, realBooks: number, seed: number): Promise<ReadCorpus> {
  const dir = join(base, `lib-${items}-seed${seed}-real${realBooks}`);
  let real: RealBooks | null = null;
  let realAbsent: string | undefined;
  if (realBooks > 0) {
    try {
      real = await makeReal(realBooks, join(dir, 'real'), seed);
    } catch (e) {
      realAbsent = e instanceof Error ? e.message : String(e);
      rmSync(join(dir, 'real'), { recursive: true, force: true });
      console.log(`no real books: ${realAbsent}; the library is all generated`);
    }
  } else realAbsent = 'BENCH_REAL_BOOKS=0';
  const count = items - (real?.books ?? 0);
  const t0 = performance.now();
  const gen = ensureGenerated(join(dir, 'gen'), seed, 0, count);
  const took = (performance.now() - t0) / 1000;
  console.log(
    `corpus ${dir}: ${real?.books ?? 0} real books + ${gen.files} generated (${(gen.bytes / 1e6).toFixed(1)} MB${took > 1 ? `, made in ${took.toFixed(1)} s` : ', cached'})`,
  );
  return { dir, items, real, ...(realAbsent ? { realAbsent } : {}), gen, nextIndex: count };
}

/** Generated items [from, to) in a folder of their own, EPUBs without covers: the second library that grows the first. */
export function ensureGrowth(base: string, seed: number, from: number, to: number): { dir: string; gen: GenSummary } {
  const dir = join(base, `grow-seed${seed}-${from}-${to}`);
  const t0 = performance.now();
  const gen = ensureGenerated(dir, seed, from, to, true);
  const took = (performance.now() - t0) / 1000;
  console.log(`growth ${dir}: ${gen.files} generated (${(gen.bytes / 1e6).toFixed(1)} MB${took > 1 ? `, made in ${took.toFixed(1)} s` : ', cached'})`);
  return { dir, gen };
}
