// The reader's settings kept in the profile (issue 45), in headless Chromium, embedded: what one
// browser sets (for all books, and a book's own) is what another browser of the same user opens
// with, in the computed size of the book's frame; the browser's copy (localStorage) follows.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Frame, Page } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, HAS_CHROMIUM, launch, openAs, type Tab, PAGE_MODES } from './web-browser';

declare const document: any;
declare const localStorage: any;
declare function getComputedStyle(e: unknown): any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the reader's settings in the profile (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const OTHER = 'unsorted/Aleksandr_Petrov_Golden_Crowns.epub';
const FIRST = 'Pon ka faties tor dofa ponisra loren tor islo an sa renestor vel dodo.';

/** The frame showing the section that holds `text`. */
async function frameWith(page: Page, text: string): Promise<Frame> {
  for (let i = 0; i < 100; i++) {
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      const has = await f.evaluate((s) => Boolean(document.body?.textContent?.includes(s)), text).catch(() => false);
      if (has) return f;
    }
    await page.waitForTimeout(150);
  }
  throw new Error(`no frame shows “${text}”`);
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`reader settings in the profile (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let epub: Record<string, any>;
    let other: Record<string, any>;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const dir = emptyDir();
      for (const [src, dst] of [
        [EPUB, 'crown/The Hidden Crown.epub'],
        [OTHER, 'other/Golden Crowns.epub'],
      ] as const) {
        mkdirSync(join(dir, dst, '..'), { recursive: true });
        copyFileSync(join(FIXTURE, src), join(dir, dst));
      }
      const lib = await createLibrary(call, admin.token, { name: `Reader profile ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      epub = list.find((i) => i.formats[0]?.file_path.startsWith('crown/'))!;
      other = list.find((i) => i.formats[0]?.file_path.startsWith('other/'))!;
      expect(epub.title).toBe('The Hidden Crown');
    }, 240_000);

    const ready = (t: Tab) => t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
    /** the computed font size of chapter 1's first paragraph in the book's frame */
    const size = async (t: Tab) => {
      await t.page.click('#toc summary');
      await t.page.locator('#toc-list a', { hasText: 'Chapter 1' }).click();
      const f = await frameWith(t.page, FIRST);
      return f.evaluate(() => getComputedStyle([...document.querySelectorAll('p')].find((e: any) => e.textContent.includes('Pon ka faties'))).fontSize);
    };
    /** the profile's settings for all books and this book, as the API gives them */
    const profile = async (token: string, item: string) => {
      const r = await call('GET', `/api/media-items/${item}/reader-settings`, { token });
      expect(r.status, r.text).toBe(200);
      return { all: r.json.all_books?.settings ?? null, own: r.json.this_book?.settings ?? null };
    };

    it('sizes set in one browser are the sizes another browser of the same user opens with, for all books and one book', async () => {
      const who = await register(call);
      const a = await openAs(browser, b.url, who.token);
      await a.page.goto(`${b.url}/read/${epub.id}`);
      await ready(a);
      expect(await size(a)).toBe('16px');
      await a.page.click('#settings summary');
      await a.page.click('#font-larger');
      await a.page.click('#font-larger');
      await a.page.selectOption('#font-family', 'sans');
      expect(await a.page.textContent('#font-size')).toBe('120 %');
      // sent as they are made (what was never changed is not sent: the reader's default)
      await expect.poll(async () => (await profile(who.token, epub.id)).all, { timeout: 15_000 }).toEqual({ font_size: 120, font_family: 'sans' });

      // another browser (nothing in its localStorage) opens at 120 %
      const c = await openAs(browser, b.url, who.token);
      await c.page.goto(`${b.url}/read/${epub.id}`);
      await ready(c);
      expect(await c.page.evaluate(() => localStorage.getItem('bindery.reader.font'))).toBe('120');
      expect(await size(c)).toBe('19.2px');
      expect(await c.page.textContent('#font-size')).toBe('120 %');

      // this book only, in the first browser: 140 % here, the other book stays at 120 %
      await a.page.check('#only-this-book');
      await a.page.click('#font-larger');
      await a.page.click('#font-larger');
      expect(await a.page.textContent('#font-size')).toBe('140 %');
      await expect.poll(async () => (await profile(who.token, epub.id)).own?.font_size, { timeout: 15_000 }).toBe(140);
      const own = await profile(who.token, epub.id);
      expect(own.own).toMatchObject({ font_size: 140, font_family: 'sans' });
      expect(own.all?.font_size).toBe(120);

      const d = await openAs(browser, b.url, who.token);
      await d.page.goto(`${b.url}/read/${epub.id}`);
      await ready(d);
      expect(await size(d)).toBe('22.4px');
      await d.page.click('#settings summary');
      expect(await d.page.isChecked('#only-this-book')).toBe(true);
      await d.page.goto(`${b.url}/read/${other.id}`);
      await d.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
      await d.page.click('#settings summary');
      expect(await d.page.textContent('#font-size')).toBe('120 %');

      // unticked in the first browser: the book follows all books again, everywhere
      await a.page.uncheck('#only-this-book');
      await expect.poll(async () => (await profile(who.token, epub.id)).own, { timeout: 15_000 }).toBeNull();
      await c.page.goto(`${b.url}/read/${epub.id}`);
      await ready(c);
      expect(await size(c)).toBe('19.2px');
      for (const t of [a, c, d]) {
        expect(t.errors).toEqual([]);
        await t.ctx.close();
      }
    });
  });
}
