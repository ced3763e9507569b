// The web app's main flows in headless Chromium, for one mode (web.e2e runs it embedded,
// web-distributed.e2e distributed: two files, so two workers share the longest browser work):
// first run, sign in and out, the expired-session redirect back to the page asked for, lock
// messages; the dashboard, library, book and profile pages for an admin and a plain user; a hidden
// library never shows; a hostile title stays text. Every page: axe-core (no serious or critical
// violation), no console error, keyboard reachable, screenshots at 360 px and 1280 px under
// test/.tmp/screenshots/.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery, Mode } from '../support/bindery';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyDir, FIXTURE, items as listItems, scan, settled } from './catalog-helpers';
import { makeItem, put } from './reading-helpers';
import { asDevice, enroll } from './device-helpers';
import { api, decodeJwt, eventually, instances, jwtSecret, login, PASSWORD, register, uniq, type Account, type Call } from './helpers';
import { checkPage, HAS_CHROMIUM, launch, open, openAs, tabTo, unexpectedErrors } from './web-browser';

declare const document: any;

const HOSTILE = '<script>alert(1)</script>';
const EPUB = join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
const CBZ = join(FIXTURE, 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz');

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/** The web app's flows against a Bindery in `mode`, with a browser of their own; the caller's file decides the modes. */
export function webAppFlows(mode: Mode): void {
  const get = instances([mode]);
  let browser: Browser;
  beforeAll(async () => {
    if (HAS_CHROMIUM) browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe.skipIf(!HAS_CHROMIUM)(`web app (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    const root = { username: uniq('root'), password: PASSWORD };
    let admin: Account;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
    }, 240_000);

    it('first run: / and /login lead to the administrator form; creating it signs in and opens the dashboard', async () => {
      const first = await fetch(`${b.url}/`, { redirect: 'manual' });
      expect(first.status).toBe(303);
      expect(first.headers.get('location')).toBe('/setup');
      expect((await fetch(`${b.url}/login`, { redirect: 'manual' })).headers.get('location')).toBe('/setup');
      const t = await open(browser);
      await t.page.goto(`${b.url}/`);
      expect(new URL(t.page.url()).pathname).toBe('/setup');
      const res = await t.page.request.get(`${b.url}/setup`);
      expect(res.headers()['content-security-policy']).toBe(CSP);
      expect(res.headers()['x-content-type-options']).toBe('nosniff');
      expect(res.headers()['referrer-policy']).toBe('same-origin');
      await tabTo(t.page, '#create-admin');
      await checkPage(t, `${mode}-first-run`);
      await t.page.fill('#setup-username', root.username);
      await t.page.fill('#setup-email', `${root.username}@example.com`);
      await t.page.fill('#setup-password', root.password);
      await Promise.all([t.page.waitForURL(`${b.url}/dashboard`), t.page.click('#create-admin')]);
      expect(await t.page.textContent('h1')).toBe(`Welcome, ${root.username}`);
      // the administrator sees the admin entries of the navigation
      expect(await t.page.locator('nav[aria-label="Main"] a').allTextContents()).toEqual([
        'Home',
        'Library',
        'Upload',
        'Collections',
        'Devices',
        'Statistics',
        'Profile',
        'Libraries',
        'People',
        'System',
      ]);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
      const r = await login(call, root.username, root.password);
      expect(r.status, r.text).toBe(200);
      expect(r.json.user.role).toBe('admin');
      admin = { ...root, id: r.json.user.id, email: `${root.username}@example.com`, token: r.json.access_token, refresh: r.json.refresh_token, role: 'admin' };
      // set up now: the first-run page is gone
      expect((await fetch(`${b.url}/setup`, { redirect: 'manual' })).headers.get('location')).toBe('/login');
      expect((await fetch(`${b.url}/`, { redirect: 'manual' })).headers.get('location')).toBe('/login');
    });

    it('signs in, back to the page asked for; an expired session does the same; signs out', async () => {
      const alice = await register(call);
      const t = await open(browser);
      // signed out: a page sends to sign-in with the page as the redirect
      await t.page.goto(`${b.url}/dashboard?from=mail`);
      expect(t.page.url()).toBe(`${b.url}/login?redirect=${encodeURIComponent('/dashboard?from=mail')}`);
      await tabTo(t.page, '#submit');
      await checkPage(t, `${mode}-sign-in`);
      await t.page.fill('#login-name', alice.username);
      await t.page.fill('#password', 'not-the-password');
      await t.page.click('#submit');
      await t.page.waitForSelector('#error [role="alert"]');
      // the API's 401 is JSON even for htmx: shown as its text
      expect(await t.page.textContent('#error')).toBe('invalid credentials');
      await t.page.fill('#password', alice.password);
      await Promise.all([t.page.waitForURL(`${b.url}/dashboard?from=mail`), t.page.click('#submit')]);
      expect(await t.page.textContent('#who')).toBe(alice.username);
      // a plain user's navigation has no admin entry
      expect(await t.page.locator('nav[aria-label="Main"] a').allTextContents()).toEqual(['Home', 'Library', 'Collections', 'Devices', 'Statistics', 'Profile']);
      // signed in: /login goes straight on
      await t.page.goto(`${b.url}/login?redirect=${encodeURIComponent('/dashboard?again=1')}`);
      expect(t.page.url()).toBe(`${b.url}/dashboard?again=1`);

      // the session expires: the next page load goes to sign-in and comes back
      const cookie = (await t.ctx.cookies()).find((c) => c.name === 'token')!;
      const claims = decodeJwt(cookie.value).payload;
      const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .sign(new TextEncoder().encode(jwtSecret(b)));
      await t.ctx.addCookies([{ ...cookie, value: expired }]);
      await t.page.goto(`${b.url}/dashboard?after=expiry`);
      expect(t.page.url()).toBe(`${b.url}/login?redirect=${encodeURIComponent('/dashboard?after=expiry')}`);
      await t.page.fill('#login-name', alice.email);
      await t.page.fill('#password', alice.password);
      await Promise.all([t.page.waitForURL(`${b.url}/dashboard?after=expiry`), t.page.click('#submit')]);

      // sign out: back to sign-in, and the session is gone
      await tabTo(t.page, '#sign-out');
      await Promise.all([t.page.waitForURL(`${b.url}/login`), t.page.keyboard.press('Enter')]);
      expect((await t.ctx.cookies()).find((c) => c.name === 'token')).toBeUndefined();
      await t.page.goto(`${b.url}/dashboard`);
      expect(new URL(t.page.url()).pathname).toBe('/login');
      expect(unexpectedErrors(t.errors, [401])).toEqual([]);
      await t.ctx.close();
    });

    it('takes only same-site paths as redirect targets', async () => {
      for (const [asked, kept] of [
        ['/library?sort=title', '/library?sort=title'],
        ['//evil.example/x', '/dashboard'],
        ['https://evil.example/', '/dashboard'],
        ['/\\evil.example', '/dashboard'],
        ['/a b', '/dashboard'],
      ]) {
        const r = await call('GET', `/login?redirect=${encodeURIComponent(asked!)}`);
        expect(r.status).toBe(200);
        expect(r.text).toContain(`<input type="hidden" name="redirect" value="${kept!.replace(/&/g, '&amp;')}"/>`);
      }
      // and the login route itself sends only a local target back in HX-Redirect
      const u = await register(call);
      const r = await call('POST', '/api/auth/login', { form: { login: u.username, password: u.password, redirect: '//evil.example/' }, headers: { 'hx-request': 'true' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('hx-redirect')).toBe('/dashboard');
    });

    it('shows the lock messages as the API words them', async () => {
      const u = await register(call);
      const t = await open(browser);
      await t.page.goto(`${b.url}/login`);
      await t.page.fill('#login-name', u.username);
      const attempt = async (password: string) => {
        await t.page.fill('#password', password);
        await t.page.evaluate(() => document.getElementById('error')!.replaceChildren());
        await t.page.click('#submit');
        await t.page.waitForSelector('#error [role="alert"]');
        return t.page.textContent('#error');
      };
      for (let i = 0; i < 4; i++) expect(await attempt(`wrong-${i}-passw0rd`)).toBe('invalid credentials');
      expect(await attempt('wrong-5-passw0rd')).toBe('Too many failed attempts. Account locked for 15 minutes');
      expect(await attempt(u.password)).toBe('Account locked. Try again in 15 minutes');
      expect(new URL(t.page.url()).pathname).toBe('/login');
      expect(unexpectedErrors(t.errors, [401, 429])).toEqual([]);
      await t.ctx.close();
    });

    describe('pages', () => {
      let alice: Account;
      let openLib: Record<string, any>;
      let hiddenLib: Record<string, any>;
      let epub: Record<string, any>;
      let dune: Record<string, any>;
      let hostile: Record<string, any>;
      let gem: Record<string, any>;
      let folder: string;
      let openCount: number;
      let cbzTitle: string;
      beforeAll(async () => {
        folder = mkdtempSync(join(tmpdir(), 'bindery-web-'));
        copyFileSync(EPUB, join(folder, 'cle.epub'));
        copyFileSync(CBZ, join(folder, 'wolken.cbz'));
        const lr = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Open shelf', folders: [folder], watch: false } });
        expect(lr.status, lr.text).toBe(201);
        openLib = lr.json;
        await scan(call, admin.token, openLib.id);
        epub = (await listItems(call, admin.token, openLib.id)).find((i) => i.formats[0]?.format === 'epub')!;
        expect(epub.title).toBe('Une Clé perdue');
        cbzTitle = (await listItems(call, admin.token, openLib.id)).find((i) => i.formats[0]?.format === 'cbz')!.title;
        const hr = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Hidden shelf', folders: [emptyDir()], watch: false } });
        expect(hr.status, hr.text).toBe(201);
        hiddenLib = hr.json;
        gem = await makeItem(call, admin, hiddenLib.id, { title: 'Hidden Gem', authors: ['Secret Author'], tags: ['secret'] });
        dune = await makeItem(call, admin, openLib.id, { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune Chronicles', series_index: 1, tags: ['sf'], year: 1965 });
        for (let i = 1; i <= 24; i++) await makeItem(call, admin, openLib.id, { title: `Volume ${String(i).padStart(2, '0')}`, authors: ['Filler Writer'] });
        hostile = await makeItem(call, admin, openLib.id, { title: HOSTILE, authors: ['<img src=x onerror=alert(2)>'], tags: ['xss'], description: '<b>bold</b>' });
        openCount = 2 + 1 + 24 + 1;
        alice = await register(call);
        const g = await call('PUT', `/api/auth/users/${alice.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [openLib.id] } });
        expect(g.status, g.text).toBe(200);
        expect((await put(call, alice.token, epub.id, { percentage: 0.42 })).status).toBe(200);
        expect((await call('PUT', `/api/media-items/${epub.id}/rating`, { token: alice.token, body: { rating: 4 } })).status).toBe(201);
      }, 120_000);
      afterAll(() => rmSync(folder, { recursive: true, force: true }));

      /** A browser signed in as `who` (its session cookie set directly). */
      const as = (who: Account) => openAs(browser, b.url, who.token);
      const titles = (t: Awaited<ReturnType<typeof as>>, scope = '') => t.page.locator(`${scope} .book-title`).allTextContents();

      it('dashboard: continue reading with its progress bar, recently added, sections moved, hidden and shown again; a hidden library never shows; a hostile title is text', async () => {
        const t = await as(alice);
        await t.page.goto(`${b.url}/dashboard`);
        expect(await t.page.textContent('h1')).toBe(`Welcome, ${alice.username}`);
        const cont = t.page.locator('section[data-section="continue-reading"]');
        expect(await cont.locator('.book-title').allTextContents()).toEqual(['Une Clé perdue']);
        expect(await cont.locator('progress').getAttribute('value')).toBe('42');
        expect(await cont.locator('progress').getAttribute('aria-label')).toBe('Une Clé perdue: 42% read');
        // the newest twelve of alice's books, newest first (Hidden Gem, newer than most, is not hers)
        const recent = await titles(t, 'section[data-section="recently-added"]');
        expect(recent).toEqual([HOSTILE, ...Array.from({ length: 11 }, (_, i) => `Volume ${24 - i}`)]);
        expect(await t.page.textContent('section[data-section="recently-added"] h2')).toBe(`Recently Added (${openCount})`);
        expect(await t.page.content()).not.toContain('Hidden Gem');
        // the hostile title is text: no script of its own, no dialog
        // (the page's own: htmx, the app's script and the editing/bulk-selection script, the offline one (the worker, Keep offline), all hashed assets)
        expect(await t.page.locator('script').evaluateAll((xs) => xs.map((x) => (x.getAttribute('src') ?? 'inline').replace(/\.[\w-]{12}\.js$/, '.js')))).toEqual([
          '/assets/htmx.js',
          '/assets/app.js',
          '/assets/edit.js',
          '/assets/offline.js',
        ]);
        await tabTo(t.page, 'section[data-section="continue-reading"] a.book-link');
        await checkPage(t, `${mode}-dashboard-user`);
        // live: a position saved elsewhere (KOReader, say) moves the bar without a reload
        await t.page.waitForSelector('main[data-live-state="open"]');
        expect((await put(call, alice.token, epub.id, { percentage: 0.5 })).status).toBe(200);
        await t.page.waitForSelector('section[data-section="continue-reading"] progress[value="50"]');
        expect((await put(call, alice.token, epub.id, { percentage: 0.42 })).status).toBe(200);
        await t.page.waitForSelector('section[data-section="continue-reading"] progress[value="42"]');
        // arrange: move Recently Added up, hide Continue Reading, show it again (by keyboard)
        const prefs = async () => (await call('GET', '/api/dashboard/sections?limit=1', { token: alice.token })).json;
        const before = await prefs();
        const id = (q: string) => before.sections.find((x: any) => x.query_type === q).id as string;
        const shownSections = () => t.page.locator('section[data-section]').evaluateAll((els: any[]) => els.map((e) => e.dataset.section));
        expect((await shownSections()).slice(0, 2)).toEqual(['continue-reading', 'recently-added']);
        await tabTo(t.page, '#arrange summary');
        await t.page.keyboard.press('Enter');
        await tabTo(t.page, `#up-${id('recently-added')}`);
        await Promise.all([t.page.waitForEvent('load'), t.page.keyboard.press('Enter')]);
        expect((await shownSections()).slice(0, 2)).toEqual(['recently-added', 'continue-reading']);
        expect((await prefs()).sections.slice(0, 2).map((x: any) => x.query_type)).toEqual(['recently-added', 'continue-reading']);
        await t.page.click('#arrange summary');
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#hide-${id('continue-reading')}`)]);
        expect(await shownSections()).not.toContain('continue-reading');
        expect((await prefs()).hidden_collections).toEqual([id('continue-reading')]);
        expect(await t.page.textContent(`li[data-arrange="${id('continue-reading')}"] .arrange-name`)).toBe('Continue Reading');
        await t.page.click('#arrange summary');
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#show-${id('continue-reading')}`)]);
        expect((await prefs()).hidden_collections).toEqual([]);
        expect(await shownSections()).toContain('continue-reading');
        expect(t.errors).toEqual([]);
        await t.ctx.close();
        // the admin sees every library
        const a = await as(admin);
        await a.page.goto(`${b.url}/dashboard`);
        expect(await a.page.textContent('section[data-section="recently-added"] h2')).toBe(`Recently Added (${openCount + 1})`);
        await checkPage(a, `${mode}-dashboard-admin`);
        await a.ctx.close();
      });

      it('library: a cover grid paged by "Load more" (htmx and plain links), sorted, filtered, searched, with autocomplete; a hidden library never shows', async () => {
        const t = await as(alice);
        await t.page.goto(`${b.url}/library`);
        const first = await titles(t, '#grid');
        expect(first.length).toBe(24);
        expect(first[0]).toBe(HOSTILE); // '<' sorts first
        // each card is two stops (its selection box and its link)
        await tabTo(t.page, '#load-more a', 160);
        await checkPage(t, `${mode}-library-user`);
        await Promise.all([t.page.waitForResponse((r: { url(): string }) => r.url().includes('/library?offset=24')), t.page.keyboard.press('Enter')]);
        await t.page.waitForFunction((n: number) => document.querySelectorAll('#grid .book').length === n, openCount);
        // the focus moved to the first book it brought
        await t.page.waitForFunction(() => document.activeElement?.closest('.book') === document.querySelectorAll('#grid .book')[24]);
        const all = await titles(t, '#grid');
        expect(all.length).toBe(openCount);
        expect(new Set(all).size).toBe(openCount);
        expect(all).not.toContain('Hidden Gem');
        expect(await t.page.locator('#load-more a').count()).toBe(0);
        // the plain link works without htmx too
        const second = await call('GET', '/library?offset=24', { cookie: `token=${alice.token}` });
        expect(second.status).toBe(200);
        expect((second.text.match(/class="book-title"/g) ?? []).length).toBe(openCount - 24);
        // sort: recently added first
        await t.page.selectOption('#f-sort', '-created_at');
        await Promise.all([t.page.waitForURL(/sort=-created_at/), t.page.click('#apply')]);
        expect((await titles(t, '#grid'))[0]).toBe(HOSTILE);
        expect((await titles(t, '#grid'))[1]).toBe('Volume 24');
        // filters and search
        const shown = async (query: string) => {
          await t.page.goto(`${b.url}/library?${query}`);
          return titles(t, '#grid');
        };
        expect(await shown('author=%22Frank+Herbert%22')).toEqual(['Dune']);
        expect(await shown('series=%22Dune+Chronicles%22')).toEqual(['Dune']);
        expect(await shown('format=epub')).toEqual(['Une Clé perdue']);
        expect(await shown('format=cbz')).toEqual([cbzTitle]);
        expect(await shown('tag=%22xss%22')).toEqual([HOSTILE]);
        // relevance first: the fuzzy match on "une" comes after
        expect(await shown('q=Dune')).toEqual([dune.title, 'Une Clé perdue']);
        expect(await shown('q=Hidden+Gem')).toEqual([]);
        expect(await t.page.textContent('#no-results')).toBe('No books match.');
        expect(await shown('tag=%22secret%22')).toEqual([]);
        // autocomplete: the author field suggests what alice may see, as exact filters
        await t.page.goto(`${b.url}/library`);
        const suggested = async (field: string, typed: string) => {
          await t.page.fill(`#f-${field}`, '');
          await Promise.all([
            t.page.waitForResponse((r: { url(): string }) => r.url().includes(`/library/suggest?field=${field}`) && r.url().includes(encodeURIComponent(typed).slice(0, 3))),
            t.page.locator(`#f-${field}`).pressSequentially(typed),
          ]);
          await t.page.waitForTimeout(400); // the last keystroke's answer (250 ms debounce)
          return t.page.locator(`#${field}-options option`).evaluateAll((os: any[]) => os.map((o) => o.value));
        };
        expect(await suggested('author', 'Frank')).toEqual(['"Frank Herbert"']);
        expect(await suggested('series', 'Dune')).toEqual(['"Dune Chronicles"']);
        expect(await suggested('author', 'Secret')).toEqual([]);
        expect(await suggested('tag', 'secre')).toEqual([]);
        // the search form by keyboard
        await t.page.goto(`${b.url}/library`);
        await tabTo(t.page, '#f-q');
        await t.page.keyboard.type('Dune');
        await Promise.all([t.page.waitForURL(/q=Dune/), t.page.keyboard.press('Enter')]);
        expect(await titles(t, '#grid')).toEqual(['Dune', 'Une Clé perdue']);
        expect(t.dialogs).toEqual([]);
        expect(t.errors).toEqual([]);
        await t.ctx.close();
        // the admin finds the hidden library's book
        const a = await as(admin);
        await a.page.goto(`${b.url}/library?q=Hidden+Gem`);
        expect(await titles(a, '#grid')).toEqual(['Hidden Gem']);
        await checkPage(a, `${mode}-library-admin`);
        await a.ctx.close();
      });

      it('book page: metadata, cover, formats with a working download, progress (live), rating (shown and set), collections, highlights deleted and restored; a hidden book is not found', async () => {
        const c = await call('POST', '/api/collections', { token: alice.token, body: { name: 'Favourites' } });
        expect(c.status, c.text).toBe(201);
        const t = await as(alice);
        await t.page.goto(`${b.url}/books/${epub.id}`);
        expect(await t.page.textContent('h1')).toBe('Une Clé perdue');
        expect(await t.page.textContent('#book-authors')).toBe('by Amélie Fournier');
        expect(await t.page.textContent('#book-progress')).toBe('42% 42% read');
        expect(await t.page.textContent('#book-rating')).toBe('4 of 5');
        const link = t.page.locator('#formats a');
        expect(await link.textContent()).toBe('Download EPUB');
        expect(await link.getAttribute('href')).toBe(epub.formats[0].file_url);
        const file = await t.page.request.get(`${b.url}${epub.formats[0].file_url}`);
        expect(file.status()).toBe(200);
        expect((await file.body()).length).toBe(epub.formats[0].size);
        // the cover loads (an image, no error)
        expect(await t.page.locator('img.cover-big').evaluate((img: any) => img.complete && img.naturalWidth > 0)).toBe(true);
        // the collection picker arrives just after the page
        await t.page.waitForSelector('#add-collection');
        await tabTo(t.page, '#add-collection');
        await checkPage(t, `${mode}-book-user`);
        await t.page.selectOption('#collection', c.json.id);
        await t.page.click('#add-collection');
        await t.page.waitForSelector('#collection-outcome [role="status"]');
        expect(await t.page.textContent('#collection-outcome')).toBe('items added');
        const members = await call('GET', `/api/collections/${c.json.id}/items`, { token: alice.token });
        expect(members.json.data.map((x: any) => x.media_item_id ?? x.id)).toEqual([epub.id]);
        // live: a position pushed from another device moves this page's progress without a reload
        await t.page.waitForSelector('main[data-live-state="open"]');
        expect((await put(call, alice.token, epub.id, { percentage: 0.66 })).status).toBe(200);
        await t.page.waitForFunction(() => document.getElementById('book-progress').textContent === '66% 66% read');
        // highlights and notes: a hostile one is text; delete it, then restore it
        const h = await call('POST', `/api/media-items/${epub.id}/highlights`, {
          token: alice.token,
          body: { text: '<script>alert(3)</script>', note: 'see <i>this</i>', pos0: '/body/DocFragment[2]/body/p[1]/text().0', pos1: '/body/DocFragment[2]/body/p[1]/text().5' },
        });
        expect(h.status, h.text).toBe(201);
        await t.page.reload();
        const entry = t.page.locator(`#annotation-list li[data-annotation="${h.json.id}"]`);
        await entry.waitFor();
        expect(await entry.locator('blockquote').textContent()).toBe('<script>alert(3)</script>');
        expect(await entry.locator('.annotation-note').textContent()).toBe('see <i>this</i>');
        await checkPage(t, `${mode}-book-annotations`);
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#delete-${h.json.id}`)]);
        await t.page.locator(`#deleted-list li[data-annotation="${h.json.id}"]`).waitFor();
        expect(await t.page.locator('#no-annotations').textContent()).toBe('No highlights or notes yet.');
        expect((await call('GET', `/api/media-items/${epub.id}/highlights`, { token: alice.token })).json.data).toEqual([]);
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#restore-${h.json.id}`)]);
        await entry.waitFor();
        expect((await call('GET', `/api/media-items/${epub.id}/highlights`, { token: alice.token })).json.data.map((x: any) => x.id)).toEqual([h.json.id]);
        // rate it 2 of 5: saved through the API, shown after the reload
        await t.page.selectOption('#rating', '2');
        await Promise.all([t.page.waitForEvent('load'), t.page.click('#save-rating')]);
        expect(await t.page.textContent('#book-rating')).toBe('2 of 5');
        expect((await call('GET', `/api/media-items/${epub.id}/rating`, { token: alice.token })).json.rating).toBe(2);
        // the hostile book: its title and author are text
        await t.page.goto(`${b.url}/books/${hostile.id}`);
        expect(await t.page.textContent('h1')).toBe(HOSTILE);
        expect(await t.page.textContent('#book-authors')).toBe('by <img src=x onerror=alert(2)>');
        expect(await t.page.locator('main img').count()).toBe(0);
        expect(await t.page.textContent('.description')).toBe('<b>bold</b>');
        await checkPage(t, `${mode}-book-hostile`);
        // a book of a library alice may not see does not exist for her
        const gone = await t.page.goto(`${b.url}/books/${gem.id}`);
        expect(gone?.status()).toBe(404);
        expect(await t.page.textContent('h1')).toBe('Not found');
        expect((await t.page.goto(`${b.url}/books/not-an-id`))?.status()).toBe(404);
        expect(unexpectedErrors(t.errors, [404])).toEqual([]);
        await t.ctx.close();
        const a = await as(admin);
        expect((await a.page.goto(`${b.url}/books/${gem.id}`))?.status()).toBe(200);
        expect(await a.page.textContent('h1')).toBe('Hidden Gem');
        await checkPage(a, `${mode}-book-admin`);
        await a.ctx.close();
      });

      it("collections: yours and the system's, created, renamed, a book removed, deleted; another user's is not found", async () => {
        const t = await as(alice);
        await t.page.goto(`${b.url}/collections`);
        const own = () => t.page.locator('#own-collections .collection-link').allTextContents();
        expect(await own()).toEqual(['Favourites']);
        expect(await t.page.locator('#system-collections a').allTextContents()).toEqual(expect.arrayContaining(['Continue Reading', 'Recently Added']));
        await tabTo(t.page, '#create-collection');
        await checkPage(t, `${mode}-collections`);
        await t.page.fill('#new-name', 'To read <soon>');
        await Promise.all([t.page.waitForEvent('load'), t.page.click('#create-collection')]);
        expect(await own()).toEqual(['Favourites', 'To read <soon>']);
        const list = async () => (await call('GET', '/api/collections', { token: alice.token })).json.data.filter((c: any) => !c.is_system);
        const made = (await list()).find((c: any) => c.name === 'To read <soon>');
        await t.page.fill(`#rename-${made.id}`, 'Later');
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#rename-save-${made.id}`)]);
        expect(await own()).toEqual(['Favourites', 'Later']);
        // one collection's books; remove one
        const fav = (await list()).find((c: any) => c.name === 'Favourites');
        await t.page.goto(`${b.url}/collections/${fav.id}`);
        expect(await t.page.textContent('h1')).toBe('Favourites');
        expect(await titles(t, '#grid')).toEqual(['Une Clé perdue']);
        await checkPage(t, `${mode}-collection`);
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#remove-${epub.id}`)]);
        expect(await t.page.textContent('#empty-collection')).toBe('No books in this collection.');
        expect((await call('GET', `/api/collections/${fav.id}/items`, { token: alice.token })).json.data).toEqual([]);
        await t.page.goto(`${b.url}/collections`);
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#delete-${made.id}`)]);
        expect(await own()).toEqual(['Favourites']);
        expect((await list()).map((c: any) => c.name)).toEqual(['Favourites']);
        // another user's collection does not exist for alice
        const theirs = await call('POST', '/api/collections', { token: admin.token, body: { name: 'Admin picks' } });
        expect(theirs.status, theirs.text).toBe(201);
        expect((await t.page.goto(`${b.url}/collections/${theirs.json.id}`))?.status()).toBe(404);
        expect(unexpectedErrors(t.errors, [404])).toEqual([]);
        await t.ctx.close();
      });

      it('profile: theme (dark by default, light after saving) and password change, with the messages as the API words them', async () => {
        const bob = await register(call);
        const t = await as(bob);
        await t.page.goto(`${b.url}/profile`);
        expect(await t.page.getAttribute('html', 'class')).toBe('theme-dark');
        expect(await t.page.textContent('#profile-username')).toBe(bob.username);
        expect(await t.page.textContent('#profile-role')).toBe('Reader');
        expect(await t.page.locator('#theme option:checked').textContent()).toBe('Dark (Tokyo Night)');
        await tabTo(t.page, '#change-password');
        await checkPage(t, `${mode}-profile-dark`);
        await t.page.selectOption('#theme', 'light');
        await Promise.all([t.page.waitForEvent('load'), t.page.click('#save-theme')]);
        expect(await t.page.getAttribute('html', 'class')).toBe('theme-light');
        expect((await call('GET', '/api/auth/profile', { token: bob.token })).json.theme).toBe('light');
        await checkPage(t, `${mode}-profile-light`);
        const change = async (current: string, next: string, again: string) => {
          await t.page.fill('#current-password', current);
          await t.page.fill('#new-password', next);
          await t.page.fill('#confirm-password', again);
          await t.page.evaluate(() => document.getElementById('password-outcome').replaceChildren());
          await t.page.click('#change-password');
          await t.page.waitForSelector('#password-outcome .alert');
          return t.page.textContent('#password-outcome');
        };
        expect(await change('wrong-passw0rd-1', 'new-passw0rd-456', 'new-passw0rd-456')).toBe('current password is incorrect');
        expect(await change(bob.password, 'new-passw0rd-456', 'new-passw0rd-789')).toBe('passwords do not match');
        expect(await change(bob.password, 'new-passw0rd-456', 'new-passw0rd-456')).toBe('password updated successfully');
        expect(await t.page.inputValue('#current-password')).toBe('');
        expect((await login(call, bob.username, 'new-passw0rd-456')).status).toBe(200);
        expect((await login(call, bob.username, bob.password)).status).toBe(401);
        expect(unexpectedErrors(t.errors, [400, 401])).toEqual([]);
        await t.ctx.close();
      });

      it("devices: a user's own devices, renamed and removed; nobody else's; how to connect one", async () => {
        const name = '<b>Kobo</b> & "Libra"';
        const dev = await enroll(call, alice, name);
        const t = await as(alice);
        await t.page.goto(`${b.url}/devices`);
        const card = t.page.locator(`li[data-device-id="${dev.device_id}"]`);
        expect(await card.locator('.device-name').textContent()).toBe(name);
        expect(await t.page.textContent('#opds-address')).toBe(`${b.url}/opds`);
        expect(await t.page.getAttribute('a[href="/api/koreader/plugin"]', 'href')).toBe('/api/koreader/plugin');
        // nobody else sees it
        const a = await as(admin);
        await a.page.goto(`${b.url}/devices`);
        expect(await a.page.locator(`li[data-device-id="${dev.device_id}"]`).count()).toBe(0);
        expect(await a.page.content()).not.toContain('Kobo</b>');
        await a.ctx.close();
        // rename
        await card.locator('summary').click();
        await t.page.fill(`#rename-${dev.device_id}`, 'Bedside');
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#save-${dev.device_id}`)]);
        expect(await card.locator('.device-name').textContent()).toBe('Bedside');
        expect((await call('GET', `/api/devices/${dev.device_id}`, { token: alice.token })).json.name).toBe('Bedside');
        // remove: its credential stops working
        await card.locator('summary').click();
        await t.page.check(`#confirm-${dev.device_id}`);
        await Promise.all([t.page.waitForEvent('load'), t.page.click(`#remove-${dev.device_id}`)]);
        expect(await t.page.locator(`li[data-device-id="${dev.device_id}"]`).count()).toBe(0);
        expect((await call('GET', '/api/sync/device', asDevice(dev.token))).status).toBe(401);
        expect(t.errors).toEqual([]);
        expect(t.dialogs).toEqual([]);
        await t.ctx.close();
      });

      it('admin users: a plain user never sees them; the admin grants and takes back a library, and the user sees it come and go', async () => {
        const t = await as(alice);
        const r = await t.page.goto(`${b.url}/admin/users`);
        expect(r?.status()).toBe(404);
        expect(await t.page.content()).not.toContain(admin.email);
        const a = await as(admin);
        await a.page.goto(`${b.url}/admin/users`);
        const card = a.page.locator(`li[data-user="${alice.id}"]`);
        expect(await card.locator('.person-name').textContent()).toBe(alice.username);
        await card.locator('summary').click();
        expect(await a.page.inputValue(`#all-${alice.id}`)).toBe('false');
        expect(await a.page.isChecked(`#lib-${alice.id}-${openLib.id}`)).toBe(true);
        expect(await a.page.isChecked(`#lib-${alice.id}-${hiddenLib.id}`)).toBe(false);
        // an admin sees every library: no access form for them
        expect(await a.page.locator(`#access-${admin.id}`).count()).toBe(0);
        await tabTo(a.page, `#save-access-${alice.id}`, 400);
        await checkPage(a, `${mode}-admin-users`);
        const grant = async () => {
          await a.page.evaluate((id: string) => document.getElementById(`access-outcome-${id}`).replaceChildren(), alice.id);
          await a.page.click(`#save-access-${alice.id}`);
          await a.page.waitForSelector(`#access-outcome-${alice.id} [role="status"]`);
          expect(await a.page.textContent(`#access-outcome-${alice.id}`)).toBe('library access updated');
          return (await call('GET', `/api/auth/users/${alice.id}/libraries`, { token: admin.token })).json;
        };
        await a.page.check(`#lib-${alice.id}-${hiddenLib.id}`);
        expect(await grant()).toEqual({ user_id: alice.id, all_libraries: false, library_ids: expect.arrayContaining([openLib.id, hiddenLib.id]) });
        await t.page.goto(`${b.url}/library?q=Hidden+Gem`);
        expect(await titles(t, '#grid')).toEqual(['Hidden Gem']);
        // taken back: none ticked and "only the ones ticked" is no library at all
        await a.page.uncheck(`#lib-${alice.id}-${hiddenLib.id}`);
        await a.page.uncheck(`#lib-${alice.id}-${openLib.id}`);
        expect(await grant()).toEqual({ user_id: alice.id, all_libraries: false, library_ids: [] });
        await t.page.goto(`${b.url}/library`);
        expect(await t.page.textContent('#no-results')).toBe('No books match.');
        await a.page.check(`#lib-${alice.id}-${openLib.id}`);
        expect(await grant()).toEqual({ user_id: alice.id, all_libraries: false, library_ids: [openLib.id] });
        await t.page.goto(`${b.url}/library?q=Hidden+Gem`);
        expect(await t.page.textContent('#no-results')).toBe('No books match.');
        expect(a.errors).toEqual([]);
        expect(unexpectedErrors(t.errors, [404])).toEqual([]);
        await a.ctx.close();
        await t.ctx.close();
      }, 120_000);

      it('admin system: a plain user never sees it; the admin sees the read models and settings and rebuilds one', async () => {
        const t = await as(alice);
        expect((await t.page.goto(`${b.url}/admin/system`))?.status()).toBe(404);
        await t.ctx.close();
        const a = await as(admin);
        await a.page.goto(`${b.url}/admin/system`);
        const api = (await call('GET', '/api/admin/projections', { token: admin.token })).json.data;
        expect(await a.page.locator('#projections tbody td[data-label="Name"]').allTextContents()).toEqual(api.map((p: any) => p.name));
        const keys = (await call('GET', '/api/system/settings', { token: admin.token })).json.settings.map((x: any) => x.key);
        expect(await a.page.locator('#settings dt').allTextContents()).toEqual(keys);
        await tabTo(a.page, '#rebuild-button-catalog', 200);
        await checkPage(a, `${mode}-admin-system`);
        await a.page.click('#rebuild-button-catalog');
        await a.page.waitForSelector('#rebuild-catalog [role="status"]');
        expect(await a.page.textContent('#rebuild-catalog')).toBe('rebuild of catalog started');
        await eventually(async () => {
          const now = (await call('GET', '/api/admin/projections', { token: admin.token })).json.data.find((p: any) => p.name === 'catalog');
          expect(now.rebuilt_at).not.toBeNull();
          expect(now.rebuilding).toBe(false);
        }, 30_000);
        expect(a.errors).toEqual([]);
        await a.ctx.close();
      });

      it('admin libraries: a plain user never sees them; the admin creates a library with the folder browser and rescans it', async () => {
        const t = await as(alice);
        for (const path of ['/admin/libraries', '/admin/libraries/browse']) {
          const r = await t.page.goto(`${b.url}${path}`);
          expect(r?.status()).toBe(404);
          expect(await t.page.textContent('h1')).toBe('Not found');
          expect(await t.page.content()).not.toContain('Hidden shelf');
        }
        await t.ctx.close();
        const fresh = mkdtempSync(join(tmpdir(), 'bindery-web-fresh-'));
        copyFileSync(EPUB, join(fresh, 'cle.epub'));
        try {
          const a = await as(admin);
          await a.page.goto(`${b.url}/admin/libraries`);
          const names = await a.page.locator('#libraries tbody td:first-child').allTextContents();
          expect(names).toEqual(expect.arrayContaining(['Open shelf', 'Hidden shelf']));
          await tabTo(a.page, '#create');
          await checkPage(a, `${mode}-admin-libraries`);
          await a.page.click(`button[data-folder="${tmpdir()}"]`);
          await a.page.waitForSelector('#browse-path:has-text("In ")');
          expect(await a.page.textContent('#browse-path')).toBe(`In ${tmpdir()}`);
          await a.page.click(`button[data-folder="${fresh}"]`);
          await a.page.waitForFunction((p: string) => document.getElementById('lib-folder').value === p, fresh);
          expect(await a.page.textContent('#browse-path')).toBe(`In ${fresh}`);
          await a.page.fill('#lib-name', 'Fresh <shelf>');
          await Promise.all([a.page.waitForEvent('load'), a.page.click('#create')]);
          const row = a.page.locator('#libraries tbody tr', { hasText: 'Fresh <shelf>' });
          expect(await row.locator('td').nth(1).textContent()).toBe(fresh);
          await row.locator('button').click();
          await a.page.waitForSelector(`#libraries tbody tr:has-text("Fresh <shelf>") [role="status"]`);
          expect(await row.locator('[role="status"]').textContent()).toBe('scan queued');
          const id = await row.getAttribute('data-library');
          await settled(call, admin.token, id!);
          expect((await listItems(call, admin.token, id!)).map((i) => i.title)).toEqual(['Une Clé perdue']);
          // live: a library made elsewhere appears with its scanned book, without a reload
          await a.page.waitForSelector('main[data-live-state="open"]');
          const other = mkdtempSync(join(tmpdir(), 'bindery-web-live-'));
          copyFileSync(CBZ, join(other, 'w.cbz'));
          try {
            const lr = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'Live shelf', folders: [other], watch: false } });
            expect(lr.status, lr.text).toBe(201);
            await settled(call, admin.token, lr.json.id);
            await a.page.waitForSelector(`#libraries tr[data-library="${lr.json.id}"] td[data-label="Books"]:text-is("1")`, { timeout: 15_000 });
            // the refreshed list kept the rescan's message where it was
            expect(await row.locator('[role="status"]').textContent()).toBe('scan queued');
          } finally {
            rmSync(other, { recursive: true, force: true });
          }
          expect(a.errors).toEqual([]);
          expect(a.dialogs).toEqual([]);
          await a.ctx.close();
        } finally {
          rmSync(fresh, { recursive: true, force: true });
        }
      });
    });
  });
}
