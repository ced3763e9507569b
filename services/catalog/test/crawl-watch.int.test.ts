// The scanner's walk and its file watcher on real folders with symlinks: links that stay inside
// the library are followed once, links out of it and links back up the tree never are.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { crawl, type CrawlProblem } from '../src/scanner/crawl';
import { chokidarWatch } from '../src/scanner/watcher';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'bindery-crawl-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** lib/A/book.epub, lib/B/other.epub; links: back to lib, back to A, sideways into B, out to a
 * folder outside and to /etc, and one that is broken. */
function library(name: string): { lib: string; outside: string } {
  const lib = join(base, name, 'lib');
  const outside = join(base, name, 'outside');
  mkdirSync(join(lib, 'A'), { recursive: true });
  mkdirSync(join(lib, 'B'));
  mkdirSync(outside);
  writeFileSync(join(lib, 'A', 'book.epub'), 'x');
  writeFileSync(join(lib, 'B', 'other.epub'), 'y');
  writeFileSync(join(outside, 'secret.epub'), 'z');
  symlinkSync(lib, join(lib, 'A', 'to-root'));
  symlinkSync(join(lib, 'A'), join(lib, 'A', 'to-self'));
  symlinkSync('..', join(lib, 'B', 'up'));
  symlinkSync(outside, join(lib, 'out'));
  symlinkSync('/etc', join(lib, 'etc'));
  symlinkSync(join(lib, 'nowhere'), join(lib, 'broken'));
  return { lib, outside };
}

describe('crawl', () => {
  it('never loops and never leaves the library', async () => {
    const { lib } = library('walk');
    const problems: CrawlProblem[] = [];
    const found: string[] = [];
    for await (const f of crawl([lib], (p) => problems.push(p))) found.push(f.rel);
    expect(found.sort()).toEqual(['A/book.epub', 'B/other.epub']);
    expect(problems).toEqual([]);
  });

  it('finds every book of a large folder once, with its own size and time, across the slices its stats are asked in', async () => {
    const lib = join(base, 'many');
    mkdirSync(join(lib, 'sub'), { recursive: true });
    const want = new Map<string, { size: number; mtimeMs: number }>();
    for (let i = 0; i < 101; i++) {
      const rel = i % 10 === 0 ? `sub/${i}.cbz` : `${String(i).padStart(3, '0')}.epub`;
      writeFileSync(join(lib, rel), 'x'.repeat(i + 1));
      utimesSync(join(lib, rel), 1_700_000_000 + i, 1_700_000_000 + i);
      want.set(rel, { size: i + 1, mtimeMs: Math.trunc(statSync(join(lib, rel)).mtimeMs) });
    }
    writeFileSync(join(lib, 'notes.txt'), 'not a book');
    writeFileSync(join(lib, '.hidden.epub'), 'hidden');
    mkdirSync(join(lib, 'book.epub')); // a folder with a book's name is walked, not read
    writeFileSync(join(lib, 'book.epub', 'inner.pdf'), 'pdf');
    want.set('book.epub/inner.pdf', { size: 3, mtimeMs: Math.trunc(statSync(join(lib, 'book.epub', 'inner.pdf')).mtimeMs) });
    symlinkSync(join(lib, '001.epub'), join(lib, 'link.epub')); // a link to a book inside: found under its own name
    want.set('link.epub', want.get('001.epub')!);
    const found = new Map<string, { size: number; mtimeMs: number }>();
    const problems: CrawlProblem[] = [];
    for await (const f of crawl([lib], (p) => problems.push(p))) {
      expect(found.has(f.rel), f.rel).toBe(false);
      expect(f.abs).toBe(join(lib, f.rel));
      found.set(f.rel, { size: f.size, mtimeMs: f.mtimeMs });
    }
    expect(problems).toEqual([]);
    expect(new Map([...found].sort())).toEqual(new Map([...want].sort()));
    expect(found.get('sub/50.cbz')).toEqual({ size: 51, mtimeMs: (1_700_000_000 + 50) * 1000 });
  });

  it('reports a folder it cannot read and walks on', async () => {
    const { lib } = library('gone');
    const problems: CrawlProblem[] = [];
    const found: string[] = [];
    for await (const f of crawl([join(base, 'no-such-folder'), lib], (p) => problems.push(p))) found.push(f.rel);
    expect(found.sort()).toEqual(['A/book.epub', 'B/other.epub']);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.error).toMatch(/^folder is not readable: ENOENT/);
  });

  it('stops at once when its signal is aborted', async () => {
    const { lib } = library('abort');
    const ac = new AbortController();
    ac.abort(new Error('stop here'));
    const walk = async () => {
      for await (const _ of crawl([lib], () => undefined, ac.signal)) void _;
    };
    await expect(walk()).rejects.toThrow('stop here');
  });
});

describe('watcher', () => {
  it('reports changes in the library but not behind a link out of it, and never errors on loops', async () => {
    const { lib, outside } = library('watch');
    let changes = 0;
    const errors: Error[] = [];
    const w = chokidarWatch(
      [lib],
      { polling: false, intervalMs: 1000 },
      () => changes++,
      (e) => errors.push(e),
    );
    try {
      // Ready once it reports a file written inside (until then a write may go unseen). A new probe
      // file every 1.5 s: chokidar reports one within about 0.8 s (its size stable for 700 ms, checked
      // every 100 ms), so no probe is still on its way when one has been reported.
      let probes = 0;
      await vi.waitFor(
        () => {
          if (changes === 0) writeFileSync(join(lib, 'A', `probe-${++probes}.epub`), 'probe');
          expect(changes).toBeGreaterThan(0);
        },
        { timeout: 15_000, interval: 1_500 },
      );
      // The writes outside go first and one inside last, and chokidar reports each after the same
      // stability wait: once the inside one is reported, an outside one would have been too. The
      // negative gets 300 ms more for the stability check's polls and nothing else.
      const before = changes;
      writeFileSync(join(outside, 'later.epub'), 'outside');
      writeFileSync(join(outside, 'secret.epub'), 'changed');
      writeFileSync(join(lib, 'A', 'new.epub'), 'inside');
      await vi.waitFor(() => expect(changes).toBeGreaterThan(before), { timeout: 10_000, interval: 100 });
      await new Promise((r) => setTimeout(r, 300));
      expect(changes).toBe(before + 1);
      expect(errors.map((e) => e.message)).toEqual([]);
    } finally {
      await w.close();
    }
  }, 30_000);
});
