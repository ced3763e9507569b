// The corpora of `pnpm bench:scan`: made by ../shared/peers/make-corpus.sh when missing, and
// described (files the scanner reads, bytes per format) with the catalog's own crawl.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { epub, type GenBook, png } from './gen-files';
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

/**
 * Makes the corpus when the folder does not exist; refuses a folder without a summary (still being
 * made?). `generated`: n small EPUBs written here in a second (each its own title, author, series and
 * text) instead of make-corpus.sh's real mix, which takes about n/200 minutes: for a step whose
 * question is the per-book cost, not the formats (the calibre library's), on a machine without the time.
 */
export async function ensureCorpus(n: number, dir: string, generated = false): Promise<void> {
  if (existsSync(join(dir, 'corpus-summary.json'))) return;
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new Error(`${dir} has no corpus-summary.json: make-corpus.sh has not finished there (still running?), or the folder is something else`);
  }
  if (generated) {
    mkdirSync(dir, { recursive: true });
    const rnd = seeded(SEED);
    const words = ['lamp', 'river', 'stone', 'winter', 'garden', 'letter', 'harbour', 'silver', 'orchard', 'station', 'window', 'thread'];
    const pick = () => words[Math.floor(rnd() * words.length)]!;
    for (let i = 0; i < n; i++) {
      const text = Array.from({ length: 40 + Math.floor(rnd() * 200) }, () => `The ${pick()} and the ${pick()} at ${i}.`).join(' ');
      const sub = join(dir, `shelf-${String(i % 20).padStart(2, '0')}`);
      mkdirSync(sub, { recursive: true });
      const uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      // each with a cover of its own (calibredb add renders one from the first page of a book
      // without one: about a second a book, which would measure calibre's renderer, not its import)
      const book: GenBook = {
        title: `Generated Book ${i} of the ${pick()}`,
        authors: [`Author ${i % 300} ${pick()}`],
        series: `Saga ${i % 150}`,
        seriesIndex: Math.floor(i / 150) + 1,
        tags: [pick()],
        language: 'en',
        publisher: 'Generated Press',
        year: 1900 + (i % 120),
        isbn: null,
        uuid: uid,
        description: text,
        cover: png(60, 90, [i % 256, (i * 7) % 256, (i * 13) % 256], [255 - (i % 256), 128, (i * 3) % 256]),
      };
      writeFileSync(join(sub, `book-${i}.epub`), epub(book, 2));
    }
    writeFileSync(join(dir, 'corpus-summary.json'), `${JSON.stringify({ n, seed: SEED, kind: 'generated', covers: true, formats: { epub: n } })}\n`);
    return;
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

/** A small deterministic generator (mulberry32): the generated corpus is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
