// The reader's text settings, themes, keys and phone mode (issue 45), in headless Chromium, embedded:
// on the corpus EPUB (pandoc's, whose CSS sets `body { font-size: medium }`) A+ changes the computed
// size in the book's frame, and font, spacing, alignment, hyphenation and margins win over the
// book's CSS, for all books or for one; the four themes colour the book, the frame around it and the
// chrome; arrow keys turn pages while a toolbar button has the focus, not while a text field has it;
// at 390 px with touch, a centre tap shows and hides the chrome, a swipe and an edge tap turn.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Frame, Page } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, type Tab, PAGE_MODES } from './web-browser';

declare const document: any;
declare const localStorage: any;
declare function getComputedStyle(e: unknown): any;
declare function createImageBitmap(b: unknown): Promise<unknown>;
declare const OffscreenCanvas: any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the reader's settings (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const OTHER = 'unsorted/Aleksandr_Petrov_Golden_Crowns.epub';
/** a sentence of chapter 1 of the crown */
const FIRST = 'Pon ka faties tor dofa ponisra loren tor islo an sa renestor vel dodo.';

/** The frame (inside foliate's closed shadow root) showing the section that holds `text`. */
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

/** The colour of the screen's pixel at (x, y), as `rgb(r, g, b)`: what the reader sees there, whoever painted it. */
async function pixel(page: Page, x: number, y: number): Promise<string> {
  const png = await page.screenshot({ clip: { x, y, width: 1, height: 1 } });
  return page.evaluate(async (b64: string) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const ctx = new OffscreenCanvas(1, 1).getContext('2d')!;
    ctx.drawImage(bmp, 0, 0);
    const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
    return `rgb(${r}, ${g}, ${b})`;
  }, png.toString('base64'));
}

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

/** A real finger's horizontal swipe (through Chromium's input pipeline, into the book's frame). */
async function swipe(page: Page, from: number, to: number, y: number): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: from, y }] });
  for (let i = 1; i <= 8; i++) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: from + ((to - from) * i) / 8, y }] });
    await page.waitForTimeout(16);
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`reader settings, themes, keys and phone (${mode})`, () => {
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
      const lib = await createLibrary(call, admin.token, { name: `Reader settings ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      epub = list.find((i) => i.formats[0]?.file_path.startsWith('crown/'))!;
      other = list.find((i) => i.formats[0]?.file_path.startsWith('other/'))!;
      expect(epub.title).toBe('The Hidden Crown');
      expect(other).toBeDefined();
    }, 240_000);

    /** opens a toolbar menu (a <details>) unless it is open */
    const menu = async (t: Tab, id: string) => {
      if (!(await t.page.evaluate((i: string) => document.getElementById(i).open, id))) await t.page.click(`#${id} summary`);
    };
    const ready = (t: Tab) => t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
    const data = (t: Tab, k: string) => t.page.getAttribute('#reader', `data-${k}`);
    const chapterOne = async (t: Tab) => {
      await t.page.click('#toc summary');
      await t.page.locator('#toc-list a', { hasText: 'Chapter 1' }).click();
      return frameWith(t.page, FIRST);
    };
    /** the computed style of chapter 1's first paragraph and of the body, in the book's frame */
    const styles = (f: Frame) =>
      f.evaluate(() => {
        const p = [...document.querySelectorAll('p')].find((e: any) => e.textContent.includes('Pon ka faties'));
        const ps = getComputedStyle(p);
        const bs = getComputedStyle(document.body);
        return {
          body: bs.fontSize,
          size: ps.fontSize,
          family: ps.fontFamily,
          lineHeight: ps.lineHeight,
          align: ps.textAlign,
          hyphens: ps.hyphens,
          width: Math.round(p.getBoundingClientRect().width),
          bg: getComputedStyle(document.documentElement).backgroundColor,
          colour: ps.color,
        };
      });

    it('A+/A− change the computed size on a `body { font-size: medium }` book; font, spacing, alignment, hyphenation and margins win over its CSS; for all books or this one; kept', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      const f = await chapterOne(t);
      // the book's own CSS holds the body at `medium` and justifies it (pandoc's default)
      expect(
        await f.evaluate(() => [...document.styleSheets].some((s: any) => [...s.cssRules].some((r: any) => /^body\b/.test(r.selectorText ?? '') && r.style.fontSize === 'medium'))),
      ).toBe(true);
      const before = await styles(f);
      expect(before).toMatchObject({ body: '16px', size: '16px', align: 'justify', lineHeight: '24px' });
      await t.page.click('#settings summary');
      expect(await t.page.textContent('#font-size')).toBe('100 %');
      await t.page.click('#font-larger');
      await t.page.click('#font-larger');
      expect(await t.page.textContent('#font-size')).toBe('120 %');
      expect(await styles(f)).toMatchObject({ body: '19.2px', size: '19.2px' });
      await t.page.click('#font-smaller');
      expect((await styles(f)).size).toBe('17.6px');
      await t.page.click('#font-larger');
      await t.page.selectOption('#font-family', 'sans');
      await t.page.selectOption('#line-spacing', '1.9');
      await t.page.selectOption('#text-align', 'start');
      await t.page.selectOption('#hyphens', 'auto');
      const set = await styles(f);
      expect(set).toMatchObject({ size: '19.2px', align: 'start', hyphens: 'auto' });
      expect(Number.parseFloat(set.lineHeight)).toBeCloseTo(19.2 * 1.9, 2);
      expect(set.family).toMatch(/^system-ui, /);
      expect(before.family).not.toMatch(/^system-ui/);
      // wide margins: a narrower column of text
      await t.page.selectOption('#margins', 'wide');
      const f2 = await frameWith(t.page, FIRST);
      await expect.poll(async () => (await styles(f2)).width).toBeLessThan(set.width);
      expect(await t.page.evaluate(() => ['font', 'family', 'spacing', 'align', 'hyphens', 'margins'].map((k) => localStorage.getItem(`bindery.reader.${k}`)))).toEqual([
        '120',
        'sans',
        '1.9',
        'start',
        'auto',
        'wide',
      ]);
      await checkPage(t, `${mode}-reader-text-settings`);

      // this book only: a larger size here, the others keep the size for all books
      await menu(t, 'settings');
      await t.page.check('#only-this-book');
      await t.page.click('#font-larger');
      expect(await t.page.textContent('#font-size')).toBe('130 %');
      expect(await t.page.evaluate(() => localStorage.getItem('bindery.reader.font'))).toBe('120');
      expect(JSON.parse((await t.page.evaluate((id: string) => localStorage.getItem(`bindery.reader.book.${id}`), epub.id))!)).toMatchObject({ font: '130', family: 'sans' });
      await t.page.goto(`${b.url}/read/${other.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await t.page.textContent('#font-size')).toBe('120 %');
      expect(await t.page.isChecked('#only-this-book')).toBe(false);
      // kept: the crown opens with its own
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      const f3 = await chapterOne(t);
      expect(await styles(f3)).toMatchObject({ size: '20.8px', align: 'start', hyphens: 'auto' });
      await menu(t, 'settings');
      expect(await t.page.isChecked('#only-this-book')).toBe(true);
      expect(await t.page.inputValue('#font-family')).toBe('sans');
      // back to the settings for all books
      await t.page.uncheck('#only-this-book');
      expect(await t.page.textContent('#font-size')).toBe('120 %');
      expect((await styles(f3)).size).toBe('19.2px');
      expect(await t.page.evaluate((id: string) => localStorage.getItem(`bindery.reader.book.${id}`), epub.id)).toBeNull();
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('themes: light, sepia, dark and black colour the book, the frame around it and the chrome, on a dark profile', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      const f = await chapterOne(t);
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-dark');
      const view = (await t.page.locator('#book-view').boundingBox())!;
      // the frame: the margin above the text, painted by foliate around the section's frame
      const frameColour = () => pixel(t.page, view.x + view.width / 2, view.y + 8);
      const bar = () => t.page.evaluate(() => getComputedStyle(document.querySelector('.reader-bar')).backgroundColor);
      expect(await frameColour()).toBe('rgb(26, 27, 38)');
      const themes = [
        ['light', 'rgb(255, 255, 255)', 'rgb(255, 255, 255)', 'reader-page theme-light'],
        ['sepia', 'rgb(244, 236, 216)', 'rgb(251, 245, 230)', 'reader-page theme-light reader-sepia'],
        ['dark', 'rgb(26, 27, 38)', 'rgb(36, 40, 59)', 'reader-page theme-dark'],
        ['black', 'rgb(0, 0, 0)', 'rgb(16, 16, 16)', 'reader-page theme-dark reader-black'],
      ] as const;
      await menu(t, 'settings');
      for (const [theme, book, chrome, classes] of themes) {
        await t.page.selectOption('#reader-theme', theme);
        expect(await t.page.getAttribute('html', 'class'), theme).toBe(classes);
        expect((await styles(f)).bg, theme).toBe(book);
        await expect.poll(frameColour, { message: `${theme}: the frame around the book` }).toBe(book);
        expect(await bar(), theme).toBe(chrome);
        if (theme === 'sepia') await checkPage(t, `${mode}-reader-theme-sepia`);
        if (theme === 'black') await checkPage(t, `${mode}-reader-theme-black`);
      }
      // black: light text on black, in the book too
      expect((await styles(f)).colour).toBe('rgb(208, 208, 208)');
      expect(await t.page.evaluate(() => localStorage.getItem('bindery.reader.theme'))).toBe('black');
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('arrow keys turn pages while a toolbar button has the focus, not while a text field has it', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      await chapterOne(t);
      const fraction = async () => Number(await data(t, 'fraction'));
      // the next-page button clicked: it keeps the focus, and the arrows still turn
      await t.page.click('#next');
      await t.page.waitForTimeout(300);
      expect(await t.page.evaluate(() => document.activeElement.id)).toBe('next');
      const at = await fraction();
      await t.page.keyboard.press('ArrowRight');
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, at);
      const further = await fraction();
      await t.page.waitForTimeout(300);
      // a link of the toolbar: the same
      await t.page.focus('#back');
      await t.page.keyboard.press('ArrowLeft');
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) < f, further);
      const back = await fraction();
      await t.page.waitForTimeout(300);
      // Space on a focused button is the button's, not a page turn
      await t.page.click('#settings summary');
      await t.page.focus('#font-larger');
      await t.page.keyboard.press('ArrowRight');
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, back);
      const beforeSpace = await fraction();
      await t.page.keyboard.press('Space');
      expect(await t.page.textContent('#font-size')).toBe('110 %');
      await t.page.waitForTimeout(400);
      expect(await fraction()).toBeCloseTo(beforeSpace, 2);
      // a text field keeps its arrows
      await t.page.click('#settings summary');
      await t.page.click('#search-menu summary');
      await t.page.fill('#search-q', 'crown');
      const typed = await fraction();
      await t.page.keyboard.press('ArrowLeft');
      await t.page.keyboard.press('ArrowLeft');
      await t.page.waitForTimeout(400);
      expect(await fraction()).toBe(typed);
      expect(await t.page.evaluate(() => document.activeElement.selectionStart)).toBe(3);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('a phone (390 px, touch): immersive reading — the chrome hides after the first turn, a centre tap shows and hides it, a swipe and an edge tap turn; safe areas', async () => {
      const who = await register(call);
      const t = await phone(b.url, who);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      expect(await t.page.getAttribute('meta[name="viewport"]', 'content')).toBe('width=device-width,initial-scale=1,viewport-fit=cover');
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-dark reader-immersive');
      const chrome = () => data(t, 'chrome');
      const barShown = () => t.page.evaluate(() => getComputedStyle(document.querySelector('.reader-bar')).visibility);
      expect(await chrome()).toBe('shown');
      expect(await barShown()).toBe('visible');
      // a move from the contents is a turn: the chrome goes
      await chapterOne(t);
      await expect.poll(chrome).toBe('hidden');
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('shown');
      // the book has the whole screen: the bar lies over it
      const view = (await t.page.locator('#book-view').boundingBox())!;
      expect(view.height).toBeGreaterThan(800);
      expect(view.width).toBe(390);
      const at = Number(await data(t, 'fraction'));
      await t.page.waitForTimeout(400);
      await swipe(t.page, 320, 60, 500);
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, at);
      await expect.poll(chrome).toBe('hidden');
      await expect.poll(barShown).toBe('hidden');
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('shown');
      await expect.poll(barShown).toBe('visible');
      // (two taps in quick succession are a double tap, which selects a word)
      await t.page.waitForTimeout(700);
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('hidden');
      // the right edge turns on, the left edge back; the chrome stays hidden
      const swiped = Number(await data(t, 'fraction'));
      await t.page.waitForTimeout(700);
      await t.page.touchscreen.tap(375, 450);
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, swiped);
      const tapped = Number(await data(t, 'fraction'));
      await t.page.waitForTimeout(700);
      await t.page.touchscreen.tap(15, 450);
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) < f, tapped);
      expect(await chrome()).toBe('hidden');
      // the toolbar keeps clear of a notch: its padding is at least the safe area's
      expect(await t.page.evaluate(() => [...document.adoptedStyleSheets].some((s: any) => [...s.cssRules].some((r: any) => r.cssText.includes('env(safe-area-inset-top)'))))).toBe(
        true,
      );
      // shown again for axe and the screenshots
      await t.page.waitForTimeout(700);
      await t.page.touchscreen.tap(195, 450);
      await expect.poll(chrome).toBe('shown');
      await checkPage(t, `${mode}-reader-phone`);
      await t.ctx.close();
    }, 120_000);
  });
}
