// The pages in the reader's language (issue 48), in headless Chromium: a French browser
// (Accept-Language) gets the sign-in page in French; the sign-in page's picker switches it to German
// (a cookie); a Japanese reader who chose Japanese in their profile sees their pages in Japanese
// whatever their browser says, and going back to the browser's language follows Accept-Language
// again. Every page axe clean. The API refuses a language it does not ship, and hostile text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLibrary, emptyDir, FIXTURE, items, scan } from './catalog-helpers';
import { type Account, api, expectError, instances, register, type Call } from './helpers';
import { axeProblems, CHROMIUM, HAS_CHROMIUM, launch, open, openAs, PAGE_MODES } from './web-browser';

declare const document: { documentElement: { lang: string } };

const get = instances(PAGE_MODES);
if (!HAS_CHROMIUM) describe.skip(`pages in the reader's language (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`pages in the reader's language (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      // an administrator exists: /login is the sign-in page, not the first run
      admin = await register(call);
    }, 240_000);

    it("shows the sign-in page in the browser's language, and the picker switches it (a cookie)", async () => {
      const t = await open(browser);
      await t.ctx.setExtraHTTPHeaders({ 'accept-language': 'fr-CH, fr;q=0.9, en;q=0.5' });
      try {
        const r = await t.page.goto(`${b.url}/login`);
        expect(r?.headers()['content-language']).toBe('fr');
        expect(await t.page.getAttribute('html', 'lang')).toBe('fr');
        expect(await t.page.getAttribute('html', 'dir')).toBe('ltr');
        expect(await t.page.textContent('h1')).toBe('Se connecter à Bindery');
        expect(await t.page.textContent('label[for=password]')).toBe('Mot de passe');
        expect(await t.page.title()).toBe('Connexion · Bindery');
        expect(await axeProblems(t.page)).toEqual([]);

        await t.page.selectOption('#language', 'de');
        await Promise.all([t.page.waitForURL(/\/login/), t.page.click('#choose-language')]);
        await t.page.waitForFunction(() => document.documentElement.lang === 'de');
        expect(await t.page.textContent('h1')).toBe('Bei Bindery anmelden');
        expect(await t.page.inputValue('#language')).toBe('de');
        expect(await axeProblems(t.page)).toEqual([]);
        expect(t.errors).toEqual([]);
      } finally {
        await t.ctx.close();
      }
    });

    it("shows a reader's pages in the language of their profile, whatever the browser says", async () => {
      const reader = await register(call, { role: 'user' });
      const t = await openAs(browser, b.url, reader.token);
      await t.ctx.setExtraHTTPHeaders({ 'accept-language': 'en-US,en;q=0.9' });
      try {
        await t.page.goto(`${b.url}/profile`);
        expect(await t.page.getAttribute('html', 'lang')).toBe('en');
        expect(await t.page.textContent('h1')).toBe('Your profile');
        await t.page.selectOption('#language', 'ja');
        await Promise.all([t.page.waitForEvent('load'), t.page.click('#save-language')]);
        await t.page.waitForFunction(() => document.documentElement.lang === 'ja');
        expect(await t.page.textContent('h1')).toBe('あなたのプロフィール');
        expect(await t.page.textContent('nav[aria-label="メイン"] a[href="/library"]')).toBe('ライブラリ');
        expect(await t.page.textContent('#sign-out')).toBe('ログアウト');
        expect(await t.page.inputValue('#language')).toBe('ja');
        expect(await axeProblems(t.page)).toEqual([]);
        // the profile says it, so every client can follow it
        const profile = await call('GET', '/api/auth/profile', { token: reader.token });
        expect(profile.json.language).toBe('ja');

        // back to the browser's: the profile no longer names one, and Accept-Language decides
        await t.page.selectOption('#language', 'auto');
        await Promise.all([t.page.waitForEvent('load'), t.page.click('#save-language')]);
        await t.page.waitForFunction(() => document.documentElement.lang === 'en');
        expect(await t.page.textContent('h1')).toBe('Your profile');
        expect((await call('GET', '/api/auth/profile', { token: reader.token })).json.language).toBeUndefined();
        expect(t.errors).toEqual([]);
      } finally {
        await t.ctx.close();
      }
    });

    it("shows a German reader's dashboard, book page and statistics in German, a hostile title as text", async () => {
      const dir = emptyDir();
      copyFileSync(join(FIXTURE, 'J. R. Hartley/The Hidden Crown (1864).epub'), join(dir, 'crown.epub'));
      const lib = await createLibrary(call, admin.token, { name: 'Deutsch', folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const [book] = await items(call, admin.token, lib.id);
      // a title that would be markup and an ICU pattern if either were interpreted
      const hostile = "<img src=x onerror=alert(1)> {n, plural, other {#}} 'quoted'";
      expect((await call('PATCH', `/api/media-items/${book!.id}`, { token: admin.token, body: { title: hostile } })).status).toBe(200);
      const reader = await register(call, { role: 'user' });
      expect((await call('PUT', `/api/media-items/${book!.id}/progress`, { token: reader.token, body: { percentage: 0.25 } })).status).toBe(200);
      const t = await openAs(browser, b.url, reader.token);
      await t.ctx.setExtraHTTPHeaders({ 'accept-language': 'de-DE,de;q=0.9' });
      try {
        await t.page.goto(`${b.url}/dashboard`);
        expect(await t.page.getAttribute('html', 'lang')).toBe('de');
        expect(await t.page.textContent('h1')).toBe(`Willkommen, ${reader.username}`);
        expect(await t.page.textContent('section[data-section="continue-reading"] h2')).toContain('Weiterlesen');
        expect(await t.page.getAttribute('section[data-section="continue-reading"] progress', 'aria-label')).toBe(`${hostile}: 25% gelesen`);
        expect(await axeProblems(t.page)).toEqual([]);

        await t.page.goto(`${b.url}/books/${book!.id}`);
        expect(await t.page.textContent('#book-title')).toBe(hostile);
        expect(await t.page.textContent('#book-progress')).toContain('25% gelesen');
        expect(await t.page.textContent('#book-rating')).toBe('Nicht bewertet');
        expect(await t.page.textContent('#formats-title')).toBe('Formate');
        expect(await axeProblems(t.page)).toEqual([]);

        await t.page.goto(`${b.url}/statistics`);
        expect(await t.page.textContent('h1')).toBe(`Lesestatistik ${new Date().getUTCFullYear()}`);
        expect(await t.page.textContent('.stats-totals dt')).toBe('Lesezeit');
        expect(await axeProblems(t.page)).toEqual([]);
        expect(t.dialogs).toEqual([]);
        expect(t.errors).toEqual([]);
      } finally {
        await t.ctx.close();
      }
    });

    it('refuses a language it does not ship, and hostile text, with 400', async () => {
      const reader = await register(call, { role: 'user' });
      const message = 'language must be one of en, de, fr, es, ja, zh-Hans, auto';
      expectError(await call('PUT', '/api/auth/profile', { token: reader.token, body: { language: 'pt-BR' } }), 400, message);
      const nul = await call('PUT', '/api/auth/profile', { token: reader.token, body: { language: 'de\u0000' } });
      expect(nul.status, nul.text).toBe(400);
      expectError(await call('PUT', '/api/auth/profile', { token: reader.token, body: { language: 7 } }), 400, 'invalid request');
      expect((await call('GET', '/api/auth/profile', { token: reader.token })).json.language).toBeUndefined();
      const ok = await call('PUT', '/api/auth/profile', { token: reader.token, body: { language: 'zh-Hans' } });
      expect(ok.status, ok.text).toBe(200);
      expect((await call('GET', '/api/auth/profile', { token: reader.token })).json.language).toBe('zh-Hans');
      // the sign-in page's picker takes only a shipped language
      const bad = await fetch(`${b.url}/language`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'language=xx&back=%2Flogin',
        redirect: 'manual',
      });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toBe(message);
      const good = await fetch(`${b.url}/language`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'language=es&back=https%3A%2F%2Fevil.example%2F',
        redirect: 'manual',
      });
      expect(good.status).toBe(303);
      expect(good.headers.get('location')).toBe('/login');
      expect(good.headers.get('set-cookie')).toMatch(/^bindery_lang=es; Path=\/; Max-Age=31536000; SameSite=Lax/);
    });
  });
}
