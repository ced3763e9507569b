// The reader's picture viewer for comics and PDFs (issue 45), in headless Chromium, embedded, on a
// corpus CBZ: fit screen, width, height and original size change the page image's size; a double
// click, ctrl+wheel and a pinch zoom it, a drag pans it; vertical (webtoon) mode stacks every page in
// one column and follows the scroll; the slider shows a thumbnail and goes to its page; the next pages
// are asked for before they are turned to; arrows turn with a toolbar button focused; at 390 px with
// touch a centre tap shows and hides the chrome, a swipe turns, a double tap zooms.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, type Tab, PAGE_MODES } from './web-browser';

declare const document: any;
declare const localStorage: any;
declare function getComputedStyle(e: unknown): any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the comic viewer (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';

/** The page images shown: their size on screen and their own. */
const images = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('#pages .page-image')].map((i: any) => {
      const r = i.getBoundingClientRect();
      return {
        w: Math.round(r.width),
        h: Math.round(r.height),
        top: Math.round(r.top),
        left: Math.round(r.left),
        nw: i.naturalWidth,
        nh: i.naturalHeight,
        src: i.getAttribute('src'),
      };
    }),
  );
const box = (page: Page) =>
  page.evaluate(() => {
    const p = document.getElementById('pages');
    return { w: p.clientWidth, h: p.clientHeight, sw: p.scrollWidth, sh: p.scrollHeight, sl: p.scrollLeft, st: p.scrollTop };
  });

/** A phone: 390 × 844, touch, signed in as `who`. */
async function phone(url: string, who: Account): Promise<Tab> {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
  ctx.setDefaultTimeout(25_000);
  await ctx.addCookies([{ name: 'token', value: who.token, url }]);
  const page = await ctx.newPage();
  const t: Tab = { ctx, page, errors: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') t.errors.push(m.text());
  });
  page.on('pageerror', (e) => t.errors.push(String(e)));
  return t;
}

/** Fingers through Chromium's input pipeline: each step is the fingers' points. */
async function touches(page: Page, steps: { x: number; y: number }[][]): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: steps[0]!.map((p, id) => ({ ...p, id })) });
  for (const s of steps.slice(1)) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: s.map((p, id) => ({ ...p, id })) });
    await page.waitForTimeout(16);
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`comic viewer (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let cbz: Record<string, any>;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const dir = emptyDir();
      mkdirSync(join(dir, 'comics'), { recursive: true });
      copyFileSync(join(FIXTURE, CBZ), join(dir, 'comics/wolken.cbz'));
      const lib = await createLibrary(call, admin.token, { name: `Comics ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      cbz = (await items(call, admin.token, lib.id)).find((i) => i.formats[0]?.format === 'cbz')!;
      expect(cbz.page_count).toBe(4);
    }, 240_000);

    const ready = async (t: Tab) => {
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      await t.page.waitForFunction(() => [...document.querySelectorAll('#pages .page-image[src]')].every((i: any) => i.complete && i.naturalWidth > 0));
    };
    const data = (t: Tab, k: string) => t.page.getAttribute('#reader', `data-${k}`);

    it('fit screen, width, height and original size; zoom by double click, ctrl+wheel and back; a zoomed page pans; the next pages preloaded; the slider with a thumbnail; arrows with a button focused', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      const asked: string[] = [];
      t.page.on('request', (r) => {
        const m = /\/opds\/pages\/[^/]+\/(\d+)\?width=\d+$/.exec(r.url());
        if (m) asked.push(m[1]!);
      });
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await ready(t);
      // the next pages are asked for before they are turned to
      await expect.poll(() => [...new Set(asked)].sort()).toEqual(['0', '1', '2', '3']);
      expect(await data(t, 'page')).toBe('1');
      const area = await box(t.page);
      // fit screen (the default): the whole page inside the area
      const [screen] = await images(t.page);
      expect(await data(t, 'fit')).toBe('screen');
      expect(screen!.w).toBeLessThanOrEqual(area.w);
      expect(screen!.h).toBeLessThanOrEqual(area.h);
      expect(Math.max(screen!.w / area.w, screen!.h / area.h)).toBeGreaterThan(0.98);
      // fit width: as wide as the area, taller than it (it scrolls)
      await t.page.selectOption('#fit', 'width');
      const [wide] = await images(t.page);
      expect(wide!.w).toBe(area.w);
      expect(wide!.h).toBeGreaterThan(area.h);
      expect((await box(t.page)).sh).toBeGreaterThan(area.h);
      // fit height: as tall as the area
      await t.page.selectOption('#fit', 'height');
      const [tall] = await images(t.page);
      expect(tall!.h).toBe(area.h);
      // original: the picture's own pixels
      await t.page.selectOption('#fit', 'original');
      const [own] = await images(t.page);
      expect([own!.w, own!.h]).toEqual([own!.nw, own!.nh]);
      expect(await t.page.evaluate(() => localStorage.getItem('bindery.reader.fit'))).toBe('original');
      await t.page.selectOption('#fit', 'screen');

      // a double click zooms at the pointer (2.5 times), another goes back
      const p = (await t.page.locator('#pages').boundingBox())!;
      await t.page.mouse.dblclick(p.x + p.width / 2, p.y + p.height / 3);
      await expect.poll(() => data(t, 'zoom')).toBe('2.5');
      const [zoomed] = await images(t.page);
      expect(Math.abs(zoomed!.w - screen!.w * 2.5)).toBeLessThanOrEqual(3);
      const z = await box(t.page);
      expect(z.sw).toBeGreaterThan(z.w);
      expect(z.sh).toBeGreaterThan(z.h);
      // (a double click is no page turn)
      expect(await data(t, 'page')).toBe('1');
      // dragged, the zoomed page pans
      await t.page.mouse.move(p.x + p.width / 2, p.y + p.height / 2);
      await t.page.mouse.down();
      await t.page.mouse.move(p.x + p.width / 2 - 150, p.y + p.height / 2 - 100, { steps: 5 });
      await t.page.mouse.up();
      const panned = await box(t.page);
      expect(panned.sl).toBe(Math.min(z.sw - z.w, z.sl + 150));
      expect(panned.st).toBe(Math.min(z.sh - z.h, z.st + 100));
      await t.page.mouse.dblclick(p.x + p.width / 2, p.y + p.height / 2);
      await expect.poll(() => data(t, 'zoom')).toBe('1');
      expect((await images(t.page))[0]!.w).toBe(screen!.w);
      // ctrl+wheel (a trackpad's pinch) zooms in and out
      await t.page.mouse.move(p.x + p.width / 2, p.y + p.height / 2);
      await t.page.keyboard.down('Control');
      await t.page.mouse.wheel(0, -100);
      await t.page.keyboard.up('Control');
      await expect.poll(async () => Number(await data(t, 'zoom'))).toBeGreaterThan(2);
      expect((await images(t.page))[0]!.w).toBeGreaterThan(screen!.w * 2);
      await t.page.keyboard.down('Control');
      await t.page.mouse.wheel(0, 400);
      await t.page.keyboard.up('Control');
      await expect.poll(() => data(t, 'zoom')).toBe('1');
      expect(await data(t, 'page')).toBe('1');

      // arrows turn while the next-page button has the focus
      await t.page.click('#next');
      expect(await data(t, 'page')).toBe('2');
      expect(await t.page.evaluate(() => document.activeElement.id)).toBe('next');
      await t.page.keyboard.press('ArrowRight');
      expect(await data(t, 'page')).toBe('3');
      await t.page.focus('#spread');
      await t.page.keyboard.press('ArrowLeft');
      expect(await data(t, 'page')).toBe('2');

      // the slider: a thumbnail of the page it points at, then that page
      expect(await t.page.getAttribute('#page-slider', 'max')).toBe('4');
      expect(await t.page.inputValue('#page-slider')).toBe('2');
      await t.page.evaluate(() => {
        const s = document.getElementById('page-slider');
        s.value = '4';
        s.dispatchEvent(new Event('input', { bubbles: true }));
      });
      expect(await t.page.isVisible('#thumb')).toBe(true);
      expect(await t.page.textContent('#thumb-caption')).toBe('Page 4 of 4');
      expect(await t.page.getAttribute('#thumb-image', 'src')).toMatch(new RegExp(`^/opds/pages/${cbz.id}/3\\?width=128$`));
      await t.page.waitForFunction(() => document.getElementById('thumb-image').naturalWidth > 0);
      await checkPage(t, `${mode}-reader-comic-slider`);
      await t.page.evaluate(() => document.getElementById('page-slider').dispatchEvent(new Event('change', { bubbles: true })));
      expect(await data(t, 'page')).toBe('4');
      expect(await t.page.isVisible('#thumb')).toBe(false);
      // the slider keeps its own arrows
      await t.page.focus('#page-slider');
      await t.page.keyboard.press('ArrowLeft');
      expect(await t.page.inputValue('#page-slider')).toBe('3');
      await expect.poll(() => data(t, 'page')).toBe('3');
      // the place is saved as a page
      await expect.poll(async () => (await call('GET', `/api/media-items/${cbz.id}/progress`, { token: who.token })).json?.page, { timeout: 10_000 }).toBe(3);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('vertical (webtoon) mode: every page in one column, the place follows the scroll, kept for the book', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await ready(t);
      await t.page.check('#vertical');
      expect(await data(t, 'mode')).toBe('vertical');
      const column = await images(t.page);
      expect(column).toHaveLength(4);
      // stacked: one under the other, same left edge, same width
      for (let i = 1; i < column.length; i++) {
        expect(Math.abs(column[i]!.top - (column[i - 1]!.top + column[i - 1]!.h))).toBeLessThanOrEqual(1);
        expect(column[i]!.left).toBe(column[0]!.left);
        expect(column[i]!.w).toBe(column[0]!.w);
      }
      // the last page scrolled to: the place
      await t.page.evaluate(() => {
        const p = document.getElementById('pages');
        p.scrollTop = p.scrollHeight;
      });
      await expect.poll(() => data(t, 'page')).toBe('4');
      await t.page.waitForFunction(() => [...document.querySelectorAll('#pages .page-image')].every((i: any) => i.complete && i.naturalWidth > 0));
      // the next-page keys go page by page in the column
      await t.page.click('#prev');
      await expect.poll(() => data(t, 'page')).toBe('3');
      // fit width in the column: the column is the area's width
      await t.page.selectOption('#fit', 'width');
      const area = await box(t.page);
      expect((await images(t.page)).every((i) => i.w === area.w)).toBe(true);
      await checkPage(t, `${mode}-reader-comic-vertical`);
      // kept for this book
      await t.page.reload();
      await ready(t);
      expect(await t.page.isChecked('#vertical')).toBe(true);
      expect(await images(t.page)).toHaveLength(4);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('a phone (390 px, touch): a centre tap shows and hides the chrome, a swipe turns and hides it, a double tap zooms, a pinch zooms', async () => {
      const who = await register(call);
      const t = await phone(b.url, who);
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await ready(t);
      const chrome = () => data(t, 'chrome');
      expect(await chrome()).toBe('shown');
      await touches(t.page, [[{ x: 330, y: 450 }], [{ x: 250, y: 450 }], [{ x: 150, y: 450 }], [{ x: 60, y: 450 }]]);
      expect(await data(t, 'page')).toBe('2');
      expect(await chrome()).toBe('hidden');
      await expect.poll(() => t.page.evaluate(() => getComputedStyle(document.getElementById('page-bar')).visibility)).toBe('hidden');
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('shown');
      await t.page.waitForTimeout(500);
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('hidden');
      await t.page.waitForTimeout(500);
      // the right edge goes on
      await t.page.touchscreen.tap(375, 450);
      await expect.poll(() => data(t, 'page')).toBe('3');
      await t.page.waitForTimeout(500);
      // a double tap zooms, another goes back
      await t.page.touchscreen.tap(195, 400);
      await t.page.waitForTimeout(80);
      await t.page.touchscreen.tap(195, 400);
      await expect.poll(() => data(t, 'zoom')).toBe('2.5');
      expect(await data(t, 'page')).toBe('3');
      await t.page.waitForTimeout(500);
      await t.page.touchscreen.tap(195, 400);
      await t.page.waitForTimeout(80);
      await t.page.touchscreen.tap(195, 400);
      await expect.poll(() => data(t, 'zoom')).toBe('1');
      await t.page.waitForTimeout(500);
      // two fingers apart: larger
      const before = (await images(t.page))[0]!.w;
      await touches(
        t.page,
        [0, 1, 2, 3, 4, 5].map((i) => [
          { x: 170 - i * 20, y: 420 },
          { x: 220 + i * 20, y: 420 },
        ]),
      );
      await expect.poll(async () => Number(await data(t, 'zoom'))).toBeGreaterThan(2);
      expect((await images(t.page))[0]!.w).toBeGreaterThan(before * 2);
      expect(await data(t, 'page')).toBe('3');
      await t.page.waitForTimeout(500);
      await t.page.touchscreen.tap(195, 400);
      await t.page.waitForTimeout(80);
      await t.page.touchscreen.tap(195, 400);
      await expect.poll(() => data(t, 'zoom')).toBe('1');
      await t.page.waitForTimeout(500);
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('shown');
      await checkPage(t, `${mode}-reader-comic-phone`);
      await t.ctx.close();
    }, 120_000);
  });
}
