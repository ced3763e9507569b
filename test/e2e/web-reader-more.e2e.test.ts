// The web reader's second part (issue 19), in headless Chromium, in both modes: a sentence selected
// in the corpus EPUB and highlighted becomes the reading service's annotation, which the KOReader
// plugin's pull gives back with XPointers of the same sentence; a highlight pushed by KOReader is
// listed and drawn in the reader and deleted from it; a note with hostile text is text; search in
// the book (results with excerpts, keyboard); the reader's settings (font, theme, margins) kept in
// the browser; swipe and tap-zone navigation; a position pushed through stock kosync while the book
// is open is offered, and accepting it moves the reader and saves there. axe, console errors,
// keyboard and screenshots at 360/1280 px for each.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Frame, Page } from 'playwright-core';
import { epubText } from '../../services/catalog/src/formats/epub';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { asDevice, enroll, type Enrolled } from './device-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, progressWrites, tabTo, PAGE_MODES } from './web-browser';
import * as L from '@bindery/locator';

declare const document: any;
declare const localStorage: any;
declare function getComputedStyle(e: unknown): any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the web reader, part two (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub');
const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';
// the crown's locator index and texts, as the catalog makes them, to read XPointers back as text
const { index: idx, texts } = await epubText(EPUB);
/** sentences of chapter 1 (on the reader's first page) and chapter 2 */
const FIRST = 'Pon ka faties tor dofa ponisra loren tor islo an sa renestor vel dodo.';
const SECOND = 'Issa ti dodo miispon velmor renti mi mormi qusa fa ber.';
const FROM_KOREADER = 'Reneska quti ponan velka qutorra vel lo velsaul torlo lovelra esulra do mi ka ties.';
const HOSTILE = '<img src=x onerror=alert(1)><script>alert(2)</script> & "quotes"';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
/** the spine position of a CFI (`/6/<2(i+1)>`) as crengine's DocFragment number (1-based) */
const docFragmentOf = (cfi: string) => Number(/^epubcfi\(\/6\/(\d+)/.exec(cfi)![1]) / 2;
/** where a sentence is in the book, as canonical offsets */
function place(sentence: string) {
  const spine = texts.findIndex((t) => t.includes(sentence));
  expect(spine, sentence).toBeGreaterThanOrEqual(0);
  const offset = texts[spine]!.indexOf(sentence);
  return { start: { spine, offset }, end: { spine, offset: offset + sentence.length } };
}
/** the book's text between two XPointers */
function textOf(pos0: string, pos1: string): string {
  const a = L.xpointerToCanonical(idx, pos0)!.pos;
  const b = L.xpointerToCanonical(idx, pos1)!.pos;
  expect(b.spine).toBe(a.spine);
  return texts[a.spine]!.slice(a.offset, b.offset);
}

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
  const seen = await Promise.all(
    page.frames().map(async (f) => `${f.url().slice(0, 40)}: ${await f.evaluate(() => String(document.body?.textContent).slice(0, 80)).catch((e) => String(e).slice(0, 80))}`),
  );
  throw new Error(`no frame shows “${text}” (${seen.join(' | ')})`);
}

/** Selects `text` in the book's frame, as a reader's drag would. */
async function select(page: Page, text: string): Promise<void> {
  const f = await frameWith(page, text);
  await f.evaluate((s) => {
    const walk = document.createTreeWalker(document.body, 4);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const i = n.data.indexOf(s);
      if (i < 0) continue;
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + s.length);
      const sel = document.getSelection();
      sel.removeAllRanges();
      sel.addRange(r);
      return;
    }
    throw new Error('not in the frame');
  }, text);
  await page.waitForSelector('#selection:not([hidden])');
  expect(await page.getAttribute('#reader', 'data-selection')).toBe(text);
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`web reader, part two (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let epub: Record<string, any>;
    let cbz: Record<string, any>;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const dir = emptyDir();
      for (const [src, dst] of [
        [EPUB, 'crown/The Hidden Crown.epub'],
        [join(FIXTURE, CBZ), 'comics/wolken.cbz'],
      ] as const) {
        mkdirSync(join(dir, dst, '..'), { recursive: true });
        copyFileSync(src, join(dir, dst));
      }
      const lib = await createLibrary(call, admin.token, { name: `Reader 2 ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      epub = list.find((i) => i.formats[0]?.format === 'epub')!;
      cbz = list.find((i) => i.formats[0]?.format === 'cbz')!;
      expect(epub.title).toBe('The Hidden Crown');
    }, 240_000);

    /** A browser signed in as `who`, recording the reader's position writes. */
    const as = async (who: Account, width = 1280) => {
      const t = await openAs(browser, b.url, who.token, width);
      return { ...t, writes: progressWrites(t.page) };
    };
    type T = Awaited<ReturnType<typeof as>>;
    const ready = async (t: T, reflowable = true) => {
      await t.page.waitForSelector(reflowable ? '#reader[data-ready="true"][data-cfi]' : '#reader[data-ready="true"]', { timeout: 30_000 });
    };
    /** the first chapter, by the table of contents (the reader opens at the cover) */
    const chapterOne = async (t: T) => {
      await t.page.click('#toc summary');
      await t.page.locator('#toc-list a', { hasText: 'Chapter 1' }).click();
      await frameWith(t.page, FIRST);
    };
    const data = (t: T, k: string) => t.page.getAttribute('#reader', `data-${k}`);
    const plugin = (d: Enrolled) => ({
      meta: () => call('GET', `/api/sync/koreader/metadata/${epub.id}`, asDevice(d.token)),
      marks: (body: Record<string, unknown>) => call('POST', '/api/sync/koreader/bookmarks', asDevice(d.token, { body })),
    });

    it('a sentence highlighted in the reader reaches the KOReader plugin as XPointers of that sentence; a note with hostile text is text; a KOReader highlight is drawn, listed and deleted', async () => {
      const reader = await register(call);
      const dev = await enroll(call, reader, 'Kobo Libra');
      const t = await as(reader);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      await t.page.waitForSelector('#reader[data-annotations-loaded="true"]');
      expect(await data(t, 'annotations')).toBe('0');
      await chapterOne(t);

      // select a sentence of the first page, highlight it in green (the toolbar leaves it visible: it is near the top, the toolbar at the bottom)
      await select(t.page, FIRST);
      expect(await t.page.getAttribute('#selection', 'class')).toBe('reader-selection at-bottom');
      const made = t.page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/api/media-items/${epub.id}/highlights`));
      await t.page.click('button[data-colour="green"]');
      const res = await made;
      expect(res.status()).toBe(201);
      const sent = res.request().postDataJSON();
      expect(sent).toEqual({
        position: { epubcfi: expect.stringMatching(/^epubcfi\(\/6\/\d+.*,.*,.*\)$/) },
        text: FIRST,
        color: 'green',
        dedup_key: expect.stringMatching(/^web-[0-9a-f-]{36}$/),
      });
      expect(docFragmentOf(sent.position.epubcfi)).toBe(place(FIRST).start.spine + 1);
      await t.page.waitForSelector('#selection', { state: 'hidden' });
      expect(await t.page.textContent('#reader-status')).toBe('The highlight was saved.');
      // listed and drawn in the book
      const first = t.page.locator('#notes-list li[data-kind="highlight"]');
      await t.page.waitForSelector('#notes-list li[data-kind="highlight"][data-drawn="true"]', { state: 'attached' });
      expect(await first.locator('blockquote').textContent()).toBe(FIRST);
      expect(await first.locator('.swatch').getAttribute('class')).toBe('swatch swatch-green');

      // the reading service's record: the sentence, at the sentence
      const web = await call('GET', `/api/media-items/${epub.id}/highlights`, { token: reader.token });
      expect(web.json.data).toHaveLength(1);
      const h = web.json.data[0];
      expect(h).toMatchObject({ type: 'highlight', text: FIRST, color: '#9ece6a' });
      const at = place(FIRST);
      expect(h.position).toMatchObject({ spine_index: at.start.spine, doc_offset: at.start.offset, end_spine_index: at.end.spine, end_doc_offset: at.end.offset });
      // KOReader's pull: XPointers whose text is the sentence
      const m = await plugin(dev).meta();
      expect(m.status, m.text).toBe(200);
      const pulled = m.json.highlights.find((x: { text: string }) => x.text === FIRST);
      expect(pulled).toMatchObject({ type: 'highlight', color: 'green', book_sha256: epub.sha256 });
      expect(pulled.pos0).toMatch(/^\/body\/DocFragment\[\d+\]\/body\//);
      expect(textOf(pulled.pos0, pulled.pos1)).toBe(FIRST);

      // a note, by keyboard, with hostile text: shown as text
      await select(t.page, SECOND);
      await t.page.focus('#selection-note');
      await t.page.keyboard.press('Enter');
      expect(await t.page.evaluate(() => document.activeElement.id)).toBe('note-text');
      await t.page.keyboard.type(HOSTILE);
      await checkPage(t, `${mode}-reader-selection`);
      expect(await t.page.evaluate(() => document.activeElement.id)).toBe('note-text');
      await t.page.keyboard.press('Tab');
      expect(await t.page.evaluate(() => document.activeElement.textContent)).toBe('Save note');
      const noted = t.page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/notes'));
      await t.page.keyboard.press('Enter');
      expect((await noted).status()).toBe(201);
      const note = t.page.locator('#notes-list li[data-kind="note"]');
      await t.page.waitForSelector('#notes-list li[data-kind="note"][data-drawn="true"]', { state: 'attached' });
      expect(await note.locator('.annotation-note').textContent()).toBe(HOSTILE);
      expect(await note.locator('blockquote').textContent()).toBe(SECOND);
      expect(await t.page.locator('#notes-list img, #notes-list script').count()).toBe(0);
      expect(await data(t, 'annotations')).toBe('2');
      const notes = await call('GET', `/api/media-items/${epub.id}/notes`, { token: reader.token });
      expect(notes.json.data).toMatchObject([{ type: 'note', text: SECOND, note: HOSTILE }]);

      // KOReader highlights a sentence of chapter 2: listed on reload, drawn when its chapter is shown
      const kr = place(FROM_KOREADER);
      const pushed = await plugin(dev).marks({
        book_uuid: epub.id,
        highlights: [
          {
            dedup_key: 'kr-1',
            type: 'highlight',
            pos0: L.canonicalToXPointer(idx, kr.start),
            pos1: L.canonicalToXPointer(idx, kr.end),
            text: FROM_KOREADER,
            color: 'blue',
            page: 4,
          },
        ],
      });
      expect(pushed.status, pushed.text).toBe(200);
      expect(pushed.json).toMatchObject({ created: 1 });
      await t.page.reload();
      await ready(t);
      await t.page.waitForSelector('#reader[data-annotations-loaded="true"]');
      expect(await data(t, 'annotations')).toBe('3');
      expect(await t.page.textContent('#notes-status')).toBe('Highlights and notes in this book: 3.');
      expect(await t.page.locator('#notes-list blockquote').allTextContents()).toEqual([FIRST, SECOND, FROM_KOREADER]);
      const fromKr = t.page.locator('#notes-list li', { hasText: FROM_KOREADER });
      expect(await fromKr.locator('.swatch').getAttribute('class')).toBe('swatch swatch-blue');
      expect(await fromKr.getAttribute('data-drawn')).toBeNull();
      // by keyboard: the panel, then its "Go to"
      await tabTo(t.page, '#notes-menu summary');
      await t.page.keyboard.press('Enter');
      await fromKr.locator('a').focus();
      await t.page.keyboard.press('Enter');
      await t.page.waitForSelector(`#notes-list li[data-id="${await fromKr.getAttribute('data-id')}"][data-drawn="true"]`, { state: 'attached' });
      await t.page.waitForFunction((n) => Number(/^epubcfi\(\/6\/(\d+)/.exec(document.querySelector('#reader').dataset.cfi)?.[1]) / 2 === n, kr.start.spine + 1);
      await t.page.click('#notes-menu summary');
      await checkPage(t, `${mode}-reader-notes`);

      // deleted from the panel: gone from the service and from KOReader's next pull
      const gone = t.page.waitForResponse((r) => r.request().method() === 'DELETE');
      await fromKr.getByRole('button', { name: /^Delete the highlight: Reneska quti/ }).click();
      expect((await gone).status()).toBe(200);
      await t.page.waitForFunction(() => document.querySelectorAll('#notes-list li').length === 2);
      expect(await t.page.textContent('#reader-status')).toBe('The highlight was deleted.');
      const left = await call('GET', `/api/media-items/${epub.id}/highlights`, { token: reader.token });
      expect(left.json.data.map((x: { text: string }) => x.text)).toEqual([FIRST]);
      const after = await plugin(dev).meta();
      expect(after.json.highlights.map((x: { text: string }) => x.text)).not.toContain(FROM_KOREADER);
      expect(after.json.deleted.highlights).toContain('kr-1');
      expect(t.dialogs).toEqual([]);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('search in the book: results with excerpts, the arrow keys and Enter go there; nothing found says so', async () => {
      const reader = await register(call);
      const t = await as(reader, 360);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      const start = (await data(t, 'cfi'))!;
      await tabTo(t.page, '#search-menu summary');
      await t.page.keyboard.press('Enter');
      await t.page.waitForFunction(() => document.activeElement?.id === 'search-q');
      // on the phone the panel is on the screen, across the toolbar
      const panel = (await t.page.locator('#search-menu .reader-search').boundingBox())!;
      expect(panel.x).toBeGreaterThanOrEqual(0);
      expect(panel.x + panel.width).toBeLessThanOrEqual(360);
      await t.page.keyboard.type('qqqzzz');
      await t.page.keyboard.press('Enter');
      await t.page.waitForFunction(() => document.querySelector('#search-status').textContent.startsWith('Nothing'));
      expect(await t.page.textContent('#search-status')).toBe('Nothing found for “qqqzzz”.');
      await t.page.fill('#search-q', 'torrenren');
      await t.page.keyboard.press('Enter');
      await t.page.waitForFunction(() => /result/.test(document.querySelector('#search-status').textContent));
      expect(await t.page.textContent('#search-status')).toBe('1 result for “torrenren”.');
      const hit = t.page.locator('#search-results a');
      expect(await hit.count()).toBe(1);
      expect(await hit.locator('mark').textContent()).toBe('torrenren');
      expect(await hit.textContent()).toContain('sakapon torrenren nemorpon');
      await checkPage(t, `${mode}-reader-search`);
      await t.page.focus('#search-q');
      await t.page.keyboard.press('ArrowDown');
      expect(await t.page.evaluate(() => document.activeElement.matches('#search-results a'))).toBe(true);
      await t.page.keyboard.press('Enter');
      expect(await t.page.getAttribute('#search-menu', 'open')).toBeNull();
      await t.page.waitForFunction((c) => document.querySelector('#reader').dataset.cfi !== c, start);
      expect(docFragmentOf((await data(t, 'cfi'))!)).toBe(place('torrenren').start.spine + 1);
      // a move the reader asked for: saved once
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      expect(docFragmentOf(t.writes[0]!.epubcfi as string)).toBe(place('torrenren').start.spine + 1);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('settings: font, theme and margins kept in the browser and applied to the book; tap zones turn pages; a CBZ turns by swipe', async () => {
      const reader = await register(call);
      const t = await as(reader);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      await chapterOne(t);
      const frame = await frameWith(t.page, FIRST);
      const bodyStyle = () => frame.evaluate(() => ({ font: getComputedStyle(document.body).fontFamily, bg: getComputedStyle(document.documentElement).backgroundColor }));
      // by default the profile's theme (a new account's is dark), in the shell and the book
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-dark');
      expect((await bodyStyle()).bg).toBe('rgb(26, 27, 38)');
      await tabTo(t.page, '#settings summary');
      await t.page.keyboard.press('Enter');
      await tabTo(t.page, '#font-family');
      await t.page.selectOption('#font-family', 'serif');
      await t.page.selectOption('#margins', 'wide');
      await t.page.selectOption('#reader-theme', 'sepia');
      await t.page.waitForFunction(() => document.documentElement.classList.contains('reader-sepia'));
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-light reader-sepia');
      expect(await bodyStyle()).toEqual({ font: expect.stringMatching(/^Georgia/), bg: 'rgb(244, 236, 216)' });
      expect(
        await t.page.evaluate(() => [localStorage.getItem('bindery.reader.family'), localStorage.getItem('bindery.reader.margins'), localStorage.getItem('bindery.reader.theme')]),
      ).toEqual(['serif', 'wide', 'sepia']);
      await checkPage(t, `${mode}-reader-sepia`);
      // kept: the next visit opens with them
      await t.page.reload();
      await ready(t);
      expect(await t.page.inputValue('#font-family')).toBe('serif');
      expect(await t.page.inputValue('#reader-theme')).toBe('sepia');
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-light reader-sepia');
      await chapterOne(t);
      const again = await frameWith(t.page, FIRST);
      expect(await again.evaluate(() => getComputedStyle(document.body).fontFamily)).toMatch(/^Georgia/);
      // light, then back to the profile's (dark)
      await t.page.click('#settings summary');
      await t.page.selectOption('#reader-theme', 'light');
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-light');
      expect(await again.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).toBe('rgb(255, 255, 255)');
      await t.page.selectOption('#reader-theme', 'profile');
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-dark');
      // the right third of the page turns it, the left third turns back
      await t.page.click('#settings summary');
      const before = Number(await data(t, 'fraction'));
      const box = (await t.page.locator('#book-view').boundingBox())!;
      await t.page.mouse.click(box.x + box.width * 0.75, box.y + box.height / 2);
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, before);
      const turned = Number(await data(t, 'fraction'));
      // (foliate takes no turn for 100 ms after one)
      await t.page.waitForTimeout(400);
      await t.page.mouse.click(box.x + box.width * 0.25, box.y + box.height / 2);
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) < f, turned);
      expect(t.errors).toEqual([]);

      // a comic: a swipe to the left goes on, to the right goes back
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await ready(t, false);
      const swipe = (from: number, to: number) =>
        t.page.evaluate(
          ([a, z]: number[]) => {
            const el = document.querySelector('#pages');
            const touch = (x: number) => new (globalThis as any).Touch({ identifier: 1, target: el, clientX: x, clientY: 300 });
            el.dispatchEvent(new (globalThis as any).TouchEvent('touchstart', { touches: [touch(a!)], changedTouches: [touch(a!)], bubbles: true }));
            el.dispatchEvent(new (globalThis as any).TouchEvent('touchend', { touches: [], changedTouches: [touch(z!)], bubbles: true }));
          },
          [from, to],
        );
      expect(await data(t, 'page')).toBe('1');
      await swipe(900, 500);
      expect(await data(t, 'page')).toBe('2');
      await swipe(900, 500);
      expect(await data(t, 'page')).toBe('3');
      await swipe(500, 900);
      expect(await data(t, 'page')).toBe('2');
      await swipe(500, 520);
      expect(await data(t, 'page')).toBe('2');
      // the theme chosen in the reader is the comics' too
      expect(await t.page.inputValue('#reader-theme')).toBe('profile');
      await t.page.selectOption('#reader-theme', 'light');
      expect(await t.page.getAttribute('html', 'class')).toBe('reader-page theme-light');
      await checkPage(t, `${mode}-reader-cbz-light`);
      await t.ctx.close();
    }, 120_000);

    it('a position pushed through stock kosync while the book is open is offered; going there moves the reader and saves there; dismissed, it stays', async () => {
      // places as KOReader names them: another reader's positions at 70 % and 40 %
      const scout = await register(call);
      const headers = (who: Account) => ({ 'x-auth-user': who.username, 'x-auth-key': md5(who.password), accept: 'application/vnd.koreader.v1+json' });
      const pullAt = async (percentage: number) => {
        expect((await call('PUT', `/api/media-items/${epub.id}/progress`, { token: scout.token, body: { percentage } })).status).toBe(200);
        return (await call('GET', `/api/kosync/syncs/progress/${epub.formats[0].partial_md5}`, { headers: headers(scout) })).json.progress as string;
      };
      const far = await pullAt(0.7);
      const middle = await pullAt(0.4);
      const reader = await register(call);
      const push = (progress: string, percentage: number) =>
        call('PUT', '/api/kosync/syncs/progress', {
          headers: headers(reader),
          body: { document: epub.formats[0].partial_md5, progress, percentage, device: 'Kobo_frost', device_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' },
        });
      const t = await as(reader, 360);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      await t.page.waitForSelector('#reader[data-live="open"]');
      const start = Number(await data(t, 'fraction'));
      expect(start).toBeLessThan(0.2);
      expect(await t.page.isHidden('#offer')).toBe(true);

      const p1 = await push(far, 0.7);
      expect(p1.status, p1.text).toBe(200);
      await t.page.waitForSelector('#offer:not([hidden])', { timeout: 10_000 });
      expect(await t.page.textContent('#offer-text')).toBe('Another device (Kobo_frost a1b2c3d4) is at 70%.');
      expect(t.writes).toHaveLength(0);
      await checkPage(t, `${mode}-reader-offer`);
      // accepted by keyboard: the reader goes there and saves that place
      // (the screenshots left the page at 1280 px, where a spread holds the whole of chapter 2)
      await t.page.setViewportSize({ width: 360, height: 900 });
      await tabTo(t.page, '#offer-go');
      const answer = t.page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith('/progress'));
      await t.page.keyboard.press('Enter');
      expect(await t.page.isHidden('#offer')).toBe(true);
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f + 0.3, start);
      expect(docFragmentOf((await data(t, 'cfi'))!)).toBe(Number(/DocFragment\[(\d+)\]/.exec(far)![1]));
      expect(Math.abs(Number(await data(t, 'fraction')) - 0.7)).toBeLessThanOrEqual(0.1);
      const saved = await (await answer).json();
      expect(saved.status).toBe('saved');
      expect(t.writes).toHaveLength(1);
      expect(t.writes[0]).toMatchObject({ percentage: 0.7, client: 'web', device: 'web' });
      expect(docFragmentOf(t.writes[0]!.epubcfi as string)).toBe(Number(/DocFragment\[(\d+)\]/.exec(far)![1]));
      const now = await call('GET', `/api/media-items/${epub.id}/progress`, { token: reader.token });
      expect(now.json).toMatchObject({ percentage: 0.7, client: 'web', xpointer: far });
      // the reader's own save is not offered back
      await t.page.waitForTimeout(1500);
      expect(await t.page.isHidden('#offer')).toBe(true);

      // another push, dismissed: the reader stays and saves nothing
      const here = await data(t, 'cfi');
      const p2 = await push(middle, 0.4);
      expect(p2.status, p2.text).toBe(200);
      await t.page.waitForSelector('#offer:not([hidden])', { timeout: 10_000 });
      expect(await t.page.textContent('#offer-text')).toBe('Another device (Kobo_frost a1b2c3d4) is at 40%.');
      await t.page.click('#offer-dismiss');
      expect(await t.page.isHidden('#offer')).toBe(true);
      await t.page.waitForTimeout(2500);
      expect(await data(t, 'cfi')).toBe(here);
      expect(t.writes).toHaveLength(1);
      expect(t.errors).toEqual([]);

      // a comic: another device's page, offered as a page, and gone to
      const count = cbz.page_count as number;
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await ready(t, false);
      await t.page.waitForSelector('#reader[data-live="open"]');
      expect(await data(t, 'page')).toBe('1');
      expect(count).toBeGreaterThan(3);
      const pct = Math.round((2 / (count - 1)) * 10000) / 10000;
      const kobo = await call('PUT', `/api/media-items/${cbz.id}/progress`, {
        token: reader.token,
        body: { page: 3, page_count: count, percentage: pct, client: 'koreader', device: 'Kobo Libra' },
      });
      expect(kobo.status, kobo.text).toBe(200);
      await t.page.waitForSelector('#offer:not([hidden])', { timeout: 10_000 });
      expect(await t.page.textContent('#offer-text')).toBe(`Another device (Kobo Libra) is at page 3 of ${count}.`);
      await t.page.click('#offer-go');
      expect(await data(t, 'page')).toBe('3');
      expect(await t.page.textContent('#reader-position')).toBe(`Page 3 of ${count}`);
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      expect(t.writes.at(-1)).toEqual({ page: 3, page_count: count, percentage: pct, client: 'web', device: 'web', active_seconds: expect.any(Number) });
      expect((await call('GET', `/api/media-items/${cbz.id}/progress`, { token: reader.token })).json).toMatchObject({ page: 3, client: 'web' });
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);
  });
}
