// Uploading books in headless Chromium (issue 43, upload): the upload page (linked from the nav for
// those allowed), its library and folder choice, three books chosen at once, each with its progress bar
// and its outcome (catalogued, with a link to the book), a duplicate shown with a link to the book
// already there, a file over the limit refused before it is sent; the library page's drop zone taking
// a dropped file; a plain user sees neither. axe finds nothing serious, everything by keyboard, at
// desktop and phone (390 px) width. Embedded mode only (PAGE_MODES, decision 97).
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { availableModes, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, settled } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { buildEpub } from './upload-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, PAGE_MODES, tabTo } from './web-browser';

declare const document: any;

const modes = (await availableModes()).filter((m) => PAGE_MODES.includes(m));
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`uploading in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const BOOKS = [
  ['Thomas Whitfield/the lowercase title.epub', 'the lowercase title.epub'],
  ['comics/Starlight Comics/Captain Nebula/Captain Nebula 002.cbz', 'Captain Nebula 002.cbz'],
  ['Grace Holloway/Rock & Roll _Live_ at _The Cellar_.mobi', 'Rock & Roll.mobi'],
] as const;

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`uploading books in the browser (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let plain: Account;
    let dir: string;
    let lib: string;
    let files: string;

    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      plain = await register(call);
      dir = emptyDir();
      lib = (await createLibrary(call, admin.token, { name: 'Shelf for uploads', folders: [dir], watch: false })).id;
      await settled(call, admin.token, lib);
      files = mkdtempSync(join(tmpdir(), 'bindery-picked-'));
      for (const [from, to] of BOOKS) copyFileSync(join(FIXTURE, from), join(files, to));
    }, 240_000);
    afterAll(() => rmSync(files, { recursive: true, force: true }));

    it('three books chosen at once: each has its progress bar and is catalogued with a link; a duplicate links to the book there', async () => {
      const t = await openAs(browser, b.url, admin.token);
      await t.page.goto(`${b.url}/dashboard`);
      await t.page.click('nav[aria-label="Main"] a[href="/upload"]');
      await t.page.waitForURL(`${b.url}/upload`);
      expect(await t.page.locator('h1').textContent()).toBe('Upload books');
      expect(await t.page.locator('#upload-library option:checked').textContent()).toBe('Shelf for uploads');
      expect(await t.page.locator('#upload-folder option').allTextContents()).toEqual([dir]);
      // by keyboard: the file picker and the button are reached with Tab, with a visible focus
      await tabTo(t.page, '#upload-files');
      await tabTo(t.page, '#upload button[type="submit"]');
      await t.page.setInputFiles(
        '#upload-files',
        BOOKS.map(([, name]) => join(files, name)),
      );
      await t.page.click('#upload button[type="submit"]');
      const entries = t.page.locator('#upload .upload-entry');
      await expect.poll(() => entries.count()).toBe(3);
      await t.page.waitForFunction(() => document.querySelectorAll('#upload .upload-entry[data-outcome="ok"]').length === 3, null, { timeout: 60_000 });
      const seen = await t.page.$$eval('#upload .upload-entry', (lis: any[]) =>
        lis.map((li) => ({
          name: li.querySelector('.upload-name').textContent,
          bar: li.querySelector('progress').value,
          status: li.querySelector('.upload-status').textContent,
          link: li.querySelector('a')?.getAttribute('href'),
        })),
      );
      const catalogued = await items(call, admin.token, lib);
      expect(catalogued).toHaveLength(3);
      for (const [i, [, name]] of BOOKS.entries()) {
        const item = catalogued.find((x) => x.file_path === name)!;
        expect(seen[i]).toEqual({
          name: expect.stringMatching(new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KiB\\)$`)),
          bar: 100,
          status: 'Catalogued. Open the book',
          link: `/books/${item.id}`,
        });
      }
      // the link opens the book
      await t.page.click('#upload .upload-entry:first-child a');
      await t.page.waitForURL(new RegExp(`/books/${catalogued.find((x) => x.file_path === BOOKS[0][1])!.id}$`));
      await t.page.goBack();

      // the first book again: refused, with a link to the book already there
      await t.page.setInputFiles('#upload-files', join(files, BOOKS[0][1]));
      await t.page.click('#upload button[type="submit"]');
      await t.page.waitForSelector('#upload .upload-entry[data-outcome="error"]');
      const dup = t.page.locator('#upload .upload-entry[data-outcome="error"]');
      const title = catalogued.find((x) => x.file_path === BOOKS[0][1])!.title;
      expect(await dup.locator('.upload-status').textContent()).toBe(`This file is already in the catalog: "${title}". Open the book already there`);
      expect(await dup.locator('a').getAttribute('href')).toBe(`/books/${catalogued.find((x) => x.file_path === BOOKS[0][1])!.id}`);
      expect(await items(call, admin.token, lib)).toHaveLength(3);
      // the phone width holds the page, the results included
      await t.page.setViewportSize({ width: 390, height: 800 });
      expect(await t.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await checkPage({ ...t, errors: t.errors.filter((e) => !e.includes('status of 409')) }, 'upload');
      await t.ctx.close();
    }, 120_000);

    it("the library page's drop zone takes a dropped file into the library shown", async () => {
      const t = await openAs(browser, b.url, admin.token, 390);
      await t.page.goto(`${b.url}/library?library=${lib}`);
      await t.page.waitForSelector('form#drop[data-upload]');
      expect(await t.page.locator('#drop-library option:checked').textContent()).toBe('Shelf for uploads');
      const bytes = [...buildEpub('Dropped on the library page')];
      await t.page.evaluate((data: number[]) => {
        const dt = new (globalThis as any).DataTransfer();
        dt.items.add(new (globalThis as any).File([new Uint8Array(data)], 'Dropped.epub', { type: 'application/epub+zip' }));
        const form = document.querySelector('form#drop');
        form.dispatchEvent(new (globalThis as any).DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        form.dispatchEvent(new (globalThis as any).DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, bytes);
      await t.page.waitForSelector('#drop .upload-entry[data-outcome="ok"] a');
      const dropped = (await items(call, admin.token, lib)).find((x) => x.file_path === 'Dropped.epub');
      expect(dropped?.title).toBe('Dropped on the library page');
      expect(await t.page.locator('#drop .upload-entry a').getAttribute('href')).toBe(`/books/${dropped!.id}`);
      expect(await t.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await checkPage(t, 'library-drop');
      await t.ctx.close();
    }, 60_000);

    it('a file over the limit is refused before it is sent; a plain user has no upload page and no drop zone', async () => {
      const t = await openAs(browser, b.url, admin.token);
      await t.page.goto(`${b.url}/upload`);
      await t.page.evaluate(() => {
        document.querySelector('form#upload').dataset.maxBytes = '1000';
      });
      await t.page.setInputFiles('#upload-files', join(files, BOOKS[1][1]));
      await t.page.click('#upload button[type="submit"]');
      await t.page.waitForSelector('#upload .upload-entry[data-outcome="error"]');
      expect(await t.page.locator('#upload .upload-status').textContent()).toBe('The file is larger than the upload limit of 1 KiB.');
      await t.ctx.close();

      const p = await openAs(browser, b.url, plain.token);
      await p.page.goto(`${b.url}/dashboard`);
      expect(await p.page.locator('nav[aria-label="Main"] a[href="/upload"]').count()).toBe(0);
      const r = await p.page.goto(`${b.url}/upload`);
      expect(r?.status()).toBe(404);
      await p.page.goto(`${b.url}/library`);
      expect(await p.page.locator('.upload-drop').count()).toBe(0);
      await p.ctx.close();
      expect(readFileSync(join(dir, BOOKS[0][1])).length).toBeGreaterThan(0);
    }, 60_000);
  });
}
