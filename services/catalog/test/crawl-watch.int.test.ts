// The scanner's walk and its file watcher on real folders with symlinks: links that stay inside
// the library are followed once, links out of it and links back up the tree never are.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
