// A newcomer's whole first visit in headless Chromium, in both modes, on a fresh server, with
// nothing but the browser: create the administrator, create a library with the folder browser,
// watch the scan fill it in without a reload, open the book page, read the EPUB and turn pages;
// the saved position, read back through KOReader's stock sync pull, is the XPointer of the same
// place (within 1 %), and a position pushed by KOReader moves the reader on reload; a PDF reads
// page by page and its page is saved; a Kobo is added from the devices page and its address works.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { availableModes, type Bindery } from '../support/bindery';
import { FIXTURE, items, settled } from './catalog-helpers';
import { api, eventually, instances, login, PASSWORD, register, uniq, type Call } from './helpers';
import { multiPagePdf } from './opds-books';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, progressWrites, type Tab } from './web-browser';

declare const document: any;

const modes = await availableModes();
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the first run in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const PDF_PAGES = 5;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
/** the spine position of a CFI (`/6/<2(i+1)>`) as crengine's DocFragment number (1-based) */
const docFragmentOf = (cfi: string) => Number(/^epubcfi\(\/6\/(\d+)/.exec(cfi)![1]) / 2;

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`first run, start to reading (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let folder: string;
    let t: Tab & { writes: Record<string, unknown>[]; loads: number };
    const root = { username: uniq('first'), password: PASSWORD };
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      // a folder of books on the server: an EPUB and a PDF
      folder = mkdtempSync(join(tmpdir(), 'bindery-first-run-'));
      mkdirSync(join(folder, 'novels'));
      copyFileSync(join(FIXTURE, EPUB), join(folder, 'novels/The Hidden Crown.epub'));
      writeFileSync(join(folder, 'Page Tester - Five Pages.pdf'), multiPagePdf('Five Pages', PDF_PAGES));
      const tab = await open(browser);
      t = { ...tab, writes: progressWrites(tab.page), loads: 0 };
      t.page.on('load', () => t.loads++);
    }, 240_000);
    afterAll(async () => {
      await t?.ctx.close();
      rmSync(folder, { recursive: true, force: true });
    });

    const data = (k: string) => t.page.getAttribute('#reader', `data-${k}`);
    const kosyncAs = (username: string, password: string) => {
      const headers = { 'x-auth-user': username, 'x-auth-key': md5(password), accept: 'application/vnd.koreader.v1+json' };
      return {
        pull: (doc: string) => call('GET', `/api/kosync/syncs/progress/${doc}`, { headers }),
        push: (doc: string, progress: string, percentage: number) =>
          call('PUT', '/api/kosync/syncs/progress', {
            headers,
            body: { document: doc, progress, percentage, device: 'Kobo_frost', device_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' },
          }),
      };
    };
    let token = '';
    let libraryId = '';
    let epub: Record<string, any>;
    let pdf: Record<string, any>;

    it('creates the administrator on the first visit and lands on the dashboard', async () => {
      await t.page.goto(`${b.url}/`);
      expect(new URL(t.page.url()).pathname).toBe('/setup');
      await t.page.fill('#setup-username', root.username);
      await t.page.fill('#setup-email', `${root.username}@example.com`);
      await t.page.fill('#setup-password', root.password);
      await Promise.all([t.page.waitForURL(`${b.url}/dashboard`), t.page.click('#create-admin')]);
      expect(await t.page.textContent('h1')).toBe(`Welcome, ${root.username}`);
      const r = await login(call, root.username, root.password);
      expect(r.status, r.text).toBe(200);
      expect(r.json.user.role).toBe('admin');
      token = r.json.access_token;
    });

    it('creates a library with the folder browser; the scan fills it in without a reload', async () => {
      await t.page.click('nav[aria-label="Main"] a:text-is("Libraries")');
      await t.page.waitForURL(`${b.url}/admin/libraries`);
      await t.page.click(`button[data-folder="${tmpdir()}"]`);
      await t.page.waitForSelector(`#browse-path:text-is("In ${tmpdir()}")`);
      await t.page.click(`button[data-folder="${folder}"]`);
      await t.page.waitForFunction((p: string) => document.getElementById('lib-folder').value === p, folder);
      await t.page.fill('#lib-name', 'Home shelf');
      await Promise.all([t.page.waitForEvent('load'), t.page.click('#create')]);
      const row = t.page.locator('#libraries tbody tr', { hasText: 'Home shelf' });
      expect(await row.locator('td[data-label="Folders"]').textContent()).toBe(folder);
      libraryId = (await row.getAttribute('data-library'))!;
      await t.page.waitForSelector('main[data-live-state="open"]');
      const loads = t.loads;
      await row.locator('button:text-is("Rescan")').click();
      // the live channel refreshes the table as the scan goes: the two books appear, no page load
      await t.page.waitForSelector(`#libraries tr[data-library="${libraryId}"] td[data-label="Books"]:text-is("2")`, { timeout: 30_000 });
      expect(t.loads).toBe(loads);
      await settled(call, token, libraryId);
      const list = await items(call, token, libraryId);
      epub = list.find((i) => i.formats[0]?.format === 'epub')!;
      pdf = list.find((i) => i.formats[0]?.format === 'pdf')!;
      expect([epub?.title, pdf?.title]).toEqual(['The Hidden Crown', 'Five Pages']);
      expect(t.errors).toEqual([]);
    });

    it('finds the book in the library, opens its page and reads it; the saved place is the XPointer KOReader pulls', async () => {
      await t.page.click('nav[aria-label="Main"] a:text-is("Library")');
      await t.page.waitForURL(`${b.url}/library`);
      await Promise.all([t.page.waitForURL(`${b.url}/books/${epub.id}`), t.page.click(`#grid a[href="/books/${epub.id}"]`)]);
      expect(await t.page.textContent('h1')).toBe('The Hidden Crown');
      await checkPage(t, `${mode}-first-run-book`);
      await Promise.all([t.page.waitForURL(`${b.url}/read/${epub.id}`), t.page.click('#read')]);
      await t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
      const start = Number(await data('fraction'));
      await t.page.locator('#reader-title').click();
      for (let i = 0; i < 3; i++) {
        await t.page.keyboard.press('ArrowRight');
        await t.page.waitForTimeout(150);
      }
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, start, { timeout: 10_000 });
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      expect(t.writes).toHaveLength(1);
      const w = t.writes[0] as { percentage: number; epubcfi: string };
      expect(w.epubcfi).toBe(await data('cfi'));
      expect(w.percentage).toBeGreaterThan(start);
      expect(w.percentage).toBeLessThan(0.85);
      // KOReader's stock pull, with the administrator's own credentials: the same place as an XPointer
      const ko = kosyncAs(root.username, root.password);
      // (distributed: the pull reads the gateway's view, a moment behind the write)
      const pull = await eventually(async () => {
        const r = await ko.pull(epub.formats[0].partial_md5);
        expect(r.status, r.text).toBe(200);
        expect(r.json.progress).toEqual(expect.any(String));
        return r;
      }, 10_000);
      expect(pull.json.progress).toMatch(new RegExp(`^/body/DocFragment\\[${docFragmentOf(w.epubcfi)}\\]/body/`));
      expect(Math.abs(pull.json.percentage - w.percentage)).toBeLessThanOrEqual(0.01);
      const saved = await call('GET', `/api/media-items/${epub.id}/progress`, { token });
      expect(pull.json.progress).toBe(saved.json.xpointer);

      // KOReader reads on to 90 % (its XPointer for that place, as another reader's pull names it)
      const scout = await register(call);
      expect((await call('PUT', `/api/media-items/${epub.id}/progress`, { token: scout.token, body: { percentage: 0.9 } })).status).toBe(200);
      const far = await kosyncAs(scout.username, scout.password).pull(epub.formats[0].partial_md5);
      expect(far.json.progress).toMatch(/^\/body\/DocFragment\[\d+\]\//);
      // meanwhile the web reads on (another tab): KOReader was given the earlier place by its pull and
      // has not pulled since, so its first push comes from an older version than the current one
      const onward = await call('PUT', `/api/media-items/${epub.id}/progress`, {
        token,
        body: { percentage: Math.round((w.percentage + 0.03) * 10000) / 10000, client: 'web', device: 'web' },
      });
      expect(onward.json.status, onward.text).toBe('saved');
      const pushed = await ko.push(epub.formats[0].partial_md5, far.json.progress, 0.9);
      expect(pushed.status, pushed.text).toBe(200);
      // KOReader's first position, from before the web's latest, is a conflict, offered on the book page
      const conflict = t.page.locator('#progress-conflicts form.conflict');
      await eventually(async () => {
        await t.page.goto(`${b.url}/books/${epub.id}`);
        expect(await conflict.count()).toBe(1);
      }, 10_000);
      expect(await conflict.locator('.conflict-incoming').textContent()).toBe('Kobo_frost a1b2c3d4 (koreader) is at 90%');
      expect(await conflict.locator('.conflict-current').textContent()).toBe(`the place kept here is ${Math.round(onward.json.progress.percentage * 100)}%, from web.`);
      await checkPage(t, `${mode}-first-run-conflict`);
      await Promise.all([t.page.waitForEvent('load'), conflict.locator('button[value="incoming"]').click()]);
      expect(await t.page.locator('#progress-conflicts').count()).toBe(0);
      expect(await t.page.textContent('#book-progress')).toBe('90% 90% read');
      // the reader, opened again, is there
      await Promise.all([t.page.waitForURL(`${b.url}/read/${epub.id}`), t.page.click('#read')]);
      await t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
      expect(docFragmentOf((await data('cfi'))!)).toBe(Number(/DocFragment\[(\d+)\]/.exec(far.json.progress)![1]));
      // the page shown holds that place
      expect(Number(await data('fraction'))).toBeLessThanOrEqual(0.9);
      expect(Number(await data('fraction-end'))).toBeGreaterThanOrEqual(0.9);
      expect(t.errors).toEqual([]);
    });

    it('the library page shows a changed title at once (its rendered page is kept only for the same answer)', async () => {
      const card = t.page.locator(`#grid a[href="/books/${pdf.id}"]`);
      await t.page.goto(`${b.url}/library`);
      expect(await card.textContent()).toContain('Five Pages');
      await t.page.goto(`${b.url}/library`);
      const r = await call('PUT', `/api/media-items/${pdf.id}`, { token, body: { title: 'Five <Pages>, revised' } });
      expect(r.status, r.text).toBe(200);
      await eventually(async () => {
        await t.page.goto(`${b.url}/library`);
        expect(await card.textContent()).toContain('Five <Pages>, revised');
      }, 10_000);
    });

    it('reads the PDF page by page and saves the page', async () => {
      t.writes.length = 0;
      await t.page.goto(`${b.url}/books/${pdf.id}`);
      await Promise.all([t.page.waitForURL(`${b.url}/read/${pdf.id}`), t.page.click('#read')]);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      const img = t.page.locator('#pages img');
      expect(await img.getAttribute('alt')).toBe(`Page 1 of ${PDF_PAGES}`);
      await t.page.waitForFunction(() => document.querySelector('#pages img').naturalWidth > 0, undefined, { timeout: 20_000 });
      await t.page.locator('#next').click();
      await t.page.locator('#next').click();
      expect(await img.getAttribute('alt')).toBe(`Page 3 of ${PDF_PAGES}`);
      // the page shown is the PDF's own third page, drawn by the server
      await t.page.waitForFunction(() => document.querySelector('#pages img').complete && document.querySelector('#pages img').naturalWidth > 0, undefined, { timeout: 20_000 });
      const src = (await img.getAttribute('src'))!;
      expect(src).toMatch(new RegExp(`^/opds/pages/${pdf.id}/2\\?width=\\d+$`));
      const picture = await t.page.request.get(`${b.url}${src}`);
      expect(picture.status()).toBe(200);
      expect(picture.headers()['content-type']).toMatch(/^image\//);
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      expect(t.writes).toEqual([{ page: 3, page_count: PDF_PAGES, percentage: 0.5, client: 'web', device: 'web', active_seconds: expect.any(Number) }]);
      const p = await call('GET', `/api/media-items/${pdf.id}/progress`, { token });
      expect(p.json).toMatchObject({ page: 3, page_count: PDF_PAGES });
      await t.page.reload();
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await img.getAttribute('alt')).toBe(`Page 3 of ${PDF_PAGES}`);
      expect(t.errors).toEqual([]);
    });

    it('adds a Kobo from the devices page: its address is shown once and works; its books and a new address are set there', async () => {
      await t.page.goto(`${b.url}/devices`);
      await t.page.fill('#kobo-name', 'Libra <2>');
      await t.page.click('#add-kobo');
      const line = (await t.page.waitForSelector('#kobo-outcome .kobo-line')).textContent();
      const url = (await line)!.replace(/^api_endpoint=/, '');
      expect(url).toMatch(new RegExp(`^${b.url}/kobo/bkt_[A-Za-z0-9_-]{43}$`));
      const path = new URL(url).pathname;
      const init = await call('GET', `${path}/v1/initialization`);
      expect(init.status, init.text).toBe(200);
      // the store address is shown once: not on the page after a reload, nor in the device list
      await t.page.reload();
      expect(await t.page.content()).not.toContain(path);
      const card = t.page.locator('li.device', { hasText: 'Libra <2>' });
      const id = (await card.getAttribute('data-device-id'))!;
      expect(await card.locator('.device-name').textContent()).toBe('Libra <2>');
      expect(await card.locator('.device-state').textContent()).toBe('Connected');
      await checkPage(t, `${mode}-first-run-devices`);
      // only the shelves' books
      await t.page.selectOption(`#kobo-books-${id}`, 'shelves');
      await Promise.all([t.page.waitForEvent('load'), t.page.click(`#save-kobo-${id}`)]);
      expect(await t.page.locator(`#kobo-books-${id}`).inputValue()).toBe('shelves');
      const dev = (await call('GET', `/api/devices/${id}`, { token })).json;
      expect(dev.kobo).toEqual({ books: 'shelves', address: true });
      // a new address: the old one stops working at once
      await card.locator('summary').click();
      await t.page.click(`#kobo-address-${id}`);
      const fresh = new URL((await (await t.page.waitForSelector(`#kobo-address-outcome-${id} .kobo-line`)).textContent())!.replace(/^api_endpoint=/, '')).pathname;
      expect(fresh).not.toBe(path);
      expect((await call('GET', `${path}/v1/initialization`)).status).toBe(401);
      expect((await call('GET', `${fresh}/v1/initialization`)).status).toBe(200);
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
    });
  });
}
