// The XHTML tokenizer measured (issue 21): the catalog's own (`indexDocument`, locator-index.ts)
// against the same index built on htmlparser2 and on saxes (xhtml-walkers.ts), over the content
// documents of the EPUBs in a corpus. First every document is checked to give the same index
// (elements, ids, text runs and their UTF-16 lengths, crengine's nodes, the body text), and a set of
// small edge cases shows where the parsers part ways; then each is timed over all documents in
// rotating rounds (median pass, the sum of each document's best time, MB/s of the documents'
// UTF-8, ms per document), building the index and tokenizing alone, and each index path is run
// once in a child process of its own for its peak heap. Exits 2 when htmlparser2 differs on the corpus.
//   pnpm bench:xhtml
// Knobs: BENCH_CORPUS (folders, comma-separated; default test/fixtures/corpus40 and
// ../shared/peers/samples/books when present), BENCH_ROUNDS (15).
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
import { indexDocumentHtmlparser2, indexDocumentOwnTokens, indexDocumentSaxes, NULL_SINK, tokensBindery, tokensHtmlparser2, tokensSaxes } from './xhtml-walkers';

type DocIndex = Locator.DocIndex;
type Walker = (src: string, names: string[], nameIds: Map<string, number>, texts?: string[]) => DocIndex | null;

/** the production path first: the others are compared with it */
const WALKERS: Record<string, Walker> = {
  bindery: indexDocument,
  // our tokenizer's loop feeding the bench's index builder: proves the builder the htmlparser2 path uses is faithful
  'bindery (events)': indexDocumentOwnTokens,
  htmlparser2: indexDocumentHtmlparser2,
  saxes: indexDocumentSaxes,
};
/** tokenizing alone, nothing built (ids and local names still read) */
const TOKENS: Record<string, (src: string) => void> = {
  'tokens only: bindery': (src) => tokensBindery(src, NULL_SINK),
  'tokens only: htmlparser2': (src) => tokensHtmlparser2(src, NULL_SINK),
  'tokens only: saxes': (src) => tokensSaxes(src, NULL_SINK),
};
/** small documents of edge cases: where the two differ outside the corpus */
const PROBES: Record<string, string> = {
  'entities (known, unknown, numeric, unterminated)': '<p>a &amp; b &nbsp;&eacute; &#233; &#x1F600; &bogus; &amp c</p>',
  CDATA: '<p>a<![CDATA[x &amp; <b>y</b>]]>b</p>',
  comment: '<p>a<!-- c > d -->b</p>',
  'processing instruction': '<p>a<?pi x?>b</p>',
  'processing instruction holding ">"': '<p>a<?pi x > y?>b</p>',
  'self-closing and void tags': '<p>a<br/>b<span/>c<img src="x">d</img>e<br>f</p>',
  'CRLF and lone CR': '<p>a\r\nb\rc</p>',
  'unclosed p, stray close': '<div><p>a<p>b</div><p>c</span>d',
  'upper-case names and ids': '<P ID="u">a</P><p Id="v">b</p>',
  'prefixed names': '<x:p>a</x:p><svg:svg><svg:text>t</svg:text></svg:svg>',
  'prefix differs in the end tag': '<x:p>a</p>b',
  'ids unquoted, empty, xml:id': '<p id=a>x</p><p id="">y</p><p xml:id="q" id="r">z</p>',
  'id="…" inside another attribute': '<p title="a id=\'x\'">z</p>',
  '">" inside an attribute': '<p title="a>b">z</p>',
  'stray "<" then ">" in text': '<p>a < b and c > d</p>',
  'stray "<3 … >" in text': '<p>1 <3 and 4> 2</p>',
  'stray "<" with no ">" before the next tag': '<p>a < b</p><p>c</p>',
  '"<" and ">" in a script': '<script>if (a < b && c > d) x()</script><p>z</p>',
  '"< /p>"': '<p>a</p >b< /p>',
  'truncated tag at the end': '<p>a</p><p class="x',
  'unclosed comment at the end': '<p>a</p><!-- x',
  'unclosed CDATA at the end': '<p>a<![CDATA[ x',
  'a second body': '<p>a</p><body>b</body>',
  'text over 8,192 characters': `<p>${'word '.repeat(3000)}</p>`,
};
const wrap = (body: string) => `<?xml version="1.0"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>${body}</body></html>`;
const ROUNDS = envNumber('BENCH_ROUNDS', 15);
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
const FEATURES: Record<string, RegExp> = {
  'named entities': /&[a-z][a-z0-9]*;/i,
  'numeric references': /&#x?[0-9a-f]+;/i,
  CDATA: /<!\[CDATA\[/,
  comments: /<!--/,
  'processing instructions (not the XML declaration)': /<\?(?!xml[\s?])/,
  'self-closing tags': /<[A-Za-z][^<>]*\/>/,
  'void tags without "/"': /<(br|hr|img|meta|link|input)\b[^<>]*[^/]>/i,
  'CRLF line ends': /\r\n/,
  'a stray "<"': /<(?![A-Za-z_/!?])/,
  'a run over 8,192 characters': /[^<]{8193}/,
};
console.log(
  `documents with: ${Object.entries(FEATURES)
    .map(([k, re]) => `${k} ${docs.filter((d) => re.test(d.src)).length}`)
    .join(', ')}\n`,
);
if (docs.length === 0) {
  console.log('no content documents: nothing to measure');
  process.exit(1);
}

// 1. the same answers
const MAX_SHOWN = 10;
const misses: Record<string, number> = Object.fromEntries(Object.keys(WALKERS).map((k) => [k, 0]));
const miss = (k: string, line: string) => {
  if (misses[k]!++ < MAX_SHOWN) console.log(line);
};
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
      miss(o.name, `MISMATCH ${o.name}: ${relative(ROOT, book.file)} ${d.path}\n    ${firstDifference(d.src, ours!, o)}`);
    }
  }
  const [first, ...rest] = Object.entries(per);
  for (const [k, v] of rest) {
    if (JSON.stringify(v.names) !== JSON.stringify(first![1].names)) {
      miss(k, `MISMATCH ${k}: ${relative(ROOT, book.file)}: element names differ: ${v.names.join(' ')} vs ${first![1].names.join(' ')}`);
    }
  }
}
const mismatches = misses.htmlparser2!;
console.log(
  `${docs.length} documents compared with \`indexDocument\` (${nulls} without a body); documents (or books' name lists) that differ: ` +
    `${Object.entries(misses)
      .slice(1)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}${Object.values(misses).some((n) => n > MAX_SHOWN) ? ` (the first ${MAX_SHOWN} shown per walker)` : ''}\n`,
);

// the edge cases
const RIVALS = { htmlparser2: indexDocumentHtmlparser2, saxes: indexDocumentSaxes };
const probeRows = [['edge case (in a body)', ...Object.keys(RIVALS)]];
const probeNotes: string[] = [];
const answer = (w: Walker, src: string) => {
  const parts: string[] = [];
  const doc = w(src, [], new Map(), parts);
  return { doc, text: parts.join(''), json: JSON.stringify([doc, parts]) };
};
for (const [label, body] of Object.entries(PROBES)) {
  const src = wrap(body);
  const ours = answer(indexDocument, src);
  const row = [label];
  const notes = [`${label}: ${JSON.stringify(body)}\n    ours        ${ours.json}`];
  for (const [k, w] of Object.entries(RIVALS)) {
    const theirs = answer(w, src);
    if (ours.json === theirs.json) {
      row.push('same');
      continue;
    }
    const keys = (['b', 'n', 't', 'ids', 'sp', 'kr'] as const).filter((f) => JSON.stringify(ours.doc?.[f]) !== JSON.stringify(theirs.doc?.[f]));
    row.push(`differs: ${[...(ours.text !== theirs.text ? ['text'] : []), ...keys].join(' ')}`);
    notes.push(`    ${k.padEnd(11)} ${theirs.json}`);
  }
  probeRows.push(row);
  if (notes.length > 1) probeNotes.push(notes.join('\n'));
}
console.log(table(probeRows));
if (probeNotes.length) console.log(`\n${probeNotes.join('\n')}`);
console.log();

// 2. time: a warm-up pass each, then rounds rotating which goes first; every document is timed on
// its own, so besides the median pass there is the sum of each document's fastest time (the
// steadier figure on a busy machine)
const now = () => Number(process.hrtime.bigint()) / 1e6;
const passes: Record<string, (out: number[]) => void> = {
  ...Object.fromEntries(
    Object.entries(WALKERS).map(([k, w]) => [
      k,
      (out: number[]) => {
        let j = 0;
        for (const book of books) {
          const names: string[] = [];
          const nameIds = new Map<string, number>();
          for (const d of book.docs) {
            const s = now();
            w(d.src, names, nameIds, []);
            out[j++] = now() - s;
          }
        }
      },
    ]),
  ),
  ...Object.fromEntries(
    Object.entries(TOKENS).map(([k, tok]) => [
      k,
      (out: number[]) => {
        docs.forEach((d, j) => {
          const s = now();
          tok(d.src);
          out[j] = now() - s;
        });
      },
    ]),
  ),
};
const order = Object.keys(passes);
const times: Record<string, number[]> = Object.fromEntries(order.map((k) => [k, []]));
const best: Record<string, number[]> = Object.fromEntries(order.map((k) => [k, docs.map(() => Infinity)]));
for (const k of order) passes[k]!([]);
for (let r = 0; r < ROUNDS; r++) {
  for (let j = 0; j < order.length; j++) {
    const k = order[(j + r) % order.length]!;
    const perDoc: number[] = [];
    passes[k]!(perDoc);
    times[k]!.push(perDoc.reduce((a, b) => a + b, 0));
    perDoc.forEach((t, i) => {
      if (t < best[k]![i]!) best[k]![i] = t;
    });
  }
}
const bestSum = (k: string) => best[k]!.reduce((a, b) => a + b, 0);

// 3. peak heap, each index path alone in a fresh process
const HEAP = ['bindery', 'htmlparser2', 'saxes'];
const heaps: Record<string, { base: number; peak: number; rss: number }> = {};
for (const k of HEAP) heaps[k] = await heapOf(k);

const rows = [['walker', 'median ms/pass', 'min', 'max', 'sum of per-doc best', 'MB/s', 'ms/doc', 'peak heap over base (MiB)', 'max RSS (MiB)']];
for (const k of order) {
  const ts = times[k]!;
  const med = median(ts);
  rows.push([
    k,
    fmt(med, 1),
    fmt(Math.min(...ts), 1),
    fmt(Math.max(...ts), 1),
    fmt(bestSum(k), 1),
    fmt(totalBytes / 1e6 / (med / 1000), 1),
    fmt(med / docs.length, 3),
    heaps[k] ? fmt((heaps[k]!.peak - heaps[k]!.base) / 2 ** 20, 1) : '',
    heaps[k] ? fmt(heaps[k]!.rss / 2 ** 20, 0) : '',
  ]);
}
console.log(`${ROUNDS} rounds over ${docs.length} documents (${fmt(totalBytes / 1e6, 2)} MB); MB/s and ms/doc from the median pass:`);
console.log(table(rows));
const m = (k: string) => median(times[k]!);
console.log(
  `\nhtmlparser2 / bindery time (median pass | per-doc best): index ${fmt(m('htmlparser2') / m('bindery'), 2)}x | ${fmt(bestSum('htmlparser2') / bestSum('bindery'), 2)}x, ` +
    `tokens only ${fmt(m('tokens only: htmlparser2') / m('tokens only: bindery'), 2)}x | ${fmt(bestSum('tokens only: htmlparser2') / bestSum('tokens only: bindery'), 2)}x; ` +
    `saxes / bindery: index ${fmt(bestSum('saxes') / bestSum('bindery'), 2)}x, tokens only ${fmt(bestSum('tokens only: saxes') / bestSum('tokens only: bindery'), 2)}x (per-doc best); ` +
    `tokenizing is ${fmt((100 * m('tokens only: bindery')) / m('bindery'), 0)}% of our index path. htmlparser2's corpus mismatches: ${mismatches}`,
);
process.exit(mismatches ? 2 : 0);
