// An EPUB read by parts (issue 45), in headless Chromium, embedded: a 4 MiB EPUB (the corpus's
// crown with an incompressible picture added, as ~3 % of the corpus carry) opens with range
// requests for its zip directory, package and the sections shown, never the whole file; pages turn,
// the contents and search work, and the position is saved as before.
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, progressWrites, PAGE_MODES } from './web-browser';

declare const document: any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`an EPUB read by parts (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const NOISE = 4 * 1024 * 1024;

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`an EPUB read by parts (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let epub: Record<string, any>;
    let size: number;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const dir = emptyDir();
      mkdirSync(join(dir, 'big'), { recursive: true });
      const file = join(dir, 'big/The Hidden Crown.epub');
      copyFileSync(join(FIXTURE, EPUB), file);
      // an incompressible picture, stored (zip -0), in the book's media folder
      const work = emptyDir();
      mkdirSync(join(work, 'EPUB/media'), { recursive: true });
      writeFileSync(join(work, 'EPUB/media/noise.jpg'), randomFillSync(Buffer.alloc(NOISE)));
      execFileSync('zip', ['-0', '-q', file, 'EPUB/media/noise.jpg'], { cwd: work });
      size = statSync(file).size;
      expect(size).toBeGreaterThan(NOISE);
      const lib = await createLibrary(call, admin.token, { name: `By parts ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      epub = (await items(call, admin.token, lib.id)).find((i) => i.formats[0]?.format === 'epub')!;
      expect(epub.title).toBe('The Hidden Crown');
    }, 240_000);

    it('opens with range requests for the parts it shows, never the whole file; turns, goes to a chapter, saves', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      const writes = progressWrites(t.page);
      const file = epub.formats[0].file_url as string;
      const asked: { range: string | undefined; status: number; bytes: number }[] = [];
      t.page.on('response', async (r) => {
        if (!r.url().endsWith(file)) return;
        const body = await r.body().catch(() => Buffer.alloc(0));
        asked.push({ range: (await r.request().allHeaders()).range, status: r.status(), bytes: body.length });
      });
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
      expect(asked.length).toBeGreaterThan(1);
      // every read of the file is a range (the opening asks for the first and the last 64 KiB at once), answered as one
      for (const a of asked) {
        expect(a.range, JSON.stringify(asked)).toMatch(/^bytes=(\d+-\d+|-\d+)$/);
        expect(a.status, JSON.stringify(asked)).toBe(206);
      }
      const read = asked.reduce((n, a) => n + a.bytes, 0);
      expect(read).toBeLessThan(size / 10);
      // the book works as before: the contents, pages, a saved position
      await t.page.click('#toc summary');
      await t.page.locator('#toc-list a', { hasText: 'Chapter 2' }).click();
      await t.page.waitForFunction(() => document.querySelector('#reader').dataset.cfi.includes('[chapter-2]'));
      const at = Number(await t.page.getAttribute('#reader', 'data-fraction'));
      await t.page.click('#next');
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, at);
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      expect(writes).toHaveLength(1);
      // still no whole file
      expect(asked.reduce((n, a) => n + a.bytes, 0)).toBeLessThan(size / 10);
      await checkPage(t, `${mode}-reader-by-parts`);
      await t.ctx.close();
    }, 120_000);
  });
}
