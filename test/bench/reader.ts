// `pnpm bench:reader`: the web reader as a person meets it (issue 45), in headless Chromium (Debian's),
// per mode (BENCH_READER_MODES, default embedded,distributed). One library holds
//   - a 10 MB EPUB: 40 chapters of text and 13 JPEG pictures of ~0.45 MB (a picture book's weight,
//     stored in the zip as most EPUBs store pictures), and
//   - a 40-page CBZ of 1400x2100 JPEG pages (~0.5 MB each, a scanned comic's),
// and it measures, each BENCH_READER_RUNS times in a new browser context (an empty cache):
//   - the EPUB's first page shown after navigation: from the browser's navigation start to the
//     reader's `reader:ready` mark (its first page placed), and the bytes the browser received for
//     it; beside it the same seen from the bench (`goto` called until the ready attribute is seen,
//     which includes a new tab's own start); the first page at a saved place in the middle;
//   - the comic's first page: navigation start until its picture is loaded (the browser's clock);
//   - an EPUB page turn: ArrowRight until the reader's place moves (its `data-cfi`), 30 turns;
//   - a comic page turn: ArrowRight until the next page's picture is loaded and decoded, 30 turns,
//     300 ms of reading between turns (the preloading a person's reading time allows);
//   - the reader page's own JavaScript and CSS, gzip- and brotli-compressed.
// BENCH_READER_TRACE=1 prints the page's own timeline of each first opening (resources and the reader's marks).
// Targets (issue 45): first page < 500 ms, page turn < 50 ms, comic page turn < 100 ms, JS+CSS
// < 150 KB compressed. A benchmark, not a test: it prints a table with the load average and the
// targets met, and never fails on its figures. Figures go to docs/benchmarks.md.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { items, settled } from '../e2e/catalog-helpers';
import { api, register } from '../e2e/helpers';
import { launch } from '../e2e/web-browser';
import { ROOT, startBindery, type Mode } from '../support/bindery';
import { zip } from './gen-files';
import { assetSizes, runBrowserBench } from './browser-bench';
import { envNumber, fmt, machine, table } from './lib';

const MODES = (process.env.BENCH_READER_MODES ?? 'embedded,distributed').split(',').map((m) => m.trim()) as Mode[];
const RUNS = Math.max(1, envNumber('BENCH_READER_RUNS', 5));
const TURNS = Math.max(2, envNumber('BENCH_READER_TURNS', 30));
const VIEWPORT = { width: 1280, height: 900 };

/** sharp, from the gateway's own dependencies (the pictures are JPEGs as real books carry them) */
interface Sharp {
  jpeg(o: { quality: number }): Sharp;
  toBuffer(): Promise<Buffer>;
}
const sharp: (px: Buffer, o: { raw: { width: number; height: number; channels: 3 } }) => Sharp = createRequire(join(ROOT, 'services/gateway/package.json'))('sharp');

/** A JPEG of w x h: soft bands under grain, so it weighs what a photographed or scanned page does. */
async function picture(w: number, h: number, seed: number): Promise<Buffer> {
  const px = Buffer.alloc(w * h * 3);
  const grain = randomBytes(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const g = grain[i]! >> 2;
      px[i * 3] = (((x + seed * 37) >> 3) & 0x7f) + g;
      px[i * 3 + 1] = (((y + seed * 11) >> 4) & 0x7f) + g;
      px[i * 3 + 2] = ((((x ^ y) + seed) >> 5) & 0x7f) + g;
    }
  return sharp(px, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 80 })
    .toBuffer();
}

/** The 10 MB EPUB: 40 chapters (~110 KB of text each), the first 13 with one picture each. */
async function tenMegabyteEpub(): Promise<Buffer> {
  const para = '<p>It was a quiet evening. The lamps were lit one by one; nobody spoke. Then the bell rang, twice, and the door opened on the wet street.</p>\n';
  const chapters = 40;
  const pictures = 13;
  const ids = Array.from({ length: chapters }, (_, i) => `c${i + 1}`);
  const pics: [string, Buffer][] = [];
  for (let i = 0; i < pictures; i++) pics.push([`OEBPS/img/p${i + 1}.jpg`, await picture(1000, 1400, i)]);
  const text = para.repeat(Math.ceil(110_000 / para.length));
  return zip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:${randomUUID()}</dc:identifier><dc:title>Ten Megabytes</dc:title><dc:language>en</dc:language></metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>${ids.map((id) => `<item id="${id}" href="${id}.xhtml" media-type="application/xhtml+xml"/>`).join('')}${pics.map((_, i) => `<item id="p${i + 1}" href="img/p${i + 1}.jpg" media-type="image/jpeg"/>`).join('')}</manifest><spine>${ids.map((id) => `<itemref idref="${id}"/>`).join('')}</spine></package>`,
    ],
    [
      'OEBPS/nav.xhtml',
      `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title></head><body><nav epub:type="toc"><ol>${ids.map((id, i) => `<li><a href="${id}.xhtml">Chapter ${i + 1}</a></li>`).join('')}</ol></nav></body></html>`,
    ],
    ...ids.map((id, i): [string, string] => [
      `OEBPS/${id}.xhtml`,
      `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter ${i + 1}</title></head><body><h1>Chapter ${i + 1}</h1>${i < pictures ? `<p><img src="img/p${i + 1}.jpg" alt="Plate ${i + 1}"/></p>` : ''}${text}</body></html>`,
    ]),
    ...pics,
  ]);
}

/** The 40-page CBZ. */
async function comic(): Promise<Buffer> {
  const pages: [string, Buffer][] = [];
  for (let i = 0; i < 40; i++) pages.push([`page${String(i + 1).padStart(3, '0')}.jpg`, await picture(1400, 2100, 100 + i)]);
  return zip(pages);
}

/** the page picture's surface the checks read */
interface Pic {
  complete: boolean;
  naturalWidth: number;
  decode(): Promise<void>;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)] ?? Number.NaN;

interface Row {
  mode: Mode;
  /** from navigation start (the browser's clock) to the reader's `reader:ready` mark */
  epubFirst: number[];
  /** the same from the bench's side: goto called → the ready attribute seen (a new tab's own start included) */
  epubFirstOutside: number[];
  epubFirstBytes: number;
  epubMiddle: number[];
  epubTurns: number[];
  comicFirst: number[];
  comicTurns: number[];
  bytes: { raw: number; gzip: number; brotli: number; files: string[] };
}

/**
 * BENCH_READER_PROFILE=1: the last first opening under Chromium's sampling profiler; the functions
 * that took the most time themselves (self time), with their script and line.
 */
async function profile(p: Page): Promise<() => Promise<string>> {
  const cdp = await p.context().newCDPSession(p);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  return async () => {
    const { profile: prof } = await cdp.send('Profiler.stop');
    const self = new Map<string, number>();
    const deltas = prof.timeDeltas ?? [];
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    (prof.samples ?? []).forEach((id, k) => {
      const f = byId.get(id)?.callFrame;
      const key = f ? `${f.functionName || '(anonymous)'} ${f.url.replace(/^https?:\/\/[^/]+/, '')}:${f.lineNumber + 1}` : '?';
      self.set(key, (self.get(key) ?? 0) + (deltas[k] ?? 0) / 1000);
    });
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 30);
    return `  profile (self time, ms):\n${top.map(([k, v]) => `    ${fmt(v, 1).padStart(7)}  ${k}`).join('\n')}`;
  };
}

/** When the reader said its first page was placed: its `reader:ready` mark, in ms from navigation start. */
async function readyAt(p: Page): Promise<number> {
  const at = await p.evaluate(
    () => (globalThis as unknown as { performance: { getEntriesByName(n: string): { startTime: number }[] } }).performance.getEntriesByName('reader:ready')[0]?.startTime ?? -1,
  );
  if (at < 0) throw new Error('the reader made no reader:ready mark');
  return at;
}

/** The bytes a page received (bodies as sent, compressed where they were), counted as requests finish. */
function received(p: Page): { total: () => number } {
  let total = 0;
  p.on('requestfinished', (r: Request) => {
    void r
      .sizes()
      .then((s) => {
        total += s.responseBodySize;
      })
      .catch(() => {});
  });
  return { total: () => total };
}

async function runMode(mode: Mode, browser: Browser, dir: string): Promise<Row> {
  const b = await startBindery(mode);
  try {
    const call = api(b);
    const admin = await register(call);
    const lib = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Reader bench', folders: [dir], watch: false } });
    if (lib.status !== 201) throw new Error(`making the library: ${lib.status} ${lib.text}`);
    await settled(call, admin.token, lib.json.id, undefined, 5 * 60_000);
    const list = await items(call, admin.token, lib.json.id);
    const idOf = (file: string) => {
      const it = list.find((i) => i.formats[0]?.file_path === file);
      if (!it) throw new Error(`${file} was not catalogued`);
      return String(it.id);
    };
    const epub = idOf('ten.epub');
    const cbz = idOf('comic.cbz');
    const context = async () => {
      const ctx = await browser.newContext({ viewport: VIEWPORT });
      await ctx.addCookies([{ name: 'token', value: admin.token, url: b.url }]);
      return ctx;
    };
    const ready = '#reader[data-ready="true"][data-cfi]';

    // the first page, from a new context each time; the first run also notes the reader's own assets
    const epubFirst: number[] = [];
    const epubFirstOutside: number[] = [];
    let epubFirstBytes = 0;
    let files: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ctx = await context();
      const p = await ctx.newPage();
      const got = received(p);
      const loaded: string[] = [];
      p.on('request', (r: Request) => {
        if (['script', 'stylesheet'].includes(r.resourceType()) && new URL(r.url()).origin === new URL(b.url).origin) loaded.push(new URL(r.url()).pathname);
      });
      const ranges: string[] = [];
      if (process.env.BENCH_READER_TRACE) p.on('request', (r: Request) => void r.headerValue('range').then((v) => v && ranges.push(v)));
      const profiler = process.env.BENCH_READER_PROFILE && i === RUNS - 1 ? await profile(p) : null;
      const t0 = performance.now();
      const res = await p.goto(`${b.url}/read/${epub}`, { waitUntil: 'commit' });
      if (res?.status() !== 200) throw new Error(`the reader answered ${res?.status()}`);
      await p.waitForSelector(ready, { timeout: 60_000 });
      if (profiler) console.log(await profiler());
      epubFirstOutside.push(performance.now() - t0);
      epubFirst.push(await readyAt(p));
      if (process.env.BENCH_READER_TRACE) {
        // where the time went: the page's own timeline (ms from navigation start)
        const trace = await p.evaluate(() => {
          const perf = (
            globalThis as unknown as {
              performance: { getEntries(): { name: string; entryType: string; startTime: number; responseEnd?: number; duration: number }[]; now(): number };
            }
          ).performance;
          return {
            ready: Math.round(perf.now()),
            entries: perf
              .getEntries()
              .map(
                (e) => `${e.entryType} ${e.name.replace(/^https?:\/\/[^/]+/, '').slice(0, 60)} ${Math.round(e.startTime)}→${Math.round(e.responseEnd ?? e.startTime + e.duration)}`,
              ),
          };
        });
        console.log(`  trace, run ${i + 1}: ready at ${trace.ready} ms (browser's clock); ranges asked: ${ranges.join(', ')}\n    ${trace.entries.join('\n    ')}`);
      }
      await p.waitForTimeout(300);
      epubFirstBytes = got.total();
      files = [...new Set(loaded)];
      await ctx.close();
    }

    // page turns, in one context opened at the start
    const epubTurns: number[] = [];
    {
      const ctx = await context();
      const p = await ctx.newPage();
      await p.goto(`${b.url}/read/${epub}`, { waitUntil: 'commit' });
      await p.waitForSelector(ready, { timeout: 60_000 });
      await p.waitForTimeout(500);
      for (let i = 0; i < TURNS; i++) {
        const before = await p.locator('#reader').getAttribute('data-cfi');
        const t0 = performance.now();
        await p.keyboard.press('ArrowRight');
        await p.waitForFunction(
          (prev) =>
            (globalThis as unknown as { document: { getElementById(id: string): { dataset: Record<string, string> } | null } }).document.getElementById('reader')?.dataset.cfi !==
            prev,
          before,
          { polling: 'raf', timeout: 30_000 },
        );
        epubTurns.push(performance.now() - t0);
        await p.waitForTimeout(150);
      }
      await ctx.close();
    }

    // the same book at a saved place in its middle
    const saved = await call('PUT', `/api/media-items/${epub}/progress`, { token: admin.token, body: { percentage: 0.5 } });
    if (saved.status !== 200) throw new Error(`saving the position: ${saved.status} ${saved.text}`);
    const epubMiddle: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ctx = await context();
      const p = await ctx.newPage();
      await p.goto(`${b.url}/read/${epub}`, { waitUntil: 'commit' });
      await p.waitForSelector(ready, { timeout: 60_000 });
      epubMiddle.push(await readyAt(p));
      await ctx.close();
    }

    // the comic: its first page, then turns with reading time between them
    // page n is placed and its picture loaded (a function, not a string: the reader's CSP has no eval)
    const shown = async (p: Page, n: number) =>
      waitShown(p, n).catch(async (e: unknown) => {
        const state = await p.evaluate(() => {
          const d = (globalThis as unknown as { document: { getElementById(id: string): { dataset: Record<string, string>; outerHTML: string } | null } }).document;
          return { reader: d.getElementById('reader')?.dataset, pages: d.getElementById('pages')?.outerHTML.slice(0, 600), error: d.getElementById('reader-error')?.outerHTML };
        });
        throw new Error(`page ${n} was not shown: ${JSON.stringify(state)} (${e instanceof Error ? e.message : String(e)})`);
      });
    // resolves with the browser's clock (ms from navigation start) when the page is shown
    const waitShown = async (p: Page, n: number): Promise<number> =>
      (
        await p.waitForFunction(
          (k) => {
            const doc = (globalThis as unknown as { document: { getElementById(id: string): { dataset: Record<string, string> } | null; querySelector(s: string): Pic | null } })
              .document;
            const img = doc.querySelector(`.page-image[data-index="${k - 1}"]`);
            const done = doc.getElementById('reader')?.dataset.page === String(k) && !!img && img.complete && img.naturalWidth > 0;
            return done ? (globalThis as unknown as { performance: { now(): number } }).performance.now() : 0;
          },
          n,
          { polling: 'raf', timeout: 60_000 },
        )
      ).jsonValue();
    const comicFirst: number[] = [];
    const comicTurns: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const ctx = await context();
      const p = await ctx.newPage();
      const res = await p.goto(`${b.url}/read/${cbz}`, { waitUntil: 'commit' });
      if (res?.status() !== 200) throw new Error(`the comic reader answered ${res?.status()}`);
      comicFirst.push(await shown(p, 1));
      // the turns in the last run (they save a place: a later run would open there)
      if (i === RUNS - 1) {
        await p.waitForTimeout(1000);
        for (let n = 2; n <= Math.min(40, TURNS + 1); n++) {
          const t1 = performance.now();
          await p.keyboard.press('ArrowRight');
          await shown(p, n);
          await p.evaluate(
            (k) => (globalThis as unknown as { document: { querySelector(s: string): Pic | null } }).document.querySelector(`.page-image[data-index="${k - 1}"]`)?.decode(),
            n,
          );
          comicTurns.push(performance.now() - t1);
          await p.waitForTimeout(300);
        }
      }
      await ctx.close();
    }

    // the reader page's own JavaScript and CSS, compressed here as a compressing server or proxy would send them
    const sizes = await assetSizes(b.url, files);
    return { mode, epubFirst, epubFirstOutside, epubFirstBytes, epubMiddle, epubTurns, comicFirst, comicTurns, bytes: { ...sizes, files } };
  } finally {
    await b.stop();
  }
}

// what `pnpm start` runs: the compiled bundle
await runBrowserBench('bench:reader', envNumber('BENCH_DEADLINE_MINUTES', 20), async () => {
  console.log(`bench:reader — ${RUNS} runs, ${TURNS} turns; ${JSON.stringify(machine())}`);
  const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-reader-'));
  const rows: Row[] = [];
  const browser = await launch();
  try {
    const book = await tenMegabyteEpub();
    writeFileSync(join(dir, 'ten.epub'), book);
    writeFileSync(join(dir, 'comic.cbz'), await comic());
    console.log(`  the EPUB weighs ${fmt(book.length / 1024 / 1024, 1)} MB`);
    for (const mode of MODES) rows.push(await runMode(mode, browser, dir));
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const kb = (n: number) => fmt(n / 1024, 1);
  const ms = (xs: number[]) => `${fmt(median(xs), 0)} / ${fmt(p95(xs), 0)} / ${fmt(Math.max(...xs), 0)}`;
  console.log(
    table([
      ['', ...rows.map((r) => r.mode)],
      ['10 MB EPUB first page, ms (median / p95 / max)', ...rows.map((r) => ms(r.epubFirst))],
      ['  seen from the bench (a new tab included), ms', ...rows.map((r) => ms(r.epubFirstOutside))],
      ['  KB received for it', ...rows.map((r) => kb(r.epubFirstBytes))],
      ['10 MB EPUB at a saved middle place, ms', ...rows.map((r) => ms(r.epubMiddle))],
      ['EPUB page turn, ms', ...rows.map((r) => ms(r.epubTurns))],
      ['comic first page, ms', ...rows.map((r) => ms(r.comicFirst))],
      ['comic page turn, ms', ...rows.map((r) => ms(r.comicTurns))],
      ['reader JS+CSS KB raw / gzip / brotli', ...rows.map((r) => `${kb(r.bytes.raw)} / ${kb(r.bytes.gzip)} / ${kb(r.bytes.brotli)}`)],
    ]),
  );
  for (const r of rows) {
    console.log(`${r.mode}: the reader page loads ${r.bytes.files.join(', ')}`);
    for (const [what, ok] of [
      [`first page ${fmt(median(r.epubFirst), 0)} ms < 500 ms`, median(r.epubFirst) < 500],
      [`page turn ${fmt(median(r.epubTurns), 0)} ms < 50 ms`, median(r.epubTurns) < 50],
      [`comic page turn ${fmt(median(r.comicTurns), 0)} ms < 100 ms`, median(r.comicTurns) < 100],
      [`JS+CSS ${kb(r.bytes.gzip)} KB gzip < 150 KB`, r.bytes.gzip < 150 * 1024],
    ] as const)
      console.log(`  ${ok ? 'met' : 'MISSED'}: ${what}`);
  }
});
