// The corpora of `pnpm bench:scan`: made by ../shared/peers/make-corpus.sh when missing, and
// described (files the scanner reads, bytes per format) with the catalog's own crawl.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';
import { crawl, type FoundFile } from '../../services/catalog/src/scanner/crawl';

export const PEERS = join(ROOT, '../shared/peers');
export const SEED = 7;

export interface Corpus {
  n: number;
  dir: string;
  /** corpus-summary.json as make-corpus.sh wrote it */
  summary: Record<string, unknown>;
  /** every file the scanner reads, in crawl order */
  files: FoundFile[];
  bookBytes: number;
  /** every file under the folder, book or not (manifest, junk, hidden files) */
  allBytes: number;
  byFormat: Record<string, { files: number; bytes: number }>;
}

/** Makes the corpus when the folder does not exist; refuses a folder without a summary (still being made?). */
export async function ensureCorpus(n: number, dir: string): Promise<void> {
  if (existsSync(join(dir, 'corpus-summary.json'))) return;
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new Error(`${dir} has no corpus-summary.json: make-corpus.sh has not finished there (still running?), or the folder is something else`);
  }
  console.log(`making the ${n}-book corpus in ${dir} (SEED=${SEED} JOBS=2; about ${Math.ceil(n / 200)} min) …`);
  const child = spawn(join(PEERS, 'make-corpus.sh'), [String(n), dir], { env: { ...process.env, SEED: String(SEED), JOBS: '2' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0 || !existsSync(join(dir, 'corpus-summary.json'))) throw new Error(`make-corpus.sh ${n} ${dir} failed (exit ${code})`);
}

export async function describeCorpus(n: number, dir: string): Promise<Corpus> {
  const summary = JSON.parse(readFileSync(join(dir, 'corpus-summary.json'), 'utf8')) as Record<string, unknown>;
  const files = await listFiles(dir);
  const byFormat: Corpus['byFormat'] = {};
  let bookBytes = 0;
  for (const f of files) {
    const e = (byFormat[f.format] ??= { files: 0, bytes: 0 });
    e.files++;
    e.bytes += f.size;
    bookBytes += f.size;
  }
  return { n: Number(summary.n ?? n), dir, summary, files, bookBytes, allBytes: treeBytes(dir), byFormat };
}

function treeBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += treeBytes(p);
    else if (e.isFile()) total += statSync(p).size;
  }
  return total;
}

export async function listFiles(dir: string): Promise<FoundFile[]> {
  const files: FoundFile[] = [];
  for await (const f of crawl([dir], (p) => console.warn(`crawl: ${p.rel}: ${p.error}`))) files.push(f);
  return files;
}

/** Path, size and mtime of every book file: the run checks that nothing wrote into the corpus. */
export async function fingerprint(dir: string): Promise<string> {
  return (await listFiles(dir)).map((f) => `${f.rel}\t${f.size}\t${f.mtimeMs}`).join('\n');
}
