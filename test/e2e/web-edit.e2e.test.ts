// Editing books in headless Chromium (issue 43): a person the admin allowed to edit fixes a wrong
// title on the book's edit page and it shows on the book page, in the library grid and in OPDS; the
// API's messages are shown as worded; a plain user sees no Edit and the API refuses them; bulk: three
// books ticked (a shift-click range) get a series and are marked read, "all matching" and the series
// page's selection; hostile values are refused (control characters) or shown as text. Desktop and
// 390 px phone widths, axe clean, by keyboard. Embedded mode only (PAGE_MODES, decision 97).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Catalog } from '@bindery/contracts';
import { availableModes, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { storedZip } from './kobo-helpers';
import { makeItem } from './reading-helpers';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';
import { jpeg } from '../../services/catalog/test/fixtures/books';
import { api, eventually, expectError, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, PAGE_MODES, tabTo, type Tab, unexpectedErrors } from './web-browser';

declare const document: any;

const modes = (await availableModes()).filter((m) => PAGE_MODES.includes(m));
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`editing in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const WRONG = 'The Wrnog Title';
const RIGHT = 'The Right Title';
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>';
const EDITOR_REQUIRED = 'metadata editing access required';
/** The pages' English words, every area of them. */
const WORDS: Record<string, string> = Object.assign(
  {},
  ...readdirSync(join(import.meta.dirname, '../../web/src/i18n/messages/en')).map((f) =>
    JSON.parse(readFileSync(join(import.meta.dirname, '../../web/src/i18n/messages/en', f), 'utf8')),
  ),
);
const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A small EPUB with a title and an author. */
function epub(title: string, author: string): Buffer {
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf"><dc:identifier id="uid">urn:uuid:${crypto.randomUUID()}</dc:identifier><dc:title>${x(title)}</dc:title><dc:creator opf:role="aut">${x(author)}</dc:creator><dc:language>en</dc:language></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`,
    ],
    ['OEBPS/c1.xhtml', `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${x(title)}</title></head><body><p>Once.</p></body></html>`],
  ]);
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`editing books (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let editor: Account;
    let plain: Account;
    let wrongId: string;
    let libId: string;
    let comicId: string;
    const fillers: Record<string, string> = {};

    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      editor = await register(call);
      plain = await register(call);
      const g = await call('PUT', `/api/auth/users/${editor.id}/permissions`, { token: admin.token, body: { can_edit_metadata: true } });
      expect(g.status, g.text).toBe(200);
      const dir = emptyDir();
      writeFileSync(join(dir, 'wrong.epub'), epub(WRONG, 'Ada Lane'));
      libId = (await createLibrary(call, admin.token, { name: 'Shelf', folders: [dir], watch: false })).id;
      await scan(call, admin.token, libId);
      const found = await items(call, admin.token, libId);
      wrongId = found.find((i) => i.title === WRONG)!.id;
      // a comic of three pages, each its own colour: a page of it can be the cover
      const pages = await Promise.all(['#c33', '#3a3', '#33c'].map((c) => jpeg(200, 300, c)));
      writeFileSync(join(dir, 'comic.cbz'), buildZip(pages.map((data, i) => ({ name: `${String(i + 1).padStart(3, '0')}.jpg`, data }))));
      await scan(call, admin.token, libId);
      comicId = (await items(call, admin.token, libId)).find((i) => i.formats.some((f: { format: string }) => f.format.toLowerCase() === 'cbz'))!.id;
      for (const n of ['Alpha', 'Bravo', 'Charlie', 'Delta']) fillers[n] = (await makeItem(call, admin, libId, { title: `Bulk ${n}`, authors: ['Bulk Author'] })).id;
      // the editor's session carries the permission once the gateway has the event
      await eventually(async () => expect((await call('GET', '/api/auth/profile', { token: editor.token })).json.can_edit_metadata).toBe(true), 5000);
    }, 180_000);

    const as = (who: Account, width = 1280): Promise<Tab> => openAs(browser, b.url, who.token, width);
    const item = async (id: string) => (await call('GET', `/api/media-items/${id}`, { token: admin.token })).json;
    const clean = (t: Tab) => {
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
    };

    it('an editor fixes a wrong title: the book page, the grid and OPDS show it', async () => {
      const t = await as(editor);
      await t.page.goto(`${b.url}/books/${wrongId}`);
      expect(await t.page.textContent('h1')).toBe(WRONG);
      await tabTo(t.page, '#edit-book');
      await Promise.all([t.page.waitForURL(`${b.url}/books/${wrongId}/edit`), t.page.keyboard.press('Enter')]);
      expect(await t.page.textContent('h1')).toBe(`Edit ${WRONG}`);
      expect(await t.page.inputValue('#e-title')).toBe(WRONG);
      expect(await t.page.inputValue('#e-name-0')).toBe('Ada Lane');
      expect(await t.page.inputValue('#e-role-0')).toBe('author');
      await checkPage(t, `${mode}-edit-page`);
      await t.page.fill('#e-title', RIGHT);
      await Promise.all([t.page.waitForURL(`${b.url}/books/${wrongId}?saved=1`), t.page.click('#save-edit')]);
      expect(await t.page.textContent('#edit-saved')).toBe('Your changes are saved.');
      expect(await t.page.textContent('h1')).toBe(RIGHT);
      // only the title was sent: the rest is as the file says
      const now = await item(wrongId);
      expect(now.title).toBe(RIGHT);
      expect(now.authors).toEqual(['Ada Lane']);
      // (the catalog locks the sort title with the title it derives it from)
      if (Array.isArray(now.locked_fields)) expect(now.locked_fields.filter((f: string) => f !== 'sort_title')).toEqual(['title']);
      await t.page.goto(`${b.url}/library`);
      const titles = await t.page.locator('#grid .book-title').allTextContents();
      expect(titles).toContain(RIGHT);
      expect(titles).not.toContain(WRONG);
      const feed = await fetch(`${b.url}/opds/recent`, { headers: { authorization: `Basic ${Buffer.from(`${editor.username}:${editor.password}`).toString('base64')}` } });
      expect(feed.status).toBe(200);
      const xml = await feed.text();
      expect(xml).toContain(`<title>${RIGHT}</title>`);
      expect(xml).not.toContain(WRONG);
      clean(t);
      await t.ctx.close();
    });

    it('every declared text detail has its input, is saved and locked, shows on the book page under its word, and is refused over its length', async () => {
      // Catalog.TEXT_FIELDS is the whole of adding such a detail (issue 42): this test follows the list
      const made = await makeItem(call, admin, libId, { title: 'Details', authors: ['Dee Tail'] });
      const values = Object.fromEntries(Catalog.TEXT_FIELD_NAMES.map((name, i) => [name, `${name}-${i} <b>${'x'.repeat(3)}</b>`.slice(0, Catalog.TEXT_FIELDS[name].max)]));
      const t = await as(editor);
      await t.page.goto(`${b.url}/books/${made.id}/edit`);
      for (const name of Catalog.TEXT_FIELD_NAMES) {
        expect(await t.page.getAttribute(`#e-${name}`, 'maxlength')).toBe(String(Catalog.TEXT_FIELDS[name].max));
        expect(await t.page.textContent(`label[for="e-${name}"]`)).toBe(WORDS[`book.${name}`]);
        await t.page.fill(`#e-${name}`, values[name]!);
      }
      await Promise.all([t.page.waitForURL(`${b.url}/books/${made.id}?saved=1`), t.page.click('#save-edit')]);
      const now = await item(made.id);
      for (const name of Catalog.TEXT_FIELD_NAMES) expect(now[name], name).toBe(values[name]);
      expect(now.locked_fields).toEqual([...Catalog.TEXT_FIELD_NAMES].sort());
      const shown = await t.page.$$eval('dl.meta dt', (dts: any[]) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
      for (const name of Catalog.TEXT_FIELD_NAMES) expect(shown, name).toContainEqual([WORDS[`book.${name}`], values[name]]);
      for (const name of Catalog.TEXT_FIELD_NAMES) {
        const max = Catalog.TEXT_FIELDS[name].max;
        expectError(
          await call('PATCH', `/api/media-items/${made.id}`, { token: editor.token, body: { [name]: 'y'.repeat(max + 1) } }),
          400,
          `${name} must be at most ${max} characters`,
        );
      }
      expect((await item(made.id))[Catalog.TEXT_FIELD_NAMES[0]!]).toBe(values[Catalog.TEXT_FIELD_NAMES[0]!]);
      clean(t);
      await t.ctx.close();
    });

    it('shows the API’s messages as worded, and nothing is saved when nothing changed', async () => {
      const t = await as(editor);
      await t.page.goto(`${b.url}/books/${wrongId}/edit`);
      await t.page.click('#save-edit');
      await t.page.waitForSelector('#edit-outcome .alert-error');
      expect(await t.page.textContent('#edit-outcome')).toBe('Nothing to save: every field is as it was.');
      await t.page.fill('#e-year', 'nineteen');
      await t.page.click('#save-edit');
      await t.page.waitForFunction(() => document.querySelector('#edit-outcome')?.textContent.includes('year'));
      expect(await t.page.textContent('#edit-outcome')).toBe('year must be an integer between 0 and 9999');
      expect(await t.page.getAttribute('#edit-outcome .alert', 'role')).toBe('alert');
      await t.page.fill('#e-year', '');
      await t.page.fill('#e-title', '   ');
      await t.page.click('#save-edit');
      await t.page.waitForFunction(() => document.querySelector('#edit-outcome')?.textContent === 'title is required');
      expect((await item(wrongId)).title).toBe(RIGHT);
      clean(t);
      await t.ctx.close();
    });

    it('hostile values: control characters answer 400 before anything is stored; markup is shown as text', async () => {
      for (const bad of ['a\u0000b', 'bell\u0007', 'esc\u001b[31m']) {
        const r = await call('PATCH', `/api/media-items/${fillers.Delta}`, { token: editor.token, body: { title: bad } });
        expect(r.status, r.text).toBe(400);
        expect(r.json.error).toBe('title must not contain control characters');
      }
      const lone = await call('PATCH', `/api/media-items/${fillers.Delta}`, { token: editor.token, raw: '{"title":"\\ud800"}' });
      expect(lone.status, lone.text).toBe(400);
      expect((await item(fillers.Delta!)).title).toBe('Bulk Delta');
      const t = await as(editor);
      await t.page.goto(`${b.url}/books/${fillers.Delta}/edit`);
      // the page's own form path: a POST with a NUL is refused by the gateway before the page's action runs
      const said = await t.page.evaluate(async (id: string) => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const r = await fetch(`/books/${id}/edit`, {
          method: 'POST',
          headers: { 'X-CSRF-Token': token, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'title=a%00b',
        });
        return { status: r.headers.get('x-api-status'), code: r.status, text: await r.text() };
      }, fillers.Delta!);
      expect(said.code, said.text).toBe(400);
      expect(JSON.parse(said.text)).toEqual({ error: 'title must not contain control characters' });
      await t.page.fill('#e-title', HOSTILE);
      await t.page.fill('#e-series', HOSTILE);
      await t.page.fill('#e-tags', `${HOSTILE}, calm`);
      await Promise.all([t.page.waitForURL(/saved=1/), t.page.click('#save-edit')]);
      expect(await t.page.textContent('h1')).toBe(HOSTILE);
      expect(await t.page.locator('img[src="x"]').count()).toBe(0);
      await t.page.goto(`${b.url}/books/${fillers.Delta}/edit`);
      expect(await t.page.inputValue('#e-title')).toBe(HOSTILE);
      await t.page.goto(`${b.url}/library`);
      expect(await t.page.locator('#grid .book-title').allTextContents()).toContain(HOSTILE);
      expect(t.dialogs).toEqual([]);
      expect(await t.page.locator('script:not([src])').count()).toBe(0);
      // the refused POST's 400 is the browser's one logged line
      expect(unexpectedErrors(t.errors, [400])).toEqual([]);
      await t.ctx.close();
    });

    it('a plain user sees no Edit, the edit page is not there for them, the API refuses them, and their bar only marks progress', async () => {
      const t = await as(plain);
      await t.page.goto(`${b.url}/books/${wrongId}`);
      expect(await t.page.textContent('h1')).toBe(RIGHT);
      expect(await t.page.locator('#edit-book').count()).toBe(0);
      const page = await t.page.goto(`${b.url}/books/${wrongId}/edit`);
      expect(page?.status()).toBe(404);
      expect(await t.page.textContent('h1')).toBe('Not found');
      expectError(await call('PATCH', `/api/media-items/${wrongId}`, { token: plain.token, body: { title: 'Mine now' } }), 403, EDITOR_REQUIRED);
      expectError(await call('PUT', `/api/media-items/${wrongId}`, { token: plain.token, body: { title: 'Mine now' } }), 403, EDITOR_REQUIRED);
      expectError(await call('POST', '/api/media-items/bulk-update', { token: plain.token, body: { ids: [wrongId], changes: { series: 'Mine' } } }), 403, EDITOR_REQUIRED);
      await t.page.goto(`${b.url}/library`);
      expect(await t.page.locator('#selection-action option').evaluateAll((os: any[]) => os.map((o) => o.value))).toEqual(['read', 'unread', 'reset']);
      expect(await t.page.locator('#selection-value').count()).toBe(0);
      // the page's form path refuses them with the API's words too
      const said = await t.page.evaluate(async (id: string) => {
        const token = document.querySelector('meta[name="csrf-token"]').content;
        const r = await fetch('/library/bulk', {
          method: 'POST',
          headers: { 'X-CSRF-Token': token, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `ids=${id}&action=series&value=Mine`,
        });
        return { status: r.headers.get('x-api-status'), text: await r.text() };
      }, wrongId);
      expect(said).toEqual({ status: '403', text: `<div class="alert alert-error" role="alert">${EDITOR_REQUIRED}</div>` });
      expect((await item(wrongId)).title).toBe(RIGHT);
      // the edit page's 404 is the browser's one logged line
      expect(unexpectedErrors(t.errors, [404])).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();
    });

    it('bulk: three books ticked by a shift-click range get a series and are marked read, each with a message', async () => {
      const t = await as(editor);
      await t.page.goto(`${b.url}/library?author=${encodeURIComponent('"Bulk Author"')}`);
      const picks = ['Alpha', 'Bravo', 'Charlie'].map((n) => `#pick-${fillers[n]}`);
      await t.page.click(picks[0]!);
      await t.page.click(picks[2]!, { modifiers: ['Shift'] });
      for (const p of picks) expect(await t.page.isChecked(p)).toBe(true);
      expect(await t.page.isChecked(`#pick-${fillers.Delta}`)).toBe(false);
      expect(await t.page.textContent('#selection-count')).toBe('3 books selected.');
      await t.page.selectOption('#selection-action', 'series');
      await t.page.fill('#selection-value', 'Bulk Saga');
      await tabTo(t.page, '#selection-apply');
      await t.page.keyboard.press('Enter');
      await t.page.waitForSelector('#selection-outcome .alert-success');
      expect(await t.page.textContent('#selection-outcome')).toBe('3 books changed.');
      for (const n of ['Alpha', 'Bravo', 'Charlie']) expect((await item(fillers[n]!)).series).toBe('Bulk Saga');
      expect((await item(fillers.Delta!)).series).toBe(HOSTILE);
      // the grid was read again: the series shows on the covers, the ticks are cleared
      await t.page.waitForFunction(() => [...document.querySelectorAll('#grid .series-link')].filter((a: any) => a.textContent === 'Bulk Saga').length === 3);
      expect(await t.page.textContent('#selection-count')).toBe('No book selected: tick the books to act on, or take every match.');
      // the same three marked read
      await t.page.click(picks[0]!);
      await t.page.click(picks[2]!, { modifiers: ['Shift'] });
      await t.page.selectOption('#selection-action', 'read');
      await t.page.click('#selection-apply');
      await t.page.waitForFunction(() => document.querySelector('#selection-outcome .alert')?.textContent === '3 books marked read.');
      for (const n of ['Alpha', 'Bravo', 'Charlie']) {
        const p = await call('GET', `/api/media-items/${fillers[n]}/progress`, { token: editor.token });
        expect(p.status, p.text).toBe(200);
        expect(p.json.percentage ?? p.json.progress?.percentage).toBe(1);
      }
      // nothing chosen: a message, no request to the API
      await t.page.selectOption('#selection-action', 'unread');
      await t.page.click('#selection-apply');
      await t.page.waitForFunction(() => document.querySelector('#selection-outcome .alert')?.textContent === 'Select at least one book first.');
      await checkPage(t, `${mode}-library-selection`);
      clean(t);
      await t.ctx.close();
    });

    it('bulk: all matching the filters, and every book of a series on its page; mark unread and reset progress', async () => {
      const t = await as(editor);
      await t.page.goto(`${b.url}/library?author=${encodeURIComponent('"Bulk Author"')}`);
      await t.page.check('#select-all');
      expect(await t.page.textContent('#selection-count')).toBe('All 4 matching books are selected.');
      await t.page.selectOption('#selection-action', 'add_tags');
      await t.page.fill('#selection-value', 'batch, <b>bold</b>');
      await t.page.click('#selection-apply');
      await t.page.waitForSelector('#selection-outcome .alert-success');
      expect(await t.page.textContent('#selection-outcome')).toBe('4 books changed.');
      for (const n of ['Alpha', 'Bravo', 'Charlie']) expect((await item(fillers[n]!)).tags).toEqual(expect.arrayContaining(['batch', '<b>bold</b>']));
      await t.page.goto(`${b.url}/series/${encodeURIComponent('Bulk Saga')}`);
      await t.page.check('#select-all');
      await t.page.selectOption('#selection-action', 'unread');
      await t.page.click('#selection-apply');
      await t.page.waitForFunction(() => document.querySelector('#selection-outcome .alert')?.textContent === '3 books marked unread.');
      const p = await call('GET', `/api/media-items/${fillers.Alpha}/progress`, { token: editor.token });
      expect(p.json.percentage ?? p.json.progress?.percentage).toBe(0);
      await t.page.check('#select-all');
      await t.page.selectOption('#selection-action', 'reset');
      await t.page.click('#selection-apply');
      await t.page.waitForFunction(() => document.querySelector('#selection-outcome .alert')?.textContent === 'Progress reset for 3 books.');
      await checkPage(t, `${mode}-series-selection`);
      clean(t);
      await t.ctx.close();
    });

    it('at 390 px: the book page, the edit form and the selection bar fit and pass axe', async () => {
      const t = await as(editor, 390);
      for (const path of [`/books/${wrongId}`, `/books/${wrongId}/edit`, '/library']) {
        await t.page.goto(`${b.url}${path}`);
        expect(await t.page.evaluate(() => document.documentElement.scrollWidth), `${path} fits 390 px`).toBeLessThanOrEqual(390);
        await checkPage(t, `${mode}-phone${path.replace(/\//g, '-').replace(wrongId, 'book')}`);
        await t.page.setViewportSize({ width: 390, height: 900 });
      }
      await t.page.goto(`${b.url}/books/${wrongId}`);
      expect(await t.page.isVisible('#edit-book')).toBe(true);
      await t.page.goto(`${b.url}/library`);
      expect(await t.page.isVisible(`#pick-${fillers.Alpha}`)).toBe(true);
      clean(t);
      await t.ctx.close();
    });

    it('without script the pages still read: the grid with its checkboxes, the book page and the edit form with its values', async () => {
      const ctx = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
      await ctx.addCookies([{ name: 'token', value: editor.token, url: b.url }]);
      const page = await ctx.newPage();
      await page.goto(`${b.url}/library?author=${encodeURIComponent('"Bulk Author"')}`);
      expect(await page.locator('#grid .book-title').allTextContents()).toEqual(expect.arrayContaining(['Bulk Alpha', 'Bulk Bravo', 'Bulk Charlie']));
      expect(await page.locator('#grid input.pick-box').count()).toBe(4);
      expect(await page.textContent('#selection-count')).toBe('Tick the books to act on, or take every match.');
      await page.goto(`${b.url}/books/${wrongId}`);
      expect(await page.textContent('h1')).toBe(RIGHT);
      await page.click('#edit-book');
      await page.waitForURL(`${b.url}/books/${wrongId}/edit`);
      expect(await page.inputValue('#e-title')).toBe(RIGHT);
      expect(await page.inputValue('#e-name-0')).toBe('Ada Lane');
      await ctx.close();
    });

    // needs the catalog's side of the contract (locked_fields, reset_fields, the cover routes): skipped until an item answers with locked_fields
    it('a locked field says so, survives a rescan and resets to the file’s value; the cover from a page, an upload and the file’s own', async (ctx) => {
      if (!Array.isArray((await item(wrongId)).locked_fields)) return ctx.skip();
      // (as the first test left it, also when this one runs alone)
      expect((await call('PATCH', `/api/media-items/${wrongId}`, { token: editor.token, body: { title: RIGHT } })).status).toBe(200);
      await scan(call, admin.token, libId);
      expect((await item(wrongId)).title).toBe(RIGHT);
      const t = await as(editor);
      await t.page.goto(`${b.url}/books/${wrongId}/edit`);
      expect(await t.page.textContent('#locked-title')).toContain('Locked');
      expect(await t.page.locator('#locked-series').count()).toBe(0);
      await Promise.all([t.page.waitForURL(/reset=title/), t.page.click('#reset-title')]);
      expect(await t.page.textContent('#edit-notice')).toBe("Title now has the file's value again.");
      expect(await t.page.inputValue('#e-title')).toBe(WRONG);
      expect(await t.page.locator('#locked-title').count()).toBe(0);
      expect((await item(wrongId)).locked_fields).toEqual([]);
      // the cover: page 2 of the comic, then an uploaded picture, then the file's own again
      await t.page.goto(`${b.url}/books/${comicId}/edit`);
      const before = (await item(comicId)).cover_url;
      await t.page.check('#page-2');
      await Promise.all([t.page.waitForURL(/cover=page/), t.page.click('#use-page')]);
      expect(await t.page.textContent('#edit-notice')).toBe('The cover is now the page you chose.');
      const paged = await item(comicId);
      expect(paged.cover_url).not.toBe(before);
      expect(paged.locked_fields).toContain('cover');
      expect(await t.page.textContent('#locked-cover')).toContain('Locked');
      await t.page.setInputFiles('#cover-file', { name: 'new.jpg', mimeType: 'image/jpeg', buffer: await jpeg(300, 450, '#fc0') });
      await Promise.all([t.page.waitForURL(/cover=uploaded/), t.page.click('#upload-cover')]);
      expect(await t.page.textContent('#edit-notice')).toBe('The new cover is saved.');
      await t.page.waitForFunction(() => document.querySelector('#cover-section img.cover')?.naturalWidth > 0);
      expect((await item(comicId)).cover_url).not.toBe(paged.cover_url);
      // a file that is not a picture: the API's words, nothing changed
      await t.page.setInputFiles('#cover-file', { name: 'not.txt', mimeType: 'text/plain', buffer: Buffer.from('not a picture') });
      await t.page.click('#upload-cover');
      await t.page.waitForSelector('#cover-outcome .alert-error');
      expect((await t.page.textContent('#cover-outcome'))!.length).toBeGreaterThan(0);
      await Promise.all([t.page.waitForURL(/cover=reset/), t.page.click('#reset-cover')]);
      expect(await t.page.textContent('#edit-notice')).toBe("The cover is the file's own again.");
      expect((await item(comicId)).locked_fields).not.toContain('cover');
      // the refused upload's status is the browser's one logged line
      expect(t.errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d /.test(e))).toEqual([]);
      t.errors.length = 0;
      await checkPage(t, `${mode}-edit-cover`);
      await t.ctx.close();
    });
  });
}
