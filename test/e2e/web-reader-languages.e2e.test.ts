// The web reader in the reader's language (issue 48): the page and its script speak the language the
// request negotiated (Accept-Language here, the profile's when chosen), the script's words coming
// from the page's JSON data block under the reader's own CSP (no inline script runs); English stays
// word for word as before (the other reader files hold it). The API's errors keep their English
// `error` and carry `message_localized` in the negotiated language; the pages show that.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, HAS_CHROMIUM, launch, open, openAs, PAGE_MODES } from './web-browser';

declare const document: any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the reader's languages (${CHROMIUM} is absent)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';
const CBZ = 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz';

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`the reader's languages (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let reader: Account;
    let epub: Record<string, any>;
    let cbz: Record<string, any>;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      const admin = await register(call);
      reader = await register(call);
      const dir = emptyDir();
      for (const [src, dst] of [
        [EPUB, 'crown/The Hidden Crown.epub'],
        [CBZ, 'comics/wolken.cbz'],
      ] as const) {
        mkdirSync(join(dir, dst, '..'), { recursive: true });
        copyFileSync(join(FIXTURE, src), join(dir, dst));
      }
      const lib = await createLibrary(call, admin.token, { name: `Languages ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      epub = list.find((i) => i.formats[0]?.format === 'epub')!;
      cbz = list.find((i) => i.formats[0]?.format === 'cbz')!;
    }, 240_000);

    const inLanguage = async (who: Account, language: string, width = 1280) => {
      const t = await openAs(browser, b.url, who.token, width);
      await t.ctx.setExtraHTTPHeaders({ 'Accept-Language': language });
      return t;
    };

    it('German: the page, its panels and the script’s own words (position, search, notes)', async () => {
      const t = await inLanguage(reader, 'de-DE,de;q=0.9,en;q=0.5');
      const res = await t.page.goto(`${b.url}/read/${epub.id}`);
      expect(res!.headers()['content-language']).toBe('de');
      await t.page.waitForSelector('#reader[data-ready="true"][data-cfi]', { timeout: 30_000 });
      expect(await t.page.getAttribute('html', 'lang')).toBe('de');
      expect(await t.page.title()).toBe('The Hidden Crown · Lesen · Bindery');
      expect(await t.page.textContent('#toc summary')).toBe('Inhalt');
      expect(await t.page.textContent('#settings summary')).toBe('Text');
      expect(await t.page.getAttribute('#next', 'aria-label')).toBe('Nächste Seite');
      expect(await t.page.locator('#font-family option[value="publisher"]').textContent()).toBe('Wie im Buch');
      // the messages are data, not script: only the reader's area, parsed by the script
      const block = JSON.parse((await t.page.textContent('#reader-messages'))!);
      expect(block['reader.search.searching']).toBe('Suche läuft…');
      expect(Object.keys(block).every((k) => k.startsWith('reader.') || k.startsWith('error.'))).toBe(true);
      // the script's words: the position (a German per cent), the size, search and the notes' count
      expect(await t.page.textContent('#reader-position')).toMatch(/^(.+ · )?\d+(,\d)? %$/);
      await t.page.click('#settings summary');
      await t.page.click('#font-larger');
      expect(await t.page.textContent('#font-size')).toBe('110 %');
      await t.page.click('#search-menu summary');
      await t.page.fill('#search-q', 'qqqzzz');
      await t.page.keyboard.press('Enter');
      await t.page.waitForFunction(() => document.querySelector('#search-status').textContent.startsWith('Nichts'));
      expect(await t.page.textContent('#search-status')).toBe('Nichts gefunden für „qqqzzz“.');
      await t.page.fill('#search-q', 'torrenren');
      await t.page.keyboard.press('Enter');
      await t.page.waitForFunction(() => /Treffer/.test(document.querySelector('#search-status').textContent));
      expect(await t.page.textContent('#search-status')).toBe('1 Treffer für „torrenren“.');
      await t.page.waitForSelector('#reader[data-annotations-loaded="true"]');
      expect(await t.page.textContent('#notes-status')).toBe('Noch keine Markierungen oder Notizen: Wählen Sie Text im Buch aus, um eine anzulegen.');
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }, 120_000);

    it('Japanese: the picture viewer’s pages; the profile’s language wins over the browser’s', async () => {
      const t = await inLanguage(reader, 'ja');
      await t.page.goto(`${b.url}/read/${cbz.id}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await t.page.getAttribute('html', 'lang')).toBe('ja');
      expect(await t.page.textContent('#reader-position')).toBe(`1 / ${cbz.page_count} ページ`);
      expect(await t.page.getAttribute('#pages img', 'alt')).toBe(`1 / ${cbz.page_count} ページ`);
      expect(await t.page.textContent('label[for="page-slider"]')).toBe('ページ');
      expect(t.errors).toEqual([]);
      await t.ctx.close();
      // the profile says French: French, whatever the browser asks
      const fr = await register(call);
      const p = await call('PUT', '/api/auth/profile', { token: fr.token, body: { language: 'fr' } });
      expect(p.status, p.text).toBe(200);
      const f = await inLanguage(fr, 'ja');
      await f.page.goto(`${b.url}/read/${cbz.id}`);
      await f.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      expect(await f.page.getAttribute('html', 'lang')).toBe('fr');
      expect(await f.page.textContent('#reader-position')).toBe(`Page 1 sur ${cbz.page_count}`);
      expect(f.errors).toEqual([]);
      await f.ctx.close();
    }, 120_000);

    it('the API’s errors: `error` as the interface words it, `message_localized` beside it in the negotiated language; the sign-in page shows the translation', async () => {
      const wrong = { login: reader.username, password: 'not-the-password' };
      // English (no language, or one Bindery lacks): exactly the interface's body, no extra field
      for (const headers of [{}, { 'accept-language': 'pt-BR' }] as Record<string, string>[]) {
        const en = await call('POST', '/api/auth/login', { body: wrong, headers });
        expect(en.status).toBe(401);
        expect(en.json).toEqual({ error: 'invalid credentials' });
      }
      const de = await call('POST', '/api/auth/login', { body: wrong, headers: { 'accept-language': 'de-DE,de;q=0.9' } });
      expect(de.status).toBe(401);
      expect(de.json).toEqual({ error: 'invalid credentials', message_localized: 'Anmeldedaten ungültig' });
      // a message the map does not know: the API's words alone
      const odd = await call('GET', '/api/collections/not-a-uuid', { token: reader.token, headers: { 'accept-language': 'de' } });
      expect(odd.status).toBeGreaterThanOrEqual(400);
      expect(typeof odd.json.error).toBe('string');
      // (a message the map leaves out: the id checks' words are not among the errors area's)
      expect(odd.json.error).toMatch(/^invalid /);
      expect(Object.keys(odd.json)).toEqual(['error']);
      // the profile's language for a signed-in caller: Japanese, whatever the browser asks
      const ja = await register(call);
      expect((await call('PUT', '/api/auth/profile', { token: ja.token, body: { language: 'ja' } })).status).toBe(200);
      let pw: Awaited<ReturnType<Call>> | undefined;
      for (let i = 0; i < 30; i++) {
        await call('GET', '/api/auth/profile', { token: ja.token });
        pw = await call('PUT', '/api/auth/password', {
          token: ja.token,
          body: { current_password: 'wrong-password-1', new_password: 'N3w-password!', confirm_password: 'N3w-password!' },
          headers: { 'accept-language': 'en' },
        });
        if (pw.json.message_localized) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(pw!.status).toBe(401);
      expect(pw!.json).toEqual({ error: 'current password is incorrect', message_localized: '現在のパスワードが正しくありません' });
      // the sign-in page in German: the failure in German (app.js shows message_localized)
      const t = await open(browser);
      await t.ctx.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
      await t.page.goto(`${b.url}/login`);
      expect(await t.page.getAttribute('html', 'lang')).toBe('de');
      await t.page.fill('#login-name', reader.username);
      await t.page.fill('#password', 'not-the-password');
      await t.page.click('#submit');
      await t.page.waitForFunction(() => (document.querySelector('#error')?.textContent ?? '').trim() !== '');
      expect((await t.page.textContent('#error'))!.trim()).toBe('Anmeldedaten ungültig');
      await t.ctx.close();
    }, 120_000);
  });
}
