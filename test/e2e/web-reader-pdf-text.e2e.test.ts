// A PDF's text over its page pictures in the web reader (issue 45), in headless Chromium, embedded,
// on PDFs written for the test: the page's words are in a transparent layer laid over the picture's
// drawn area (fit screen and fit width, zoomed by a double click, each page of the vertical column),
// they select with the mouse without turning the page, the arrows still turn; a search finds a word
// on page 2, goes there and marks it; markup in a PDF's text stays text; a PDF without text (a scan)
// gets no layer. The routes: the page text as JSON, the
// search, 404 for an item the caller may not see and for a comic, 400 for a bad page or query, 422
// for a PDF that cannot be read.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, expectError, instances, register, type Account, type Call } from './helpers';
import { textPdf } from './opds-books';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, PAGE_MODES, type Tab } from './web-browser';

declare const document: any;
declare const window: any;

const get = instances(PAGE_MODES);
if (!HAS_CHROMIUM) describe.skip(`the PDF text layer (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';
// markup in a PDF's text (pdf.js leaves out what lies past the page's edge: each line fits the page)
const PAGES = [
  ['Harbour lights shine', 'over quiet water'],
  ['The lighthouse keeper', 'counts the ships'],
  ['Morning fog', '<img src=x onerror=alert.1>', '<b>bold</b>'],
];

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`PDF text layer (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let reader: Account;
    let text: Record<string, any>;
    let scanned: Record<string, any>;
    let corrupt: Record<string, any>;
    let comic: Record<string, any>;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      reader = await register(call);
      const dir = emptyDir();
      mkdirSync(join(dir, 'comics'), { recursive: true });
      writeFileSync(join(dir, 'harbour.pdf'), textPdf('Harbour Notes', PAGES));
      writeFileSync(join(dir, 'scan.pdf'), textPdf('Scanned Pages', [null, null]));
      writeFileSync(join(dir, 'later-broken.pdf'), textPdf('Later Broken', [['Soon unreadable']]));
      copyFileSync(join(FIXTURE, CBZ), join(dir, 'comics/wolken.cbz'));
      const lib = await createLibrary(call, admin.token, { name: `PDF text ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const all = await items(call, admin.token, lib.id);
      const titled = (t: string) => all.find((i) => i.title === t)!;
      text = titled('Harbour Notes');
      scanned = titled('Scanned Pages');
      corrupt = titled('Later Broken');
      comic = all.find((i) => i.formats[0]?.format === 'cbz')!;
      expect([text.page_count, scanned.page_count, corrupt.page_count, comic.page_count]).toEqual([3, 2, 1, 4]);
      // the file goes bad after the scan (the library is not watched): the catalog still lists it
      writeFileSync(join(dir, 'later-broken.pdf'), `%PDF-1.4\n${'garbage '.repeat(40)}\n`);
    }, 240_000);

    const ready = async (t: Tab) => {
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      await t.page.waitForFunction(() => [...document.querySelectorAll('#pages .page-image[src]')].every((i: any) => i.complete && i.naturalWidth > 0));
    };
    const data = (t: Tab, k: string) => t.page.getAttribute('#reader', `data-${k}`);
    /** the text layers shown: their page, their spans' text and their boxes against their picture's */
    const layers = (t: Tab) =>
      t.page.evaluate(() =>
        [...document.querySelectorAll('#pages .text-layer')].map((l: any) => {
          const img = l.previousElementSibling;
          const r = l.getBoundingClientRect();
          const i = img.getBoundingClientRect();
          return {
            index: l.dataset.index,
            words: [...l.querySelectorAll('span')].map((s: any) => s.textContent),
            elements: [...l.querySelectorAll('*')].map((e: any) => e.tagName.toLowerCase()).filter((n: string) => n !== 'span'),
            layer: { x: Math.round(r.left), y: Math.round(r.top), w: Math.round(r.width), h: Math.round(r.height) },
            image: { x: Math.round(i.left), y: Math.round(i.top), w: Math.round(i.width), h: Math.round(i.height) },
            spans: [...l.querySelectorAll('span')].map((s: any) => {
              const b = s.getBoundingClientRect();
              return { x: b.left, y: b.top, w: b.width, h: b.height };
            }),
          };
        }),
      );

    it('the page text lies over the picture, follows the fit, selects with the mouse without turning; arrows turn; a search lands on page 2 with the word marked', async () => {
      const t = await openAs(browser, b.url, reader.token);
      await t.page.goto(`${b.url}/read/${text.id}`);
      await ready(t);
      await t.page.waitForSelector('#pages .text-layer span');
      let [layer] = await layers(t);
      expect(layer!.index).toBe('0');
      expect(layer!.words).toEqual(PAGES[0]);
      // fit screen: the layer is the picture's box (a PDF page picture has the page's shape)
      expect(Math.abs(layer!.layer.x - layer!.image.x)).toBeLessThanOrEqual(1);
      expect(Math.abs(layer!.layer.y - layer!.image.y)).toBeLessThanOrEqual(1);
      expect(Math.abs(layer!.layer.w - layer!.image.w)).toBeLessThanOrEqual(1);
      expect(Math.abs(layer!.layer.h - layer!.image.h)).toBeLessThanOrEqual(1);
      // the first line where it was drawn: x 50 of 420 pt, its baseline at 540 of 595 (24 pt type)
      const first = layer!.spans[0]!;
      const sx = layer!.layer.w / 420;
      expect(Math.abs(first.x - (layer!.layer.x + 50 * sx))).toBeLessThanOrEqual(2);
      expect(Math.abs(first.y - (layer!.layer.y + (595 - 540 - 19.2) * sx))).toBeLessThanOrEqual(3);
      expect(Math.abs(first.h - 24 * sx)).toBeLessThanOrEqual(3);
      // its width is the text's advance in Helvetica (about 215 pt for this line)
      expect(first.w / sx).toBeGreaterThan(180);
      expect(first.w / sx).toBeLessThan(250);

      // fit width: the picture grows, the layer with it
      await t.page.selectOption('#fit', 'width');
      const before = layer!.layer.w;
      await expect.poll(async () => (await layers(t))[0]!.layer.w).toBeGreaterThan(before + 50);
      [layer] = await layers(t);
      // (the picture's height is whole pixels: its drawn width may be a pixel short of its box's)
      expect(Math.abs(layer!.layer.w - layer!.image.w)).toBeLessThanOrEqual(1);
      expect(Math.abs(layer!.layer.h - layer!.image.h)).toBeLessThanOrEqual(1);
      expect(Math.abs(layer!.spans[0]!.x - (layer!.layer.x + (50 * layer!.layer.w) / 420))).toBeLessThanOrEqual(2);
      await t.page.selectOption('#fit', 'screen');
      await expect.poll(async () => Math.abs((await layers(t))[0]!.layer.h - (await layers(t))[0]!.image.h)).toBeLessThanOrEqual(1);

      // a double click zooms (2.5×): the layer grows with the picture; another goes back
      const shown = (await layers(t))[0]!;
      const area = (await t.page.locator('#pages').boundingBox())!;
      const below = { x: area.x + area.width / 2, y: area.y + area.height * 0.8 };
      await t.page.mouse.dblclick(below.x, below.y);
      await expect.poll(() => data(t, 'zoom')).toBe('2.5');
      await expect.poll(async () => (await layers(t))[0]!.layer.w).toBeGreaterThan(shown.layer.w * 2);
      const zoomed = (await layers(t))[0]!;
      expect(Math.abs(zoomed.layer.w - zoomed.image.w)).toBeLessThanOrEqual(1);
      expect(Math.abs(zoomed.layer.h - zoomed.image.h)).toBeLessThanOrEqual(1);
      expect(Math.abs(zoomed.layer.x - zoomed.image.x)).toBeLessThanOrEqual(1);
      expect(Math.abs(zoomed.spans[0]!.x - (zoomed.layer.x + (50 * zoomed.layer.w) / 420))).toBeLessThanOrEqual(3);
      await t.page.mouse.dblclick(below.x, below.y);
      await expect.poll(() => data(t, 'zoom')).toBe('1');
      await expect.poll(async () => Math.abs((await layers(t))[0]!.layer.w - shown.layer.w)).toBeLessThanOrEqual(1);
      expect(await data(t, 'page')).toBe('1');
      await t.page.evaluate(() => window.getSelection().removeAllRanges());

      // a drag over the first line selects its words and turns no page
      [layer] = await layers(t);
      const line = layer!.spans[0]!;
      await t.page.mouse.move(line.x + 1, line.y + line.h / 2);
      await t.page.mouse.down();
      await t.page.mouse.move(line.x + line.w - 1, line.y + line.h / 2, { steps: 8 });
      await t.page.mouse.up();
      await t.page.waitForTimeout(400);
      expect(await t.page.evaluate(() => window.getSelection().toString())).toContain('Harbour lights');
      expect(await data(t, 'page')).toBe('1');

      // the arrows still turn, and the next page has its own text
      await t.page.keyboard.press('ArrowRight');
      expect(await data(t, 'page')).toBe('2');
      await ready(t);
      await expect.poll(async () => (await layers(t)).map((l) => [l.index, l.words])).toEqual([['1', PAGES[1]]]);
      await t.page.keyboard.press('ArrowRight');
      expect(await data(t, 'page')).toBe('3');
      // markup in the PDF's text is text in the layer: no element made, nothing run
      await expect.poll(async () => (await layers(t)).map((l) => [l.index, l.words, l.elements])).toEqual([['2', PAGES[2], []]]);
      expect(t.dialogs).toEqual([]);
      await t.page.keyboard.press('ArrowLeft');
      await t.page.keyboard.press('ArrowLeft');
      expect(await data(t, 'page')).toBe('1');

      // a search for a word on page 2: the result says the page; chosen, it goes there with the word marked
      await t.page.click('#search-menu summary');
      await t.page.fill('#search-q', 'lighthouse');
      await t.page.keyboard.press('Enter');
      await t.page.waitForSelector('#search-results a');
      expect(await t.page.textContent('#search-status')).toBe('1 result for “lighthouse”.');
      expect(await t.page.locator('#search-results a').allTextContents()).toEqual(['Page 2 of 3 The lighthouse keeper counts the ships']);
      expect(await t.page.textContent('#search-results mark')).toBe('lighthouse');
      await t.page.click('#search-results a');
      expect(await data(t, 'page')).toBe('2');
      await t.page.waitForSelector('#pages .text-layer mark.text-hit');
      expect(await t.page.locator('#pages .text-layer mark.text-hit').allTextContents()).toEqual(['lighthouse']);
      expect((await layers(t))[0]!.words).toEqual(PAGES[1]);
      // a match across the end of one line and the start of the next is marked in both lines
      await t.page.click('#search-menu summary');
      await t.page.fill('#search-q', 'keeper counts');
      await t.page.keyboard.press('Enter');
      await expect.poll(() => t.page.textContent('#search-status')).toBe('1 result for “keeper counts”.');
      await t.page.click('#search-results a');
      await expect.poll(() => t.page.locator('#pages .text-layer mark.text-hit').allTextContents()).toEqual(['keeper', 'counts']);
      expect((await layers(t))[0]!.words).toEqual(PAGES[1]);
      await checkPage(t, `${mode}-reader-pdf-text`);

      // the vertical column: each page shown gets its own layer over it
      await t.page.check('#vertical');
      await expect.poll(async () => (await layers(t)).map((l) => l.index).sort()).toEqual(['0', '1', '2']);
      for (const l of await layers(t)) {
        expect(l.words).toEqual(PAGES[Number(l.index)]);
        expect(Math.abs(l.layer.y - l.image.y)).toBeLessThanOrEqual(1);
        expect(Math.abs(l.layer.h - l.image.h)).toBeLessThanOrEqual(1);
        expect(Math.abs(l.layer.w - l.image.w)).toBeLessThanOrEqual(1);
      }
      await t.page.uncheck('#vertical');
      // back to one page: its layer only
      await expect.poll(async () => (await layers(t)).map((l) => Number(l.index) + 1)).toEqual([Number(await data(t, 'page'))]);
      await t.ctx.close();
    });

    it('a PDF without text (a scan) shows its pictures and no layer; a comic asks for no text', async () => {
      const t = await openAs(browser, b.url, reader.token);
      const asked: string[] = [];
      t.page.on('request', (r) => {
        if (/\/text$/.test(r.url())) asked.push(new URL(r.url()).pathname);
      });
      const answered = t.page.waitForResponse((r) => r.url().endsWith(`/opds/pages/${scanned.id}/0/text`));
      await t.page.goto(`${b.url}/read/${scanned.id}`);
      await ready(t);
      const r = await answered;
      expect(r.status()).toBe(200);
      expect(await r.json()).toEqual({ page: 0, width: 420, height: 595, items: [] });
      await t.page.waitForTimeout(300);
      expect(await t.page.locator('#pages .text-layer').count()).toBe(0);
      expect(await t.page.locator('#pages .page-image').count()).toBe(1);

      await t.page.goto(`${b.url}/read/${comic.id}`);
      await ready(t);
      await t.page.waitForTimeout(300);
      expect(await t.page.locator('#pages .text-layer').count()).toBe(0);
      expect(await t.page.locator('#search-menu').count()).toBe(0);
      expect(asked.filter((p) => p.includes(comic.id))).toEqual([]);
      await t.ctx.close();
    });

    it('the routes: page text and search as JSON; 404 for what the caller may not see and for a comic; 400 for a bad page or query; 422 for a broken PDF', async () => {
      const as = { token: reader.token };
      const page = await call('GET', `/opds/pages/${text.id}/1/text`, as);
      expect(page.status, page.text).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^application\/json/);
      expect(page.json.page).toBe(1);
      expect([page.json.width, page.json.height]).toEqual([420, 595]);
      expect(page.json.items.map((i: { str: string }) => i.str)).toEqual(PAGES[1]);
      for (const i of page.json.items) {
        expect(Object.keys(i)).toEqual(['str', 'x', 'y', 'w', 'h']);
        for (const k of ['x', 'y', 'w', 'h']) {
          expect(i[k]).toBeGreaterThanOrEqual(0);
          expect(i[k]).toBeLessThanOrEqual(1);
        }
      }
      expect(page.json.items[0].x).toBeCloseTo(50 / 420, 3);

      const found = await call('GET', `/opds/pages/${text.id}/search?q=${encodeURIComponent('THE SHIPS')}`, as);
      expect(found.status, found.text).toBe(200);
      expect(found.json).toEqual({ hits: [{ page: 1, pre: 'The lighthouse keeper counts ', match: 'the ships', post: '' }], searched: 3, truncated: false });
      const none = await call('GET', `/opds/pages/${text.id}/search?q=zeppelin`, as);
      expect(none.json).toEqual({ hits: [], searched: 3, truncated: false });

      expectError(await call('GET', `/opds/pages/${text.id}/3/text`, as), 404, 'page not found');
      expectError(await call('GET', `/opds/pages/${text.id}/x/text`, as), 400, 'page number must be a whole number from 0');
      expectError(await call('GET', `/opds/pages/${text.id}/search`, as), 400, 'q must be 2 to 200 characters');
      expectError(await call('GET', `/opds/pages/${text.id}/search?q=a`, as), 400, 'q must be 2 to 200 characters');
      expectError(await call('GET', `/opds/pages/${text.id}/search?q=${'a'.repeat(201)}`, as), 400, 'q must be 2 to 200 characters');
      expectError(await call('GET', `/opds/pages/${comic.id}/0/text`, as), 404, "this item's pages are not a PDF: they have no text");
      expectError(await call('GET', `/opds/pages/${comic.id}/search?q=wolken`, as), 404, "this item's pages are not a PDF: they have no text");

      const broken = await call('GET', `/opds/pages/${corrupt.id}/0/text`, as);
      expect(broken.status, broken.text).toBe(422);
      expect(broken.json.error).toMatch(/^cannot read the PDF text: .+/);
      const brokenSearch = await call('GET', `/opds/pages/${corrupt.id}/search?q=soon`, as);
      expect(brokenSearch.status, brokenSearch.text).toBe(422);
      expect(brokenSearch.json.error).toMatch(/^cannot read the PDF text: .+/);

      // someone who may not see the library: the item is not there for them
      const stranger = await register(call);
      const cut = await call('PUT', `/api/auth/users/${stranger.id}/libraries`, { token: admin.token, body: { library_ids: [] } });
      expect(cut.status, cut.text).toBe(200);
      expectError(await call('GET', `/opds/pages/${text.id}/0/text`, { token: stranger.token }), 404, 'media item not found');
      expectError(await call('GET', `/opds/pages/${text.id}/search?q=lighthouse`, { token: stranger.token }), 404, 'media item not found');
      expectError(await call('GET', `/opds/pages/${text.id}/0/text`), 401, 'authentication required');
    });
  });
}
