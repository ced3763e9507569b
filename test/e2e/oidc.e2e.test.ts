// Single sign-on against a real OpenID provider run in this process (oidc-provider), in headless
// Chromium through the provider's own login page, in both modes (issue 47): a new person's account
// made at the first sign-in (OIDC_AUTO_CREATE) with the same session a password sign-in makes, with
// which they read a book in the web reader; the
// admin group giving and taking the admin role; a local account linked from its profile; a wrong
// state, a replayed code, an expired and a forged ID token each refused with the problem page and
// no session; signing out through the provider's end-session page; axe on every new page.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Identity } from '@bindery/contracts';
import { availableModes, type Bindery, startBindery } from '../support/bindery';
import { api, register, uniq, type Call } from './helpers';
import { ADMIN_GROUP, freePort, quietProvider, heldAnswer, LABEL, oidcEnv, ourErrors, problemShown, providerLogin, startProvider, type TestProvider } from './oidc-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, openAs, type Tab } from './web-browser';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { smallEpub } from './kobo-helpers';

declare const document: any;

const modes = await availableModes();
if (!HAS_CHROMIUM) describe.skip(`single sign-on in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const P = Identity.OIDC_PROBLEMS;
/** The flows with several browser sign-ins and axe runs take 15-20 s alone and three times that beside another browser file (CI timed one out at 60 s). */
const LONG_FLOW = 150_000;

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`single sign-on through an OpenID provider (${mode})`, () => {
    let b: Bindery;
    let provider: TestProvider;
    let call: Call;
    let admin: { token: string };
    const tabs: Tab[] = [];

    beforeAll(async () => {
      const port = await freePort();
      b = await startBindery(mode, oidcEnv(port, { OIDC_AUTO_CREATE: 'true', OIDC_ADMIN_GROUP: ADMIN_GROUP }));
      provider = await startProvider(port, b.url);
      call = api(b);
      // the first account is the administrator: the admin group's users are never the last one
      admin = await register(call);
    }, 400_000);
    afterAll(async () => {
      for (const t of tabs) await t.ctx.close();
      await provider?.stop();
      await b?.stop();
    });

    /** A fresh browser at the sign-in page, clicking the provider's button and signing in there as `login`. */
    async function signInThrough(login: string, redirect = '/dashboard'): Promise<Tab> {
      const t = await open(browser);
      tabs.push(t);
      await quietProvider(t.ctx, provider.issuer);
      await t.page.goto(`${b.url}/login?redirect=${encodeURIComponent(redirect)}`);
      await t.page.click('#sso-sign-in');
      await providerLogin(t.page, provider.issuer, login);
      return t;
    }
    const tokenOf = async (t: Tab) => (await t.ctx.cookies(b.url)).find((c) => c.name === 'token')?.value;
    const profileOf = async (t: Tab) => {
      const token = await tokenOf(t);
      expect(token, 'a session cookie').toBeDefined();
      const r = await call('GET', '/api/auth/profile', { token: token! });
      expect(r.status, r.text).toBe(200);
      return r.json as { id: string; username: string; email: string; role: string };
    };

    it(
      'a new person signs in through the provider and gets an account and a session like a password sign-in',
      async () => {
        const login = uniq('ann');
        provider.accounts.set(login, { email: `${login}@example.test`, preferred_username: login, name: 'Ann Reader', groups: [] });
        const t = await open(browser);
        tabs.push(t);
        await quietProvider(t.ctx, provider.issuer);
        await t.page.goto(`${b.url}/login`);
        expect(await t.page.locator('#sso-sign-in').textContent()).toBe(LABEL);
        expect(await t.page.locator('#login').count(), 'the password form is there without OIDC_ONLY').toBe(1);
        await checkPage(t, `oidc-login-${mode}`);
        await t.page.click('#sso-sign-in');
        await providerLogin(t.page, provider.issuer, login);
        await t.page.waitForURL(`${b.url}/dashboard`);
        const me = await profileOf(t);
        expect(me).toMatchObject({ username: login, email: `${login}@example.test`, role: 'user' });
        // and reads: a book of the library opens in the web reader with this session
        const dir = emptyDir();
        writeFileSync(join(dir, 'sso.epub'), smallEpub('Read After Sign-In', 'Ann Writer', randomUUID()));
        const lib = await createLibrary(call, admin.token, { name: uniq('SSO shelf'), folders: [dir], watch: false });
        await scan(call, admin.token, lib.id);
        const [book] = await items(call, admin.token, lib.id);
        await t.page.goto(`${b.url}/read/${book!.id}`);
        await t.page.waitForFunction(() => document.querySelector('#reader-title')?.textContent === 'Read After Sign-In');
        // the session is one of the account's sessions, listed, and ends when revoked
        const token = (await tokenOf(t))!;
        const sessions = await call('GET', '/api/auth/sessions', { token });
        expect(sessions.status).toBe(200);
        expect(sessions.json.data).toHaveLength(1);
        expect(sessions.json.data[0].current).toBe(true);
        expect(sessions.json.data[0].client).toContain('Chrome');
        // a second sign-in of the same sub is the same account, not another one
        const again = await signInThrough(login);
        await again.page.waitForURL(`${b.url}/dashboard`);
        expect((await profileOf(again)).id).toBe(me.id);
        const two = await call('GET', '/api/auth/sessions', { token });
        expect(two.json.data).toHaveLength(2);
        const other = two.json.data.find((s: { current: boolean }) => !s.current);
        const revoked = await call('DELETE', `/api/auth/sessions/${other.id}`, { token });
        expect(revoked.status, revoked.text).toBe(200);
        expect((await call('GET', '/api/auth/profile', { token: (await tokenOf(again))! })).status).toBe(401);
        // no password: the password sign-in knows nothing of this account
        expect((await call('POST', '/api/auth/login', { body: { login, password: 'anything-at-all' } })).status).toBe(401);
        // the profile's card and the app passwords page
        await t.page.goto(`${b.url}/profile`);
        await t.page.waitForSelector('#sso-state');
        expect(await t.page.locator('#sso-state').textContent()).toMatch(/^Your account is linked to the sign-in provider \(since [A-Z][a-z]{2} \d{1,2}, \d{4}\)/);
        expect(await t.page.locator('#app-passwords-link').textContent()).toBe('App passwords: reader apps and devices need one, as you have no password here');
        await checkPage(t, `oidc-profile-${mode}`);
        await t.page.click('#app-passwords-link');
        await t.page.waitForURL(`${b.url}/profile/app-passwords`);
        expect(await t.page.locator('#app-opds-state').textContent()).toBe('You have no reader key yet.');
        await t.page.click('#app-make-opds-key');
        await t.page.waitForFunction(() => /\/opds\/key\//.test((globalThis as any).document.querySelector('#app-opds-outcome')?.textContent ?? ''));
        const shown = /\/opds\/key\/([\w-]+)/.exec((await t.page.locator('#app-opds-outcome').textContent()) ?? '');
        expect(shown, 'the reader key is shown once').not.toBeNull();
        // the reader key opens the catalog for a reader app: the SSO-only account's app password
        const feed = await call('GET', `/opds/key/${shown![1]}`);
        expect(feed.status).toBe(200);
        await checkPage(t, `oidc-app-passwords-${mode}`);
      },
      LONG_FLOW,
    );

    it(
      "the admin group makes an admin, and a later sign-in without it takes the role away (role-changed, source 'oidc-group')",
      async () => {
        const login = uniq('boss');
        provider.accounts.set(login, { email: `${login}@example.test`, groups: ['readers', ADMIN_GROUP] });
        const t = await signInThrough(login);
        await t.page.waitForURL(`${b.url}/dashboard`);
        const me = await profileOf(t);
        expect(me.role).toBe('admin');
        provider.accounts.set(login, { email: `${login}@example.test`, groups: ['readers'] });
        const later = await signInThrough(login);
        await later.page.waitForURL(`${b.url}/dashboard`);
        expect((await profileOf(later)).role).toBe('user');
        const users = await call('GET', '/api/auth/users', { token: admin.token });
        expect(users.json.find((u: { id: string }) => u.id === me.id).role).toBe('user');
        provider.accounts.set(login, { email: `${login}@example.test`, groups: [ADMIN_GROUP] });
        const back = await signInThrough(login);
        await back.page.waitForURL(`${b.url}/dashboard`);
        expect((await profileOf(back)).role).toBe('admin');
      },
      LONG_FLOW,
    );

    it(
      'a local account is linked from its profile, then the provider signs in to it; an e-mail alone never joins them',
      async () => {
        const local = await register(call);
        const login = uniq('carl');
        // the provider states the local account's own e-mail: still no sign-in to it before the link
        provider.accounts.set(login, { email: local.email, groups: [] });
        const before = await signInThrough(login);
        await problemShown(before.page, b.url, 'email_taken', P.email_taken);
        expect(await tokenOf(before)).toBeUndefined();
        const t = await openAs(browser, b.url, local.token);
        tabs.push(t);
        await quietProvider(t.ctx, provider.issuer);
        await t.page.goto(`${b.url}/profile`);
        await t.page.waitForSelector('#sso-link');
        expect(await t.page.locator('#sso-state').textContent()).toBe(
          `Your account is not linked to the sign-in provider. Linking it lets "${LABEL}" on the sign-in page sign you in to this account.`,
        );
        await t.page.click('#sso-link');
        await providerLogin(t.page, provider.issuer, login);
        await t.page.waitForURL(`${b.url}/profile?sso=linked`);
        await t.page.waitForSelector('#sso-state');
        expect(await t.page.locator('#sso-state').textContent()).toMatch(/^Your account is linked/);
        const after = await signInThrough(login);
        await after.page.waitForURL(`${b.url}/dashboard`);
        expect((await profileOf(after)).id).toBe(local.id);
        // the same provider account cannot be linked to a second local account
        const second = await register(call);
        const t2 = await openAs(browser, b.url, second.token);
        tabs.push(t2);
        await quietProvider(t2.ctx, provider.issuer);
        await t2.page.goto(`${b.url}/profile`);
        await t2.page.click('#sso-link');
        await providerLogin(t2.page, provider.issuer, login);
        await problemShown(t2.page, b.url, 'linked_elsewhere', P.linked_elsewhere);
        t2.errors.splice(0, t2.errors.length, ...ourErrors(t2.errors, [403]));
        await checkPage(t2, `oidc-problem-${mode}`);
      },
      LONG_FLOW,
    );

    const answer = (url: string, tx: string) => fetch(url, { redirect: 'manual', headers: { cookie: `bindery_oidc_tx=${tx}` } });
    const refusedWith = async (r: Response, problem: string) => {
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe(`/login/sso?problem=${problem}`);
      expect(r.headers.getSetCookie().some((c) => c.startsWith('token=') && !c.startsWith('token=;'))).toBe(false);
    };

    it('a wrong state is refused, and so is an answer without the transaction cookie', async () => {
      const login = uniq('dan');
      const { callback, tx } = await heldAnswer(b.url, provider.issuer, login);
      const wrong = new URL(callback);
      wrong.searchParams.set('state', 'not-the-state-we-sent');
      await refusedWith(await answer(wrong.href, tx), 'failed');
      const bare = await fetch(callback, { redirect: 'manual' });
      await refusedWith(bare, 'expired');
    });

    it('a replayed code is refused: the provider takes a code once', async () => {
      const login = uniq('eve');
      const { callback, tx } = await heldAnswer(b.url, provider.issuer, login);
      const first = await answer(callback, tx);
      expect(first.status).toBe(302);
      expect(first.headers.get('location')).toBe('/dashboard');
      expect(first.headers.getSetCookie().some((c) => /^token=[\w-]+\./.test(c))).toBe(true);
      await refusedWith(await answer(callback, tx), 'failed');
    });

    it(
      'an expired ID token and a forged one (a key not in the JWKS) are refused with the problem page',
      async () => {
        for (const tamper of ['expired', 'forged'] as const) {
          provider.tamper = tamper;
          try {
            const t = await signInThrough(uniq(tamper.slice(0, 3)));
            await problemShown(t.page, b.url, 'failed', P.failed);
            expect(await tokenOf(t)).toBeUndefined();
          } finally {
            provider.tamper = null;
          }
        }
      },
      LONG_FLOW,
    );

    it("signing out of a provider's session ends at the provider's end-session page (RP-initiated logout)", async () => {
      const login = uniq('fay');
      const t = await signInThrough(login);
      await t.page.waitForURL(`${b.url}/dashboard`);
      const token = (await tokenOf(t))!;
      await t.page.click('#sign-out');
      await t.page.waitForURL((u) => u.href.startsWith(`${provider.issuer}/session/end`));
      expect((await call('GET', '/api/auth/profile', { token })).status).toBe(401);
    });
  });
}
