// Single sign-on's options, in Chromium against the in-process provider (issue 47), embedded mode
// (the pages are the gateway's in both modes; oidc.e2e runs the flows in both): without
// OIDC_AUTO_CREATE an unknown person gets the clear page and no account; OIDC_ONLY hides the password
// form and the API refuses a password sign-in; a provider that is down gives its clear message while
// the password sign-in still works, unless OIDC_ONLY.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Identity } from '@bindery/contracts';
import { type Bindery, startBindery } from '../support/bindery';
import { api, login, register, uniq, type Call } from './helpers';
import { freePort, quietProvider, LABEL, oidcEnv, ourErrors, problemShown, providerLogin, startProvider, type TestProvider } from './oidc-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open } from './web-browser';

if (!HAS_CHROMIUM) describe.skip(`single sign-on's options in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

const P = Identity.OIDC_PROBLEMS;
let browser: Browser;
const running: Bindery[] = [];
const providers: TestProvider[] = [];
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  for (const p of providers) await p.stop();
  await Promise.all(running.map((b) => b.stop()));
});

async function bindery(env: Record<string, string>): Promise<{ b: Bindery; call: Call }> {
  const b = await startBindery('embedded', env);
  running.push(b);
  return { b, call: api(b) };
}

// each test starts its own server: a loaded machine takes minutes
describe.skipIf(!HAS_CHROMIUM)('single sign-on options (embedded)', { timeout: 300_000 }, () => {
  it('without OIDC_AUTO_CREATE, and with OIDC_ONLY: an unknown person gets the clear page and no account; no password form, and the API refuses a password sign-in', async () => {
    const port = await freePort();
    const { b, call } = await bindery(oidcEnv(port, { OIDC_ONLY: 'true' }));
    const provider = await startProvider(port, b.url);
    providers.push(provider);
    const admin = await register(call);
    const t = await open(browser);
    await quietProvider(t.ctx, provider.issuer);
    await t.page.goto(`${b.url}/login`);
    expect(await t.page.locator('#sso-sign-in').textContent()).toBe(LABEL);
    expect(await t.page.locator('#login').isVisible(), 'the password form is hidden').toBe(false);
    await checkPage(t, 'oidc-only-login');
    const refused = await login(call, admin.username, admin.password);
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ error: Identity.OIDC_ONLY_MESSAGE });
    const stranger = uniq('gus');
    await t.page.click('#sso-sign-in');
    await providerLogin(t.page, provider.issuer, stranger);
    await problemShown(t.page, b.url, 'unknown_account', P.unknown_account);
    expect((await t.ctx.cookies(b.url)).some((c) => c.name === 'token')).toBe(false);
    // OIDC_ONLY: the page offers the provider again, not the password form
    expect(await t.page.locator('#sso-again').count()).toBe(1);
    expect(await t.page.locator('#password-sign-in').count()).toBe(0);
    t.errors.splice(0, t.errors.length, ...ourErrors(t.errors, [403]));
    await checkPage(t, 'oidc-unknown-account');
    const users = await call('GET', '/api/auth/users', { token: admin.token });
    expect(users.json.map((u: { username: string }) => u.username)).toEqual([admin.username]);
    await t.ctx.close();
  });

  it('a provider that is down: a clear message, and the password sign-in still works', async () => {
    const { b, call } = await bindery(oidcEnv(await freePort()));
    const admin = await register(call);
    const t = await open(browser);
    await t.page.goto(`${b.url}/login`);
    await t.page.click('#sso-sign-in');
    await problemShown(t.page, b.url, 'unavailable', `${P.unavailable} You can still sign in with your password.`);
    expect(await t.page.locator('#password-sign-in').getAttribute('href')).toBe('/login');
    t.errors.splice(0, t.errors.length, ...ourErrors(t.errors, [503]));
    await checkPage(t, 'oidc-provider-down');
    await t.page.click('#password-sign-in');
    await t.page.fill('#login-name', admin.username);
    await t.page.fill('#password', admin.password);
    await t.page.click('#submit');
    await t.page.waitForURL(`${b.url}/dashboard`);
    expect((await login(call, admin.username, admin.password)).status).toBe(200);
    await t.ctx.close();
  });

  it('a provider that is down with OIDC_ONLY: the message without the password way', async () => {
    const { b, call } = await bindery(oidcEnv(await freePort(), { OIDC_ONLY: 'true' }));
    await register(call);
    const t = await open(browser);
    await t.page.goto(`${b.url}/login`);
    await t.page.click('#sso-sign-in');
    await problemShown(t.page, b.url, 'unavailable', P.unavailable);
    expect(await t.page.locator('#password-sign-in').count()).toBe(0);
    await t.ctx.close();
  });
});
