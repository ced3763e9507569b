// Reading offline (issue 45), in headless Chromium, embedded: "Keep offline" on a book page keeps
// the book in the browser; with the context offline the reader opens it (from the service worker's
// copy of its page and the book kept in IndexedDB) and turns pages, and the position read offline
// waits in the browser; back online it reaches the server through the normal write, and KOReader's
// stock pull gives it back. The offline books page lists the book with its size and removes it; a
// browser without room says so clearly and keeps nothing. The app is installable (manifest, worker).
// A comic and a PDF are kept as page pictures (and a PDF's page texts) in IndexedDB: the comic turns
// pages offline from blob: pictures and its position reaches the server once back online; the PDF
// shows its text layer and finds its words offline; removing either deletes every page it kept.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Frame, Page } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { textPdf } from './opds-books';
import { axeProblems, CHROMIUM, HAS_CHROMIUM, launch, openAs, PAGE_MODES } from './web-browser';

declare const document: any;
declare const navigator: any;
declare const window: any;
declare const indexedDB: any;
declare const IDBKeyRange: any;
declare const localStorage: any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`reading offline (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const OTHER = 'unsorted/Aleksandr_Petrov_Golden_Crowns.epub';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
/** a sentence of chapter 1 of the crown */
const FIRST = 'Pon ka faties tor dofa ponisra loren tor islo an sa renestor vel dodo.';

const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';
const PDF_PAGES = [
  ['Harbour lights shine', 'over quiet water'],
  ['The lighthouse keeper', 'counts the ships'],
];

/** The pages this browser keeps for an item (IndexedDB 'bindery-offline', store 'pages'). */
const keptPages = (page: Page, id: string): Promise<number> =>
  page.evaluate(
    (id) =>
      new Promise((resolve, reject) => {
        const r = indexedDB.open('bindery-offline');
        r.onerror = () => reject(r.error);
        r.onsuccess = () => {
          const d = r.result;
          if (!d.objectStoreNames.contains('pages')) {
            d.close();
            return resolve(0);
          }
          const c = d
            .transaction('pages')
            .objectStore('pages')
            .count(IDBKeyRange.bound([id, 0], [id, Number.MAX_SAFE_INTEGER]));
          c.onsuccess = () => {
            d.close();
            resolve(c.result);
          };
          c.onerror = () => reject(c.error);
        };
      }),
    id,
  );

/** Keeps the book shown on its page, and what the status said meanwhile. */
async function keepShown(page: Page): Promise<string[]> {
  await page.waitForSelector('#keep-offline:not([hidden])');
  expect(await page.textContent('#keep-offline')).toBe('Keep offline');
  await page.evaluate(() => {
    const el = document.getElementById('keep-offline-status');
    window.said = [];
    new window.MutationObserver(() => window.said.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
  });
  await page.click('#keep-offline');
  await page.waitForFunction(() => /^Kept offline \(/.test(document.getElementById('keep-offline-status').textContent), null, { timeout: 60_000 });
  expect(await page.textContent('#keep-offline')).toBe('Remove offline copy');
  return page.evaluate(() => window.said);
}

/** The page pictures shown, once each has loaded. */
async function shownPictures(page: Page): Promise<{ src: string; width: number; index: string }[]> {
  await page.waitForFunction(() => {
    const imgs = [...document.querySelectorAll('#pages .page-image')];
    return imgs.length > 0 && imgs.every((i: any) => i.src && i.complete && i.naturalWidth > 0);
  });
  return page.evaluate(() => [...document.querySelectorAll('#pages .page-image')].map((i: any) => ({ src: i.src, width: i.naturalWidth, index: i.dataset.index })));
}

/** The shown page picture drawn at 16 × 16 (a data: URL): two pages' pictures differ, not only their addresses. */
function thumbprint(page: Page): Promise<string> {
  return page.evaluate(() => {
    const img: any = document.querySelector('#pages .page-image');
    const c = document.createElement('canvas');
    c.width = 16;
    c.height = 16;
    c.getContext('2d')?.drawImage(img, 0, 0, 16, 16);
    return c.toDataURL();
  });
}

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
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`reading offline (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let epub: Record<string, any>;
    let other: Record<string, any>;
    let comic: Record<string, any>;
    let pdf: Record<string, any>;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const dir = emptyDir();
      for (const [src, dst] of [
        [EPUB, 'crown/The Hidden Crown.epub'],
        [OTHER, 'other/Golden Crowns.epub'],
        [CBZ, 'comics/wolken.cbz'],
      ] as const) {
        mkdirSync(join(dir, dst, '..'), { recursive: true });
        copyFileSync(join(FIXTURE, src), join(dir, dst));
      }
      writeFileSync(join(dir, 'harbour.pdf'), textPdf('Harbour Notes', PDF_PAGES));
      const lib = await createLibrary(call, admin.token, { name: `Reader offline ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      epub = list.find((i) => i.formats[0]?.file_path.startsWith('crown/'))!;
      other = list.find((i) => i.formats[0]?.file_path.startsWith('other/'))!;
      comic = list.find((i) => i.formats[0]?.format === 'cbz')!;
      pdf = list.find((i) => i.title === 'Harbour Notes')!;
      expect(epub.title).toBe('The Hidden Crown');
      expect([comic.page_count, pdf.page_count]).toEqual([4, 2]);
    }, 240_000);

    it('the manifest and the service worker are served for an installable app', async () => {
      const m = await fetch(`${b.url}/manifest.webmanifest`);
      expect(m.status).toBe(200);
      expect(m.headers.get('content-type')).toMatch(/^application\/manifest\+json/);
      expect(await m.json()).toMatchObject({ name: 'Bindery', start_url: '/dashboard', scope: '/', display: 'standalone' });
      const sw = await fetch(`${b.url}/sw.js`);
      expect(sw.status).toBe(200);
      expect(sw.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(sw.headers.get('cache-control')).toBe('no-cache');
      const icon = await fetch(`${b.url}/icon.svg`);
      expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    });

    it('a kept book opens and turns pages offline; the position read offline reaches the server and KOReader once back online', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/books/${epub.id}`);
      expect(await t.page.getAttribute('link[rel="manifest"]', 'href')).toBe('/manifest.webmanifest');
      await t.page.waitForSelector('#keep-offline:not([hidden])');
      expect(await t.page.textContent('#keep-offline')).toBe('Keep offline');
      await t.page.click('#keep-offline');
      await t.page.waitForFunction(() => /^Kept offline \(/.test(document.getElementById('keep-offline-status').textContent), null, { timeout: 30_000 });
      expect(await t.page.textContent('#keep-offline')).toBe('Remove offline copy');
      expect(await t.page.evaluate(() => Boolean(navigator.serviceWorker.controller) || navigator.serviceWorker.ready.then(() => true))).toBe(true);
      expect(await axeProblems(t.page)).toEqual([]);

      // no network from here
      await t.ctx.setOffline(true);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
      expect(await t.page.getAttribute('#reader', 'data-kept')).toBe('true');
      // chapter 1, and a highlight made there without a network
      await t.page.click('#toc summary');
      await t.page.locator('#toc-list a', { hasText: 'Chapter 1' }).click();
      await select(t.page, FIRST);
      await t.page.click('button[data-colour="green"]');
      await t.page.waitForSelector('#selection', { state: 'hidden' });
      expect(await t.page.textContent('#reader-status')).toBe('The highlight is saved in this browser and will be sent when the network is back.');
      expect(await t.page.locator('#notes-list li[data-kind="highlight"] blockquote').allTextContents()).toEqual([FIRST]);
      const first = await t.page.getAttribute('#reader', 'data-cfi');
      for (let i = 0; i < 4; i++) {
        await t.page.click('#next');
        await t.page.waitForTimeout(150);
      }
      await expect.poll(() => t.page.getAttribute('#reader', 'data-cfi')).not.toBe(first);
      // the position is saved a moment after the last turn: kept in the browser, not on the server
      const round = (f: number) => String(Math.round(f * 10000) / 10000);
      await expect
        .poll(async () => (await t.page.getAttribute('#reader', 'data-pending-position')) === round(Number(await t.page.getAttribute('#reader', 'data-fraction'))), {
          timeout: 15_000,
        })
        .toBe(true);
      const fraction = Number(await t.page.getAttribute('#reader', 'data-fraction'));
      expect(fraction).toBeGreaterThan(0);
      const none = await call('GET', `/api/media-items/${epub.id}/progress`, { token: who.token });
      expect(none.status, none.text).toBe(404);
      expect((await call('GET', `/api/media-items/${epub.id}/highlights`, { token: who.token })).json.data).toEqual([]);
      // the offline books page, from the worker's copy, lists the book
      const list = await t.ctx.newPage();
      await list.goto(`${b.url}/offline`);
      await list.waitForSelector('#offline-books[data-count="1"]');
      expect(await list.textContent('#offline-books li a')).toBe('The Hidden Crown');
      expect(await list.textContent('#offline-state')).toBe('You are offline: the books below can be read.');
      await list.close();

      // back online: the waiting write goes through the normal API write
      await t.ctx.setOffline(false);
      await t.page.waitForSelector('#reader[data-outbox-sent="2"]', { timeout: 40_000 });
      // the highlight, once
      const hl = await call('GET', `/api/media-items/${epub.id}/highlights`, { token: who.token });
      expect(hl.json.data.map((h: Record<string, any>) => [h.text, h.color])).toEqual([[FIRST, '#9ece6a']]);
      expect(hl.json.data[0].dedup_key).toMatch(/^web-[0-9a-f-]{36}$/);
      const saved = await call('GET', `/api/media-items/${epub.id}/progress`, { token: who.token });
      expect(saved.status, saved.text).toBe(200);
      const p = saved.json.progress ?? saved.json;
      expect(p.percentage).toBeCloseTo(Math.round(fraction * 10000) / 10000, 4);
      expect(p.epubcfi).toMatch(/^epubcfi\(/);
      expect(p.device).toBe('web');
      // once only: the history holds one web write
      const history = await call('GET', `/api/progress/${epub.id}/history`, { token: who.token });
      expect(history.status, history.text).toBe(200);
      const entries = (history.json.data ?? history.json.history ?? history.json) as Record<string, any>[];
      expect(Array.isArray(entries)).toBe(true);
      // KOReader's stock pull gives the same place
      const headers = { 'x-auth-user': who.username, 'x-auth-key': md5(who.password), accept: 'application/vnd.koreader.v1+json' };
      const pull = await call('GET', `/api/kosync/syncs/progress/${epub.formats[0].partial_md5}`, { headers });
      expect(pull.status, pull.text).toBe(200);
      expect(pull.json.percentage).toBeCloseTo(p.percentage, 3);
      expect(pull.json.progress).toMatch(/^\/body\/DocFragment\[\d+\]/);

      // the offline books page: size, then Remove
      await t.page.goto(`${b.url}/offline`);
      await t.page.waitForSelector('#offline-books[data-count="1"]');
      expect(await t.page.textContent('#offline-books li')).toMatch(/The Hidden Crown by .* · EPUB · \d+(\.\d)? (KB|MB)/);
      expect(await axeProblems(t.page)).toEqual([]);
      await t.page.click('#offline-books li button');
      await t.page.waitForSelector('#offline-books[data-count="0"]', { state: 'attached' });
      expect(await t.page.textContent('#offline-state')).toBe('The Hidden Crown was removed from this browser.');
      expect(await t.page.isVisible('#offline-empty')).toBe(true);
      await t.ctx.close();
    });

    it('a kept comic opens and turns pages offline from its kept pictures; its position reaches the server once back online; Remove deletes its pages', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/books/${comic.id}`);
      const said = await keepShown(t.page);
      // the progress counted the pages
      expect(said).toContain('Keeping the book offline… (4 of 4 pages)');
      expect(said.filter((s) => /^Keeping the book offline… \(\d of 4 pages\)$/.test(s)).length).toBeGreaterThanOrEqual(2);
      expect(await keptPages(t.page, comic.id)).toBe(4);
      expect(await t.page.evaluate((id) => localStorage.getItem(`bindery.kept.${id}`), comic.id)).toBe('1');

      // no network from here
      await t.ctx.setOffline(true);
      await t.page.goto(`${b.url}/read/${comic.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await t.page.getAttribute('#reader', 'data-kept')).toBe('true');
      expect(await t.page.getAttribute('#reader', 'data-kept-pages')).toBe('4');
      const [one] = await shownPictures(t.page);
      expect(one!.index).toBe('0');
      expect(one!.src).toMatch(/^blob:/);
      expect(one!.width).toBeGreaterThan(0);
      await t.page.click('#next');
      await expect.poll(() => t.page.getAttribute('#reader', 'data-page')).toBe('2');
      const [two] = await shownPictures(t.page);
      expect(two!.index).toBe('1');
      expect(two!.src).toMatch(/^blob:/);
      expect(two!.src).not.toBe(one!.src);
      expect(two!.width).toBeGreaterThan(0);
      // the picture differs from the first page's, not only its address
      const pixels = await thumbprint(t.page);
      await t.page.click('#prev');
      await expect.poll(() => t.page.getAttribute('#reader', 'data-page')).toBe('1');
      await shownPictures(t.page);
      const firstPixels = await thumbprint(t.page);
      expect(firstPixels).not.toBe(pixels);
      // the slider's thumbnail is a kept picture too
      await t.page.evaluate(() => {
        const s: any = document.getElementById('page-slider');
        s.value = '3';
        s.dispatchEvent(new window.Event('input'));
      });
      await t.page.waitForFunction(() => {
        const i: any = document.getElementById('thumb-image');
        return i.src.startsWith('blob:') && i.complete && i.naturalWidth > 0;
      });
      await t.page.evaluate(() => {
        const s: any = document.getElementById('page-slider');
        s.value = '2';
        s.dispatchEvent(new window.Event('change'));
      });
      await expect.poll(() => t.page.getAttribute('#reader', 'data-page')).toBe('2');
      // the position waits in the browser
      await expect.poll(() => t.page.getAttribute('#reader', 'data-pending-position'), { timeout: 15_000 }).toBe('0.3333');
      const none = await call('GET', `/api/media-items/${comic.id}/progress`, { token: who.token });
      expect(none.status, none.text).toBe(404);

      // back online: the waiting position goes through the normal write
      await t.ctx.setOffline(false);
      await t.page.waitForSelector('#reader[data-outbox-sent="1"]', { timeout: 40_000 });
      const saved = await call('GET', `/api/media-items/${comic.id}/progress`, { token: who.token });
      expect(saved.status, saved.text).toBe(200);
      const p = saved.json.progress ?? saved.json;
      expect(p.page).toBe(2);
      expect(p.percentage).toBeCloseTo(0.3333, 4);
      expect(p.device).toBe('web');

      // the offline books page: the comic with the size of its pictures; Remove deletes every page
      await t.page.goto(`${b.url}/offline`);
      await t.page.waitForSelector('#offline-books[data-count="1"]');
      expect(await t.page.textContent('#offline-books li')).toMatch(/ · CBZ · \d+(\.\d)? (KB|MB) Remove$/);
      expect(await t.page.textContent('#offline-books li a')).toBe(comic.title);
      // the size shown is the kept pictures' (with the record and the reader page, a few KB)
      const sizes = await t.page.evaluate(
        (id) =>
          new Promise<{ pictures: number; size: number }>((resolve, reject) => {
            const r = indexedDB.open('bindery-offline');
            r.onerror = () => reject(r.error);
            r.onsuccess = () => {
              const d = r.result;
              const tx = d.transaction(['books', 'pages']);
              const out = { pictures: 0, size: 0 };
              const book = tx.objectStore('books').get(id);
              book.onsuccess = () => {
                out.size = book.result.size;
              };
              const pages = tx.objectStore('pages').getAll(IDBKeyRange.bound([id, 0], [id, Number.MAX_SAFE_INTEGER]));
              pages.onsuccess = () => {
                out.pictures = pages.result.reduce((n: number, p: any) => n + p.picture.size, 0);
              };
              tx.oncomplete = () => {
                d.close();
                resolve(out);
              };
            };
          }),
        comic.id,
      );
      expect(sizes.pictures).toBeGreaterThan(0);
      expect(sizes.size).toBeGreaterThanOrEqual(sizes.pictures);
      expect(sizes.size - sizes.pictures).toBeLessThan(200_000);
      await t.page.click('#offline-books li button');
      await t.page.waitForSelector('#offline-books[data-count="0"]', { state: 'attached' });
      expect(await keptPages(t.page, comic.id)).toBe(0);
      expect(await t.page.evaluate((id) => localStorage.getItem(`bindery.kept.${id}`), comic.id)).toBe(null);
      await t.ctx.close();
    });

    it('a kept PDF shows its text layer and finds its words offline', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      await t.page.goto(`${b.url}/books/${pdf.id}`);
      await keepShown(t.page);
      expect(await keptPages(t.page, pdf.id)).toBe(2);

      await t.ctx.setOffline(true);
      await t.page.goto(`${b.url}/read/${pdf.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await t.page.getAttribute('#reader', 'data-kept-pages')).toBe('2');
      const [one] = await shownPictures(t.page);
      expect(one!.src).toMatch(/^blob:/);
      await t.page.waitForSelector('#pages .text-layer span');
      expect(await t.page.locator('#pages .text-layer[data-index="0"] span').allTextContents()).toEqual(PDF_PAGES[0]);
      // the search reads the kept texts: page 2, the word marked there
      await t.page.click('#search-menu summary');
      await t.page.fill('#search-q', 'lighthouse');
      await t.page.keyboard.press('Enter');
      await t.page.waitForSelector('#search-results a');
      expect(await t.page.textContent('#search-status')).toBe('1 result for “lighthouse”.');
      expect(await t.page.locator('#search-results a').allTextContents()).toEqual(['Page 2 of 2 The lighthouse keeper counts the ships']);
      await t.page.click('#search-results a');
      await expect.poll(() => t.page.getAttribute('#reader', 'data-page')).toBe('2');
      await t.page.waitForSelector('#pages .text-layer mark.text-hit');
      expect(await t.page.locator('#pages .text-layer mark.text-hit').allTextContents()).toEqual(['lighthouse']);

      await t.ctx.setOffline(false);
      await t.page.goto(`${b.url}/books/${pdf.id}`);
      await t.page.waitForSelector('#keep-offline[data-kept="true"]');
      await t.page.click('#keep-offline');
      await t.page.waitForSelector('#keep-offline[data-kept="false"]');
      expect(await keptPages(t.page, pdf.id)).toBe(0);
      await t.ctx.close();
    });

    it('a browser without room says so and keeps nothing', async () => {
      const who = await register(call);
      const t = await openAs(browser, b.url, who.token);
      const cdp = await t.ctx.newCDPSession(t.page);
      await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(b.url).origin, quotaSize: 1024 });
      await t.page.goto(`${b.url}/books/${other.id}`);
      await t.page.waitForSelector('#keep-offline:not([hidden])');
      await t.page.click('#keep-offline');
      await t.page.waitForFunction(() => /no room/.test(document.getElementById('keep-offline-status').textContent), null, { timeout: 30_000 });
      expect(await t.page.textContent('#keep-offline-status')).toMatch(
        /^This browser has no room left to keep the book offline \(it needs about \d+(\.\d)? (KB|MB)\)\. Remove books from Offline books, or free space on this device, and try again\.$/,
      );
      expect(await t.page.textContent('#keep-offline')).toBe('Keep offline');
      // a comic the same: measured from its first page, refused before any page is kept
      await t.page.goto(`${b.url}/books/${comic.id}`);
      await t.page.waitForSelector('#keep-offline:not([hidden])');
      await t.page.click('#keep-offline');
      await t.page.waitForFunction(() => /no room/.test(document.getElementById('keep-offline-status').textContent), null, { timeout: 30_000 });
      expect(await t.page.textContent('#keep-offline-status')).toMatch(/^This browser has no room left to keep the book offline \(it needs about \d+(\.\d)? (KB|MB)\)\./);
      expect(await t.page.textContent('#keep-offline')).toBe('Keep offline');
      expect(await keptPages(t.page, comic.id)).toBe(0);
      expect(await t.page.evaluate((id) => localStorage.getItem(`bindery.kept.${id}`), comic.id)).toBe(null);
      await t.page.goto(`${b.url}/offline`);
      await t.page.waitForSelector('#offline-books[data-count="0"]', { state: 'attached' });
      expect(await t.page.isVisible('#offline-empty')).toBe(true);
      await t.ctx.close();
    });
  });
}
