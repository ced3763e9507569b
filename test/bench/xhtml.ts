// The XHTML tokenizer measured (issue 21): the catalog's own (`indexDocument`, locator-index.ts)
// against the same index built on htmlparser2 (xhtml-walkers.ts), over the content documents of
// the EPUBs in a corpus. First every document is checked to give the same index (elements, ids,
// text runs and their UTF-16 lengths, crengine's nodes, the body text); then both are timed over
// all documents in interleaved rounds (median, MB/s of the documents' UTF-8, ms per document), and
// each is run once in a child process of its own for its peak heap.
//   pnpm bench:xhtml
// Knobs: BENCH_CORPUS (folders, comma-separated; default test/fixtures/corpus40 and
// ../shared/peers/samples/books when present), BENCH_ROUNDS (7).
import { fork } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type * as Locator from '@bindery/locator';
import { indexDocument } from '../../services/catalog/src/formats/locator-index';
import { rootfilePath } from '../../services/catalog/src/formats/opf';
import { attr, child, decodeXml, elements, parseXml } from '../../services/catalog/src/formats/xml';
import { openZip } from '../../services/catalog/src/formats/zip';
import { dirOf, resolveHref } from '../../services/catalog/src/formats/zip-path';
import { ROOT } from '../support/bindery';
import { envNumber, fmt, machine, median, table } from './lib';
import { indexDocumentHtmlparser2 } from './xhtml-walkers';

type DocIndex = Locator.DocIndex;
type Walker = (src: string, names: string[], nameIds: Map<string, number>, texts?: string[]) => DocIndex | null;

const WALKERS: Record<string, Walker> = { bindery: indexDocument, htmlparser2: indexDocumentHtmlparser2 };
const ROUNDS = envNumber('BENCH_ROUNDS', 7);
const MAX_DOC_BYTES = 16 * 1024 * 1024; // as locator-index.ts

interface Book {
  file: string;
  docs: { path: string; src: string; bytes: number }[];
}

function corpusFolders(): string[] {
  if (process.env.BENCH_CORPUS) return process.env.BENCH_CORPUS.split(',').map((d) => d.trim());
  return [join(ROOT, 'test/fixtures/corpus40'), join(ROOT, '../shared/peers/samples/books')].filter((d) => existsSync(d));
}

function epubsUnder(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) epubsUnder(p, out);
    else if (/\.epub$/i.test(name) && st.size > 0) out.push(p);
  }
  return out;
}

/** The spine's content documents, once each, decoded as the scanner decodes them. */
async function loadBook(file: string): Promise<Book | null> {
  let zip: Awaited<ReturnType<typeof openZip>>;
  try {
    zip = await openZip(file, 'EPUB');
  } catch {
    return null;
  }
  try {
    const ce = zip.find('META-INF/container.xml');
    const container = ce && parseXml(decodeXml(await zip.read(ce, MAX_DOC_BYTES)));
    const opfPath = container && rootfilePath(container);
    const opfEntry = opfPath ? (zip.find(opfPath) ?? zip.find(resolveHref('', opfPath) ?? opfPath)) : null;
    const pkg = opfEntry && parseXml(decodeXml(await zip.read(opfEntry, MAX_DOC_BYTES)));
    if (!opfEntry || pkg?.name !== 'package') return null;
    const base = dirOf(opfEntry.fileName);
    const manifest = new Map<string, string>();
    for (const item of elements(child(pkg, 'manifest'), 'item')) {
      const id = attr(item, 'id')?.trim();
      const href = attr(item, 'href');
      if (id && href) manifest.set(id, href.trim());
    }
    const seen = new Set<string>();
    const docs: Book['docs'] = [];
    for (const ref of elements(child(pkg, 'spine'), 'itemref')) {
      const href = manifest.get(attr(ref, 'idref')?.trim() ?? '');
      if (!href) continue;
      const path = resolveHref(base, href.split('#')[0]!) ?? href;
      if (seen.has(path)) continue;
      seen.add(path);
      const entry = zip.find(path);
      if (!entry) continue;
      try {
        const bytes = await zip.read(entry, MAX_DOC_BYTES);
        docs.push({ path, src: decodeXml(bytes), bytes: bytes.length });
      } catch {
        // unreadable: the index leaves it out too
      }
    }
    return { file, docs };
  } catch {
    return null;
  } finally {
    zip.close();
  }
}

async function loadCorpus(): Promise<Book[]> {
  const books: Book[] = [];
  for (const dir of corpusFolders()) {
    for (const file of epubsUnder(dir)) {
      const b = await loadBook(file);
      if (b && b.docs.length) books.push(b);
    }
  }
  return books;
}

/** One pass of a walker over the corpus, names per book as the scanner keeps them. */
function runAll(walker: Walker, books: Book[], afterDoc?: () => void): void {
  for (const book of books) {
    const names: string[] = [];
    const nameIds = new Map<string, number>();
    for (const d of book.docs) {
      const parts: string[] = [];
      walker(d.src, names, nameIds, parts);
      afterDoc?.();
    }
  }
}

// ---- child: peak heap of one walker ------------------------------------------------------------

if (process.env.BENCH_XHTML_HEAP) {
  const walker = WALKERS[process.env.BENCH_XHTML_HEAP]!;
  const books = await loadCorpus();
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  runAll(walker, books, () => {
    const h = process.memoryUsage().heapUsed;
    if (h > peak) peak = h;
  });
  process.send!({ base, peak, rss: process.resourceUsage().maxRSS * 1024 });
  process.exit(0);
}

// ---- main ----------------------------------------------------------------------------------------

function heapOf(name: string): Promise<{ base: number; peak: number; rss: number }> {
  return new Promise((resolve, reject) => {
    const c = fork(process.argv[1]!, [], {
      execArgv: [...process.execArgv, '--expose-gc'],
      env: { ...process.env, BENCH_XHTML_HEAP: name },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    c.once('message', (m) => resolve(m as { base: number; peak: number; rss: number }));
    c.once('exit', (code) => reject(new Error(`heap child ${name} exited (${code}) without an answer`)));
  });
}

/** What differs first between two answers for one document, and what in the source might be why. */
function firstDifference(src: string, a: { doc: DocIndex | null; text: string }, b: { doc: DocIndex | null; text: string }): string {
  const out: string[] = [];
  if (a.text !== b.text) {
    let i = 0;
    while (i < a.text.length && a.text[i] === b.text[i]) i++;
    out.push(`text differs at ${i}: ${JSON.stringify(a.text.slice(i, i + 40))} vs ${JSON.stringify(b.text.slice(i, i + 40))}`);
  }
  for (const k of ['b', 'n', 't', 'ids', 'sp', 'kr'] as const) {
    const x = JSON.stringify(a.doc?.[k]);
    const y = JSON.stringify(b.doc?.[k]);
    if (x !== y) {
      let i = 0;
      while (i < x.length && x[i] === y[i]) i++;
      out.push(`${k} differs at char ${i}: …${x.slice(Math.max(0, i - 20), i + 40)} vs …${(y ?? '').slice(Math.max(0, i - 20), i + 40)}`);
    }
  }
  const has = (re: RegExp) => re.test(src);
  const features = [
    has(/<!\[CDATA\[/) && 'CDATA',
    has(/<!--/) && 'comments',
    has(/<\?(?!xml\s)/) && 'processing instructions',
    has(/<[^>]*\/>/) && 'self-closing tags',
    has(/<(?![A-Za-z_/!?])/) && 'a stray "<"',
    has(/&(?!(amp|lt|gt|quot|apos|nbsp|#\d+|#x[0-9a-f]+);)[a-z]+;/i) && 'entities outside the index\u2019s list',
    has(/<!DOCTYPE[^>]*\[/i) && 'a DOCTYPE with an internal subset',
  ].filter(Boolean);
  out.push(`source has: ${features.join(', ') || 'nothing unusual'}`);
  return out.join('\n    ');
}

const t0 = Date.now();
const books = await loadCorpus();
const docs = books.flatMap((b) => b.docs);
const totalBytes = docs.reduce((s, d) => s + d.bytes, 0);
console.log(`bench:xhtml  ${JSON.stringify(machine())}`);
console.log(
  `corpus: ${corpusFolders()
    .map((d) => relative(ROOT, d) || d)
    .join(', ')}`,
);
console.log(`${books.length} EPUBs, ${docs.length} content documents, ${fmt(totalBytes / 1e6, 2)} MB (UTF-8), loaded in ${Date.now() - t0} ms\n`);
if (docs.length === 0) {
  console.log('no content documents: nothing to measure');
  process.exit(1);
}

// 1. the same answers
let mismatches = 0;
let nulls = 0;
for (const book of books) {
  const per = Object.fromEntries(Object.keys(WALKERS).map((k) => [k, { names: [] as string[], ids: new Map<string, number>() }]));
  for (const d of book.docs) {
    const answers = Object.entries(WALKERS).map(([k, w]) => {
      const parts: string[] = [];
      let doc: DocIndex | null;
      try {
        doc = w(d.src, per[k]!.names, per[k]!.ids, parts);
      } catch (e) {
        doc = null;
        parts.push(`(threw: ${(e as Error).message})`);
      }
      return { name: k, doc, text: parts.join('') };
    });
    const [ours, ...others] = answers;
    if (ours!.doc === null) nulls++;
    for (const o of others) {
      if (JSON.stringify(o.doc) === JSON.stringify(ours!.doc) && o.text === ours!.text) continue;
      mismatches++;
      console.log(`MISMATCH ${o.name}: ${relative(ROOT, book.file)} ${d.path}\n    ${firstDifference(d.src, ours!, o)}`);
    }
  }
  const [first, ...rest] = Object.entries(per);
  for (const [k, v] of rest) {
    if (JSON.stringify(v.names) !== JSON.stringify(first![1].names)) {
      mismatches++;
      console.log(`MISMATCH ${k}: ${relative(ROOT, book.file)}: element names differ: ${v.names.join(' ')} vs ${first![1].names.join(' ')}`);
    }
  }
}
console.log(`${docs.length} documents compared (${nulls} without a body: null from both when they agree): ${mismatches} mismatch${mismatches === 1 ? '' : 'es'}\n`);

// 2. time: a warm-up pass each, then rounds alternating which goes first
const times: Record<string, number[]> = Object.fromEntries(Object.keys(WALKERS).map((k) => [k, []]));
for (const w of Object.values(WALKERS)) runAll(w, books);
const order = Object.keys(WALKERS);
for (let r = 0; r < ROUNDS; r++) {
  for (const k of r % 2 ? [...order].reverse() : order) {
    const s = process.hrtime.bigint();
    runAll(WALKERS[k]!, books);
    times[k]!.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
}

// 3. peak heap, each walker alone in a fresh process
const heaps: Record<string, { base: number; peak: number; rss: number }> = {};
for (const k of order) heaps[k] = await heapOf(k);

const rows = [['walker', 'median ms/pass', 'min', 'max', 'MB/s', 'ms/doc', 'peak heap over base (MiB)', 'max RSS (MiB)']];
for (const k of order) {
  const ts = times[k]!;
  const med = median(ts);
  rows.push([
    k,
    fmt(med, 1),
    fmt(Math.min(...ts), 1),
    fmt(Math.max(...ts), 1),
    fmt(totalBytes / 1e6 / (med / 1000), 1),
    fmt(med / docs.length, 3),
    fmt((heaps[k]!.peak - heaps[k]!.base) / 2 ** 20, 1),
    fmt(heaps[k]!.rss / 2 ** 20, 0),
  ]);
}
console.log(`${ROUNDS} rounds over ${docs.length} documents (${fmt(totalBytes / 1e6, 2)} MB):`);
console.log(table(rows));
const [a, b] = order.map((k) => median(times[k]!));
console.log(`\nhtmlparser2 / bindery time: ${fmt(b! / a!, 2)}x   mismatches: ${mismatches}`);
process.exit(mismatches ? 2 : 0);
