// Browsing the library in headless Chromium (issue 43): the series list (covers, counts, unread
// badges, A-Z, search as you type), a manga found by its series and its next volume read, a series'
// page (index order, description, missing numbers, read next, bulk actions), the author list, the
// library filter and a page per library, totals and pages, the sort applied with a filter set, the
// phone width (the filters folded away, books on the first screen, two covers a row at home), and a
// smart collection's rules edited after creation. Hostile names are text; axe finds nothing
// serious; everything by keyboard. Embedded mode only (PAGE_MODES, decision 97).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { availableModes, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { storedZip } from './kobo-helpers';
import { makeItem, put } from './reading-helpers';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, openAs, PAGE_MODES, tabTo, type Tab, unexpectedErrors } from './web-browser';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';
import { jpeg } from '../../services/catalog/test/fixtures/books';

declare const document: any;
declare const window: any;

const modes = (await availableModes()).filter((m) => PAGE_MODES.includes(m));
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`browsing in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const KAIJU = 'Kaiju Café';
const ROAD = 'The Long Road';
const HOSTILE_SERIES = '<script>alert(1)</script>';
const HOSTILE_AUTHOR = '<img src=x onerror=alert(2)>';
const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A manga volume: three page pictures and a ComicInfo.xml naming its series, number and writer. */
async function volume(n: number, summary?: string): Promise<Buffer> {
  const info = `<?xml version="1.0"?><ComicInfo><Title>${KAIJU} ${n}</Title><Series>${KAIJU}</Series><Number>${n}</Number><Writer>Mika Sato</Writer>${
    summary ? `<Summary>${x(summary)}</Summary>` : ''
  }<Manga>YesAndRightToLeft</Manga></ComicInfo>`;
  const colours = ['#c33', '#3a3', '#33c'];
  const pages = await Promise.all(colours.map((c, i) => jpeg(200, 300, colours[(n + i) % 3] ?? c)));
  return buildZip([{ name: 'ComicInfo.xml', data: info }, ...pages.map((data, i) => ({ name: `${String(i + 1).padStart(3, '0')}.jpg`, data }))]);
}

/** A small EPUB with an author and, when given, a series and its number (calibre's metadata). */
function novel(title: string, author: string, series?: string, index?: number): Buffer {
  const meta = series ? `<meta name="calibre:series" content="${x(series)}"/><meta name="calibre:series_index" content="${index}"/>` : '';
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf"><dc:identifier id="uid">urn:uuid:${crypto.randomUUID()}</dc:identifier><dc:title>${x(title)}</dc:title><dc:creator opf:role="aut">${x(author)}</dc:creator><dc:language>en</dc:language>${meta}</metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/><item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/></manifest><spine toc="ncx"><itemref idref="c1"/></spine></package>`,
    ],
    [
      'OEBPS/toc.ncx',
      '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head/><docTitle><text>T</text></docTitle><navMap><navPoint id="n1" playOrder="1"><navLabel><text>One</text></navLabel><content src="c1.xhtml"/></navPoint></navMap></ncx>',
    ],
    ['OEBPS/c1.xhtml', `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${x(title)}</title></head><body><p>It begins here.</p></body></html>`],
  ]);
}

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`browsing the library (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let alice: Account;
    const lib: Record<string, string> = {};
    const ids: Record<string, string> = {};
    let shelfId: string;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      // the manga: volumes 1 to 3 first, volume 5 in a later scan (so it is the newest); no volume 4
      const manga = emptyDir();
      mkdirSync(join(manga, KAIJU));
      for (const n of [1, 2, 3]) writeFileSync(join(manga, KAIJU, `${KAIJU} v0${n}.cbz`), await volume(n, n === 1 ? 'Monsters run a café.\nThe coffee is strong.' : undefined));
      lib.manga = (await createLibrary(call, admin.token, { name: 'Manga', folders: [manga], watch: false })).id;
      await scan(call, admin.token, lib.manga!);
      writeFileSync(join(manga, KAIJU, `${KAIJU} v05.cbz`), await volume(5));
      await scan(call, admin.token, lib.manga!);
      const novels = emptyDir();
      writeFileSync(join(novels, 'road3.epub'), novel('Road Three', 'Ann Walker', ROAD, 3));
      writeFileSync(join(novels, 'road1.epub'), novel('Road One', 'Ann Walker', ROAD, 1));
      writeFileSync(join(novels, 'road2.epub'), novel('Road Two', 'Ann Walker', ROAD, 2));
      writeFileSync(join(novels, 'hostile.epub'), novel('Hostile Book', HOSTILE_AUTHOR, HOSTILE_SERIES, 1));
      lib.novels = (await createLibrary(call, admin.token, { name: 'Novels', folders: [novels], watch: false })).id;
      await scan(call, admin.token, lib.novels!);
      for (const l of [lib.manga!, lib.novels!]) for (const i of await items(call, admin.token, l)) ids[i.title] = i.id;
      expect(Object.keys(ids).sort()).toEqual(['Hostile Book', `${KAIJU} 1`, `${KAIJU} 2`, `${KAIJU} 3`, `${KAIJU} 5`, 'Road One', 'Road Three', 'Road Two']);
      // thirty more books (two pages of the library), and a library alice may not see
      const bulk = await createLibrary(call, admin.token, { name: 'Bulk', folders: [emptyDir()], watch: false });
      lib.bulk = bulk.id;
      for (let i = 1; i <= 30; i++) await makeItem(call, admin, bulk.id, { title: `Filler ${String(i).padStart(2, '0')}`, authors: ['Filler Author'] });
      lib.secret = (await createLibrary(call, admin.token, { name: 'Secret', folders: [emptyDir()], watch: false })).id;
      await makeItem(call, admin, lib.secret!, { title: 'Secret Saga One', authors: ['Secret Author'], series: 'Secret Saga', series_index: 1 });
      alice = await register(call);
      const g = await call('PUT', `/api/auth/users/${alice.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [lib.manga, lib.novels, lib.bulk] } });
      expect(g.status, g.text).toBe(200);
      expect((await put(call, alice.token, ids[`${KAIJU} 1`]!, { percentage: 1 })).status).toBe(200);
      const shelf = await call('POST', '/api/collections', { token: alice.token, body: { name: 'Manga shelf' } });
      expect(shelf.status, shelf.text).toBe(201);
      shelfId = shelf.json.id;
    }, 240_000);

    const as = (who: Account, width = 1280): Promise<Tab> => openAs(browser, b.url, who.token, width);
    const texts = (t: Tab, selector: string) => t.page.locator(selector).allTextContents();
    const titles = (t: Tab) => texts(t, '#grid .book-title');
    const seriesNames = (t: Tab) => texts(t, '#series-grid .book-title');
    const clean = (t: Tab) => {
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
    };

    it('the series list: covers, counts, unread badges and progress, the total, the A-Z jump and search as you type; hidden series absent, hostile names as text', async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/library`);
      await Promise.all([t.page.waitForURL(`${b.url}/series`), t.page.click('#tab-series')]);
      expect(await t.page.textContent('h1')).toBe('Series');
      expect(await t.page.getAttribute('#tab-series', 'aria-current')).toBe('page');
      expect(await seriesNames(t)).toEqual([HOSTILE_SERIES, KAIJU, ROAD]);
      expect(await t.page.textContent('#series-total')).toBe('3 series.');
      const kaiju = t.page.locator(`li[data-series="${KAIJU}"]`);
      expect(await kaiju.locator('.unread-badge').textContent()).toBe('3 unread');
      expect(await kaiju.locator('.series-count').textContent()).toBe('4 books, 1 read');
      expect(await kaiju.locator('progress').getAttribute('value')).toBe('25');
      expect(await kaiju.locator('progress').getAttribute('aria-label')).toBe(`${KAIJU}: 25% read`);
      // the first volume's cover stands for the series, and loads
      expect(await kaiju.locator('img.cover').getAttribute('src')).toBe(`/api/media-items/${ids[`${KAIJU} 1`]}/thumbnail`);
      await t.page.waitForFunction((s: string) => document.querySelector(s)?.naturalWidth > 0, `li[data-series="${KAIJU}"] img.cover`);
      expect(await t.page.locator(`li[data-series="${ROAD}"] .unread-badge`).textContent()).toBe('3 unread');
      expect(await t.page.locator(`li[data-series="${HOSTILE_SERIES}"] .series-link`).getAttribute('href')).toBe(`/series/${encodeURIComponent(HOSTILE_SERIES)}`);
      expect(await t.page.content()).not.toContain('Secret Saga');
      await tabTo(t.page, '#letter-K');
      await checkPage(t, `${mode}-series-list`);
      // A-Z: by keyboard, then back to all
      await Promise.all([t.page.waitForURL(/letter=K/), t.page.keyboard.press('Enter')]);
      expect(await seriesNames(t)).toEqual([KAIJU]);
      expect(await t.page.textContent('#series-total')).toBe('1 series beginning with K.');
      expect(await t.page.getAttribute('#letter-K', 'aria-current')).toBe('true');
      await Promise.all([t.page.waitForURL(`${b.url}/series`), t.page.click('#letter-all')]);
      await Promise.all([t.page.waitForURL(/letter=%23/), t.page.click('#letter-other')]);
      expect(await seriesNames(t)).toEqual([HOSTILE_SERIES]);
      await t.page.goto(`${b.url}/series`);
      // search as you type: the results change in place (no new page), and the address follows
      await t.page.evaluate(() => {
        window.samePage = true;
      });
      await t.page.locator('#series-q').pressSequentially('long');
      await t.page.waitForFunction(() => [...document.querySelectorAll('#series-grid .book-title')].map((e: any) => e.textContent).join('|') === 'The Long Road');
      expect(await t.page.textContent('#series-total')).toBe('1 series matching “long”.');
      await t.page.waitForURL(/q=long/);
      expect(await t.page.evaluate(() => window.samePage)).toBe(true);
      await t.page.fill('#series-q', 'nothing like it');
      await t.page.waitForSelector('#series-results #no-results');
      expect(await t.page.textContent('#no-results')).toBe('No series match.');
      clean(t);
      await t.ctx.close();
      // the admin sees the secret library's series
      const a = await as(admin);
      await a.page.goto(`${b.url}/series`);
      expect(await seriesNames(a)).toEqual([HOSTILE_SERIES, KAIJU, 'Secret Saga', ROAD]);
      await a.ctx.close();
    });

    it('finds a manga by its series list and reads the next volume: index order, description, the missing number, read next into the reader', { timeout: 90_000 }, async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/series`);
      await Promise.all([t.page.waitForURL(`${b.url}/series/${encodeURIComponent(KAIJU)}`), t.page.click(`li[data-series="${KAIJU}"] .series-link`)]);
      expect(await t.page.textContent('h1')).toBe(KAIJU);
      expect(await titles(t)).toEqual([`${KAIJU} 1`, `${KAIJU} 2`, `${KAIJU} 3`, `${KAIJU} 5`]);
      expect(await t.page.locator('#grid progress').evaluateAll((ps: any[]) => ps.map((p) => p.getAttribute('value')))).toEqual(['100', '0', '0', '0']);
      expect(await t.page.textContent('#series-summary')).toBe('4 books, 1 finished. 3 unread All series');
      expect(await t.page.textContent('#series-unread')).toBe('3 unread');
      expect(await t.page.textContent('#series-description')).toBe('Monsters run a café. The coffee is strong.');
      expect(await t.page.textContent('#series-missing')).toBe('Missing number: 4.');
      expect(await t.page.textContent('#read-next')).toBe(`Read next: ${KAIJU} 2`);
      expect(await t.page.getAttribute('#read-next', 'href')).toBe(`/read/${ids[`${KAIJU} 2`]}`);
      await tabTo(t.page, '#read-next');
      await checkPage(t, `${mode}-series-manga`);
      await Promise.all([t.page.waitForURL(`${b.url}/read/${ids[`${KAIJU} 2`]}`), t.page.keyboard.press('Enter')]);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await t.page.textContent('#reader-title')).toBe(`${KAIJU} 2`);
      expect(await t.page.getAttribute('#pages img', 'alt')).toBe('Page 1 of 3');
      await t.page.waitForFunction(() => document.querySelector('#pages img')?.naturalWidth > 0);
      clean(t);
      await t.ctx.close();
    });

    it('a series for every book at once: marked read (the page follows live), unread, added to a collection; each with its message', { timeout: 90_000 }, async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/series/${encodeURIComponent(KAIJU)}`);
      await t.page.waitForSelector('main[data-live-state="open"]');
      await t.page.click('#mark-read');
      await t.page.waitForSelector('#bulk-outcome [role="status"]');
      expect(await t.page.textContent('#bulk-outcome')).toBe('3 books marked as read.');
      // the live channel brings the positions: every bar full, nothing left to read
      await t.page.waitForSelector('#series-done', { timeout: 10_000 });
      expect(await t.page.textContent('#series-done')).toBe('You have finished every book of this series.');
      await t.page.waitForFunction(() => [...document.querySelectorAll('#grid progress')].every((p: any) => p.getAttribute('value') === '100'));
      // the message stays while the page follows
      expect(await t.page.textContent('#bulk-outcome')).toBe('3 books marked as read.');
      await t.page.click('#mark-read');
      await t.page.waitForFunction(() => document.querySelector('#bulk-outcome')?.textContent === 'Every book was read already.');
      await t.page.click('#mark-unread');
      await t.page.waitForFunction(() => document.querySelector('#bulk-outcome')?.textContent === '4 books marked as unread.');
      await t.page.waitForFunction(() => document.querySelector('#read-next')?.textContent === 'Read next: Kaiju Café 1', undefined, { timeout: 10_000 });
      const s = await call('GET', `/api/series/${encodeURIComponent(KAIJU)}`, { token: alice.token });
      expect(s.json.data.map((x: { percentage: number | null }) => x.percentage)).toEqual([null, null, null, null]);
      // into a collection of her own, by keyboard; again: nothing new
      await t.page.selectOption('#series-collection', shelfId);
      await tabTo(t.page, '#series-collect-submit');
      await t.page.keyboard.press('Enter');
      await t.page.waitForFunction(() => document.querySelector('#bulk-outcome')?.textContent === '4 books added to the collection.');
      await t.page.click('#series-collect-submit');
      await t.page.waitForFunction(() => document.querySelector('#bulk-outcome')?.textContent === '0 books added to the collection; 4 were there already.');
      const members = await call('GET', `/api/collections/${shelfId}/items`, { token: alice.token });
      expect(members.json.data.map((m: { item: { title: string } }) => m.item.title).sort()).toEqual([`${KAIJU} 1`, `${KAIJU} 2`, `${KAIJU} 3`, `${KAIJU} 5`]);
      await checkPage(t, `${mode}-series-bulk`);
      await t.ctx.close();
      // as it was for the other tests
      expect((await put(call, alice.token, ids[`${KAIJU} 1`]!, { percentage: 1 })).status).toBe(200);
    });

    it('the author list: counts, letters, search as you type, each author to their page', async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/series`);
      await Promise.all([t.page.waitForURL(`${b.url}/authors`), t.page.click('#tab-authors')]);
      expect(await t.page.textContent('h1')).toBe('Authors');
      expect(await texts(t, '#authors-grid .author-link')).toEqual([HOSTILE_AUTHOR, 'Ann Walker', 'Filler Author', 'Mika Sato']);
      expect(await t.page.textContent('#authors-total')).toBe('4 authors.');
      expect(await t.page.textContent('li[data-author="Ann Walker"] .author-counts')).toBe('3 books, 1 series');
      expect(await t.page.textContent('li[data-author="Filler Author"] .author-counts')).toBe('30 books');
      await checkPage(t, `${mode}-authors`);
      await Promise.all([t.page.waitForURL(/letter=M/), t.page.click('#letter-M')]);
      expect(await texts(t, '#authors-grid .author-link')).toEqual(['Mika Sato']);
      await t.page.goto(`${b.url}/authors`);
      await t.page.locator('#authors-q').pressSequentially('walk');
      await t.page.waitForFunction(() => [...document.querySelectorAll('#authors-grid .author-link')].map((e: any) => e.textContent).join('|') === 'Ann Walker');
      await Promise.all([t.page.waitForURL(`${b.url}/authors/Ann%20Walker`), t.page.click('#authors-grid .author-link')]);
      expect(await t.page.textContent('h1')).toBe('Ann Walker');
      expect(await titles(t)).toEqual(['Road One', 'Road Three', 'Road Two']);
      clean(t);
      await t.ctx.close();
    });

    it('the library: a total and pages, a library filter and a page per library (its tabs too), the sort applied with a filter set', { timeout: 90_000 }, async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/library`);
      expect(await t.page.textContent('#library-total')).toBe('38 books.');
      expect((await titles(t)).length).toBe(24);
      expect(await t.page.textContent('#pager-status')).toBe('Page 1 of 2');
      await Promise.all([t.page.waitForURL(/offset=24/), t.page.click('#page-last')]);
      expect((await titles(t)).length).toBe(14);
      expect(await t.page.textContent('#pager-status')).toBe('Page 2 of 2');
      expect(await t.page.locator('#load-more a.button').count()).toBe(0);
      // the library filter: the page of one library, named, its tabs kept to it
      await t.page.goto(`${b.url}/library`);
      expect(await texts(t, '#f-library option')).toEqual(['All libraries', 'Bulk', 'Manga', 'Novels']);
      await t.page.selectOption('#f-library', lib.manga!);
      await Promise.all([t.page.waitForURL(new RegExp(`library=${lib.manga}`)), t.page.click('#apply')]);
      expect(await t.page.textContent('h1')).toBe('Manga');
      expect(await titles(t)).toEqual([`${KAIJU} 1`, `${KAIJU} 2`, `${KAIJU} 3`, `${KAIJU} 5`]);
      expect(await t.page.textContent('#library-total')).toBe('4 books.');
      expect(await t.page.locator('#pager').count()).toBe(0);
      await checkPage(t, `${mode}-library-one`);
      await Promise.all([t.page.waitForURL(`${b.url}/series?library=${lib.manga}`), t.page.click('#tab-series')]);
      expect(await t.page.textContent('h1')).toBe('Manga');
      expect(await seriesNames(t)).toEqual([KAIJU]);
      await t.page.goto(`${b.url}/authors?library=${lib.novels}`);
      expect(await texts(t, '#authors-grid .author-link')).toEqual([HOSTILE_AUTHOR, 'Ann Walker']);
      // a library's own address; one alice may not see is not there
      await t.page.goto(`${b.url}/libraries/${lib.novels}`);
      expect(t.page.url()).toBe(`${b.url}/library?library=${lib.novels}`);
      expect(await titles(t)).toEqual(['Hostile Book', 'Road One', 'Road Three', 'Road Two']);
      for (const path of [`/library?library=${lib.secret}`, `/series?library=${lib.secret}`, `/libraries/${lib.secret}`, '/library?library=00000000-0000-4000-8000-000000000000']) {
        const r = await t.page.goto(`${b.url}${path}`);
        expect(r?.status(), path).toBe(404);
        expect(await t.page.textContent('#failure')).toBe('There is no such library. Back to the library');
        expect(await t.page.content()).not.toContain('Secret Saga');
      }
      // the sort applies with a filter set: the CBZs by title, then the newest first (volume 5 came later)
      await t.page.goto(`${b.url}/library?format=cbz`);
      const byTitle = await titles(t);
      expect(byTitle).toEqual([`${KAIJU} 1`, `${KAIJU} 2`, `${KAIJU} 3`, `${KAIJU} 5`]);
      await t.page.selectOption('#f-sort', '-created_at');
      await Promise.all([t.page.waitForURL(/sort=-created_at/), t.page.click('#apply')]);
      const byAdded = await titles(t);
      expect(byAdded[0]).toBe(`${KAIJU} 5`);
      expect(byAdded).not.toEqual(byTitle);
      expect([...byAdded].sort()).toEqual(byTitle);
      expect(await t.page.inputValue('#f-sort')).toBe('-created_at');
      expect(await t.page.inputValue('#f-format')).toBe('cbz');
      // free text: the best matches first unless another order is chosen
      await t.page.goto(`${b.url}/library?q=road`);
      expect(await t.page.inputValue('#f-sort')).toBe('relevance');
      expect(await t.page.textContent('#library-total')).toBe('3 books, the best matches first.');
      await t.page.selectOption('#f-sort', 'title');
      await Promise.all([t.page.waitForURL(/sort=title/), t.page.click('#apply')]);
      expect(await titles(t)).toEqual(['Road One', 'Road Three', 'Road Two']);
      // an order the page does not offer is the default one
      await t.page.goto(`${b.url}/library?q=road&sort=-title`);
      expect(await t.page.inputValue('#f-sort')).toBe('relevance');
      expect(unexpectedErrors(t.errors, [404])).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();
    });

    it('phone width: the filters fold behind a button (by keyboard too) and books are on the first screen; home shows covers side by side', { timeout: 90_000 }, async () => {
      const t = await open(browser, 390);
      await t.ctx.addCookies([{ name: 'token', value: alice.token, url: b.url }]);
      await t.page.setViewportSize({ width: 390, height: 844 });
      await t.page.goto(`${b.url}/library`);
      expect(await t.page.evaluate(() => document.querySelector('#filter-box').open)).toBe(false);
      expect(await t.page.isVisible('#f-q')).toBe(false);
      expect(await t.page.textContent('#filter-toggle')).toBe('Search and filters');
      // the first row of books is whole on the first screen
      const first = await t.page.locator('#grid .book').first().boundingBox();
      expect(first!.y + first!.height).toBeLessThanOrEqual(844);
      const firstRow = await t.page.locator('#grid .book').evaluateAll((els: any[]) => els.slice(0, 3).map((e) => e.getBoundingClientRect().top));
      expect(new Set(firstRow).size).toBe(1);
      await tabTo(t.page, '#filter-toggle');
      await t.page.keyboard.press('Enter');
      expect(await t.page.isVisible('#f-q')).toBe(true);
      await t.page.fill('#f-q', 'road');
      await Promise.all([t.page.waitForURL(/q=road/), t.page.press('#f-q', 'Enter')]);
      // a filter set says so while folded
      expect(await t.page.textContent('#filter-toggle')).toBe('Search and filters (1 set)');
      expect(await t.page.isVisible('#f-q')).toBe(false);
      expect((await titles(t)).sort()).toEqual(['Road One', 'Road Three', 'Road Two']);
      await checkPage(t, `${mode}-library-phone`);
      // at home, two or more covers a row
      await t.page.setViewportSize({ width: 390, height: 844 });
      await t.page.goto(`${b.url}/dashboard`);
      const tops = await t.page
        .locator('section[data-section="recently-added"] .book')
        .evaluateAll((els: any[]) => els.slice(0, 3).map((e) => ({ top: Math.round(e.getBoundingClientRect().top), left: Math.round(e.getBoundingClientRect().left) })));
      expect(tops.length).toBe(3);
      expect(tops[1]!.top).toBe(tops[0]!.top);
      expect(tops[1]!.left).toBeGreaterThan(tops[0]!.left);
      await checkPage(t, `${mode}-dashboard-phone`);
      // the series list on a phone: its search in sight, its other filters folded
      await t.page.setViewportSize({ width: 390, height: 844 });
      await t.page.goto(`${b.url}/series`);
      expect(await t.page.isVisible('#series-q')).toBe(true);
      expect(await t.page.isVisible('#f-sort')).toBe(false);
      expect((await t.page.locator('#series-grid .book').first().boundingBox())!.y).toBeLessThan(844);
      await checkPage(t, `${mode}-series-phone`);
      // a wide screen has them open
      await t.page.goto(`${b.url}/library`);
      expect(await t.page.evaluate(() => document.querySelector('#filter-box').open)).toBe(true);
      expect(await t.page.isVisible('#f-q')).toBe(true);
      await t.ctx.close();
    });

    it("smart collections: rules edited on the collection's page with the rule builder; every action says what came of it", { timeout: 90_000 }, async () => {
      const made = await call('POST', '/api/collections', {
        token: alice.token,
        body: { name: 'Kaiju smart', rules: { match: 'all', conditions: [{ field: 'series', op: 'contains', value: 'kaiju' }] } },
      });
      expect(made.status, made.text).toBe(201);
      const id = made.json.id as string;
      const t = await as(alice);
      await t.page.goto(`${b.url}/collections/${id}`);
      expect(await titles(t)).toEqual([`${KAIJU} 1`, `${KAIJU} 2`, `${KAIJU} 3`, `${KAIJU} 5`]);
      expect(await t.page.textContent('#collection-kind')).toBe('A smart collection: its books are the ones its rules match. 4 books. All collections');
      // its books follow the rules: no "Remove" that could only fail
      expect(await t.page.locator('#grid button').count()).toBe(0);
      // the builder holds the saved rules, and previews them
      expect(await t.page.inputValue('#smart-name')).toBe('Kaiju smart');
      expect(await t.page.locator('#rule-rows .rule-row').count()).toBe(1);
      expect(await t.page.getAttribute('#rule-rows .rule-row', 'data-field')).toBe('series');
      expect(await t.page.inputValue('#rule-rows .rule-row input[name^="value-"]')).toBe('kaiju');
      await t.page.waitForFunction(() => document.getElementById('preview-count')?.textContent === '4 books match.');
      await tabTo(t.page, '#save-rules');
      await checkPage(t, `${mode}-smart-edit`);
      await t.page.waitForSelector('#rule-rows .rule-row:not(.htmx-added)');
      await t.page.fill('#rule-rows .rule-row input[name^="value-"]', 'long road');
      await t.page.waitForFunction(() => document.getElementById('preview-count')?.textContent === '3 books match.');
      await t.page.fill('#smart-name', 'Road smart');
      await Promise.all([t.page.waitForURL(`${b.url}/collections/${id}?done=rules`), t.page.click('#save-rules')]);
      expect(await t.page.textContent('#collection-notice')).toBe('Rules saved.');
      expect(await t.page.textContent('h1')).toBe('Road smart');
      expect(await titles(t)).toEqual(['Road One', 'Road Three', 'Road Two']);
      const saved = await call('GET', `/api/collections/${id}`, { token: alice.token });
      expect(saved.json.rules).toEqual({ match: 'all', conditions: [{ field: 'series', op: 'contains', value: 'long road' }] });
      // no condition left: said, and nothing saved
      await t.page.click('#rule-rows .rule-row button');
      await t.page.waitForFunction(() => document.querySelectorAll('#rule-rows .rule-row').length === 0);
      await t.page.click('#save-rules');
      await t.page.waitForSelector('#smart-outcome [role="alert"]');
      expect(await t.page.textContent('#smart-outcome')).toBe('Add at least one condition with a value.');
      // a name another collection has: the API's message
      await t.page.click('#add-rule');
      await t.page.waitForSelector('#rule-rows .rule-row:not(.htmx-added)');
      await t.page.fill('#rule-rows .rule-row input[name^="value-"]', 'road');
      await t.page.fill('#smart-name', 'Manga shelf');
      await t.page.click('#save-rules');
      await t.page.waitForFunction(() => document.querySelector('#smart-outcome [role="alert"]')?.textContent !== 'Add at least one condition with a value.');
      expect(await t.page.textContent('#smart-outcome')).toBe('collection name already exists');
      expect((await call('GET', `/api/collections/${id}`, { token: alice.token })).json.name).toBe('Road smart');
      clean(t);
      await t.ctx.close();
    });

    it('every list waits for the reading projection: a position saved elsewhere shows in the series list', async () => {
      expect((await put(call, alice.token, ids['Road One']!, { percentage: 1 })).status).toBe(200);
      const t = await as(alice);
      await eventually(async () => {
        await t.page.goto(`${b.url}/series`);
        expect(await t.page.textContent(`li[data-series="${ROAD}"] .unread-badge`)).toBe('2 unread');
      });
      expect(await t.page.textContent(`li[data-series="${ROAD}"] .series-count`)).toBe('3 books, 1 read');
      clean(t);
      await t.ctx.close();
    });

    it('a long series is paged: 60 books a page, the pager by keyboard, and "Read next" names a book on another page', { timeout: 120_000 }, async () => {
      // the secret library's series grows to 65 books (the admin's alone); the first 61 are finished
      const saga = [ids['Secret Saga One'] ?? ''];
      const made: Record<string, any>[] = [];
      for (let n = 2; n <= 65; n++)
        made.push(await makeItem(call, admin, lib.secret!, { title: `Secret Saga ${n}`, authors: ['Secret Author'], series: 'Secret Saga', series_index: n }));
      const first = await call('GET', `/api/series/${encodeURIComponent('Secret Saga')}?limit=1`, { token: admin.token });
      saga[0] = first.json.data[0].media_item_id;
      saga.push(...made.map((m) => m.id as string));
      for (let i = 0; i < 61; i += 16)
        for (const r of await Promise.all(saga.slice(i, Math.min(i + 16, 61)).map((id) => put(call, admin.token, id, { percentage: 1 })))) expect(r.status, r.text).toBe(200);
      const t = await as(admin);
      await eventually(async () => {
        await t.page.goto(`${b.url}/series/${encodeURIComponent('Secret Saga')}`);
        expect(await t.page.textContent('#series-summary')).toContain('65 books, 61 finished.');
      });
      expect(await t.page.textContent('#series-shown')).toBe('Books 1 to 60 of 65.');
      expect(await titles(t)).toHaveLength(60);
      expect((await titles(t))[1]).toBe('Secret Saga 2');
      expect(await t.page.textContent('#read-next')).toBe('Read next: Secret Saga 62');
      expect(await t.page.textContent('#pager-status')).toBe('Page 1 of 2');
      await tabTo(t.page, '#page-next', 500);
      await Promise.all([t.page.waitForURL(`${b.url}/series/${encodeURIComponent('Secret Saga')}?offset=60`), t.page.keyboard.press('Enter')]);
      expect(await t.page.textContent('#series-shown')).toBe('Books 61 to 65 of 65.');
      expect(await titles(t)).toEqual(['Secret Saga 61', 'Secret Saga 62', 'Secret Saga 63', 'Secret Saga 64', 'Secret Saga 65']);
      expect(await t.page.textContent('#read-next')).toBe('Read next: Secret Saga 62');
      await checkPage(t, `${mode}-series-pages`);
      clean(t);
      await t.ctx.close();
    });
  });
}
