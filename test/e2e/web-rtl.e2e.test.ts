// The pages laid out right to left (decision 121: logical CSS only), seen in Chromium. No shipped
// language is written right to left, so the server runs with BINDERY_PSEUDO_LOCALE=1, which lets a
// browser asking for the pseudo language `ar-XB` have English's messages between right-to-left
// marks and `dir="rtl"`. The layout mirrors: the brand and the navigation start at the right, a
// row's first book card (the dashboard's) is its rightmost, a card's text starts at its right edge, the reader's
// toolbar starts at the right; nothing overflows sideways, on a phone or a desktop. The same pages
// in English stay left to right, and without the variable the pseudo language is not offered.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { type Bindery, startBindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, register, type Account, type Call } from './helpers';
import { CHROMIUM, HAS_CHROMIUM, launch, openAs } from './web-browser';

declare const document: any;
declare const window: any;

if (!HAS_CHROMIUM) describe.skip(`right to left (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

const BOOKS = ['J. R. Hartley/The Hidden Crown (1864).epub', 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz'];
const RLM = '\u200F';

describe.skipIf(!HAS_CHROMIUM)('the pages right to left (pseudo language ar-XB)', () => {
  let browser: Browser;
  let b: Bindery;
  let call: Call;
  let reader: Account;
  let epub: Record<string, any>;
  beforeAll(async () => {
    browser = await launch();
    b = await startBindery('embedded', { BINDERY_PSEUDO_LOCALE: '1' });
    call = api(b);
    const admin = await register(call);
    reader = await register(call);
    const dir = emptyDir();
    for (const [i, src] of BOOKS.entries()) {
      const dst = join(dir, `book-${i}`, src.split('/').pop()!);
      mkdirSync(join(dst, '..'), { recursive: true });
      copyFileSync(join(FIXTURE, src), dst);
    }
    const lib = await createLibrary(call, admin.token, { name: 'RTL', folders: [dir], watch: false });
    await scan(call, admin.token, lib.id);
    epub = (await items(call, admin.token, lib.id)).find((i) => i.formats[0]?.format === 'epub')!;
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await b?.stop();
  });

  const inLanguage = async (language: string, width: number) => {
    const t = await openAs(browser, b.url, reader.token, width);
    await t.ctx.setExtraHTTPHeaders({ 'Accept-Language': language });
    return t;
  };
  const box = async (page: Page, selector: string) => {
    const r = await page.locator(selector).first().boundingBox();
    expect(r, selector).not.toBeNull();
    return r!;
  };
  /** the page's widest box against the viewport: nothing may stick out sideways */
  const overflow = (page: Page) =>
    page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const out: string[] = [];
      if (document.documentElement.scrollWidth > width) out.push(`document ${document.documentElement.scrollWidth} > ${width}`);
      for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || window.getComputedStyle(el).visibility === 'hidden') continue;
        if (el.closest('.skip, [hidden], details:not([open]) > :not(summary)')) continue;
        if (r.left < -1 || r.right > width + 1) out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}: ${Math.round(r.left)}…${Math.round(r.right)}`);
      }
      return out.slice(0, 10);
    });

  for (const width of [1280, 360]) {
    it(`the dashboard at ${width} px: mirrored topbar and grid, text from the right, nothing overflows`, async () => {
      const t = await inLanguage('ar-XB', width);
      const res = await t.page.goto(`${b.url}/dashboard`);
      expect(res!.status()).toBe(200);
      expect(await t.page.getAttribute('html', 'dir')).toBe('rtl');
      expect(await t.page.getAttribute('html', 'lang')).toBe('ar-XB');
      // the messages are English's between right-to-left marks
      const skip = (await t.page.textContent('a.skip'))!;
      expect(skip.startsWith(RLM) && skip.endsWith(RLM)).toBe(true);
      // the brand starts the topbar: at the right
      const brand = await box(t.page, '.topbar .brand');
      expect(brand.x + brand.width).toBeGreaterThan(width * 0.75);
      if (width > 600) {
        const nav = await box(t.page, '.topbar nav a');
        expect(nav.x + nav.width).toBeLessThan(brand.x + 1);
      }
      // the grid's first card is its rightmost; a card's title starts at its right edge
      const cards = t.page.locator('li.book');
      expect(await cards.count()).toBeGreaterThanOrEqual(2);
      const first = (await cards.nth(0).boundingBox())!;
      const second = (await cards.nth(1).boundingBox())!;
      if (first.y === second.y) expect(first.x).toBeGreaterThan(second.x);
      expect(first.x + first.width).toBeGreaterThan(width * 0.75);
      const title = await cards
        .nth(0)
        .locator('.book-title')
        .evaluate((el) => ({ direction: window.getComputedStyle(el).direction, align: window.getComputedStyle(el).textAlign }));
      expect(title.direction).toBe('rtl');
      expect(['start', 'right', 'center']).toContain(title.align);
      expect(await overflow(t.page)).toEqual([]);
      expect(t.errors).toEqual([]);
      // the same page in English: left to right, the brand at the left
      await t.ctx.setExtraHTTPHeaders({ 'Accept-Language': 'en' });
      await t.page.goto(`${b.url}/dashboard`);
      expect(await t.page.getAttribute('html', 'dir')).toBe('ltr');
      expect((await box(t.page, '.topbar .brand')).x).toBeLessThan(width * 0.25);
      const en = t.page.locator('li.book');
      const enFirst = (await en.nth(0).boundingBox())!;
      const enSecond = (await en.nth(1).boundingBox())!;
      if (enFirst.y === enSecond.y) expect(enFirst.x).toBeLessThan(enSecond.x);
      await t.ctx.close();
    }, 60_000);
  }

  it('a book’s page, the profile, the collections and the reader: right to left, nothing overflows', async () => {
    for (const width of [1280, 360]) {
      const t = await inLanguage('ar-XB', width);
      for (const path of [`/books/${epub.id}`, '/profile', '/collections']) {
        const res = await t.page.goto(`${b.url}${path}`);
        expect(res!.status(), path).toBe(200);
        expect(await t.page.getAttribute('html', 'dir'), path).toBe('rtl');
        expect(await overflow(t.page), `${path} at ${width}`).toEqual([]);
      }
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await t.page.getAttribute('html', 'dir')).toBe('rtl');
      // the reader's toolbar starts at the right: "back to the book" first
      const back = await box(t.page, '#back');
      expect(back.x + back.width).toBeGreaterThan(width * 0.75);
      // the script's words are the pseudo language's too
      const position = (await t.page.textContent('#reader-position'))!;
      expect(position.endsWith(RLM)).toBe(true);
      expect(await overflow(t.page), `reader at ${width}`).toEqual([]);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }
  }, 120_000);
});
