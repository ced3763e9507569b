// The web reader (/read/<id>) in headless Chromium, in both modes: an EPUB from the corpus opens
// (foliate-js), pages turn with the keyboard and the table of contents, the position is saved with
// one PUT and comes back through KOReader's stock sync pull as an XPointer of the same place; a
// stock-sync push moves the reader on reload; a CBZ reads page by page over the page stream and its
// page is saved; the reader's own CSP; axe, console errors, keyboard, screenshots at 360/1280 px.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { makeItem } from './reading-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, openAs, progressWrites, tabTo, PAGE_MODES } from './web-browser';

declare const document: any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the web reader (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';
/** the reader's policy: its own script by this response's nonce, no script of the site by address */
const READER_CSP = (nonce: string) =>
  `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'self' blob: 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data: blob:; media-src 'self' blob:; frame-src blob:; connect-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'`;
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
/** the spine position of a CFI (`/6/<2(i+1)>`) as crengine's DocFragment number (1-based) */
const docFragmentOf = (cfi: string) => Number(/^epubcfi\(\/6\/(\d+)/.exec(cfi)![1]) / 2;

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`web reader (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let reader: Account;
    let epub: Record<string, any>;
    let cbz: Record<string, any>;
    let libraryId: string;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      reader = await register(call);
      const dir = emptyDir();
      for (const [src, dst] of [
        [EPUB, 'crown/The Hidden Crown.epub'],
        [CBZ, 'comics/wolken.cbz'],
      ] as const) {
        mkdirSync(join(dir, dst, '..'), { recursive: true });
        copyFileSync(join(FIXTURE, src), join(dir, dst));
      }
      const lib = await createLibrary(call, admin.token, { name: `Reader ${mode}`, folders: [dir], watch: false });
      libraryId = lib.id;
      await scan(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      epub = list.find((i) => i.formats[0]?.format === 'epub')!;
      cbz = list.find((i) => i.formats[0]?.format === 'cbz')!;
      expect(epub.title).toBe('The Hidden Crown');
      expect(cbz.page_count).toBeGreaterThan(3);
    }, 240_000);

    /** A browser signed in as `who`, recording the reader's position writes. */
    const as = async (who: Account, width = 1280) => {
      const t = await openAs(browser, b.url, who.token, width);
      return { ...t, writes: progressWrites(t.page) };
    };
    /** the reader has opened the book (and, for a reflowable one, knows where its page starts) */
    const ready = async (t: Awaited<ReturnType<typeof as>>, reflowable = true) => {
      await t.page.waitForSelector(reflowable ? '#reader[data-ready="true"][data-cfi]' : '#reader[data-ready="true"]', { timeout: 30_000 });
    };
    const data = (t: Awaited<ReturnType<typeof as>>, k: string) => t.page.getAttribute('#reader', `data-${k}`);
    const kosync = (who: Account) => {
      const headers = { 'x-auth-user': who.username, 'x-auth-key': md5(who.password), accept: 'application/vnd.koreader.v1+json' };
      return {
        pull: () => call('GET', `/api/kosync/syncs/progress/${epub.formats[0].partial_md5}`, { headers }),
        push: (progress: string, percentage: number) =>
          call('PUT', '/api/kosync/syncs/progress', {
            headers,
            body: { document: epub.formats[0].partial_md5, progress, percentage, device: 'Kobo_frost', device_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' },
          }),
      };
    };

    it('the book page links to the reader; an item the user cannot see is 404; the reader page has its own CSP', async () => {
      const t = await as(reader);
      await t.page.goto(`${b.url}/books/${epub.id}`);
      expect(await t.page.getAttribute('#read', 'href')).toBe(`/read/${epub.id}`);
      const res = await t.page.request.get(`${b.url}/read/${epub.id}`);
      expect(res.status()).toBe(200);
      const html = await res.text();
      // the reader's bundle is one hashed asset, cached for a year, and only on this page; it runs by a nonce of this answer's
      const [, src, nonce] = /<script type="module" src="(\/assets\/reader\.[\w-]{12}\.js)" nonce="([\w+/=]{24})">/.exec(html) ?? [];
      expect(src).toBeDefined();
      expect(res.headers()['content-security-policy']).toBe(READER_CSP(nonce!));
      const again = await t.page.request.get(`${b.url}/read/${epub.id}`);
      expect(again.headers()['content-security-policy']).not.toBe(READER_CSP(nonce!));
      const js = await t.page.request.get(`${b.url}${src}`);
      expect(js.status()).toBe(200);
      expect(js.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(js.headers()['content-type']).toBe('text/javascript; charset=utf-8');
      expect(await (await t.page.request.get(`${b.url}/books/${epub.id}`)).text()).not.toContain('/assets/reader.');
      // someone without access to the library: not found, as on the book page
      const outsider = await register(call);
      const g = await call('PUT', `/api/auth/users/${outsider.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [] } });
      expect(g.status, g.text).toBe(200);
      const o = await as(outsider);
      expect((await o.page.goto(`${b.url}/read/${epub.id}`))!.status()).toBe(404);
      expect((await o.page.goto(`${b.url}/read/00000000-0000-4000-8000-000000000000`))!.status()).toBe(404);
      await o.ctx.close();
      // a hostile title is text; a record without a file says so
      const hostile = await makeItem(call, admin, libraryId, { title: '<script>alert(1)</script>', authors: ['x'] });
      const h = await as(reader);
      expect((await h.page.goto(`${b.url}/read/${hostile.id}`))!.status()).toBe(200);
      expect(await h.page.textContent('#reader-title')).toBe('<script>alert(1)</script>');
      expect(await h.page.textContent('#reader-error')).toBe('This book has no file the web reader can open (EPUB, MOBI, AZW3, FB2, CBZ, CBR or PDF).');
      expect(await h.page.locator('script[type="module"]').count()).toBe(0);
      expect(await h.page.title()).toBe('<script>alert(1)</script> · Reading · Bindery');
      expect(h.dialogs).toEqual([]);
      expect(h.errors).toEqual([]);
      await h.ctx.close();
      // signed out: to sign-in and back
      const anon = await open(browser);
      await anon.page.goto(`${b.url}/read/${epub.id}`);
      expect(anon.page.url()).toBe(`${b.url}/login?redirect=${encodeURIComponent(`/read/${epub.id}`)}`);
      await anon.ctx.close();
      await t.ctx.close();
    });

    it('EPUB: opens at the start, turns pages, saves one position that the stock kosync pull gives back as an XPointer of the same place', async () => {
      const t = await as(reader);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      expect(await t.page.textContent('#reader-title')).toBe('The Hidden Crown');
      // at the text's start (the body matter, past the front matter)
      const start = Number(await data(t, 'fraction'));
      expect(start).toBeLessThan(0.2);
      // the table of contents: its third entry, then pages with the keyboard
      await t.page.click('#toc summary');
      const entries = t.page.locator('#toc-list a');
      expect(await entries.count()).toBe(3);
      await entries.nth(1).click();
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f + 0.05, start, { timeout: 10_000 });
      const atChapter = Number(await data(t, 'fraction'));
      await t.page.locator('#reader-title').click();
      for (let i = 0; i < 4; i++) {
        await t.page.keyboard.press(i % 2 ? 'PageDown' : 'ArrowRight');
        await t.page.waitForTimeout(150);
      }
      await t.page.waitForFunction((f) => Number(document.querySelector('#reader').dataset.fraction) > f, atChapter, { timeout: 10_000 });
      // one write, a few seconds after the last move
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      await t.page.waitForTimeout(2500);
      expect(t.writes).toHaveLength(1);
      const w = t.writes[0] as { percentage: number; epubcfi: string };
      expect(Object.keys(w).sort()).toEqual(['active_seconds', 'client', 'device', 'epubcfi', 'percentage']);
      expect(w).toMatchObject({ client: 'web', device: 'web' });
      expect(w.epubcfi).toBe(await data(t, 'cfi'));
      expect(w.epubcfi).toMatch(/^epubcfi\(\/6\/\d+(\[[^\]]*\])?!\/4/);
      expect(w.percentage).toBeCloseTo(Number(await data(t, 'fraction')), 4);
      expect(w.percentage).toBeGreaterThan(atChapter);

      const saved = await call('GET', `/api/media-items/${epub.id}/progress`, { token: reader.token });
      expect(saved.status, saved.text).toBe(200);
      expect(saved.json.percentage).toBe(w.percentage);
      expect(saved.json.client).toBe('web');
      expect(docFragmentOf(saved.json.epubcfi)).toBe(docFragmentOf(w.epubcfi));

      // KOReader's stock pull: the XPointer of the web's CFI, in the same spine item, at the same percentage (within 1 %)
      const pull = await kosync(reader).pull();
      expect(pull.status, pull.text).toBe(200);
      expect(pull.json.progress).toBe(saved.json.xpointer);
      expect(pull.json.progress).toMatch(new RegExp(`^/body/DocFragment\\[${docFragmentOf(w.epubcfi)}\\]/body/`));
      expect(Math.abs(pull.json.percentage - w.percentage)).toBeLessThanOrEqual(0.01);
      // the same place: that XPointer, pushed by another reader, is stored as the web's CFI
      const other = await register(call);
      const pushed = await kosync(other).push(pull.json.progress, pull.json.percentage);
      expect(pushed.status, pushed.text).toBe(200);
      const back = await call('GET', `/api/media-items/${epub.id}/progress`, { token: other.token });
      expect(back.json.xpointer).toBe(saved.json.xpointer);
      expect(back.json.spine_index).toBe(saved.json.spine_index);
      expect(Math.abs(back.json.doc_offset - saved.json.doc_offset)).toBeLessThanOrEqual(1);

      await tabTo(t.page, '#next');
      await checkPage(t, `${mode}-reader-epub`);
      await t.ctx.close();
    });

    it('EPUB: a position pushed by KOReader opens the reader there on reload; the next web write follows it', async () => {
      // a place further on, as KOReader names it: another reader's position at 70 %
      const scout = await register(call);
      expect((await call('PUT', `/api/media-items/${epub.id}/progress`, { token: scout.token, body: { percentage: 0.7 } })).status).toBe(200);
      const far = await kosync(scout).pull();
      expect(far.json.progress).toMatch(/^\/body\/DocFragment\[\d+\]\//);
      // someone who has not read it yet: the reader opens at the text's start and saves nothing
      const kobo = await register(call);
      const t = await as(kobo, 360);
      await t.page.goto(`${b.url}/read/${epub.id}`);
      await ready(t);
      expect(Number(await data(t, 'fraction'))).toBeLessThan(0.2);
      // their KOReader pushes a place further on; the reader, reloaded, opens there
      const pushed = await kosync(kobo).push(far.json.progress, 0.7);
      expect(pushed.status, pushed.text).toBe(200);
      expect((await call('GET', `/api/media-items/${epub.id}/progress`, { token: kobo.token })).json).toMatchObject({ xpointer: far.json.progress, client: 'koreader' });
      await t.page.reload();
      await ready(t);
      const cfi = (await data(t, 'cfi'))!;
      expect(docFragmentOf(cfi)).toBe(Number(/DocFragment\[(\d+)\]/.exec(far.json.progress)![1]));
      // the page shown holds that place (a page of this short book is a tenth of it)
      expect(Number(await data(t, 'fraction'))).toBeLessThanOrEqual(0.7);
      expect(Number(await data(t, 'fraction-end'))).toBeGreaterThanOrEqual(0.7);
      // opening saves nothing; a page turn and leaving at once saves once (pagehide, keepalive)
      expect(t.writes).toHaveLength(0);
      await t.page.locator('#next').click();
      await t.page.waitForFunction((c) => document.querySelector('#reader').dataset.cfi !== c, cfi);
      // the page was given KOReader's position: the web's first write, a page on from it, follows it
      // (no conflict; docs/decisions.md, "Devices follow the position they were given")
      const answer = t.page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith('/progress'));
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      const body = await (await answer).json();
      const moved = (await data(t, 'cfi'))!;
      expect(t.writes).toEqual([
        { percentage: Math.round(Number(await data(t, 'fraction')) * 10000) / 10000, epubcfi: moved, client: 'web', device: 'web', active_seconds: expect.any(Number) },
      ]);
      expect(body.status).toBe('saved');
      expect(body.progress).toMatchObject({ client: 'web', device: 'web', version: 2 });
      expect(docFragmentOf(body.progress.epubcfi)).toBe(docFragmentOf(moved));
      expect((await call('GET', '/api/progress-conflicts', { token: kobo.token })).json).toEqual({ data: [] });
      await t.ctx.close();
    });

    it('CBZ: reads page by page over the page stream, right to left too, and saves the page', async () => {
      const count = cbz.page_count as number;
      const t = await as(reader);
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await ready(t, false);
      const img = t.page.locator('#pages img');
      expect(await img.getAttribute('alt')).toBe(`Page 1 of ${count}`);
      expect(await img.getAttribute('src')).toMatch(new RegExp(`^/opds/pages/${cbz.id}/0\\?width=\\d+$`));
      await t.page.waitForFunction(() => document.querySelector('#pages img').naturalWidth > 0);
      await t.page.locator('#reader-title').click();
      await t.page.keyboard.press('ArrowRight');
      await t.page.keyboard.press('Space');
      expect(await img.getAttribute('alt')).toBe(`Page 3 of ${count}`);
      expect(await t.page.textContent('#reader-position')).toBe(`Page 3 of ${count}`);
      await t.page.waitForSelector('#reader[data-saved="1"]', { timeout: 10_000 });
      expect(t.writes).toEqual([
        { page: 3, page_count: count, percentage: Math.round((2 / (count - 1)) * 10000) / 10000, client: 'web', device: 'web', active_seconds: expect.any(Number) },
      ]);
      const p = await call('GET', `/api/media-items/${cbz.id}/progress`, { token: reader.token });
      expect(p.json).toMatchObject({ page: 3, page_count: count });
      // right to left: the left arrow goes on; with the keyboard only
      await tabTo(t.page, '#rtl');
      await t.page.keyboard.press('Space');
      expect(await t.page.isChecked('#rtl')).toBe(true);
      await t.page.locator('#reader-title').click();
      await t.page.keyboard.press('ArrowLeft');
      expect(await img.getAttribute('alt')).toBe(`Page 4 of ${count}`);
      // two pages side by side (the cover and the last page alone): right to left, the right arrow goes back two
      await t.page.check('#spread');
      expect(await t.page.locator('#pages img').evaluateAll((els) => els.map((e) => e.alt))).toEqual([`Page 4 of ${count}`]);
      await t.page.locator('#reader-title').click();
      await t.page.keyboard.press('ArrowRight');
      expect(await t.page.locator('#pages img').evaluateAll((els) => els.map((e) => e.alt))).toEqual([`Page 2 of ${count}`, `Page 3 of ${count}`]);
      expect(await t.page.textContent('#reader-position')).toBe(`Pages 2–3 of ${count}`);
      expect(await t.page.getAttribute('#pages', 'class')).toBe('pages rtl');
      await t.page.waitForSelector('#reader[data-saved="2"]', { timeout: 10_000 });
      expect(t.writes.at(-1)).toEqual({
        page: 2,
        page_count: count,
        percentage: Math.round((1 / (count - 1)) * 10000) / 10000,
        client: 'web',
        device: 'web',
        active_seconds: expect.any(Number),
      });
      await tabTo(t.page, '#next');
      await checkPage(t, `${mode}-reader-cbz`);
      // reopened: at the saved page, still as a spread
      await t.page.reload();
      await ready(t, false);
      expect(await t.page.locator('#pages img').evaluateAll((els) => els.map((e) => e.alt))).toEqual([`Page 2 of ${count}`, `Page 3 of ${count}`]);
      await t.ctx.close();
    });
  });
}
