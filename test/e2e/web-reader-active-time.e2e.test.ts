// The web reader's active reading time (decision 120) in headless Chromium, with the page's clock
// moved by the test: a page turn after 90 s of reading sends about 90 active seconds with its
// position; one after ten minutes without an input sends two minutes at most (the reader was away);
// the person's statistics count exactly what the reader sent.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register } from './helpers';
import { CHROMIUM, HAS_CHROMIUM, launch, openAs, PAGE_MODES, progressWrites } from './web-browser';

const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';
const get = instances(PAGE_MODES);
if (!HAS_CHROMIUM) describe.skip(`the reader's active time (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`the reader's active time (${mode})`, () => {
    it('sends the seconds the reader was at work with each position, two minutes at most after the last input', async () => {
      const b = await get(mode);
      const call = api(b);
      const admin = await register(call);
      const reader = await register(call);
      const dir = emptyDir();
      mkdirSync(join(dir, 'comics'), { recursive: true });
      copyFileSync(join(FIXTURE, CBZ), join(dir, 'comics/wolken.cbz'));
      const lib = await createLibrary(call, admin.token, { name: `Active ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const cbz = (await items(call, admin.token, lib.id)).find((i) => i.formats[0]?.format === 'cbz')!;

      const t = await openAs(browser, b.url, reader.token);
      const writes = progressWrites(t.page);
      await t.page.clock.install();
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      const saved = (n: number) => t.page.waitForSelector(`#reader[data-saved="${n}"]`, { timeout: 10_000 });

      // reading: 90 s on a page, then the next (an input); the save follows two seconds on
      await t.page.clock.fastForward(90_000);
      await t.page.click('#next');
      await t.page.clock.fastForward(2_500);
      await saved(1);
      const first = writes[0]!.active_seconds as number;
      expect(first).toBeGreaterThanOrEqual(92);
      expect(first).toBeLessThan(120);

      // away: a page turn, then ten minutes without an input before the next one
      await t.page.click('#next');
      await t.page.clock.fastForward(2_500);
      await saved(2);
      await t.page.clock.fastForward(600_000);
      await t.page.click('#next');
      await t.page.clock.fastForward(2_500);
      await saved(3);
      const [, second, third] = writes.map((w) => w.active_seconds as number);
      expect(second).toBeGreaterThanOrEqual(2);
      expect(second).toBeLessThan(10);
      // two minutes after the page turn before it, and the 2.5 s since the last
      expect(third).toBeGreaterThanOrEqual(120);
      expect(third).toBeLessThan(130);

      // the person's figures: the web's time is what the reader sent
      const sent = writes.reduce((n, w) => n + (w.active_seconds as number), 0);
      const year = new Date().getUTCFullYear();
      const stats = await call('GET', `/api/me/statistics?year=${year}`, { token: reader.token });
      expect(stats.status, stats.text).toBe(200);
      expect(stats.json.by_device).toEqual([{ name: 'web', seconds: sent, books: 1 }]);
      await t.ctx.close();
    }, 180_000);
  });
}
